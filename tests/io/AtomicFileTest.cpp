// io::AtomicFile's free-space reserve: a write that would leave the file system fewer free
// bytes than asked is refused as a full disk, before a byte lands, and the target is untouched.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/AtomicFile.h"
#include "util/Error.h"

namespace halo::io {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(AtomicFile, AReserveLargerThanTheFreeSpaceRefusesTheWriteAndKeepsTheTarget) {
  const fs::path dir = fs::temp_directory_path() / ("halo-atomic-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string target = (dir / "ckpt.pt").string();
  std::ofstream(target) << "the previous checkpoint";
  const std::string chunk(4096, 'x');
  std::string message;
  {
    AtomicFile f(target);
    f.keep_free(size_t{1} << 62);  // more than any disk has
    try {
      f.write(chunk.data(), chunk.size());
    } catch (const util::Error& e) {
      message = e.problem();
    }
  }
  EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
  EXPECT_NE(message.find("must stay free"), std::string::npos) << message;
  EXPECT_EQ(read_all(target), "the previous checkpoint");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "the temporary file is removed";

  AtomicFile ok(target);  // a reserve the disk has: written and committed as usual
  ok.keep_free(4096);
  for (int i = 0; i < 100; ++i) ok.write(chunk.data(), chunk.size());  // crosses the 256 KiB re-check
  ok.commit();
  EXPECT_EQ(fs::file_size(target), 100 * chunk.size());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace halo::io
