// A program with one planted defect per mode (heap overflow, signed overflow, leak), built by
// the asan build (tests/CMakeLists.txt): run-asan-tests.sh checks each is reported before trusting a pass.
#include <climits>
#include <cstdio>
#include <cstring>

int* g_kept = nullptr;

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int sink = 0;
  if (std::strcmp(mode, "heap") == 0) {
    int* p = new int[4];
    p[argc + 2] = 1;  // one past the end: argc is 2
    sink = p[0];
    delete[] p;
  } else if (std::strcmp(mode, "ub") == 0) {
    int x = INT_MAX - 1;
    x += argc;  // signed overflow
    sink = x;
  } else if (std::strcmp(mode, "leak") == 0) {
    g_kept = new int[64];
    g_kept = nullptr;  // the only pointer is gone
  }
  std::printf("[  PASSED  ] 1 test. (%d)\n", sink);
  return 0;
}
