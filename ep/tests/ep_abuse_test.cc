// Kernel Comms against bad arguments, as one table of (call, argument
// class, outcome): NULL, freed or removed, wrong-type and other-node
// handles, out-of-range services, sizes, counts and node numbers, calls in
// the wrong state, and calls from interrupt context that may not block.
//
// The outcome is the status the manual lists in the call's RETURN VALUES
// (ESUCCESS, ENOMEM, ECONNREFUSED, ENETRESET, EINVAL "the iovector is too
// big"), NULL where a call returns a handle, DDI_DMA_NOMAPPING for the
// mapping calls. Where the manual lists nothing for a case, the row says so
// and takes the closest listed code (EINVAL for a bad handle or argument).
// A call that returns nothing reports a bad handle as a simulation error
// (the kernel's panic, located) and does nothing: those rows expect the
// report, and every other row expects none.
//
// Node a (rank 0) runs the table; node b (rank 1) owns the "other node"
// handles. Both send each other one large message first, so each holds a
// completed receive descriptor.
#include <fmt/format.h>

#include "core/sim.h"
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSmallSvc = 40;    // a small receiver with a handler (runs the interrupt rows)
constexpr int kWaitSvc = 41;     // a small receiver without one (threads wait)
constexpr int kLargeSvc = 42;    // a large receiver with one completed receive
constexpr int kEmptySvc = 43;    // a large receiver with nothing queued
constexpr int kRemovedSvc = 44;  // receivers installed and removed again
constexpr int kVoid = -1000;     // the outcome of a call that returns nothing
constexpr int kNull = -1001;     // ... of a call that returned NULL
constexpr int kHandle = -1002;   // ... of a call that returned a handle
constexpr std::uint32_t kLen = 256;

// One node's objects. Live handles, and handles of objects freed before
// the table runs.
struct Objects {
  EP_XMTR *sx = nullptr, *spx = nullptr, *lx = nullptr, *freed_sx = nullptr, *freed_lx = nullptr;
  EP_RCVR *sr = nullptr, *wr = nullptr, *lr = nullptr, *er = nullptr, *removed_sr = nullptr, *removed_lr = nullptr;
  EP_RXD* rxd = nullptr;       // completed (Done): the large message from the peer
  EP_RXD* done_rxd = nullptr;  // completed and handed back (ep_complete_receive)
  ELAN3_DMA_STATE* dst = nullptr;
  ELAN3_DMA_HANDLE *mapped = nullptr, *unmapped = nullptr, *reserved = nullptr, *released = nullptr;
  unsigned char* mem = nullptr;  // 16 KiB of node memory
  int peer = -1;
};
Objects g_obj[2];  // per rank (one test per process)

struct Row {
  const char* call;
  const char* arg_class;
  int want;     // status, or kVoid / kNull / kHandle
  bool report;  // a simulation error is reported
  std::function<int()> fn;
};

int ptr(const void* p) { return p ? kHandle : kNull; }
template <typename F>
std::function<int()> v(F f) {
  return [f] {
    f();
    return kVoid;
  };
}

void on_small(void*, caddr_t);

// ---- installing and freeing ----------------------------------------------------------------

std::vector<Row> install_rows(Objects& o, Objects& b) {
  constexpr bool R = true, N = false;
  auto small_rcvr = [](int inst, int svc, int type, int size, int n) {
    return [=] { return ptr(ep_install_small_rcvr(inst, svc, type, size, n, on_small, nullptr)); };
  };
  auto large_rcvr = [](int inst, int svc, int n) { return [=] { return ptr(ep_install_large_rcvr(inst, svc, n)); }; };
  const int S = EP_SVC_TYPE_SMALL;
  return {
      // Instances beyond 0 (multirail) are not supported: the header's choice.
      {"ep_install_small_rcvr", "instance 1", kNull, N, small_rcvr(1, 50, S, 64, 4)},
      {"ep_install_small_rcvr", "service 0 (reserved for Kernel Comms)", kNull, N, small_rcvr(0, 0, S, 64, 4)},
      {"ep_install_small_rcvr", "service -1", kNull, N, small_rcvr(0, -1, S, 64, 4)},
      {"ep_install_small_rcvr", "service beyond EP_NUM_SERVICES", kNull, N, small_rcvr(0, EP_NUM_SERVICES, S, 64, 4)},
      {"ep_install_small_rcvr", "unknown service type", kNull, N, small_rcvr(0, 50, 7, 64, 4)},
      {"ep_install_small_rcvr", "message size 0", kNull, N, small_rcvr(0, 50, S, 0, 4)},
      {"ep_install_small_rcvr", "message size beyond a packet", kNull, N, small_rcvr(0, 50, S, 4096, 4)},
      {"ep_install_small_rcvr", "no message entries", kNull, N, small_rcvr(0, 50, S, 64, 0)},
      {"ep_install_small_rcvr", "service already installed", kNull, N, small_rcvr(0, kLargeSvc, S, 64, 4)},
      {"ep_install_large_rcvr", "instance 1", kNull, N, large_rcvr(1, 50, 4)},
      {"ep_install_large_rcvr", "service 0 (reserved for Kernel Comms)", kNull, N, large_rcvr(0, 0, 4)},
      {"ep_install_large_rcvr", "service beyond EP_NUM_SERVICES", kNull, N, large_rcvr(0, EP_NUM_SERVICES, 4)},
      {"ep_install_large_rcvr", "no envelopes", kNull, N, large_rcvr(0, 50, 0)},
      {"ep_install_large_rcvr", "more envelopes than a receiver takes", kNull, N, large_rcvr(0, 50, 1 << 20)},
      {"ep_install_large_rcvr", "service already installed", kNull, N, large_rcvr(0, kSmallSvc, 4)},
      {"ep_alloc_small_xmtr", "instance 1", kNull, N, [] { return ptr(ep_alloc_small_xmtr(1, S, 64)); }},
      {"ep_alloc_small_xmtr", "unknown service type", kNull, N, [] { return ptr(ep_alloc_small_xmtr(0, 0, 64)); }},
      {"ep_alloc_small_xmtr", "message size 0", kNull, N, [] { return ptr(ep_alloc_small_xmtr(0, S, 0)); }},
      {"ep_alloc_small_xmtr", "message size beyond a packet", kNull, N,
       [] { return ptr(ep_alloc_small_xmtr(0, S, 4096)); }},
      {"ep_alloc_large_xmtr", "instance 1", kNull, N, [] { return ptr(ep_alloc_large_xmtr(1)); }},
      // Returning nothing, the free calls report a bad handle.
      {"ep_free_small_xmtr", "NULL", kVoid, R, v([] { ep_free_small_xmtr(nullptr); })},
      {"ep_free_small_xmtr", "freed", kVoid, R, v([&o] { ep_free_small_xmtr(o.freed_sx); })},
      {"ep_free_small_xmtr", "large transmitter", kVoid, R, v([&o] { ep_free_small_xmtr(o.lx); })},
      {"ep_free_small_xmtr", "receiver (wrong type)", kVoid, R,
       v([&o] { ep_free_small_xmtr(reinterpret_cast<EP_XMTR*>(o.sr)); })},
      {"ep_free_small_xmtr", "other node's", kVoid, R, v([&b] { ep_free_small_xmtr(b.sx); })},
      {"ep_free_large_xmtr", "NULL", kVoid, R, v([] { ep_free_large_xmtr(nullptr); })},
      {"ep_free_large_xmtr", "freed", kVoid, R, v([&o] { ep_free_large_xmtr(o.freed_lx); })},
      {"ep_free_large_xmtr", "small transmitter", kVoid, R, v([&o] { ep_free_large_xmtr(o.sx); })},
      {"ep_free_large_xmtr", "other node's", kVoid, R, v([&b] { ep_free_large_xmtr(b.lx); })},
      {"ep_remove_small_rcvr", "NULL", kVoid, R, v([] { ep_remove_small_rcvr(nullptr); })},
      {"ep_remove_small_rcvr", "removed", kVoid, R, v([&o] { ep_remove_small_rcvr(o.removed_sr); })},
      {"ep_remove_small_rcvr", "large receiver", kVoid, R, v([&o] { ep_remove_small_rcvr(o.lr); })},
      {"ep_remove_small_rcvr", "transmitter (wrong type)", kVoid, R,
       v([&o] { ep_remove_small_rcvr(reinterpret_cast<EP_RCVR*>(o.sx)); })},
      {"ep_remove_small_rcvr", "other node's", kVoid, R, v([&b] { ep_remove_small_rcvr(b.sr); })},
      {"ep_remove_large_rcvr", "NULL", kVoid, R, v([] { ep_remove_large_rcvr(nullptr); })},
      {"ep_remove_large_rcvr", "removed", kVoid, R, v([&o] { ep_remove_large_rcvr(o.removed_lr); })},
      {"ep_remove_large_rcvr", "small receiver", kVoid, R, v([&o] { ep_remove_large_rcvr(o.sr); })},
      {"ep_remove_large_rcvr", "other node's", kVoid, R, v([&b] { ep_remove_large_rcvr(b.lr); })},
  };
}

// ---- transmitting --------------------------------------------------------------------------

void on_tx(EP_TXD*, void*, int) {}

std::vector<Row> transmit_rows(Objects& o, Objects& b) {
  constexpr bool R = true, N = false;
  static unsigned char data[kLen];
  auto small = [&o](EP_XMTR* x, int dest, int svc, E3_uint64 timeout, caddr_t buf, int len) {
    return [x, &o, dest, svc, timeout, buf, len] {
      return ep_transmit_small(x, dest < -1 ? o.peer : dest, svc, 0, timeout, on_tx, nullptr, buf, len);
    };
  };
  auto* d = reinterpret_cast<caddr_t>(data);
  const int P = -2;  // the peer
  const int nn = ep_numnodes();
  static EP_IOVEC iov[EP_MAXFRAG + 1];
  auto large = [&o](EP_XMTR* x, int dest, int svc, EP_IOVEC* iv, int n) {
    return [x, &o, dest, svc, iv, n] {
      return ep_transmit_large(x, dest < -1 ? o.peer : dest, svc, 0, on_tx, nullptr, iv, n);
    };
  };
  auto mcast = [&o](int lo, int hi, EP_IOVEC* iv, int n) {
    return
        [&o, lo, hi, iv, n] { return ep_multicast_large(o.lx, lo, hi, nullptr, kLargeSvc, 0, on_tx, nullptr, iv, n); };
  };
  return {
      {"ep_transmit_small", "NULL transmitter", EINVAL, N, small(nullptr, P, kSmallSvc, 0, d, 8)},
      {"ep_transmit_small", "freed transmitter", EINVAL, N, small(o.freed_sx, P, kSmallSvc, 0, d, 8)},
      {"ep_transmit_small", "large transmitter", EINVAL, N, small(o.lx, P, kSmallSvc, 0, d, 8)},
      {"ep_transmit_small", "other node's transmitter", EINVAL, N, small(b.sx, P, kSmallSvc, 0, d, 8)},
      // The manual lists no code for a bad service: EINVAL, as for bad handles.
      {"ep_transmit_small", "service 0 (reserved for Kernel Comms)", EINVAL, N, small(o.sx, P, 0, 0, d, 8)},
      {"ep_transmit_small", "service beyond EP_NUM_SERVICES", EINVAL, N, small(o.sx, P, EP_NUM_SERVICES, 0, d, 8)},
      {"ep_transmit_small", "longer than the transmitter's size", EINVAL, N, small(o.sx, P, kSmallSvc, 0, d, 65)},
      {"ep_transmit_small", "negative length", EINVAL, N, small(o.sx, P, kSmallSvc, 0, d, -1)},
      {"ep_transmit_small", "length with NULL buffer", EINVAL, N, small(o.sx, P, kSmallSvc, 0, nullptr, 8)},
      {"ep_transmit_small", "special message without timeout", EINVAL, N, small(o.spx, P, kSmallSvc, 0, d, 8)},
      {"ep_transmit_small", "node -1", ECONNREFUSED, N, small(o.sx, -1, kSmallSvc, 0, d, 8)},
      {"ep_transmit_small", "node beyond the network", ECONNREFUSED, N, small(o.sx, nn, kSmallSvc, 0, d, 8)},
      {"ep_transmit_large", "NULL transmitter", EINVAL, N, large(nullptr, P, kLargeSvc, iov, 1)},
      {"ep_transmit_large", "freed transmitter", EINVAL, N, large(o.freed_lx, P, kLargeSvc, iov, 1)},
      {"ep_transmit_large", "small transmitter", EINVAL, N, large(o.sx, P, kLargeSvc, iov, 1)},
      {"ep_transmit_large", "other node's transmitter", EINVAL, N, large(b.lx, P, kLargeSvc, iov, 1)},
      {"ep_transmit_large", "iovector too big", EINVAL, N, large(o.lx, P, kLargeSvc, iov, EP_MAXFRAG + 1)},
      {"ep_transmit_large", "negative iovector length", EINVAL, N, large(o.lx, P, kLargeSvc, iov, -1)},
      {"ep_transmit_large", "NULL iovector", EINVAL, N, large(o.lx, P, kLargeSvc, nullptr, 1)},
      {"ep_transmit_large", "service 0 (reserved for Kernel Comms)", EINVAL, N, large(o.lx, P, 0, iov, 1)},
      {"ep_transmit_large", "node beyond the network", ECONNREFUSED, N, large(o.lx, nn, kLargeSvc, iov, 1)},
      {"ep_transmit_rpc", "NULL transmitter", EINVAL, N,
       [&o] { return ep_transmit_rpc(nullptr, o.peer, kLargeSvc, 0, on_tx, nullptr, nullptr, iov, 1); }},
      {"ep_transmit_rpc", "iovector too big", EINVAL, N,
       [&o] { return ep_transmit_rpc(o.lx, o.peer, kLargeSvc, 0, on_tx, nullptr, nullptr, iov, EP_MAXFRAG + 1); }},
      {"ep_transmit_rpc", "node -1", ECONNREFUSED, N,
       [&o] { return ep_transmit_rpc(o.lx, -1, kLargeSvc, 0, on_tx, nullptr, nullptr, iov, 1); }},
      {"ep_multicast_large", "NULL transmitter", EINVAL, N,
       [] { return ep_multicast_large(nullptr, 0, 1, nullptr, kLargeSvc, 0, on_tx, nullptr, iov, 1); }},
      {"ep_multicast_large", "iovector too big", EINVAL, N, mcast(0, 1, iov, EP_MAXFRAG + 1)},
      {"ep_multicast_large", "range upside down", ECONNREFUSED, N, mcast(1, 0, iov, 1)},
      {"ep_multicast_large", "range beyond the network", ECONNREFUSED, N, mcast(0, nn, iov, 1)},
      // Polling calls return a count: 0, and the bad handle is reported.
      {"ep_poll_transmits", "NULL", 0, R, [] { return ep_poll_transmits(nullptr); }},
      {"ep_poll_transmits", "freed", 0, R, [&o] { return ep_poll_transmits(o.freed_lx); }},
      {"ep_poll_transmits", "other node's", 0, R, [&b] { return ep_poll_transmits(b.lx); }},
      {"ep_enable_txcallbacks", "freed", 0, R, [&o] { return ep_enable_txcallbacks(o.freed_sx); }},
      {"ep_enable_txcallbacks", "other node's", 0, R, [&b] { return ep_enable_txcallbacks(b.sx); }},
      {"ep_disable_txcallbacks", "NULL", 0, R, [] { return ep_disable_txcallbacks(nullptr); }},
      {"ep_disable_txcallbacks", "receiver (wrong type)", 0, R,
       [&o] { return ep_disable_txcallbacks(reinterpret_cast<EP_XMTR*>(o.lr)); }},
      {"ep_txd_statusblk", "NULL", kNull, N, [] { return ptr(ep_txd_statusblk(nullptr)); }},
      {"ep_xmtr_dma_state", "freed", kNull, N, [&o] { return ptr(ep_xmtr_dma_state(o.freed_lx)); }},
  };
}

// ---- receiving -----------------------------------------------------------------------------

std::vector<Row> receive_rows(Objects& o, Objects& b) {
  constexpr bool R = true, N = false;
  static caddr_t msg;
  auto queue = [&o](EP_RCVR* r, int flags) {
    return [r, &o, flags] {
      return ep_queue_receive(r, nullptr, nullptr, elan3_dma_handle_to_addr(o.mapped), kLen, flags);
    };
  };
  auto requeue = [&o](EP_RXD* d) {
    return [d, &o] { return ep_requeue_receive(d, nullptr, nullptr, elan3_dma_handle_to_addr(o.mapped), kLen); };
  };
  return {
      {"ep_queue_receive", "NULL receiver", EINVAL, N, queue(nullptr, 0)},
      {"ep_queue_receive", "removed receiver", EINVAL, N, queue(o.removed_lr, 0)},
      {"ep_queue_receive", "small receiver", EINVAL, N, queue(o.sr, 0)},
      {"ep_queue_receive", "other node's receiver", EINVAL, N, queue(b.lr, 0)},
      // The manual lists EP_NO_SLEEP and EP_NO_ALLOC; any other bit is
      // EINVAL, as ep_requeue_receive's flags are (elancomm.h).
      {"ep_queue_receive", "unknown flag", EINVAL, N, queue(o.er, 0x100)},
      {"ep_queue_receive", "EP_NO_ALLOC and no spare descriptor", ENOMEM, N, queue(o.er, EP_NO_ALLOC)},
      {"ep_requeue_receive", "NULL descriptor", EINVAL, N, requeue(nullptr)},
      {"ep_requeue_receive", "descriptor handed back", EINVAL, N, requeue(o.done_rxd)},
      {"ep_requeue_receive", "other node's descriptor", EINVAL, N, requeue(b.rxd)},
      {"ep_requeue_receive", "unknown flag (six-argument form)", EINVAL, N,
       [&o] { return ep_requeue_receive(o.rxd, nullptr, nullptr, 0, kLen, 0x100); }},
      {"ep_waitfor_small_message", "NULL receiver", EINVAL, N, [] { return ep_waitfor_small_message(nullptr, &msg); }},
      {"ep_waitfor_small_message", "removed receiver", EINVAL, N,
       [&o] { return ep_waitfor_small_message(o.removed_sr, &msg); }},
      // Manual: the receiver "must have been passed a NULL handler value".
      {"ep_waitfor_small_message", "receiver with a handler", EINVAL, N,
       [&o] { return ep_waitfor_small_message(o.sr, &msg); }},
      {"ep_waitfor_small_message", "large receiver", EINVAL, N, [&o] { return ep_waitfor_small_message(o.lr, &msg); }},
      {"ep_waitfor_small_message", "other node's receiver", EINVAL, N,
       [&b] { return ep_waitfor_small_message(b.wr, &msg); }},
      {"ep_waitfor_small_message", "NULL message pointer", EINVAL, N,
       [&o] { return ep_waitfor_small_message(o.wr, nullptr); }},
      {"ep_consume_small_message", "NULL receiver", kVoid, R, v([] { ep_consume_small_message(nullptr, &msg); })},
      {"ep_consume_small_message", "message never handed out", kVoid, R, v([&o] {
         caddr_t m = reinterpret_cast<caddr_t>(o.mem);
         ep_consume_small_message(o.wr, &m);
       })},
      {"ep_waitfor_large_receive", "NULL receiver", kNull, N, [] { return ptr(ep_waitfor_large_receive(nullptr)); }},
      {"ep_waitfor_large_receive", "removed receiver", kNull, N,
       [&o] { return ptr(ep_waitfor_large_receive(o.removed_lr)); }},
      {"ep_waitfor_large_receive", "small receiver", kNull, N, [&o] { return ptr(ep_waitfor_large_receive(o.wr)); }},
      {"ep_waitfor_large_receive", "other node's receiver", kNull, N,
       [&b] { return ptr(ep_waitfor_large_receive(b.lr)); }},
      {"ep_complete_rpc", "NULL descriptor", EINVAL, N,
       [] { return ep_complete_rpc(nullptr, nullptr, nullptr, nullptr, nullptr, 0); }},
      // The manual lists ENETRESET and ESUCCESS only: EINVAL for a descriptor
      // that is no RPC or not this node's.
      {"ep_complete_rpc", "not an RPC", EINVAL, N,
       [&o] { return ep_complete_rpc(o.rxd, nullptr, nullptr, nullptr, nullptr, 0); }},
      {"ep_complete_rpc", "other node's descriptor", EINVAL, N,
       [&b] { return ep_complete_rpc(b.rxd, nullptr, nullptr, nullptr, nullptr, 0); }},
      {"ep_complete_receive", "NULL", kVoid, R, v([] { ep_complete_receive(nullptr); })},
      {"ep_complete_receive", "handed back already", kVoid, R, v([&o] { ep_complete_receive(o.done_rxd); })},
      {"ep_complete_receive", "other node's descriptor", kVoid, R, v([&b] { ep_complete_receive(b.rxd); })},
      {"ep_rxd_status", "NULL", EINVAL, N, [] { return ep_rxd_status(nullptr); }},
      {"ep_rxd_arg", "NULL", kNull, N, [] { return ptr(ep_rxd_arg(nullptr)); }},
      {"ep_rxd_len", "NULL", 0, N, [] { return ep_rxd_len(nullptr); }},
      {"ep_rxd_node", "NULL", -1, N, [] { return ep_rxd_node(nullptr); }},
      {"ep_rxd_isrpc", "NULL", 0, N, [] { return ep_rxd_isrpc(nullptr); }},
      {"ep_rxd_envelope", "transmitter (wrong type)", kNull, N,
       [&o] { return ptr(ep_rxd_envelope(reinterpret_cast<EP_RXD*>(o.lx))); }},
      {"ep_rcvr_dma_state", "removed", kNull, N, [&o] { return ptr(ep_rcvr_dma_state(o.removed_lr)); }},
  };
}

// ---- mapping -------------------------------------------------------------------------------

std::vector<Row> dma_rows(Objects& o, Objects& b) {
  constexpr bool R = true, N = false;
  const int NOMAP = DDI_DMA_NOMAPPING;
  static ELAN3_DMA_HANDLE* h;
  static E3_Addr addr;
  static ELAN3_DMA_REQUEST req;
  auto setup = [&o](ELAN3_DMA_STATE* sp, void* as, bool null_addr, u_int len, u_int perm, bool null_out) {
    return [sp, &o, as, null_addr, len, perm, null_out] {
      caddr_t a = null_addr ? nullptr : reinterpret_cast<caddr_t>(o.mem);
      return elan3_dma_addr_setup(sp, as, a, len, perm, 0, 0, DDI_DMA_NOWAIT, nullptr, null_out ? nullptr : &h);
    };
  };
  const u_int W = ELAN_PERM_REMOTEWRITE;
  return {
      {"elan3_dma_addr_setup", "NULL state", NOMAP, N, setup(nullptr, nullptr, false, 4096, W, false)},
      {"elan3_dma_addr_setup", "other node's state", NOMAP, N, setup(b.dst, nullptr, false, 4096, W, false)},
      {"elan3_dma_addr_setup", "user address space", NOMAP, N, setup(o.dst, &o, false, 4096, W, false)},
      {"elan3_dma_addr_setup", "NULL address", NOMAP, N, setup(o.dst, nullptr, true, 4096, W, false)},
      {"elan3_dma_addr_setup", "length 0", NOMAP, N, setup(o.dst, nullptr, false, 0, W, false)},
      {"elan3_dma_addr_setup", "unknown permission", NOMAP, N, setup(o.dst, nullptr, false, 4096, 0x77, false)},
      {"elan3_dma_addr_setup", "NULL handle pointer", NOMAP, N, setup(o.dst, nullptr, false, 4096, W, true)},
      {"elan3_dma_map", "NULL request", NOMAP, N, [&o] { return elan3_dma_map(o.dst, nullptr, &h); }},
      {"elan3_dma_map", "unknown object type", NOMAP, N,
       [&o] {
         req = ELAN3_DMA_REQUEST{};
         req.Object.Type = 99;
         req.Perm = W;
         return elan3_dma_map(o.dst, &req, &h);
       }},
      {"elan3_dma_buf_setup", "NULL buf", NOMAP, N,
       [&o] { return elan3_dma_buf_setup(o.dst, nullptr, W, 0, 0, DDI_DMA_NOWAIT, nullptr, &h); }},
      {"elan3_dma_unmap", "NULL", kVoid, R, v([&o] { elan3_dma_unmap(o.dst, nullptr); })},
      {"elan3_dma_unmap", "unmapped already", kVoid, R, v([&o] { elan3_dma_unmap(o.dst, o.unmapped); })},
      {"elan3_dma_unmap", "reservation (wrong kind)", kVoid, R, v([&o] { elan3_dma_unmap(o.dst, o.reserved); })},
      {"elan3_dma_unmap", "other node's mapping", kVoid, R, v([&o, &b] { elan3_dma_unmap(o.dst, b.mapped); })},
      {"elan3_dma_handle_to_addr", "NULL", 0, N, [] { return static_cast<int>(elan3_dma_handle_to_addr(nullptr)); }},
      {"elan3_dma_handle_to_addr", "unmapped", 0, N,
       [&o] { return static_cast<int>(elan3_dma_handle_to_addr(o.unmapped)); }},
      {"elan3_dma_handle_to_addr", "other node's mapping", 0, N,
       [&b] { return static_cast<int>(elan3_dma_handle_to_addr(b.mapped)); }},
      {"elan3_dma_reserve", "no pages", NOMAP, N,
       [&o] {
         req = ELAN3_DMA_REQUEST{};
         req.Perm = W;
         return elan3_dma_reserve(o.dst, 0, &req, &h);
       }},
      {"elan3_dma_reserve", "NULL request", NOMAP, N, [&o] { return elan3_dma_reserve(o.dst, 1, nullptr, &h); }},
      {"elan3_dma_release", "released already", kVoid, R, v([&o] { elan3_dma_release(o.dst, o.released); })},
      {"elan3_dma_release", "mapping (wrong kind)", kVoid, R, v([&o] { elan3_dma_release(o.dst, o.mapped); })},
      {"elan3_dma_release", "other node's reservation", kVoid, R,
       v([&o, &b] { elan3_dma_release(o.dst, b.reserved); })},
      {"elan3_dvma_kaddr_load", "released reservation", kVoid, R,
       v([&o] { elan3_dvma_kaddr_load(o.dst, o.released, reinterpret_cast<caddr_t>(o.mem), 64, 0, &addr); })},
      {"elan3_dvma_kaddr_load", "other node's reservation", kVoid, R,
       v([&o, &b] { elan3_dvma_kaddr_load(o.dst, b.reserved, reinterpret_cast<caddr_t>(o.mem), 64, 0, &addr); })},
      {"elan3_dvma_kaddr_load", "NULL address pointer", kVoid, R,
       v([&o] { elan3_dvma_kaddr_load(o.dst, o.reserved, reinterpret_cast<caddr_t>(o.mem), 64, 0, nullptr); })},
      {"elan3_dvma_kaddr_load", "page beyond the reservation", kVoid, R,
       v([&o] { elan3_dvma_kaddr_load(o.dst, o.reserved, reinterpret_cast<caddr_t>(o.mem), 64, 9, &addr); })},
      {"elan3_dvma_unload", "released reservation", kVoid, R, v([&o] { elan3_dvma_unload(o.dst, o.released, 0, 1); })},
      {"elan3_dvma_unload", "other node's reservation", kVoid, R,
       v([&o, &b] { elan3_dvma_unload(o.dst, b.reserved, 0, 1); })},
      {"elan3_dvma_unload", "first page beyond the reservation", kVoid, R,
       v([&o] { elan3_dvma_unload(o.dst, o.reserved, 9, 1); })},
      // Manual: npages "can be larger than the number of pages that were
      // mapped": the rest of the reservation is unloaded, nothing reported.
      {"elan3_dvma_unload", "more pages than the reservation holds (allowed)", kVoid, N,
       v([&o] { elan3_dvma_unload(o.dst, o.reserved, 1, 4); })},
  };
}

// ---- interrupt context ---------------------------------------------------------------------

// Run in node a's small message handler (interrupt context). Blocking calls
// fail and the host reports the blocking call with its call site; calls
// that need not block answer as they would on a thread.
std::vector<Row> interrupt_rows(Objects& o) {
  constexpr bool R = true, N = false;
  static caddr_t msg;
  static unsigned char data[8];
  return {
      {"ep_waitfor_small_message", "interrupt context, no message", EINVAL, R,
       [&o] { return ep_waitfor_small_message(o.wr, &msg); }},
      {"ep_waitfor_large_receive", "interrupt context, no receive", kNull, R,
       [&o] { return ptr(ep_waitfor_large_receive(o.er)); }},
      {"ep_queue_receive", "interrupt context, EP_NO_ALLOC, no spare", ENOMEM, N,
       [&o] {
         return ep_queue_receive(o.er, nullptr, nullptr, elan3_dma_handle_to_addr(o.mapped), kLen, EP_NO_ALLOC);
       }},
      {"ep_transmit_small", "interrupt context (allowed)", ESUCCESS, N,
       [&o] {
         return ep_transmit_small(o.sx, o.peer, kWaitSvc, EP_NO_SLEEP, 0, on_tx, nullptr,
                                  reinterpret_cast<caddr_t>(data), sizeof data);
       }},
  };
}

struct Outcome {
  int rows = 0, reports = 0;  // rows run, and those expecting a report
  std::vector<std::string> wrong;
  bool irq_done = false;
};
Outcome g_out;

void run_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    const std::size_t before = Sim::get().errors().all().size();
    const int got = r.fn();
    const bool reported = Sim::get().errors().all().size() > before;
    ++g_out.rows;
    g_out.reports += r.report;
    if (got != r.want || reported != r.report)
      g_out.wrong.push_back(fmt::format("{} with {}: got {}{}, want {}{}", r.call, r.arg_class, got,
                                        reported ? " (reported)" : "", r.want, r.report ? " (reported)" : ""));
  }
}

void on_small(void*, caddr_t) {
  if (g_out.irq_done) return;
  run_rows(interrupt_rows(g_obj[0]));
  g_out.irq_done = true;
}

// ---- the objects and the program ----------------------------------------------------------

ELAN3_DMA_HANDLE* reserve(ELAN3_DMA_STATE* sp) {
  ELAN3_DMA_REQUEST req{};
  req.Perm = ELAN_PERM_REMOTEWRITE;
  req.Waitfn = reinterpret_cast<decltype(req.Waitfn)>(DDI_DMA_SLEEP);
  ELAN3_DMA_HANDLE* h = nullptr;
  return elan3_dma_reserve(sp, 2, &req, &h) == DDI_SUCCESS ? h : nullptr;
}

bool make_objects(Objects& o) {
  o.mem = static_cast<unsigned char*>(nicsim_alloc(16384, 8192));
  o.sx = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, 64);
  o.spx = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SPECIAL, 64);
  o.lx = ep_alloc_large_xmtr(0);
  o.freed_sx = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, 64);
  o.freed_lx = ep_alloc_large_xmtr(0);
  ep_free_small_xmtr(o.freed_sx);
  ep_free_large_xmtr(o.freed_lx);
  o.sr = ep_install_small_rcvr(0, kSmallSvc, EP_SVC_TYPE_SMALL, 64, 4, on_small, nullptr);
  o.wr = ep_install_small_rcvr(0, kWaitSvc, EP_SVC_TYPE_SMALL, 64, 4, nullptr, nullptr);
  o.lr = ep_install_large_rcvr(0, kLargeSvc, 4);
  o.er = ep_install_large_rcvr(0, kEmptySvc, 4);
  o.removed_sr = ep_install_small_rcvr(0, kRemovedSvc, EP_SVC_TYPE_SMALL, 64, 4, nullptr, nullptr);
  ep_remove_small_rcvr(o.removed_sr);
  o.removed_lr = ep_install_large_rcvr(0, kRemovedSvc, 4);
  ep_remove_large_rcvr(o.removed_lr);
  if (!o.lr) return false;
  o.dst = ep_rcvr_dma_state(o.lr);
  map(o.dst, o.mem, kLen, ELAN_PERM_REMOTEWRITE, &o.mapped);
  map(o.dst, o.mem + 4096, kLen, ELAN_PERM_REMOTEWRITE, &o.unmapped);
  elan3_dma_unmap(o.dst, o.unmapped);
  o.reserved = reserve(o.dst);
  o.released = reserve(o.dst);
  elan3_dma_release(o.dst, o.released);
  return o.sx && o.spx && o.lx && o.sr && o.wr && o.er && o.removed_sr && o.removed_lr && o.mapped && o.reserved &&
         o.released && Sim::get().errors().empty();
}

// Each node sends the other two large messages; each keeps one completed
// receive descriptor and hands the other back.
bool exchange(Objects& o) {
  for (int i = 0; i < 2; ++i)
    if (ep_queue_receive(o.lr, nullptr, nullptr, elan3_dma_handle_to_addr(o.mapped), kLen, 0) != ESUCCESS) return false;
  if (nicsim_barrier() != 0) return false;
  ELAN3_DMA_HANDLE* src = nullptr;
  EP_IOVEC iov{map(ep_xmtr_dma_state(o.lx), o.mem + 8192, kLen, ELAN_PERM_REMOTEREAD, &src), kLen};
  for (int i = 0; i < 2; ++i)
    if (ep_transmit_large(o.lx, o.peer, kLargeSvc, 0, on_tx, nullptr, &iov, 1) != ESUCCESS) return false;
  o.rxd = ep_waitfor_large_receive(o.lr);
  o.done_rxd = ep_waitfor_large_receive(o.lr);
  if (!o.rxd || !o.done_rxd || ep_rxd_status(o.rxd) != ESUCCESS) return false;
  ep_complete_receive(o.done_rxd);
  return true;
}

void free_objects(Objects& o) {
  ep_free_small_xmtr(o.sx);
  ep_free_small_xmtr(o.spx);
  ep_free_large_xmtr(o.lx);
  for (EP_RCVR* r : {o.sr, o.wr}) ep_remove_small_rcvr(r);
  for (EP_RCVR* r : {o.lr, o.er}) ep_remove_large_rcvr(r);
}

// Node a runs the table on a thread, then in its handler of the small
// message node b sends; node b answers the message a sends from there.
int abuse_prog(int, char**) {
  const int rank = static_cast<int>(nicsim_workload_rank());
  Objects& o = g_obj[rank];
  Objects& b = g_obj[1 - rank];
  if (!make_objects(o)) return 1;
  o.peer = peer_id();
  if (!exchange(o) || nicsim_barrier() != 0) return 1;
  if (rank == 0) {
    for (auto part : {install_rows, transmit_rows, receive_rows, dma_rows}) run_rows(part(o, b));
  }
  if (nicsim_barrier() != 0) return 1;
  if (rank == 1) {
    char ping[8] = {};
    EXPECT_EQ(ep_transmit_small(o.sx, o.peer, kSmallSvc, 0, 0, on_tx, nullptr, ping, sizeof ping), ESUCCESS);
    caddr_t m = nullptr;
    EXPECT_EQ(ep_waitfor_small_message(o.wr, &m), ESUCCESS);  // sent from a's interrupt handler
    ep_consume_small_message(o.wr, &m);
  } else {
    EXPECT_TRUE(wait_until([] { return g_out.irq_done; }));
  }
  if (nicsim_barrier() != 0) return 1;
  free_objects(o);
  return 0;
}
const BuiltinProgram reg_abuse("ep_test_abuse", abuse_prog, "test");

}  // namespace

TEST(EpAbuse, EveryCallAnswersBadArgumentsWithTheManualsStatus) {
  const RunResult r = run_text(pair_scenario("ep_test_abuse"), false);
  EXPECT_EQ(g_out.rows, 144);  // a row lost in an edit shows here
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
  // Only the rows that expect a report made one: one each, all on node a.
  EXPECT_EQ(r.errors.size(), static_cast<std::size_t>(g_out.reports));
  for (const std::string& e : r.errors) EXPECT_EQ(e.find("a_host"), 0u) << e;
}
