// The kernel verbs (rdma/ib_verbs.h) as the CM and the CMA see them from
// C++: the node's struct ib_device, handle checks, and resource counts for
// tests. Include rdma/ib_verbs.h before this header.
#pragma once
#include <cstdint>

namespace nicsim::host {
class Host;
}

namespace nicsim::kverbs {

// The calling thread's node's device: the first call opens the node's CA
// (thread context; it loads the verbs driver if needed). nullptr if the
// node has no HCA or the CA is already open through ci_interface_t.
ib_device* node_device();
// The device host `h` opened, or nullptr (no blocking).
ib_device* device_of(host::Host& h);

// Live kernel objects of a device, for leak checks.
struct Counts {
  std::uint32_t pds = 0, cqs = 0, qps = 0, mrs = 0, ahs = 0, dma_regs = 0;
  std::uint32_t total() const { return pds + cqs + qps + mrs + ahs + dma_regs; }
};
Counts counts(ib_device* dev);

// Registers [addr, addr+bytes) for the DMA MR `mr` at once (the kernel's
// dma_map_single): posts of any part of it then need no registration.
bool dma_map(ib_mr* mr, void* addr, std::uint64_t bytes);

// Whether `qp` is a live QP of the calling node's device.
bool qp_live(ib_qp* qp);
// The QP's state as the provider reports it (-1: not a live QP).
int qp_state(ib_qp* qp);

}  // namespace nicsim::kverbs
