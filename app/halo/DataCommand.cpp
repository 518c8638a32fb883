// `halo data synth|check|bench`: writes synthetic OpenLane-V2 segments, validates a dataset
// (every frame JSON and image) with per-segment counts, measures the pipeline's throughput.
// `data check` exits 0 for a clean split, 1 when it found problems, 2 when it could not check.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "data/DatasetCheck.h"
#include "data/MultiViewLoader.h"
#include "data/SynthGenerator.h"
#include "util/Error.h"

namespace halo::app {

namespace {

// A progress line with ETA on stderr, only when it is a terminal (stdout stays parseable).
class Progress {
 public:
  explicit Progress(const char* what) : what_(what), start_(std::chrono::steady_clock::now()), tty_(::isatty(2)) {}
  void operator()(int64_t done, int64_t total) const {
    if (!tty_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = done > 0 ? s / done * (total - done) : 0.0;
    std::fprintf(stderr, "\r%s %lld/%lld frames, %.0f s elapsed, ETA %.0f s   ", what_, static_cast<long long>(done),
                 static_cast<long long>(total), s, eta);
    if (done == total) std::fprintf(stderr, "\n");
  }

 private:
  const char* what_;
  std::chrono::steady_clock::time_point start_;
  bool tty_;
};

struct SynthArgs {
  std::string out, subset = "A", split = "train";
  int segments = 2, frames = 4;
  uint64_t seed = 0;
  double image_scale = 1.0;
  bool json = false;
};

void synth(const SynthArgs& a) {
  if (a.subset != "A" && a.subset != "B")
    throw util::Error(fmt::format("--subset {} is not a subset", a.subset), "use A (7 cameras) or B (6 cameras)");
  data::SynthOptions o{a.out, a.subset[0], a.segments, a.frames, a.seed, a.split, a.image_scale};
  const Progress progress("synth");
  const auto s = data::generate_synthetic(o, [&](int64_t d, int64_t t) { progress(d, t); });
  if (a.json) {
    std::printf("%s\n", nlohmann::json{{"out", a.out},
                                       {"subset", a.subset},
                                       {"split", a.split},
                                       {"segments", s.segments},
                                       {"frames", s.frames},
                                       {"images", s.images},
                                       {"lanes", s.lanes},
                                       {"elements", s.elements},
                                       {"split_file", s.split_file.string()}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf(
        "wrote %lld segments, %lld frames (%lld images, %lld lanes, %lld traffic elements) to %s\nsplit file: %s\n",
        static_cast<long long>(s.segments), static_cast<long long>(s.frames), static_cast<long long>(s.images),
        static_cast<long long>(s.lanes), static_cast<long long>(s.elements), a.out.c_str(), s.split_file.c_str());
  }
}

struct CheckArgs {
  std::string root, split = "train", split_file;
  bool json = false;
};

void check(const CheckArgs& a) {
  const Progress progress("check");
  const auto r = data::check_dataset(a.root, a.split, a.split_file, [&](int64_t d, int64_t t) { progress(d, t); });
  int64_t frames = 0, lanes = 0, elements = 0, images = 0;
  for (const auto& s : r.segments) frames += s.frames, lanes += s.lanes, elements += s.elements, images += s.images;
  if (a.json) {
    nlohmann::json segs = nlohmann::json::array();
    for (const auto& s : r.segments)
      segs.push_back({{"segment_id", s.segment_id},
                      {"frames", s.frames},
                      {"annotated", s.annotated},
                      {"lanes", s.lanes},
                      {"elements", s.elements},
                      {"images", s.images},
                      {"problems", s.problems}});
    std::printf("%s\n", nlohmann::json{{"root", a.root},
                                       {"split", a.split},
                                       {"segments", segs},
                                       {"frames", frames},
                                       {"lanes", lanes},
                                       {"elements", elements},
                                       {"images", images},
                                       {"problems", r.problem_count()},
                                       {"ok", r.problem_count() == 0}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf("%-10s %7s %9s %7s %9s %7s %9s\n", "segment", "frames", "annotated", "lanes", "elements", "images",
                "problems");
    for (const auto& s : r.segments)
      std::printf("%-10s %7lld %9lld %7lld %9lld %7lld %9zu\n", s.segment_id.c_str(), static_cast<long long>(s.frames),
                  static_cast<long long>(s.annotated), static_cast<long long>(s.lanes),
                  static_cast<long long>(s.elements), static_cast<long long>(s.images), s.problems.size());
    for (const auto& s : r.segments)
      for (const auto& p : s.problems) std::printf("problem: %s\n", p.c_str());
    std::printf("%s: %zu segments, %lld frames, %lld images, %lld problems\n", a.split.c_str(), r.segments.size(),
                static_cast<long long>(frames), static_cast<long long>(images),
                static_cast<long long>(r.problem_count()));
  }
  // Exit 1: the check ran and found problems (2, through main, when it could not run).
  if (r.problem_count() > 0) {
    std::fprintf(stderr,
                 "halo: %lld problems in split '%s' of %s\n  hint: each is listed above with its file and field\n",
                 static_cast<long long>(r.problem_count()), a.split.c_str(), a.root.c_str());
    throw CLI::RuntimeError(1);
  }
}

struct BenchArgs {
  std::string root, split = "train", split_file;
  int64_t height = 256, width = 704, batch = 1, batches = 20;
  int workers = 2;
  bool json = false;
};

// Pipeline throughput: batches taken back to back (no model), so the rate is what the
// loader can feed; the wait per batch is what a consumer as fast as that would see.
void bench(const BenchArgs& a) {
  data::LoaderOptions o;
  o.root = a.root, o.split = a.split, o.split_file = a.split_file;
  o.height = a.height, o.width = a.width, o.batch = a.batch, o.workers = a.workers;
  data::MultiViewLoader loader(o);
  const auto t0 = std::chrono::steady_clock::now();
  int64_t batches = 0, frames = 0, epoch = 0;
  loader.start_epoch(epoch);
  while (batches < a.batches) {
    auto b = loader.next();
    if (!b) {
      if (loader.batches_per_epoch() == 0)
        throw util::Error("the split has fewer frames than one batch", "lower --batch");
      loader.start_epoch(++epoch);
      continue;
    }
    ++batches, frames += static_cast<int64_t>(b->keys.size());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.json) {
    std::printf("%s\n", nlohmann::json{{"batches", batches},
                                       {"frames", frames},
                                       {"seconds", s},
                                       {"frames_per_s", frames / s},
                                       {"ms_per_batch", 1000 * s / batches},
                                       {"workers", a.workers},
                                       {"height", a.height},
                                       {"width", a.width},
                                       {"skipped", loader.skipped()}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf("%lld batches (%lld frames) of %lldx%lld in %.2f s: %.1f frames/s, %.1f ms per batch, %d workers\n",
                static_cast<long long>(batches), static_cast<long long>(frames), static_cast<long long>(a.height),
                static_cast<long long>(a.width), s, frames / s, 1000 * s / batches, a.workers);
  }
}

}  // namespace

void add_data_commands(CLI::App& app) {
  auto* d = app.add_subcommand("data", "OpenLane-V2 data: generate synthetic segments, check a dataset");
  d->require_subcommand(1);

  auto s = std::make_shared<SynthArgs>();
  auto* sy = d->add_subcommand("synth", "Write synthetic OpenLane-V2 segments (JSON + rendered JPEGs + split file)");
  sy->add_option("--out", s->out, "output dataset root")->required();
  sy->add_option("--subset", s->subset, "A (7 Argoverse 2 cameras) or B (6 nuScenes cameras)")->capture_default_str();
  sy->add_option("--segments", s->segments, "number of segments")->capture_default_str();
  sy->add_option("--frames", s->frames, "frames per segment (2 Hz)")->capture_default_str();
  sy->add_option("--seed", s->seed, "random seed: the data is a deterministic function of it")->capture_default_str();
  sy->add_option("--split", s->split, "split folder: train, val or test (test has no annotation)")
      ->capture_default_str();
  sy->add_option("--image-scale", s->image_scale, "scale of image sizes and intrinsics (e.g. 0.125 for tests)")
      ->capture_default_str();
  sy->add_flag("--json", s->json, "print the summary as JSON");
  sy->callback([s]() { synth(*s); });

  auto c = std::make_shared<CheckArgs>();
  auto* ch = d->add_subcommand("check", "Validate every frame JSON and image of a split; per-segment counts");
  ch->add_option("root", c->root, "dataset root (holds <split>/<segment>/info and image)")->required();
  ch->add_option("--split", c->split, "split to check")->capture_default_str();
  ch->add_option("--split-file", c->split_file, "list frames from a data_dict_subset_X.json instead of scanning");
  ch->add_flag("--json", c->json, "print the report as JSON");
  ch->callback([c]() { check(*c); });

  auto b = std::make_shared<BenchArgs>();
  auto* be = d->add_subcommand("bench", "Throughput of the multi-view pipeline (decode, resize, normalise, pad)");
  be->add_option("root", b->root, "dataset root")->required();
  be->add_option("--split", b->split, "split to read")->capture_default_str();
  be->add_option("--split-file", b->split_file, "list frames from a data_dict_subset_X.json instead of scanning");
  be->add_option("--height", b->height, "network input height")->capture_default_str();
  be->add_option("--width", b->width, "network input width")->capture_default_str();
  be->add_option("--batch", b->batch, "frames per batch")->capture_default_str();
  be->add_option("--batches", b->batches, "batches to take")->capture_default_str();
  be->add_option("--workers", b->workers, "decoding threads")->capture_default_str();
  be->add_flag("--json", b->json, "print the result as JSON");
  be->callback([b]() { bench(*b); });
}

}  // namespace halo::app
