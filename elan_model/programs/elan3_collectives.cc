// Driver-level collectives on the Elan3's hardware broadcast and network
// conditionals (docs/elan3.md, "Network conditionals"):
//
//  - elan3_barrier: QsNet's hardware barrier. Every node writes its barrier
//    number into a word in its card's SDRAM; the root (rank 0) tests "word >=
//    number" on the whole machine with one ConditionalBroadcast, whose
//    tokens the Elite switches combine, until it holds everywhere, then
//    releases everyone with a broadcast set-event. Result: barrier_us, the
//    mean time per barrier at the root, and tests_per_barrier.
//  - elan3_bcast: a broadcast DMA of each size from the root's node memory to
//    every node (the root too): lat_<size>, from the root's issue to the last
//    node seeing its event (mean over --iters, each started when every node
//    is ready, by a network conditional); bw_<size>, --stream broadcasts back
//    to back, from the first issue to the last one's source event; every
//    node's copy is checked byte by byte.
//
// Both need the workload to be every node of the Elan network.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/sim.h"
#include "elan_model/driver/elan3_dev.h"
#include "world/programs.h"

namespace nicsim::elan3 {
namespace {

constexpr std::uint32_t kTagLayout = 0x3100, kTagArrivals = 0x3101;
constexpr std::uint32_t kWarmup = 5;
constexpr std::uint32_t kMaxIters = NICSIM_MGMT_MAX / sizeof(std::uint64_t);
constexpr Tick kGiveUp = 100 * kMs;  // a wait this long means the network lost the DMA

struct Options {
  std::vector<std::uint32_t> sizes{8, 256, 4096, 65536, 262144};
  std::uint32_t iters = 100;
  std::uint32_t stream = 16;
  std::uint64_t late_ns = 0;  // elan3_barrier: the last rank enters each barrier this much later
};

// The latest a rank may enter a barrier after the others (--late).
constexpr std::uint64_t kMaxLateNs = 1000000000;

bool parse(int argc, char** argv, const char* program, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    std::uint64_t v = 0, sizes[64];
    std::uint32_t n = 0;
    int got;
    if ((got = nicsim_arg_u64(a, "--iters=", 1, kMaxIters, &v)) != 0) {
      o.iters = static_cast<std::uint32_t>(v);
    } else if ((got = nicsim_arg_u64(a, "--stream=", 0, 65536, &v)) != 0) {
      o.stream = static_cast<std::uint32_t>(v);
    } else if ((got = nicsim_arg_u64(a, "--late=", 0, kMaxLateNs, &v)) != 0) {
      o.late_ns = v;
    } else if ((got = nicsim_arg_u64_list(a, "--sizes=", 1, dma::kMaxSize, sizes, 64, &n)) != 0) {
      o.sizes.assign(sizes, sizes + (got > 0 ? n : 0));
    } else {
      nicsim_log("%s: unknown argument %s (--iters=N, --sizes=A,B,..., --stream=N, --late=NS)", program, argv[i]);
      return false;
    }
    if (got < 0) return false;
  }
  return true;
}

int barrier_check(int argc, char** argv) {
  Options o;
  return parse(argc, argv, "elan3_barrier", o) ? 0 : -1;
}

int bcast_check(int argc, char** argv) {
  Options o;
  return parse(argc, argv, "elan3_bcast", o) ? 0 : -1;
}

// The driver of a node whose workload is every node of its Elan network.
Elan3Dev* machine_driver(const char* program) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) {
    nicsim_log("%s: no Elan3 on this node", program);
    return nullptr;
  }
  if (nicsim_workload_size() != d->num_nodes() || d->num_nodes() < 2) {
    nicsim_log("%s: the workload must be every node of the Elan network (%u nodes; it has %u)", program, d->num_nodes(),
               nicsim_workload_size());
    return nullptr;
  }
  return d;
}

// What a broadcast reaches at one Elan address on every node. The root
// checks the others' against its own: the allocators ran the same calls in
// the same order everywhere, so they agree unless something is wrong.
struct Layout {
  E3Addr word = 0, event = 0, buffer = 0;
};

bool layouts_agree(const Layout& mine) {
  if (nicsim_workload_rank() != 0)
    return nicsim_mgmt_send(nicsim_workload_node(0), kTagLayout, &mine, sizeof mine) == 0;
  for (std::uint32_t r = 1; r < nicsim_workload_size(); ++r) {
    Layout other;
    if (nicsim_mgmt_recv(nicsim_workload_node(r), kTagLayout, &other, sizeof other, nullptr, 0) != sizeof other ||
        std::memcmp(&other, &mine, sizeof mine) != 0) {
      nicsim_log("rank %u's Elan addresses differ from the root's", r);
      return false;
    }
  }
  return true;
}

// Polls an event (each look charges cost.elan3_poll) until it fires; false
// after kGiveUp.
bool poll(Elan3Dev& d, const ElanMem& ev) {
  const Tick until = now() + kGiveUp;
  while (!d.event_fired(ev))
    if (now() > until) return false;
  return true;
}

// The root's network conditional over the whole machine: "the word at
// `word` is at least `value` on every node", by one ConditionalBroadcast.
class MachineTest {
 public:
  MachineTest(Elan3Dev& d, E3Addr word)
      : d_(d),
        word_(word),
        test_(d.alloc_card(dma::kTestSize, 16, 0)),
        yes_(d.alloc_event(false)),
        no_(d.alloc_event(false)) {}
  bool ok() const { return test_ && yes_ && no_; }
  // 1: held everywhere; 0: not; -1: the network lost it.
  int all_at_least(std::uint64_t value) {
    std::uint8_t block[dma::kTestSize] = {};
    put(block, dma::test_value, value);
    put(block, dma::test_condition, static_cast<std::uint32_t>(dma::Condition::GreaterOrEqual));
    d_.store(test_, 0, block, sizeof block);
    d_.prime_event(yes_, 1);
    d_.prime_event(no_, 1);
    DmaRequest r;
    r.opcode = dma::OpCode::ConditionalBroadcast;
    r.size = dma::kTestSize;
    r.source = test_.elan;
    r.dest = word_;
    r.src_event = yes_.elan;
    r.dest_event = no_.elan;
    r.dest_node = 0;
    r.dest_node_last = d_.num_nodes() - 1;
    if (d_.issue_dma(r) != DevStatus::Ok) return -1;
    for (const Tick until = now() + kGiveUp; now() <= until;) {
      if (d_.event_fired(yes_)) return 1;
      if (d_.event_fired(no_)) return 0;
    }
    return -1;
  }

 private:
  Elan3Dev& d_;
  E3Addr word_;
  ElanMem test_, yes_, no_;
};

// Tests until every node's word is at least `value`; the tests it took, or
// 0 when the network lost one.
std::uint32_t wait_all_at_least(MachineTest& test, std::uint64_t value) {
  for (std::uint32_t tests = 1;; ++tests) {
    const int held = test.all_at_least(value);
    if (held < 0) return 0;
    if (held > 0) return tests;
  }
}

// A broadcast from this node to nodes [first, last of the machine].
DevStatus broadcast(Elan3Dev& d, std::uint32_t size, E3Addr source, E3Addr dest, E3Addr dest_event, E3Addr src_event,
                    std::uint32_t first = 0) {
  DmaRequest r;
  r.opcode = dma::OpCode::NormalBroadcast;
  r.size = size;
  r.source = source;
  r.dest = dest;
  r.dest_event = dest_event;
  r.src_event = src_event;
  r.dest_node = first;
  r.dest_node_last = d.num_nodes() - 1;
  return d.issue_dma(r);
}

int barrier_main(int argc, char** argv) {
  Options o;
  Elan3Dev* d = parse(argc, argv, "elan3_barrier", o) ? machine_driver("elan3_barrier") : nullptr;
  if (!d) return 2;
  const bool root = nicsim_workload_rank() == 0;
  const bool late = nicsim_workload_rank() + 1 == nicsim_workload_size();
  const ElanMem word = d->alloc_card(8, 8, perm::kRemoteRead);
  const ElanMem release = d->alloc_event(true);
  if (!word || !release || !layouts_agree({word.elan, release.elan, 0})) return 1;
  MachineTest test(*d, word.elan);
  if (root && !test.ok()) return 1;
  nicsim_barrier();
  Tick start = 0;
  std::uint64_t tests = 0;
  for (std::uint64_t k = 1; k <= kWarmup + o.iters; ++k) {
    if (k == kWarmup + 1) start = now();
    d->prime_event(release, 1);
    if (late && o.late_ns) nicsim_sleep_ns(o.late_ns);
    d->store(word, 0, &k, sizeof k);
    if (root) {
      const std::uint32_t took = wait_all_at_least(test, k);
      if (took == 0 || broadcast(*d, 0, 0, 0, release.elan, 0) != DevStatus::Ok) {
        nicsim_fail("the network lost a test or the release");
        return 1;
      }
      if (k > kWarmup) tests += took;
    }
    if (!poll(*d, release)) {
      nicsim_fail("barrier: no release");
      return 1;
    }
  }
  if (root) {
    nicsim_result("barrier_us", static_cast<double>(now() - start) / o.iters / kUs, "us");
    nicsim_result("tests_per_barrier", static_cast<double>(tests) / o.iters, "tests");
  }
  nicsim_barrier();
  return 0;
}
const BuiltinProgram barrier_program(
    "elan3_barrier", barrier_main,
    "QsNet hardware barrier: network conditionals and a broadcast release "
    "(--iters=N, --late=NS: the last rank enters late); every node of the Elan network",
    barrier_check);

std::uint8_t pattern(std::uint32_t size, std::uint32_t i) { return static_cast<std::uint8_t>(i * 7 + size * 13 + 1); }

// The buffers and events of elan3_bcast on one node.
struct BcastNode {
  Elan3Dev& d;
  std::vector<std::uint8_t*> host;  // [0] the source (root), [1] the landing buffer
  E3Addr source = 0, landing = 0;
  ElanMem ready, arrived, sent;
};

bool map_buffers(BcastNode& n, std::uint32_t max) {
  ElanRange range;
  for (int i = 0; i < 2; ++i) {
    auto* p = static_cast<std::uint8_t*>(nicsim_alloc(max, 64));
    if (!p) return false;
    n.host.push_back(p);
    const std::uint32_t perm = i == 0 ? perm::kLocalRead : perm::kRemoteWrite;
    if (n.d.map(p, max, perm, 0, 0, true, &range, i == 0 ? &n.source : &n.landing) != DevStatus::Ok) return false;
  }
  n.ready = n.d.alloc_card(8, 8, perm::kRemoteRead);
  n.arrived = n.d.alloc_event(true);
  n.sent = n.d.alloc_event(false);
  return n.ready && n.arrived && n.sent;
}

// --iters broadcasts of `size`, each issued when every node is ready:
// every node's arrival times go to the root, which averages the latest.
bool bcast_latency(BcastNode& n, MachineTest& test, std::uint32_t size, const Options& o, std::uint64_t& ready_no) {
  const bool root = nicsim_workload_rank() == 0;
  std::vector<std::uint64_t> issued(o.iters), arrived(o.iters);
  for (std::uint32_t k = 0; k < kWarmup + o.iters; ++k) {
    ++ready_no;
    n.d.prime_event(n.arrived, 1);
    n.d.store(n.ready, 0, &ready_no, sizeof ready_no);
    if (root) {
      if (wait_all_at_least(test, ready_no) == 0) return false;
      if (k >= kWarmup) issued[k - kWarmup] = now();
      if (broadcast(n.d, size, n.source, n.landing, n.arrived.elan, 0) != DevStatus::Ok) return false;
    }
    if (!poll(n.d, n.arrived)) return false;
    if (k >= kWarmup) arrived[k - kWarmup] = now();
  }
  const std::size_t bytes = o.iters * sizeof(std::uint64_t);
  if (!root) return nicsim_mgmt_send(nicsim_workload_node(0), kTagArrivals, arrived.data(), bytes) == 0;
  std::vector<std::uint64_t> theirs(o.iters);
  for (std::uint32_t r = 1; r < nicsim_workload_size(); ++r) {
    if (nicsim_mgmt_recv(nicsim_workload_node(r), kTagArrivals, theirs.data(), bytes, nullptr, 0) !=
        static_cast<long>(bytes))
      return false;
    for (std::uint32_t k = 0; k < o.iters; ++k) arrived[k] = std::max(arrived[k], theirs[k]);
  }
  double sum = 0;
  for (std::uint32_t k = 0; k < o.iters; ++k) sum += static_cast<double>(arrived[k] - issued[k]);
  nicsim_result(("lat_" + std::to_string(size)).c_str(), sum / o.iters / kUs, "us");
  return true;
}

// --stream broadcasts of `size` back to back from the root; the last one's
// source event ends the time.
bool bcast_stream(BcastNode& n, std::uint32_t size, const Options& o) {
  if (nicsim_workload_rank() != 0 || o.stream == 0) return true;
  // The others only, when there are two or more: the root's own copy would
  // share its host bus with the reads of the data.
  const std::uint32_t stream_first = n.d.num_nodes() > 2 ? 1 : 0;
  n.d.prime_event(n.sent, 1);
  const Tick start = now();
  for (std::uint32_t i = 0; i < o.stream; ++i)
    if (broadcast(n.d, size, n.source, n.landing, 0, i + 1 == o.stream ? n.sent.elan : 0, stream_first) !=
        DevStatus::Ok)
      return false;
  if (!poll(n.d, n.sent)) return false;
  const double secs = static_cast<double>(now() - start) / kSec;
  nicsim_result(("bw_" + std::to_string(size)).c_str(), static_cast<double>(size) * o.stream / secs / 1e6, "MB/s");
  return true;
}

int bcast_main(int argc, char** argv) {
  Options o;
  Elan3Dev* d = parse(argc, argv, "elan3_bcast", o) ? machine_driver("elan3_bcast") : nullptr;
  if (!d) return 2;
  std::uint32_t max = 0;
  for (std::uint32_t s : o.sizes) max = std::max(max, s);
  BcastNode n{*d, {}, 0, 0, {}, {}, {}};
  if (!map_buffers(n, max) || !layouts_agree({n.ready.elan, n.arrived.elan, n.landing})) return 1;
  MachineTest test(*d, n.ready.elan);
  if (nicsim_workload_rank() == 0 && !test.ok()) return 1;
  std::uint64_t ready_no = 0;
  for (std::uint32_t size : o.sizes) {
    for (std::uint32_t i = 0; i < size; ++i) n.host[0][i] = pattern(size, i);
    nicsim_barrier();
    if (!bcast_latency(n, test, size, o, ready_no) || !bcast_stream(n, size, o)) {
      nicsim_fail("elan3_bcast: the network lost a broadcast");
      return 1;
    }
    nicsim_barrier();
    for (std::uint32_t i = 0; i < size; ++i)
      if (n.host[1][i] != pattern(size, i)) {
        nicsim_fail(
            ("byte " + std::to_string(i) + " of the " + std::to_string(size) + "-byte broadcast differs").c_str());
        return 1;
      }
  }
  nicsim_barrier();
  return 0;
}
const BuiltinProgram bcast_program("elan3_bcast", bcast_main,
                                   "broadcast DMA to every node: latency and streamed throughput by size "
                                   "(--sizes=A,B,.. --iters=N --stream=N); every node of the Elan network",
                                   bcast_check);

}  // namespace
}  // namespace nicsim::elan3
