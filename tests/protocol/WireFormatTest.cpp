// Lines exactly as today's workers and launcher write them (copied from real events.jsonl
// files) parse into the typed events and print back byte for byte; a diverged loss (null),
// a malformed known event, an unknown object and plain text each come back as what they are.
#include <gtest/gtest.h>

#include <cmath>

#include "protocol/EventLine.h"

namespace halo::protocol {
namespace {

// events.jsonl lines of real runs (launcher-tagged: "rank" and "time").
const char* kHello =
    R"({"device":"cpu","dp_index":0,"event":"hello","host":"vm","pid":22267,"rank":0,"sp_index":0,"time":1796121231.2312586,"world":2})";
const char* kStep =
    R"({"event":"step","grad_norm":6.460567853142468,"loss_scale":1.0,"losses":{"loss":1.2964468002319336},"lr":0.002,"memory":{"current":510288,"peak":1188376,"reserved":449232896,"rss":449232896,"step_start":382704},"rank":0,"samples_per_s":22.16639418811331,"skipped":false,"step":0,"time":1796121231.3248446,"time_ms":{"backward":42.298357,"comm":35.500719,"forward":40.807147,"optim":3.599217,"total":90.226673}})";
const char* kLayout =
    R"({"dp":1,"event":"layout","input":[4,3,32,128],"layers":[{"dilation":1,"kernel":4,"name":"stem.0","padding":0,"part":"sharded","ranks":[{"activation_bytes":16384,"halo_left":0,"halo_right":0,"in_columns":[0,64],"out_columns":[0,16],"rank":0,"received_bytes":0,"shape":[4,8,8,16]},{"activation_bytes":16384,"halo_left":0,"halo_right":0,"in_columns":[64,128],"out_columns":[16,32],"rank":1,"received_bytes":0,"shape":[4,8,8,16]}],"stride":4},{"dilation":1,"kernel":7,"name":"stages.0.blocks.0.conv_dw","padding":3,"part":"sharded","ranks":[{"activation_bytes":16384,"halo_left":0,"halo_right":3,"in_columns":[0,16],"out_columns":[0,16],"rank":0,"received_bytes":3072,"shape":[4,8,8,16]},{"activation_bytes":16384,"halo_left":3,"halo_right":0,"in_columns":[16,32],"out_columns":[16,32],"rank":1,"received_bytes":3072,"shape":[4,8,8,16]}],"stride":1}],"rank":0,"sp":2,"time":1796121231.2343495})";
// The same line as workers before "part" and "received_bytes" wrote it: still read.
const char* kLayoutBefore =
    R"({"dp":1,"event":"layout","input":[4,3,32,128],"layers":[{"dilation":1,"kernel":4,"name":"stem.0","padding":0,"ranks":[{"activation_bytes":16384,"halo_left":0,"halo_right":0,"in_columns":[0,64],"out_columns":[0,16],"rank":0,"shape":[4,8,8,16]},{"activation_bytes":16384,"halo_left":0,"halo_right":0,"in_columns":[64,128],"out_columns":[16,32],"rank":1,"shape":[4,8,8,16]}],"stride":4},{"dilation":1,"kernel":7,"name":"stages.0.blocks.0.conv_dw","padding":3,"ranks":[{"activation_bytes":16384,"halo_left":0,"halo_right":3,"in_columns":[0,16],"out_columns":[0,16],"rank":0,"shape":[4,8,8,16]},{"activation_bytes":16384,"halo_left":3,"halo_right":0,"in_columns":[16,32],"out_columns":[16,32],"rank":1,"shape":[4,8,8,16]}],"stride":1}],"rank":0,"sp":2,"time":1796121231.2343495})";
const char* kEval =
    R"({"DET_l":0.0,"DET_t":0.23076923191547394,"OLS":0.057692307978868484,"TOP_ll":0.0,"TOP_lt":0.0,"event":"eval","frames":3,"predictions":"/tmp/halo-oleval-21644-0/run/predictions/step-000002.json","rank":0,"split":"val","step":1,"steps_trained":2,"time":1796121149.011864})";
const char* kCheckpoint =
    R"({"bytes":441471,"event":"checkpoint","path":"/tmp/halo-tp2-21798-1/run/checkpoints/step-000005.pt","rank":0,"step":5,"time":1796121178.120523})";
const char* kError =
    R"({"event":"error","hint":"set parallel.device to cpu","message":"parallel.device is cuda but no GPU is visible","rank":0,"time":1796123202.5559993})";
const char* kDone = R"({"event":"done","rank":1,"steps":5,"time":1796121178.1232696})";

TEST(ProtocolWire, TodaysLinesPrintBackByteForByte) {
  for (const char* line : {kHello, kStep, kLayout, kEval, kCheckpoint, kError, kDone}) {
    const EventLine l = parse_line(std::string(line));
    EXPECT_FALSE(std::holds_alternative<MalformedEvent>(l.event)) << line;
    EXPECT_FALSE(std::holds_alternative<UnknownEvent>(l.event)) << line;
    EXPECT_EQ(to_line(l), line);
  }
}

TEST(ProtocolWire, TodaysStepLineReadsIntoItsFields) {
  const EventLine l = parse_line(std::string(kStep));
  ASSERT_TRUE(std::holds_alternative<StepEvent>(l.event));
  const StepEvent& s = std::get<StepEvent>(l.event);
  EXPECT_EQ(l.rank, 0);
  EXPECT_DOUBLE_EQ(*l.time, 1796121231.3248446);
  EXPECT_EQ(s.step, 0);
  EXPECT_DOUBLE_EQ(s.loss(), 1.2964468002319336);
  EXPECT_DOUBLE_EQ(s.lr, 0.002);
  EXPECT_FALSE(s.skipped);
  EXPECT_EQ(s.memory.peak, 1188376);
  EXPECT_EQ(s.memory.step_start, 382704);
  EXPECT_DOUBLE_EQ(s.time_ms.total, 90.226673);
  EXPECT_DOUBLE_EQ(s.samples_per_s, 22.16639418811331);
  const auto m = s.metrics();
  ASSERT_EQ(m.size(), 1u + 3u + 5u);
  EXPECT_EQ(m.front().first, "loss");
  EXPECT_EQ(m[1].first, "lr");
  EXPECT_EQ(m.back().first, "time_ms.total");
  EXPECT_DOUBLE_EQ(m.back().second, 90.226673);
}

TEST(ProtocolWire, TodaysLayoutLineReadsIntoItsFields) {
  const EventLine l = parse_line(std::string(kLayout));
  ASSERT_TRUE(std::holds_alternative<LayoutEvent>(l.event));
  const LayoutEvent& e = std::get<LayoutEvent>(l.event);
  EXPECT_EQ(e.input, (std::array<int64_t, 4>{4, 3, 32, 128}));
  EXPECT_EQ(e.sp, 2);
  ASSERT_EQ(e.layers.size(), 2u);
  EXPECT_EQ(e.layers[1].name, "stages.0.blocks.0.conv_dw");
  EXPECT_EQ(e.layers[1].kernel, 7);
  EXPECT_EQ(e.layers[1].padding, 3);
  ASSERT_EQ(e.layers[1].ranks.size(), 2u);
  EXPECT_EQ(e.layers[1].ranks[0].halo_right, 3);
  EXPECT_EQ(e.layers[1].ranks[1].halo_left, 3);
  EXPECT_EQ(e.layers[1].ranks[1].in_columns, (std::array<int64_t, 2>{16, 32}));
  EXPECT_EQ(e.layers[1].ranks[1].shape, (std::array<int64_t, 4>{4, 8, 8, 16}));
  EXPECT_EQ(e.layers[1].ranks[1].received_bytes, 3072);  // 3 columns x 8 channels x 8 rows x 4 images x 4 bytes
  EXPECT_EQ(e.layers[1].part, LayoutPart::Sharded);
  // A line from before "part" and "received_bytes": the same event, those at their defaults.
  const EventLine before = parse_line(std::string(kLayoutBefore));
  ASSERT_TRUE(std::holds_alternative<LayoutEvent>(before.event));
  LayoutEvent older = std::get<LayoutEvent>(before.event), today = e;
  for (LayoutLayer& layer : today.layers)
    for (LayoutRank& r : layer.ranks) r.received_bytes = 0;
  EXPECT_EQ(older, today);
}

TEST(ProtocolWire, TodaysEvalAndErrorLinesReadIntoTheirFields) {
  const EvalEvent e = std::get<EvalEvent>(parse_line(std::string(kEval)).event);
  EXPECT_EQ(e.step, 1);
  EXPECT_EQ(e.steps_trained, 2);
  EXPECT_EQ(e.split, "val");
  EXPECT_DOUBLE_EQ(e.det_t, 0.23076923191547394);
  EXPECT_EQ(e.frames, 3);
  EXPECT_EQ(e.scores().back().first, "OLS");
  const ErrorEvent err = std::get<ErrorEvent>(parse_line(std::string(kError)).event);
  EXPECT_EQ(err.message, "parallel.device is cuda but no GPU is visible");
  EXPECT_EQ(err.hint, "set parallel.device to cpu");
}

TEST(ProtocolWire, AWorkersUntaggedLineIsTaggedAsTheLauncherDoes) {
  // What today's worker prints for the checkpoint above, before the launcher tags it.
  const std::string worker =
      R"({"bytes":441471,"event":"checkpoint","path":"/tmp/halo-tp2-21798-1/run/checkpoints/step-000005.pt","rank":0,"step":5})";
  EXPECT_EQ(to_line(parse_line(worker)), worker);
  EXPECT_EQ(to_line(tag_line(worker, 0, 1796121178.120523)), kCheckpoint);
}

TEST(ProtocolWire, ANonFiniteLossIsNullOnTheWireAndNaNWhenRead) {
  StepEvent s;
  s.step = 3;
  s.losses = {{"loss", std::nan("")}, {"aux", 0.5}};
  s.grad_norm = std::numeric_limits<double>::infinity();
  const std::string line = to_line(Event{s});
  EXPECT_NE(line.find(R"("loss":null)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("grad_norm":null)"), std::string::npos) << line;
  const EventLine back = parse_line(line);
  ASSERT_TRUE(std::holds_alternative<StepEvent>(back.event)) << std::get<MalformedEvent>(back.event).problem;
  const StepEvent& b = std::get<StepEvent>(back.event);
  EXPECT_TRUE(std::isnan(b.loss()));
  EXPECT_TRUE(std::isnan(b.grad_norm));
  EXPECT_DOUBLE_EQ(b.losses.at("aux"), 0.5);
  EXPECT_EQ(to_line(back), line);
}

TEST(ProtocolWire, AMalformedKnownEventSaysWhichFieldAndIsKeptWhole) {
  const std::string line = R"({"event":"step","memory":{"peak":"lots"},"rank":1,"step":4})";
  const EventLine l = parse_line(line);
  ASSERT_TRUE(std::holds_alternative<MalformedEvent>(l.event));
  const MalformedEvent& m = std::get<MalformedEvent>(l.event);
  EXPECT_EQ(m.name, "step");
  EXPECT_NE(m.problem.find("step event"), std::string::npos) << m.problem;
  EXPECT_NE(m.problem.find("'memory.peak'"), std::string::npos) << m.problem;
  EXPECT_NE(m.problem.find("expected an integer"), std::string::npos) << m.problem;
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(to_line(l), line);  // nothing lost
  EXPECT_EQ(name_of(l.event), "step");
}

TEST(ProtocolWire, AMissingRequiredFieldIsMalformed) {
  for (const std::string line : {R"({"event":"step","losses":{"loss":1.0}})", R"({"event":"eval","OLS":0.5})",
                                 R"({"event":"checkpoint","step":5})"}) {
    const EventLine l = parse_line(line);
    ASSERT_TRUE(std::holds_alternative<MalformedEvent>(l.event)) << line;
    EXPECT_NE(std::get<MalformedEvent>(l.event).problem.find("required field"), std::string::npos) << line;
  }
  const EventLine nested = parse_line(std::string(R"({"event":"layout","layers":[{"ranks":[{"shape":[1,2]}]}]})"));
  ASSERT_TRUE(std::holds_alternative<MalformedEvent>(nested.event));
  EXPECT_NE(std::get<MalformedEvent>(nested.event).problem.find("layers[0].ranks[0].shape"), std::string::npos)
      << std::get<MalformedEvent>(nested.event).problem;
}

TEST(ProtocolWire, MissingOptionalFieldsTakeTheirDefaults) {
  const EventLine l = parse_line(std::string(R"({"event":"step","step":2})"));
  ASSERT_TRUE(std::holds_alternative<StepEvent>(l.event));
  const StepEvent& s = std::get<StepEvent>(l.event);
  EXPECT_EQ(s.step, 2);
  EXPECT_TRUE(s.losses.empty());
  EXPECT_DOUBLE_EQ(s.loss_scale, 1.0);
  EXPECT_EQ(s.memory.peak, 0);
  const EventLine whole = parse_line(std::string(R"({"event":"step","step":2,"memory":{"peak":1000.0}})"));
  ASSERT_TRUE(std::holds_alternative<StepEvent>(whole.event));
  EXPECT_EQ(std::get<StepEvent>(whole.event).memory.peak, 1000);  // a whole-valued float is an integer
}

TEST(ProtocolWire, UnknownObjectsAndPlainTextAreKeptAsTheyCame) {
  const std::string other = R"({"event":"a_future_event","seq":7})";
  const EventLine u = parse_line(other);
  ASSERT_TRUE(std::holds_alternative<UnknownEvent>(u.event));
  EXPECT_EQ(std::get<UnknownEvent>(u.event).name, "a_future_event");
  EXPECT_EQ(to_line(u), R"({"event":"a_future_event","rank":0,"seq":7})");
  const EventLine nameless = tag_line(R"({"foo":1})", 2, 5.5);
  ASSERT_TRUE(std::holds_alternative<UnknownEvent>(nameless.event));
  EXPECT_EQ(name_of(nameless.event), "");
  EXPECT_EQ(to_line(nameless), R"({"foo":1,"rank":2,"time":5.5})");
  // Today's launcher turns a line that is not a JSON object into the log pseudo-event.
  for (const std::string text : {"Warning: something from a library", "[1,2]", "{\"cut off"}) {
    const EventLine t = tag_line(text, 1, 2.25);
    ASSERT_TRUE(std::holds_alternative<LogEvent>(t.event)) << text;
    EXPECT_EQ(std::get<LogEvent>(t.event).text, text);
    EXPECT_EQ(to_line(t), nlohmann::json({{"event", "log"}, {"text", text}, {"rank", 1}, {"time", 2.25}}).dump());
  }
}

TEST(ProtocolWire, TypedReadingRefusesAnotherEventsLine) {
  EXPECT_THROW(nlohmann::json::parse(kDone).get<StepEvent>(), std::exception);
  EXPECT_EQ(nlohmann::json::parse(kDone).get<DoneEvent>(), (DoneEvent{1, 5}));
}

}  // namespace
}  // namespace halo::protocol
