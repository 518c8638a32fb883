// Helpers for the io tests: a temporary folder, whole-file bytes, and running the .venv
// Python on a small script (HALO_PYTHON) to check files against the reference libraries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::io::testing {

// A fresh folder under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the folder (to check that no temporary files are left).
  std::vector<std::string> entries() const;

 private:
  std::string path_;
};

std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

struct PythonResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Writes `script` to `dir`/name and runs it with HALO_PYTHON and `args` (quoted).
PythonResult run_python(const TempDir& dir, const std::string& name, const std::string& script,
                        const std::vector<std::string>& args);

}  // namespace halo::io::testing
