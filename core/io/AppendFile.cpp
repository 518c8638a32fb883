// O_APPEND writes of one buffer per line; the file's length is tracked so a partial line can be
// removed with ftruncate (which frees space rather than needing it, so it works on a full disk).
#include "io/AppendFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::io {

AppendFile::AppendFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0)
    throw util::Error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)),
                      "check that the run folder is writable and has free space");
  size_ = st.st_size;
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append_line(const std::string& text) {
  const std::string line = text + "\n";
  size_t done = 0;
  int err = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (done == line.size()) {
    size_ += static_cast<int64_t>(done);
    return;
  }
  // Best effort: ftruncate frees space, so it works on a full disk; the error below is what matters.
  if (done > 0) (void)!::ftruncate(fd_, size_);
  throw util::Error(fmt::format("cannot write {}: {}", path_, std::strerror(err)),
                    "free space on that disk (or move the run folder), then resume the run");
}

}  // namespace halo::io
