// The layout event's keys and their JSON: column ranges as [begin, end], shapes as arrays;
// every field optional on reading.
#include "protocol/LayoutEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"
#include "util/Error.h"

namespace halo::protocol {

namespace {
constexpr char kInput[] = "input", kSp[] = "sp", kDp[] = "dp", kLayers[] = "layers";
constexpr char kName[] = "name", kKernel[] = "kernel", kStride[] = "stride", kPadding[] = "padding",
               kDilation[] = "dilation", kRanks[] = "ranks";
constexpr char kIn[] = "in_columns", kOut[] = "out_columns", kShape[] = "shape", kHaloLeft[] = "halo_left",
               kHaloRight[] = "halo_right", kBytes[] = "activation_bytes", kReceived[] = "received_bytes",
               kPart[] = "part";

LayoutPart part_named(const std::string& text) {
  for (const LayoutPart p : {LayoutPart::Sharded, LayoutPart::Gather, LayoutPart::Replicated})
    if (text == name_of(p)) return p;
  throw util::Error("layout event: part '" + text + "' is none of sharded, gather, replicated",
                    "the worker and the reader come from different Halo versions");
}

nlohmann::json rank_json(const LayoutRank& r) {
  return {{keys::rank, r.rank},         {kIn, r.in_columns},
          {kOut, r.out_columns},        {kShape, r.shape},
          {kHaloLeft, r.halo_left},     {kHaloRight, r.halo_right},
          {kBytes, r.activation_bytes}, {kReceived, r.received_bytes}};
}

nlohmann::json layer_json(const LayoutLayer& l) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const LayoutRank& r : l.ranks) ranks.push_back(rank_json(r));
  return {{kName, l.name},         {kKernel, l.kernel},        {kStride, l.stride},     {kPadding, l.padding},
          {kDilation, l.dilation}, {kRanks, std::move(ranks)}, {kPart, name_of(l.part)}};
}

LayoutRank read_rank(const FieldReader& r) {
  LayoutRank out;
  out.rank = static_cast<int>(r.integer(keys::rank));
  out.in_columns = r.integer_pair(kIn);
  out.out_columns = r.integer_pair(kOut);
  out.shape = r.integer_quad(kShape);
  out.halo_left = r.integer(kHaloLeft);
  out.halo_right = r.integer(kHaloRight);
  out.activation_bytes = r.integer(kBytes);
  out.received_bytes = r.integer(kReceived);
  return out;
}

LayoutLayer read_layer(const FieldReader& r) {
  LayoutLayer out;
  out.name = r.text(kName);
  out.kernel = r.integer(kKernel, 1);
  out.stride = r.integer(kStride, 1);
  out.padding = r.integer(kPadding, 0);
  out.dilation = r.integer(kDilation, 1);
  for (const FieldReader& rank : r.objects(kRanks)) out.ranks.push_back(read_rank(rank));
  out.part = part_named(r.text(kPart, name_of(LayoutPart::Sharded)));
  return out;
}
}  // namespace

const char* name_of(LayoutPart part) {
  switch (part) {
    case LayoutPart::Sharded:
      return "sharded";
    case LayoutPart::Gather:
      return "gather";
    case LayoutPart::Replicated:
      return "replicated";
  }
  return "sharded";
}

std::string preview_file(int view, int rank) {
  return "preview/view-" + std::to_string(view) + "-rank-" + std::to_string(rank) + ".png";
}

void to_json(nlohmann::json& j, const LayoutEvent& e) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayoutLayer& l : e.layers) layers.push_back(layer_json(l));
  j = {{keys::event, LayoutEvent::name}, {kInput, e.input}, {kSp, e.sp}, {kDp, e.dp}, {kLayers, std::move(layers)}};
}

void from_json(const nlohmann::json& j, LayoutEvent& e) {
  const FieldReader r = FieldReader::event(j, LayoutEvent::name);
  e.input = r.integer_quad(kInput);
  e.sp = static_cast<int>(r.integer(kSp, 1));
  e.dp = static_cast<int>(r.integer(kDp, 1));
  e.layers.clear();
  for (const FieldReader& l : r.objects(kLayers)) e.layers.push_back(read_layer(l));
}

}  // namespace halo::protocol
