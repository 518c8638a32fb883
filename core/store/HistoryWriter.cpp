// The launcher's side of the history: begin_run, record_event for every worker event line,
// finish_run. Rows go into one transaction committed every 200 ms / 500 rows and at finish.
#include "store/HistoryWriter.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "store/Sha256.h"
#include "util/Error.h"
#include "util/Version.h"

namespace halo::store {

HistoryDb::Writer::Writer(SqliteDb& db)
    : metric(db.prepare("INSERT INTO metrics(run_id, step, key, value, is_nan) VALUES(?, ?, ?, ?, ?)")),
      sample(db.prepare("INSERT INTO samples(run_id, rank, step, mem_current, mem_peak, mem_reserved, rss, forward_ms, "
                        "backward_ms, comm_ms, optim_ms, total_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")),
      event(db.prepare("INSERT INTO events(run_id, rank, kind, time, json) VALUES(?, ?, ?, ?, ?)")),
      evaluation(db.prepare("INSERT INTO evaluations(run_id, step, json) VALUES(?, ?, ?)")),
      layout(db.prepare("INSERT OR REPLACE INTO layouts(run_id, json) VALUES(?, ?)")),
      artifact(db.prepare(
          "INSERT INTO artifacts(run_id, kind, step, path, bytes, sha256, time) VALUES(?, ?, ?, ?, ?, ?, ?)")),
      last_step(db.prepare("UPDATE runs SET last_step=MAX(COALESCE(last_step, -1), ?) WHERE id=?")) {}

double HistoryDb::Writer::now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int64_t HistoryDb::begin_run(const nlohmann::json& config, const std::string& run_dir) {
  flush();
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const nlohmann::json par = config.value("parallel", nlohmann::json::object());
  Statement s = db_->prepare(
      "INSERT INTO runs(name, config, strategy, sp, dp, status, start_time, host, halo_version, git_revision, "
      "launcher_pid, run_dir) VALUES(?, ?, ?, ?, ?, 'RUNNING', ?, ?, ?, ?, ?, ?)");
  s.bind(1, config.value("name", std::string("run")))
      .bind(2, config.dump())
      .bind(3, par.value("strategy", std::string()))
      .bind(4, par.value("sp", 1))
      .bind(5, par.value("dp", 1))
      .bind(6, Writer::now())
      .bind(7, std::string(host))
      .bind(8, util::version())
      .bind(9, util::git_revision())
      .bind(10, static_cast<int64_t>(::getpid()))
      .bind(11, run_dir);
  s.run();
  return db_->last_insert_id();
}

void HistoryDb::begin_batch() {
  if (w_->in_tx) return;
  db_->exec("BEGIN IMMEDIATE");
  w_->in_tx = true;
  w_->rows = 0;
  w_->batch_start = std::chrono::steady_clock::now();
}

void HistoryDb::add_metric(int64_t run, int64_t step, const std::string& key, double v) {
  w_->metric.bind(1, run).bind(2, step).bind(3, key);
  if (std::isnan(v))
    w_->metric.bind(4, std::nullopt).bind(5, 1);
  else
    w_->metric.bind(4, v).bind(5, 0);
  w_->metric.run();
  ++w_->rows;
}

void HistoryDb::update_devices(int64_t run, int rank, const protocol::HelloEvent& hello) {
  auto& d = w_->devices[run];
  d[rank] = hello.device;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [r, dev] : d) arr.push_back({{"rank", r}, {"device", dev}, {"host", hello.host}});
  Statement s = db_->prepare("UPDATE runs SET devices=? WHERE id=?");
  s.bind(1, arr.dump()).bind(2, run).run();
}

void HistoryDb::record_step(int64_t run, int rank, const protocol::StepEvent& e) {
  if (rank == 0)
    for (const auto& [key, v] : e.metrics()) add_metric(run, e.step, key, v);
  const protocol::StepMemory& m = e.memory;
  const protocol::StepTimes& t = e.time_ms;
  Statement& s = w_->sample;
  s.bind(1, run).bind(2, rank).bind(3, e.step).bind(4, m.current).bind(5, m.peak).bind(6, m.reserved).bind(7, m.rss);
  s.bind(8, t.forward).bind(9, t.backward).bind(10, t.comm).bind(11, t.optim).bind(12, t.total).run();
  if (rank == 0) {  // the step reached is rank 0's, whose metrics are the ones stored
    int64_t& last = w_->steps.try_emplace(run, -1).first->second;
    last = std::max(last, e.step);
  }
}

void HistoryDb::record_eval(int64_t run, int rank, const protocol::EvalEvent& e, const std::string& json) {
  w_->evaluation.bind(1, run).bind(2, e.step).bind(3, json).run();
  if (rank == 0)  // plotted beside the losses
    for (const auto& [key, v] : e.scores()) add_metric(run, e.step, "eval/" + key, v);
}

void HistoryDb::record_event(int64_t run, int rank, const nlohmann::json& event) {
  protocol::EventLine line = protocol::parse_line(event);
  protocol::set_rank(line, rank);
  record_event(run, line);
}

void HistoryDb::record_event(int64_t run, const protocol::EventLine& line) {
  if (!w_) throw util::Error("history database " + path_ + " was opened read-only", "");
  begin_batch();
  const protocol::Event& ev = line.event;
  bool urgent = false;
  if (const auto* step = std::get_if<protocol::StepEvent>(&ev)) {
    record_step(run, line.rank, *step);
  } else if (std::holds_alternative<protocol::LayoutEvent>(ev)) {
    w_->layout.bind(1, run).bind(2, protocol::to_line(line)).run();
  } else if (const auto* ckpt = std::get_if<protocol::CheckpointEvent>(&ev)) {
    record_artifact(run, "checkpoint", ckpt->path, ckpt->step);
  } else if (const auto* eval = std::get_if<protocol::EvalEvent>(&ev)) {
    record_eval(run, line.rank, *eval, protocol::to_line(line));
  } else {  // hello, error, done, log, and lines that are no (well-formed) event
    if (const auto* hello = std::get_if<protocol::HelloEvent>(&ev)) update_devices(run, line.rank, *hello);
    const std::string kind = protocol::name_of(ev);
    w_->event.bind(1, run).bind(2, line.rank).bind(3, kind.empty() ? protocol::names::log : kind);
    w_->event.bind(4, Writer::now()).bind(5, protocol::to_line(line)).run();
    urgent = kind == protocol::names::error || kind == protocol::names::done;
  }
  ++w_->rows;
  if (urgent || w_->rows >= batch_rows)
    flush();
  else
    tick();
}

void HistoryDb::record_artifact(int64_t run, const std::string& kind, const std::string& path,
                                std::optional<int64_t> step) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  const auto sha = Sha256::of_file(path);
  Statement& s = w_->artifact;
  s.bind(1, run).bind(2, kind);
  if (step) s.bind(3, *step);
  s.bind(4, path);
  if (!ec) s.bind(5, static_cast<int64_t>(bytes));
  if (sha) s.bind(6, *sha);
  s.bind(7, Writer::now()).run();
}

void HistoryDb::tick() {
  if (w_ && w_->in_tx && std::chrono::steady_clock::now() - w_->batch_start >= batch_interval) flush();
}

void HistoryDb::flush() {
  if (!w_ || !w_->in_tx) return;
  for (const auto& [run, step] : w_->steps) w_->last_step.bind(1, step).bind(2, run).run();
  db_->exec("COMMIT");
  w_->in_tx = false;
  w_->rows = 0;
}

void HistoryDb::finish_run(int64_t run, RunStatus status, const std::string& reason) {
  flush();
  Statement s = db_->prepare("UPDATE runs SET status=?, end_time=?, exit_reason=? WHERE id=?");
  s.bind(1, to_string(status)).bind(2, Writer::now()).bind(3, reason).bind(4, run).run();
}

}  // namespace halo::store
