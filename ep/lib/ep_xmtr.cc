// Transmitters (manual: ep_alloc/free_small/large_xmtr), completion by
// polling or interrupt (manual 2.1.5: ep_poll_transmits,
// ep_enable/disable_txcallbacks) and the transmit descriptor accessor.
#include <fmt/format.h>

#include "ep/lib/ep_internal.h"

using nicsim::ep::EpNode;

namespace {
bool valid(const ep_xmtr* x, const EpNode* node) { return x && x->tag == nicsim::ep::kXmtrTag && x->node == node; }
}  // namespace

extern "C" EP_XMTR* ep_alloc_small_xmtr(int instance, int type, int msgsize) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node || instance != 0) return nullptr;
  node->cpu("ep_install");
  if ((type != EP_SVC_TYPE_SMALL && type != EP_SVC_TYPE_SPECIAL) || msgsize <= 0) return nullptr;
  if ((sizeof(nicsim::ep::SmallHeader) + static_cast<std::uint32_t>(msgsize) + 7) / 8 * 8 >
      node->dev.max_packet_payload())
    return nullptr;
  return node->new_xmtr(false, type, msgsize);
}

extern "C" EP_XMTR* ep_alloc_large_xmtr(int instance) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node || instance != 0) return nullptr;
  node->cpu("ep_install");
  return node->new_xmtr(true, 0, 0);
}

namespace {
void free_xmtr(EP_XMTR* xmtr, bool large, const char* who) {
  EpNode* node = EpNode::get();
  if (!node) return;
  node->cpu("ep_install");
  if (!valid(xmtr, node) || xmtr->large != large || xmtr == node->control_xmtr) {
    node->error(fmt::format("{}: not a {} transmitter of this node (bad handle)", who, large ? "large" : "small"));
    return;
  }
  // Transmits still active complete now (their handlers see ENETRESET).
  std::vector<ep_txd*> active = xmtr->active;
  for (ep_txd* t : active) {
    t->irq = true;
    node->force(t, ENETRESET);
  }
  node->dev.remove_event_handler(xmtr->cookie);
  xmtr->tag = 0;  // later uses are bad handles; descriptors stay for late events
  std::erase(node->xmtrs, xmtr);
}
}  // namespace

extern "C" void ep_free_small_xmtr(EP_XMTR* xmtr) {
  NICSIM_API_CALL();
  free_xmtr(xmtr, false, "ep_free_small_xmtr");
}
extern "C" void ep_free_large_xmtr(EP_XMTR* xmtr) {
  NICSIM_API_CALL();
  free_xmtr(xmtr, true, "ep_free_large_xmtr");
}

extern "C" int ep_poll_transmits(EP_XMTR* xmtr) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return 0;
  node->cpu("ep_call");
  if (!valid(xmtr, node)) {
    node->error("ep_poll_transmits: bad transmitter handle");
    return 0;
  }
  return node->poll(xmtr);
}

// Manual 2.1.5 and 3-32: from now on each active transmit interrupts when
// it completes; the callbacks of those already complete run before this
// returns. Returns the number completed here.
extern "C" int ep_enable_txcallbacks(EP_XMTR* xmtr) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return 0;
  node->cpu("ep_call");
  if (!valid(xmtr, node)) {
    node->error("ep_enable_txcallbacks: bad transmitter handle");
    return 0;
  }
  // Arm first, then collect: an event that fires in between interrupts
  // (the command raises it at once if it already fired), and the callback
  // runs once: whichever comes first finishes the transmit.
  int n = node->poll(xmtr);
  node->set_txcallbacks(xmtr, true);
  std::vector<ep_txd*> active = xmtr->active;
  for (ep_txd* t : active)
    if (t->active && t->polled && node->finished(t)) {
      node->finish(t);
      ++n;
    }
  return n;
}

// Manual 3-33: completions interrupt no more (transmits started without
// interrupts go back to being polled). Returns the number completed here.
extern "C" int ep_disable_txcallbacks(EP_XMTR* xmtr) {
  NICSIM_API_CALL();
  EpNode* node = EpNode::get();
  if (!node) return 0;
  node->cpu("ep_call");
  if (!valid(xmtr, node)) {
    node->error("ep_disable_txcallbacks: bad transmitter handle");
    return 0;
  }
  node->set_txcallbacks(xmtr, false);
  return node->poll(xmtr);
}

extern "C" EP_STATUSBLK* ep_txd_statusblk(struct ep_txd* txd) {
  NICSIM_API_CALL();
  if (!txd || txd->tag != nicsim::ep::kTxdTag || !txd->status_blk) return nullptr;
  return static_cast<EP_STATUSBLK*>(txd->status_blk.host);
}

extern "C" E3_DMA_STATE* ep_xmtr_dma_state(EP_XMTR* xmtr) {
  NICSIM_API_CALL();
  if (!xmtr || xmtr->tag != nicsim::ep::kXmtrTag) return nullptr;
  return &xmtr->dma_state;
}
