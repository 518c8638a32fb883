// `make screenshots`: runs a tiny experiment and a four-strategy sweep through the real
// launcher, loads them into the workbench offscreen, and writes each view as a PNG.
#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>

#include <cstdio>

#include "ExportDialog.h"
#include "GuiTestSupport.h"
#include "HistoryView.h"
#include "LivePlots.h"
#include "MainWindow.h"
#include "RunController.h"
#include "RunModel.h"
#include "SetupForm.h"
#include "StrategyView.h"

using namespace halo::gui;

namespace {

template <class Sender, class Signal>
bool wait(Sender* s, Signal sig, int ms) {
  QEventLoop loop;
  QTimer::singleShot(ms, &loop, [&] { loop.exit(1); });
  QObject::connect(s, sig, &loop, [&] { loop.exit(0); });
  return loop.exec() == 0;
}

void settle(int ms = 300) {
  QEventLoop loop;
  QTimer::singleShot(ms, &loop, &QEventLoop::quit);
  loop.exec();
}

bool save(QWidget* w, const QString& dir, const QString& name) {
  settle();
  const QString path = QDir(dir).filePath(name + ".png");
  const bool ok = w->grab().save(path);
  std::printf("%s %s\n", ok ? "wrote" : "FAILED", path.toLocal8Bit().constData());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const QString out = argc > 1 ? QString(argv[1]) : QString("build/screenshots");
  QDir().mkpath(out);
  const QString work = halo::testing::gui_fresh_dir("screenshots");
  MainWindow w;
  w.interactive = false;
  w.runs_root = QDir(work).filePath("runs");
  w.db_path = QDir(work).filePath("history.db");
  w.resize(1500, 950);
  w.show();
  bool ok = true;

  w.load_experiment(QDir(HALO_SOURCE_DIR "/experiments").filePath("quickstart.json"));
  ok &= save(&w, out, "1-setup");

  nlohmann::json tiny = halo::testing::tiny_experiment(40);
  tiny["name"] = "screenshot";
  tiny["data"]["width"] = 256;
  w.setup()->set_experiment(tiny);
  w.launch(w.setup()->experiment());
  if (!wait(w.controller(), &RunController::finished, 300000) ||
      w.controller()->state() != RunController::State::Finished) {
    std::fprintf(stderr, "the run did not finish: %s\n", w.controller()->failure().toLocal8Bit().constData());
    return 1;
  }
  const QString run_dir = w.controller()->run_dir();
  w.live()->refresh();
  w.tabs()->setCurrentIndex(1);
  ok &= save(&w, out, "2-live");
  w.tabs()->setCurrentIndex(2);
  ok &= save(&w, out, "3-layout");

  tiny["schedule"]["steps"] = 6;
  w.strategies()->start_sweep(tiny, w.runs_root, w.db_path);
  if (!wait(w.strategies(), &StrategyView::sweepFinished, 600000))
    std::fprintf(stderr, "sweep did not finish\n"), ok = false;
  w.tabs()->setCurrentIndex(3);
  ok &= save(&w, out, "4-strategies");

  w.history()->refresh();
  w.history()->table()->selectRow(0);
  w.tabs()->setCurrentIndex(4);
  ok &= save(&w, out, "5-history");

  w.open_run(run_dir);
  QStringList others;
  for (const auto& r : w.strategies()->runs()) others << r->run_dir();
  w.overlay_runs(others);
  w.live()->set_axis(LivePlots::Axis::RelativeTime);
  w.live()->refresh();
  ok &= save(&w, out, "6-live-relative-time");

  ExportDialog d(run_dir);
  d.db_path = w.db_path;
  d.show();
  d.start_export();
  if (!wait(&d, &ExportDialog::exported, 120000)) ok = false;
  ok &= save(&d, out, "7-export");
  return ok ? 0 : 1;
}
