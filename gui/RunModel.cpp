// Event parsing: step -> per-rank series (rank 0 also losses and lr), layout, checkpoint,
// error, done, hello (device), log lines; times from the launcher's "time" stamp.
#include "RunModel.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "CoreChecks.h"
#include "config/ExperimentConfig.h"
#include "util/Error.h"

namespace halo::gui {

using nlohmann::json;

RunModel::RunModel(QObject* parent) : QObject(parent) {}

std::unique_ptr<RunModel> RunModel::load(const QString& run_dir) {
  const QDir dir(run_dir);
  const QString events = dir.filePath("events.jsonl"), config = dir.filePath("config.json");
  if (!QFileInfo::exists(events) && !QFileInfo::exists(config))
    throw util::Error("run folder '" + run_dir.toStdString() + "' has no events.jsonl or config.json",
                      "choose a folder made by `halo launch` (runs/<name>-<time>)");
  auto m = std::make_unique<RunModel>();
  m->set_run_dir(dir.absolutePath());
  if (std::ifstream in(config.toStdString()); in) {
    json c = json::parse(in, nullptr, false);
    if (!c.is_discarded()) m->set_config(c);
  }
  std::ifstream in(events.toStdString());
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) m->add_line(line);
  m->reload_logs();
  return m;
}

bool RunModel::add_line(const std::string& line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    rank(0).log += line + "\n";
    return false;
  }
  add_event(j);
  return true;
}

RankSeries& RunModel::rank(int r) {
  r = std::max(r, 0);
  if (static_cast<size_t>(r) >= ranks_.size()) ranks_.resize(static_cast<size_t>(r) + 1);
  return ranks_[static_cast<size_t>(r)];
}

void RunModel::add_event(const json& j) {
  const std::string ev = j.value("event", "");
  const int r = j.value("rank", 0);
  const double wall = j.contains("time") && j["time"].is_number() ? j["time"].get<double>() : -1;
  if (wall > 0 && start_wall_s_ < 0) start_wall_s_ = wall;
  auto num = [](const json& o, const char* key) {
    return o.contains(key) && o[key].is_number() ? o[key].get<double>() : 0.0;
  };
  if (ev == "step") {
    RankSeries& s = rank(r);
    const json& t = j.contains("time_ms") ? j["time_ms"] : json::object();
    const json& m = j.contains("memory") ? j["memory"] : json::object();
    s.step.push_back(num(j, "step"));
    // Without launcher time stamps, relative time is the sum of step times.
    const double rel =
        wall > 0 ? wall - start_wall_s_ : (s.time_s.empty() ? 0 : s.time_s.back()) + num(t, "total") / 1000;
    s.time_s.push_back(rel);
    s.forward_ms.push_back(num(t, "forward"));
    s.backward_ms.push_back(num(t, "backward"));
    s.comm_ms.push_back(num(t, "comm"));
    s.optim_ms.push_back(num(t, "optim"));
    s.total_ms.push_back(num(t, "total"));
    s.mem_current.push_back(num(m, "current"));
    s.mem_peak.push_back(num(m, "peak"));
    s.mem_reserved.push_back(num(m, "reserved"));
    s.rss.push_back(num(m, "rss"));
    s.samples_per_s.push_back(num(j, "samples_per_s"));
    ++step_events_;
    if (r == 0) {
      steps_.push_back(num(j, "step"));
      lr_.push_back(num(j, "lr"));
      if (j.contains("losses") && j["losses"].is_object())
        for (const auto& [key, v] : j["losses"].items()) {
          auto& series = losses_[key];
          series.resize(steps_.size() - 1, std::numeric_limits<double>::quiet_NaN());
          series.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
        }
    }
  } else if (ev == "layout") {
    layout_ = j;
  } else if (ev == "hello") {
    rank(r).device = j.value("device", "");
  } else if (ev == "checkpoint") {
    checkpoints_.push_back({j.value("step", int64_t{0}), j.value("path", ""), j.value("bytes", int64_t{0})});
  } else if (ev == "error") {
    errors_.push_back("rank " + std::to_string(r) + ": " + j.value("message", "") +
                      (j.value("hint", "").empty() ? "" : "\n  hint: " + j.value("hint", "")));
    rank(r).log += "error: " + errors_.back() + "\n";
  } else if (ev == "done") {
    ++done_;
  } else if (ev == "log") {
    rank(r).log += j.value("text", "") + "\n";
  }
}

void RunModel::reload_logs() {
  if (run_dir_.isEmpty()) return;
  const int world = config_.contains("parallel")
                        ? config_["parallel"].value("sp", 1) * config_["parallel"].value("dp", 1)
                        : static_cast<int>(ranks_.size());
  for (int r = 0; r < world; ++r) {
    QFile f(QDir(run_dir_).filePath(QString("rank%1.log").arg(r)));
    if (!f.open(QIODevice::ReadOnly)) continue;
    const QByteArray text = f.readAll();
    RankSeries& s = rank(r);
    // Keep the event-stream lines (errors, non-JSON output) after the rank's own log.
    s.log = text.toStdString() + (s.log.empty() ? "" : "\n" + s.log);
  }
}

QString RunModel::name() const {
  return QString::fromStdString(config_.value("name", QFileInfo(run_dir_).fileName().toStdString()));
}

QString RunModel::strategy_label() const {
  if (!config_.contains("parallel")) return "?";
  const config::ParallelConfig p = config::parse_experiment(config_).config.parallel;
  const std::string s = config::name_of(p.strategy);
  if (config::shards(p.strategy)) return QString::fromStdString("tp" + std::to_string(p.sp) + s.substr(2));
  return QString::fromStdString(s);
}

double RunModel::device_limit_bytes() const {
  const auto parsed = config::parse_experiment(config_.is_object() ? config_ : nlohmann::json::object());
  if (parsed.problems.empty())
    if (const auto limit = CoreChecks::device_limit_bytes(parsed.config)) return *limit;
  if (parsed.config.parallel.device == config::Device::Cuda) return 0;  // unknown on this machine
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

double RunModel::peak_bytes(int r) const {
  if (r < 0 || static_cast<size_t>(r) >= ranks_.size() || ranks_[static_cast<size_t>(r)].mem_peak.empty()) return 0;
  const auto& p = ranks_[static_cast<size_t>(r)].mem_peak;
  return *std::max_element(p.begin(), p.end());
}

double RunModel::mean_step_ms(int r) const {
  if (r < 0 || static_cast<size_t>(r) >= ranks_.size()) return 0;
  const auto& t = ranks_[static_cast<size_t>(r)].total_ms;
  if (t.empty()) return 0;
  const size_t from = t.size() > 1 ? 1 : 0;
  double sum = 0;
  for (size_t i = from; i < t.size(); ++i) sum += t[i];
  return sum / static_cast<double>(t.size() - from);
}

}  // namespace halo::gui
