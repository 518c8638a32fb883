// Everything the workbench shows about one run, filled from its JSON-lines events (live
// from events.jsonl, or all at once when a finished run is opened); no Qt widgets.
#pragma once

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/EventLine.h"

namespace halo::gui {

// One rank's step samples, one entry per step event, in arrival order.
struct RankSeries {
  std::vector<double> step, time_s;  // time_s: seconds since the run's first event
  std::vector<double> forward_ms, backward_ms, comm_ms, optim_ms, total_ms;
  std::vector<double> mem_current, mem_peak, mem_reserved, rss;  // bytes
  std::vector<double> mem_step_start;                            // bytes live when the step began (0: not reported)
  std::vector<double> samples_per_s;
  std::string device, log;
};

struct CheckpointInfo {
  int64_t step = 0;
  std::string path;
  int64_t bytes = 0;
};

class RunModel : public QObject {
  Q_OBJECT
 public:
  explicit RunModel(QObject* parent = nullptr);

  // Reads <run_dir>/config.json and <run_dir>/events.jsonl (util::Error when the folder
  // holds neither); rank logs from <run_dir>/rank<k>.log.
  static std::unique_ptr<RunModel> load(const QString& run_dir);

  void set_run_dir(const QString& dir) { run_dir_ = dir; }
  void set_config(const nlohmann::json& config) { config_ = config; }
  // One line of events.jsonl (a line that is not JSON is rank 0's log line).
  void add_line(const std::string& line);
  void add_event(const protocol::EventLine& line);
  void reload_logs();  // rank<k>.log files of the run folder

  const QString& run_dir() const { return run_dir_; }
  const nlohmann::json& config() const { return config_; }
  QString name() const;
  QString strategy_label() const;  // "none", "checkpoint", "tp2", "tp2+checkpoint"
  const std::vector<RankSeries>& ranks() const { return ranks_; }
  // Rank 0's step, relative and wall time, and each loss key / lr per step event.
  const std::vector<double>& steps() const { return steps_; }
  const std::vector<double>& times() const { return ranks_.empty() ? empty_ : ranks_[0].time_s; }
  double start_wall_s() const { return start_wall_s_; }
  const std::map<std::string, std::vector<double>>& losses() const { return losses_; }
  const std::vector<double>& lr() const { return lr_; }
  const std::optional<protocol::LayoutEvent>& layout() const { return layout_; }  // none before it arrived
  // Per rank of data-parallel group 0 (its sharding index): ms per step of each layer's halo
  // exchange, from its `exchange` event; empty before they arrived.
  const std::map<int, std::map<std::string, double>>& exchange_ms() const { return exchange_ms_; }
  // Per rank of data-parallel group 0: live bytes through one step, from its `memory_timeline`
  // event (the memory tab's measured timeline); empty before they arrived.
  const std::map<int, protocol::MemoryTimelineEvent>& memory_timelines() const { return timelines_; }
  const std::vector<CheckpointInfo>& checkpoints() const { return checkpoints_; }
  const std::vector<std::string>& errors() const { return errors_; }
  int done_ranks() const { return done_; }
  int64_t step_events() const { return step_events_; }
  double device_limit_bytes() const;    // bytes one rank may use (core's device capacity); 0 when unknown
  double peak_bytes(int rank) const;    // largest peak over the run
  double mean_step_ms(int rank) const;  // total_ms, the first step left out when there are more

 signals:
  void changed();  // new events were added (emitted by the owner after a batch)

 private:
  RankSeries& rank(int r);
  QString run_dir_;
  void add_step(int r, const protocol::StepEvent& e, double wall);
  nlohmann::json config_;
  std::optional<protocol::LayoutEvent> layout_;
  std::map<int, std::map<std::string, double>> exchange_ms_;
  std::map<int, protocol::MemoryTimelineEvent> timelines_;
  std::vector<RankSeries> ranks_;
  std::vector<double> steps_, lr_, empty_;
  std::map<std::string, std::vector<double>> losses_;
  std::vector<CheckpointInfo> checkpoints_;
  std::vector<std::string> errors_;
  double start_wall_s_ = -1, cumulative_s_ = 0;
  int done_ = 0;
  int64_t step_events_ = 0;
};

}  // namespace halo::gui
