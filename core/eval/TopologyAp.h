// TOP_ll and TOP_lt as the devkit computes them (_mAP_topology_lclc/_lcte): the predicted
// relation matrix is re-indexed onto ground truth through the detection matches, unmatched
// pairs are filled so that missing a true relation loses recall and an absent one costs a
// false positive, and every vertex (row and column) gets its own AP.
#pragma once

#include <cstdint>
#include <vector>

namespace halo::eval {

// For one frame: gt (rows x cols, 0/1), the predicted matrix, and for each gt row/column
// the matched prediction's index (-1 when unmatched). Appends one AP per row, then per column.
void append_vertex_aps(const std::vector<std::vector<int>>& gt, int64_t rows, int64_t cols,
                       const std::vector<std::vector<double>>& pred, const std::vector<int64_t>& row_match,
                       const std::vector<int64_t>& col_match, std::vector<float>& aps);

// Mean of the vertex APs in float32 as numpy takes it; 0 when there is none.
float mean_vertex_ap(const std::vector<float>& aps);

// gt index -> prediction index from per-prediction matches (-1 for unmatched gts).
std::vector<int64_t> invert_matches(const std::vector<int64_t>& pred_to_gt, int64_t num_gts);

}  // namespace halo::eval
