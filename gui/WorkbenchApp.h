// The workbench's QApplication: an exception escaping any slot or event handler becomes a
// message box, never a crash.
#pragma once

#include <QApplication>

namespace halo::gui {

class WorkbenchApp : public QApplication {
  Q_OBJECT
 public:
  WorkbenchApp(int& argc, char** argv);
  bool notify(QObject* receiver, QEvent* event) override;
};

}  // namespace halo::gui
