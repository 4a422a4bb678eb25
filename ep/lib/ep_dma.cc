// The Elan buffer mapping functions (manual 3.2): elan3_dma_map/unmap,
// handle_to_addr, addr_setup, buf_setup, reserve/release,
// elan3_dvma_kaddr_load/unload, over the driver's Elan address space
// (Elan3Dev::map/reserve/load/unload/release).
#include <fmt/format.h>

#include "ep/lib/ep_internal.h"

namespace elan3 = nicsim::elan3;
using nicsim::ep::EpNode;

namespace nicsim::ep {

std::uint32_t perm_bits(u_int perm) {
  using namespace elan3::perm;
  const std::uint32_t local = kLocalRead | kLocalWrite;
  switch (perm) {
    case ELAN_PERM_NOREMOTE:
      return local;
    case ELAN_PERM_LOCALREAD:
      return kLocalRead;
    case ELAN_PERM_REMOTEREAD:
      return local | kRemoteRead;
    case ELAN_PERM_REMOTEWRITE:
      return local | kRemoteRead | kRemoteWrite;
    case ELAN_PERM_REMOTEEVENT:
      return local | kRemoteRead | kRemoteWrite | kRemoteEvent;
    case ELAN_PERM_REMOTEALL:
      return kAll;
    default:
      return 0;
  }
}

std::uint32_t attr_bits(u_int attr) {
  std::uint32_t a = (attr & PTE_LOAD_BIG_ENDIAN) ? elan3::attr::kBigEndian : elan3::attr::kLittleEndian;
  if (attr & PTE_LOAD_STREAMABLE) a |= elan3::attr::kStreamable;
  return a;
}

}  // namespace nicsim::ep

namespace {

using WaitFn = int (*)(caddr_t);

EpNode* state_node(ELAN3_DMA_STATE* sp) {
  if (!sp || sp->tag != nicsim::ep::kStateTag || !sp->node) return nullptr;
  return sp->node == EpNode::current() ? sp->node : nullptr;
}

// The node keeps its handles until they are unmapped or released.
ELAN3_DMA_HANDLE* keep(EpNode& n, std::unique_ptr<elan3_dma_handle> h) {
  ELAN3_DMA_HANDLE* raw = h.get();
  n.dma_handles.emplace(raw, std::move(h));
  return raw;
}
// One of the node's live handles (looked up before it is read: a handle
// unmapped twice is a bad handle, not a use after free).
bool kept(const EpNode& n, const ELAN3_DMA_HANDLE* h) { return n.dma_handles.count(h) != 0; }

// DDI_DMA_SLEEP waits for resources (threads only); DDI_DMA_NOWAIT does
// not; any other function is called back once and the call fails at once.
bool may_wait(WaitFn w, const EpNode& n) { return w == DDI_DMA_SLEEP && n.host.current() && !n.host.in_interrupt(); }
void call_back(WaitFn w, caddr_t arg) {
  if (w != DDI_DMA_SLEEP && w != DDI_DMA_NOWAIT && w) w(arg);
}

int map_range(EpNode& n, const void* addr, std::size_t len, u_int perm, u_int attr, E3_Addr eaddr, WaitFn waitfn,
              caddr_t waitarg, ELAN3_DMA_HANDLE** out) {
  n.cpu("ep_map");
  if (!out) return DDI_DMA_NOMAPPING;
  const std::uint32_t p = nicsim::ep::perm_bits(perm);
  if (p == 0 || !addr || len == 0) return DDI_DMA_NOMAPPING;
  auto h = std::make_unique<elan3_dma_handle>();
  const elan3::DevStatus s =
      n.dev.map(addr, len, p, nicsim::ep::attr_bits(attr), eaddr, may_wait(waitfn, n), &h->range, &h->addr);
  if (s == elan3::DevStatus::NoResource) {
    call_back(waitfn, waitarg);
    return DDI_DMA_NORESOURCE;
  }
  if (s != elan3::DevStatus::Ok) return DDI_DMA_NOMAPPING;
  *out = keep(n, std::move(h));
  return DDI_DMA_MAPPED;
}

WaitFn request_waitfn(const ELAN3_DMA_REQUEST* r) { return reinterpret_cast<WaitFn>(r->Waitfn); }

}  // namespace

extern "C" int elan3_dma_map(ELAN3_DMA_STATE* sp, ELAN3_DMA_REQUEST* reqp, ELAN3_DMA_HANDLE** mpp) {
  EpNode* n = state_node(sp);
  if (!n || !reqp) return DDI_DMA_NOMAPPING;
  const ELAN3_DMA_OBJ& o = reqp->Object;
  if (o.Type == ELAN3_OTYPE_VADDR) {
    // Only kernel memory (As == NULL): there are no user address spaces here.
    if (o.Data.Vaddr.As) return DDI_DMA_NOMAPPING;
    return map_range(*n, o.Data.Vaddr.Addr, o.Data.Vaddr.Len, reqp->Perm, reqp->Attr, reqp->ElanAddr,
                     request_waitfn(reqp), reqp->Waitarg, mpp);
  }
  if (o.Type == ELAN3_OTYPE_BUF && o.Data.Buf)
    return map_range(*n, o.Data.Buf->b_un.b_addr, o.Data.Buf->b_bcount, reqp->Perm, reqp->Attr, reqp->ElanAddr,
                     request_waitfn(reqp), reqp->Waitarg, mpp);
  return DDI_DMA_NOMAPPING;  // "the supplied object type was invalid"
}

extern "C" void elan3_dma_unmap(ELAN3_DMA_STATE* sp, ELAN3_DMA_HANDLE* mp) {
  EpNode* n = state_node(sp);
  if (!n) return;
  n->cpu("ep_map");
  if (!kept(*n, mp) || mp->reserved) {
    n->error("elan3_dma_unmap: not a mapping made by elan3_dma_map (bad handle)");
    return;
  }
  n->dev.unmap(mp->range);
  n->dma_handles.erase(mp);
}

extern "C" E3_Addr elan3_dma_handle_to_addr(ELAN3_DMA_HANDLE* mp) {
  // A live handle of the calling node's (one unmapped or released is freed:
  // looked up, not read).
  const EpNode* n = EpNode::current();
  if (!n || !kept(*n, mp)) return 0;
  return mp->reserved ? mp->range.base : mp->addr;
}

extern "C" int elan3_dma_addr_setup(ELAN3_DMA_STATE* sp, void* as, caddr_t addr, u_int len, u_int perm, u_int attr,
                                    E3_Addr eaddr, int (*waitfp)(caddr_t), caddr_t arg, ELAN3_DMA_HANDLE** handlep) {
  EpNode* n = state_node(sp);
  if (!n || as) return DDI_DMA_NOMAPPING;
  return map_range(*n, addr, len, perm, attr, eaddr, waitfp, arg, handlep);
}

extern "C" int elan3_dma_buf_setup(ELAN3_DMA_STATE* sp, struct buf* bp, u_int perm, u_int attr, E3_Addr eaddr,
                                   int (*waitfp)(caddr_t), caddr_t arg, ELAN3_DMA_HANDLE** handlep) {
  EpNode* n = state_node(sp);
  if (!n || !bp) return DDI_DMA_NOMAPPING;
  return map_range(*n, bp->b_un.b_addr, bp->b_bcount, perm, attr, eaddr, waitfp, arg, handlep);
}

extern "C" int elan3_dma_reserve(ELAN3_DMA_STATE* sp, int npages, ELAN3_DMA_REQUEST* dmareq, ELAN3_DMA_HANDLE** mpp) {
  EpNode* n = state_node(sp);
  if (!n || !dmareq || !mpp) return DDI_DMA_NOMAPPING;
  n->cpu("ep_map");
  const std::uint32_t p = nicsim::ep::perm_bits(dmareq->Perm);
  if (npages <= 0 || p == 0) return DDI_DMA_NOMAPPING;
  auto h = std::make_unique<elan3_dma_handle>();
  h->reserved = true;
  const WaitFn w = request_waitfn(dmareq);
  const elan3::DevStatus s = n->dev.reserve(static_cast<std::uint32_t>(npages), p, nicsim::ep::attr_bits(dmareq->Attr),
                                            dmareq->ElanAddr, may_wait(w, *n), &h->range);
  if (s != elan3::DevStatus::Ok) {
    // Manual: NOMAPPING = not enough Elan address space and cannot wait.
    call_back(w, dmareq->Waitarg);
    return DDI_DMA_NOMAPPING;
  }
  *mpp = keep(*n, std::move(h));
  return DDI_SUCCESS;
}

extern "C" void elan3_dma_release(ELAN3_DMA_STATE* sp, ELAN3_DMA_HANDLE* mp) {
  EpNode* n = state_node(sp);
  if (!n) return;
  n->cpu("ep_map");
  if (!kept(*n, mp) || !mp->reserved) {
    n->error("elan3_dma_release: not a reservation made by elan3_dma_reserve (bad handle)");
    return;
  }
  n->dev.release(mp->range);
  n->dma_handles.erase(mp);
}

extern "C" void elan3_dvma_kaddr_load(ELAN3_DMA_STATE* sp, ELAN3_DMA_HANDLE* mp, caddr_t addr, u_int len, u_int index,
                                      E3_Addr* addrp) {
  EpNode* n = state_node(sp);
  if (addrp) *addrp = 0;
  if (!n) return;
  n->cpu("ep_map");
  if (!kept(*n, mp) || !mp->reserved || !addrp) {
    n->error("elan3_dvma_kaddr_load: bad reservation handle or address pointer");
    return;
  }
  const elan3::DevStatus s = n->dev.load(mp->range, index, addr, len, addrp);
  if (s != elan3::DevStatus::Ok) {
    *addrp = 0;
    n->error(fmt::format("elan3_dvma_kaddr_load: {} bytes at page {} of a {}-page reservation: {}", len, index,
                         mp->range.npages, elan3::dev_status_name(s)));
  }
}

extern "C" void elan3_dvma_unload(ELAN3_DMA_STATE* sp, ELAN3_DMA_HANDLE* mp, u_int index, u_int npages) {
  EpNode* n = state_node(sp);
  if (!n) return;
  n->cpu("ep_map");
  if (!kept(*n, mp) || !mp->reserved) {
    n->error("elan3_dvma_unload: bad reservation handle");
    return;
  }
  const elan3::DevStatus s = n->dev.unload(mp->range, index, npages);
  if (s != elan3::DevStatus::Ok)
    n->error(fmt::format("elan3_dvma_unload: pages {}+{}: {}", index, npages, elan3::dev_status_name(s)));
}
