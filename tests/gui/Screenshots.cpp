// `make screenshots`: runs a tiny experiment, a four-strategy sweep and a small OpenLane-V2 run through the
// real launcher, loads them into the workbench offscreen, and writes each view (every tab) as a PNG.
#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>

#include <cstdio>
#include <fstream>

#include "ExportDialog.h"
#include "GuiTestSupport.h"
#include "HistoryView.h"
#include "LayoutView.h"
#include "LivePlots.h"
#include "MainWindow.h"
#include "MemoryView.h"
#include "PlannerView.h"
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

// Where the shots go; a run through the real launcher that must finish.
struct Shots {
  QString out;
  bool ok = true;
  void take(QWidget* w, const QString& name) { ok &= save(w, out, name); }
};

bool run_to_end(MainWindow& w, const nlohmann::json& experiment) {
  w.setup()->set_experiment(experiment);
  w.launch(w.setup()->experiment());
  if (wait(w.controller(), &RunController::finished, 300000) &&
      w.controller()->state() == RunController::State::Finished)
    return true;
  std::fprintf(stderr, "the run did not finish: %s\n", w.controller()->failure().toLocal8Bit().constData());
  return false;
}

// The OpenLane-V2 baseline on synthetic frames, small: a live panel per loss term.
nlohmann::json small_openlane() {
  std::ifstream in(HALO_SOURCE_DIR "/experiments/openlanev2_baseline.json");
  nlohmann::json e = nlohmann::json::parse(in);
  e["model"]["arch"] = "convnext_test";
  e["model"]["dim"] = 16;
  e["data"]["views"] = 2;
  e["data"]["height"] = 64;
  e["data"]["width"] = 128;
  e["data"]["workers"] = 0;
  e["schedule"]["steps"] = 12;
  e["schedule"]["warmup_steps"] = 2;
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  Shots shots{argc > 1 ? QString(argv[1]) : QString("build/screenshots")};
  QDir().mkpath(shots.out);
  const QString work = halo::testing::gui_fresh_dir("screenshots");
  MainWindow w;
  w.interactive = false;
  w.runs_root = QDir(work).filePath("runs");
  w.db_path = QDir(work).filePath("history.db");
  w.resize(1500, 950);
  w.show();

  w.load_experiment(QDir(HALO_SOURCE_DIR "/experiments").filePath("quickstart.json"));
  shots.take(&w, "1-setup");
  w.tabs()->setCurrentWidget(w.planner());
  w.planner()->replan();
  shots.take(&w, "2-planner");

  nlohmann::json tiny = halo::testing::tiny_experiment(40);
  tiny["name"] = "screenshot";
  tiny["data"]["width"] = 256;
  if (!run_to_end(w, tiny)) return 1;
  const QString run_dir = w.controller()->run_dir();
  w.live()->refresh();
  w.tabs()->setCurrentWidget(w.live());
  shots.take(&w, "3-live");
  w.tabs()->setCurrentWidget(w.memory_view());
  w.memory_view()->refresh();
  shots.take(&w, "4-memory");
  w.tabs()->setCurrentWidget(w.layout_view());
  shots.take(&w, "5-layout");

  tiny["schedule"]["steps"] = 6;
  w.strategies()->start_sweep(tiny, w.runs_root, w.db_path);
  if (!wait(w.strategies(), &StrategyView::sweepFinished, 600000))
    std::fprintf(stderr, "sweep did not finish\n"), shots.ok = false;
  w.tabs()->setCurrentWidget(w.strategies());
  shots.take(&w, "6-strategies");

  if (!run_to_end(w, small_openlane())) return 1;
  w.live()->refresh();
  w.tabs()->setCurrentWidget(w.live());
  shots.take(&w, "7-live-openlanev2");

  w.history()->refresh();
  w.history()->table()->selectRow(0);
  w.tabs()->setCurrentWidget(w.history());
  shots.take(&w, "8-history");

  w.open_run(run_dir);
  QStringList others;
  for (const auto& r : w.strategies()->runs()) others << r->run_dir();
  w.overlay_runs(others);
  w.live()->set_axis(LivePlots::Axis::RelativeTime);
  w.live()->refresh();
  shots.take(&w, "9-live-overlays");

  ExportDialog d(run_dir);
  d.db_path = w.db_path;
  d.show();
  d.start_export();
  if (!wait(&d, &ExportDialog::exported, 120000)) shots.ok = false;
  shots.take(&d, "10-export");
  return shots.ok ? 0 : 1;
}
