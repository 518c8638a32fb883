// Synthetic OpenLane-V2 frames made in memory, for training without files: SynthSegment's
// frames drawn by render_view, then the file pipeline's own per-frame transform and collation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/FrameBatch.h"
#include "data/FrameSample.h"
#include "data/LoaderOptions.h"

namespace halo::data {

// The generator's cameras for a number of views: subset 'A' (7 Argoverse 2 cameras, the
// portrait front view first) or 'B' (6 nuScenes cameras), and the view order taken from it.
struct SynthViews {
  char subset = 'A';
  std::vector<std::string> cameras;
};

class SynthStream {
 public:
  // Frames per generated segment: samples 8k .. 8k+7 are consecutive frames of segment k.
  static constexpr int64_t kFramesPerSegment = 8;

  // 7 views: subset A; 6: subset B; 1..5: the first cameras of subset A (front view first,
  // where the traffic elements lie); nullopt for any other count.
  static std::optional<SynthViews> views_for(int64_t views);

  // `options`: network input size, padding, stripe and seed as for MultiViewLoader (root,
  // split, shuffling and sharding are unused; views is replaced by `views`' cameras).
  // `image_scale`: the generator's camera scale (as `halo data synth --image-scale`), which
  // sets the labels (elements smaller than a pixel at that scale are left out).
  SynthStream(LoaderOptions options, const SynthViews& views, double image_scale = 1.0);

  // Sample `index` of the endless "train" stream: frame index % 8 of segment index / 8 of
  // the subset, a pure function of (seed, index), so every sp rank sees the same frames.
  // Each view is rendered straight at the network input size (cameras and element boxes
  // mapped as the pipeline maps a file's image), so the transform's resize is the identity.
  FrameSample sample(int64_t index) const;
  // Samples [first, first + count) collated as the loader collates its batches.
  FrameBatch batch(int64_t first, int64_t count) const;

  char subset() const { return subset_; }
  const LoaderOptions& options() const { return options_; }

 private:
  LoaderOptions options_;
  char subset_;
  double scale_;
};

}  // namespace halo::data
