// The Elan provider's operations that need no peer: events, instances,
// endpoints, PDs, CQs (poll and rearm), memory registration, io_ctl, and
// the operations vector SDP registers.
#include <cstring>

#include "host/api_call.h"
#include "ti/common/ti_log.h"
#include "ti/elan/ti_elan.h"

using namespace nicsim;
using namespace nicsim::ti_elan;

namespace {

bool in_interrupt() {
  host::Host* h = host::Host::current_host();
  return h && h->in_interrupt();
}

void charge() {
  if (host::Host* h = host::Host::current_host()) h->work("ti_op");
}

struct NodeDesc : host::HostSoftware {
  ti_inet_addr_t ip{}, mask{}, gw{};
  ti_transport_desc_t desc{};
};

// The link device is the Elan: up as long as Kernel Comms runs on the node.
ti_status_t op_events_register(const void* ctx, ti_event_cb_t cb) {
  ElanTiNode* n = node();
  if (!cb) return TI_INVALID_PARAMETER;
  if (!n) return TI_ERROR;
  n->registrations.emplace_back(ctx, cb);
  NodeDesc* d = n->host.software<NodeDesc>();
  if (!d) {
    d = &n->host.add_software(std::make_unique<NodeDesc>());
    SET_IPV4_ADDR(d->ip, elan_ip(n->nodeid));
    SET_IPV4_ADDR(d->mask, 0xff000000u);
    d->desc.IP_addr = &d->ip;
    d->desc.IP_netmask = &d->mask;
    d->desc.first_hop_IP_route_addr = &d->gw;
  }
  n->defer([cb, ctx, d] { cb(TI_EVENT_NETDEV_ONLINE, &d->desc, ctx); });
  return TI_SUCCESS;
}

ti_status_t op_events_deregister(const void* ctx, ti_event_cb_t cb) {
  ElanTiNode* n = node();
  if (!n || !cb) return TI_INVALID_PARAMETER;
  for (auto it = n->registrations.begin(); it != n->registrations.end(); ++it)
    if (it->first == ctx && it->second == cb) {
      n->registrations.erase(it);
      return TI_SUCCESS;
    }
  return TI_NOT_FOUND;
}

Instance* instance(ti_handle_t h) { return as<Instance>(h, Kind::Instance); }

ti_status_t op_create_ti(ti_handle_t* ph) {
  if (!ph) return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  ElanTiNode* n = node();
  if (!n) return TI_INSUFFICIENT_RESOURCES;
  charge();
  Instance* i = n->make<Instance>(Kind::Instance, nullptr);
  i->inst = i;
  *ph = handle_of<ti_handle_t>(i);
  return TI_SUCCESS;
}

// Calls fn on each object of the instance that is still live when its turn
// comes: releasing one may release others (a pool drops its mappings).
template <class Fn>
void each_owned(ElanTiNode& n, const Instance* i, Fn fn) {
  std::vector<std::uintptr_t> tokens;
  for (const Obj* o : n.owned_by(i)) tokens.push_back(o->token);
  for (std::uintptr_t t : tokens)
    if (Obj* o = n.find(reinterpret_cast<const void*>(t))) fn(o);
}

// Connections first (they give their elements back), then pools (their
// mappings), then the rest.
void release_all(ElanTiNode& n, Instance* i) {
  each_owned(n, i, [](Obj* o) {
    if (o->kind == Kind::Conn) conn_release(static_cast<Conn*>(o));
  });
  each_owned(n, i, [](Obj* o) {
    if (o->kind == Kind::Pool) pool_free(static_cast<Pool*>(o));
  });
  each_owned(n, i, [&n](Obj* o) {
    if (o->kind == Kind::Mem)
      unmap(static_cast<Mem*>(o));
    else
      n.drop(o);
  });
  n.drop(i);
}

ti_status_t op_destroy_ti(ti_handle_t h, ti_context_cb_t cb, void* ctx) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  ElanTiNode* n = node();
  charge();
  release_all(*n, i);
  if (cb) n->defer([cb, ctx] { cb(ctx); });
  return TI_SUCCESS;
}

ti_status_t op_debug_svc(ti_handle_t h, ti_debug_level_t level) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  if (level < TI_DBG_OFF || level > TI_DBG_DEBUG) return TI_INVALID_PARAMETER;
  i->debug = level;
  return TI_SUCCESS;
}

ti_status_t op_create_endpoint(ti_handle_t h, ti_inet_addr_t* addr, ti_port_t port, ti_endpoint_handle_t* ph) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  if (!addr || !ph) return TI_INVALID_PARAMETER;
  if (addr->IP_addr_type != TI_ADDR_IPV4 || addr->ipv4_addr == 0) return TI_ERROR;  // Elan nodes are IPv4 only
  ElanTiNode* n = node();
  charge();
  Endpoint* e = n->make<Endpoint>(Kind::Endpoint, i);
  e->ip = addr->ipv4_addr;
  e->port = port;
  *ph = handle_of<ti_endpoint_handle_t>(e);
  return TI_SUCCESS;
}

// The seed lists TI_INVALID_PARAMETER (not TI_INVALID_HANDLE) for a bad
// endpoint, PD or CQ handle, as the IB provider answers.
template <class T, class H>
ti_status_t destroy_simple(H h, Kind k) {
  T* o = as<T>(h, k);
  if (!o) return TI_INVALID_PARAMETER;
  charge();
  node()->drop(o);
  return TI_SUCCESS;
}

// A connection completes into the CQs of its info (active side) or of its
// accept: destroying one would lose its elements.
bool cq_in_use(ElanTiNode& n, ti_cq_handle_t h) {
  for (Obj* o : n.all(Kind::Conn)) {
    const auto* c = static_cast<const Conn*>(o);
    if (c->comp.h_send_cq == h || c->comp.h_recv_cq == h || c->info.send_cqh == h || c->info.recv_cqh == h) return true;
  }
  return false;
}

bool pd_in_use(ElanTiNode& n, const Pd* p, ti_pd_handle_t h) {
  for (Obj* o : n.all(Kind::Cq))
    if (static_cast<const Cq*>(o)->pd == p) return true;
  for (Obj* o : n.all(Kind::Mem))
    if (static_cast<const Mem*>(o)->pd == p) return true;
  for (Obj* o : n.all(Kind::Conn))
    if (static_cast<const Conn*>(o)->info.pdh == h) return true;
  return false;
}

ti_status_t op_destroy_endpoint(ti_endpoint_handle_t h) { return destroy_simple<Endpoint>(h, Kind::Endpoint); }

ti_status_t op_create_pd(ti_handle_t h, ti_endpoint_handle_t ep, ti_pd_handle_t* ph) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  Endpoint* e = as<Endpoint>(ep, Kind::Endpoint);
  if (!ph || !e || e->inst != i) return TI_INVALID_PARAMETER;  // the seed's h_local_ep is [in], not optional
  charge();
  *ph = handle_of<ti_pd_handle_t>(node()->make<Pd>(Kind::Pd, i));
  return TI_SUCCESS;
}

ti_status_t op_destroy_pd(ti_pd_handle_t h) {
  const Pd* p = as<Pd>(h, Kind::Pd);
  if (p && pd_in_use(*node(), p, h)) return TI_RESOURCE_BUSY;  // as the IB provider
  return destroy_simple<Pd>(h, Kind::Pd);
}

ti_status_t op_create_cq(ti_handle_t h, ti_pd_handle_t pd, uint32_t entries, ti_cq_handle_t* ph) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  Pd* p = as<Pd>(pd, Kind::Pd);
  if (!p || p->inst != i || !entries || !ph) return TI_INVALID_PARAMETER;
  charge();
  Cq* c = node()->make<Cq>(Kind::Cq, i);
  c->pd = p;
  *ph = handle_of<ti_cq_handle_t>(c);
  return TI_SUCCESS;
}

ti_status_t op_destroy_cq(ti_cq_handle_t h) {
  if (as<Cq>(h, Kind::Cq) && cq_in_use(*node(), h)) return TI_INVALID_OPERATION;  // the seed's "not valid now"
  return destroy_simple<Cq>(h, Kind::Cq);
}

ti_status_t op_poll_cq(ti_cq_handle_t h, ti_data_element_t** list) {
  Cq* c = as<Cq>(h, Kind::Cq);
  if (!c || !list) return TI_INVALID_PARAMETER;  // the seed lists no TI_INVALID_HANDLE here
  charge();
  *list = nullptr;
  if (c->done.empty()) return TI_NOT_FOUND;
  ti_data_element_t** tail = list;
  for (ti_data_element_t* e : c->done) {
    *tail = e;
    tail = &e->p_next_msg;
  }
  *tail = nullptr;
  c->done.clear();
  return TI_SUCCESS;
}

ti_status_t op_rearm_cq(ti_cq_handle_t h) {
  Cq* c = as<Cq>(h, Kind::Cq);
  if (!c) return TI_INVALID_PARAMETER;
  charge();
  c->armed = true;
  return TI_SUCCESS;
}

ti_status_t register_mem(ti_handle_t h, ti_pd_handle_t pd, void* addr, std::uint64_t len, ti_access_t access,
                         ti_rdma_desc_t* desc, ti_mem_handle_t* ph) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  Pd* p = as<Pd>(pd, Kind::Pd);
  if (!p || p->inst != i || !addr || !len || len > 0xffffffffu || !desc || !ph || access < TI_MEM_READ ||
      access > TI_MEM_READ_WRITE)
    return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  charge();
  Mem* m = map_range(i, addr, static_cast<std::uint32_t>(len));
  if (!m) return TI_INSUFFICIENT_RESOURCES;
  m->pd = p;
  // As over IB, a peer names the bytes by their virtual address and the
  // region's key; the key is the mapping's Elan base, and the side that
  // serves the RDMA translates (and refuses what no region of its covers).
  desc->vaddr = reinterpret_cast<std::uint64_t>(addr);
  desc->rkey = static_cast<ti_region_key_t>(m->eaddr);
  *ph = handle_of<ti_mem_handle_t>(m);
  return TI_SUCCESS;
}

ti_status_t op_reg_virt_mem(ti_handle_t h, ti_pd_handle_t pd, void* addr, uint32_t len, ti_access_t access,
                            ti_rdma_desc_t* desc, ti_mem_handle_t* ph) {
  return register_mem(h, pd, addr, len, access, desc, ph);
}

// Physical pages are node memory addresses, contiguous 4 KiB pages (as the
// IB provider takes them).
ti_status_t op_reg_phys_mem(ti_handle_t h, ti_pd_handle_t pd, uint64_t* pages, uint32_t npages, ti_access_t access,
                            ti_rdma_desc_t* desc, ti_mem_handle_t* ph) {
  constexpr std::uint64_t kPage = 4096;
  if (!pages || !npages || !desc) return instance(h) ? TI_INVALID_PARAMETER : TI_INVALID_HANDLE;
  for (std::uint32_t k = 0; k < npages; ++k)
    if (pages[k] % kPage || pages[k] != pages[0] + k * kPage) return TI_INVALID_PARAMETER;
  const std::uint64_t offset = desc->vaddr % kPage;
  ti_status_t s = register_mem(h, pd, reinterpret_cast<void*>(pages[0]), npages * kPage, access, desc, ph);
  if (s == TI_SUCCESS) desc->vaddr += offset;
  return s;
}

ti_status_t op_dereg_mem(ti_mem_handle_t h) {
  Mem* m = as<Mem>(h, Kind::Mem);
  if (!m) return TI_INVALID_HANDLE;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  charge();
  unmap(m);
  return TI_SUCCESS;
}

ti_status_t op_io_ctl(ti_handle_t h, ti_ioctl_t cmd, uint32_t* bytes, void* data) {
  Instance* i = instance(h);
  if (!i) return TI_INVALID_HANDLE;
  if (cmd != TI_GET_CONN_PROFILE) return TI_INVALID_SETTING;
  if (!bytes || !data || *bytes < sizeof(ti_conn_profile_t)) return TI_INVALID_PARAMETER;
  auto* prof = static_cast<ti_conn_profile_t*>(data);
  Conn* c = as<Conn>(prof->conn_handle, Kind::Conn);
  if (!c || c->inst != i || c->listener) return TI_INVALID_HANDLE;
  prof->path_mtu = 320;  // an Elan packet's payload
  prof->max_transfer_size = c->attr.max_transfer_size;
  prof->max_rdma_size = c->attr.max_rdma_size;
  prof->max_transfer_depth = c->attr.max_transfer_depth;
  prof->max_recv_depth = c->attr.max_recv_depth;
  prof->send_credits = 0;
  prof->msg_flow_control = c->attr.msg_flow_control;
  SET_IPV4_ADDR(prof->local_addr, c->local_ip);
  SET_IPV4_ADDR(prof->remote_addr, c->remote_ip);
  prof->local_port = c->local_port;
  prof->remote_port = c->remote_port;
  *bytes = sizeof(ti_conn_profile_t);
  return TI_SUCCESS;
}

char* status_2_str(ti_status_t s) { return ti_status_to_str(s); }

char kName[] = "Quadrics Elan3 (nicsim Elan, Kernel Comms)";
char kDev[] = "elan0";

// Every operation announced (as over IB: ti_<op>) and with its entry, exit
// and failure logged at the level of its first handle's instance
// (ti/common/ti_log.h).
#define NICSIM_TI_ELAN_LOGGED(field, fn)                       \
  o.field = [](auto... a) {                                    \
    NICSIM_API_CALL_NAMED("ti_" #field);                       \
    return ti_core::logged_call(                               \
        #field, [](auto h) { return level_of(h); }, fn, a...); \
  }

ti_ops_t make_ops() {
  ti_ops_t o{};
  o.transport_name = kName;
  o.link_dev_name = kDev;
  o.ti_status_2_str = status_2_str;
  NICSIM_TI_ELAN_LOGGED(events_register, op_events_register);
  NICSIM_TI_ELAN_LOGGED(events_deregister, op_events_deregister);
  NICSIM_TI_ELAN_LOGGED(create_ti, op_create_ti);
  NICSIM_TI_ELAN_LOGGED(destroy_ti, op_destroy_ti);
  NICSIM_TI_ELAN_LOGGED(debug_svc, op_debug_svc);
  NICSIM_TI_ELAN_LOGGED(create_endpoint, op_create_endpoint);
  NICSIM_TI_ELAN_LOGGED(destroy_endpoint, op_destroy_endpoint);
  NICSIM_TI_ELAN_LOGGED(create_pd, op_create_pd);
  NICSIM_TI_ELAN_LOGGED(destroy_pd, op_destroy_pd);
  NICSIM_TI_ELAN_LOGGED(create_cq, op_create_cq);
  NICSIM_TI_ELAN_LOGGED(poll_cq, op_poll_cq);
  NICSIM_TI_ELAN_LOGGED(rearm_cq, op_rearm_cq);
  NICSIM_TI_ELAN_LOGGED(destroy_cq, op_destroy_cq);
  NICSIM_TI_ELAN_LOGGED(connect, conn_connect);
  NICSIM_TI_ELAN_LOGGED(accept, conn_accept);
  NICSIM_TI_ELAN_LOGGED(reject, conn_reject);
  NICSIM_TI_ELAN_LOGGED(listen, conn_listen);
  NICSIM_TI_ELAN_LOGGED(disconnect, conn_disconnect);
  NICSIM_TI_ELAN_LOGGED(reg_virt_mem, op_reg_virt_mem);
  NICSIM_TI_ELAN_LOGGED(reg_phys_mem, op_reg_phys_mem);
  NICSIM_TI_ELAN_LOGGED(dereg_mem, op_dereg_mem);
  NICSIM_TI_ELAN_LOGGED(res_pool_create, pool_create);
  NICSIM_TI_ELAN_LOGGED(res_pool_destroy, pool_destroy);
  NICSIM_TI_ELAN_LOGGED(res_pool_get, pool_get);
  NICSIM_TI_ELAN_LOGGED(res_pool_put, pool_put);
  NICSIM_TI_ELAN_LOGGED(msg_send, data_msg_send);
  NICSIM_TI_ELAN_LOGGED(msg_recv, data_msg_recv);
  NICSIM_TI_ELAN_LOGGED(rdma_read, data_rdma_read);
  NICSIM_TI_ELAN_LOGGED(rdma_write, data_rdma_write);
  NICSIM_TI_ELAN_LOGGED(rdma_read_send, data_rdma_read_send);
  NICSIM_TI_ELAN_LOGGED(rdma_write_send, data_rdma_write_send);
  NICSIM_TI_ELAN_LOGGED(atomic_op, data_atomic);
  NICSIM_TI_ELAN_LOGGED(io_ctl, op_io_ctl);
  return o;
}
#undef NICSIM_TI_ELAN_LOGGED

ti_ops_t g_ops = make_ops();

void layer_event(const ti_event_t, const void*, const void*) {}

}  // namespace

extern "C" {

ti_ops_t* ti_elan_ops(void) { return &g_ops; }

ti_ops_t* ti_elan_transport_load(void) {
  if (!node()) return nullptr;
  SDP_register_transport(&g_ops, layer_event);
  return &g_ops;
}

}  // extern "C"
