// The launcher is started with QProcess::startDetached (its output to <run>/launcher.log),
// watched through /proc/<pid> and stopped with SIGINT, like Ctrl-C in a terminal.
#include "RunController.h"

#include <signal.h>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>

#include "config/ExperimentConfig.h"

namespace halo::gui {

namespace {

// Alive = /proc/<pid> exists and is not a zombie (a detached launcher's parent is init).
bool process_alive(qint64 pid) {
  QFile stat(QString("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return false;
  const QByteArray s = stat.readAll();
  const int close = s.lastIndexOf(')');
  return close > 0 && close + 2 < s.size() && s[close + 2] != 'Z';
}

QString tail(const QString& path, int lines) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QStringList all = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
  for (auto& l : all) l = l.section('\r', -1);  // progress lines rewritten with \r
  return all.mid(std::max<qsizetype>(0, all.size() - lines)).join('\n');
}

}  // namespace

RunController::RunController(QObject* parent) : QObject(parent) {
  connect(&timer_, &QTimer::timeout, this, &RunController::poll);
}

RunController::~RunController() = default;

QString RunController::halo_binary() {
  const QString env = qEnvironmentVariable("HALO_BIN");
  if (!env.isEmpty()) return env;
  return QDir(QCoreApplication::applicationDirPath()).filePath("halo");
}

bool RunController::start(const nlohmann::json& experiment, const QString& runs_root) {
  if (running()) {
    emit finished(false, tr("a run is already going (%1); stop it first").arg(run_dir_));
    return false;
  }
  const config::ConfigResult parsed = config::parse_experiment(experiment);
  if (!parsed.problems.empty()) {
    failure_ = QString::fromStdString("the experiment has problems:\n" + config::describe_problems(parsed.problems));
    set_state(State::Failed);
    emit finished(false, failure_);
    return false;
  }
  const QString stamp = QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
  QString dir = QDir(runs_root).absoluteFilePath(QString::fromStdString(parsed.config.name) + "-" + stamp);
  for (int n = 2; QFileInfo::exists(dir); ++n)
    dir = QDir(runs_root).absoluteFilePath(
        QString("%1-%2-%3").arg(QString::fromStdString(parsed.config.name), stamp).arg(n));
  nlohmann::json exp = experiment;
  exp["run_dir"] = dir.toStdString();
  if (!QDir().mkpath(dir)) {
    failure_ = tr("cannot create run folder %1; choose a writable runs folder").arg(dir);
    set_state(State::Failed);
    emit finished(false, failure_);
    return false;
  }
  const QString exp_path = QDir(dir).filePath("experiment.json");
  QFile f(exp_path);
  if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(exp.dump(2) + "\n")) < 0) {
    failure_ = tr("cannot write %1: %2").arg(exp_path, f.errorString());
    set_state(State::Failed);
    emit finished(false, failure_);
    return false;
  }
  f.close();
  QProcess p;
  p.setProgram(halo_binary());
  QStringList args{"launch", exp_path};
  if (!db_path.isEmpty()) args << "--db" << db_path;
  p.setArguments(args);
  p.setWorkingDirectory(dir);
  const QString log = QDir(dir).filePath("launcher.log");
  p.setStandardOutputFile(log, QIODevice::Append);
  p.setStandardErrorFile(log, QIODevice::Append);
  qint64 pid = 0;
  if (!p.startDetached(&pid)) {
    failure_ = tr("cannot start %1: %2 (set HALO_BIN to the halo binary)").arg(halo_binary(), p.errorString());
    set_state(State::Failed);
    emit finished(false, failure_);
    return false;
  }
  attach(dir, pid);
  nlohmann::json full = config::to_json(parsed.config);
  full["run_dir"] = dir.toStdString();
  model_->set_config(full);
  return true;
}

void RunController::attach(const QString& run_dir, qint64 pid) {
  run_dir_ = run_dir;
  pid_ = pid;
  offset_ = 0;
  partial_.clear();
  failure_.clear();
  stop_sent_ = false;
  model_ = std::make_unique<RunModel>();
  model_->set_run_dir(run_dir);
  set_state(State::Running);
  timer_.start(poll_ms);
  poll();
}

void RunController::stop() {
  if (!running() || pid_ <= 0) return;
  stop_sent_ = true;
  ::kill(static_cast<pid_t>(pid_), SIGINT);
}

QString RunController::state_name(State s) {
  static const char* names[] = {"idle", "running", "finished", "failed", "killed"};
  return names[static_cast<int>(s)];
}

void RunController::poll() {
  if (state_ != State::Running) return;
  const bool alive = process_alive(pid_);  // before reading, so no event is missed
  read_events();
  if (!alive) conclude();
}

void RunController::read_events() {
  QFile f(QDir(run_dir_).filePath("events.jsonl"));
  if (!f.open(QIODevice::ReadOnly) || f.size() <= offset_) return;
  f.seek(offset_);
  const QByteArray data = f.readAll();
  offset_ += data.size();
  partial_ += data;
  bool any = false;
  for (qsizetype nl; (nl = partial_.indexOf('\n')) >= 0;) {
    const QByteArray line = partial_.left(nl);
    partial_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    if (model_->config().is_null()) {  // the launcher's full config, once it wrote it
      QFile c(QDir(run_dir_).filePath("config.json"));
      if (c.open(QIODevice::ReadOnly)) {
        auto j = nlohmann::json::parse(c.readAll().toStdString(), nullptr, false);
        if (!j.is_discarded()) model_->set_config(j);
      }
    }
    model_->add_line(line.toStdString());
    any = true;
  }
  if (any) {
    emit model_->changed();
    emit eventsAdded();
  }
}

void RunController::conclude() {
  timer_.stop();
  model_->reload_logs();
  const QString log = QDir(run_dir_).filePath("launcher.log");
  QFile f(log);
  const QString text = f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
  const int world = model_->config().contains("parallel")
                        ? model_->config()["parallel"].value("sp", 1) * model_->config()["parallel"].value("dp", 1)
                        : 1;
  const bool ok = text.contains(QString("run %1 finished:").arg(run_dir_)) ||
                  (model_->done_ranks() >= world && !text.contains("failed:"));
  if (ok) {
    set_state(State::Finished);
    emit model_->changed();
    emit finished(true, tr("run %1 finished: %2 steps").arg(run_dir_).arg(model_->steps().size()));
    return;
  }
  failure_ =
      model_->errors().empty() ? tail(log, 12) : QString::fromStdString(model_->errors().front()) + "\n" + tail(log, 6);
  if (failure_.isEmpty()) failure_ = tr("the launcher exited without finishing (see %1)").arg(log);
  // The launcher's own word (it records KILLED), or our SIGINT when it died before saying so.
  const bool killed = text.contains("stopped by the user") || (stop_sent_ && model_->errors().empty());
  if (killed)
    failure_ = tr("run %1 stopped by the user (KILLED) after %2 step(s)").arg(run_dir_).arg(model_->steps().size());
  set_state(killed ? State::Killed : State::Failed);
  emit model_->changed();
  emit finished(false, failure_);
}

void RunController::set_state(State s) {
  if (s == state_) return;
  state_ = s;
  emit stateChanged(s);
}

}  // namespace halo::gui
