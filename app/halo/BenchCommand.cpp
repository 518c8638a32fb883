// `halo bench ...`: benchmarks that print tables (or --json). Measurements, not tests.
#include "Commands.h"

namespace halo::app {

void add_bench_commands(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks: comm");
  bench->require_subcommand(1);
}

}  // namespace halo::app
