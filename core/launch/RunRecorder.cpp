// events.jsonl grows by whole lines only (io::AppendFile, every write checked, a resumed run
// continues its file); a failed write there or in the history becomes the run's failure.
#include "launch/RunRecorder.h"

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::launch {

RunRecorder::RunRecorder(const std::filesystem::path& run_dir, store::HistoryDb* history, int64_t run_id)
    : history_(history), run_id_(run_id) {
  events_.emplace((run_dir / "events.jsonl").string());
}

void RunRecorder::failed_write(const std::string& problem) {
  if (cause_.empty()) cause_ = problem;  // the first cause stands
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
  if (const auto* error = std::get_if<protocol::ErrorEvent>(&tagged.event)) {
    if (!error->peer_lost) {
      if (cause_.empty()) cause_ = error->describe(rank);
    } else {
      lost_a_peer_.insert(rank);
      if (peer_lost_.empty()) peer_lost_ = error->describe(rank);
    }
  }
  return tagged;
}

void RunRecorder::rank_failed(int rank, int code, bool signaled, const std::string& log_path,
                              const std::string& log_tail) {
  if (cause_.empty() && !lost_a_peer_.contains(rank)) {
    const int sig = code - 128;
    cause_ = signaled ? fmt::format("rank {} was killed by signal {} ({})", rank, sig, ::strsignal(sig))
                      : fmt::format("rank {} exited with code {}", rank, code);
  }
  logs_ += fmt::format("\n  rank {} log ({}):\n{}", rank, log_path, log_tail);
}

std::string RunRecorder::failure() const {
  if (interrupted_) return cause_;
  if (cause_.empty()) return peer_lost_.empty() ? peer_lost_ : peer_lost_ + logs_;
  const size_t hint = peer_lost_.find("\n  hint:");  // its hint blames a peer: the cause is named
  return cause_ + (peer_lost_.empty() ? "" : "\n  then " + peer_lost_.substr(0, hint)) + logs_;
}

void RunRecorder::interrupted(const std::string& how) {
  cause_ = how;
  interrupted_ = true;
}

void RunRecorder::rank_silent(const std::string& why) {
  if (cause_.empty()) cause_ = why;
}

void RunRecorder::tick() {
  to_history([](store::HistoryDb& h) { h.tick(); });
}

void RunRecorder::finish(bool interrupted, const std::string& note) {
  const std::string failure = this->failure();
  const store::RunStatus status = failure.empty() ? store::RunStatus::Finished
                                                  : (interrupted ? store::RunStatus::Killed : store::RunStatus::Failed);
  const std::string reason = note.empty() || failure.empty() ? failure : failure + "\n  " + note;
  to_history([&](store::HistoryDb& h) { h.finish_run(run_id_, status, reason); });
}

}  // namespace halo::launch
