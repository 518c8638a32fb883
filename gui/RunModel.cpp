// Events (read by core/protocol): step -> per-rank series (rank 0 also losses and lr), layout,
// checkpoint, error, done, hello (device), log lines; times from the launcher's time stamp.
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

void RunModel::add_line(const std::string& line) { add_event(protocol::parse_line(line)); }

RankSeries& RunModel::rank(int r) {
  r = std::max(r, 0);
  if (static_cast<size_t>(r) >= ranks_.size()) ranks_.resize(static_cast<size_t>(r) + 1);
  return ranks_[static_cast<size_t>(r)];
}

void RunModel::add_step(int r, const protocol::StepEvent& e, double wall) {
  RankSeries& s = rank(r);
  const protocol::StepTimes& t = e.time_ms;
  const protocol::StepMemory& m = e.memory;
  s.step.push_back(static_cast<double>(e.step));
  // Without launcher time stamps, relative time is the sum of step times.
  const double rel = wall > 0 ? wall - start_wall_s_ : (s.time_s.empty() ? 0 : s.time_s.back()) + t.total / 1000;
  s.time_s.push_back(rel);
  s.forward_ms.push_back(t.forward);
  s.backward_ms.push_back(t.backward);
  s.comm_ms.push_back(t.comm);
  s.optim_ms.push_back(t.optim);
  s.total_ms.push_back(t.total);
  s.mem_current.push_back(static_cast<double>(m.current));
  s.mem_peak.push_back(static_cast<double>(m.peak));
  s.mem_reserved.push_back(static_cast<double>(m.reserved));
  s.rss.push_back(static_cast<double>(m.rss));
  s.mem_step_start.push_back(static_cast<double>(m.step_start));
  s.samples_per_s.push_back(e.samples_per_s);
  ++step_events_;
  if (r != 0) return;
  steps_.push_back(static_cast<double>(e.step));
  lr_.push_back(e.lr);
  for (const auto& [key, v] : e.losses) {  // NaN: a diverged loss (null on the wire)
    auto& series = losses_[key];
    series.resize(steps_.size() - 1, std::numeric_limits<double>::quiet_NaN());
    series.push_back(v);
  }
}

void RunModel::add_event(const protocol::EventLine& line) {
  const int r = line.rank;
  const double wall = line.time.value_or(-1);
  if (wall > 0 && start_wall_s_ < 0) start_wall_s_ = wall;
  const protocol::Event& ev = line.event;
  if (const auto* step = std::get_if<protocol::StepEvent>(&ev)) {
    add_step(r, *step, wall);
  } else if (const auto* layout = std::get_if<protocol::LayoutEvent>(&ev)) {
    layout_ = *layout;
  } else if (const auto* exchange = std::get_if<protocol::ExchangeEvent>(&ev)) {
    exchange_ms_[r] = exchange->ms;
  } else if (const auto* timeline = std::get_if<protocol::MemoryTimelineEvent>(&ev)) {
    timelines_[r] = *timeline;
  } else if (const auto* hello = std::get_if<protocol::HelloEvent>(&ev)) {
    rank(r).device = hello->device;
  } else if (const auto* ckpt = std::get_if<protocol::CheckpointEvent>(&ev)) {
    checkpoints_.push_back({ckpt->step, ckpt->path, ckpt->bytes});
  } else if (const auto* error = std::get_if<protocol::ErrorEvent>(&ev)) {
    errors_.push_back(error->describe(r));
    rank(r).log += "error: " + errors_.back() + "\n";
  } else if (std::holds_alternative<protocol::DoneEvent>(ev)) {
    ++done_;
  } else if (const auto* log = std::get_if<protocol::LogEvent>(&ev)) {
    rank(r).log += log->text + "\n";
  } else if (const auto* bad = std::get_if<protocol::MalformedEvent>(&ev)) {
    rank(r).log += "unreadable event: " + bad->problem + "\n";
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
  const int world = p.sp * p.dp;
  const std::string zero(world == 1 ? "" : config::zero_suffix(p.shard_state));
  if (config::shards(p.strategy)) return QString::fromStdString("tp" + std::to_string(p.sp) + s.substr(2) + zero);
  return QString::fromStdString(s + zero);
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
