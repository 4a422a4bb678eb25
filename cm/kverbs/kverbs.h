// The kernel verbs (rdma/ib_verbs.h) as the CM and the CMA see them from
// C++: the node's struct ib_device, handle checks, and resource counts for
// tests. Include rdma/ib_verbs.h before this header.
//
// The functions have C linkage: the kernel verbs' own translation units
// declare the kernel structures inside a namespace (kverbs_impl.h), so only
// C names match across the two views.
#pragma once
#include <cstdint>

namespace nicsim::host {
class Host;
}

namespace nicsim::kverbs {
// Live kernel objects of a device, for leak checks.
struct Counts {
  std::uint32_t pds = 0, cqs = 0, qps = 0, mrs = 0, ahs = 0, dma_regs = 0, mws = 0;
  std::uint32_t total() const { return pds + cqs + qps + mrs + ahs + dma_regs + mws; }
};
}  // namespace nicsim::kverbs

extern "C" {
struct ib_device* nicsim_kverbs_node_device(void);
struct ib_device* nicsim_kverbs_device_of(nicsim::host::Host* h);
void nicsim_kverbs_counts(struct ib_device* dev, nicsim::kverbs::Counts* out);
int nicsim_kverbs_dma_map(struct ib_mr* mr, void* addr, std::uint64_t bytes);
int nicsim_kverbs_qp_live(struct ib_qp* qp);
int nicsim_kverbs_qp_state(struct ib_qp* qp);
}

namespace nicsim::kverbs {

// The calling thread's node's device: the first call opens the node's CA
// (thread context; it loads the verbs driver if needed). nullptr if the
// node has no HCA or the CA is already open through ci_interface_t.
inline ib_device* node_device() { return nicsim_kverbs_node_device(); }
// The device host `h` opened, or nullptr (no blocking).
inline ib_device* device_of(host::Host& h) { return nicsim_kverbs_device_of(&h); }
inline Counts counts(ib_device* dev) {
  Counts c;
  nicsim_kverbs_counts(dev, &c);
  return c;
}
// Registers [addr, addr+bytes) for the DMA MR `mr` at once (the kernel's
// dma_map_single): posts of any part of it then need no registration.
inline bool dma_map(ib_mr* mr, void* addr, std::uint64_t bytes) { return nicsim_kverbs_dma_map(mr, addr, bytes); }
// Whether `qp` is a live QP of the calling node's device.
inline bool qp_live(ib_qp* qp) { return nicsim_kverbs_qp_live(qp); }
// The QP's state as the provider reports it (-1: not a live QP).
inline int qp_state(ib_qp* qp) { return nicsim_kverbs_qp_state(qp); }

}  // namespace nicsim::kverbs
