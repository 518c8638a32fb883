// events.jsonl is opened for appending (a resumed run continues its file) and flushed after
// every line, so a reader (the workbench) sees each line as soon as it arrived.
#include "launch/RunRecorder.h"

#include <chrono>

#include <fmt/format.h>

namespace halo::launch {

RunRecorder::RunRecorder(const std::filesystem::path& run_dir, store::HistoryDb* history, int64_t run_id)
    : events_(run_dir / "events.jsonl", std::ios::app), history_(history), run_id_(run_id) {}

void RunRecorder::append(const std::string& text) {
  events_ << text << "\n";
  events_.flush();
}

protocol::EventLine RunRecorder::record(int rank, const std::string& line) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  protocol::EventLine tagged = protocol::tag_line(line, rank, now);
  if (std::holds_alternative<protocol::HeartbeatEvent>(tagged.event)) return tagged;  // for the silence watch only
  append(protocol::to_line(tagged));
  if (history_) history_->record_event(run_id_, tagged);
  if (const auto* error = std::get_if<protocol::ErrorEvent>(&tagged.event); error && failure_.empty())
    failure_ = error->describe(rank);
  return tagged;
}

void RunRecorder::rank_failed(int rank, int code, const std::string& log_path, const std::string& log_tail) {
  if (failure_.empty()) failure_ = fmt::format("rank {} exited with code {}", rank, code);
  failure_ += fmt::format("\n  rank {} log ({}):\n{}", rank, log_path, log_tail);
}

void RunRecorder::interrupted(const std::string& how) { failure_ = how; }

void RunRecorder::rank_silent(const std::string& why) {
  if (failure_.empty()) failure_ = why;
}

void RunRecorder::tick() {
  if (history_) history_->tick();
}

void RunRecorder::finish(bool interrupted) {
  if (!history_) return;
  const store::RunStatus status = failure_.empty()
                                      ? store::RunStatus::Finished
                                      : (interrupted ? store::RunStatus::Killed : store::RunStatus::Failed);
  history_->finish_run(run_id_, status, failure_);
}

}  // namespace halo::launch
