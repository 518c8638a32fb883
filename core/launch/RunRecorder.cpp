// events.jsonl grows by whole lines only (io::AppendFile, every write checked, a resumed run
// continues its file); a failed write there or in the history becomes the run's failure.
#include "launch/RunRecorder.h"

#include <chrono>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::launch {

RunRecorder::RunRecorder(const std::filesystem::path& run_dir, store::HistoryDb* history, int64_t run_id)
    : history_(history), run_id_(run_id) {
  events_.emplace((run_dir / "events.jsonl").string());
}

void RunRecorder::failed_write(const std::string& problem) {
  if (failure_.empty()) failure_ = problem;  // the first cause stands
  write_failed_ = true;
}

template <class F>
void RunRecorder::to_history(F&& write) {
  if (!history_) return;
  try {
    write(*history_);
  } catch (const util::Error& e) {
    const std::string path = history_->path();
    history_ = nullptr;  // its state is unknown: nothing more is written there
    failed_write(fmt::format("the run history {} could not be written: {}", path, e.problem()));
  }
}

void RunRecorder::append(const std::string& text) {
  if (!events_) return;
  try {
    events_->append_line(text);
  } catch (const util::Error& e) {
    events_.reset();  // a later line would follow a gap
    failed_write(e.problem());
  }
}

protocol::EventLine RunRecorder::record(int rank, const std::string& line) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  protocol::EventLine tagged = protocol::tag_line(line, rank, now);
  if (std::holds_alternative<protocol::HeartbeatEvent>(tagged.event)) return tagged;  // for the silence watch only
  append(protocol::to_line(tagged));
  to_history([&](store::HistoryDb& h) { h.record_event(run_id_, tagged); });
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
  to_history([](store::HistoryDb& h) { h.tick(); });
}

void RunRecorder::finish(bool interrupted, const std::string& note) {
  const store::RunStatus status = failure_.empty()
                                      ? store::RunStatus::Finished
                                      : (interrupted ? store::RunStatus::Killed : store::RunStatus::Failed);
  const std::string reason = note.empty() || failure_.empty() ? failure_ : failure_ + "\n  " + note;
  to_history([&](store::HistoryDb& h) { h.finish_run(run_id_, status, reason); });
}

}  // namespace halo::launch
