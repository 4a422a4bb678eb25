// The kernel verbs over ci_interface_t: the node's device (its CA opened
// once as the consumer instance), ports and GIDs, protection domains,
// address handles, completion queues and memory regions. Queue pairs and
// posting are in kverbs_qp.cc.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "cm/kverbs/kverbs_impl.h"

namespace nicsim::kverbs {

namespace {

void completion_cb(void* cq_context) {
  KDevice* d = current();
  auto* cq = static_cast<KCq*>(cq_context);
  if (!d || !d->cqs.count(cq) || !cq->pub.comp_handler) return;
  cq->pub.comp_handler(&cq->pub, cq->pub.cq_context);
}

kv::ib_event_type event_of(ib_async_event_t t) {
  switch (t) {
    case IB_AE_QP_COMM:
      return kv::IB_EVENT_COMM_EST;
    case IB_AE_SQ_DRAINED:
      return kv::IB_EVENT_SQ_DRAINED;
    case IB_AE_WQ_REQ_ERROR:
      return kv::IB_EVENT_QP_REQ_ERR;
    case IB_AE_WQ_ACCESS_ERROR:
      return kv::IB_EVENT_QP_ACCESS_ERR;
    default:
      return kv::IB_EVENT_QP_FATAL;
  }
}

void async_cb(const ib_event_rec_t* rec) {
  KDevice* d = current();
  if (!d || !rec || !rec->context) return;
  kv::ib_event ev{};
  ev.device = &d->pub;
  if (auto* qp = static_cast<KQp*>(const_cast<void*>(rec->context)); d->qps.count(qp)) {
    if (!qp->pub.event_handler) return;
    ev.element.qp = &qp->pub;
    ev.event = event_of(rec->type);
    qp->pub.event_handler(&ev, qp->pub.qp_context);
  } else if (auto* cq = static_cast<KCq*>(const_cast<void*>(rec->context)); d->cqs.count(cq)) {
    if (!cq->pub.event_handler) return;
    ev.element.cq = &cq->pub;
    ev.event = kv::IB_EVENT_CQ_ERR;
    cq->pub.event_handler(&ev, cq->pub.cq_context);
  }
}

// query_ca into a buffer that holds its variable part.
bool query_ca(KDevice& d, std::vector<std::uint8_t>& buf) {
  if (in_interrupt()) return false;  // an HCA command
  std::size_t size = 0;
  if (d.ci->query_ca(d.ca, nullptr, &size, nullptr) != IB_INSUFFICIENT_MEMORY || !size) return false;
  buf.assign(size, 0);
  return d.ci->query_ca(d.ca, reinterpret_cast<ib_ca_attr_t*>(buf.data()), &size, nullptr) == IB_SUCCESS;
}

const ib_port_attr_t* port_of(KDevice& d, std::vector<std::uint8_t>& buf, std::uint8_t port) {
  if (!query_ca(d, buf)) return nullptr;
  const auto* a = reinterpret_cast<const ib_ca_attr_t*>(buf.data());
  if (port < 1 || port > a->num_ports) return nullptr;
  return &a->p_port_attr[port - 1];
}

KDevice* device_arg(kv::ib_device* dev) {
  KDevice* d = current();
  return d && dev == &d->pub ? d : nullptr;
}

}  // namespace

bool in_interrupt() {
  host::Host* h = host::Host::current_host();
  return h && h->in_interrupt();
}

KDevice* current() {
  host::Host* h = host::Host::current_host();
  return h ? h->software<KDevice>() : nullptr;
}

int errno_of(ib_api_status_t s) {
  switch (s) {
    case IB_SUCCESS:
      return 0;
    case IB_INSUFFICIENT_RESOURCES:
    case IB_INSUFFICIENT_MEMORY:
      return -ENOMEM;
    case IB_RESOURCE_BUSY:
      return -EBUSY;
    default:
      return -EINVAL;
  }
}

kv::ib_device* node_device_impl() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  if (KDevice* d = h->software<KDevice>()) return &d->pub;
  const ci_interface_t* ci = nicsim_ci_interface();
  if (!ci) return nullptr;
  if (KDevice* d = h->software<KDevice>()) return &d->pub;  // opened while the driver loaded
  ib_ca_handle_t ca = nullptr;
  if (ci->open_ca(ci->guid, completion_cb, async_cb, nullptr, &ca) != IB_SUCCESS) return nullptr;
  auto d = std::make_unique<KDevice>();
  d->ci = ci;
  d->ca = ca;
  d->host = h;
  std::snprintf(d->pub.name, sizeof d->pub.name, "nicsim_hca0");
  d->pub.node_type = kv::IB_NODE_CA;
  d->pub.node_guid = ci->guid;
  d->pub.node = d.get();
  std::vector<std::uint8_t> buf;
  if (query_ca(*d, buf)) d->pub.phys_port_cnt = reinterpret_cast<const ib_ca_attr_t*>(buf.data())->num_ports;
  return &h->add_software(std::move(d)).pub;
}

void counts_impl(kv::ib_device* dev, Counts& c) {
  if (!dev || !dev->node) return;
  auto* d = static_cast<KDevice*>(dev->node);
  c.pds = static_cast<std::uint32_t>(d->pds.size());
  c.cqs = static_cast<std::uint32_t>(d->cqs.size());
  c.qps = static_cast<std::uint32_t>(d->qps.size());
  c.mrs = static_cast<std::uint32_t>(d->mrs.size());
  c.ahs = static_cast<std::uint32_t>(d->ahs.size());
  c.dma_regs = d->dma_regs;
  c.mws = static_cast<std::uint32_t>(d->mws.size());
}

KMr* dma_mr_of(KDevice& d, std::uint32_t lkey) {
  for (KMr* m : d.mrs)
    if (!m->h && m->pub.lkey == lkey) return m;
  return nullptr;
}

std::uint32_t dma_lkey(KDevice& d, KMr& mr, std::uint64_t addr, std::uint32_t len) {
  const auto key = std::make_pair(addr, len);
  if (auto it = mr.regs.find(key); it != mr.regs.end()) return it->second.lkey;
  // A mapped range that covers it (few per region: a linear look).
  for (const auto& [range, reg] : mr.regs)
    if (addr >= range.first && addr + len <= range.first + range.second) return reg.lkey;
  auto* pd = reinterpret_cast<KPd*>(mr.pub.pd);
  ib_mr_create_t mc{};
  mc.vaddr = reinterpret_cast<void*>(addr);
  mc.length = len;
  mc.access_ctrl = IB_AC_LOCAL_WRITE;
  if (mr.access & kv::IB_ACCESS_REMOTE_WRITE) mc.access_ctrl |= IB_AC_RDMA_WRITE;
  if (mr.access & kv::IB_ACCESS_REMOTE_READ) mc.access_ctrl |= IB_AC_RDMA_READ;
  DmaReg r;
  std::uint32_t rkey = 0;
  if (d.ci->register_mr(pd->h, &mc, &r.lkey, &rkey, &r.h, nullptr) != IB_SUCCESS) return 0;
  mr.regs.emplace(key, r);
  ++d.dma_regs;
  return r.lkey;
}

bool dma_map_impl(kv::ib_mr* mr, void* addr, std::uint64_t bytes) {
  KDevice* d = current();
  auto* k = reinterpret_cast<KMr*>(mr);
  if (!d || !d->mrs.count(k) || k->h || bytes > 0xffffffffu) return false;
  return dma_lkey(*d, *k, reinterpret_cast<std::uint64_t>(addr), static_cast<std::uint32_t>(bytes)) != 0;
}

}  // namespace nicsim::kverbs

extern "C" {
kv::ib_device* nicsim_kverbs_node_device(void) { return nicsim::kverbs::node_device_impl(); }
kv::ib_device* nicsim_kverbs_device_of(nicsim::host::Host* h) {
  auto* d = h ? h->software<nicsim::kverbs::KDevice>() : nullptr;
  return d ? &d->pub : nullptr;
}
void nicsim_kverbs_counts(kv::ib_device* dev, nicsim::kverbs::Counts* out) { nicsim::kverbs::counts_impl(dev, *out); }
int nicsim_kverbs_dma_map(kv::ib_mr* mr, void* addr, std::uint64_t bytes) {
  return nicsim::kverbs::dma_map_impl(mr, addr, bytes);
}
}

namespace kv {

using nicsim::kverbs::current;
using nicsim::kverbs::errno_of;
using nicsim::kverbs::KAh;
using nicsim::kverbs::KCq;
using nicsim::kverbs::KDevice;
using nicsim::kverbs::KMr;
using nicsim::kverbs::KPd;
using nicsim::kverbs::unuse;
using nicsim::kverbs::use;

int ib_query_device(ib_device* device, ib_device_attr* a) {
  NICSIM_API_CALL();
  KDevice* d = nicsim::kverbs::device_arg(device);
  std::vector<std::uint8_t> buf;
  if (!d || !a || !nicsim::kverbs::query_ca(*d, buf)) return -EINVAL;
  const auto* c = reinterpret_cast<const ib_ca_attr_t*>(buf.data());
  std::memset(a, 0, sizeof *a);
  a->fw_ver = c->fw_ver;
  a->node_guid = a->sys_image_guid = c->ca_guid;
  a->max_mr_size = c->init_region_size;
  a->page_size_cap = 4096;
  a->vendor_id = c->vend_id;
  a->vendor_part_id = c->dev_id;
  a->hw_ver = c->revision;
  a->max_qp = static_cast<int>(c->max_qps);
  a->max_qp_wr = static_cast<int>(c->max_wrs);
  a->max_sge = static_cast<int>(c->max_sges);
  a->max_sge_rd = static_cast<int>(c->max_rd_sges);
  a->max_cq = static_cast<int>(c->max_cqs);
  a->max_cqe = static_cast<int>(c->max_cqes);
  a->max_mr = static_cast<int>(c->init_regions);
  a->max_mw = static_cast<int>(c->init_windows);
  a->max_pd = static_cast<int>(c->max_pds);
  a->max_qp_rd_atom = c->max_qp_resp_res;
  a->max_res_rd_atom = c->max_resp_res;
  a->max_qp_init_rd_atom = c->max_qp_init_depth;
  a->atomic_cap = c->atomicity == ::IB_ATOMIC_GLOBAL  ? IB_ATOMIC_GLOB
                  : c->atomicity == ::IB_ATOMIC_LOCAL ? IB_ATOMIC_HCA
                                                      : IB_ATOMIC_NONE;
  a->max_ah = static_cast<int>(c->max_addr_handles);
  a->max_mcast_grp = static_cast<int>(c->max_mcast_grps);
  a->max_mcast_qp_attach = static_cast<int>(c->max_qps_per_mcast_grp);
  a->max_total_mcast_qp_attach = static_cast<int>(c->max_mcast_qps);
  a->max_fmr = static_cast<int>(c->max_fmr);
  a->max_map_per_fmr = static_cast<int>(c->max_map_per_fmr);
  a->max_pkeys = static_cast<u16>(c->max_partitions);
  a->local_ca_ack_delay = c->local_ack_delay;
  return 0;
}

int ib_query_port(ib_device* device, u8 port_num, ib_port_attr* port_attr) {
  NICSIM_API_CALL();
  KDevice* d = nicsim::kverbs::device_arg(device);
  if (!d || !port_attr) return -EINVAL;
  std::vector<std::uint8_t> buf;
  const ib_port_attr_t* p = nicsim::kverbs::port_of(*d, buf, port_num);
  if (!p) return -EINVAL;
  std::memset(port_attr, 0, sizeof *port_attr);
  port_attr->state = static_cast<ib_port_state>(p->link_state);
  port_attr->max_mtu = port_attr->active_mtu = static_cast<ib_mtu>(p->mtu);
  port_attr->gid_tbl_len = p->num_gids;
  port_attr->pkey_tbl_len = p->num_pkeys;
  port_attr->max_msg_sz = static_cast<u32>(p->max_msg_size);
  port_attr->lid = cl_ntoh16(p->lid);
  port_attr->sm_lid = cl_ntoh16(p->sm_lid);
  port_attr->lmc = p->lmc;
  port_attr->sm_sl = p->sm_sl;
  port_attr->subnet_timeout = p->subnet_timeout;
  port_attr->max_vl_num = static_cast<u8>(p->max_vls);
  return 0;
}

int ib_query_gid(ib_device* device, u8 port_num, int index, ib_gid* gid) {
  NICSIM_API_CALL();
  KDevice* d = nicsim::kverbs::device_arg(device);
  if (!d || !gid || index < 0) return -EINVAL;
  std::vector<std::uint8_t> buf;
  const ib_port_attr_t* p = nicsim::kverbs::port_of(*d, buf, port_num);
  if (!p || index >= p->num_gids || !p->p_gid_table) return -EINVAL;
  std::memcpy(gid->raw, p->p_gid_table[index].raw, 16);
  return 0;
}

ib_pd* ib_alloc_pd(ib_device* device) {
  NICSIM_API_CALL();
  KDevice* d = nicsim::kverbs::device_arg(device);
  if (!d) return nullptr;
  auto* pd = new KPd;
  if (d->ci->allocate_pd(d->ca, &pd->h, nullptr) != IB_SUCCESS) {
    delete pd;
    return nullptr;
  }
  pd->pub.device = device;
  d->pds.insert(pd);
  return &pd->pub;
}

int ib_dealloc_pd(ib_pd* pd) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KPd*>(pd);
  if (!d || !d->pds.count(k)) return -EINVAL;
  if (atomic_read(&pd->usecnt)) return -EBUSY;
  if (int rc = errno_of(d->ci->deallocate_pd(k->h, nullptr))) return rc;
  d->pds.erase(k);
  delete k;
  return 0;
}

ib_ah* ib_create_ah(ib_pd* pd, ib_ah_attr* ah_attr) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KPd*>(pd);
  if (!d || !d->pds.count(k) || !ah_attr) return nullptr;
  ib_av_attr_t av{};
  av.port_num = ah_attr->port_num;
  av.sl = ah_attr->sl;
  av.dlid = cl_hton16(ah_attr->dlid);
  av.path_bits = ah_attr->src_path_bits;
  av.static_rate = ah_attr->static_rate;
  auto* ah = new KAh;
  if (d->ci->create_av(k->h, &av, &ah->h, nullptr) != IB_SUCCESS) {
    delete ah;
    return nullptr;
  }
  ah->pub.device = pd->device;
  ah->pub.pd = pd;
  use(pd->usecnt);
  d->ahs.insert(ah);
  return &ah->pub;
}

int ib_destroy_ah(ib_ah* ah) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KAh*>(ah);
  if (!d || !d->ahs.count(k)) return -EINVAL;
  if (int rc = errno_of(d->ci->destroy_av(k->h, nullptr))) return rc;
  unuse(ah->pd->usecnt);
  d->ahs.erase(k);
  delete k;
  return 0;
}

ib_cq* ib_create_cq(ib_device* device, ib_comp_handler comp_handler, void (*event_handler)(ib_event*, void*),
                    void* cq_context, int cqe) {
  NICSIM_API_CALL();
  KDevice* d = nicsim::kverbs::device_arg(device);
  if (!d || cqe < 1 || nicsim::kverbs::in_interrupt()) return nullptr;
  // ci CQs belong to a PD; the kernel's do not: each gets its own.
  auto* cq = new KCq;
  ib_pd_handle_t pd = nullptr;
  auto size = static_cast<std::uint32_t>(cqe);
  if (d->ci->allocate_pd(d->ca, &pd, nullptr) != IB_SUCCESS) {
    delete cq;
    return nullptr;
  }
  if (d->ci->create_cq(pd, cq, &size, &cq->h, nullptr) != IB_SUCCESS) {
    d->ci->deallocate_pd(pd, nullptr);
    delete cq;
    return nullptr;
  }
  cq->own_pd = pd;
  cq->pub.device = device;
  cq->pub.comp_handler = comp_handler;
  cq->pub.event_handler = event_handler;
  cq->pub.cq_context = cq_context;
  cq->pub.cqe = static_cast<int>(size);
  d->cqs.insert(cq);
  return &cq->pub;
}

}  // namespace kv
