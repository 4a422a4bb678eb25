// SDP's abortive end and SrcAvail cancellation, two-sided:
//  - a socket aborted (sdp_abort) sends AbortConn; the peer, which had read
//    every byte before, gets a reset: its read and write fail, sdp_error
//    says SDP_ECONNRESET, no DisConn was sent either way;
//  - a SrcAvail its reader leaves unread past host.sdp.src_avail_timeout is
//    cancelled (SrcAvailCancel), the reader answers SendSm, and the bytes
//    come by copy instead; the next large send still goes by zero-copy;
//    every byte checked, and tshark dissects both runs without a malformed
//    packet.
#include <gtest/gtest.h>

#include <cstring>

#include "sim/tests/test_shell.h"
#include "tests/world_run.h"
#include "ti/sdp/sdp.h"
#include "ti/tests/ti_probe.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

// Reads exactly `want` bytes of pattern `seed` from offset `from`; the
// wrong ones are counted. False when the stream ended or failed first.
bool read_exactly(sdp_sock* s, unsigned char* buf, std::size_t want, int seed, std::size_t& wrong) {
  std::size_t got = 0;
  while (got < want) {
    const long n = sdp_recv(s, buf, want - got);
    if (n <= 0) return false;
    for (long i = 0; i < n; ++i) wrong += buf[i] != pattern(seed, got + static_cast<std::size_t>(i));
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// ---- abort ------------------------------------------------------------------------

constexpr std::size_t kAbortBytes = 3000;

struct AbortSeen {
  std::size_t wrong = 99;
  bool read_all = false;
  long recv_after = 0;
  int send_after = 0, error = 0, abort_rc = -1, close_rc = -1;
  std::uint32_t aborts_received = 0, disconns_received = 9, disconns_sent = 9;
} g_abort;

int abort_probe(int, char**) {
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(kAbortBytes, 64));
  if (nicsim_workload_rank() == 0) {
    sdp_sock* s = sdp_accept(5420);
    if (!s) return 1;
    g_abort.wrong = 0;
    g_abort.read_all = read_exactly(s, buf, kAbortBytes, 3, g_abort.wrong);
    nicsim_barrier();  // everything read: now the client aborts
    g_abort.recv_after = sdp_recv(s, buf, kAbortBytes);
    g_abort.error = sdp_error(s);
    g_abort.send_after = sdp_send(s, buf, 100);
    g_abort.aborts_received = sdp_messages_received(s, 0x03);
    g_abort.disconns_received = sdp_messages_received(s, 0x02);
    g_abort.disconns_sent = sdp_messages_sent(s, 0x02);
    g_abort.close_rc = sdp_close(s);
  } else {
    for (std::size_t i = 0; i < kAbortBytes; ++i) buf[i] = pattern(3, i);
    nicsim_barrier();
    sdp_sock* s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, 5420);
    if (!s || sdp_send(s, buf, kAbortBytes)) return 1;
    nicsim_barrier();
    g_abort.abort_rc = sdp_abort(s);
  }
  nicsim_free(buf);
  return 0;
}
const BuiltinProgram reg_abort("sdp_abort_probe", abort_probe, "test: an SDP socket aborted (AbortConn)");

// ---- SrcAvailCancel ---------------------------------------------------------------

constexpr std::size_t kLarge = 20000;             // above the 4 KiB threshold
constexpr std::uint64_t kReaderLateNs = 1000000;  // beyond the 200 us SrcAvail timeout

struct CancelSeen {
  std::size_t wrong = 99;
  bool read_all = false, closed_clean = false;
  std::uint32_t writer[256] = {}, reader[256] = {};
} g_cancel;

int cancel_probe(int, char**) {
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(2 * kLarge, 64));
  if (nicsim_workload_rank() == 0) {
    sdp_sock* s = sdp_accept(5430);
    if (!s) return 1;
    nicsim_sleep_ns(kReaderLateNs);  // the first SrcAvail times out unread
    g_cancel.wrong = 0;
    g_cancel.read_all = read_exactly(s, buf, kLarge, 4, g_cancel.wrong);
    nicsim_barrier();  // the writer's second send finds a reader waiting
    g_cancel.read_all = g_cancel.read_all && read_exactly(s, buf, kLarge, 5, g_cancel.wrong);
    g_cancel.read_all = g_cancel.read_all && sdp_recv(s, buf, kLarge) == 0;  // DisConn
    for (int mid = 0; mid < 256; ++mid) g_cancel.reader[mid] = sdp_messages_sent(s, static_cast<std::uint8_t>(mid));
    g_cancel.closed_clean = sdp_close(s) == 0;
  } else {
    for (std::size_t i = 0; i < kLarge; ++i) buf[i] = pattern(4, i), buf[kLarge + i] = pattern(5, i);
    nicsim_barrier();
    sdp_sock* s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, 5430);
    if (!s || sdp_send(s, buf, kLarge)) return 1;
    nicsim_barrier();
    nicsim_sleep_ns(100000);
    if (sdp_send(s, buf + kLarge, kLarge)) return 1;
    for (int mid = 0; mid < 256; ++mid) g_cancel.writer[mid] = sdp_messages_sent(s, static_cast<std::uint8_t>(mid));
    if (sdp_close(s)) return 1;
  }
  nicsim_free(buf);
  return 0;
}
const BuiltinProgram reg_cancel("sdp_cancel_probe", cancel_probe, "test: an SDP SrcAvail cancelled");

// The two-node scenario, a 4 KiB threshold, a 200 us SrcAvail timeout, a
// capture of the client's link.
std::string cancel_scenario(const char* program) {
  std::string text = scenario(3, program, "nodes: \"h1\" nodes: \"h2\"", "", "outputs { pcap: \"h2--sw0\" }\n");
  const std::string nic = "nic: \"hca\" }";
  text.replace(text.find(nic), nic.size(),
               "nic: \"hca\" node_param { key: \"host.sdp.zcopy_threshold\" value: \"4KiB\" } "
               "node_param { key: \"host.sdp.src_avail_timeout\" value: \"200us\" } }");
  return text;
}

// tshark's own InfiniBand and SDP dissectors on the capture: `want` in the
// summary, nothing malformed.
void dissects(const std::string& pcap, std::initializer_list<const char*> want) {
  const auto list = nicsim::testing::run_command("tshark -r " + pcap + " 2>&1");
  ASSERT_EQ(list.status, 0) << list.output;
  for (const char* what : want) EXPECT_NE(list.output.find(what), std::string::npos) << what;
  const auto detail = nicsim::testing::run_command("tshark -r " + pcap + " -V 2>&1");
  ASSERT_EQ(detail.status, 0);
  EXPECT_EQ(detail.output.find("Malformed"), std::string::npos);
  EXPECT_EQ(detail.output.find("Expert Info (Error"), std::string::npos);
}

TEST(Sdp, AbortSendsAbortConnAndThePeerSeesAReset) {
  nicsim::testing::RunOptions o;
  o.pcap_path = ::testing::TempDir() + "sdp_abort.pcap";
  nicsim::testing::run_text(cancel_scenario("sdp_abort_probe"), o);
  EXPECT_TRUE(g_abort.read_all);
  EXPECT_EQ(g_abort.wrong, 0u);
  EXPECT_EQ(g_abort.abort_rc, 0);
  EXPECT_EQ(g_abort.aborts_received, 1u);
  EXPECT_EQ(g_abort.recv_after, -1) << "a reset, not an orderly end (0)";
  EXPECT_EQ(g_abort.error, SDP_ECONNRESET);
  EXPECT_EQ(g_abort.send_after, -1);
  EXPECT_EQ(g_abort.disconns_received, 0u);
  EXPECT_EQ(g_abort.disconns_sent, 0u);
  EXPECT_EQ(g_abort.close_rc, 0);
  if (nicsim::testing::run_command("tshark --version 2>&1").status == 0)
    dissects(o.pcap_path, {"(SDP Data)", "(SDP AbortConn)"});
}

TEST(Sdp, SrcAvailNotReadInTimeIsCancelledAndItsBytesComeByCopy) {
  nicsim::testing::RunOptions o;
  o.pcap_path = ::testing::TempDir() + "sdp_cancel.pcap";
  nicsim::testing::run_text(cancel_scenario("sdp_cancel_probe"), o);
  EXPECT_TRUE(g_cancel.read_all);
  EXPECT_EQ(g_cancel.wrong, 0u);
  EXPECT_TRUE(g_cancel.closed_clean);
  EXPECT_EQ(g_cancel.writer[0x08], 1u) << "SrcAvailCancel";
  EXPECT_EQ(g_cancel.reader[0x04], 1u) << "SendSm";
  // The cancelled 20000 bytes by copy (three Data), then the second send
  // by zero-copy: a SrcAvail read or a sink written.
  EXPECT_EQ(g_cancel.writer[0xff], 3u) << "Data";
  EXPECT_GE(g_cancel.writer[0xfe], 1u) << "SrcAvail";
  EXPECT_EQ(g_cancel.writer[0xfe] - 1 + g_cancel.writer[0x05], 1u) << "the second send: one zero-copy transfer";
  if (nicsim::testing::run_command("tshark --version 2>&1").status == 0)
    dissects(o.pcap_path, {"(SDP SrcAvail)", "(SDP SrcAvailCancel)", "(SDP SendSm)"});
}

}  // namespace
}  // namespace nicsim::ti
