// Wires the views together: the form launches, the controller (or the sweep's) feeds the
// live, memory and layout views, the history opens / overlays / compares / clones / exports.
#include "MainWindow.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
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
#include "MemoryView.h"
#include "PlannerView.h"
#include "RunController.h"
#include "RunModel.h"
#include "SetupForm.h"
#include "StrategyView.h"
#include "config/ExperimentConfig.h"
#include "util/Version.h"

namespace halo::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  resize(1400, 900);
  db_path = qEnvironmentVariable("HALO_DB");
  tabs_ = new QTabWidget(this);
  setup_ = new SetupForm(this);
  live_ = new LivePlots(this);
  memory_ = new MemoryView(this);
  layout_ = new LayoutView(this);
  planner_ = new PlannerView(this);
  strategies_ = new StrategyView(this);
  history_ = new HistoryView(this);
  controller_ = new RunController(this);
  tabs_->addTab(setup_, tr("Setup"));
  tabs_->addTab(live_, tr("Live"));
  tabs_->addTab(memory_, tr("Memory"));
  tabs_->addTab(layout_, tr("Layout"));
  tabs_->addTab(planner_, tr("Planner"));
  tabs_->addTab(strategies_, tr("Strategies"));
  tabs_->addTab(history_, tr("History"));
  setCentralWidget(tabs_);

  auto* bar = addToolBar(tr("Run"));
  bar->setMovable(false);
  launch_act_ = bar->addAction(tr("Launch"), this, [this] {
    if (setup_->valid())
      launch(setup_->experiment());
    else
      show_message(tr("the experiment has problems:\n%1").arg(setup_->problems_text()));
  });
  stop_act_ = bar->addAction(tr("Stop"), this, &MainWindow::stop);
  stop_act_->setEnabled(false);
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
  state_ = new QLabel(tr("idle"), this);
  statusBar()->addPermanentWidget(state_);
  statusBar()->addPermanentWidget(
      new QLabel(QString::fromStdString("halo " + util::version() + " (" + util::git_revision() + ")"), this));
  live_->run_id = [this](const QString& dir) {
    ids_.db_path = db_path;
    return ids_.id_of(dir);
  };
  wire_runs();
  wire_views();
  history_->db_path = db_path;
  history_->refresh();
  update_title();
}

MainWindow::~MainWindow() = default;

// The run controller and the sweep's: whichever is going feeds the views.
void MainWindow::wire_runs() {
  for (RunController* c : {controller_, strategies_->sweep_controller()}) {
    connect(c, &RunController::stateChanged, this, [this] { update_actions(); });
    connect(c, &RunController::eventsAdded, this, [this, c] {
      if (c != following_) return;
      const RunModel* m = c->model();
      if (!layout_shown_ && m && m->layout()) {
        layout_->set_layout(m->layout(), m->config().contains("data") ? m->config()["data"].value("views", 1) : 1,
                            m->name());
        layout_shown_ = true;
      }
      if (layout_shown_ && !previews_shown_ && m && !m->steps().empty())  // written after the first step
        previews_shown_ = layout_->load_previews(m->run_dir());
      if (layout_shown_ && !exchange_shown_ && m && !m->exchange_ms().empty())
        exchange_shown_ = layout_->set_exchange(m->exchange_ms());
      live_->schedule_refresh();
      memory_->schedule_refresh();
    });
    connect(c, &RunController::finished, this, [this, c](bool ok, const QString& msg) { on_finished(c, ok, msg); });
  }
  connect(strategies_, &StrategyView::sweepRunStarted, this, [this](int index, int total, const QString& name) {
    follow(strategies_->sweep_controller());
    live_->set_sweep(index, total, name);
    update_actions();
  });
  connect(strategies_, &StrategyView::sweepFinished, this, [this] {
    live_->set_sweep(strategies_->sweep_total(), strategies_->sweep_total(), QString());
    update_actions();
    history_->refresh();
  });
}

void MainWindow::wire_views() {
  connect(setup_, &SetupForm::launchRequested, this, &MainWindow::launch);
  connect(setup_, &SetupForm::validityChanged, this, [this] { update_actions(); });
  connect(setup_, &SetupForm::sourceChanged, this, [this] { update_title(); });
  connect(setup_, &SetupForm::experimentChanged, this, [this] { planner_->set_experiment(setup_->experiment()); });
  connect(setup_, &SetupForm::message, this, [this](const QString& m) { show_message(m, !m.startsWith("saved")); });
  connect(planner_, &PlannerView::useRow, this, [this](const nlohmann::json& e, bool start) {
    setup_->set_experiment(e, setup_->source());
    if (start && setup_->valid()) return launch(setup_->experiment());
    tabs_->setCurrentWidget(setup_);
    if (start) show_message(tr("the planned row has problems here:\n%1").arg(setup_->problems_text()));
  });
  connect(history_, &HistoryView::openRun, this, [this](const QString& d, qint64 pid) { open_run(d, pid); });
  connect(history_, &HistoryView::overlayRuns, this, &MainWindow::overlay_runs);
  connect(history_, &HistoryView::compareRuns, this, &MainWindow::compare_runs);
  connect(history_, &HistoryView::exportRun, this, &MainWindow::export_run);
  connect(history_, &HistoryView::message, this, [this](const QString& m) { show_message(m); });
  connect(history_, &HistoryView::cloneRun, this, [this](const nlohmann::json& c) {
    setup_->set_experiment(c, tr("a clone of %1").arg(QString::fromStdString(c.value("name", "a run"))));
    tabs_->setCurrentWidget(setup_);
    show_message(tr("cloned into the setup form"), false);
  });
  connect(strategies_, &StrategyView::sweepRequested, this, [this] {
    if (controller_->running()) return show_message(tr("a run is going: stop it or wait before a sweep"));
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
}

const RunModel* MainWindow::shown_run() const {
  if (opened_) return opened_.get();
  if (following_) return following_->model();
  return controller_->model();
}

void MainWindow::show_message(const QString& text, bool error) {
  statusBar()->showMessage(text.section('\n', 0, 0), 15000);
  if (error && interactive) QMessageBox::warning(this, tr("Halo"), text);
}

QString MainWindow::state_text() const { return state_->text(); }

bool MainWindow::load_experiment(const QString& path) { return setup_->load_file(path); }

void MainWindow::update_actions() {
  const bool sweeping = strategies_->sweeping(), running = controller_->running();
  launch_act_->setEnabled(!running && !sweeping && setup_->valid());
  stop_act_->setEnabled(running || sweeping);
  strategies_->set_can_start(!running);
  const RunController* c = following_ ? following_ : controller_;
  QString text = tr("run: %1").arg(RunController::state_name(c->state()));
  if (sweeping)
    text = tr("sweep %1 of %2: %3")
               .arg(strategies_->sweep_index() + 1)
               .arg(strategies_->sweep_total())
               .arg(RunController::state_name(c->state()));
  state_->setText(text);
  live_->set_live(c->running() && !opened_);
}

void MainWindow::update_title() {
  QString what = setup_->source();
  if (const RunModel* r = shown_run()) {
    const auto id = live_->run_id ? live_->run_id(r->run_dir()) : std::nullopt;
    what = (id ? tr("run #%1 ").arg(*id) : tr("run ")) + r->name() + " (" + QFileInfo(r->run_dir()).fileName() + ")";
  }
  setWindowTitle(what.isEmpty() ? tr("Halo Workbench") : tr("%1 — Halo Workbench").arg(what));
}

void MainWindow::follow(RunController* c) {
  following_ = c;
  opened_.reset();
  layout_shown_ = previews_shown_ = exchange_shown_ = false;
  layout_->set_layout(std::nullopt, 1);
  if (!live_->keep_overlays()) {  // a new run starts with a clean plot unless asked otherwise
    overlays_.clear();
    live_->set_overlays({});
  }
  live_->set_run(c->model());
  memory_->set_run(c->model());
  update_actions();
  update_title();
}

void MainWindow::launch(const nlohmann::json& experiment) {
  controller_->db_path = db_path;
  history_->db_path = db_path;
  if (!controller_->start(experiment, runs_root)) return;  // finished() carried the message
  follow(controller_);
  tabs_->setCurrentWidget(live_);
  show_message(tr("started %1").arg(controller_->run_dir()), false);
}

void MainWindow::stop() {
  if (strategies_->sweeping()) strategies_->stop_sweep();
  if (controller_->running()) controller_->stop();
}

void MainWindow::on_finished(RunController* c, bool ok, const QString& msg) {
  update_actions();
  if (c == following_) {
    live_->refresh();
    memory_->refresh();
    update_title();
  }
  history_->refresh();
  if (c != controller_) return;            // the sweep reports through the strategies view
  show_message(msg, !ok && !c->killed());  // a stopped run is what the user asked for: no dialog
}

void MainWindow::show_run(const RunModel* run) {
  live_->set_run(run);
  live_->refresh();
  memory_->set_run(run);
  const int views = run && run->config().contains("data") ? run->config()["data"].value("views", 1) : 1;
  layout_->set_layout(run ? run->layout() : std::nullopt, views, run ? run->name() : QString());
  if (run) {
    layout_->load_previews(run->run_dir());
    layout_->set_exchange(run->exchange_ms());
  }
  update_actions();
  update_title();
}

bool MainWindow::open_run(const QString& run_dir, qint64 running_pid) {
  if (running_pid > 0 && !controller_->running()) {
    controller_->attach(run_dir, running_pid);
    follow(controller_);
    tabs_->setCurrentWidget(live_);
    return true;
  }
  try {
    opened_ = RunModel::load(run_dir);
  } catch (const std::exception& e) {
    show_message(QString::fromUtf8(e.what()));
    return false;
  }
  if (opened_->config().is_object())  // the form shows what this run ran
    setup_->set_experiment(opened_->config(), tr("run %1").arg(QFileInfo(opened_->run_dir()).fileName()));
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
  auto* stop_it = box.addButton(tr("Stop it"), QMessageBox::DestructiveRole);
  box.addButton(QMessageBox::Cancel);
  box.exec();
  if (box.clickedButton() == leave) return e->accept();
  if (box.clickedButton() == stop_it) {
    stop();
    return e->accept();
  }
  e->ignore();
}

}  // namespace halo::gui
