// Wires the views together: the form launches, the controller feeds the live view and the
// layout, the history opens / overlays / compares / clones / exports runs.
#include "MainWindow.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "CoreChecks.h"
#include "ExportDialog.h"
#include "HistoryView.h"
#include "LayoutView.h"
#include "LivePlots.h"
#include "RunController.h"
#include "RunModel.h"
#include "SetupForm.h"
#include "StrategyView.h"
#include "config/ExperimentConfig.h"
#include "util/Version.h"

namespace halo::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("Halo Workbench");
  resize(1400, 900);
  db_path = qEnvironmentVariable("HALO_DB");
  tabs_ = new QTabWidget(this);
  setup_ = new SetupForm(this);
  live_ = new LivePlots(this);
  layout_ = new LayoutView(this);
  strategies_ = new StrategyView(this);
  history_ = new HistoryView(this);
  controller_ = new RunController(this);
  tabs_->addTab(setup_, tr("Setup"));
  tabs_->addTab(live_, tr("Live"));
  tabs_->addTab(layout_, tr("Layout"));
  tabs_->addTab(strategies_, tr("Strategies"));
  tabs_->addTab(history_, tr("History"));
  setCentralWidget(tabs_);

  auto* bar = addToolBar(tr("Run"));
  bar->setMovable(false);
  auto* launch_act = bar->addAction(tr("Launch"), this, [this] {
    if (setup_->valid())
      launch(setup_->experiment());
    else
      show_message(tr("the experiment has problems:\n%1").arg(setup_->problems_text()));
  });
  auto* stop_act = bar->addAction(tr("Stop"), this, [this] { controller_->stop(); });
  stop_act->setEnabled(false);
  bar->addSeparator();
  bar->addAction(tr("Open run folder…"), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Open a run folder"), runs_root);
    if (!d.isEmpty()) open_run(d);
  });
  bar->addAction(tr("Export…"), this, [this] {
    if (const RunModel* r = shown_run())
      export_run(r->run_dir());
    else
      show_message(tr("open a run first (History, or Open run folder…)"));
  });
  auto* state = new QLabel(tr("idle"), this);
  statusBar()->addPermanentWidget(state);
  statusBar()->addPermanentWidget(
      new QLabel(QString::fromStdString("halo " + util::version() + " (" + util::git_revision() + ")"), this));

  connect(setup_, &SetupForm::launchRequested, this, &MainWindow::launch);
  connect(setup_, &SetupForm::validityChanged, launch_act, &QAction::setEnabled);
  connect(setup_, &SetupForm::message, this, [this](const QString& m) { show_message(m, !m.startsWith("saved")); });
  connect(controller_, &RunController::stateChanged, this, [this, state, stop_act, launch_act](RunController::State s) {
    static const char* names[] = {"idle", "running", "finished", "failed"};
    state->setText(tr("run: %1").arg(names[static_cast<int>(s)]));
    stop_act->setEnabled(s == RunController::State::Running);
    launch_act->setEnabled(s != RunController::State::Running && setup_->valid());
  });
  connect(controller_, &RunController::eventsAdded, this, [this] {
    const RunModel* m = controller_->model();
    if (!layout_shown_ && m && m->layout()) {
      layout_->set_layout(m->layout(), m->config().contains("data") ? m->config()["data"].value("views", 1) : 1);
      layout_shown_ = true;
    }
    live_->schedule_refresh();
  });
  connect(controller_, &RunController::finished, this, [this](bool ok, const QString& msg) {
    live_->refresh();
    show_message(msg, !ok);
    history_->refresh();
  });
  connect(history_, &HistoryView::openRun, this, [this](const QString& d, qint64 pid) { open_run(d, pid); });
  connect(history_, &HistoryView::overlayRuns, this, &MainWindow::overlay_runs);
  connect(history_, &HistoryView::compareRuns, this, &MainWindow::compare_runs);
  connect(history_, &HistoryView::exportRun, this, &MainWindow::export_run);
  connect(history_, &HistoryView::message, this, [this](const QString& m) { show_message(m); });
  connect(history_, &HistoryView::cloneRun, this, [this](const nlohmann::json& c) {
    setup_->set_experiment(c);
    tabs_->setCurrentWidget(setup_);
    show_message(tr("cloned into the setup form"), false);
  });
  connect(strategies_, &StrategyView::sweepRequested, this, [this] {
    if (!setup_->valid())
      return show_message(tr("fix the experiment in Setup first:\n%1").arg(setup_->problems_text()));
    strategies_->start_sweep(setup_->experiment(), runs_root, db_path);
  });
  connect(strategies_, &StrategyView::message, this, [this](const QString& m) { show_message(m); });
  // Predicted next to measured: core's memory planner for each run's config.
  auto parsed = [](const nlohmann::json& c) -> std::optional<config::ExperimentConfig> {
    auto r = config::parse_experiment(c);
    return r.problems.empty() ? std::optional(r.config) : std::nullopt;
  };
  strategies_->predict_bytes = [parsed](const nlohmann::json& c) {
    auto cfg = parsed(c);
    return cfg ? CoreChecks::predicted_peak_bytes(*cfg) : std::nullopt;
  };
  strategies_->predict_ms = [parsed](const nlohmann::json& c) {
    auto cfg = parsed(c);
    return cfg ? CoreChecks::predicted_step_ms(*cfg) : std::nullopt;
  };
  history_->db_path = db_path;
  history_->refresh();
}

MainWindow::~MainWindow() = default;

const RunModel* MainWindow::shown_run() const {
  if (opened_) return opened_.get();
  return controller_->model();
}

void MainWindow::show_message(const QString& text, bool error) {
  statusBar()->showMessage(text.section('\n', 0, 0), 15000);
  if (error && interactive) QMessageBox::warning(this, tr("Halo"), text);
}

bool MainWindow::load_experiment(const QString& path) { return setup_->load_file(path); }

void MainWindow::launch(const nlohmann::json& experiment) {
  controller_->db_path = db_path;
  history_->db_path = db_path;
  if (!controller_->start(experiment, runs_root)) return;  // finished() carried the message
  opened_.reset();
  layout_shown_ = false;
  layout_->set_layout(std::nullopt, 1);
  live_->set_run(controller_->model());
  tabs_->setCurrentWidget(live_);
  show_message(tr("started %1").arg(controller_->run_dir()), false);
}

void MainWindow::show_run(const RunModel* run) {
  live_->set_run(run);
  live_->refresh();
  const int views = run && run->config().contains("data") ? run->config()["data"].value("views", 1) : 1;
  layout_->set_layout(run ? run->layout() : std::nullopt, views);
}

bool MainWindow::open_run(const QString& run_dir, qint64 running_pid) {
  if (running_pid > 0 && !controller_->running()) {
    controller_->attach(run_dir, running_pid);
    opened_.reset();
    layout_shown_ = false;
    live_->set_run(controller_->model());
    tabs_->setCurrentWidget(live_);
    return true;
  }
  try {
    opened_ = RunModel::load(run_dir);
  } catch (const std::exception& e) {
    show_message(QString::fromUtf8(e.what()));
    return false;
  }
  show_run(opened_.get());
  tabs_->setCurrentWidget(live_);
  return true;
}

void MainWindow::overlay_runs(const QStringList& run_dirs) {
  overlays_.clear();
  std::vector<const RunModel*> ptrs;
  for (const QString& d : run_dirs) {
    try {
      overlays_.push_back(RunModel::load(d));
      ptrs.push_back(overlays_.back().get());
    } catch (const std::exception& e) {
      show_message(QString::fromUtf8(e.what()));
    }
  }
  if (!shown_run() && !overlays_.empty()) {
    opened_ = std::move(overlays_.front());
    overlays_.erase(overlays_.begin());
    ptrs.erase(ptrs.begin());
    show_run(opened_.get());
  }
  live_->set_overlays(ptrs);
  tabs_->setCurrentWidget(live_);
}

void MainWindow::compare_runs(const QStringList& run_dirs) {
  std::vector<std::unique_ptr<RunModel>> runs;
  for (const QString& d : run_dirs) {
    try {
      runs.push_back(RunModel::load(d));
    } catch (const std::exception& e) {
      show_message(QString::fromUtf8(e.what()));
    }
  }
  strategies_->set_runs(std::move(runs));
  tabs_->setCurrentWidget(strategies_);
}

void MainWindow::export_run(const QString& run_dir) {
  auto* d = new ExportDialog(run_dir, this);
  d->db_path = db_path;
  d->setAttribute(Qt::WA_DeleteOnClose);
  connect(d, &ExportDialog::exported, this, [this](bool ok, const QString& out) {
    show_message(ok ? tr("exported to %1").arg(out) : tr("export failed (see the export dialog)"), false);
  });
  d->show();
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!controller_->running() && !strategies_->sweeping()) return e->accept();
  QMessageBox box(QMessageBox::Question, tr("A run is going"),
                  tr("Run %1 is still going. Leave it running in the background (reopen it later from History), "
                     "or stop it?")
                      .arg(controller_->running() ? controller_->run_dir() : tr("(strategy sweep)")),
                  QMessageBox::NoButton, this);
  auto* leave = box.addButton(tr("Leave it running"), QMessageBox::AcceptRole);
  auto* stop = box.addButton(tr("Stop it"), QMessageBox::DestructiveRole);
  box.addButton(QMessageBox::Cancel);
  box.exec();
  if (box.clickedButton() == leave) return e->accept();
  if (box.clickedButton() == stop) {
    controller_->stop();
    strategies_->stop_sweep();
    return e->accept();
  }
  e->ignore();
}

}  // namespace halo::gui
