// The prediction file `halo eval` reads: the devkit's prediction dict as JSON, each
// (split, segment_id, timestamp) key written "split/segment_id/timestamp":
//   {"method": ..., "results": {"val/<segment>/<ts>": {"predictions": {
//      "lane_centerline": [{"id", "points": [[x, y, z], ...], "confidence"}],
//      "traffic_element": [{"id", "attribute", "points": [[x1, y1], [x2, y2]], "confidence"}],
//      "topology_lclc": [[...] x #lanes], "topology_lcte": [[...] x #lanes]}}}}
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/Predictions.h"

namespace halo::eval {

// Parses the document; `source` (usually the file path) starts every error message, which
// names the key/field that is missing or of the wrong type or shape.
Predictions parse_predictions(const nlohmann::json& doc, const std::string& source);
Predictions read_predictions(const std::filesystem::path& path);

// The same document (with "method" set to `method`), e.g. for writing a model's predictions.
nlohmann::json predictions_to_json(const Predictions& pred, const std::string& method = "halo");

}  // namespace halo::eval
