// Transmitters (manual: ep_alloc/free_small/large_xmtr), completion by
// polling or interrupt (manual 2.1.5: ep_poll_transmits,
// ep_enable/disable_txcallbacks) and the transmit descriptor accessor.
#include <fmt/format.h>

#include "ep/lib/ep_internal.h"

using nicsim::ep::EpNode;

namespace {
bool valid(const ep_xmtr* x, const EpNode* node) {
  return x && x->tag == nicsim::ep::kXmtrTag && x->node == node;
}
}  // namespace

extern "C" EP_XMTR* ep_alloc_small_xmtr(int instance, int type, int msgsize) {
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

extern "C" void ep_free_small_xmtr(EP_XMTR* xmtr) { free_xmtr(xmtr, false, "ep_free_small_xmtr"); }
extern "C" void ep_free_large_xmtr(EP_XMTR* xmtr) { free_xmtr(xmtr, true, "ep_free_large_xmtr"); }

extern "C" int ep_poll_transmits(EP_XMTR* xmtr) {
  EpNode* node = EpNode::get();
  if (!node) return 0;
  node->cpu("ep_call");
  if (!valid(xmtr, node)) {
    node->error("ep_poll_transmits: bad transmitter handle");
    return 0;
  }
  return node->poll(xmtr);
}

extern "C" int ep_enable_txcallbacks(EP_XMTR* xmtr) {
  EpNode* node = EpNode::get();
  if (!node) return 0;
  node->cpu("ep_call");
  if (!valid(xmtr, node)) {
    node->error("ep_enable_txcallbacks: bad transmitter handle");
    return 0;
  }
  // Callbacks of transmits already complete run before returning; the rest
  // are checked every ep.callback_tick in interrupt context (docs/ep.md).
  const int n = node->poll(xmtr);
  xmtr->txcallbacks = true;
  if (!xmtr->callback_tick)
    xmtr->callback_tick =
        std::make_unique<nicsim::host::Timer>(node->host, "ep.txcallbacks", [node, xmtr] { node->callbacks_tick(xmtr); });
  node->callbacks_tick(xmtr);
  return n;
}

extern "C" int ep_disable_txcallbacks(EP_XMTR* xmtr) {
  EpNode* node = EpNode::get();
  if (!node) return 0;
  node->cpu("ep_call");
  if (!valid(xmtr, node)) {
    node->error("ep_disable_txcallbacks: bad transmitter handle");
    return 0;
  }
  const int n = node->poll(xmtr);
  xmtr->txcallbacks = false;
  if (xmtr->callback_tick) xmtr->callback_tick->cancel();
  return n;
}

extern "C" EP_STATUSBLK* ep_txd_statusblk(struct ep_txd* txd) {
  if (!txd || txd->tag != nicsim::ep::kTxdTag || !txd->status_blk) return nullptr;
  return static_cast<EP_STATUSBLK*>(txd->status_blk.host);
}

extern "C" E3_DMA_STATE* ep_xmtr_dma_state(EP_XMTR* xmtr) {
  if (!xmtr || xmtr->tag != nicsim::ep::kXmtrTag) return nullptr;
  return &xmtr->dma_state;
}
