// The Elan IP driver's entry points (elan3/eip.h) against bad arguments,
// as one table of (entry point, argument class, answer, counter): attach
// and detach, the write side's put procedure (eip_wput, and eip_output as
// IP's putnext), eip_fill_header, stream and IP queue opening, and the
// read queues' eip_getq_wait, with NULL, detached, wrong-type and another
// node's devices and queues, messages shorter than the link header or
// longer than the largest datagram, destinations the network does not
// have, SAPs that are 802.3 lengths; the same from interrupt context; and,
// two-sided, what the other node sends that no stream takes (an unbound
// SAP, a frame shorter than the link header, sent as a raw Kernel Comms
// message). The driver has no DLPI primitives (binding is eip_open_stream,
// unbinding eip_detach): the answers are its functions' (eip.h), each drop
// counted where a driver counts it (oerrors, ierrors, nostream). Nothing
// is reported as a simulation error; after the rows both devices still
// carry a datagram, checked byte for byte.
#include <elan3/eip.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/sim.h"
#include "ep/tests/ep_test_util.h"
#include "host/host.h"

namespace nicsim::ep::testing {
namespace {

constexpr std::uint64_t kWaitNs = 20'000'000;
constexpr std::uint16_t kSap = 0x88b6, kUnbound = 0x88b7;

struct Side {
  EIP_DEV* dev = nullptr;
  queue_t* ipq = nullptr;
  EIP_STREAM* stream = nullptr;
  int peer = -1;
};
Side g_side[2];
EIP_DEV* g_detached = nullptr;  // rank 0's first device, detached

// An answer: the call's return value and how a counter of the caller's
// device moved.
struct Answer {
  long value = 0;
  std::uint64_t oerrors = 0, ierrors = 0, nostream = 0;
  bool operator==(const Answer&) const = default;
};

struct Row {
  const char* call;
  const char* arg_class;
  Answer want;
  std::function<long()> fn;
};

struct Outcome {
  int rows = 0, irq_rows = 0, rx_rows = 0;
  std::vector<std::string> wrong;
  bool irq_done = false, irq_datagram = false, final_datagrams = false;
};
Outcome g_out;

std::string show(const Answer& a) {
  return std::to_string(a.value) + " (oerrors +" + std::to_string(a.oerrors) + ", ierrors +" +
         std::to_string(a.ierrors) + ", nostream +" + std::to_string(a.nostream) + ")";
}

void run_rows(EIP_DEV* dev, const std::vector<Row>& rows, int& count) {
  for (const Row& r : rows) {
    const EIP_STATS before = dev->dev_stats;
    const std::size_t errors = Sim::get().errors().all().size();
    Answer got;
    got.value = r.fn();
    got.oerrors = dev->dev_stats.oerrors - before.oerrors;
    got.ierrors = dev->dev_stats.ierrors - before.ierrors;
    got.nostream = dev->dev_stats.nostream - before.nostream;
    const bool reported = Sim::get().errors().all().size() > errors;
    ++count;
    if (!(got == r.want) || reported)
      g_out.wrong.push_back(std::string(r.call) + " with " + r.arg_class + ": got " + show(got) +
                            (reported ? " (and a simulation error)" : "") + ", want " + show(r.want));
  }
}

// A message of `len` datagram bytes (the pattern of `seq`) with room for
// the link header in front (`room` bytes).
mblk_t* datagram(std::uint32_t seq, std::uint32_t len, std::uint32_t room = EIP_HEADER_SIZE) {
  mblk_t* m = allocb(room + len, BPRI_MED);
  if (!m) return nullptr;
  m->b_rptr += room;
  for (std::uint32_t i = 0; i < len; ++i) m->b_rptr[i] = pattern(seq, i);
  m->b_wptr = m->b_rptr + len;
  return m;
}

mblk_t* framed(EIP_DEV* dev, int dest, std::uint32_t seq, std::uint32_t len, std::uint16_t sap = ETHERTYPE_IP) {
  mblk_t* m = datagram(seq, len);
  if (m && eip_fill_header(dev, m, dest, sap) != 0) {
    freemsg(m);
    return nullptr;
  }
  return m;
}

bool is_datagram(mblk_t* m, std::uint32_t seq, std::uint32_t len) {
  bool ok = m && msgdsize(m) == len && !m->b_cont;
  for (std::uint32_t i = 0; ok && i < len; ++i) ok = m->b_rptr[i] == pattern(seq, i);
  if (m) freemsg(m);
  return ok;
}

Answer value(long v) { return Answer{v, 0, 0, 0}; }
Answer dropped_out(long v) { return Answer{v, 1, 0, 0}; }

// eip_fill_header's answer; the message is freed.
long fill(EIP_DEV* dev, mblk_t* m, int dest) {
  const long r = eip_fill_header(dev, m, dest, ETHERTYPE_IP);
  if (m) freemsg(m);
  return r;
}

std::vector<Row> attach_rows(Side& s, Side& other) {
  return {
      {"eip_attach", "instance -1", value(0), [] { return eip_attach(-1) != nullptr; }},
      {"eip_attach", "instance 1 (no second rail)", value(0), [] { return eip_attach(1) != nullptr; }},
      {"eip_attach", "instance 0 already attached", value(0), [] { return eip_attach(0) != nullptr; }},
      {"eip_detach", "NULL", value(0), [] { return eip_detach(nullptr), 0L; }},
      {"eip_detach", "a detached device", value(0), [] { return eip_detach(g_detached), 0L; }},
      {"eip_detach", "another node's device", value(0), [&other] { return eip_detach(other.dev), 0L; }},
      {"eip_detach", "a stream as device", value(0),
       [&s] { return eip_detach(reinterpret_cast<EIP_DEV*>(s.stream)), 0L; }},
      {"eip_open_stream", "NULL device", value(0), [] { return eip_open_stream(nullptr, kSap) != nullptr; }},
      {"eip_open_stream", "a detached device", value(0), [] { return eip_open_stream(g_detached, kSap) != nullptr; }},
      {"eip_open_stream", "another node's device", value(0),
       [&other] { return eip_open_stream(other.dev, kSap) != nullptr; }},
      {"eip_open_stream", "SAP 0x05dc (an 802.3 length)", value(0),
       [&s] { return eip_open_stream(s.dev, 0x05dc) != nullptr; }},
      {"eip_ip_queue", "NULL device", value(0), [] { return eip_ip_queue(nullptr) != nullptr; }},
      {"eip_ip_queue", "a detached device", value(0), [] { return eip_ip_queue(g_detached) != nullptr; }},
      {"eip_ip_queue", "another node's device", value(0), [&other] { return eip_ip_queue(other.dev) != nullptr; }},
      {"eip_getq_wait", "NULL queue", value(0), [] { return eip_getq_wait(nullptr, 1000) != nullptr; }},
  };
}

std::vector<Row> output_rows(Side& s, Side& other) {
  return {
      {"eip_fill_header", "NULL device", value(-1), [&s] { return fill(nullptr, datagram(1, 100), s.peer); }},
      {"eip_fill_header", "a detached device", value(-1), [&s] { return fill(g_detached, datagram(1, 100), s.peer); }},
      {"eip_fill_header", "another node's device", value(-1),
       [&s, &other] { return fill(other.dev, datagram(1, 100), s.peer); }},
      {"eip_fill_header", "NULL message", value(-1), [&s] { return fill(s.dev, nullptr, s.peer); }},
      {"eip_fill_header", "no room for the header", value(-1),
       [&s] { return fill(s.dev, datagram(1, 100, 4), s.peer); }},
      {"eip_fill_header", "destination -2", value(-1), [&s] { return fill(s.dev, datagram(1, 100), -2); }},
      {"eip_fill_header", "destination 65536", value(-1), [&s] { return fill(s.dev, datagram(1, 100), 65536); }},
      {"eip_output", "NULL device", value(0), [&s] { return eip_output(nullptr, framed(s.dev, s.peer, 1, 100)); }},
      {"eip_output", "a detached device", value(0),
       [&s] { return eip_output(g_detached, framed(s.dev, s.peer, 1, 100)); }},
      {"eip_output", "another node's device", value(0),
       [&s, &other] { return eip_output(other.dev, framed(s.dev, s.peer, 1, 100)); }},
      {"eip_output", "a stream as device", value(0),
       [&s] { return eip_output(reinterpret_cast<EIP_DEV*>(s.stream), framed(s.dev, s.peer, 1, 100)); }},
      {"eip_output", "NULL message", value(0), [&s] { return eip_output(s.dev, nullptr); }},
      {"eip_wput", "NULL queue", value(0), [&s] { return eip_wput(nullptr, framed(s.dev, s.peer, 1, 100)); }},
      {"eip_wput", "a stream's read queue", value(0),
       [&s] { return eip_wput(&s.stream->st_rq, framed(s.dev, s.peer, 1, 100)); }},
      {"eip_wput", "another node's write queue", value(0),
       [&s, &other] { return eip_wput(&other.dev->dev_wq, framed(s.dev, s.peer, 1, 100)); }},
      {"eip_output", "10 bytes, shorter than the link header", dropped_out(0),
       [&s] {
         mblk_t* m = datagram(1, 10);
         return eip_output(s.dev, m);
       }},
      {"eip_output", "one byte over the largest datagram", dropped_out(0),
       [&s] { return eip_output(s.dev, framed(s.dev, s.peer, 1, EIP_MAX_SDU + 1)); }},
      // eip_start cannot start it (Kernel Comms answers EINVAL) and counts it.
      {"eip_output", "a node the network does not have", dropped_out(1),
       [&s] { return eip_output(s.dev, framed(s.dev, ep_numnodes() + 3, 1, 100)); }},
  };
}

// From a host timer: attaching, detaching and opening a stream would sleep
// and refuse; reading a queue does not wait; sending works.
std::vector<Row> irq_rows(Side& s) {
  return {
      {"eip_attach", "interrupt context", value(0), [] { return eip_attach(0) != nullptr; }},
      {"eip_detach", "interrupt context", value(0), [&s] { return eip_detach(s.dev), 0L; }},
      {"eip_getq_wait", "interrupt context, an empty queue (no wait)", value(0),
       [&s] { return eip_getq_wait(s.ipq, 0) != nullptr; }},
      {"eip_open_stream", "interrupt context", value(0), [&s] { return eip_open_stream(s.dev, kSap + 2) != nullptr; }},
      {"eip_output", "interrupt context (allowed)", value(1),
       [&s] { return eip_output(s.dev, framed(s.dev, s.peer, 7, 300)); }},
  };
}

// What rank 1 sends rank 0 that no stream takes, each waited for by its
// counter (Kernel Comms orders nothing).
bool send_raw_short(int dest) {
  EP_XMTR* x = ep_alloc_large_xmtr(0);
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(64, 64));
  std::memset(buf, 0xee, 64);
  ELAN3_DMA_HANDLE* h = nullptr;
  const E3_Addr a = map(ep_xmtr_dma_state(x), buf, 64, ELAN_PERM_REMOTEREAD, &h);
  EP_IOVEC iov{a, 4};
  volatile int done = 0;
  const bool ok =
      a && ep_transmit_large(
               x, dest, EP_SVC_LARGE_EIP, 0, [](EP_TXD*, void* arg, int) { *static_cast<volatile int*>(arg) = 1; },
               const_cast<int*>(&done), &iov, 1) == ESUCCESS;
  wait_until([&] {
    ep_poll_transmits(x);
    return done != 0;
  });
  if (h) elan3_dma_unmap(ep_xmtr_dma_state(x), h);
  ep_free_large_xmtr(x);
  nicsim_free(buf);
  return ok && done;
}

void rx_rows(Side& s) {
  struct Rx {
    const char* what;
    Answer want;
  };
  const Rx rows[] = {{"a datagram to an unbound SAP", Answer{0, 0, 0, 1}},
                     {"a 4-byte Kernel Comms message (shorter than the link header)", Answer{0, 0, 1, 0}}};
  for (const Rx& r : rows) {
    const EIP_STATS before = s.dev->dev_stats;
    nicsim_barrier();  // rank 1 sends it
    wait_until([&] { return s.dev->dev_stats.nostream + s.dev->dev_stats.ierrors > before.nostream + before.ierrors; });
    Answer got{0, s.dev->dev_stats.oerrors - before.oerrors, s.dev->dev_stats.ierrors - before.ierrors,
               s.dev->dev_stats.nostream - before.nostream};
    ++g_out.rx_rows;
    if (!(got == r.want))
      g_out.wrong.push_back(std::string("receiving ") + r.what + ": got " + show(got) + ", want " + show(r.want));
  }
}

int rank0(Side& s) {
  Side& other = g_side[1];
  run_rows(s.dev, attach_rows(s, other), g_out.rows);
  run_rows(s.dev, output_rows(s, other), g_out.rows);
  host::Timer t(*host::Host::current_host(), "eip_abuse", [&s] {
    run_rows(s.dev, irq_rows(s), g_out.irq_rows);
    g_out.irq_done = true;
  });
  t.start(1000);
  wait_until([] { return g_out.irq_done; });
  nicsim_barrier();  // rank 1 has the datagram sent from interrupt context
  rx_rows(s);
  // Both devices still carry a datagram.
  nicsim_barrier();
  g_out.final_datagrams = is_datagram(eip_getq_wait(s.ipq, kWaitNs), 9, 1000);
  return eip_output(s.dev, framed(s.dev, s.peer, 8, 1000)) == 1 ? 0 : 1;
}

int rank1(Side& s) {
  g_out.irq_datagram = is_datagram(eip_getq_wait(s.ipq, kWaitNs), 7, 300);
  nicsim_barrier();
  nicsim_barrier();
  if (eip_output(s.dev, framed(s.dev, s.peer, 2, 200, kUnbound)) != 1) return 1;
  nicsim_barrier();
  if (!send_raw_short(s.peer)) return 2;
  nicsim_barrier();
  if (eip_output(s.dev, framed(s.dev, s.peer, 9, 1000)) != 1) return 3;
  g_out.final_datagrams = g_out.final_datagrams && is_datagram(eip_getq_wait(s.ipq, kWaitNs), 8, 1000);
  return 0;
}

int abuse_prog(int, char**) {
  const std::uint32_t rank = nicsim_workload_rank();
  Side& s = g_side[rank];
  if (rank == 0) {
    // A device attached and detached: its pointer is a freed device's. A
    // block of its size stays allocated until the end, so the next attach
    // cannot reuse the address.
    g_detached = eip_attach(0);
    if (!g_detached) return 1;
    eip_detach(g_detached);
  }
  void* hold = rank == 0 ? kmem_zalloc(sizeof(EIP_DEV), KM_SLEEP) : nullptr;
  s.dev = eip_attach(0);
  s.ipq = s.dev ? eip_ip_queue(s.dev) : nullptr;
  s.stream = s.dev ? eip_open_stream(s.dev, kSap) : nullptr;
  s.peer = peer_id();
  if (!s.ipq || !s.stream || s.peer < 0 || nicsim_barrier() != 0) return 1;
  const int rc = rank == 0 ? rank0(s) : rank1(s);
  wait_until([&s] {
    ep_poll_transmits(s.dev->dev_xmtr);
    return s.dev->dev_stats.tmdcnt == 0;
  });
  nicsim_barrier();
  eip_detach(s.dev);
  if (hold) kmem_free(hold, sizeof(EIP_DEV));
  return rc;
}
const BuiltinProgram reg_abuse("eip_abuse_probe", abuse_prog, "test: the EIP driver's entry points with bad arguments");

TEST(EipAbuse, EveryEntryPointAnswersBadArgumentsAsTheDriverDocumentsAndCountsEachDrop) {
  run_text(pair_scenario("eip_abuse_probe"));
  EXPECT_EQ(g_out.rows, 15 + 18);  // attach, detach, opening; output
  EXPECT_EQ(g_out.irq_rows, 5);
  EXPECT_EQ(g_out.rx_rows, 2);
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
  EXPECT_TRUE(g_out.irq_datagram) << "the datagram sent from interrupt context arrived intact";
  EXPECT_TRUE(g_out.final_datagrams) << "both devices still carry a datagram after the rows";
}

}  // namespace
}  // namespace nicsim::ep::testing
