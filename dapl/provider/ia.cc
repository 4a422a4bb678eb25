// Interface adapters (one per HCA port: "ib0", "ib1"), protection zones,
// the provider list and dat_strerror.
#include <cstdio>
#include <cstring>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {
namespace {

// IAs open at once on a node (each is an open of the provider's device).
constexpr std::uint32_t kMaxIas = 8;

// The port an IA name stands for (0: no such name).
int port_of_name(const char* name) {
  if (!name) return 0;
  if (!std::strcmp(name, "ib0")) return 1;
  if (!std::strcmp(name, "ib1")) return 2;
  return 0;
}

sockaddr_in ipv4_addr(std::uint32_t ip) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(ip);
  return a;
}

// The node's kernel device (starts the CM: the IA's connections need it).
kib::ib_device* open_device(const sockaddr_in& self) {
  kib::sockaddr_in k{};
  k.sin_family = AF_INET;
  std::memcpy(&k.sin_addr.s_addr, &self.sin_addr.s_addr, 4);
  kib::ib_device* dev = nullptr;
  if (kib::ib_cma_get_device(reinterpret_cast<kib::sockaddr*>(&k), &dev)) return nullptr;
  return dev;
}

// Everything an IA still owns, freed in dependency order (an abrupt close).
void free_everything(Node& n, Ia& ia) {
  const Kind order[] = {Kind::Cr, Kind::Psp, Kind::Rsp, Kind::Ep, Kind::Rmr, Kind::Lmr, Kind::Evd, Kind::Cno, Kind::Pz};
  if (ia.async_evd) evd_set_cno(n, *ia.async_evd, DAT_HANDLE_NULL);  // its CNO goes below
  for (Kind k : order)
    for (Object* o : n.objects_of(&ia)) {
      if (o->kind != k || (k == Kind::Evd && o == ia.async_evd)) continue;
      if (k == Kind::Cr) cr_release(n, *static_cast<Cr*>(o));
      if (k == Kind::Psp || k == Kind::Rsp) {
        auto* sp = static_cast<Sp*>(o);
        sp->crs = 0;
        sp_release(n, *sp);
      }
      if (k == Kind::Ep) ep_free_all(n, *static_cast<Ep*>(o));
      if (k == Kind::Rmr) rmr_free_all(n, *static_cast<Rmr*>(o));
      if (k == Kind::Lmr) dat_lmr_free(to_handle(o));
      if (k == Kind::Evd) evd_free_all(n, *static_cast<Evd*>(o));
      if (k == Kind::Cno) cno_free_all(n, *static_cast<Cno*>(o));
      if (k == Kind::Pz) dat_pz_free(to_handle(o));
    }
}

// The IA's attributes: the HCA's limits (ib_query_device), capped by what
// the provider allows an EP (ep.cc's attribute checks).
void fill_ia_attr(const Ia& ia, const kib::ib_device_attr& dev, DAT_IA_ATTR& a) {
  const auto cap = [](int v, int limit) { return v < limit ? v : limit; };
  std::memset(&a, 0, sizeof a);
  std::snprintf(a.adapter_name, sizeof a.adapter_name, "%s", ia.name.c_str());
  std::snprintf(a.vendor_name, sizeof a.vendor_name, "nicsim");
  a.hardware_version_major = static_cast<DAT_UINT32>(dev.hw_ver);
  a.firmware_version_major = static_cast<DAT_UINT32>(dev.fw_ver >> 32);
  a.firmware_version_minor = static_cast<DAT_UINT32>(dev.fw_ver);
  a.ia_address_ptr = reinterpret_cast<DAT_IA_ADDRESS_PTR>(const_cast<sockaddr_in*>(&ia.addr));
  a.max_eps = dev.max_qp;
  a.max_dto_per_ep = cap(dev.max_qp_wr, 4096);
  a.max_rdma_read_per_ep_in = cap(dev.max_qp_rd_atom, 4);
  a.max_rdma_read_per_ep_out = cap(dev.max_qp_init_rd_atom, 4);
  a.max_evds = dev.max_cq;  // DTO EVDs (each owns a CQ); the others have no HCA limit
  a.max_evd_qlen = dev.max_cqe;
  a.max_iov_segments_per_dto = cap(dev.max_sge, 8);
  a.max_lmrs = dev.max_mr;
  a.max_lmr_block_size = dev.max_mr_size < 0xffffffffu ? dev.max_mr_size : 0xffffffffu;
  a.max_lmr_virtual_address = ~0ull;
  a.max_pzs = dev.max_pd;
  a.max_mtu_size = a.max_rdma_size = 0x80000000u;
  a.max_rmrs = dev.max_mw;
  a.max_rmr_target_address = ~0ull;
}

}  // namespace
}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

extern "C" {

DAT_RETURN dat_ia_openv(const DAT_NAME_PTR ia_name, DAT_COUNT async_evd_min_qlen, DAT_EVD_HANDLE* async_evd_handle,
                        DAT_IA_HANDLE* ia_handle, DAT_UINT32 dapl_major, DAT_UINT32, DAT_BOOLEAN) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  if (!n) return err(DAT_INTERNAL_ERROR);
  charge_call(*n);
  const int port = port_of_name(ia_name);
  if (!port) return err(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
  if (dapl_major != DAT_VERSION_MAJOR) return err(DAT_PROVIDER_NOT_FOUND, DAT_MAJOR_NOT_FOUND);
  if (async_evd_min_qlen < 1) return bad_arg(2);
  if (!async_evd_handle) return bad_arg(3);
  if (*async_evd_handle != DAT_HANDLE_NULL) return bad_handle(DAT_INVALID_HANDLE_EVD_ASYNC);
  if (!ia_handle) return bad_arg(4);
  if (n->counters().ias >= kMaxIas) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_DEVICE);
  const std::uint32_t ip = n->host().ipv4(static_cast<std::uint32_t>(port));
  if (!ip) return err(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
  const sockaddr_in self = ipv4_addr(n->host().ipv4(1));
  kib::ib_device* dev = open_device(self);
  if (!dev) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_DEVICE);
  if (port > dev->phys_port_cnt) return err(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
  Ia* ia = n->add(std::make_unique<Ia>());
  ia->name = ia_name;
  ia->port = port;
  ia->addr = ipv4_addr(ip);
  ia->dev = dev;
  ++n->counters_mut().ias;
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
  if (DAT_RETURN rc = dat_evd_create(to_handle(ia), async_evd_min_qlen, DAT_HANDLE_NULL, DAT_EVD_ASYNC_FLAG, &async)) {
    --n->counters_mut().ias;
    n->remove(ia);
    return rc;
  }
  ia->async_evd = n->find_as<Evd>(async, Kind::Evd);
  *async_evd_handle = async;
  *ia_handle = to_handle(ia);
  return DAT_SUCCESS;
}

DAT_RETURN dat_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS close_flags) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // freed by another thread meanwhile
  if (close_flags != DAT_CLOSE_ABRUPT_FLAG && close_flags != DAT_CLOSE_GRACEFUL_FLAG) return bad_arg(2);
  if (close_flags == DAT_CLOSE_GRACEFUL_FLAG && n->objects_of(ia).size() > 1)
    return err(DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
  ia->closing = true;
  free_everything(*n, *ia);
  if (ia->async_evd) evd_free_all(*n, *ia->async_evd);
  --n->counters_mut().ias;
  n->remove(ia);
  return DAT_SUCCESS;
}

DAT_RETURN dat_ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE* async_evd_handle, DAT_IA_ATTR_MASK ia_attr_mask,
                        DAT_IA_ATTR* ia_attr, DAT_PROVIDER_ATTR_MASK provider_attr_mask,
                        DAT_PROVIDER_ATTR* provider_attr) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  if ((ia_attr_mask && !ia_attr)) return bad_arg(4);
  if (provider_attr_mask && !provider_attr) return bad_arg(6);
  if (async_evd_handle) *async_evd_handle = to_handle(ia->async_evd);
  if (ia_attr_mask && ia_attr) {
    Pin pin(*n, *ia);
    kib::ib_device_attr dev{};
    if (kib::ib_query_device(ia->dev, &dev)) return err(DAT_INTERNAL_ERROR);
    if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // closed meanwhile
    fill_ia_attr(*ia, dev, *ia_attr);
  }
  if (provider_attr_mask && provider_attr) {
    std::memset(provider_attr, 0, sizeof *provider_attr);
    std::snprintf(provider_attr->provider_name, sizeof provider_attr->provider_name, "nicsim-dapl");
    provider_attr->provider_version_major = 1;
    provider_attr->dapl_version_major = DAT_VERSION_MAJOR;
    provider_attr->dapl_version_minor = DAT_VERSION_MINOR;
    provider_attr->lmr_mem_types_supported = static_cast<DAT_MEM_TYPE>(DAT_MEM_TYPE_VIRTUAL | DAT_MEM_TYPE_LMR);
    provider_attr->iov_ownership_on_return = DAT_IOV_CONSUMER;
    provider_attr->completion_flags_supported = static_cast<DAT_COMPLETION_FLAGS>(
        DAT_COMPLETION_UNSIGNALLED_FLAG | DAT_COMPLETION_SOLICITED_WAIT_FLAG | DAT_COMPLETION_BARRIER_FENCE_FLAG);
    provider_attr->is_thread_safe = DAT_FALSE;
    provider_attr->max_private_data_size = kMaxReqPrivate;
    provider_attr->ep_creator = DAT_PSP_CREATES_EP_IFASKED;
    provider_attr->optimal_buffer_alignment = 64;
  }
  return DAT_SUCCESS;
}

DAT_RETURN dat_registry_list_providers(DAT_COUNT max_to_return, DAT_COUNT* entries_returned,
                                       DAT_PROVIDER_INFO*(dat_provider_list[])) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  if (!n) return err(DAT_INTERNAL_ERROR);
  if (max_to_return < 0) return bad_arg(1);
  if (!entries_returned) return bad_arg(2);
  if (max_to_return > 0 && !dat_provider_list) return bad_arg(3);
  static const char* const kNames[] = {"ib0", "ib1"};
  DAT_COUNT count = 0;
  for (int port = 1; port <= 2; ++port) {
    if (!n->host().ipv4(static_cast<std::uint32_t>(port))) continue;
    if (count < max_to_return && dat_provider_list[count]) {
      DAT_PROVIDER_INFO* p = dat_provider_list[count];
      std::snprintf(p->ia_name, sizeof p->ia_name, "%s", kNames[port - 1]);
      p->dapl_version_major = DAT_VERSION_MAJOR;
      p->dapl_version_minor = DAT_VERSION_MINOR;
      p->is_thread_safe = DAT_FALSE;
    }
    ++count;
  }
  *entries_returned = count < max_to_return ? count : max_to_return;
  return DAT_SUCCESS;
}

DAT_RETURN dat_pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE* pz_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  if (!pz_handle) return bad_arg(2);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // closed by another thread meanwhile
  kib::ib_pd* pd = kib::ib_alloc_pd(ia->dev);
  if (!pd) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_PROTECTION_DOMAIN);
  auto pz = std::make_unique<Pz>(Kind::Pz, ia);
  pz->pd = pd;
  *pz_handle = to_handle(n->add(std::move(pz)));
  ++n->counters_mut().pzs;
  return DAT_SUCCESS;
}

DAT_RETURN dat_pz_query(DAT_PZ_HANDLE pz_handle, DAT_PZ_PARAM_MASK, DAT_PZ_PARAM* pz_param) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Pz* pz = n ? n->find_as<Pz>(pz_handle, Kind::Pz) : nullptr;
  if (!pz) return bad_handle(DAT_INVALID_HANDLE_PZ);
  if (!pz_param) return bad_arg(3);
  pz_param->ia_handle = to_handle(pz->ia);
  return DAT_SUCCESS;
}

DAT_RETURN dat_pz_free(DAT_PZ_HANDLE pz_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Pz* pz = n ? n->find_as<Pz>(pz_handle, Kind::Pz) : nullptr;
  if (!pz) return bad_handle(DAT_INVALID_HANDLE_PZ);
  Pin pin(*n, *pz);
  charge_call(*n);
  if (pz->dead) return bad_handle(DAT_INVALID_HANDLE_PZ);  // freed by another thread meanwhile
  if (pz->refs > 0) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE);
  if (kib::ib_dealloc_pd(pz->pd)) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE);
  --n->counters_mut().pzs;
  n->remove(pz);
  return DAT_SUCCESS;
}

}  // extern "C"
