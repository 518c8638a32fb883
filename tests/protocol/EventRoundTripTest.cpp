// Every event of the protocol survives to_json -> text -> parse unchanged, and comes back as
// its own alternative of Event; tagging a line sets the launcher's rank and time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "protocol/EventLine.h"
#include "protocol/LayoutEvent.h"
#include "util/Error.h"

namespace halo::protocol {
namespace {

// Through the text a worker prints and a reader parses.
template <class T>
T round_trip(const T& e) {
  const EventLine back = parse_line(to_line(Event{e}));
  const T* typed = std::get_if<T>(&back.event);
  EXPECT_NE(typed, nullptr) << to_line(Event{e}) << " came back as " << name_of(back.event);
  return typed ? *typed : T{};
}

TEST(ProtocolRoundTrip, Hello) {
  const HelloEvent e{3, 4, 12345, "cuda:1", "node-7", 1, 1};
  EXPECT_EQ(round_trip(e), e);
}

TEST(ProtocolRoundTrip, Layout) {
  LayoutEvent e;
  e.input = {14, 3, 64, 256};
  e.sp = 2;
  e.dp = 3;
  LayoutLayer stem{"stem.0", 4, 4, 0, 1, {}};
  stem.ranks.push_back({0, {0, 128}, {0, 32}, {14, 40, 16, 32}, 0, 0, 1146880});
  stem.ranks.push_back({1, {128, 256}, {32, 64}, {14, 40, 16, 32}, 0, 0, 1146880});
  LayoutLayer dw{"stages.0.blocks.0.conv_dw", 7, 1, 3, 2, {}};
  dw.ranks.push_back({0, {0, 32}, {0, 32}, {14, 40, 16, 32}, 0, 6, 1146880});
  dw.ranks.push_back({1, {32, 64}, {32, 64}, {14, 40, 16, 32}, 6, 0, 1146880});
  dw.ranks[0].received_bytes = 14 * 8 * 16 * 6 * 4;
  LayoutLayer gather{"img_neck -> img_view_transformer", 1, 1, 0, 1, {}, LayoutPart::Gather};
  gather.ranks.push_back({0, {0, 64}, {0, 64}, {14, 40, 16, 64}, 0, 0, 2293760, 1146880});
  LayoutLayer head{"lc_head", 1, 1, 0, 1, {}, LayoutPart::Replicated};
  head.ranks.push_back({0, {0, 64}, {0, 64}, {2, 50, 64, 1}, 0, 0, 25600, 0});
  e.layers = {stem, dw, gather, head};
  EXPECT_EQ(round_trip(e), e);
  // A layer without "part" (an older worker) is sharded; an unknown part is an error.
  nlohmann::json j = e;
  j["layers"][0].erase("part");
  EXPECT_EQ(j.get<LayoutEvent>().layers[0].part, LayoutPart::Sharded);
  j["layers"][0]["part"] = "sideways";
  EXPECT_THROW(j.get<LayoutEvent>(), util::Error);
}

TEST(ProtocolRoundTrip, Step) {
  StepEvent e;
  e.rank = 1;
  e.step = 41;
  e.losses = {{"loss", 0.75}, {"loss_lc_cls", 0.125}, {"loss_te_bbox", 2.5}};
  e.lr = 3e-4;
  e.grad_norm = 1.5;
  e.loss_scale = 65536;
  e.skipped = true;
  e.time_ms = {10.5, 20.25, 3.125, 1.0, 34.875};
  e.memory = {1 << 20, 5 << 20, 8 << 20, 9 << 20, 1 << 19};
  e.samples_per_s = 12.5;
  EXPECT_EQ(round_trip(e), e);
  EXPECT_DOUBLE_EQ(e.loss(), 0.75);
  EXPECT_DOUBLE_EQ(StepEvent{}.loss(), 0.0);
}

TEST(ProtocolRoundTrip, Eval) {
  const EvalEvent e{0, 99, 100, "val", 0.25, 0.5, 0.0625, 0.125, 0.3125, 12, "/runs/a/predictions/step-000100.json"};
  EXPECT_EQ(round_trip(e), e);
}

TEST(ProtocolRoundTrip, Checkpoint) {
  const CheckpointEvent e{0, 60, "/runs/a/checkpoints/step-000060.pt", 441471};
  EXPECT_EQ(round_trip(e), e);
}

TEST(ProtocolRoundTrip, Error) {
  const ErrorEvent e{-1, "halo worker needs RANK", "start it with `halo launch`"};
  EXPECT_EQ(round_trip(e), e);
  EXPECT_EQ(e.describe(2), "rank 2: halo worker needs RANK\n  hint: start it with `halo launch`");
  EXPECT_EQ((ErrorEvent{0, "boom", ""}.describe(0)), "rank 0: boom");
  const ErrorEvent lost{1, "halo exchange on group 'sp0' (rank 1 of 2) failed: reset", "a peer died", true};
  EXPECT_EQ(round_trip(lost), lost);
  nlohmann::json j = ErrorEvent{0, "boom", ""};
  EXPECT_FALSE(j.contains("peer_lost"));  // written only when true: older lines read the same
}

TEST(ProtocolRoundTrip, Done) {
  const DoneEvent e{5, 1000};
  EXPECT_EQ(round_trip(e), e);
}

TEST(ProtocolRoundTrip, Heartbeat) {
  const HeartbeatEvent e{3};
  EXPECT_EQ(round_trip(e), e);
  EXPECT_EQ(to_line(Event{e}), R"({"event":"heartbeat","rank":3})");
}

TEST(ProtocolRoundTrip, Exchange) {
  const ExchangeEvent e{1, 3, {{"stages.0.blocks.0.conv_dw", 0.25}, {"img_neck.fpn_convs.0", 1.5}}};
  EXPECT_EQ(round_trip(e), e);
  EXPECT_EQ(
      to_line(Event{e}),
      R"({"event":"exchange","layers":{"img_neck.fpn_convs.0":1.5,"stages.0.blocks.0.conv_dw":0.25},"rank":1,"steps":3})");
}

TEST(ProtocolRoundTrip, MemoryTimeline) {
  MemoryTimelineEvent e{2, 1, 5000, "cpu", {}};
  e.points.push_back({"forward of stem", 7000, 6500});
  e.points.push_back({"backward of stem", 9000, 5200});
  EXPECT_EQ(round_trip(e), e);
  EXPECT_EQ(
      to_line(Event{e}),
      R"({"device":"cpu","event":"memory_timeline","points":[{"after":6500,"high":7000,"where":"forward of stem"},)"
      R"({"after":5200,"high":9000,"where":"backward of stem"}],"rank":2,"start":5000,"step":1})");
}

TEST(ProtocolRoundTrip, MemoryTimelineWithoutPointsOrDeviceReadsAsCpuAndEmpty) {
  const EventLine back = parse_line(std::string(R"({"event":"memory_timeline","rank":1,"step":3,"start":10})"));
  const auto* e = std::get_if<MemoryTimelineEvent>(&back.event);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(*e, (MemoryTimelineEvent{1, 3, 10, "cpu", {}}));
  const EventLine bad =
      parse_line(std::string(R"({"event":"memory_timeline","points":[{"where":"x","high":"lots"}]})"));
  const auto* m = std::get_if<MalformedEvent>(&bad.event);
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->problem.find("high"), std::string::npos) << m->problem;
}

TEST(ProtocolRoundTrip, Log) {
  const LogEvent e{"W1104 12:00:00 some library's own \"quoted\" output"};
  EXPECT_EQ(round_trip(e), e);
}

TEST(ProtocolRoundTrip, TaggedLineCarriesRankAndTimeIntoTheEvent) {
  const std::string worker = to_line(Event{DoneEvent{-1, 7}});
  const EventLine tagged = tag_line(worker, 3, 1796121178.1232696);
  const EventLine back = parse_line(to_line(tagged));
  EXPECT_EQ(back.rank, 3);
  ASSERT_TRUE(back.time.has_value());
  EXPECT_DOUBLE_EQ(*back.time, 1796121178.1232696);
  ASSERT_TRUE(std::holds_alternative<DoneEvent>(back.event));
  EXPECT_EQ(std::get<DoneEvent>(back.event), (DoneEvent{3, 7}));
  EXPECT_FALSE(parse_line(worker).time.has_value());  // a worker's own line has no time
}

TEST(ProtocolRoundTrip, NamesAreTheWireNames) {
  EXPECT_EQ(name_of(Event{HelloEvent{}}), "hello");
  EXPECT_EQ(name_of(Event{LayoutEvent{}}), "layout");
  EXPECT_EQ(name_of(Event{StepEvent{}}), "step");
  EXPECT_EQ(name_of(Event{EvalEvent{}}), "eval");
  EXPECT_EQ(name_of(Event{CheckpointEvent{}}), "checkpoint");
  EXPECT_EQ(name_of(Event{ErrorEvent{}}), "error");
  EXPECT_EQ(name_of(Event{DoneEvent{}}), "done");
  EXPECT_EQ(name_of(Event{HeartbeatEvent{}}), "heartbeat");
  EXPECT_EQ(name_of(Event{ExchangeEvent{}}), "exchange");
  EXPECT_EQ(name_of(Event{MemoryTimelineEvent{}}), "memory_timeline");
  EXPECT_EQ(name_of(Event{LogEvent{}}), "log");
}

}  // namespace
}  // namespace halo::protocol
