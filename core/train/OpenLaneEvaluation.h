// What evaluating the OpenLane-V2 task on data.eval_split gives: the devkit's scores and the
// decoded predictions of every frame (filled on the scoring rank, empty elsewhere).
#pragma once

#include "eval/Evaluate.h"
#include "eval/Predictions.h"

namespace halo::train {

struct OpenLaneEvaluation {
  eval::Scores scores;
  eval::Predictions predictions;  // one entry per frame of the split, keyed "split/segment/timestamp"
};

}  // namespace halo::train
