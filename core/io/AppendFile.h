// A log file that only grows by whole lines (events.jsonl): every write is checked, and a line
// that could not be written entirely (disk full) is cut back off, so readers never see half of it.
#pragma once

#include <cstdint>
#include <string>

namespace halo::io {

class AppendFile {
 public:
  // Opens (creating) `path` for appending; util::Error naming it when that fails.
  explicit AppendFile(std::string path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Appends text + '\n'. On a failed or short write the file is truncated back to its length
  // before the call and util::Error says "cannot write <path>: <cause>" (e.g. No space left on device).
  void append_line(const std::string& text);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

}  // namespace halo::io
