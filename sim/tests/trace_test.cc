// Trace, timeline and statistics building blocks.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace/pcap.h"
#include "trace/stats.h"
#include "trace/timeline.h"
#include "trace/trace.h"

using namespace nicsim;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool valid_json(const std::string& text) {
  google::protobuf::Struct s;
  return google::protobuf::util::JsonStringToMessage(text, &s).ok();
}

TEST(Trace, GlobMatching) {
  EXPECT_TRUE(glob_match("*", "h0"));
  EXPECT_TRUE(glob_match("h*", "h12"));
  EXPECT_FALSE(glob_match("h*", "leaf0"));
  EXPECT_TRUE(glob_match("h[0-3]", "h2"));
  EXPECT_FALSE(glob_match("h[0-3]", "h4"));
  EXPECT_TRUE(glob_match("h[!0-3]", "h4"));
  EXPECT_TRUE(glob_match("leaf?", "leaf7"));
  EXPECT_FALSE(glob_match("leaf?", "leaf10"));
  EXPECT_TRUE(glob_match("*a*b", "xxaybb"));
}

TEST(Trace, EnablesPerDeviceAndComponentAndWritesJsonLines) {
  fs::path path = fs::temp_directory_path() / ("nicsim_trace_" + std::to_string(getpid()) + ".jsonl");
  Tracer t;
  t.set_devices({"h0", "h1", "sw0"});
  t.enable("h*", Component::fabric);
  t.enable("sw0", std::nullopt);
  EXPECT_TRUE(t.on(0, Component::fabric));
  EXPECT_FALSE(t.on(0, Component::host));
  EXPECT_TRUE(t.on(2, Component::host));
  EXPECT_FALSE(t.on(7, Component::fabric));  // unknown device
  ASSERT_TRUE(t.open(path.string()));
  t.record(1234, 1, Component::fabric, "tx", {{"port", 1u}, {"len", 2048ul}, {"why", "a \"quoted\"\nline"}, {"x", -3}});
  t.close();
  const std::string text = slurp(path);
  EXPECT_EQ(text,
            "{\"t\":1234,\"dev\":\"h1\",\"comp\":\"fabric\",\"ev\":\"tx\",\"port\":1,\"len\":2048,"
            "\"why\":\"a \\\"quoted\\\"\\nline\",\"x\":-3}\n");
  EXPECT_TRUE(valid_json(text));
  fs::remove(path);
}

TEST(Trace, RecordsStampedAheadAreWrittenInTimeOrder) {
  fs::path path = fs::temp_directory_path() / ("nicsim_trace_order_" + std::to_string(getpid()) + ".jsonl");
  Tracer t;
  t.set_devices({"h0"});
  t.enable("*", std::nullopt);
  ASSERT_TRUE(t.open(path.string()));
  t.record(0, 0, Component::host, "a", {});      // now: written at once
  t.record(500, 0, Component::fabric, "b", {});  // ahead of now (0): held
  t.record(300, 0, Component::fabric, "c", {});
  t.record(500, 0, Component::fabric, "d", {});  // same time as b: after it
  EXPECT_EQ(t.held(), 3u);
  t.close();
  EXPECT_EQ(t.held(), 0u);
  const std::string text = slurp(path);
  const auto at = [&](const char* ev) { return text.find(std::string("\"ev\":\"") + ev + "\""); };
  ASSERT_NE(at("d"), std::string::npos) << text;
  EXPECT_LT(at("a"), at("c"));
  EXPECT_LT(at("c"), at("b"));
  EXPECT_LT(at("b"), at("d"));
  fs::remove(path);
}

TEST(Timeline, IsValidChromeTraceJsonAndCountsDroppedEvents) {
  fs::path path = fs::temp_directory_path() / ("nicsim_timeline_" + std::to_string(getpid()) + ".json");
  Timeline tl;
  tl.set_devices({"h0", "sw\"0"});
  auto t0 = tl.track(0, "port 1 tx");
  ASSERT_TRUE(tl.open(path.string(), 2));
  auto t1 = tl.track(1, "fsm link");
  tl.span(0, t0, "pkt 1", 1'500'000, 2'048'000, "{\"len\":2048}");
  tl.instant(1, t1, "Up -> Down", 3'000'001);
  tl.span(0, t0, "pkt 2", 4'000'000, 1);  // over the cap of 2
  EXPECT_EQ(tl.events(), 2u);
  EXPECT_EQ(tl.dropped(), 1u);
  tl.close();
  const std::string text = slurp(path);
  EXPECT_TRUE(valid_json(text)) << text;
  EXPECT_NE(text.find("\"ts\":1.500000,\"dur\":2.048000"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":3.000001"), std::string::npos);
  EXPECT_NE(text.find("\"dropped\":1"), std::string::npos);
  EXPECT_EQ(text.find("pkt 2"), std::string::npos);
  EXPECT_EQ(ps_to_us_string(1), "0.000001");
  fs::remove(path);
}

TEST(Stats, HistogramPercentilesWithinBucketPrecision) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 10000; ++v) h.add(v * 1000);
  EXPECT_EQ(h.count(), 10000u);
  EXPECT_EQ(h.min(), 1000u);
  EXPECT_EQ(h.max(), 10'000'000u);
  EXPECT_DOUBLE_EQ(h.mean(), 5'000'500.0);
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const double exact = p / 100.0 * 10'000'000.0;
    const double got = static_cast<double>(h.percentile(p));
    EXPECT_GE(got, exact) << p;          // an upper bucket bound...
    EXPECT_LE(got, exact * 1.035) << p;  // ...within one sub-bucket (1/32)
  }
  EXPECT_EQ(h.percentile(100), 10'000'000u);
  Histogram small;
  for (std::uint64_t v : {3u, 3u, 7u}) small.add(v);  // exact below 32
  EXPECT_EQ(small.percentile(50), 3u);
  EXPECT_EQ(small.percentile(100), 7u);
  h.merge(small);
  EXPECT_EQ(h.count(), 10003u);
  EXPECT_EQ(h.min(), 3u);
}

// A histogram keeps only the buckets between its smallest and largest
// value; merging ranges on either side, or one that came as words from
// another process, gives what adding every value to one histogram gives.
TEST(Stats, HistogramsOfDisjointRangesMergeAsIfAddedToOne) {
  Histogram low, high, mid, all;
  for (std::uint64_t v = 900'000; v < 1'100'000; v += 997) {
    low.add(v);
    all.add(v);
  }
  for (std::uint64_t v = 40'000'000; v < 60'000'000; v += 104'729) {
    high.add(v);
    all.add(v);
  }
  for (std::uint64_t v : {5u, 31u, 70'000u}) {
    mid.add(v);
    all.add(v);
  }
  const std::vector<std::uint64_t> words = high.to_words();
  EXPECT_LT(words.size(), 6u + 40u);  // two octaves at 32 buckets each
  Histogram merged = Histogram::from_words(words.data(), words.size());
  merged.merge(low);
  merged.merge(mid);
  merged.merge(Histogram());
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), 5u);
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
  for (double p : {0.1, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0})
    EXPECT_EQ(merged.percentile(p), all.percentile(p)) << p;
  EXPECT_EQ(merged.to_words(), all.to_words());
  EXPECT_THROW(Histogram::from_words(words.data(), 5), std::runtime_error);
}

TEST(Stats, RegistryReadsCountersAtReportTime) {
  StatsRegistry r;
  std::uint64_t packets = 0;
  r.counter("h0", "tx_packets", "packets", &packets);
  r.gauge("h0", "half", "ratio", [&] { return packets / 2.0; });
  packets = 10;
  ASSERT_EQ(r.scalars().size(), 2u);
  EXPECT_EQ(r.scalars()[0].read(), 10.0);
  EXPECT_EQ(r.scalars()[1].read(), 5.0);
  EXPECT_EQ(r.scalars()[0].unit, "packets");
}

// Registrations are numbered by device, so that a statistic has the same
// number in whichever process builds its device; entries stay in number
// order whatever order the devices register in, and rank 0 takes in the
// other ranks' histograms at their number.
TEST(Stats, RegistrationsAreNumberedByDeviceAndKeptInNumberOrder) {
  StatsRegistry r;
  std::uint64_t packets = 3;
  r.set_device(3);
  r.counter("h3", "tx_packets", "packets", &packets);
  Histogram& h3 = r.histogram("h3", "latency", "ps");
  r.set_device(1);
  r.counter("h1", "tx_packets", "packets", &packets);
  r.counter("h1", "rx_packets", "packets", &packets);
  r.set_device(std::nullopt);
  r.gauge("fabric", "load", "ratio", [] { return 0.5; });
  constexpr std::uint64_t kDevice1 = 2ull << 32, kDevice3 = 4ull << 32;
  ASSERT_EQ(r.scalars().size(), 4u);
  EXPECT_EQ(r.scalars()[0].object, "fabric");
  EXPECT_EQ(r.scalars()[0].seq, 0u);
  EXPECT_EQ(r.scalars()[1].seq, kDevice1);
  EXPECT_EQ(r.scalars()[2].seq, kDevice1 + 1);
  EXPECT_EQ(r.scalars()[2].name, "rx_packets");
  EXPECT_EQ(r.scalars()[3].seq, kDevice3);
  ASSERT_EQ(r.histograms().size(), 1u);
  EXPECT_EQ(r.histograms()[0].seq, kDevice3 + 1);
  EXPECT_EQ(r.find_histogram(kDevice3 + 1), &h3);
  EXPECT_EQ(r.find_histogram(kDevice1), nullptr);
  Histogram theirs;
  theirs.add(42);
  r.adopt_histogram(StatsRegistry::Hist{"h2", "latency", "ps", "", std::make_shared<Histogram>(theirs), 3ull << 32});
  r.adopt_histogram(StatsRegistry::Hist{"h9", "latency", "ps", "", std::make_shared<Histogram>(), 10ull << 32});
  ASSERT_EQ(r.histograms().size(), 3u);
  EXPECT_EQ(r.histograms()[0].object, "h2");
  EXPECT_EQ(r.histograms()[1].object, "h3");
  EXPECT_EQ(r.histograms()[2].object, "h9");
  ASSERT_NE(r.find_histogram(3ull << 32), nullptr);
  EXPECT_EQ(r.find_histogram(3ull << 32)->count(), 1u);
}

}  // namespace

namespace {
// Captures of a world in blocks: frames from three devices, each frame's
// first byte naming it, added in an order that is not the place order.
struct Capture {
  Tick t;
  std::uint32_t device;
  std::vector<std::uint8_t> frame;
};
const std::vector<Capture> kCaptures = {
    {2000, 2, {0x21, 1, 2}}, {1000, 1, {0x11, 3}},         {2000, 1, {0x12, 4, 5, 6}},
    {2000, 2, {0x22}},       {500, 2, {0x20, 7, 7, 7, 7}}, {2000, 0, {0x01, 9}},
};

std::string written(HeldCapture& held, const fs::path& path) {
  PcapWriter out;
  EXPECT_TRUE(out.open(path.string(), kLinktypeUser0));
  held.write_to(out);
  out.close();
  return slurp(path);
}
}  // namespace

// By time, then device, then the device's own order: the file a one-block
// writer gives for the frames in that order.
TEST(HeldCapture, WritesByTimeThenDeviceThenTheDevicesOwnOrder) {
  const fs::path dir = fs::temp_directory_path() / "nicsim_held_capture";
  fs::create_directories(dir);
  HeldCapture held(-1);
  for (const Capture& c : kCaptures) held.add(c.t, c.device, c.frame.data(), c.frame.size());
  EXPECT_EQ(held.records(), 6u);
  PcapWriter direct;
  ASSERT_TRUE(direct.open((dir / "direct.pcap").string(), kLinktypeUser0));
  for (int i : {4, 1, 5, 2, 0, 3}) direct.write(kCaptures[i].t, kCaptures[i].frame.data(), kCaptures[i].frame.size());
  direct.close();
  EXPECT_EQ(written(held, dir / "held.pcap"), slurp(dir / "direct.pcap"));
  EXPECT_EQ(held.records(), 0u);
}

// Each process holds its devices' records; the one that writes takes the
// others' parts over and writes what one process holding all would.
TEST(HeldCapture, PartsHeldApartWriteTheSameFileAsOneHolder) {
  const fs::path dir = fs::temp_directory_path() / "nicsim_held_capture";
  fs::create_directories(dir);
  HeldCapture whole(21), device2(21), others(21), writer(21);
  for (const Capture& c : kCaptures) {
    whole.add(c.t, c.device, c.frame.data(), c.frame.size());
    (c.device == 2 ? device2 : others).add(c.t, c.device, c.frame.data(), c.frame.size());
  }
  EXPECT_TRUE(writer.import_held(device2.export_held()));
  EXPECT_TRUE(writer.import_held(others.export_held()));
  EXPECT_EQ(device2.records(), 0u);
  EXPECT_EQ(writer.records(), 6u);
  const std::string file = written(whole, dir / "whole.pcap");
  EXPECT_EQ(file.size(), 24u + 6 * (16 + 16) + 17);  // ERF headers, 17 frame bytes
  EXPECT_EQ(written(writer, dir / "parts.pcap"), file);
}

TEST(HeldCapture, APartCutShortIsRefused) {
  HeldCapture part(-1), writer(-1);
  const std::vector<std::uint8_t> frame(40, 0x5a);
  part.add(1000, 3, frame.data(), frame.size());
  std::string bytes = part.export_held();
  bytes.pop_back();
  EXPECT_FALSE(writer.import_held(bytes));
  EXPECT_FALSE(writer.import_held(std::string(20, '\0')));
}

// One process writes as the run goes: the records before each bound, then
// the rest, make the file holding them all would.
TEST(HeldCapture, WritingAsTheRunGoesGivesTheSameFileAndHoldsOnlyWhatIsLeft) {
  const fs::path dir = fs::temp_directory_path() / "nicsim_held_capture";
  fs::create_directories(dir);
  HeldCapture going(-1);
  PcapWriter out;
  ASSERT_TRUE(out.open((dir / "going.pcap").string(), kLinktypeUser0));
  for (std::size_t i = 0; i < 3; ++i) {
    const Capture& c = kCaptures[i];
    going.add(c.t, c.device, c.frame.data(), c.frame.size());
  }
  going.write_before(out, 1500);  // the frame at 1000
  EXPECT_EQ(going.records(), 2u);
  EXPECT_THROW(going.add(1499, 0, kCaptures[0].frame.data(), 1), std::logic_error);
  for (std::size_t i = 3; i < kCaptures.size(); ++i) {
    const Capture& c = kCaptures[i];
    if (c.t >= 1500) going.add(c.t, c.device, c.frame.data(), c.frame.size());
  }
  going.write_before(out, 2000);
  EXPECT_EQ(going.records(), 4u);  // all at 2000
  going.write_to(out);
  out.close();
  EXPECT_EQ(out.records(), 5u);
  HeldCapture reference(-1);
  for (const Capture& c : kCaptures)
    if (c.t != 500) reference.add(c.t, c.device, c.frame.data(), c.frame.size());
  EXPECT_EQ(slurp(dir / "going.pcap"), written(reference, dir / "reference.pcap"));
}
