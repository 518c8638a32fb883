// io::AppendFile: whole lines appended; a write that fails part-way (the file size limit, as on
// a full disk) is cut back and reported with the path and the cause.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <filesystem>
#include <fstream>

#include "io/AppendFile.h"
#include "util/Error.h"

namespace halo::io {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const char* tag) {
  return (fs::temp_directory_path() / (std::string("halo-append-") + tag + "-" + std::to_string(::getpid()))).string();
}

TEST(AppendFile, AppendsWholeLinesAfterWhatIsThere) {
  const std::string path = temp_path("lines");
  std::ofstream(path) << "first\n";
  {
    AppendFile f(path);
    f.append_line("second");
    f.append_line("third");
  }
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "first\nsecond\nthird\n");
  fs::remove(path);
  EXPECT_THROW(AppendFile("/nonexistent-halo-dir/events.jsonl"), util::Error);
}

TEST(AppendFile, AFailedWriteLeavesNoHalfLineAndNamesTheFile) {
  const std::string path = temp_path("full"), report = path + ".report";
  const pid_t child = ::fork();
  if (child == 0) {  // a file size limit of 1000 bytes: writes past it fail with EFBIG
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit r{1000, 1000};
    ::setrlimit(RLIMIT_FSIZE, &r);
    std::string what = "no error";
    try {
      AppendFile f(path);
      for (int i = 0; i < 100; ++i) f.append_line(std::string(90, 'a' + i % 26));
    } catch (const util::Error& e) {
      what = e.problem();
    }
    std::ofstream(report) << what;  // small: under the limit
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  std::ifstream rep(report);
  const std::string what((std::istreambuf_iterator<char>(rep)), std::istreambuf_iterator<char>());
  EXPECT_EQ(what, "cannot write " + path + ": File too large");
  EXPECT_EQ(fs::file_size(path), 910u) << "ten whole lines of 91 bytes, the eleventh cut back";
  fs::remove(path);
  fs::remove(report);
}

}  // namespace
}  // namespace halo::io
