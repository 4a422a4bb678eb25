// Multicast of large messages (manual 2.1.6, ep_multicast_large): the
// destination set (range, optional bitmap, live nodes, EP_NOT_MYSELF) is
// reached by one hardware broadcast when it is a whole contiguous range, else
// by an arity-3 tree over the set in rank order in which every node pulls
// from its parent and forwards to its children (docs/ep.md "Multicast").
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ep/lib/ep_internal.h"

namespace elan3 = nicsim::elan3;

namespace nicsim::ep {
namespace {

constexpr int kArity = 3;

// The members of a tree from an envelope's bitmap trailer (network order,
// bit i = node RangeLo + i).
std::vector<int> members_of(const EP_ENVELOPE& env, const std::vector<std::uint8_t>& trailer) {
  std::vector<int> out;
  const int span = static_cast<int>(env.RangeHi - env.RangeLo + 1);
  std::vector<bitmap_t> net(BT_BITOUL(span)), host(BT_BITOUL(span));
  if (trailer.size() < net.size() * sizeof(bitmap_t)) return out;
  std::memcpy(net.data(), trailer.data(), net.size() * sizeof(bitmap_t));
  bt_ntoh(host.data(), net.data(), span);
  for (int b = bt_lowbit(host.data(), span); b != -1; b = bt_nextbit(host.data(), span, b))
    out.push_back(static_cast<int>(env.RangeLo) + b);
  return out;
}

// Children of rank `rank` (-1 = the root, which is not a member).
std::vector<int> children_of(const std::vector<int>& members, int rank) {
  std::vector<int> out;
  const int first = rank < 0 ? 0 : kArity * rank + kArity;
  for (int i = first; i < first + kArity && i < static_cast<int>(members.size()); ++i) out.push_back(members[i]);
  return out;
}

}  // namespace

// An interior or leaf node's data has landed (or was refused E2BIG): serve
// the children, or complete towards the parent at once if there are none.
void EpNode::forward(ep_rxd* d) {
  const EP_ENVELOPE& env = d->envelope;
  std::vector<int> children;
  if (env.Attr & EP_ENV_HAS_BITMAP) {
    const std::vector<int> members = members_of(env, d->bitmap_trailer);
    const auto me = std::find(members.begin(), members.end(), static_cast<int>(self));
    if (me != members.end()) children = children_of(members, static_cast<int>(me - members.begin()));
  }
  if (children.empty()) {
    set_remote_event(env.Parent, env.TxdDone, 1);
    finish_rx(d);
    return;
  }
  if (!d->fan) d->fan = std::make_unique<Fanout>();
  Fanout& f = *d->fan;
  f.rxd = d;
  f.children = children;
  f.service = d->rcvr->service;
  f.cookie = static_cast<std::uint16_t>(kRxCookie | d->index);
  if (!d->subtree) d->subtree = dev.alloc_event(true, false);
  if (!d->subtree || !prepare_fanout(f, d->subtree, true, d->rcvr->cookie)) {
    error("multicast: no Elan memory to forward; the subtree is reported failed");
    mark_multicast_failure(d);
    set_remote_event(env.Parent, env.TxdDone, 1);
    finish_rx(d);
    return;
  }
  cpu("ep_transmit");
  d->state = RxState::Forwarding;
  EP_ENVELOPE out = env;
  if (d->status == ESUCCESS) {
    // Children read from this node's buffer, which stays untouched until
    // the whole subtree has it (the handler runs after).
    out.NodeId = self;
    out.nFrags = env.Len > 0 ? 1 : 0;
    std::memset(out.Frags, 0, sizeof out.Frags);
    out.Frags[0].Base = d->buffer;
    out.Frags[0].Len = env.Len;
  }
  start_fanout(f, out, d->bitmap_trailer.data(), d->bitmap_trailer.size());
}

void EpNode::subtree_done(ep_rxd* d) {
  set_remote_event(d->envelope.Parent, d->envelope.TxdDone, 1);
  finish_rx(d);
}

// Edge events and envelope copies for up to kArity children; the owner's
// count event `target` is primed here with the number of children.
bool EpNode::prepare_fanout(Fanout& f, elan3::ElanMem target, bool irq, std::uint32_t cookie) {
  ++f.gen;
  f.failed.assign(f.children.size(), false);
  if (f.dirty) {
    // A failed edge's event and envelope may still be reached by a late
    // set or a DMA still queued: never reused.
    for (auto& e : f.edge) retired.push_back(e);
    if (f.envs) retired.push_back(f.envs);
    f.edge.clear();
    f.envs = {};
    f.dirty = false;
  }
  const std::uint32_t slot = large_slot_size(*this);
  if (!f.envs) f.envs = dev.alloc_mem(slot * kArity, elan3::kBlockSize, 0, false);
  while (f.edge.size() < kArity) {
    elan3::ElanMem e = dev.alloc_event(true, false);
    if (!e) break;
    f.edge.push_back(e);
  }
  if (!f.envs || f.edge.size() < kArity) return false;
  dev.prime_event(target, static_cast<std::int32_t>(f.children.size()), elan3::event::Type::None, 0, 0, irq, cookie);
  for (std::size_t i = 0; i < f.children.size(); ++i)
    dev.prime_event(f.edge[i], 1, elan3::event::Type::Chain, target.elan, 0, false);
  return true;
}

// Writes each child's envelope (this node as the parent, the child's edge
// event as the event to set) and sends it on the child's circuit.
void EpNode::start_fanout(Fanout& f, const EP_ENVELOPE& env, const std::uint8_t* trailer, std::size_t trailer_bytes) {
  const std::uint32_t slot = large_slot_size(*this);
  f.bytes = static_cast<std::uint32_t>((sizeof env + trailer_bytes + 7) & ~std::size_t{7});
  for (std::size_t i = 0; i < f.children.size(); ++i) {
    EP_ENVELOPE out = env;
    out.Parent = self;
    out.TxdDone = f.edge[i].elan;
    auto* p = static_cast<std::uint8_t*>(f.envs.host) + i * slot;
    std::memcpy(p, &out, sizeof out);
    if (trailer_bytes) std::memcpy(p + sizeof out, trailer, trailer_bytes);
  }
  for (std::size_t i = 0; i < f.children.size(); ++i) send_edge(f, static_cast<int>(i));
}

// One edge's envelope on the circuit to the child: at once if it is
// connected, after the handshake if not; a child that cannot be reached
// fails the edge (manual 2.1.3: no circuit, or a circuit being broken).
void EpNode::send_edge(Fanout& f, int i) {
  const auto child = static_cast<std::uint32_t>(f.children[static_cast<std::size_t>(i)]);
  Circuit& c = circuit(child);
  switch (c.state()) {
    case CircuitState::Connected: {
      const std::uint32_t slot = large_slot_size(*this);
      auto* env = reinterpret_cast<EP_ENVELOPE*>(static_cast<std::uint8_t*>(f.envs.host) +
                                                 static_cast<std::uint32_t>(i) * slot);
      env->Circuit = c.incarnation;
      c.last_sent = Calendar::now();
      elan3::DmaRequest req;
      req.direction = elan3::dma::Direction::Write;
      req.opcode = elan3::dma::OpCode::Queued;
      req.size = f.bytes;
      req.source = f.envs.elan + static_cast<std::uint32_t>(i) * slot;
      req.dest = service_queue_addr(f.service);
      req.dest_node = child;
      req.src_cookie = f.cookie;
      req.dest_cookie = static_cast<std::uint16_t>(f.gen);  // for the retry filter
      if (dev.issue_dma(req) != elan3::DevStatus::Ok) fail_edge(f, i);
      return;
    }
    case CircuitState::Failed:
      if (Calendar::now() - c.failed_at < reset_hold) break;
      c.fsm.fire(CircuitEvent::ResetDone, "reset hold over");
      [[fallthrough]];
    case CircuitState::Disconnected:
      if (!is_live(child)) break;
      connect(c);
      if (c.state() == CircuitState::Connected) {
        send_edge(f, i);
        return;
      }
      [[fallthrough]];
    case CircuitState::Connecting:
      c.waiting_edges.push_back([this, fp = &f, gen = f.gen, i](bool up) {
        if (fp->gen != gen) return;
        if (up)
          send_edge(*fp, i);
        else
          fail_edge(*fp, i);
      });
      return;
  }
  fail_edge(f, i);
}

// The child's subtree is lost: its edge is completed here (once: an edge
// already set by the child is left alone) and the failure recorded.
void EpNode::fail_edge(Fanout& f, int i) {
  const auto k = static_cast<std::size_t>(i);
  if (f.failed[k] || dev.event_fired(f.edge[k])) return;
  f.failed[k] = true;
  f.dirty = true;
  if (f.txd)
    f.txd->status = ENETRESET;
  else if (f.rxd)
    mark_multicast_failure(f.rxd);
  dev.set_event(f.edge[k].elan);
}

// Every open edge to `peer`, of the root's transmits and of the receives
// forwarding here.
void EpNode::fail_edges_to(std::uint32_t peer) {
  for (ep_xmtr* x : xmtrs)
    for (ep_txd* t : std::vector<ep_txd*>(x->active))
      if (t->active && t->kind == TxKind::Multicast && t->fan && t->fan->txd == t)
        if (int i = t->fan->slot_of(static_cast<int>(peer)); i >= 0) fail_edge(*t->fan, i);
  for (ep_rxd* d : rxd_table)
    if (d->state == RxState::Forwarding && d->fan)
      if (int i = d->fan->slot_of(static_cast<int>(peer)); i >= 0) fail_edge(*d->fan, i);
}

// The fan-out whose envelope DMAs carry `cookie`, if one is in progress.
Fanout* EpNode::fanout_of_cookie(std::uint16_t cookie) {
  if (cookie == 0) return nullptr;
  if (cookie & kRxCookie) {
    const std::uint32_t i = cookie & ~kRxCookie;
    if (i < 1 || i > rxd_table.size()) return nullptr;
    ep_rxd* d = rxd_table[i - 1];
    return d->state == RxState::Forwarding && d->fan ? d->fan.get() : nullptr;
  }
  ep_txd* t = txd_of_cookie(cookie);
  return t && t->active && t->kind == TxKind::Multicast && t->fan && t->fan->txd == t ? t->fan.get() : nullptr;
}

// Writes ENETRESET into the first word of the root's status block.
void EpNode::mark_multicast_failure(ep_rxd* d) {
  auto* word = static_cast<std::uint32_t*>(d->reply_blk.host);
  word[0] = ENETRESET;
  elan3::DmaRequest req;
  req.direction = elan3::dma::Direction::Write;
  req.opcode = elan3::dma::OpCode::Normal;
  req.size = sizeof(std::uint32_t);
  req.source = d->reply_blk.elan;
  req.dest = d->envelope.StatusBlk;
  req.dest_node = d->envelope.Root;
  dev.issue_dma(req);
}

}  // namespace nicsim::ep

using nicsim::ep::EpNode;

namespace {
// A multicast whose txd a failure marked while the call filled it in
// (EpNode::launch): the call fails, nothing was sent.
int refuse(EpNode* node, ep_txd* t) {
  t->handler = nullptr;
  node->put_txd(t);
  return ENETRESET;
}

// The envelope names the data where the broadcast puts it (the area of the
// lane it goes out on, at the same Elan address on every node; set when a
// lane takes it); the txd's event is set when every node of the range has
// the message in its buffer (docs/ep.md "Multicast by hardware
// broadcast").
int broadcast_multicast(EpNode* node, ep_txd* t, const std::vector<int>& members, const EP_IOVEC* iovec, int iovlen) {
  auto* env = static_cast<EP_ENVELOPE*>(t->buf.host);
  nicsim::ep::BcastJob job;
  job.t = t;
  job.generation = t->generation;
  job.lo = static_cast<std::uint32_t>(members.front());
  job.hi = static_cast<std::uint32_t>(members.back());
  job.nfrags = iovlen;
  for (int i = 0; i < iovlen; ++i) job.frags[i] = iovec[i];
  env->TxdDone = 0;
  env->nFrags = env->Len > 0 ? 1 : 0;
  std::memset(env->Frags, 0, sizeof env->Frags);
  env->Frags[0].Len = env->Len;
  node->dev.prime_event(t->done, 1, nicsim::elan3::event::Type::None, 0, 0, t->irq, t->xmtr->cookie);
  if (!node->launch(t)) return refuse(node, t);
  t->sent = true;
  node->broadcast_submit(job);
  return ESUCCESS;
}
}  // namespace

extern "C" int ep_multicast_large(EP_XMTR* xmtr, int destLo, int destHi, bitmap_t* bitmap, int service, int flags,
                                  EP_TXH* handler, void* arg, EP_IOVEC* iovec, int iovlen) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_call");
  if (!xmtr || xmtr->tag != nicsim::ep::kXmtrTag || xmtr->node != node || !xmtr->large) return EINVAL;
  if (iovlen < 0 || iovlen > EP_MAXFRAG || (iovlen > 0 && !iovec)) return EINVAL;
  if (service <= EP_SVC_KCOMMS || service >= EP_NUM_SERVICES) return EINVAL;
  const int nn = static_cast<int>(node->nnodes);
  const int lo = destLo == -1 ? 0 : destLo;
  const int hi = destHi == -1 ? nn - 1 : destHi;
  if (lo < 0 || hi >= nn || lo > hi) return ECONNREFUSED;
  const int span = hi - lo + 1;
  if (BT_BITOUL(span) * sizeof(bitmap_t) + sizeof(EP_ENVELOPE) > nicsim::ep::large_slot_size(*node)) return EINVAL;
  // The destination set: range, bitmap (bit n = node n), live nodes, and not
  // this node if EP_NOT_MYSELF.
  std::vector<int> members;
  std::vector<bitmap_t> set(BT_BITOUL(span), 0);
  for (int n = lo; n <= hi; ++n) {
    if (bitmap && !BT_TEST(bitmap, n)) continue;
    if (!node->is_live(static_cast<std::uint32_t>(n))) continue;
    if ((flags & EP_NOT_MYSELF) && n == static_cast<int>(node->self)) continue;
    members.push_back(n);
    BT_SET(set.data(), n - lo);
  }
  std::uint64_t total = 0;
  for (int i = 0; i < iovlen; ++i) total += iovec[i].Len;
  if (total > 0x7fffffffu) return EINVAL;
  ep_txd* t = nullptr;
  if (int rc = node->get_txd(xmtr, flags, &t); rc != ESUCCESS) return rc;
  node->cpu("ep_transmit");
  t->kind = TxKind::Multicast;
  t->dest = -1;
  t->service = service;
  t->flags = flags;
  t->handler = handler;
  t->arg = arg;
  t->polled = (flags & EP_NO_INTERRUPT) != 0;
  t->irq = !t->polled || xmtr->txcallbacks;  // manual 2.1.5
  std::memset(t->status_blk.host, 0, EP_STATUSBLK_SIZE);
  // By hardware broadcast when the set is a whole contiguous range of more
  // than one node and the data fit a broadcast area; else the tree.
  const bool broadcast = node->broadcast_fits(members, total);
  auto* env = static_cast<EP_ENVELOPE*>(t->buf.host);
  std::memset(env, 0, sizeof *env);
  env->Version = EP_ENVELOPE_VERSION;
  env->Attr = EP_ENV_MULTICAST |
              (broadcast ? static_cast<E3_uint32>(EP_ENV_BCAST_DATA) : static_cast<E3_uint32>(EP_ENV_HAS_BITMAP));
  env->Service = static_cast<E3_uint32>(service);
  env->NodeId = node->self;
  env->Xid = t->id();
  env->Len = static_cast<E3_uint32>(total);
  env->nFrags = static_cast<E3_uint32>(iovlen);
  for (int i = 0; i < iovlen; ++i) env->Frags[i] = iovec[i];
  env->TxdDone = t->done.elan;
  env->StatusBlk = t->status_blk.elan;
  env->RangeLo = static_cast<E3_uint32>(lo);
  env->RangeHi = static_cast<E3_uint32>(hi);
  env->Root = node->self;
  env->Parent = node->self;
  std::uint32_t bytes = sizeof(EP_ENVELOPE);
  if (!broadcast) {
    std::vector<bitmap_t> net(set.size());
    bt_hton(set.data(), net.data(), span);
    std::memcpy(static_cast<std::uint8_t*>(t->buf.host) + sizeof(EP_ENVELOPE), net.data(),
                net.size() * sizeof(bitmap_t));
    bytes += static_cast<std::uint32_t>(net.size() * sizeof(bitmap_t));
    bytes = (bytes + 7) & ~7u;
  }
  t->buf_len = bytes;
  if (t->fan) t->fan->txd = nullptr;  // a tree's edges belong to the tree multicast only
  if (broadcast) return broadcast_multicast(node, t, members, iovec, iovlen);
  const std::vector<int> children = nicsim::ep::children_of(members, -1);
  if (!node->launch(t)) return refuse(node, t);
  t->sent = true;
  if (children.empty()) {
    // An empty set completes at once.
    node->dev.prime_event(t->done, 1, nicsim::elan3::event::Type::None, 0, 0, t->irq, xmtr->cookie);
    node->dev.set_event(t->done.elan);
    return ESUCCESS;
  }
  // The root's event counts its children's subtrees, each through the
  // edge event of its circuit.
  if (!t->fan) t->fan = std::make_unique<nicsim::ep::Fanout>();
  nicsim::ep::Fanout& f = *t->fan;
  f.txd = t;
  f.children = children;
  f.service = service;
  f.cookie = static_cast<std::uint16_t>(t->index);
  if (!node->prepare_fanout(f, t->done, t->irq, xmtr->cookie)) {
    t->handler = nullptr;
    node->put_txd(t);
    return ENOMEM;
  }
  node->start_fanout(f, *env, static_cast<std::uint8_t*>(t->buf.host) + sizeof(EP_ENVELOPE),
                     bytes - sizeof(EP_ENVELOPE));
  return ESUCCESS;
}
