// Starts, watches and stops one run through the launcher process (`halo launch`, detached
// so a run outlives the window); tails the run's events.jsonl into a RunModel.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>

#include <nlohmann/json.hpp>

#include "RunModel.h"

namespace halo::gui {

class RunController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Finished, Failed, Killed };  // Killed: stopped by the user
  Q_ENUM(State)

  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;  // leaves a running launcher running

  // The halo binary: $HALO_BIN, else `halo` beside this executable.
  static QString halo_binary();
  // Validates, writes <runs_root>/<name>-<time>/experiment.json and starts
  // `halo launch` on it; false (and failed(message)) when it cannot start.
  bool start(const nlohmann::json& experiment, const QString& runs_root);
  // Follows a run whose launcher (pid) is already going, e.g. one left running earlier.
  void attach(const QString& run_dir, qint64 pid);
  void stop();                         // SIGINT to the launcher: it stops every rank and records KILLED
  static QString state_name(State s);  // "idle", "running", "finished", "failed", "killed"

  State state() const { return state_; }
  bool running() const { return state_ == State::Running; }
  bool killed() const { return state_ == State::Killed; }
  QString run_dir() const { return run_dir_; }
  qint64 pid() const { return pid_; }
  QString failure() const { return failure_; }
  RunModel* model() const { return model_.get(); }
  QString db_path;  // --db for the launcher; empty: its default ($HALO_DB, ~/.local/share/halo)
  int poll_ms = 200;

 signals:
  void stateChanged(halo::gui::RunController::State state);
  void eventsAdded();
  void finished(bool ok, const QString& message);

 public slots:
  void poll();

 private:
  void read_events();
  void conclude();
  void set_state(State s);
  QTimer timer_;
  std::unique_ptr<RunModel> model_;
  State state_ = State::Idle;
  QString run_dir_, failure_;
  qint64 pid_ = 0, offset_ = 0;
  bool stop_sent_ = false;
  QByteArray partial_;
};

}  // namespace halo::gui
