// Large messages and RPC (manual: ep_install_large_rcvr, ep_transmit_large,
// ep_transmit_rpc, ep_queue_receive, ep_requeue_receive,
// ep_waitfor_large_receive, ep_complete_rpc, ep_complete_receive, the
// ep_rxd_* accessors). The envelope goes to the destination's service slot;
// the receiver binds a queued buffer and pulls the fragments with Read DMAs
// whose source events complete the sender (docs/ep.md "Large messages").
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ep/lib/ep_internal.h"

using nicsim::ep::EpNode;
namespace elan3 = nicsim::elan3;

namespace nicsim::ep {
namespace {

constexpr int kMaxEnvelopes = 1024;              // per receiver ("a maximum value", manual)
constexpr std::uint32_t kPullPiece = 64 * 1024;  // bytes per read DMA of a pull (8 Elan pages)

int nonempty(const EP_ENVELOPE& env) {
  int n = 0;
  for (std::uint32_t i = 0; i < env.nFrags && i < EP_MAXFRAG; ++i) n += env.Frags[i].Len > 0;
  return n;
}

}  // namespace

std::uint32_t large_slot_size(const EpNode& node) {
  return std::min<std::uint32_t>(kLargeSlotBytes, node.dev.max_packet_payload()) & ~7u;
}

// Queue interrupt (and ep_queue_receive): bind waiting envelopes to posted
// buffers, oldest first. Envelopes with no buffer stay in their slots.
void EpNode::envelope_arrived(ep_rcvr* r) {
  // A thread (ep_queue_receive) and the queue interrupt both drain; the CPU
  // charges below let the other run meanwhile, so one drains at a time and
  // the other asks it to look again (a spinlock in a real kernel).
  if (r->draining) {
    r->drain_again = true;
    return;
  }
  r->draining = true;
  do {
    r->drain_again = false;
    bind_envelopes(r);
  } while (r->drain_again);
  r->draining = false;
}

void EpNode::bind_envelopes(ep_rcvr* r) {
  while (!r->removed && !r->posted.empty() && queued(r) > 0) {
    const std::uint8_t* p = slot(r, 0);
    EP_ENVELOPE env;
    std::memcpy(&env, p, sizeof env);
    std::vector<std::uint8_t> trailer;
    if (env.Attr & EP_ENV_HAS_BITMAP) {
      const std::uint32_t span = env.RangeHi - env.RangeLo + 1;
      const std::size_t bytes = BT_BITOUL(span) * sizeof(bitmap_t);
      if (env.RangeHi >= env.RangeLo && sizeof env + bytes <= r->queue.slot_size)
        trailer.assign(p + sizeof env, p + sizeof env + bytes);
    }
    dev.queue_consume(r->queue);
    cpu("ep_receive");
    const std::uint32_t kind = env.Attr & EP_ENV_KIND_MASK;
    if (env.Version != EP_ENVELOPE_VERSION || env.NodeId >= nnodes || env.nFrags > EP_MAXFRAG ||
        (kind != EP_ENV_LARGE && kind != EP_ENV_RPC && kind != EP_ENV_MULTICAST) ||
        static_cast<int>(env.Service) != r->service) {
      error(fmt::format("service {}: malformed envelope dropped", r->service));
      continue;
    }
    if (kind != EP_ENV_MULTICAST || (env.Attr & EP_ENV_HAS_BITMAP)) {
      // Unicast messages and multicast tree edges belong to the circuit
      // from the sender (the tree parent): drop those of an earlier one.
      Circuit& c = circuit(kind == EP_ENV_MULTICAST ? env.Parent : env.NodeId);
      if (env.Parent >= nnodes || c.state() != CircuitState::Connected || env.Circuit != c.peer_incarnation) continue;
    }
    heard_from(env.NodeId);
    ep_rxd* d = r->posted.front();
    r->posted.pop_front();
    d->envelope = env;
    d->bitmap_trailer = std::move(trailer);
    d->node = static_cast<int>(env.NodeId);
    start_pull(d);
  }
}

void EpNode::set_remote_event(std::uint32_t node, elan3::E3Addr ev, int times) {
  elan3::DmaRequest req;
  req.direction = elan3::dma::Direction::Write;
  req.opcode = elan3::dma::OpCode::Normal;
  req.size = 0;  // a remote set-event
  req.dest_event = ev;
  req.dest_node = node;
  for (int i = 0; i < times; ++i) dev.issue_dma(req);
}

// Completes the rxd through its own event, so that the handler always runs
// in interrupt context whatever context found the message.
static void complete_locally(EpNode& n, ep_rxd* d) {
  n.dev.prime_event(d->done, 1, elan3::event::Type::None, 0, 0, true, d->rcvr->cookie);
  n.dev.set_event(d->done.elan);
}

void EpNode::start_pull(ep_rxd* d) {
  const EP_ENVELOPE& env = d->envelope;
  const bool mcast = (env.Attr & EP_ENV_KIND_MASK) == EP_ENV_MULTICAST;
  // A hardware broadcast left the data in this node's area: the "pull" is
  // a copy by this node's own Elan (docs/ep.md "Multicast by hardware
  // broadcast").
  const std::uint32_t source = (env.Attr & EP_ENV_BCAST_DATA) ? self : env.NodeId;
  const int frags = nonempty(env);
  d->len = static_cast<int>(env.Len);
  d->status = ESUCCESS;
  d->state = RxState::Pulling;
  d->pulls = frags;
  if (env.Len > d->size || frags == 0) {
    // E2BIG (no data moved) or an empty message: the sender still completes.
    if (env.Len > d->size) d->status = E2BIG;
    if (!mcast) set_remote_event(env.NodeId, env.TxdDone, std::max(1, frags));
    complete_locally(*this, d);
    return;
  }
  // Each fragment is read in pieces of at most kPullPiece bytes: the
  // source's Elan translates a read request's whole source (a page walk
  // over the bus for each TLB miss) before it answers the request's token,
  // and at a node busy serving others a 256 KiB source took longer than
  // the requester's retries of its ack timeout: the pull failed with a
  // network error (EpMulticastFault.*). Pieces to one node land in order.
  int pieces = 0;
  for (std::uint32_t i = 0; i < env.nFrags; ++i)
    pieces += static_cast<int>((env.Frags[i].Len + kPullPiece - 1) / kPullPiece);
  d->pulls = pieces;
  dev.prime_event(d->done, pieces, elan3::event::Type::None, 0, 0, true, d->rcvr->cookie);
  std::uint32_t off = 0;
  for (std::uint32_t i = 0; i < env.nFrags; ++i) {
    for (std::uint32_t done = 0; done < env.Frags[i].Len;) {
      const std::uint32_t len = std::min(kPullPiece, env.Frags[i].Len - done);
      elan3::DmaRequest req;
      req.direction = elan3::dma::Direction::Read;
      req.opcode = elan3::dma::OpCode::Normal;
      req.size = len;
      req.source = env.Frags[i].Base + done;
      req.dest = d->buffer + off;
      req.dest_event = d->done.elan;
      done += len;
      off += len;
      // Unicast: the sender's event counts the fragments that landed here
      // (set by a fragment's last piece). Multicast: the parent completes
      // when this node's subtree has.
      req.src_event = (mcast || done < env.Frags[i].Len) ? 0 : env.TxdDone;
      req.dest_node = source;
      req.src_cookie = static_cast<std::uint16_t>(kRxCookie | d->index);
      if (dev.issue_dma(req) != elan3::DevStatus::Ok) {
        fail_rxd(d, ENETRESET);
        return;
      }
    }
  }
}

void EpNode::rx_event(ep_rcvr* r, elan3::E3Addr ev) {
  for (auto& up : r->rxds) {
    ep_rxd* d = up.get();
    if (d->done.elan == ev && d->state == RxState::Pulling) {
      if (!dev.event_fired(d->done)) return;
      // Data from the source landed: the source is alive. A busy source's
      // own messages (heartbeats too) wait behind the replies its Elan
      // serves (one DMA engine, in order), longer than the heartbeat
      // timeout when many pulls are queued there, while its data keeps
      // arriving; without this the circuit failed and the pulls with it.
      if (d->envelope.Attr & EP_ENV_BCAST_DATA) {
        // The area is free again; if it was reset or rewritten meanwhile,
        // what was copied cannot be trusted.
        if (!broadcast_release(d) && d->status == ESUCCESS) d->status = ENETRESET;
        finish_rx(d);
        return;
      }
      if (d->status == ESUCCESS && d->len > 0) heard_from(d->envelope.NodeId);
      if ((d->envelope.Attr & EP_ENV_KIND_MASK) == EP_ENV_MULTICAST)
        forward(d);  // E2BIG too: its children are served from its own source
      else
        finish_rx(d);
      return;
    }
    if (d->subtree && d->subtree.elan == ev && d->state == RxState::Forwarding) {
      if (dev.event_fired(d->subtree)) subtree_done(d);
      return;
    }
    if (d->reply_done.elan == ev && d->state == RxState::Completing) {
      if (!dev.event_fired(d->reply_done)) return;
      d->state = RxState::Done;
      cpu("ep_complete");
      if (d->reply_handler) d->reply_handler(d);
      return;
    }
  }
}

void EpNode::fail_rxd(ep_rxd* d, int status) {
  if (d->state == RxState::Pulling) {
    d->status = status;
    if (d->envelope.Attr & EP_ENV_BCAST_DATA) {
      // The copy out of the area failed: the area is free again, the
      // sender was told nothing (it completed on the joined token).
      broadcast_release(d);
    } else if ((d->envelope.Attr & EP_ENV_KIND_MASK) == EP_ENV_MULTICAST) {
      // This subtree is lost: the root learns it, the parent's count is met.
      mark_multicast_failure(d);
      set_remote_event(d->envelope.Parent, d->envelope.TxdDone, 1);
    } else if (circuit(d->envelope.NodeId).state() == CircuitState::Connected) {
      // The sender's event will not be set by this pull: tell it.
      send_control(d->envelope.NodeId, Control::Abort, d->envelope.Xid, 0);
    }
    finish_rx(d);
  } else if (d->state == RxState::Forwarding) {
    // An envelope to a child failed: the child's edge is completed by the
    // circuit failure or the refusal (fail_edge), not here.
  } else if (d->state == RxState::Completing) {
    d->status = status;
    d->state = RxState::Done;
    if (d->reply_handler) d->reply_handler(d);
  }
}

void EpNode::finish_rx(ep_rxd* d) {
  d->state = RxState::Done;
  cpu("ep_complete");
  if (d->handler) {
    d->handler(d);
    return;
  }
  d->rcvr->completed.push_back(d);
  d->rcvr->waiters->notify_one();
}

ep_rxd* EpNode::new_rxd(ep_rcvr* r, int flags) {
  if (!r->spare.empty()) {
    ep_rxd* d = r->spare.front();
    r->spare.pop_front();
    return d;
  }
  if (flags & EP_NO_ALLOC) return nullptr;
  const bool wait = !(flags & EP_NO_SLEEP) && host.current() && !host.in_interrupt();
  auto d = std::make_unique<ep_rxd>();
  d->rcvr = r;
  // The data's last packet comes from the sender's Elan and sets this
  // event: it needs RemoteEvent.
  d->done = dev.alloc_event(true, wait);
  d->reply_done = dev.alloc_event(false, wait);
  d->reply_blk = dev.alloc_mem(EP_STATUSBLK_SIZE, elan3::kBlockSize, 0, wait);
  if (!d->done || !d->reply_done || !d->reply_blk || rxd_table.size() >= 0x7fff) {
    if (d->done) dev.free_mem(d->done);
    if (d->reply_done) dev.free_mem(d->reply_done);
    if (d->reply_blk) dev.free_mem(d->reply_blk);
    return nullptr;
  }
  rxd_table.push_back(d.get());
  d->index = static_cast<std::uint32_t>(rxd_table.size());
  r->rxds.push_back(std::move(d));
  return r->rxds.back().get();
}

}  // namespace nicsim::ep

namespace {

bool valid_rcvr(const ep_rcvr* r, const EpNode* node) {
  return r && r->tag == nicsim::ep::kRcvrTag && r->node == node && r->large && !r->removed;
}
bool valid_rxd(const ep_rxd* d) { return d && d->tag == nicsim::ep::kRxdTag && d->rcvr; }

// The common part of ep_transmit_large and ep_transmit_rpc.
int send_large(EP_XMTR* xmtr, int dest, int service, int flags, EP_TXH* handler, void* arg, EP_RPC_PAYLOAD* payload,
               EP_IOVEC* iovec, int iovlen, bool rpc) {
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_call");
  if (!xmtr || xmtr->tag != nicsim::ep::kXmtrTag || xmtr->node != node || !xmtr->large) return EINVAL;
  if (iovlen < 0 || iovlen > EP_MAXFRAG || (iovlen > 0 && !iovec)) return EINVAL;  // "the iovector is too big"
  if (service <= EP_SVC_KCOMMS || service >= EP_NUM_SERVICES) return EINVAL;
  if (dest < 0 || static_cast<std::uint32_t>(dest) >= node->nnodes) return ECONNREFUSED;
  std::uint64_t total = 0;
  for (int i = 0; i < iovlen; ++i) total += iovec[i].Len;
  if (total > 0x7fffffffu) return EINVAL;
  ep_txd* t = nullptr;
  if (int rc = node->get_txd(xmtr, flags, &t); rc != ESUCCESS) return rc;
  node->cpu("ep_transmit");
  t->kind = rpc ? TxKind::Rpc : TxKind::Large;
  t->dest = dest;
  t->service = service;
  t->flags = flags;
  t->handler = handler;
  t->arg = arg;
  t->polled = (flags & EP_NO_INTERRUPT) != 0;
  t->irq = !t->polled || xmtr->txcallbacks;  // manual 2.1.5
  auto* env = static_cast<EP_ENVELOPE*>(t->buf.host);
  std::memset(env, 0, sizeof *env);
  env->Version = EP_ENVELOPE_VERSION;
  env->Attr = rpc ? EP_ENV_RPC : EP_ENV_LARGE;
  env->Service = static_cast<E3_uint32>(service);
  env->NodeId = node->self;
  env->Xid = t->id();
  env->Len = static_cast<E3_uint32>(total);
  env->nFrags = static_cast<E3_uint32>(iovlen);
  int frags = 0;
  for (int i = 0; i < iovlen; ++i) {
    env->Frags[i] = iovec[i];
    frags += iovec[i].Len > 0;
  }
  env->TxdDone = t->done.elan;
  env->Parent = node->self;
  if (rpc) {
    env->StatusBlk = t->status_blk.elan;
    std::memset(t->status_blk.host, 0, EP_STATUSBLK_SIZE);
    if (payload) env->Payload.RPC = *payload;
  }
  t->buf_len = sizeof(EP_ENVELOPE);
  // One count per fragment that lands (at least one), plus the status
  // block of an RPC reply.
  const int count = std::max(1, frags) + (rpc ? 1 : 0);
  node->dev.prime_event(t->done, count, elan3::event::Type::None, 0, 0, t->irq, xmtr->cookie);
  const int rc = node->launch(t) ? node->send_on_circuit(t) : ENETRESET;
  if (rc != ESUCCESS) {
    t->handler = nullptr;
    node->put_txd(t);
  }
  return rc;
}

}  // namespace

extern "C" EP_RCVR* ep_install_large_rcvr(int instance, int service, int nenvelopes) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node || instance != 0 || service <= EP_SVC_KCOMMS || service >= EP_NUM_SERVICES) return nullptr;
  node->cpu("ep_install");
  if (nenvelopes <= 0 || nenvelopes > nicsim::ep::kMaxEnvelopes || node->services[service]) return nullptr;
  auto owned = std::make_unique<ep_rcvr>();
  ep_rcvr* r = owned.get();
  r->node = node;
  r->large = true;
  r->service = service;
  r->dma_state.node = node;
  r->waiters = std::make_unique<nicsim::host::WaitQueue>(node->host);
  if (!node->install_queue(r, static_cast<std::uint32_t>(nenvelopes) + 1, nicsim::ep::large_slot_size(*node)))
    return nullptr;
  node->all_rcvrs.push_back(std::move(owned));
  return r;
}

extern "C" void ep_remove_large_rcvr(EP_RCVR* rcvr) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return;
  node->cpu("ep_install");
  if (!valid_rcvr(rcvr, node)) {
    node->error("ep_remove_large_rcvr: not a large receiver of this node (bad handle)");
    return;
  }
  node->remove_queue(rcvr);
  rcvr->removed = true;
  rcvr->posted.clear();
  rcvr->waiters->notify_all();
}

extern "C" int ep_transmit_large(EP_XMTR* xmtr, int dest, int service, int flags, EP_TXH* handler, void* arg,
                                 EP_IOVEC* iovec, int iovlen) {
  NICSIM_API_CALL();
  return send_large(xmtr, dest, service, flags, handler, arg, nullptr, iovec, iovlen, false);
}

extern "C" int ep_transmit_rpc(EP_XMTR* xmtr, int dest, int service, int flags, EP_TXH* handler, void* arg,
                               EP_RPC_PAYLOAD* payload, EP_IOVEC* iovec, int iovlen) {
  NICSIM_API_CALL();
  return send_large(xmtr, dest, service, flags, handler, arg, payload, iovec, iovlen, true);
}

extern "C" int ep_queue_receive(EP_RCVR* rcvr, EP_RXH* handler, void* arg, E3_Addr buffer, E3_uint32 size, int flags) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_queue_receive");
  if (!valid_rcvr(rcvr, node)) return EINVAL;
  if (flags & ~(EP_NO_SLEEP | EP_NO_ALLOC)) return EINVAL;  // the manual's two flags, as ep_requeue_receive_flags
  ep_rxd* d = node->new_rxd(rcvr, flags);
  if (!d) return ENOMEM;
  d->state = RxState::Queued;
  d->handler = handler;
  d->arg = arg;
  d->buffer = buffer;
  d->size = size;
  d->status = ESUCCESS;
  d->len = 0;
  d->node = -1;
  rcvr->posted.push_back(d);
  node->envelope_arrived(rcvr);  // a message may already be waiting
  return ESUCCESS;
}

extern "C" int ep_requeue_receive(EP_RXD* rxd, EP_RXH* handler, void* arg, E3_Addr buffer, E3_uint32 size) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_queue_receive");
  if (!valid_rxd(rxd) || rxd->rcvr->node != node || rxd->state != RxState::Done || rxd->rcvr->removed) return EINVAL;
  rxd->state = RxState::Queued;
  rxd->handler = handler;
  rxd->arg = arg;
  rxd->buffer = buffer;
  rxd->size = size;
  rxd->status = ESUCCESS;
  rxd->rcvr->posted.push_back(rxd);
  node->envelope_arrived(rxd->rcvr);
  return ESUCCESS;
}

extern "C" int ep_requeue_receive_flags(EP_RXD* rxd, EP_RXH* handler, void* arg, E3_Addr buffer, E3_uint32 size,
                                        int flags) {
  if (flags & ~(EP_NO_SLEEP | EP_NO_ALLOC)) return EINVAL;
  return ep_requeue_receive(rxd, handler, arg, buffer, size);
}

extern "C" EP_RXD* ep_waitfor_large_receive(EP_RCVR* rcvr) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return nullptr;
  node->cpu("ep_call");
  if (!valid_rcvr(rcvr, node)) return nullptr;
  while (rcvr->completed.empty()) {
    if (rcvr->removed) return nullptr;
    nicsim::host::BlockScope scope(node->host, "ep_waitfor_large_receive");
    if (!rcvr->waiters->wait()) return nullptr;  // interrupt context: reported by the host
  }
  ep_rxd* d = rcvr->completed.front();
  rcvr->completed.pop_front();
  return d;
}

extern "C" int ep_complete_rpc(EP_RXD* rxd, EP_RXH* handler, void* arg, EP_STATUSBLK* blk, EP_DATAVEC* datavec,
                               int dataveclen) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_call");
  if (!valid_rxd(rxd) || rxd->rcvr->node != node || rxd->state != RxState::Done ||
      (rxd->envelope.Attr & EP_ENV_KIND_MASK) != EP_ENV_RPC)
    return EINVAL;
  if (dataveclen < 0 || (dataveclen > 0 && !datavec)) return EINVAL;
  const auto peer = static_cast<std::uint32_t>(rxd->node);
  nicsim::ep::Circuit& c = node->circuit(peer);
  if (c.state() != nicsim::ep::CircuitState::Connected || c.peer_incarnation != rxd->envelope.Circuit)
    return ENETRESET;  // "the virtual circuit was dropped after the message was received"
  node->cpu("ep_transmit");
  for (int i = 0; i < dataveclen; ++i) {
    if (datavec[i].Len == 0) continue;
    elan3::DmaRequest req;
    req.direction = elan3::dma::Direction::Write;
    req.opcode = elan3::dma::OpCode::Normal;
    req.size = datavec[i].Len;
    req.source = datavec[i].Source;
    req.dest = datavec[i].Dest;
    req.dest_node = peer;
    req.src_cookie = static_cast<std::uint16_t>(nicsim::ep::kRxCookie | rxd->index);
    if (node->dev.issue_dma(req) != elan3::DevStatus::Ok) return ENETRESET;
  }
  // The status block last: DMAs to one node land in order, so the sender's
  // event (set by this one) fires after the data is there.
  if (blk)
    std::memcpy(rxd->reply_blk.host, blk, EP_STATUSBLK_SIZE);
  else
    std::memset(rxd->reply_blk.host, 0, EP_STATUSBLK_SIZE);
  node->dev.prime_event(rxd->reply_done, 1, elan3::event::Type::None, 0, 0, true, rxd->rcvr->cookie);
  rxd->reply_handler = handler;
  rxd->arg = arg;
  rxd->state = RxState::Completing;
  elan3::DmaRequest req;
  req.direction = elan3::dma::Direction::Write;
  req.opcode = elan3::dma::OpCode::Normal;
  req.size = EP_STATUSBLK_SIZE;
  req.source = rxd->reply_blk.elan;
  req.dest = rxd->envelope.StatusBlk;
  req.dest_event = rxd->envelope.TxdDone;
  req.src_event = rxd->reply_done.elan;
  req.dest_node = peer;
  req.src_cookie = static_cast<std::uint16_t>(nicsim::ep::kRxCookie | rxd->index);
  if (node->dev.issue_dma(req) != elan3::DevStatus::Ok) {
    rxd->state = RxState::Done;
    return ENETRESET;
  }
  return ESUCCESS;
}

extern "C" void ep_complete_receive(EP_RXD* rxd) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return;
  node->cpu("ep_call");
  if (!valid_rxd(rxd) || rxd->rcvr->node != node || rxd->state != RxState::Done) {
    node->error("ep_complete_receive: not a completed receive descriptor of this node (bad handle)");
    return;
  }
  rxd->state = RxState::Free;
  rxd->rcvr->spare.push_back(rxd);
}

extern "C" void* ep_rxd_arg(struct ep_rxd* rxd) { return valid_rxd(rxd) ? rxd->arg : nullptr; }
extern "C" int ep_rxd_status(struct ep_rxd* rxd) { return valid_rxd(rxd) ? rxd->status : EINVAL; }
extern "C" int ep_rxd_len(struct ep_rxd* rxd) { return valid_rxd(rxd) ? rxd->len : 0; }
extern "C" int ep_rxd_node(struct ep_rxd* rxd) { return valid_rxd(rxd) ? rxd->node : -1; }
extern "C" int ep_rxd_isrpc(struct ep_rxd* rxd) {
  NICSIM_API_CALL();
  return valid_rxd(rxd) && (rxd->envelope.Attr & EP_ENV_KIND_MASK) == EP_ENV_RPC;
}
extern "C" EP_ENVELOPE* ep_rxd_envelope(struct ep_rxd* rxd) { return valid_rxd(rxd) ? &rxd->envelope : nullptr; }

extern "C" E3_DMA_STATE* ep_rcvr_dma_state(EP_RCVR* rcvr) {
  NICSIM_API_CALL();
  if (!rcvr || rcvr->tag != nicsim::ep::kRcvrTag || rcvr->removed) return nullptr;  // removed: a bad handle
  return &rcvr->dma_state;
}
