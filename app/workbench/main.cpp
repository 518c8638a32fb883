// halo-workbench: starts the Qt application and shows Halo's main window.
// All training happens in launcher processes, never here.
#include <QApplication>

#include "MainWindow.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("Halo Workbench");
  halo::gui::MainWindow w;
  w.show();
  return QApplication::exec();
}
