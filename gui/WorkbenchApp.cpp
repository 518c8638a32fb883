// notify() is where Qt delivers every event and queued slot call; catching there keeps
// one bad file or config from taking the window (and no run: runs live in launchers).
#include "WorkbenchApp.h"

#include <QMessageBox>

#include <cstdio>

#include "util/Error.h"

namespace halo::gui {

WorkbenchApp::WorkbenchApp(int& argc, char** argv) : QApplication(argc, argv) {}

bool WorkbenchApp::notify(QObject* receiver, QEvent* event) {
  try {
    return QApplication::notify(receiver, event);
  } catch (const util::Error& e) {
    const QString text = QString::fromStdString(e.problem() + (e.hint().empty() ? "" : "\nhint: " + e.hint()));
    std::fprintf(stderr, "halo-workbench: error: %s\n", text.toLocal8Bit().constData());
    QMessageBox::warning(activeWindow(), tr("Halo"), text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "halo-workbench: error: %s\n", e.what());
    QMessageBox::warning(activeWindow(), tr("Halo"), QString::fromUtf8(e.what()));
  }
  return false;
}

}  // namespace halo::gui
