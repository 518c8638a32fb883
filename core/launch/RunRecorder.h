// What the launcher keeps of a run: every line of every rank, tagged with its rank and arrival
// time, appended to <run>/events.jsonl and recorded in the history (node 0), and why it stopped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
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
  // tagged); an error event becomes the failure when there is none yet, except one that says a
  // peer was lost (ErrorEvent::peer_lost): that one stands only when no rank fails of its own
  // (the rank that died first is the cause, its peers' errors follow). Returns the tagged line.
  // A failed write (events.jsonl or the history) becomes the failure, naming the file and the
  // cause, and write_failed() turns true; nothing more is written to that file.
  protocol::EventLine record(int rank, const std::string& line);
  // A rank exited non-zero (before any stop): the failure (when none yet and the rank did not
  // report a lost peer: "exited with code C", or "was killed by signal S (name)" when signaled),
  // then its log's tail.
  void rank_failed(int rank, int code, bool signaled, const std::string& log_path, const std::string& log_tail);
  // Whether the failure has a cause of its own (not only a lost peer); the launcher waits a
  // moment for one before it stops the other ranks.
  bool cause_known() const { return !cause_.empty(); }
  // The user stopped the run (replaces the failure): "stopped by the user (Ctrl-C)",
  // "stopped by SIGTERM".
  void interrupted(const std::string& how);
  // The silence watch found a rank silent: `why` is the failure when there is none yet.
  void rank_silent(const std::string& why);
  // Why the run stopped: the cause (or the first lost-peer error when there is none), the
  // lost-peer errors after it, then the failed ranks' logs; empty while nothing failed.
  std::string failure() const;
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
  std::string cause_;          // the first failure of a rank's own, a failed write, or the user's stop
  std::string peer_lost_;      // the first error that reports a lost peer
  std::string logs_;           // the failed ranks' log tails, in the order they exited
  std::set<int> lost_a_peer_;  // ranks whose error reported a lost peer
  bool write_failed_ = false;
  bool interrupted_ = false;
};

}  // namespace halo::launch
