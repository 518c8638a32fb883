// `halo verify` (sharded vs unsharded, table or --json) and the hidden `verify-rank` that
// each spawned rank runs.
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "Commands.h"
#include "arch/Backbones.h"
#include "launch/Verify.h"
#include "util/Error.h"

namespace halo::app {

namespace {

std::array<int64_t, 4> parse_input(const std::string& s) {
  std::array<int64_t, 4> v{};
  std::stringstream in(s);
  std::string part;
  int i = 0;
  while (std::getline(in, part, ',')) {
    if (i >= 4) break;
    try {
      size_t used = 0;
      v[static_cast<size_t>(i)] = std::stoll(part, &used);
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw util::Error("--input '" + s + "': '" + part + "' is not an integer",
                        "write it as V,C,H,W, e.g. 2,3,64,128");
    }
    ++i;
  }
  if (i != 4 || std::getline(in, part))
    throw util::Error("--input '" + s + "' needs four numbers", "write it as V,C,H,W, e.g. 2,3,64,128");
  return v;
}

struct VerifyArgs {
  launch::VerifyOptions o;
  std::string input = "2,3,64,128";
  bool json = false;
  std::string out;
};

void add_options(CLI::App* c, VerifyArgs& a) {
  c->add_option("--arch", a.o.arch, "backbone variant: " + arch::backbone_names())->capture_default_str();
  c->add_option("--input", a.input, "V,C,H,W of one sample (V views)")->capture_default_str();
  c->add_option("--sp", a.o.sp, "ranks sharing one sample along W")->capture_default_str();
  c->add_option("--dp", a.o.dp, "data-parallel groups")->capture_default_str();
  c->add_flag("--checkpoint,!--no-checkpoint", a.o.checkpoint, "activation checkpointing per block in the sharded run");
  c->add_flag("--recompute-cheap,!--no-recompute-cheap", a.o.recompute_cheap,
              "the sharded run's ConvNeXt blocks keep conv_dw's and fc1's outputs and recompute LayerNorm and GELU "
              "in backward (parallel.recompute cheap); the unsharded reference runs the plain ops")
      ->capture_default_str();
  c->add_flag("--overlap,!--no-overlap", a.o.overlap, "overlap halo exchange with interior convolution")
      ->capture_default_str();
  c->add_option("--dtype", a.o.dtype, "float64 or float32")->capture_default_str();
  c->add_option("--seed", a.o.seed, "seed of weights and data")->capture_default_str();
  c->add_option("--classes", a.o.num_classes, "classes of the head")->capture_default_str();
  c->add_option("--tolerance", a.o.tolerance, "max relative error (default 1e-10 float64, 1e-5 float32)");
  c->add_option("--timeout", a.o.timeout_s, "seconds before the ranks are stopped")->capture_default_str();
}

}  // namespace

void add_verify_commands(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  auto* v = app.add_subcommand("verify", "Run one step sharded over real ranks and unsharded; compare every gradient");
  add_options(v, *args);
  v->add_flag("--json", args->json, "print the report as JSON");
  v->callback([args]() {
    args->o.input = parse_input(args->input);
    launch::VerifyReport rep = launch::run_verify(args->o);
    const double tol = rep.options.effective_tolerance();
    if (args->json) {
      nlohmann::json j;
      j["arch"] = rep.options.arch;
      j["input"] = rep.options.input;
      j["sp"] = rep.options.sp;
      j["dp"] = rep.options.dp;
      j["checkpoint"] = rep.options.checkpoint;
      j["recompute_cheap"] = rep.options.recompute_cheap;
      j["dtype"] = rep.options.dtype;
      j["tolerance"] = tol;
      j["max_rel_error"] = rep.worst;
      j["ok"] = rep.ok;
      for (const auto& r : rep.rows) j["errors"][r.quantity] = r.rel_error;
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%-60s %12s\n", "quantity", "max rel err");
      for (const auto& r : rep.rows)
        std::printf("%-60s %12.3e%s\n", r.quantity.c_str(), r.rel_error,
                    r.rel_error > tol ? "  <-- above tolerance" : "");
      std::printf("\n%s %s input %ld,%ld,%ld,%ld sp=%d dp=%d%s%s: worst %.3e, tolerance %.0e: %s\n",
                  rep.options.arch.c_str(), rep.options.dtype.c_str(), rep.options.input[0], rep.options.input[1],
                  rep.options.input[2], rep.options.input[3], rep.options.sp, rep.options.dp,
                  rep.options.checkpoint ? " checkpoint" : "", rep.options.recompute_cheap ? " recompute-cheap" : "",
                  rep.worst, tol, rep.ok ? "PASS" : "FAIL");
    }
    if (!rep.ok) throw CLI::RuntimeError(1);
  });

  auto rank_args = std::make_shared<VerifyArgs>();
  auto* r = app.add_subcommand("verify-rank", "One rank of `halo verify` (started by it)");
  r->group("");  // hidden from --help
  add_options(r, *rank_args);
  r->add_option("--out", rank_args->out, "folder for the rank's results")->required();
  r->callback([rank_args]() {
    rank_args->o.input = parse_input(rank_args->input);
    launch::run_verify_rank(rank_args->o, rank_args->out);
  });
}

}  // namespace halo::app
