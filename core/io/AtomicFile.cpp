// Temporary file + fsync + rename: the only way Halo writes files it may later read.
// A failure at any step removes the temporary file and leaves the target untouched.
#include "io/AtomicFile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "util/Error.h"

namespace halo::io {

namespace {

std::string folder_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? std::string(".") : dir;
}

std::string temp_name_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::filesystem::path p(path);
  std::string name = fmt::format(".{}.tmp-{}-{}-{:08x}", p.filename().string(), ::getpid(), counter.fetch_add(1),
                                 static_cast<uint32_t>(rng()));
  return (p.parent_path() / name).string();
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_.empty() || std::filesystem::path(path_).filename().empty()) {
    throw util::Error(fmt::format("cannot write '{}': not a file path", path_), "give a path that ends in a file name");
  }
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_path_ = temp_name_for(path_);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) {
      int err = errno;
      temp_path_.clear();
      fail(fmt::format("creating a temporary file in '{}'", folder_of(path_)), err);
    }
  }
  if (fd_ < 0) {
    temp_path_.clear();
    fail("creating a temporary file (100 names taken)", EEXIST);
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

void AtomicFile::fail(const std::string& what, int err) {
  discard();
  throw util::Error(fmt::format("cannot write '{}': {} failed: {}", path_, what, std::strerror(err)),
                    "check that the folder exists, is writable and has free space; any existing file at "
                    "that path was left unchanged");
}

void AtomicFile::check_free(size_t size) {
  constexpr size_t kEvery = size_t{256} << 10;
  if (keep_free_ == 0 || (checked_ && written_ + size < checked_at_ + kEvery)) return;
  checked_ = true;
  checked_at_ = written_;
  struct statvfs fs {};
  if (::statvfs(folder_of(path_).c_str(), &fs) != 0) return;  // unknown: the write itself will tell
  const auto avail = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
  if (avail < size + keep_free_)
    fail(fmt::format("writing {} bytes at offset {} with {} bytes free (at least {} must stay free for the run's "
                     "other files)",
                     size, written_, avail, keep_free_),
         ENOSPC);
}

void AtomicFile::write(const void* data, size_t size) {
  if (fd_ < 0) {
    throw util::Error(fmt::format("cannot write '{}': the file is already closed", path_));
  }
  check_free(size);
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(fmt::format("writing {} bytes at offset {}", size, written_), errno);
    }
    if (n == 0) fail(fmt::format("writing at offset {}", written_), EIO);
    p += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) {
    throw util::Error(fmt::format("cannot write '{}': the file is already closed", path_));
  }
  if (::fsync(fd_) != 0) fail("fsync of the temporary file", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("closing the temporary file", errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) fail("renaming the temporary file", errno);
  committed_ = true;
  temp_path_.clear();
  // Make the rename itself durable; the new file is already complete, so a folder that
  // cannot be fsynced (some network file systems) is not an error.
  int dir = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace halo::io
