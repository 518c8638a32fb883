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

namespace {
void bind_num(Statement& s, int i, const nlohmann::json& obj, const char* key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number()) {
    if (obj[key].is_number_float())
      s.bind(i, obj[key].get<double>());
    else
      s.bind(i, obj[key].get<int64_t>());
  } else {
    s.bind(i, std::nullopt);
  }
}
}  // namespace

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

void HistoryDb::add_metric(int64_t run, int64_t step, const std::string& key, const nlohmann::json& v) {
  if (!v.is_number() && !v.is_null()) return;
  const double d = v.is_number() ? v.get<double>() : std::nan("");
  w_->metric.bind(1, run).bind(2, step).bind(3, key);
  if (std::isnan(d))
    w_->metric.bind(4, std::nullopt).bind(5, 1);
  else
    w_->metric.bind(4, d).bind(5, 0);
  w_->metric.run();
  ++w_->rows;
}

void HistoryDb::update_devices(int64_t run, int rank, const nlohmann::json& hello) {
  auto& d = w_->devices[run];
  d[rank] = hello.value("device", std::string());
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [r, dev] : d) arr.push_back({{"rank", r}, {"device", dev}, {"host", hello.value("host", "")}});
  Statement s = db_->prepare("UPDATE runs SET devices=? WHERE id=?");
  s.bind(1, arr.dump()).bind(2, run).run();
}

void HistoryDb::record_event(int64_t run, int rank, const nlohmann::json& j) {
  if (!w_) throw util::Error("history database " + path_ + " was opened read-only", "");
  const std::string ev = j.value("event", "");
  begin_batch();
  bool urgent = false;
  if (ev == "step" && j.contains("step")) {
    const int64_t step = j["step"].get<int64_t>();
    if (rank == 0) {
      if (j.contains("losses") && j["losses"].is_object())
        for (const auto& [k, v] : j["losses"].items()) add_metric(run, step, k, v);
      for (const char* k : {"lr", "grad_norm", "loss_scale"})
        if (j.contains(k)) add_metric(run, step, k, j[k]);
      if (j.contains("time_ms") && j["time_ms"].is_object())
        for (const auto& [k, v] : j["time_ms"].items()) add_metric(run, step, "time_ms." + k, v);
    }
    const nlohmann::json mem = j.value("memory", nlohmann::json::object());
    const nlohmann::json t = j.value("time_ms", nlohmann::json::object());
    Statement& s = w_->sample;
    s.bind(1, run).bind(2, rank).bind(3, step);
    bind_num(s, 4, mem, "current"), bind_num(s, 5, mem, "peak"), bind_num(s, 6, mem, "reserved");
    bind_num(s, 7, mem, "rss"), bind_num(s, 8, t, "forward"), bind_num(s, 9, t, "backward");
    bind_num(s, 10, t, "comm"), bind_num(s, 11, t, "optim"), bind_num(s, 12, t, "total");
    s.run();
    if (rank == 0) {  // the step reached is rank 0's, whose metrics are the ones stored
      int64_t& last = w_->steps.try_emplace(run, -1).first->second;
      last = std::max(last, step);
    }
  } else if (ev == "layout") {
    w_->layout.bind(1, run).bind(2, j.dump()).run();
  } else if (ev == "checkpoint" && j.contains("path")) {
    record_artifact(run, "checkpoint", j["path"].get<std::string>(),
                    j.contains("step") ? std::optional<int64_t>(j["step"].get<int64_t>()) : std::nullopt);
  } else if (ev == "eval") {
    w_->evaluation.bind(1, run);
    if (j.contains("step") && j["step"].is_number()) w_->evaluation.bind(2, j["step"].get<int64_t>());
    w_->evaluation.bind(3, j.dump()).run();
    if (rank == 0 && j.contains("step") && j["step"].is_number_integer())  // plotted beside the losses
      for (const char* k : {"DET_l", "DET_t", "TOP_ll", "TOP_lt", "OLS"})
        if (j.contains(k)) add_metric(run, j["step"].get<int64_t>(), std::string("eval/") + k, j[k]);
  } else {
    if (ev == "hello") update_devices(run, rank, j);
    w_->event.bind(1, run).bind(2, rank).bind(3, ev.empty() ? std::string("log") : ev).bind(4, Writer::now());
    w_->event.bind(5, j.dump()).run();
    urgent = ev == "error" || ev == "done";
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
