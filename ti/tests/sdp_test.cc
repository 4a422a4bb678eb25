// SDP sockets between two nodes: zero-copy across its threshold (RDMA
// write into the reader's sink, RDMA read from the writer's source, in
// whole and in pieces) and with it off, every byte of the stream checked.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sim/tests/scenario_figures.h"
#include "tests/test_shell.h"
#include "tests/world_run.h"
#include "ti/sdp/sdp.h"
#include "ti/tests/ti_probe.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

// The writer's messages (bytes each) and the reader's read sizes, in turn;
// the threshold is 4 KiB.
const std::vector<std::size_t> kMessages = {3, 4095, 4096, 4097, 12293, 100000, 64, 65536, 8192};
const std::vector<std::size_t> kReads = {200000, 3000, 6000, 1, 65536};

unsigned char stream_byte(std::size_t offset) { return static_cast<unsigned char>(offset * 7 + offset / 251); }

struct StreamSeen {
  std::size_t total = 0, received = 0, wrong = 0;
  std::uint32_t writer[256] = {}, reader[256] = {};
  bool closed_clean = false;
};
StreamSeen g_stream;

void stream_writer() {
  std::size_t total = 0;
  for (std::size_t n : kMessages) total += n;
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(total, 64));
  for (std::size_t i = 0; i < total; ++i) buf[i] = stream_byte(i);
  nicsim_barrier();
  sdp_sock* s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, 5300);
  ASSERT_NE(s, nullptr);
  std::size_t at = 0;
  for (std::size_t n : kMessages) {
    nicsim_sleep_ns(100000);  // the reader waits in sdp_recv: its sink may come first
    ASSERT_EQ(sdp_send(s, buf + at, n), 0) << "message at " << at;
    at += n;
  }
  g_stream.total = total;
  for (int mid = 0; mid < 256; ++mid) g_stream.writer[mid] = sdp_messages_sent(s, static_cast<uint8_t>(mid));
  EXPECT_EQ(sdp_close(s), 0);
  nicsim_free(buf);
}

void stream_reader() {
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(200000, 64));
  sdp_sock* s = sdp_accept(5300);
  ASSERT_NE(s, nullptr);
  for (std::size_t k = 0;; ++k) {
    const long n = sdp_recv(s, buf, kReads[k % kReads.size()]);
    ASSERT_GE(n, 0);
    if (n == 0) break;  // DisConn
    for (long i = 0; i < n; ++i)
      g_stream.wrong += buf[i] != stream_byte(g_stream.received + static_cast<std::size_t>(i));
    g_stream.received += static_cast<std::size_t>(n);
  }
  for (int mid = 0; mid < 256; ++mid) g_stream.reader[mid] = sdp_messages_sent(s, static_cast<uint8_t>(mid));
  g_stream.closed_clean = sdp_close(s) == 0;
  nicsim_free(buf);
}

int stream_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    stream_reader();
  else
    stream_writer();
  return 0;
}
const BuiltinProgram reg_stream("sdp_stream_probe", stream_probe,
                                "test: an SDP byte stream across the zero-copy threshold");

// The two-node scenario with every host's zero-copy threshold at `value`.
std::string with_threshold(const char* value) {
  std::string text = scenario(3, "sdp_stream_probe", "nodes: \"h1\" nodes: \"h2\"");
  const std::string nic = "nic: \"hca\" }";
  text.replace(text.find(nic), nic.size(),
               "nic: \"hca\" node_param { key: \"host.sdp.zcopy_threshold\" value: \"" + std::string(value) + "\" } }");
  return text;
}

TEST(Sdp, ZeroCopyAcrossItsThresholdEveryByteChecked) {
  nicsim::testing::run_text(with_threshold("4KiB"));
  std::size_t total = 0;
  for (std::size_t n : kMessages) total += n;
  EXPECT_EQ(g_stream.total, total);
  EXPECT_EQ(g_stream.received, total);
  EXPECT_EQ(g_stream.wrong, 0u);
  EXPECT_TRUE(g_stream.closed_clean);
  // Both ways of zero-copy were taken, and the copy for the small ones.
  EXPECT_GT(g_stream.writer[0xfe], 0u) << "SrcAvail";
  EXPECT_GT(g_stream.reader[0x06], g_stream.writer[0xfe]) << "RdmaRdCompl: some sources read in pieces";
  EXPECT_GT(g_stream.reader[0xfd], 0u) << "SinkAvail";
  EXPECT_GT(g_stream.writer[0x05], 0u) << "RdmaWrCompl";
  EXPECT_EQ(g_stream.writer[0xff], 3u) << "Data: the three messages under 4 KiB";
  std::printf("writer: Data %u SrcAvail %u RdmaWrCompl %u; reader: SinkAvail %u RdmaRdCompl %u\n",
              g_stream.writer[0xff], g_stream.writer[0xfe], g_stream.writer[0x05], g_stream.reader[0xfd],
              g_stream.reader[0x06]);
}

TEST(Sdp, ZeroCopyOffCopiesEverything) {
  nicsim::testing::run_text(with_threshold("0B"));
  EXPECT_EQ(g_stream.received, g_stream.total);
  EXPECT_EQ(g_stream.wrong, 0u);
  for (int mid : {0xfe, 0xfd, 0x05, 0x06}) {
    EXPECT_EQ(g_stream.writer[mid], 0u) << mid;
    EXPECT_EQ(g_stream.reader[mid], 0u) << mid;
  }
}

}  // namespace
}  // namespace nicsim::ti

namespace nicsim::ti {
namespace {

// scenarios/sdp_stream.textproto: two connections, 4 MiB each per size;
// 64 KiB and up move by RDMA, below by copy through 8 KiB buffers.
TEST(Sdp, StreamFiguresOfItsScenario) {
  const auto r = nicsim::testing::scenario_results("sdp_stream.textproto");
  const std::vector<std::pair<const char*, double>> want = {
      {"sdp_stream_4096_ns", 12576133},   {"sdp_stream_16384_ns", 10760005},   {"sdp_stream_65536_ns", 11125145},
      {"sdp_stream_262144_ns", 10325293}, {"sdp_stream_1048576_ns", 10131773},
  };
  for (const auto& [name, value] : want) {
    ASSERT_TRUE(r.count(name)) << name;
    EXPECT_EQ(r.at(name), value) << name;
  }
  EXPECT_DOUBLE_EQ(r.at("sdp_stream_1048576_MBps"), 2.0 * 4194304 * 1e3 / 10131773);
  EXPECT_EQ(r.at("bytes_ok"), 5.0 * 2 * 4194304);
  // Per connection: 64 + 16 + 4 messages by RDMA (sizes 64 KiB, 256 KiB,
  // 1 MiB), 4 MiB / 8176 bytes rounded up for each copied size.
  EXPECT_EQ(r.at("zcopy_msgs"), 2.0 * (64 + 16 + 4));
}

TEST(Sdp, StreamOverThreeConnectionsEveryByteChecked) {
  const auto r = nicsim::testing::run_text(
      testing::scenario(3, "sdp_stream", "nodes: \"h1\" nodes: \"h2\"",
                        " args: \"--conns=3\" args: \"--bytes=300001\" args: \"--sizes=1000,70000,300001\""));
  EXPECT_EQ(r.results.at("bytes_ok"), 3.0 * 3 * 300001);
  EXPECT_GT(r.results.at("sdp_stream_300001_MBps"), r.results.at("sdp_stream_1000_MBps"));
}

}  // namespace
}  // namespace nicsim::ti

namespace nicsim::ti {
namespace {

// A capture of an sdp_pingpong run (100 bytes copied, 70000 by zero-copy)
// on the client's link, dissected by tshark's own InfiniBand and SDP
// dissectors: the CM's REQ and REP carry Hello and HelloAck in SDP's port
// space, the connection's RC messages are SDP's, nothing is malformed.
TEST(Sdp, PcapOfAnSdpRunDissectsWithTshark) {
  ASSERT_NO_FATAL_FAILURE(nicsim::testing::require_tshark());
  const std::string pcap = ::testing::TempDir() + "sdp_pingpong.pcap";
  nicsim::testing::RunOptions o;
  o.pcap_path = pcap;
  const auto run = nicsim::testing::run_text(
      testing::scenario(3, "sdp_pingpong", "nodes: \"h1\" nodes: \"h2\"",
                        " args: \"--iters=2\" args: \"--sizes=100,70000\"", "outputs { pcap: \"h2--sw0\" }\n"),
      o);
  EXPECT_EQ(run.results.at("bytes_ok"), 2.0 * 2 * (100 + 70000));
  const auto list = nicsim::testing::run_command("tshark -r " + pcap + " 2>&1");
  ASSERT_EQ(list.status, 0) << list.output;
  for (const char* what : {"CM: ConnectRequest(SDP Hello)", "CM: ConnectReply(SDP HelloAck)", "(SDP Data)",
                           "(SDP SrcAvail)", "(SDP RdmaRdCompl)", "(SDP DisConn)"})
    EXPECT_NE(list.output.find(what), std::string::npos) << what;
  const auto detail = nicsim::testing::run_command("tshark -r " + pcap + " -V 2>&1");
  ASSERT_EQ(detail.status, 0);
  // Port 5001 in SDP's port space (RDMA_PS_SDP, 0x0001, in bits 16..31).
  for (const char* what : {"ServiceID: 0x0000000000011389", "MID: Hello (0x00)", "MID: HelloAck (0x01)",
                           "MID: SrcAvail (0xfe)", "MID: Data (0xff)", "SrcAvail Header"})
    EXPECT_NE(detail.output.find(what), std::string::npos) << what;
  EXPECT_EQ(detail.output.find("Malformed"), std::string::npos);
  EXPECT_EQ(detail.output.find("Expert Info (Error"), std::string::npos);
}

}  // namespace
}  // namespace nicsim::ti
