// halo-workbench [EXPERIMENT.json | RUN_DIR]: starts the Qt application and shows Halo's
// main window, with the quickstart experiment (or the given file / run) loaded.
#include <QDir>
#include <QFileInfo>

#include "MainWindow.h"
#include "SetupForm.h"
#include "WorkbenchApp.h"

int main(int argc, char** argv) {
  halo::gui::WorkbenchApp app(argc, argv);
  QApplication::setApplicationName("Halo Workbench");
  halo::gui::MainWindow w;
  const QStringList args = QApplication::arguments().mid(1);
  const QString arg = args.isEmpty() ? QString() : args.front();
  if (!arg.isEmpty() && QFileInfo(arg).isDir())
    w.open_run(arg);
  else
    w.load_experiment(arg.isEmpty() ? QDir(halo::gui::SetupForm::experiments_dir()).filePath("quickstart.json") : arg);
  w.show();
  return QApplication::exec();
}
