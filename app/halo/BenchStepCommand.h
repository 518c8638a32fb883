// `halo bench step`: added to `halo bench` by add_bench_commands.
#pragma once

#include <CLI/CLI.hpp>

namespace halo::app {

void add_bench_step_command(CLI::App* bench);

}  // namespace halo::app
