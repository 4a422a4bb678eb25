// Inside the kernel verbs: both APIs in one translation unit. The
// ci_interface_t types are global; the kernel verbs (rdma/ib_verbs.h) are
// declared in namespace kv, since the two APIs share names (IB_QPS_RTS is a
// macro in one, an enumerator in the other). Their functions have C linkage,
// so kv::ib_alloc_pd is the ib_alloc_pd consumers call.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "host/api_call.h"
#include "host/host.h"
#include "iba/ib_ci.h"
#include "iba/nicsim_ca.h"

namespace nicsim::kverbs {
// The ci_interface_t QP states, before their macros go.
inline constexpr ib_qp_state_t kCiReset = IB_QPS_RESET;
inline constexpr ib_qp_state_t kCiInit = IB_QPS_INIT;
inline constexpr ib_qp_state_t kCiRtr = IB_QPS_RTR;
inline constexpr ib_qp_state_t kCiRts = IB_QPS_RTS;
inline constexpr ib_qp_state_t kCiSqd = IB_QPS_SQD;
}  // namespace nicsim::kverbs
#undef IB_QPS_RESET
#undef IB_QPS_INIT
#undef IB_QPS_RTR
#undef IB_QPS_RTS
#undef IB_QPS_SQD

namespace kv {
#include "rdma/ib_verbs.h"
}

namespace nicsim::kverbs {
// Live kernel objects of a device, for leak checks (as kverbs.h has it).
struct Counts {
  std::uint32_t pds = 0, cqs = 0, qps = 0, mrs = 0, ahs = 0, dma_regs = 0, mws = 0;
  std::uint32_t total() const { return pds + cqs + qps + mrs + ahs + dma_regs + mws; }
};
}  // namespace nicsim::kverbs

namespace nicsim::kverbs {

// Use counts of the kernel structures (atomic_t).
inline void use(kv::atomic_t& a) { a.counter = a.counter + 1; }
inline void unuse(kv::atomic_t& a) { a.counter = a.counter - 1; }

struct KPd {
  kv::ib_pd pub{};
  ib_pd_handle_t h = nullptr;
};
struct KCq {
  kv::ib_cq pub{};
  ib_cq_handle_t h = nullptr;
  ib_pd_handle_t own_pd = nullptr;  // ci CQs belong to a PD; kernel CQs do not
};
struct KAh {
  kv::ib_ah pub{};
  ib_av_handle_t h = nullptr;
};
struct KQp {
  kv::ib_qp pub{};
  ib_qp_handle_t h = nullptr;
  kv::ib_qp_init_attr init{};
};
// A region registered for a DMA MR's user: one per buffer (start, length).
struct DmaReg {
  ib_mr_handle_t h = nullptr;
  std::uint32_t lkey = 0;
};
struct KMr {
  kv::ib_mr pub{};
  ib_mr_handle_t h = nullptr;  // the DMA MR has none
  int access = 0;
  std::map<std::pair<std::uint64_t, std::uint32_t>, DmaReg> regs;
};
struct KMw {
  kv::ib_mw pub{};
  ib_mw_handle_t h = nullptr;
};

// The kernel verbs' state on one node: the CA opened as its consumer
// instance, and every live object (handles are checked against these).
struct KDevice : host::HostSoftware {
  // The node's software ends with the simulation: the wrappers its programs
  // left open go with it (the provider's objects go with the CA's driver).
  ~KDevice() override {
    for (KQp* q : qps) delete q;
    for (KAh* a : ahs) delete a;
    for (KMw* w : mws) delete w;
    for (KMr* m : mrs) delete m;
    for (KCq* c : cqs) delete c;
    for (KPd* p : pds) delete p;
  }
  kv::ib_device pub{};
  const ci_interface_t* ci = nullptr;
  ib_ca_handle_t ca = nullptr;
  host::Host* host = nullptr;
  std::set<KPd*> pds;
  std::set<KCq*> cqs;
  std::set<KAh*> ahs;
  std::set<KQp*> qps;
  std::set<KMr*> mrs;
  std::set<KMw*> mws;
  std::uint32_t next_dma_key = 0;
  std::uint32_t dma_regs = 0;
};

// The bits of an enum argument as the caller stored them: a value outside
// the enum is refused by its bits (loading it as the enum is undefined
// behaviour in C++).
template <class E>
int bits_of(const E& field) {
  static_assert(sizeof(E) == sizeof(int));
  int v = 0;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// The calling node's device state (nullptr: not opened).
KDevice* current();
// Whether the caller is the node's interrupt context: the verbs that issue
// an HCA command (and would block) refuse there, before any command, with
// the verbs' choices (ci_interface_t): NULL from a create, -EBUSY from a
// release (the object stays), -EINVAL from a query or modify.
bool in_interrupt();
// Errno value of a provider status.
int errno_of(ib_api_status_t s);
// The node's DMA MR registrations: the provider lkey for [addr, addr+len)
// under `mr` (registers on first use), or 0 on failure.
std::uint32_t dma_lkey(KDevice& d, KMr& mr, std::uint64_t addr, std::uint32_t len);
// Finds a live MR by its lkey (the DMA MR's pseudo key).
KMr* dma_mr_of(KDevice& d, std::uint32_t lkey);

}  // namespace nicsim::kverbs
