// A file written under a temporary name in the target's folder and renamed over the
// target on commit(), so readers and crashes never see a torn file (DESIGN.md §7).
#pragma once

#include <cstddef>
#include <string>

namespace halo::io {

class AtomicFile {
 public:
  // Creates the temporary file next to `path`; throws util::Error (naming `path`) when
  // the folder is missing or not writable.
  explicit AtomicFile(std::string path);
  // Without commit(), removes the temporary file; the target is never touched.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes; throws util::Error on a short or failed write (disk full, EFBIG...).
  void write(const void* data, size_t size);
  // From now on, refuse (as ENOSPC, "No space left on device") a write that would leave the
  // file system fewer than `bytes` free, checked at least every 256 KiB written: a large
  // file (a checkpoint) then fails before it takes the space the run's small appends (its
  // events, the history) need. 0: no reserve (the default).
  void keep_free(size_t bytes) { keep_free_ = bytes; }
  // fsync, close, rename over the target, fsync the folder. Throws util::Error on failure
  // (the temporary file is then removed and the target left as it was).
  void commit();

  const std::string& path() const { return path_; }
  size_t bytes_written() const { return written_; }

 private:
  void discard() noexcept;
  void check_free(size_t size);
  [[noreturn]] void fail(const std::string& what, int err);

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  size_t written_ = 0;
  size_t keep_free_ = 0;
  size_t checked_at_ = 0;  // written_ at the last free-space check
  bool checked_ = false;
  bool committed_ = false;
};

}  // namespace halo::io
