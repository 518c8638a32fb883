// Halo's main window: the workbench shell (setup, live view, layout, strategies, history).
// This first version shows the version and what the workbench will hold.
#pragma once

#include <QMainWindow>

namespace halo::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
};

}  // namespace halo::gui
