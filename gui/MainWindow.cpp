// The workbench shell: a titled window with a status bar naming the Halo version.
// Views are added by the workbench issue; no training code lives in gui/.
#include "MainWindow.h"

#include <QLabel>
#include <QStatusBar>

#include "util/Version.h"

namespace halo::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("Halo Workbench");
  resize(1280, 800);
  auto* label = new QLabel(tr("Halo workbench: set up, launch and compare width-sharded runs."), this);
  label->setAlignment(Qt::AlignCenter);
  setCentralWidget(label);
  statusBar()->showMessage(QString::fromStdString("halo " + util::version() + " (" + util::git_revision() + ")"));
}

}  // namespace halo::gui
