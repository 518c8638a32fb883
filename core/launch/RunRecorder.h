// What the launcher keeps of a run: every line of every rank, tagged with its rank and arrival
// time, appended to <run>/events.jsonl and recorded in the history (node 0), and why it stopped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "io/AppendFile.h"
#include "protocol/EventLine.h"
#include "store/HistoryDb.h"

namespace halo::launch {

class RunRecorder {
 public:
  // history: the run's history, or null (node R > 0 writes none); run_id: its begin_run().
  RunRecorder(const std::filesystem::path& run_dir, store::HistoryDb* history, int64_t run_id);
  // One line of global rank `rank`'s stdout: tagged, appended, recorded (a heartbeat is only
  // tagged); an error event becomes the failure when there is none yet. Returns the tagged line.
  // A failed write (events.jsonl or the history) becomes the failure, naming the file and the
  // cause, and write_failed() turns true; nothing more is written to that file.
  protocol::EventLine record(int rank, const std::string& line);
  // A rank exited non-zero (before any stop): the failure (when none yet), then its log's tail.
  void rank_failed(int rank, int code, const std::string& log_path, const std::string& log_tail);
  // The user stopped the run (replaces the failure): "stopped by the user (Ctrl-C)",
  // "stopped by SIGTERM".
  void interrupted(const std::string& how);
  // The silence watch found a rank silent: `why` is the failure when there is none yet.
  void rank_silent(const std::string& why);
  const std::string& failure() const { return failure_; }
  bool write_failed() const { return write_failed_; }
  void tick();  // lets the history commit its batch
  // Closes the run's history row: finished, killed (interrupted) or failed, with the failure
  // and, after it, `note` (which checkpoint a resume would continue from).
  void finish(bool interrupted, const std::string& note = "");

 private:
  void append(const std::string& text);  // one line of events.jsonl
  template <class F>
  void to_history(F&& write);  // a failed history write becomes the failure; none after it
  void failed_write(const std::string& problem);
  std::optional<io::AppendFile> events_;
  store::HistoryDb* history_;
  int64_t run_id_;
  std::string failure_;
  bool write_failed_ = false;
};

}  // namespace halo::launch
