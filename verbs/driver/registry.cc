// The access layer's side of registration (ib_register_ca /
// ib_deregister_ca), kept per node, and the public lookup of the calling
// node's verbs provider (iba/nicsim_ca.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "iba/nicsim_ca.h"
#include "verbs/driver/driver.h"

namespace nicsim::verbs {
namespace {

// Registered interfaces: every node is its own host with its own access
// layer, kept by that host.
struct Registered : host::HostSoftware {
  std::vector<const ci_interface_t*> interfaces;
};

// The calling thread's node, found from the running thread itself.
std::vector<const ci_interface_t*>* calling_node() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  Registered* r = h->software<Registered>();
  if (!r) r = &h->add_software(std::make_unique<Registered>());
  return &r->interfaces;
}

}  // namespace
}  // namespace nicsim::verbs

using namespace nicsim::verbs;

extern "C" ib_api_status_t ib_register_ca(const ci_interface_t* p_ci) {
  auto* list = calling_node();
  if (!p_ci || !list) return IB_INVALID_PARAMETER;
  if (std::any_of(list->begin(), list->end(),
                  [&](const ci_interface_t* c) { return c == p_ci || c->guid == p_ci->guid; }))
    return IB_DUPLICATE_CA;
  list->push_back(p_ci);
  return IB_SUCCESS;
}

extern "C" ib_api_status_t ib_deregister_ca(const ci_interface_t* p_ci) {
  auto* list = calling_node();
  if (!p_ci || !list) return IB_INVALID_PARAMETER;
  auto it = std::find_if(list->begin(), list->end(), [&](const ci_interface_t* c) { return c->guid == p_ci->guid; });
  if (it == list->end()) return IB_INVALID_PARAMETER;
  // Our own HCA is in use while an instance of it is open.
  if (Device* d = Device::owner_of(*it); d && d->open_instance()) return IB_BUSY;
  list->erase(it);
  return IB_SUCCESS;
}

extern "C" const ci_interface_t* nicsim_ci_interface(void) {
  auto* list = calling_node();
  if (!list) return nullptr;
  if (list->empty()) {
    // Load the driver on first use; loading registers the interface. A
    // driver that is loaded but was deregistered stays unregistered.
    if (Device::current() || !Device::load_current()) return nullptr;
    list = calling_node();
  }
  return list && !list->empty() ? list->front() : nullptr;
}

extern "C" const ci_interface_t* nicsim_sm_ci_interface(void) {
  const ci_interface_t* ci = nicsim_ci_interface();
  Device* d = ci ? Device::owner_of(ci) : nullptr;
  return d ? &d->agent_ci() : nullptr;
}

extern "C" ib_net64_t nicsim_ca_guid(void) {
  const ci_interface_t* ci = nicsim_ci_interface();
  return ci ? ci->guid : 0;
}
