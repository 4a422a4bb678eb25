// Small and special messages (manual: ep_install_small_rcvr,
// ep_transmit_small, ep_waitfor_small_message, ep_consume_small_message):
// the data travels in the input-queue slot behind a 16-byte header.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ep/lib/ep_internal.h"

using nicsim::ep::EpNode;
using nicsim::ep::SmallHeader;

namespace {

bool valid(const ep_rcvr* r) { return r && r->tag == nicsim::ep::kRcvrTag && !r->removed; }
bool valid(const ep_xmtr* x) { return x && x->tag == nicsim::ep::kXmtrTag; }

std::uint32_t small_slot(int msgsize) {
  return static_cast<std::uint32_t>((sizeof(SmallHeader) + static_cast<std::uint32_t>(msgsize) + 7) & ~7u);
}

}  // namespace

namespace nicsim::ep {

// Queue interrupt of a small receiver: hand each new message to the
// handler (then free its slot), or to the threads waiting for messages.
void EpNode::small_arrived(ep_rcvr* r) {
  // One context at a time (see envelope_arrived).
  if (r->draining) {
    r->drain_again = true;
    return;
  }
  r->draining = true;
  do {
    r->drain_again = false;
    deliver_small(r);
  } while (r->drain_again);
  r->draining = false;
}

void EpNode::deliver_small(ep_rcvr* r) {
  for (;;) {
    const std::uint32_t n = queued(r);
    const std::uint32_t handed = static_cast<std::uint32_t>(r->delivered.size());
    if (n <= handed) return;
    const std::uint8_t* p = slot(r, handed);
    SmallHeader h;
    std::memcpy(&h, p, sizeof h);
    cpu("ep_receive");
    const std::uint32_t kind = h.magic & 0xffu;
    const bool ok = (h.magic & 0xff000000u) == kSmallMagic && h.len <= static_cast<std::uint32_t>(r->msgsize) &&
                    h.node < nnodes && (kind == kSmallData || kind == kSpecialData);
    bool take = ok;
    if (ok && kind == kSmallData) {
      // A small (non-special) message belongs to a circuit: one of an older
      // incarnation, or on a circuit not connected, is dropped.
      Circuit& c = circuit(h.node);
      take = c.state() == CircuitState::Connected && h.circuit == c.peer_incarnation;
    }
    if (!ok) error(fmt::format("service {}: malformed small message in the input queue dropped", r->service));
    if (ok) heard_from(h.node);
    if (!take || r->handler) {
      if (take) r->handler(r->arg, reinterpret_cast<caddr_t>(const_cast<std::uint8_t*>(p + sizeof h)));
      if (!r->delivered.empty()) {
        // Waiters hold older slots: this one is freed with them, in order.
        r->delivered.push_back(p);
        r->consumed.push_back(p);
      } else {
        dev.queue_consume(r->queue);
      }
      continue;
    }
    r->delivered.push_back(p);
    r->waiters->notify_one();
  }
}

}  // namespace nicsim::ep

extern "C" EP_RCVR* ep_install_small_rcvr(int instance, int service, int type, int msgsize, int msgentries,
                                          EP_RCV* handler, void* arg) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node || instance != 0 || service <= EP_SVC_KCOMMS || service >= EP_NUM_SERVICES) return nullptr;
  node->cpu("ep_install");
  if ((type != EP_SVC_TYPE_SMALL && type != EP_SVC_TYPE_SPECIAL) || msgsize <= 0 || msgentries <= 0) return nullptr;
  if (small_slot(msgsize) > node->dev.max_packet_payload() || node->services[service]) return nullptr;
  auto owned = std::make_unique<ep_rcvr>();
  ep_rcvr* r = owned.get();
  r->node = node;
  r->service = service;
  r->type = type;
  r->msgsize = msgsize;
  r->handler = handler;
  r->arg = arg;
  r->dma_state.node = node;
  r->waiters = std::make_unique<nicsim::host::WaitQueue>(node->host);
  // A queue of n slots holds n - 1 messages.
  if (!node->install_queue(r, static_cast<std::uint32_t>(msgentries) + 1, small_slot(msgsize))) return nullptr;
  node->all_rcvrs.push_back(std::move(owned));
  return r;
}

extern "C" void ep_remove_small_rcvr(EP_RCVR* rcvr) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return;
  node->cpu("ep_install");
  if (!valid(rcvr) || rcvr->large || rcvr->node != node) {
    node->error("ep_remove_small_rcvr: not a small receiver of this node (bad handle)");
    return;
  }
  node->remove_queue(rcvr);
  rcvr->removed = true;
  rcvr->waiters->notify_all();
  // The handle stays allocated until the node's software goes (tag cleared
  // by `removed`): a later use is a bad handle, not a use after free.
}

extern "C" int ep_transmit_small(EP_XMTR* xmtr, int dest, int service, int flags, E3_uint64 timeout, EP_TXH* handler,
                                 void* arg, caddr_t buffer, int len) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_call");
  if (!valid(xmtr) || xmtr->large || xmtr->node != node) return EINVAL;
  if (service < 0 || service >= EP_NUM_SERVICES || (service == EP_SVC_KCOMMS && xmtr != node->control_xmtr))
    return EINVAL;
  if (len < 0 || len > xmtr->msgsize || (len > 0 && !buffer)) return EINVAL;
  const bool special = xmtr->type == EP_SVC_TYPE_SPECIAL;
  if (special && timeout == 0) return EINVAL;  // manual 2.1.4: special messages need a timeout
  if (dest < 0 || static_cast<std::uint32_t>(dest) >= node->nnodes) return ECONNREFUSED;
  ep_txd* t = nullptr;
  if (int rc = node->get_txd(xmtr, flags, &t); rc != ESUCCESS) return rc;
  node->cpu("ep_transmit", static_cast<std::uint64_t>(len));  // the copy of the data
  t->kind = special ? TxKind::Special : TxKind::Small;
  t->dest = dest;
  t->service = service;
  t->flags = flags;
  t->handler = handler;
  t->arg = arg;
  t->polled = (flags & EP_NO_INTERRUPT) != 0;
  t->irq = !t->polled || xmtr->txcallbacks;  // manual 2.1.5
  auto* h = static_cast<SmallHeader*>(t->buf.host);
  h->magic = nicsim::ep::kSmallMagic | (special ? nicsim::ep::kSpecialData : nicsim::ep::kSmallData);
  h->node = static_cast<std::uint16_t>(node->self);
  h->len = static_cast<std::uint16_t>(len);
  h->circuit = 0;
  h->seq = ++node->special_seq;
  if (len > 0) std::memcpy(h + 1, buffer, static_cast<std::size_t>(len));
  t->buf_len = small_slot(len);
  node->dev.prime_event(t->done, 1, nicsim::elan3::event::Type::None, 0, 0, t->irq, xmtr->cookie);
  if (!node->launch(t)) {
    t->handler = nullptr;
    node->put_txd(t);
    return ENETRESET;
  }
  if (special) {
    // No circuit; the timeout completes it ETIMEDOUT if no ack came by then.
    t->deadline = nicsim::Calendar::now() + static_cast<nicsim::Tick>(timeout) * nicsim::kNs;
    t->timer = std::make_unique<nicsim::host::Timer>(node->host, "ep.special", [node, t, gen = t->generation] {
      if (t->active && !t->forced && t->generation == gen && !node->dev.event_fired(t->done)) node->force(t, ETIMEDOUT);
    });
    t->timer->start(static_cast<nicsim::Tick>(timeout) * nicsim::kNs);
    node->issue(t);
    return ESUCCESS;
  }
  const int rc = node->send_on_circuit(t);
  if (rc != ESUCCESS) {
    t->handler = nullptr;
    node->put_txd(t);
  }
  return rc;
}

extern "C" int ep_waitfor_small_message(EP_RCVR* rcvr, caddr_t* msg) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return EINVAL;
  node->cpu("ep_call");
  if (!valid(rcvr) || rcvr->large || rcvr->node != node || rcvr->handler || !msg) return EINVAL;
  // Messages handed out and not consumed stay in `delivered`; a waiter takes
  // the first one no other waiter took.
  for (;;) {
    if (rcvr->removed) return EINVAL;
    for (const std::uint8_t* p : rcvr->delivered) {
      if (std::find(rcvr->consumed.begin(), rcvr->consumed.end(), p) != rcvr->consumed.end()) continue;
      if (std::find(rcvr->taken.begin(), rcvr->taken.end(), p) != rcvr->taken.end()) continue;
      rcvr->taken.push_back(p);
      *msg = reinterpret_cast<caddr_t>(const_cast<std::uint8_t*>(p + sizeof(SmallHeader)));
      return ESUCCESS;
    }
    nicsim::host::BlockScope scope(node->host, "ep_waitfor_small_message");
    if (!rcvr->waiters->wait()) return EINVAL;  // interrupt context: reported by the host
  }
}

extern "C" void ep_consume_small_message(EP_RCVR* rcvr, caddr_t* msg) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return;
  node->cpu("ep_call");
  if (!valid(rcvr) || rcvr->large || rcvr->node != node || !msg) {
    node->error("ep_consume_small_message: bad receiver handle or message");
    return;
  }
  // The manual's SYNOPSIS passes caddr_t *, its example the message itself.
  auto matches = [&](const std::uint8_t* data) {
    for (const std::uint8_t* p : rcvr->taken)
      if (p + sizeof(SmallHeader) == data) return p;
    return static_cast<const std::uint8_t*>(nullptr);
  };
  const std::uint8_t* p = matches(reinterpret_cast<const std::uint8_t*>(msg));
  if (!p) p = matches(reinterpret_cast<const std::uint8_t*>(*msg));
  if (!p) {
    node->error(
        fmt::format("ep_consume_small_message on service {}: not a message handed out by "
                    "ep_waitfor_small_message",
                    rcvr->service));
    return;
  }
  rcvr->taken.erase(std::find(rcvr->taken.begin(), rcvr->taken.end(), p));
  rcvr->consumed.push_back(p);
  // Free slots in order, as far as they are consumed.
  while (!rcvr->delivered.empty()) {
    auto it = std::find(rcvr->consumed.begin(), rcvr->consumed.end(), rcvr->delivered.front());
    if (it == rcvr->consumed.end()) break;
    rcvr->consumed.erase(it);
    rcvr->delivered.pop_front();
    node->dev.queue_consume(rcvr->queue);
  }
  // Messages that arrived while the queue was full of unconsumed ones.
  node->small_arrived(rcvr);
}
