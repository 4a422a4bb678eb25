// A full receive queue must not stall unrelated traffic. Three
// nodes on an Elite tree: node 1's service kFull holds kCap messages and
// nobody consumes them for 1 ms, so the sender's next kRefused messages to
// it are refused (test-fail), retried by the sender's Elan failCount times,
// trapped to its driver and run again from the driver's retry list
// (elan_model/driver/elan3_dev.h). Meanwhile the same sender's messages to
// another service on node 1 and to node 2 take exactly as long as before
// the queue filled, except while the sender's Elan is re-running a refused
// DMA (a retry round: failCount + 1 attempts after each trap, ~2.5 us of the
// DMA engine each): a message that comes to the engine then waits for at
// most one attempt of each refused DMA ahead of it. The probes of the first
// test fall between retry rounds and are asserted exactly; the second test
// sweeps the whole millisecond and asserts the bound. When node 1 drains,
// every refused message arrives exactly once, byte for byte. A special message to the full queue ends
// ETIMEDOUT at its timeout and is never delivered; a message to a service
// node 2 never installed (refused for ever) ends ENETRESET when node 2's
// link goes down.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kFull = 80, kFree = 81, kNever = 82;
constexpr int kCap = 4, kRefused = 3, kMsgs = kCap + kRefused;
constexpr int kLen = 40;
constexpr std::uint64_t kBaseAtNs = 200000, kFillAtNs = 300000;
// Probe times between the retry rounds (the refused DMAs trap at about
// 300-310 us, then run again 20, 40, 80, 160, 320, 320 us after each trap).
constexpr int kProbes = 9;
constexpr std::uint64_t kProbeAtNs[kProbes] = {600000, 630000, 660000,  800000, 850000,
                                               900000, 950000, 1000000, 1150000};
// The sweep: a probe pair every 17 us or so over the whole blockage.
constexpr int kSweep = 60;
constexpr std::uint64_t kSweepFromNs = 330000, kSweepStepNs = 15000;
constexpr int kRefusedDmas = kRefused + 2;  // and the special and the never-taken message
constexpr std::uint64_t kOneAttemptNs = 2500;
// 40 bytes through one Elite switch, handler to handler.
constexpr std::uint64_t kBaseNs = 5930;
constexpr std::uint64_t kDrainAtNs = kFillAtNs + 1000000;
constexpr std::uint64_t kSpecialTimeoutNs = 200000;
constexpr int kEnd = 99;  // the message sent after every refused one completed

// Simulated nodes share this process: the sender stamps, the receivers log.
struct Probe {
  std::uint64_t sent = 0, arrived = 0;
};
Probe g_warm[2], g_base[2], g_probe[kSweep][2];
bool g_sweep = false, g_nofill = false;
Probe* g_expect[2] = {&g_warm[0], &g_warm[1]};  // where node 1's / node 2's next probe is logged
int g_tx_done = 0, g_tx_status[kMsgs] = {};
int g_special_status = -1, g_never_status = -1;
std::uint64_t g_special_when = 0, g_never_when = 0;

void on_free(void* arg, caddr_t msg) {
  const int node = static_cast<int>(reinterpret_cast<std::intptr_t>(arg));
  Probe& p = *g_expect[node];
  for (int i = 0; i < kLen; ++i) EXPECT_EQ(static_cast<unsigned char>(msg[i]), pattern(50 + node, i));
  p.arrived = nicsim_now_ns();
}
void on_tx(EP_TXD*, void* arg, int status) {
  g_tx_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_tx_done++;
}
void on_special(EP_TXD*, void*, int status) {
  g_special_status = status;
  g_special_when = nicsim_now_ns();
}
void on_never(EP_TXD*, void*, int status) {
  g_never_status = status;
  g_never_when = nicsim_now_ns();
}

void sleep_until(std::uint64_t ns) {
  if (nicsim_now_ns() < ns) nicsim_sleep_ns(ns - nicsim_now_ns());
}

// Sends one probe to node `n` (1 or 2), service kFree, and waits for it.
void probe(EP_XMTR* x, int n, Probe& p) {
  char buf[kLen];
  for (int i = 0; i < kLen; ++i) buf[i] = static_cast<char>(pattern(50 + n - 1, i));
  g_expect[n - 1] = &p;
  p.sent = nicsim_now_ns();
  EXPECT_EQ(ep_transmit_small(x, n, kFree, EP_NO_INTERRUPT, 0, nullptr, nullptr, buf, kLen), ESUCCESS);
  EXPECT_TRUE(wait_until([&p] { return p.arrived != 0; }, 1000));
  // Collect it now, so every probe's transmit finds the same (no) polled
  // transmits to collect: the same CPU time before its DMA.
  nicsim_sleep_ns(5000);
  ep_poll_transmits(x);
}

int sender() {
  EP_XMTR* x = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, kLen);
  EP_XMTR* sx = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SPECIAL, kLen);
  if (nicsim_barrier() != 0) return 1;
  // Circuits to both nodes first (a first message sets one up).
  probe(x, 1, g_warm[0]);
  probe(x, 2, g_warm[1]);
  sleep_until(kBaseAtNs);
  probe(x, 1, g_base[0]);
  probe(x, 2, g_base[1]);
  sleep_until(kFillAtNs);
  char buf[kLen];
  for (int m = 0; m < (g_nofill ? 0 : kMsgs); ++m) {
    for (int i = 0; i < kLen; ++i) buf[i] = static_cast<char>(pattern(m, i));
    buf[0] = static_cast<char>(m);
    EXPECT_EQ(ep_transmit_small(x, 1, kFull, 0, 0, on_tx, reinterpret_cast<void*>(std::intptr_t{m}), buf, kLen),
              ESUCCESS);
  }
  if (g_nofill) {
    for (int k = 0; k < kProbes; ++k) {
      sleep_until(kProbeAtNs[k]);
      probe(x, 1, g_probe[k][0]);
      probe(x, 2, g_probe[k][1]);
    }
    return nicsim_barrier() != 0;
  }
  std::memset(buf, 'S', kLen);
  const std::uint64_t special_sent = nicsim_now_ns();
  EXPECT_EQ(ep_transmit_small(sx, 1, kFull, 0, kSpecialTimeoutNs, on_special, nullptr, buf, kLen), ESUCCESS);
  std::memset(buf, 'N', kLen);
  EXPECT_EQ(ep_transmit_small(x, 2, kNever, 0, 0, on_never, nullptr, buf, kLen), ESUCCESS);
  for (int k = 0; k < (g_sweep ? kSweep : kProbes); ++k) {
    sleep_until(g_sweep ? kSweepFromNs + k * kSweepStepNs : kProbeAtNs[k]);
    probe(x, 1, g_probe[k][0]);
    probe(x, 2, g_probe[k][1]);
  }
  EXPECT_TRUE(wait_until([] { return g_tx_done == kMsgs; }, 5000));
  for (int m = 0; m < kMsgs; ++m) EXPECT_EQ(g_tx_status[m], ESUCCESS) << "message " << m;
  EXPECT_EQ(g_special_status, ETIMEDOUT);
  // At its timeout (the host timer's interrupt entry and handler on top).
  EXPECT_GE(g_special_when - special_sent, kSpecialTimeoutNs);
  EXPECT_LT(g_special_when - special_sent, kSpecialTimeoutNs + 5000);
  // Nothing refused is left anywhere: the end marker is the next message.
  nicsim_sleep_ns(1000000);
  std::memset(buf, 0, kLen);
  buf[0] = kEnd;
  EXPECT_EQ(ep_transmit_small(x, 1, kFull, EP_NO_INTERRUPT, 0, nullptr, nullptr, buf, kLen), ESUCCESS);
  if (nicsim_barrier() != 0) return 1;
  // Node 2's link went down at 3 ms: the message it never took fails.
  EXPECT_TRUE(wait_until([] { return g_never_status >= 0; }, 10000));
  EXPECT_EQ(g_never_status, ENETRESET);
  EXPECT_GE(g_never_when, 3000000u);
  EXPECT_LT(g_never_when, 4000000u);
  return 0;
}

int full_receiver() {
  EP_RCVR* full = ep_install_small_rcvr(0, kFull, EP_SVC_TYPE_SMALL, kLen, kCap, nullptr, nullptr);
  EP_RCVR* free = ep_install_small_rcvr(0, kFree, EP_SVC_TYPE_SMALL, kLen, 8, on_free, reinterpret_cast<void*>(0));
  if (!full || !free || nicsim_barrier() != 0) return 1;
  if (g_nofill) return nicsim_barrier() != 0;
  sleep_until(kDrainAtNs);
  bool seen[kMsgs] = {};
  for (int k = 0; k < kMsgs; ++k) {
    caddr_t m = nullptr;
    EXPECT_EQ(ep_waitfor_small_message(full, &m), ESUCCESS);
    const int id = static_cast<unsigned char>(m[0]);
    if (id >= kMsgs) {
      ADD_FAILURE() << "unexpected message " << id;
      ep_consume_small_message(full, &m);
      continue;
    }
    EXPECT_FALSE(seen[id]) << "message " << id << " arrived twice";
    seen[id] = true;
    if (k < kCap) {
      EXPECT_EQ(id, k) << "the first kCap filled the queue in order";
    }
    for (int i = 1; i < kLen; ++i) EXPECT_EQ(static_cast<unsigned char>(m[i]), pattern(id, i)) << id;
    ep_consume_small_message(full, &m);
  }
  caddr_t m = nullptr;
  EXPECT_EQ(ep_waitfor_small_message(full, &m), ESUCCESS);
  EXPECT_EQ(m[0], kEnd) << "a refused message arrived twice, or the timed-out special one arrived";
  ep_consume_small_message(full, &m);
  if (nicsim_barrier() != 0) return 1;
  return 0;
}

int other_receiver() {
  EP_RCVR* free = ep_install_small_rcvr(0, kFree, EP_SVC_TYPE_SMALL, kLen, 8, on_free, reinterpret_cast<void*>(1));
  if (!free || nicsim_barrier() != 0) return 1;
  if (nicsim_barrier() != 0) return 1;
  return 0;
}

int full_queue_prog(int argc, char** argv) {
  g_sweep = argc > 1 && std::strcmp(argv[1], "sweep") == 0;
  g_nofill = argc > 1 && std::strcmp(argv[1], "nofill") == 0;
  switch (ep_nodeid()) {
    case 0:
      return sender();
    case 1:
      return full_receiver();
    default:
      return other_receiver();
  }
}
const BuiltinProgram reg("ep_test_full_queue", full_queue_prog, "test");

std::string scenario(const std::string& args) {
  return R"(
    name: "ep_full_queue"
    stop_time: "20ms"
    topology { elite_fat_tree { nodes: 3 } node_param { key: "bus.profile" value: "pci-66" } }
    workload { program: "ep_test_full_queue" nodes: "h*" )" +
         args + R"( }
    fault { at: "3ms" link: "h2--el0_0" link_down: true }
  )";
}

}  // namespace

TEST(EpFullQueue, RefusedMessagesDelayNothingElseThenArriveExactlyOnce) {
  run_text(scenario(""));
  const std::uint64_t base1 = g_base[0].arrived - g_base[0].sent, base2 = g_base[1].arrived - g_base[1].sent;
  EXPECT_EQ(base1, kBaseNs);
  EXPECT_EQ(base2, kBaseNs);
  for (int k = 0; k < kProbes; ++k) {
    EXPECT_EQ(g_probe[k][0].arrived - g_probe[k][0].sent, base1) << "probe " << k << " to node 1";
    EXPECT_EQ(g_probe[k][1].arrived - g_probe[k][1].sent, base2) << "probe " << k << " to node 2";
  }
}

// The same probes without the full queue (and without the special and the
// never-taken messages): the same latencies.
TEST(EpFullQueue, ReferenceRunWithoutTheFullQueueHasTheSameProbeLatencies) {
  run_text(scenario(R"(args: "nofill")"));
  for (int k = 0; k < kProbes; ++k) {
    EXPECT_EQ(g_probe[k][0].arrived - g_probe[k][0].sent, kBaseNs) << "probe " << k << " to node 1";
    EXPECT_EQ(g_probe[k][1].arrived - g_probe[k][1].sent, kBaseNs) << "probe " << k << " to node 2";
  }
}

TEST(EpFullQueue, DuringRetryRoundsOtherMessagesWaitAtMostOneAttemptPerRefusedDma) {
  run_text(scenario(R"(args: "sweep")"));
  const std::uint64_t base = g_base[0].arrived - g_base[0].sent;
  int unchanged = 0;
  for (int k = 0; k < kSweep; ++k)
    for (int n = 0; n < 2; ++n) {
      const std::uint64_t lat = g_probe[k][n].arrived - g_probe[k][n].sent;
      EXPECT_GE(lat + 1000, base) << "probe " << k << " to node " << n + 1;
      EXPECT_LE(lat, base + kRefusedDmas * kOneAttemptNs) << "probe " << k << " to node " << n + 1;
      unchanged += lat == base;
    }
  EXPECT_GE(unchanged, kSweep * 2 * 2 / 3);
}
