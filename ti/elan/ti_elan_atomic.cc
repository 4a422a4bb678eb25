// Atomics of the Elan transport. Kernel Comms has no remote atomic, so an
// atomic is an RPC to the peer's provider (on its RDMA RPC service): the
// peer finds the region by its key, as for an RDMA, does the 64-bit
// compare-swap or fetch-add on its memory with its CPU, in its RPC
// handler, and returns the former value in the reply's status block; the
// requester's CPU copies it into local buffer 0 and the element completes
// on the RDMA callback, as over IB.
//
// Atomicity: the peer's handler reads and writes the word with no wait in
// between, and every TI atomic to that node's memory goes through that
// handler, so TI atomics on a word are atomic with respect to each other.
// They are not atomic with respect to the peer's CPU stores or to RDMA
// writes into the word (the IB HCA's atomics are not either, for CPU
// stores).
#include <cstring>

#include "ti/elan/ti_elan.h"

namespace nicsim::ti_elan {
namespace {

constexpr std::uint32_t kAtomicOk = 0, kAtomicNoRegion = 1;

std::uint64_t word64(const E3_uint32* w, int lo) { return std::uint64_t{w[lo]} | (std::uint64_t{w[lo + 1]} << 32); }

void on_atomic_done(EP_TXD* txd, void* arg, int status) {
  auto* e = static_cast<ti_data_element_t*>(arg);
  Td* td = td_of(e);
  ElanTiNode* n = node();
  Conn* c = td && n ? conn_by_id(*n, td->conn_id) : nullptr;
  if (!c || !td->busy || td->op != Op::Atomic) return;
  const EP_STATUSBLK* blk = ep_txd_statusblk(txd);
  const bool ok = status == ESUCCESS && blk && blk->Data[0] == kAtomicOk;
  if (ok) {
    const std::uint64_t old = word64(blk->Data, 1);
    std::memcpy(TI_RDMA_LOCAL_DESC(e)[0].vaddr, &old, sizeof old);
    n->host.work("ti_op", sizeof old);
    c = conn_by_id(*n, td->conn_id);  // the charge let other work run
    if (!c || !td->busy) return;
  }
  complete(c, e, ok ? TI_SUCCESS : TI_ERROR);
}

}  // namespace

void serve_atomic(ElanTiNode& n, EP_RXD* rxd, const E3_uint32* w) {
  const std::uint64_t vaddr = word64(w, kVaddrLo);
  Mem* m = vaddr % 8 == 0 ? region_of(n, w[kKey], vaddr, 8) : nullptr;
  EP_STATUSBLK blk{};
  blk.Data[0] = m ? kAtomicOk : kAtomicNoRegion;
  if (m) {
    unsigned char* p = m->base + (vaddr - reinterpret_cast<std::uint64_t>(m->base));
    std::uint64_t old = 0;
    std::memcpy(&old, p, sizeof old);
    const std::uint64_t compare_add = word64(w, kOperand0Lo), swap = word64(w, kOperand1Lo);
    const std::uint64_t now = w[kAtomicOp] == TI_ATOMIC_FETCH_ADD ? old + compare_add : old == compare_add ? swap : old;
    std::memcpy(p, &now, sizeof now);
    blk.Data[1] = static_cast<E3_uint32>(old);
    blk.Data[2] = static_cast<E3_uint32>(old >> 32);
  }
  if (ep_complete_rpc(rxd, on_rpc_replied, &n, &blk, nullptr, 0) != ESUCCESS) ep_requeue_receive(rxd, on_rpc, &n, 0, 0);
}

// atomic_op: one RDMA element; remote descriptor 0 names the 8-byte word
// (8-byte aligned), local buffer 0 (at least 16 bytes, registered) holds
// the operands and gets the former value.
ti_status_t data_atomic(ti_conn_handle_t h, ti_atomic_op_t op, ti_data_element_t* e) {
  if (op != TI_ATOMIC_COMPARE_SWAP && op != TI_ATOMIC_FETCH_ADD) return TI_INVALID_PARAMETER;
  Conn* c = as<Conn>(h, Kind::Conn);
  if (!c || c->listener || c->releasing) return TI_INVALID_HANDLE;
  if (c->fsm.state() != ElanConnState::Established) return TI_INVALID_OPERATION;
  if (!e || e->p_next_msg || !rdma_list_ok(c, e, TI_RES_POOL_RDMA) || !e->num_io_bufs) return TI_INVALID_PARAMETER;
  const ti_local_data_desc_t& l = TI_RDMA_LOCAL_DESC(e)[0];
  const ti_rdma_desc_t& r = e->rdma_data_desc[0];
  if (!l.vaddr || l.byte_count < 16 || r.vaddr % 8) return TI_INVALID_PARAMETER;
  ElanTiNode* n = node();
  n->host.work("ti_op");
  std::uint64_t operands[2];
  std::memcpy(operands, l.vaddr, sizeof operands);
  EP_RPC_PAYLOAD pl{};
  pl.Data[kMagic] = kRpcMagic;
  pl.Data[kOp] = kAtomic;
  pl.Data[kKey] = r.rkey;
  pl.Data[kVaddrLo] = static_cast<E3_uint32>(r.vaddr);
  pl.Data[kVaddrHi] = static_cast<E3_uint32>(r.vaddr >> 32);
  pl.Data[kAtomicOp] = static_cast<E3_uint32>(op);
  pl.Data[kOperand0Lo] = static_cast<E3_uint32>(operands[0]);
  pl.Data[kOperand0Hi] = static_cast<E3_uint32>(operands[0] >> 32);
  pl.Data[kOperand1Lo] = static_cast<E3_uint32>(operands[1]);
  pl.Data[kOperand1Hi] = static_cast<E3_uint32>(operands[1] >> 32);
  hold(c, e, Op::Atomic);
  if (ep_transmit_rpc(n->large, c->peer_node, kRpcService, send_flags(), on_atomic_done, e, &pl, nullptr, 0) !=
      ESUCCESS)
    complete(c, e, TI_ERROR);
  return TI_SUCCESS;
}

}  // namespace nicsim::ti_elan
