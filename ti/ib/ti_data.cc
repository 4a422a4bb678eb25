// Data transfer of the IB transport: message sends and receives, RDMA
// reads and writes (split at the hardware's or the connection's largest
// RDMA), RDMA with a bundled message, atomics, and the completion path
// from the CQ's interrupt to the consumer's callbacks or poll_cq. Every
// element posted comes back to its owner exactly once, with its status.
#include <cstring>
#include <map>

#include "ti/ib/ti_ib.h"

namespace nicsim::ti {
namespace {

using S = TiConnState;

__be32 be32(std::uint32_t v) {
  unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                        static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  __be32 r;
  std::memcpy(&r, b, 4);
  return r;
}
std::uint32_t host32(__be32 v) {
  unsigned char b[4];
  std::memcpy(b, &v, 4);
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
}

ti_status_t status_of(ib_wc_status s) {
  switch (s) {
    case IB_WC_SUCCESS:
      return TI_SUCCESS;
    case IB_WC_WR_FLUSH_ERR:
      return TI_CANCELED;
    case IB_WC_REM_ACCESS_ERR:
    case IB_WC_LOC_PROT_ERR:
    case IB_WC_LOC_ACCESS_ERR:
      return TI_INVALID_PERMISSION;
    default:
      return TI_ERROR;
  }
}

bool can_send(const Conn* c) { return c->fsm.state() == S::Established && c->qp; }
bool can_recv(const Conn* c) {
  const S s = c->fsm.state();
  return c->qp && (s == S::Established || s == S::Accepting || s == S::ReplyReceived);
}

// Checks a whole list before anything is posted: elements of live pools,
// of the right type, owned by the consumer (not in a pool, not posted).
ti_status_t check_list(ti_data_element_t* list, ti_res_pool_type_t type, std::uint32_t limit) {
  if (!list) return TI_INVALID_PARAMETER;
  std::uint32_t n = 0;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg) {
    ElementTd* td = td_of(e);
    if (!td || td->in_pool || td->busy || e->pool_type != type || ++n > limit) return TI_INVALID_PARAMETER;
    if (!e->num_io_bufs || e->num_io_bufs > td->pool->per_element) return TI_INVALID_PARAMETER;
    if (e->oob_data_len != 0 && e->oob_data_len != 4) return TI_INVALID_PARAMETER;
  }
  return TI_SUCCESS;
}

void begin(ElementTd* td, Conn* c, Op op) {
  td->conn = c;
  td->op = op;
  td->fence = false;
  td->busy = true;
  td->outstanding = 0;
  td->status = TI_SUCCESS;
  td->element->status = TI_PENDING;
  ++c->in_flight;
}

// A local buffer's key: a pool buffer's lkey as the pool gave it, or, for
// the consumer's own memory, the rkey reg_virt_mem or reg_phys_mem
// returned (the interface gives the consumer no other key): the region's
// local key then.
u32 local_key(const Conn* c, ti_region_key_t key) {
  for (const Mem* m : c->inst->mems)
    if (m->mr && m->mr->rkey == key) return m->mr->lkey;
  return key;
}

std::vector<ib_sge> sges_of(const Conn* c, const ti_local_data_desc_t* d, std::uint32_t n) {
  std::vector<ib_sge> v(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    v[i].addr = reinterpret_cast<std::uint64_t>(d[i].vaddr);
    v[i].length = static_cast<std::uint32_t>(d[i].byte_count);
    v[i].lkey = local_key(c, d[i].lkey);
  }
  return v;
}

int post_one(Conn* c, ElementTd* td, ib_send_wr& wr) {
  wr.wr_id = reinterpret_cast<std::uint64_t>(td);
  wr.send_flags |= IB_SEND_SIGNALED;
  ib_send_wr* bad = nullptr;
  const int rc = ib_post_send(c->qp, &wr, &bad);
  if (!rc) ++td->outstanding;
  return rc;
}

int post_message(Conn* c, ElementTd* td, bool fence) {
  ti_data_element_t* e = td->element;
  std::vector<ib_sge> sg = sges_of(c, e->local_data_desc, e->num_io_bufs);
  ib_send_wr wr{};
  wr.sg_list = sg.data();
  wr.num_sge = static_cast<int>(sg.size());
  wr.opcode = e->oob_data_len ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
  wr.imm_data = be32(e->oob_data);
  if (e->msg_opt & TI_OPT_SOLICITED) wr.send_flags |= IB_SEND_SOLICITED;
  if (fence || (e->msg_opt & TI_OPT_FENCE)) wr.send_flags |= IB_SEND_FENCE;
  const int rc = post_one(c, td, wr);
  if (!rc) ++c->posted_sends;  // a refused post completes in software
  return rc;
}

// One RDMA element: each local buffer to or from its remote descriptor, in
// pieces no larger than the connection's or the hardware's largest RDMA.
int post_rdma(Conn* c, ElementTd* td, bool write) {
  ti_data_element_t* e = td->element;
  const std::uint64_t hw = node()->max_msg;
  const std::uint64_t chunk = c->attr.max_rdma_size && c->attr.max_rdma_size < hw ? c->attr.max_rdma_size : hw;
  for (std::uint32_t i = 0; i < e->num_io_bufs; ++i) {
    const ti_local_data_desc_t& l = td->rdma_local[i];
    const ti_rdma_desc_t& r = e->rdma_data_desc[i];
    for (std::uint64_t off = 0; off < l.byte_count || (off == 0 && l.byte_count == 0); off += chunk) {
      const std::uint64_t len = l.byte_count - off < chunk ? l.byte_count - off : chunk;
      ib_sge sg{reinterpret_cast<std::uint64_t>(l.vaddr) + off, static_cast<u32>(len), local_key(c, l.lkey)};
      const bool last = i + 1 == e->num_io_bufs && off + len >= l.byte_count;
      ib_send_wr wr{};
      wr.sg_list = &sg;
      wr.num_sge = 1;
      wr.opcode = write ? (last && e->oob_data_len ? IB_WR_RDMA_WRITE_WITH_IMM : IB_WR_RDMA_WRITE) : IB_WR_RDMA_READ;
      wr.imm_data = be32(e->oob_data);
      wr.wr.rdma.remote_addr = r.vaddr + off;
      wr.wr.rdma.rkey = r.rkey;
      if (off == 0 && i == 0 && (e->msg_opt & TI_OPT_FENCE)) wr.send_flags |= IB_SEND_FENCE;
      if (int rc = post_one(c, td, wr)) return rc;
      if (l.byte_count == 0) break;
    }
  }
  return 0;
}

// Completes elements in software (never posted, or a post that failed).
void complete_now(Conn* c, std::vector<ti_data_element_t*>& done, ti_status_t status) {
  if (done.empty()) return;
  std::map<ti_xfer_cb_t, ti_data_element_t*> heads;
  for (auto it = done.rbegin(); it != done.rend(); ++it) {
    ti_data_element_t* e = *it;
    auto* td = static_cast<ElementTd*>(e->otd);
    td->busy = false;
    if (c->in_flight) --c->in_flight;
    e->status = status;
    ti_xfer_cb_t cb = td->op == Op::Recv   ? c->comp.pfn_recv_cb
                      : td->op == Op::Send ? c->comp.pfn_send_cb
                                           : c->comp.pfn_rdma_cb;
    if (!cb) cb = c->comp.pfn_send_cb;
    e->p_next_msg = heads[cb];
    heads[cb] = e;
  }
  done.clear();
  for (auto& [cb, head] : heads) {
    if (cb) {
      cb(handle_of<ti_cq_handle_t>(c->send_cq), head);
      continue;
    }
    for (ti_data_element_t* e = head; e;) {  // nobody to call: poll_cq returns them
      ti_data_element_t* next = e->p_next_msg;
      e->p_next_msg = nullptr;
      if (c->send_cq) c->send_cq->done.push_back(e);
      e = next;
    }
  }
}

// Takes the sends still queued on a failed connection as completed with
// TI_CANCELED (they follow the failed element in its completion list).
void take_flushed(Conn* c, std::vector<ti_data_element_t*>& out) {
  for (ti_data_element_t* e : c->send_queue) {
    auto* td = static_cast<ElementTd*>(e->otd);
    td->busy = false;
    td->status = TI_CANCELED;
    e->status = TI_CANCELED;
    e->p_next_msg = nullptr;
    if (c->in_flight) --c->in_flight;
    out.push_back(e);
  }
  c->send_queue.clear();
}

// A work completion: the element completes when its last request does.
ti_data_element_t* retire(const ib_wc& wc) {
  if (fc_completion(wc)) return nullptr;  // the provider's own (flow control)
  ElementTd* td = td_of_wr(wc.wr_id);
  if (!td || !td->busy) return nullptr;
  ti_data_element_t* e = td->element;
  if (wc.status != IB_WC_SUCCESS && td->status == TI_SUCCESS) td->status = status_of(wc.status);
  if (td->op == Op::Recv) {
    e->recv_byte_count = wc.byte_len;
    e->oob_data_len = (wc.wc_flags & IB_WC_WITH_IMM) ? 4 : 0;
    e->oob_data = (wc.wc_flags & IB_WC_WITH_IMM) ? host32(wc.imm_data) : 0;
  }
  if (td->outstanding) --td->outstanding;
  if (td->outstanding) return nullptr;
  td->busy = false;
  e->status = td->status;
  e->p_next_msg = nullptr;
  TiNode* n = node();
  Conn* c = td->conn && n->conns.count(td->conn) ? td->conn : nullptr;
  if (!c) return e;
  if (c->in_flight) --c->in_flight;
  if (td->op == Op::Send && c->posted_sends) --c->posted_sends;
  if (td->op == Op::Recv && c->posted_recvs) --c->posted_recvs;
  if (td->status != TI_SUCCESS && td->status != TI_CANCELED && !c->failed) {
    c->failed = true;
    log_at(level_of(c->inst), TI_DBG_OFF, "connection %llu failed: a work request completed with an error",
           static_cast<unsigned long long>(c->id));
    if (c->comp.pfn_err_cb) {
      const ti_err_cb_t cb = c->comp.pfn_err_cb;
      void* ctx = c->comp.p_err_context;
      n->defer([cb, ctx] {
        ti_err_rec_t rec{TI_ERROR, ctx};
        cb(&rec);
      });
    }
  }
  if (td->op == Op::Send) pump_sends(c);
  return e;
}

ti_xfer_cb_t callback_of(const ElementTd* td) {
  TiNode* n = node();
  const Conn* c = td->conn && n->conns.count(td->conn) ? td->conn : nullptr;
  if (!c) return nullptr;
  switch (td->op) {
    case Op::Recv:
      return c->comp.pfn_recv_cb;
    case Op::Send:
      return c->comp.pfn_send_cb;
    default:
      return c->comp.pfn_rdma_cb ? c->comp.pfn_rdma_cb : c->comp.pfn_send_cb;
  }
}

// Every completion the CQ holds, as elements (oldest first).
std::vector<ti_data_element_t*> reap(Cq* q) {
  std::vector<ti_data_element_t*> out(q->done.begin(), q->done.end());
  q->done.clear();
  ib_wc wc[16];
  for (int got; (got = ib_poll_cq(q->cq, 16, wc)) > 0;)
    for (int k = 0; k < got; ++k)
      if (ti_data_element_t* e = retire(wc[k])) out.push_back(e);
  for (Conn* c : q->conns)
    if (c->failed && !c->send_queue.empty()) take_flushed(c, out);
  return out;
}

ti_status_t start_ops(ti_conn_handle_t h, ti_data_element_t* list, ti_res_pool_type_t type, Conn*& c) {
  c = conn_of(h);
  if (!c || c->listener) return TI_INVALID_HANDLE;
  if (ti_status_t s = check_list(list, type, 1u << 20)) return s;
  if (!can_send(c)) return TI_INVALID_OPERATION;
  node()->host.work("ti_op");
  return TI_SUCCESS;
}

ti_status_t rdma_list(Conn* c, ti_data_element_t* list, bool write) {
  std::vector<ti_data_element_t*> failed;
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    auto* td = static_cast<ElementTd*>(e->otd);
    begin(td, c, write ? Op::RdmaWrite : Op::RdmaRead);
    if (post_rdma(c, td, write) && !td->outstanding) failed.push_back(e);
    e = next;
  }
  const bool any_failed = !failed.empty();
  complete_now(c, failed, TI_ERROR);
  return any_failed ? TI_ERROR : TI_SUCCESS;
}

ti_status_t rdma_then_send(ti_conn_handle_t h, ti_data_element_t* rdmas, ti_data_element_t* msg, bool write) {
  Conn* c = nullptr;
  if (ti_status_t s = start_ops(h, rdmas, TI_RES_POOL_RDMA, c)) return s;
  if (ti_status_t s = check_list(msg, TI_RES_POOL_MSG, 1)) return s;
  if (ti_status_t s = rdma_list(c, rdmas, write)) return s;
  // The message is fenced behind the RDMAs: the HCA starts it only when
  // they are done (reads included), so it completes after them.
  auto* td = static_cast<ElementTd*>(msg->otd);
  begin(td, c, Op::Send);
  td->fence = true;
  if (c->fc) {  // the message needs a credit: it waits with the other sends
    c->send_queue.push_back(msg);
    pump_sends(c);
    return TI_SUCCESS;
  }
  if (post_message(c, td, true)) {
    std::vector<ti_data_element_t*> failed{msg};
    complete_now(c, failed, TI_ERROR);
    return TI_ERROR;
  }
  return TI_SUCCESS;
}

}  // namespace

// Posts queued sends while the send queue has room and, with message flow
// control, the peer has receives for them (none once the connection
// failed: the completion path flushes them).
void pump_sends(Conn* c) {
  const std::uint32_t depth = c->attr.max_transfer_depth ? c->attr.max_transfer_depth : 0xffffffffu;
  std::vector<ti_data_element_t*> failed;
  if (c->failed) return;
  while (!c->send_queue.empty() && c->posted_sends < depth && can_send(c) && fc_take_credit(c)) {
    ti_data_element_t* e = c->send_queue.front();
    c->send_queue.pop_front();
    auto* td = static_cast<ElementTd*>(e->otd);
    if (post_message(c, td, td->fence)) failed.push_back(e);
  }
  complete_now(c, failed, TI_ERROR);
}

ti_status_t post_receives(Conn* c, ti_data_element_t* list) {
  if (!list) return TI_SUCCESS;
  if (ti_status_t s = check_list(list, TI_RES_POOL_MSG, 1u << 20)) return s;
  std::uint32_t posted = 0;
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    auto* td = static_cast<ElementTd*>(e->otd);
    begin(td, c, Op::Recv);
    e->recv_byte_count = 0;
    std::vector<ib_sge> sg = sges_of(c, e->local_data_desc, e->num_io_bufs);
    ib_recv_wr wr{};
    wr.wr_id = reinterpret_cast<std::uint64_t>(td);
    wr.sg_list = sg.data();
    wr.num_sge = static_cast<int>(sg.size());
    ib_recv_wr* bad = nullptr;
    if (ib_post_recv(c->qp, &wr, &bad)) {
      std::vector<ti_data_element_t*> failed;
      for (ti_data_element_t* f = e; f; f = f->p_next_msg) {
        if (f != e) begin(static_cast<ElementTd*>(f->otd), c, Op::Recv);
        failed.push_back(f);
      }
      complete_now(c, failed, TI_INSUFFICIENT_RESOURCES);
      fc_posted(c, posted);
      return TI_INSUFFICIENT_RESOURCES;
    }
    ++td->outstanding;
    ++c->posted_recvs;
    ++posted;
    e = next;
  }
  fc_posted(c, posted);  // the peer may send into them
  return TI_SUCCESS;
}

void cq_event(ib_cq* cq, void* context) {
  TiNode* n = node();
  auto* q = static_cast<Cq*>(context);
  if (!n || !n->cqs.count(q) || q->cq != cq) return;
  n->host.work("ti_op");
  if (!q->auto_rearm) {
    // The consumer polls and rearms: tell each callback once, with no list.
    q->armed = false;
    std::set<ti_xfer_cb_t> told;
    for (Conn* c : q->conns)
      for (ti_xfer_cb_t cb :
           {q == c->recv_cq ? c->comp.pfn_recv_cb : nullptr, q == c->send_cq ? c->comp.pfn_send_cb : nullptr})
        if (cb && told.insert(cb).second) cb(handle_of<ti_cq_handle_t>(q), nullptr);
    return;
  }
  ib_req_notify_cq(q->cq, IB_CQ_NEXT_COMP);
  std::vector<ti_data_element_t*> done = reap(q);
  std::vector<std::pair<ti_xfer_cb_t, ti_data_element_t*>> heads;  // per callback, in completion order
  std::map<ti_xfer_cb_t, ti_data_element_t**> tails;
  for (ti_data_element_t* e : done) {
    const ti_xfer_cb_t cb = callback_of(static_cast<ElementTd*>(e->otd));
    if (!cb) {
      q->done.push_back(e);
      continue;
    }
    auto it = tails.find(cb);
    if (it == tails.end()) {
      heads.emplace_back(cb, e);
      tails[cb] = &e->p_next_msg;
    } else {
      *it->second = e;
      it->second = &e->p_next_msg;
    }
  }
  for (auto& [cb, head] : heads) cb(handle_of<ti_cq_handle_t>(q), head);
}

ti_status_t cq_poll(ti_cq_handle_t h_cq, ti_data_element_t** p_list) {
  Cq* q = cq_of(h_cq);
  if (!q || !p_list) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  std::vector<ti_data_element_t*> done = reap(q);
  ti_data_element_t *head = nullptr, **tail = &head;
  for (ti_data_element_t* e : done) {
    *tail = e;
    tail = &e->p_next_msg;
  }
  *tail = nullptr;
  *p_list = head;
  return TI_SUCCESS;
}

ti_status_t cq_rearm(ti_cq_handle_t h_cq) {
  Cq* q = cq_of(h_cq);
  if (!q) return TI_INVALID_PARAMETER;
  q->armed = true;
  return ib_req_notify_cq(q->cq, IB_CQ_NEXT_COMP) ? TI_INVALID_OPERATION : TI_SUCCESS;
}

void fail_queued(Conn* c, ti_status_t status) {
  std::vector<ti_data_element_t*> queued(c->send_queue.begin(), c->send_queue.end());
  c->send_queue.clear();
  complete_now(c, queued, status);
}

void drain(Conn* c, Tick budget) {
  TiNode* n = node();
  const std::uint64_t id = c->id;
  for (Tick t = 0; t < budget; t += kUs) {
    Conn* k = conn_by_id(*n, id);
    if (!k || !k->in_flight) return;
    n->host.sleep(kUs);
  }
}

ti_status_t data_msg_send(ti_conn_handle_t h, ti_data_element_t* list) {
  Conn* c = nullptr;
  if (ti_status_t s = start_ops(h, list, TI_RES_POOL_MSG, c)) return s;
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    begin(static_cast<ElementTd*>(e->otd), c, Op::Send);
    c->send_queue.push_back(e);
    e = next;
  }
  if (c->failed) {
    fail_queued(c, TI_CANCELED);  // the connection failed: nothing more goes out
    return TI_SUCCESS;
  }
  pump_sends(c);
  return c->send_queue.empty() ? TI_SUCCESS : TI_PENDING;
}

ti_status_t data_msg_recv(ti_conn_handle_t h, ti_data_element_t* list) {
  Conn* c = conn_of(h);
  if (!c || c->listener) return TI_INVALID_HANDLE;
  if (!list) return TI_INVALID_PARAMETER;
  if (!can_recv(c)) return TI_INVALID_OPERATION;
  node()->host.work("ti_op");
  return post_receives(c, list);
}

ti_status_t data_rdma_read(ti_conn_handle_t h, ti_data_element_t* list) {
  Conn* c = nullptr;
  if (ti_status_t s = start_ops(h, list, TI_RES_POOL_RDMA, c)) return s;
  return rdma_list(c, list, false);
}

ti_status_t data_rdma_write(ti_conn_handle_t h, ti_data_element_t* list) {
  Conn* c = nullptr;
  if (ti_status_t s = start_ops(h, list, TI_RES_POOL_RDMA, c)) return s;
  return rdma_list(c, list, true);
}

ti_status_t data_rdma_read_send(ti_conn_handle_t h, ti_data_element_t* rdmas, ti_data_element_t* msg) {
  return rdma_then_send(h, rdmas, msg, false);
}

ti_status_t data_rdma_write_send(ti_conn_handle_t h, ti_data_element_t* rdmas, ti_data_element_t* msg) {
  return rdma_then_send(h, rdmas, msg, true);
}

ti_status_t data_atomic_op(ti_conn_handle_t h, ti_atomic_op_t op, ti_data_element_t* e) {
  Conn* c = nullptr;
  if (op != TI_ATOMIC_COMPARE_SWAP && op != TI_ATOMIC_FETCH_ADD) return TI_INVALID_PARAMETER;
  if (ti_status_t s = start_ops(h, e, TI_RES_POOL_RDMA, c)) return s;
  auto* td = static_cast<ElementTd*>(e->otd);
  const ti_local_data_desc_t& l = td->rdma_local[0];
  if (e->p_next_msg || !l.vaddr || l.byte_count < 16 || e->rdma_data_desc[0].vaddr % 8) return TI_INVALID_PARAMETER;
  std::uint64_t operands[2];
  std::memcpy(operands, l.vaddr, sizeof operands);
  ib_sge sg{reinterpret_cast<std::uint64_t>(l.vaddr), 8, local_key(c, l.lkey)};
  ib_send_wr wr{};
  wr.sg_list = &sg;
  wr.num_sge = 1;
  wr.opcode = op == TI_ATOMIC_COMPARE_SWAP ? IB_WR_ATOMIC_CMP_AND_SWP : IB_WR_ATOMIC_FETCH_AND_ADD;
  wr.wr.atomic.remote_addr = e->rdma_data_desc[0].vaddr;
  wr.wr.atomic.rkey = e->rdma_data_desc[0].rkey;
  wr.wr.atomic.compare_add = operands[0];
  wr.wr.atomic.swap = operands[1];
  begin(td, c, Op::Atomic);
  if (post_one(c, td, wr)) {
    std::vector<ti_data_element_t*> failed{e};
    complete_now(c, failed, TI_ERROR);
    return TI_ERROR;
  }
  return TI_SUCCESS;
}

}  // namespace nicsim::ti
