// The verbs of the `halo` CLI: each adds its subcommand to the app and runs it.
// Every command that prints a table also takes --json.
#pragma once

#include <CLI/CLI.hpp>

namespace halo::app {

void add_verify_commands(CLI::App& app);
void add_bench_commands(CLI::App& app);
void add_launch_commands(CLI::App& app);
void add_export_commands(CLI::App& app);
void add_runs_commands(CLI::App& app);
void add_eval_commands(CLI::App& app);
void add_data_commands(CLI::App& app);
void add_plan_commands(CLI::App& app);

}  // namespace halo::app
