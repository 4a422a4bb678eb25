// Message flow control (ti_conn_attr_t.msg_flow_control TRUE): a send goes
// to the hardware only while the peer has a receive posted for it, so the
// HCA never meets an empty receive queue and never sees an RNR NAK.
//
// Credits cross the fabric like everything else. Each side keeps a small
// registered region: [0, 8) the peer's count of receives posted (the peer
// RDMA-writes it), [8, 16) our count (the source of those writes), then a
// hello in and a hello out. The first receive either side posts is the
// provider's own, for the peer's hello (its region's address and rkey):
// the active side sends its hello once its receives are posted (accept in
// the CN_REPLY callback), the passive side answers with its own (once the
// RTU came: its QP sends from then); from then
// on each side writes its count into the peer's region whenever it posts
// receives (one write in flight, the newest count behind it). A sender's
// credits are the peer's count less the sends it posted; a sender without
// credits holds its sends (TI_PENDING) and looks at its region again every
// microsecond until the count moves.
//
// The provider's own work requests carry odd ids (an element's id is its
// transport data's address, even): the connection's id and the kind.
#include <cstring>

#include "ti/ib/ti_ib.h"

namespace nicsim::ti {
namespace {

constexpr std::uint64_t kRegion = 64;
constexpr std::uint64_t kPeerCount = 0, kOurCount = 8, kHelloIn = 16, kHelloOut = 32, kHelloBytes = 12;
constexpr Tick kCreditPoll = 1 * kUs;

enum FcKind : std::uint64_t { kHelloRecv = 1, kHelloSend = 3, kCreditWrite = 5 };

std::uint64_t wr_id_of(const Conn* c, FcKind kind) { return (c->id << 4) | kind; }

std::uint64_t addr(const FlowControl& f, std::uint64_t offset) {
  return reinterpret_cast<std::uint64_t>(f.mem) + offset;
}

bool post_send(Conn* c, FcKind kind, std::uint64_t offset, std::uint32_t bytes, bool rdma) {
  FlowControl& f = *c->fc;
  ib_sge sg{addr(f, offset), bytes, f.mr->lkey};
  ib_send_wr wr{};
  wr.wr_id = wr_id_of(c, kind);
  wr.sg_list = &sg;
  wr.num_sge = 1;
  wr.opcode = rdma ? IB_WR_RDMA_WRITE : IB_WR_SEND;
  wr.send_flags = IB_SEND_SIGNALED;
  if (rdma) {
    wr.wr.rdma.remote_addr = f.peer_vaddr;
    wr.wr.rdma.rkey = f.peer_rkey;
  }
  ib_send_wr* bad = nullptr;
  return c->qp && ib_post_send(c->qp, &wr, &bad) == 0;
}

void send_hello(Conn* c) {
  FlowControl& f = *c->fc;
  const std::uint64_t word = addr(f, kPeerCount);
  std::memcpy(f.mem + kHelloOut, &word, 8);
  std::memcpy(f.mem + kHelloOut + 8, &f.mr->rkey, 4);
  f.hello_sent = post_send(c, kHelloSend, kHelloOut, kHelloBytes, false);
  log_at(level_of(c->inst), TI_DBG_VERBOSE, "connection %llu: flow control hello %s",
         static_cast<unsigned long long>(c->id), f.hello_sent ? "sent" : "not sent");
}

// Our count into the peer's region: one write at a time, the newest count.
void write_count(Conn* c) {
  FlowControl& f = *c->fc;
  if (!f.peer_known || !f.ready) return;
  if (f.writing) {
    f.dirty = true;
    return;
  }
  std::memcpy(f.mem + kOurCount, &f.posted, 8);
  f.writing = post_send(c, kCreditWrite, kOurCount, 8, true);
  f.dirty = false;
}

void hello_arrived(Conn* c) {
  FlowControl& f = *c->fc;
  std::memcpy(&f.peer_vaddr, f.mem + kHelloIn, 8);
  std::memcpy(&f.peer_rkey, f.mem + kHelloIn + 8, 4);
  f.peer_known = true;
  log_at(level_of(c->inst), TI_DBG_VERBOSE, "connection %llu: flow control hello received",
         static_cast<unsigned long long>(c->id));
  if (!f.ready) return;              // the passive side's QP sends once the RTU came
  if (!f.hello_sent) send_hello(c);  // the passive side answers
  write_count(c);
}

}  // namespace

bool fc_setup(Conn* c) {
  if (!c->attr.msg_flow_control) return true;
  auto f = std::make_unique<FlowControl>();
  host::Host& h = node()->host;
  f->mem = static_cast<unsigned char*>(h.memory().alloc(kRegion, 64));
  if (!f->mem) return false;
  std::memset(f->mem, 0, kRegion);
  ib_phys_buf buf{reinterpret_cast<std::uint64_t>(f->mem), kRegion};
  u64 iova = buf.addr;
  f->mr = ib_reg_phys_mr(c->inst->pd, &buf, 1, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE, &iova);
  if (!f->mr) {
    h.memory().free(f->mem);
    return false;
  }
  const std::uint64_t id = c->id;
  f->poll = std::make_unique<host::Timer>(h, "ti_credit_poll", [id] {
    if (TiNode* n = node())
      if (Conn* k = conn_by_id(*n, id)) pump_sends(k);
  });
  c->fc = std::move(f);
  return true;
}

void fc_release(std::unique_ptr<FlowControl> fc) {
  if (!fc) return;
  fc->poll.reset();
  ib_dereg_mr(fc->mr);
  node()->host.memory().free(fc->mem);
}

bool fc_post_hello_recv(Conn* c) {
  if (!c->fc) return true;
  FlowControl& f = *c->fc;
  ib_sge sg{addr(f, kHelloIn), static_cast<u32>(kHelloBytes), f.mr->lkey};
  ib_recv_wr wr{};
  wr.wr_id = wr_id_of(c, kHelloRecv);
  wr.sg_list = &sg;
  wr.num_sge = 1;
  ib_recv_wr* bad = nullptr;
  return ib_post_recv(c->qp, &wr, &bad) == 0;
}

void fc_ready(Conn* c) {
  if (!c->fc) return;
  FlowControl& f = *c->fc;
  f.ready = true;
  if (c->active && !f.hello_sent) send_hello(c);
  if (!c->active && f.peer_known) {  // the active side's hello came first
    if (!f.hello_sent) send_hello(c);
    write_count(c);
  }
}

void fc_posted(Conn* c, std::uint32_t receives) {
  if (!c->fc) return;
  c->fc->posted += receives;
  write_count(c);
}

std::uint32_t fc_credits(const Conn* c) {
  if (!c->fc) return 0;
  std::uint64_t peer = 0;
  std::memcpy(&peer, c->fc->mem + kPeerCount, 8);
  return peer > c->fc->sent ? static_cast<std::uint32_t>(peer - c->fc->sent) : 0;
}

bool fc_take_credit(Conn* c) {
  if (!c->fc) return true;
  FlowControl& f = *c->fc;
  std::uint64_t peer = 0;
  std::memcpy(&peer, f.mem + kPeerCount, 8);  // the peer's RDMA writes land here
  if (peer > f.sent) {
    ++f.sent;
    return true;
  }
  if (!f.poll->armed()) f.poll->start(kCreditPoll);
  return false;
}

bool fc_completion(const ib_wc& wc) {
  if (!(wc.wr_id & 1)) return false;
  TiNode* n = node();
  Conn* c = n ? conn_by_id(*n, wc.wr_id >> 4) : nullptr;
  if (!c || !c->fc || wc.status != IB_WC_SUCCESS) return true;  // a failed QP: its elements report it
  switch (wc.wr_id & 0xf) {
    case kHelloRecv:
      hello_arrived(c);
      break;
    case kCreditWrite:
      c->fc->writing = false;
      if (c->fc->dirty) write_count(c);
      break;
    default:
      break;
  }
  return true;
}

}  // namespace nicsim::ti
