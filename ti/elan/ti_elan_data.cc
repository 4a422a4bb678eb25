// Data movement of the Elan transport. Messages: ep_transmit_large from
// the element's buffers to the peer's per-connection service, where the
// receive buffers the consumer posted (ep_queue_receive) take them in the
// order they were posted; no copy on either side. RDMA: the Elan moves the
// bytes by write DMAs of ep_complete_rpc's datavec. A read sends the peer
// an RPC naming both addresses and the peer's reply writes the data then
// the status block; a write asks the peer (a control message) for an RPC
// back, and the writer's reply writes the data. What takes a peer's
// receive (a message, an RDMA write's OOB data) goes in posting order.
// Completions reach the consumer as over IB: a callback per element at
// interrupt level with auto_cq_rearm, else the CQ's list for poll_cq and
// one notification while armed.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "ti/elan/ti_elan.h"

namespace nicsim::ti_elan {
namespace {

constexpr std::uint32_t kOobMagic = 0x54494f42;  // "TIOB": a message's OOB data
constexpr int kOobData = 1;

bool in_interrupt() { return host::Host::current_host()->in_interrupt(); }

// The Elan address of `len` bytes at `addr` of this instance's
// registrations (pools included); 0: not registered.
E3_Addr elan_addr(const Instance* i, const void* addr, std::uint64_t len) {
  const auto a = reinterpret_cast<std::uint64_t>(addr);
  const Mem* m = mem_covering(i, a, len);
  return m ? static_cast<E3_Addr>(m->eaddr + (a - reinterpret_cast<std::uint64_t>(m->base))) : 0;
}

// The Elan address of the bytes a peer's RDMA names (region_of). 0: no
// such region.
E3_Addr translate(ElanTiNode& n, std::uint32_t key, std::uint64_t vaddr, std::uint32_t len) {
  const Mem* m = region_of(n, key, vaddr, len);
  return m ? static_cast<E3_Addr>(m->eaddr + (vaddr - reinterpret_cast<std::uint64_t>(m->base))) : 0;
}

Cq* cq_for(Conn* c, Op op) { return as<Cq>(op == Op::Recv ? c->comp.h_recv_cq : c->comp.h_send_cq, Kind::Cq); }

ti_xfer_cb_t cb_for(Conn* c, Op op) {
  if (op == Op::Recv) return c->comp.pfn_recv_cb;
  return op == Op::Send ? c->comp.pfn_send_cb : c->comp.pfn_rdma_cb;
}

void send_one(Conn* c, ti_data_element_t* e);

void on_sent(EP_TXD*, void* arg, int status) {
  auto* e = static_cast<ti_data_element_t*>(arg);
  Td* td = td_of(e);
  Conn* c = td ? conn_by_id(*node(), td->conn_id) : nullptr;
  if (c) complete(c, e, status == ESUCCESS ? TI_SUCCESS : TI_ERROR);
}

void send_one(Conn* c, ti_data_element_t* e) {
  ElanTiNode* n = node();
  EP_IOVEC iov[EP_MAXFRAG];
  int k = 0;
  for (std::uint32_t b = 0; b < e->num_io_bufs; ++b) {
    const ti_local_data_desc_t& d = e->local_data_desc[b];
    if (!d.byte_count) continue;
    iov[k].Base = elan_addr(c->inst, d.vaddr, d.byte_count);
    iov[k++].Len = static_cast<E3_uint32>(d.byte_count);
  }
  // OOB data (the IB provider's immediate data) ride in an RPC's payload.
  EP_RPC_PAYLOAD pl{};
  pl.Data[kMagic] = kOobMagic;
  pl.Data[kOobData] = e->oob_data;
  const int rc = e->oob_data_len
                     ? ep_transmit_rpc(n->large, c->peer_node, c->peer_service, send_flags(), on_sent, e, &pl, iov, k)
                     : ep_transmit_large(n->large, c->peer_node, c->peer_service, send_flags(), on_sent, e, iov, k);
  if (rc != ESUCCESS) complete(c, e, TI_ERROR);
}

// An RDMA write's OOB data, once its bytes are in place: an empty message
// with the data in its RPC payload, which takes the peer's next receive
// (recv_byte_count 0, oob_data_len 4), as the IB provider's RDMA write
// with immediate does. Its transmit completes the RDMA element.
void send_oob(Conn* c, ti_data_element_t* e) {
  ElanTiNode* n = node();
  EP_RPC_PAYLOAD pl{};
  pl.Data[kMagic] = kOobMagic;
  pl.Data[kOobData] = e->oob_data;
  if (ep_transmit_rpc(n->large, c->peer_node, c->peer_service, send_flags(), on_sent, e, &pl, nullptr, 0) != ESUCCESS)
    complete(c, e, TI_ERROR);
}

// A receive of several buffers: the bytes landed in the element's bounce
// buffer; the CPU copies them into the buffers in order (charged).
void scatter(ti_data_element_t* e, const Td* td, std::uint32_t len) {
  std::uint32_t off = 0;
  for (std::uint32_t b = 0; b < e->num_io_bufs && off < len; ++b) {
    const ti_local_data_desc_t& d = e->local_data_desc[b];
    const std::uint32_t n = static_cast<std::uint32_t>(d.byte_count < len - off ? d.byte_count : len - off);
    if (n) std::memcpy(d.vaddr, td->bounce + off, n);
    off += n;
  }
}

void on_oob_replied(EP_RXD* rxd) { ep_complete_receive(rxd); }

// A receive's data are in: receives complete in the order they were
// posted. A message with OOB data came as an RPC (the data in its
// payload): its empty reply completes the sender's transmit.
void on_received(EP_RXD* rxd) {
  auto* e = static_cast<ti_data_element_t*>(ep_rxd_arg(rxd));
  const int status = ep_rxd_status(rxd);
  const int len = ep_rxd_len(rxd);
  const EP_ENVELOPE* env = ep_rxd_isrpc(rxd) ? ep_rxd_envelope(rxd) : nullptr;
  const bool oob = env && env->Payload.RPC.Data[kMagic] == kOobMagic;
  const std::uint32_t oob_data = oob ? env->Payload.RPC.Data[kOobData] : 0;
  if (!env || ep_complete_rpc(rxd, on_oob_replied, nullptr, nullptr, nullptr, 0) != ESUCCESS) ep_complete_receive(rxd);
  Td* td = td_of(e);
  Conn* c = td ? conn_by_id(*node(), td->conn_id) : nullptr;
  if (!c || !td->busy) return;
  const std::uint32_t id = c->id;
  if (td->bounced && status == ESUCCESS) {
    scatter(e, td, static_cast<std::uint32_t>(len));
    node()->host.work("ti_op", static_cast<std::uint64_t>(len));
    if (!conn_by_id(*node(), id) || !td->busy) return;  // given back meanwhile
  }
  td->landed = true;
  td->status = status == ESUCCESS ? TI_SUCCESS : TI_ERROR;
  e->recv_byte_count = status == ESUCCESS ? static_cast<std::uint32_t>(len) : 0;
  e->oob_data_len = oob ? 4 : 0;
  e->oob_data = oob_data;
  while (!c->recvs.empty() && td_of(c->recvs.front())->landed) {
    ti_data_element_t* f = c->recvs.front();
    c->recvs.pop_front();
    complete(c, f, td_of(f)->status);
    if (!conn_by_id(*node(), id)) return;  // a callback ended it
  }
}

// Elements of a list: each of a live pool of the connection's instance, of
// the type, held by the consumer and idle.
bool list_ok(const Conn* c, ti_data_element_t* list, ti_res_pool_type_t type) {
  if (!list) return false;
  std::uint32_t n = 0;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg) {
    const Td* td = td_of(e);
    if (!td || td->pool->inst != c->inst || td->pool->type != type || td->in_pool || td->busy || ++n > 1u << 16)
      return false;
    if (e->oob_data_len != 0 && e->oob_data_len != 4) return false;
  }
  return true;
}

bool sendable(const Conn* c, const ti_data_element_t* e) {
  if (e->num_io_bufs > EP_MAXFRAG) return false;
  for (std::uint32_t b = 0; b < e->num_io_bufs; ++b) {
    const ti_local_data_desc_t& d = e->local_data_desc[b];
    if (d.byte_count && (d.byte_count > 0xffffffffu || !elan_addr(c->inst, d.vaddr, d.byte_count))) return false;
  }
  return true;
}

ti_status_t established(Conn* c) {
  if (!c || c->listener || c->releasing) return TI_INVALID_HANDLE;
  return c->fsm.state() == ElanConnState::Established ? TI_SUCCESS : TI_INVALID_OPERATION;
}

void unorder(Conn* c, ti_data_element_t* e) {
  for (auto it = c->ordered.begin(); it != c->ordered.end(); ++it)
    if (*it == e) {
      c->ordered.erase(it);
      return;
    }
}

}  // namespace

int send_flags() { return in_interrupt() ? EP_NO_SLEEP : 0; }

void hold(Conn* c, ti_data_element_t* e, Op op) {
  Td* td = td_of(e);
  td->busy = true;
  td->op = op;
  td->conn = c;
  td->conn_id = c->id;
  td->landed = td->data_done = td->after_rdma = td->bounced = false;
  td->then_send = nullptr;
  e->status = TI_PENDING;
  e->iodone = FALSE;
  if (op != Op::Recv) ++c->in_flight;
}

Mem* region_of(ElanTiNode& n, std::uint32_t key, std::uint64_t vaddr, std::uint32_t len) {
  for (Obj* o : n.all(Kind::Mem)) {
    auto* m = static_cast<Mem*>(o);
    if (m->eaddr == key && m->contains(vaddr, len)) return m;
  }
  return nullptr;
}

void flush_ordered(Conn* c) {
  ElanTiNode* n = node();
  const std::uint32_t id = c->id;
  if (c->flushing) return;  // the flush running (its transmit charging the CPU) takes what was added
  c->flushing = true;
  while (conn_by_id(*n, id) && !c->ordered.empty()) {
    ti_data_element_t* e = c->ordered.front();
    Td* td = td_of(e);
    const bool oob = td->op == Op::RdmaWrite;
    if (oob ? !td->data_done : td->after_rdma) break;  // waits for its RDMA's bytes
    c->ordered.pop_front();
    if (c->releasing || c->fsm.state() != ElanConnState::Established)
      complete(c, e, TI_CANCELED);
    else if (oob)
      send_oob(c, e);
    else
      send_one(c, e);
  }
  if (conn_by_id(*n, id)) c->flushing = false;
}

void complete(Conn* c, ti_data_element_t* e, ti_status_t st) {
  const std::uint32_t id = c->id;
  Td* td = td_of(e);
  td->busy = false;
  e->status = st;
  e->iodone = TRUE;
  e->p_next_msg = nullptr;
  if (td->op != Op::Recv && c->in_flight) --c->in_flight;
  if (st == TI_ERROR) report_error(c, TI_ERROR);
  const Op op = td->op;
  ti_data_element_t* then = td->then_send;
  td->then_send = nullptr;
  Cq* q = cq_for(c, op);
  const ti_xfer_cb_t cb = cb_for(c, op);
  if (q && c->attr.auto_cq_rearm) {
    if (cb) cb(handle_of<ti_cq_handle_t>(q), e);
  } else if (q) {
    q->done.push_back(e);
    if (q->armed && cb) {
      q->armed = false;
      cb(handle_of<ti_cq_handle_t>(q), nullptr);
    }
  }
  ElanTiNode* n = node();
  if (then && conn_by_id(*n, id)) {  // rdma_*_send: the message goes once the RDMA's bytes are in place
    td_of(then)->after_rdma = false;
    if (st != TI_SUCCESS) {
      unorder(c, then);
      complete(c, then, TI_CANCELED);
    }
  }
  if (conn_by_id(*n, id) && !c->ordered.empty()) flush_ordered(c);
  if (conn_by_id(*n, id) && c->releasing && !c->in_flight) conn_drop(c);
}

void fail_posted(Conn* c, ti_status_t st) {
  // The receiver goes first: a buffer given back must never be written.
  // Taken before the call: Kernel Comms charges the CPU, and the node's
  // other context may run meanwhile.
  if (EP_RCVR* r = std::exchange(c->rcvr, nullptr)) ep_remove_large_rcvr(r);
  const std::uint32_t id = c->id;
  while (!c->recvs.empty()) {
    ti_data_element_t* e = c->recvs.front();
    c->recvs.pop_front();
    complete(c, e, st);
    if (!conn_by_id(*node(), id)) return;
  }
  flush_ordered(c);  // the connection ended: what waits to be sent is canceled
}

namespace {

// The element's bounce buffer, of at least `len` bytes (its pool's element
// size at least, so that it is mapped once); false: no memory or mapping.
bool bounce_for(Td* td, std::uint32_t len) {
  const std::uint64_t want = std::max<std::uint64_t>(len, ti_core::element_bytes(td->pool));
  if (td->bounce && td->bounce_len >= len) return true;
  bounce_free(td);
  ElanTiNode* n = node();
  if (want > 0xffffffffu) return false;
  auto* b = static_cast<unsigned char*>(n->host.memory().alloc(want, 64));
  ELAN3_DMA_HANDLE* h = nullptr;
  if (!b) return false;
  if (elan3_dma_addr_setup(ep_xmtr_dma_state(n->large), nullptr, reinterpret_cast<caddr_t>(b), static_cast<u_int>(want),
                           ELAN_PERM_REMOTEWRITE, 0, 0, in_interrupt() ? DDI_DMA_NOWAIT : DDI_DMA_SLEEP, nullptr,
                           &h) != DDI_DMA_MAPPED) {
    n->host.memory().free(b);
    return false;
  }
  td->bounce = b;
  td->bounce_len = static_cast<std::uint32_t>(want);
  td->bounce_map = h;
  td->bounce_eaddr = elan3_dma_handle_to_addr(h);
  return true;
}

// A receive element's buffers: 1 to the pool's count, each registered;
// their total (at most 4 GiB - 1, not 0) in *total.
bool receivable(const Conn* c, ti_data_element_t* e, std::uint32_t* total) {
  const Td* td = td_of(e);
  std::uint64_t sum = 0;
  if (!e->num_io_bufs || e->num_io_bufs > td->pool->per_element) return false;
  for (std::uint32_t b = 0; b < e->num_io_bufs; ++b) {
    const ti_local_data_desc_t& d = e->local_data_desc[b];
    if (d.byte_count && (d.byte_count > 0xffffffffu || !elan_addr(c->inst, d.vaddr, d.byte_count))) return false;
    sum += d.byte_count;
  }
  *total = static_cast<std::uint32_t>(sum);
  return sum && sum <= 0xffffffffu;
}

// Queues the element's buffer with Kernel Comms (one buffer: itself;
// several: its bounce buffer).
bool queue_receive(Conn* c, ti_data_element_t* e, std::uint32_t total) {
  Td* td = td_of(e);
  const ti_local_data_desc_t& d = e->local_data_desc[0];
  E3_Addr where = elan_addr(c->inst, d.vaddr, d.byte_count);
  if (e->num_io_bufs > 1) {
    if (!bounce_for(td, total)) return false;
    td->bounced = true;
    where = td->bounce_eaddr;
  }
  return ep_queue_receive(c->rcvr, on_received, e, where, total, send_flags()) == ESUCCESS;
}

}  // namespace

void bounce_free(Td* td) {
  if (!td->bounce) return;
  ElanTiNode* n = node();
  elan3_dma_unmap(ep_xmtr_dma_state(n->large), td->bounce_map);
  n->host.memory().free(td->bounce);
  td->bounce = nullptr;
  td->bounce_len = 0;
  td->bounce_map = nullptr;
  td->bounce_eaddr = 0;
}

ti_status_t post_receives(Conn* c, ti_data_element_t* list) {
  if (!list) return TI_SUCCESS;
  if (!list_ok(c, list, TI_RES_POOL_MSG)) return TI_INVALID_PARAMETER;
  std::uint32_t total = 0;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg)
    if (!receivable(c, e, &total)) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    receivable(c, e, &total);
    hold(c, e, Op::Recv);
    c->recvs.push_back(e);
    if (!queue_receive(c, e, total)) {
      c->recvs.pop_back();
      complete(c, e, TI_INSUFFICIENT_RESOURCES);
    }
    e = next;
  }
  return TI_SUCCESS;
}

ti_status_t data_msg_recv(ti_conn_handle_t h, ti_data_element_t* list) {
  Conn* c = as<Conn>(h, Kind::Conn);
  if (!c || c->listener || c->releasing) return TI_INVALID_HANDLE;
  const ElanConnState st = c->fsm.state();
  if (st != ElanConnState::Established && st != ElanConnState::Accepting) return TI_INVALID_OPERATION;
  return post_receives(c, list);
}

ti_status_t data_msg_send(ti_conn_handle_t h, ti_data_element_t* list) {
  Conn* c = as<Conn>(h, Kind::Conn);
  if (ti_status_t s = established(c); s != TI_SUCCESS) return s;
  if (!list_ok(c, list, TI_RES_POOL_MSG)) return TI_INVALID_PARAMETER;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg)
    if (!sendable(c, e)) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  ti_data_element_t* last = nullptr;
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    hold(c, e, Op::Send);
    c->ordered.push_back(e);
    last = e;
    e = next;
  }
  const std::uint32_t id = c->id;
  flush_ordered(c);
  // Held behind what goes first (as over IB, a send queued behind others).
  const bool held =
      conn_by_id(*node(), id) && std::find(c->ordered.begin(), c->ordered.end(), last) != c->ordered.end();
  return held ? TI_PENDING : TI_SUCCESS;
}

// ---- RDMA ------------------------------------------------------------------------

namespace {

// An RDMA moves in chunks of at most 64 KiB (8 Elan pages, as Kernel Comms
// pulls large messages), at most kWindow of an element at once: the bytes
// go as the replier's DMAs, and a megabyte queued at once would hold its
// Elan's DMA queue, and the circuit's heartbeats behind it, for
// milliseconds (long enough for the peer to take the node for dead).
constexpr std::uint32_t kChunk = 8 * ELAN3_PAGE_SIZE;
constexpr std::uint32_t kWindow = 4;

// The element's chunks; false: a buffer is not registered here.
bool chunks_of(const Conn* c, ti_data_element_t* e, std::deque<RdmaChunk>* out) {
  for (std::uint32_t b = 0; b < e->num_io_bufs; ++b) {
    const ti_local_data_desc_t& l = TI_RDMA_LOCAL_DESC(e)[b];
    const ti_rdma_desc_t& r = e->rdma_data_desc[b];
    if (l.byte_count > 0xffffffffu) return false;
    const auto len = static_cast<std::uint32_t>(l.byte_count);
    const E3_Addr local = len ? elan_addr(c->inst, l.vaddr, len) : 0;
    if (len && !local) return false;
    for (std::uint32_t off = 0; off < len; off += kChunk)
      if (out) out->push_back(RdmaChunk{local + off, r.vaddr + off, r.rkey, len - off < kChunk ? len - off : kChunk});
  }
  return true;
}

}  // namespace

bool rdma_list_ok(const Conn* c, ti_data_element_t* list, ti_res_pool_type_t type) {
  if (!list_ok(c, list, type)) return false;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg)
    if (!chunks_of(c, e, nullptr)) return false;
  return true;
}

namespace {

bool issue_chunk(Conn* c, ti_data_element_t* e, const RdmaChunk& k, bool write);

// Issues the element's next chunks the window allows; completes it when
// none is left.
void pump(Conn* c, ti_data_element_t* e) {
  Td* td = td_of(e);
  while (td->outstanding < kWindow && !td->chunks.empty()) {
    const RdmaChunk k = td->chunks.front();
    td->chunks.pop_front();
    ++td->outstanding;
    if (!issue_chunk(c, e, k, td->op == Op::RdmaWrite)) {
      --td->outstanding;
      td->status = TI_ERROR;
      td->chunks.clear();
    }
  }
  if (td->outstanding || !td->chunks.empty()) return;
  if (td->op == Op::RdmaWrite && e->oob_data_len && td->status == TI_SUCCESS) {
    td->data_done = true;  // its OOB data go in their turn (flush_ordered), then it completes
    flush_ordered(c);
    return;
  }
  unorder(c, e);
  complete(c, e, td->status);
}

// One chunk of an RDMA is done (st: its status).
void chunk_done(ti_data_element_t* e, ti_status_t st) {
  Td* td = td_of(e);
  Conn* c = td ? conn_by_id(*node(), td->conn_id) : nullptr;
  if (!c || !td->busy || !td->outstanding) return;
  --td->outstanding;
  if (st != TI_SUCCESS) {
    td->status = st;
    td->chunks.clear();
  }
  pump(c, e);
}

void on_read_done(EP_TXD* txd, void* arg, int status) {
  const EP_STATUSBLK* blk = ep_txd_statusblk(txd);
  const bool ok = status == ESUCCESS && blk && blk->Data[0] == 0;
  chunk_done(static_cast<ti_data_element_t*>(arg), ok ? TI_SUCCESS : TI_ERROR);
}

// The write chunk named by `tag` ended (st).
void tag_done(ElanTiNode& n, std::uint32_t tag, ti_status_t st) {
  auto it = n.rdma_tags.find(tag);
  if (it == n.rdma_tags.end()) return;
  ti_data_element_t* e = it->second;
  n.rdma_tags.erase(it);
  chunk_done(e, st);
}

void on_write_done(EP_RXD* rxd) {
  ElanTiNode* n = node();
  const auto tag = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(ep_rxd_arg(rxd)));
  const int status = ep_rxd_status(rxd);
  ep_requeue_receive(rxd, on_rpc, n, 0, 0);
  tag_done(*n, tag, status == ESUCCESS ? TI_SUCCESS : TI_ERROR);
}

}  // namespace

void on_rpc_replied(EP_RXD* rxd) { ep_requeue_receive(rxd, on_rpc, node(), 0, 0); }

namespace {

bool issue_chunk(Conn* c, ti_data_element_t* e, const RdmaChunk& k, bool write) {
  ElanTiNode* n = node();
  if (write) {
    CtlMsg m{};
    m.kind = static_cast<std::uint32_t>(Ctl::WriteAsk);
    m.to_conn = c->peer_id;
    m.tag = n->next_tag++;
    m.src = k.local;
    m.dst = static_cast<std::uint32_t>(k.remote);
    m.dst_hi = static_cast<std::uint32_t>(k.remote >> 32);
    m.bytes = k.len;
    m.key = k.key;
    n->rdma_tags[m.tag] = e;
    send_ctl(*n, c->peer_node, m);
    return true;
  }
  EP_RPC_PAYLOAD pl{};
  pl.Data[kMagic] = kRpcMagic;
  pl.Data[kOp] = kRead;
  pl.Data[kVaddrLo] = static_cast<std::uint32_t>(k.remote);
  pl.Data[kVaddrHi] = static_cast<std::uint32_t>(k.remote >> 32);
  pl.Data[kDst] = k.local;
  pl.Data[kLen] = k.len;
  pl.Data[kKey] = k.key;
  return ep_transmit_rpc(n->large, c->peer_node, kRpcService, send_flags(), on_read_done, e, &pl, nullptr, 0) ==
         ESUCCESS;
}

ti_status_t post_rdma(ti_conn_handle_t h, ti_data_element_t* list, ti_data_element_t* msg, bool write) {
  Conn* c = as<Conn>(h, Kind::Conn);
  if (ti_status_t s = established(c); s != TI_SUCCESS) return s;
  if (!rdma_list_ok(c, list, TI_RES_POOL_RDMA)) return TI_INVALID_PARAMETER;
  if (msg && (!list_ok(c, msg, TI_RES_POOL_MSG) || msg->p_next_msg || !sendable(c, msg))) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  std::vector<ti_data_element_t*> elements;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg) elements.push_back(e);
  // Everything is held and in its place in `ordered` before the first
  // chunk goes: an element may complete at once (nothing to move).
  for (ti_data_element_t* e : elements) {
    hold(c, e, write ? Op::RdmaWrite : Op::RdmaRead);
    Td* td = td_of(e);
    td->status = TI_SUCCESS;
    td->outstanding = 0;
    td->chunks.clear();
    chunks_of(c, e, &td->chunks);
    if (write && e->oob_data_len) c->ordered.push_back(e);  // its OOB data take a peer's receive
  }
  if (msg) {
    hold(c, msg, Op::Send);
    td_of(msg)->after_rdma = true;
    td_of(elements.back())->then_send = msg;
    c->ordered.push_back(msg);
  }
  const std::uint32_t id = c->id;
  for (ti_data_element_t* e : elements)
    if (conn_by_id(*node(), id)) pump(c, e);
  return TI_SUCCESS;
}

}  // namespace

// The writer's peer: the region named must be one of ours; the RPC back
// carries the verdict and, when good, the writer's reply moves the bytes.
void rdma_write_ask(ElanTiNode& n, const CtlMsg& m) {
  EP_RPC_PAYLOAD pl{};
  pl.Data[kMagic] = kRpcMagic;
  pl.Data[kOp] = kWritePull;
  pl.Data[kTag] = m.tag;
  const E3_Addr dst = translate(n, m.key, (std::uint64_t{m.dst_hi} << 32) | m.dst, m.bytes);
  pl.Data[kOk] = dst || !m.bytes ? 1 : 0;
  pl.Data[kSrc] = m.src;
  pl.Data[kDst] = dst;
  pl.Data[kLen] = m.bytes;
  ep_transmit_rpc(n.large, static_cast<int>(m.from_node), kRpcService, send_flags(), nullptr, nullptr, &pl, nullptr, 0);
}

void on_rpc(EP_RXD* rxd) {
  ElanTiNode* n = node();
  const EP_ENVELOPE* env = ep_rxd_envelope(rxd);
  if (!n || ep_rxd_status(rxd) != ESUCCESS || !ep_rxd_isrpc(rxd) || !env ||
      env->Payload.RPC.Data[kMagic] != kRpcMagic) {
    if (n) ep_requeue_receive(rxd, on_rpc, n, 0, 0);
    return;
  }
  const E3_uint32* w = env->Payload.RPC.Data;
  n->host.work("ti_op");
  if (w[kOp] == kAtomic) return serve_atomic(*n, rxd, w);
  EP_STATUSBLK blk{};
  if (w[kOp] == kRead) {
    const E3_Addr src = translate(*n, w[kKey], (std::uint64_t{w[kVaddrHi]} << 32) | w[kVaddrLo], w[kLen]);
    const bool ok = src || !w[kLen];
    blk.Data[0] = ok ? 0 : 1;
    EP_DATAVEC dv{src, w[kDst], w[kLen]};
    if (ep_complete_rpc(rxd, on_rpc_replied, n, &blk, &dv, ok && w[kLen] ? 1 : 0) != ESUCCESS)
      ep_requeue_receive(rxd, on_rpc, n, 0, 0);
    return;
  }
  // kWritePull: our bytes go to the peer in our reply.
  void* tag = reinterpret_cast<void*>(static_cast<std::uintptr_t>(w[kTag]));
  if (!w[kOk]) {  // the peer refused the region: our empty reply frees its RPC
    if (ep_complete_rpc(rxd, on_rpc_replied, n, &blk, nullptr, 0) != ESUCCESS) ep_requeue_receive(rxd, on_rpc, n, 0, 0);
    tag_done(*n, w[kTag], TI_ERROR);
    return;
  }
  EP_DATAVEC dv{w[kSrc], w[kDst], w[kLen]};
  if (ep_complete_rpc(rxd, on_write_done, tag, &blk, &dv, 1) != ESUCCESS) {
    ep_requeue_receive(rxd, on_rpc, n, 0, 0);
    tag_done(*n, w[kTag], TI_ERROR);
  }
}

ti_status_t data_rdma_read(ti_conn_handle_t h, ti_data_element_t* l) { return post_rdma(h, l, nullptr, false); }
ti_status_t data_rdma_write(ti_conn_handle_t h, ti_data_element_t* l) { return post_rdma(h, l, nullptr, true); }
ti_status_t data_rdma_read_send(ti_conn_handle_t h, ti_data_element_t* l, ti_data_element_t* m) {
  return m ? post_rdma(h, l, m, false) : TI_INVALID_PARAMETER;
}
ti_status_t data_rdma_write_send(ti_conn_handle_t h, ti_data_element_t* l, ti_data_element_t* m) {
  return m ? post_rdma(h, l, m, true) : TI_INVALID_PARAMETER;
}

}  // namespace nicsim::ti_elan
