// halo: the command-line entry point. Parses the verb, runs it, and turns every error into
// a message (problem + hint) and a non-zero exit code.
#include <cstdio>
#include <exception>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "Commands.h"
#include "util/Error.h"
#include "util/Version.h"

int main(int argc, char** argv) {
  CLI::App app{"Halo: width-sharded (tensor-parallel) training for perception CNNs", "halo"};
  app.set_version_flag("--version", fmt::format("halo {} ({})", halo::util::version(), halo::util::git_revision()));
  app.require_subcommand(1);
  halo::app::add_launch_commands(app);
  halo::app::add_verify_commands(app);
  halo::app::add_export_commands(app);
  halo::app::add_bench_commands(app);
  halo::app::add_runs_commands(app);
  halo::app::add_eval_commands(app);
  halo::app::add_data_commands(app);
  halo::app::add_plan_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const halo::util::Error& e) {
    std::fprintf(stderr, "halo: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "halo: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
