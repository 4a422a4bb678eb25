// The InfiniBand transport provider: the node's transport, its system
// thread, transport events from the port's state, create/destroy_ti,
// endpoints, protection domains, completion queues, memory registration,
// io_ctl, the status strings and the operations vector.
#include "ti/ib/ti_ib.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include "core/params.h"
#include "host/api_call.h"
#include "core/sim.h"

namespace nicsim::ti {
namespace {

const ParamRegistration ti_params(
    "host", "",
    {
        {"cost.ti_op",
         UnitKind::Time,
         "300ns",
         "0ps",
         "1s",
         {},
         "SDP Transport Interface, per operation (a post, a poll, a pool get or put, a connection step)"},
        {"ti.port_watch",
         UnitKind::Time,
         "50us",
         "1us",
         "1s",
         {},
         "how often the IB transport reads its port's state while a transport instance exists (link events)"},
    });

std::uint32_t ipv4_be(std::uint32_t host_order) {
  std::uint32_t v;
  const unsigned char b[4] = {static_cast<unsigned char>(host_order >> 24),
                              static_cast<unsigned char>(host_order >> 16), static_cast<unsigned char>(host_order >> 8),
                              static_cast<unsigned char>(host_order)};
  std::memcpy(&v, b, 4);
  return v;
}

}  // namespace

const FsmType& TiConnMachine::type() {
  using S = TiConnState;
  using E = TiConnEvent;
  static const FsmType type =
      make_fsm_type<TiConnMachine>("ti.conn", {{S::Idle, E::Connect, S::Connecting, "send_req"},
                                               {S::Idle, E::Listen, S::Listening, "listen"},
                                               {S::Idle, E::RequestArrived, S::Requested, "cr_callback"},
                                               {S::Listening, E::Disconnect, S::Closed, "stop_listening"},
                                               {S::Listening, E::Released, S::Closed, "destroyed"},
                                               {S::Connecting, E::ReplyArrived, S::ReplyReceived, "cr_callback"},
                                               {S::Connecting, E::MraArrived, S::Connecting, "cr_callback"},
                                               {S::Canceling, E::MraArrived, S::Canceling, "canceled"},
                                               {S::Connecting, E::Rejected, S::Closed, "rejected"},
                                               {S::Connecting, E::Unreachable, S::Closed, "timeout"},
                                               {S::Connecting, E::Disconnect, S::Canceling, "cancel"},
                                               {S::Canceling, E::ReplyArrived, S::Disconnecting, "send_dreq"},
                                               {S::Canceling, E::Rejected, S::Closed, "canceled"},
                                               {S::Canceling, E::Unreachable, S::Closed, "canceled"},
                                               {S::Canceling, E::Released, S::Closed, "destroyed"},
                                               {S::Connecting, E::Released, S::Closed, "destroyed"},
                                               {S::ReplyReceived, E::Accept, S::Established, "post_receives"},
                                               {S::ReplyReceived, E::Reject, S::Disconnecting, "disconnect"},
                                               {S::ReplyReceived, E::Timeout, S::Disconnecting, "disconnect"},
                                               {S::ReplyReceived, E::Disconnect, S::Disconnecting, "disconnect"},
                                               {S::ReplyReceived, E::PeerDisconnected, S::Closed, "peer_gone"},
                                               {S::ReplyReceived, E::Released, S::Closed, "destroyed"},
                                               {S::Requested, E::Accept, S::Accepting, "send_rep"},
                                               {S::Requested, E::Reject, S::Closed, "send_rej"},
                                               {S::Requested, E::Timeout, S::Closed, "send_rej"},
                                               {S::Requested, E::Disconnect, S::Closed, "send_rej"},
                                               {S::Requested, E::Released, S::Closed, "destroyed"},
                                               {S::Accepting, E::Established, S::Established, "rtu"},
                                               {S::Accepting, E::Unreachable, S::Closed, "no_rtu"},
                                               {S::Accepting, E::Released, S::Closed, "destroyed"},
                                               {S::Accepting, E::PeerDisconnected, S::Closed, "peer_gone"},
                                               {S::Closed, E::Released, S::Closed, "destroyed"},
                                               {S::Established, E::Disconnect, S::Disconnecting, "send_dreq"},
                                               {S::Established, E::PeerDisconnected, S::Closed, "flush"},
                                               {S::Established, E::Released, S::Closed, "destroyed"},
                                               {S::Disconnecting, E::PeerDisconnected, S::Closed, "flush"},
                                               {S::Disconnecting, E::Released, S::Closed, "destroyed"}});
  return type;
}

Conn::Conn(Instance* i, std::uint64_t conn_id, host::Host& node)
    : inst(i),
      id(conn_id),
      fsm(fmt::format("{}.ti{}", node.node_name(), conn_id), node.node_id(), TiConnState::Idle),
      inspectable("ti.conn", fsm.object(), &Conn::inspect, this) {}

namespace {
std::string endpoint_text(const Endpoint& e) {
  return fmt::format("{}.{}.{}.{}:{}", e.ip >> 24, (e.ip >> 16) & 255, (e.ip >> 8) & 255, e.ip & 255, e.port);
}
}  // namespace

// Its role and ends, the QP under it, what is posted and queued, and the
// flow-control credits when the connection has them.
void Conn::inspect(const void* self, InspectRows& rows) {
  const Conn& c = *static_cast<const Conn*>(self);
  add_row(rows, "role", c.listener ? "listener" : c.active ? "active" : "passive");
  add_row(rows, "local", endpoint_text(c.local));
  add_row(rows, "remote", c.listener ? "-" : endpoint_text(c.remote));
  add_row(rows, "qp", c.qp ? std::to_string(c.qp->qp_num) : "none");
  add_row(rows, "flow_control",
          c.fc ? fmt::format("{} credits, {} receives posted, {} sends given", fc_credits(&c), c.fc->posted, c.fc->sent)
               : "off");
  add_row(rows, "posted_sends", std::to_string(c.posted_sends));
  add_row(rows, "posted_recvs", std::to_string(c.posted_recvs));
  add_row(rows, "in_flight", std::to_string(c.in_flight));
  add_row(rows, "send_queue", std::to_string(c.send_queue.size()));
  add_row(rows, "timed_out", c.timed_out ? "yes" : "no");
  add_row(rows, "failed", c.failed ? "yes" : "no");
  add_row(rows, "cm_done", c.cm_done ? "yes" : "no");
}

// ---- the node -------------------------------------------------------------------

TiNode::TiNode(host::Host& h) : host(h), system_thread_(h, "ti_ib") {}

TiNode::~TiNode() {
  // The node's software ends with the simulation: what its programs left
  // open goes with it (the verbs objects go with the device).
  for (Conn* c : conns) delete c;
  for (Pool* p : pools) delete p;
  for (Mem* m : mems) delete m;
  for (Cq* c : cqs) delete c;
  for (Pd* p : pds) delete p;
  for (Endpoint* e : endpoints) delete e;
  for (Instance* i : instances) delete i;
}

void TiNode::issue(TiHandleToken* obj, HandleKind kind) {
  constexpr unsigned kKindBits = 3, kNodeShift = 44;
  obj->token = (static_cast<std::uintptr_t>(host.node_id() + 1) << kNodeShift) |
               static_cast<std::uintptr_t>(next_serial_++ << kKindBits) | static_cast<std::uintptr_t>(kind);
  tokens_[obj->token] = obj;
}

void TiNode::revoke(TiHandleToken* obj) {
  if (obj && obj->token) tokens_.erase(obj->token);
}

TiHandleToken* TiNode::lookup(const void* handle, HandleKind kind) const {
  const auto t = reinterpret_cast<std::uintptr_t>(handle);
  if (!t || (t & 7u) != static_cast<std::uintptr_t>(kind)) return nullptr;
  const auto it = tokens_.find(t);
  return it == tokens_.end() ? nullptr : it->second;
}

void TiNode::defer(std::function<void()> fn) { system_thread_.post(std::move(fn)); }

void TiNode::start_worker() { system_thread_.start(); }

Counters TiNode::counters() const {
  Counters c;
  c.instances = static_cast<std::uint32_t>(instances.size());
  c.endpoints = static_cast<std::uint32_t>(endpoints.size());
  c.pds = static_cast<std::uint32_t>(pds.size());
  c.cqs = static_cast<std::uint32_t>(cqs.size());
  c.mems = static_cast<std::uint32_t>(mems.size());
  c.pools = static_cast<std::uint32_t>(pools.size());
  c.conns = static_cast<std::uint32_t>(conns.size());
  for (Conn* k : conns)
    if (k->qp) ++c.qps;
  return c;
}

namespace {

void deliver(TiNode& n, ti_event_t ev, const void* data) {
  for (const auto& r : std::vector<TiNode::Registration>(n.registrations)) r.cb(ev, data, r.context);
}

// Port state changes become link device events (interrupt context: the
// callbacks run on the transport's thread).
void port_changed(TiNode& n, int state) {
  const int was = n.port_state;
  n.port_state = state;
  if (state == IB_PORT_ACTIVE && was != IB_PORT_ACTIVE) {
    n.defer([&n] { deliver(n, TI_EVENT_NETDEV_ONLINE, &n.desc); });
  } else if (state != IB_PORT_ACTIVE && was == IB_PORT_ACTIVE) {
    n.defer([&n] {
      deliver(n, TI_EVENT_NETDEV_GOING_DOWN, n.desc.dev);
      deliver(n, TI_EVENT_NETDEV_DOWN, nullptr);
    });
  }
}

}  // namespace

void TiNode::watch_port() {
  if (!port_timer_)
    port_timer_ = std::make_unique<host::Timer>(host, "ti_port_watch", [this] {
      defer([this] {  // a port query is a driver call: thread context
        ib_port_attr pa{};
        if (!ib_query_port(dev, 1, &pa) && static_cast<int>(pa.state) != port_state)
          port_changed(*this, static_cast<int>(pa.state));
        if (!instances.empty()) port_timer_->start(host.params().time("ti.port_watch"));
      });
    });
  if (!port_timer_->armed()) port_timer_->start(host.params().time("ti.port_watch"));
}

TiNode* node_if_started(host::Host& h) { return h.software<TiNode>(); }

TiNode* node() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  if (TiNode* n = h->software<TiNode>()) return n;
  if (in_interrupt()) return nullptr;
  // The CM (and the SA registration) come up with the CMA's first call.
  sockaddr_in me{};
  me.sin_family = AF_INET;
  me.sin_addr.s_addr = ipv4_be(h->ipv4(1));
  ib_device* dev = nullptr;
  if (ib_cma_get_device(reinterpret_cast<sockaddr*>(&me), &dev) || !dev) return nullptr;
  if (TiNode* n = h->software<TiNode>()) return n;
  TiNode& n = h->add_software(std::make_unique<TiNode>(*h));
  n.dev = dev;
  ib_port_attr pa{};
  if (!ib_query_port(dev, 1, &pa)) {
    n.port_state = static_cast<int>(pa.state);
    n.path_mtu = 128u << static_cast<int>(pa.active_mtu);
    n.max_msg = pa.max_msg_sz ? pa.max_msg_sz : n.max_msg;
  }
  SET_IPV4_ADDR(n.ip_addr, h->ipv4(1));
  SET_IPV4_ADDR(n.netmask, 0xff000000u);
  SET_IPV4_ADDR(n.gateway, 0u);
  n.desc.dev = nullptr;
  n.desc.IP_addr = &n.ip_addr;
  n.desc.IP_netmask = &n.netmask;
  n.desc.first_hop_IP_route_addr = &n.gateway;
  Sim::get().fsm().declare<TiConnMachine>();
  n.start_worker();
  return &n;
}

// ---- handle checks --------------------------------------------------------------

namespace {
TiNode* current_node() {
  host::Host* h = host::Host::current_host();
  return h ? h->software<TiNode>() : nullptr;
}
template <class T>
T* find_live(const void* h, HandleKind kind) {
  TiNode* n = current_node();
  return n ? static_cast<T*>(n->lookup(h, kind)) : nullptr;
}
}  // namespace

Instance* instance_of(ti_handle_t h) {
  Instance* i = find_live<Instance>(h, HandleKind::Instance);
  return i && !i->destroying ? i : nullptr;
}
Pd* pd_of(ti_pd_handle_t h) { return find_live<Pd>(h, HandleKind::Pd); }
Cq* cq_of(ti_cq_handle_t h) { return find_live<Cq>(h, HandleKind::Cq); }
Conn* conn_of(ti_conn_handle_t h) { return find_live<Conn>(h, HandleKind::Conn); }
Pool* pool_of(ti_res_pool_handle_t h) { return find_live<Pool>(h, HandleKind::Pool); }
Endpoint* endpoint_of(ti_endpoint_handle_t h) { return find_live<Endpoint>(h, HandleKind::Endpoint); }
Mem* mem_of(ti_mem_handle_t h) { return find_live<Mem>(h, HandleKind::Mem); }
ElementTd* td_of_wr(std::uint64_t wr_id) {
  TiNode* n = current_node();
  if (!n) return nullptr;
  for (Pool* p : n->pools) {
    if (p->tds.empty()) continue;
    const auto lo = reinterpret_cast<std::uint64_t>(p->tds.data());
    const auto hi = lo + p->tds.size() * sizeof(ElementTd);
    if (wr_id >= lo && wr_id < hi && (wr_id - lo) % sizeof(ElementTd) == 0)
      return &p->tds[(wr_id - lo) / sizeof(ElementTd)];
  }
  return nullptr;
}

ElementTd* td_of(ti_data_element_t* e) {
  TiNode* n = current_node();
  if (!n || !e) return nullptr;
  for (Pool* p : n->pools)
    if (p->owns(e)) {
      const auto i = static_cast<std::size_t>(e - p->elements.data());
      return &p->tds[i];
    }
  return nullptr;
}

}  // namespace nicsim::ti

using namespace nicsim;
using namespace nicsim::ti;

namespace {

// ---- events and instances -------------------------------------------------------

ti_status_t op_events_register(const void* p_Context, ti_event_cb_t Event_callback) {
  TiNode* n = node();
  if (!Event_callback) return TI_INVALID_PARAMETER;
  if (!n) return TI_ERROR;
  n->registrations.push_back({p_Context, Event_callback});
  // A link device already up is announced at once (on the transport's thread).
  if (n->port_state == IB_PORT_ACTIVE)
    n->defer([n, p_Context, Event_callback] {
      for (const auto& r : n->registrations)
        if (r.cb == Event_callback && r.context == p_Context) {
          Event_callback(TI_EVENT_NETDEV_ONLINE, &n->desc, p_Context);
          break;
        }
    });
  return TI_SUCCESS;
}

ti_status_t op_events_deregister(const void* p_Context, ti_event_cb_t Event_callback) {
  TiNode* n = node();
  if (!n || !Event_callback) return TI_INVALID_PARAMETER;
  for (auto it = n->registrations.begin(); it != n->registrations.end(); ++it)
    if (it->cb == Event_callback && it->context == p_Context) {
      n->registrations.erase(it);
      return TI_SUCCESS;
    }
  return TI_NOT_FOUND;
}

ti_status_t op_create_ti(ti_handle_t* ph_ti) {
  if (!ph_ti) return TI_INVALID_PARAMETER;
  TiNode* n = node();
  if (!n) return TI_INSUFFICIENT_RESOURCES;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  auto* i = new Instance;
  i->pd = ib_alloc_pd(n->dev);
  if (!i->pd) {
    delete i;
    return TI_INSUFFICIENT_RESOURCES;
  }
  n->instances.insert(i);
  n->issue(i, HandleKind::Instance);
  n->watch_port();
  *ph_ti = handle_of<ti_handle_t>(i);
  return TI_SUCCESS;
}

void destroy_everything(TiNode& n, Instance* i) {
  for (Conn* c : std::set<Conn*>(i->conns)) conn_release(c);
  for (Pool* p : std::set<Pool*>(i->pools)) pool_free(p);
  for (Mem* m : std::set<Mem*>(i->mems)) {
    ib_dereg_mr(m->mr);
    n.mems.erase(m);
    n.revoke(m);
    delete m;
  }
  for (Cq* c : std::set<Cq*>(i->cqs)) {
    ib_destroy_cq(c->cq);
    n.cqs.erase(c);
    n.revoke(c);
    delete c;
  }
  for (Pd* p : std::set<Pd*>(i->pds)) {
    n.pds.erase(p);
    n.revoke(p);
    delete p;
  }
  ib_dealloc_pd(i->pd);
  for (Endpoint* e : std::set<Endpoint*>(i->endpoints)) {
    n.endpoints.erase(e);
    n.revoke(e);
    delete e;
  }
  n.instances.erase(i);
  n.revoke(i);
  delete i;
}

ti_status_t op_destroy_ti(ti_handle_t h_ti, ti_context_cb_t pfn_cb, void* p_context) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  TiNode* n = node();
  i->destroying = true;  // the handle is invalid from now on
  n->defer([n, i, pfn_cb, p_context] {
    destroy_everything(*n, i);
    if (pfn_cb) pfn_cb(p_context);
  });
  return TI_SUCCESS;
}

ti_status_t op_debug_svc(ti_handle_t h_ti, ti_debug_level_t level) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (level < TI_DBG_OFF || level > TI_DBG_DEBUG) return TI_INVALID_PARAMETER;
  i->debug = level;
  return TI_SUCCESS;
}

// ---- endpoints and protection domains -------------------------------------------

ti_status_t op_create_endpoint(ti_handle_t h_ti, ti_inet_addr_t* p_addr, ti_port_t port, ti_endpoint_handle_t* ph_ep) {
  if (ph_ep) *ph_ep = nullptr;
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (!p_addr || !ph_ep) return TI_INVALID_PARAMETER;
  if (p_addr->IP_addr_type != TI_ADDR_IPV4) return TI_ERROR;  // the fabric's addresses are IPv4
  if (p_addr->ipv4_addr == 0) return TI_ERROR;
  auto* e = new Endpoint;
  e->inst = i;
  e->ip = p_addr->ipv4_addr;
  e->port = port;
  i->endpoints.insert(e);
  node()->endpoints.insert(e);
  node()->issue(e, HandleKind::Endpoint);
  *ph_ep = handle_of<ti_endpoint_handle_t>(e);
  return TI_SUCCESS;
}

ti_status_t op_destroy_endpoint(ti_endpoint_handle_t h_ep) {
  TiNode* n = node();
  Endpoint* e = n ? endpoint_of(h_ep) : nullptr;
  if (!e) return TI_INVALID_PARAMETER;
  e->inst->endpoints.erase(e);
  n->endpoints.erase(e);
  n->revoke(e);
  delete e;
  return TI_SUCCESS;
}

ti_status_t op_create_pd(ti_handle_t h_ti, ti_endpoint_handle_t h_local_ep, ti_pd_handle_t* ph_pd) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  TiNode* n = node();
  if (!ph_pd || !endpoint_of(h_local_ep)) return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  auto* p = new Pd;
  p->inst = i;
  p->pd = i->pd;
  i->pds.insert(p);
  n->pds.insert(p);
  n->issue(p, HandleKind::Pd);
  *ph_pd = handle_of<ti_pd_handle_t>(p);
  return TI_SUCCESS;
}

ti_status_t op_destroy_pd(ti_pd_handle_t h_pd) {
  Pd* p = pd_of(h_pd);
  if (!p) return TI_INVALID_PARAMETER;
  if (p->users) return TI_RESOURCE_BUSY;
  p->inst->pds.erase(p);
  node()->pds.erase(p);
  node()->revoke(p);
  delete p;
  return TI_SUCCESS;
}

// ---- completion queues ----------------------------------------------------------

ti_status_t op_create_cq(ti_handle_t h_ti, ti_pd_handle_t h_pd, uint32_t max_cq_entries, ti_cq_handle_t* ph_cq) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  Pd* p = pd_of(h_pd);
  if (!ph_cq || !p || p->inst != i || max_cq_entries == 0 || max_cq_entries > 65536) return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  auto* c = new Cq;
  c->inst = i;
  c->pd = p;
  c->entries = max_cq_entries;
  c->cq = ib_create_cq(node()->dev, cq_event, nullptr, c, static_cast<int>(max_cq_entries));
  if (!c->cq) {
    delete c;
    return TI_INSUFFICIENT_RESOURCES;
  }
  ++p->users;
  i->cqs.insert(c);
  node()->cqs.insert(c);
  node()->issue(c, HandleKind::Cq);
  *ph_cq = handle_of<ti_cq_handle_t>(c);
  return TI_SUCCESS;
}

ti_status_t op_destroy_cq(ti_cq_handle_t h_cq) {
  Cq* c = cq_of(h_cq);
  if (!c) return TI_INVALID_PARAMETER;
  if (!c->conns.empty()) return TI_INVALID_OPERATION;  // connections still use it
  if (in_interrupt()) return TI_INVALID_OPERATION;     // ib_destroy_cq would block
  if (ib_destroy_cq(c->cq)) return TI_INVALID_OPERATION;
  --c->pd->users;
  c->inst->cqs.erase(c);
  node()->cqs.erase(c);
  node()->revoke(c);
  delete c;
  return TI_SUCCESS;
}

// ---- memory ---------------------------------------------------------------------

int access_flags(ti_access_t a) {
  int f = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
  if (a == TI_MEM_READ || a == TI_MEM_READ_WRITE) f |= IB_ACCESS_REMOTE_READ;
  if (a == TI_MEM_WRITE || a == TI_MEM_READ_WRITE) f |= IB_ACCESS_REMOTE_WRITE;
  return f;
}

ti_status_t register_range(Instance* i, Pd* p, std::uint64_t addr, std::uint64_t bytes, ti_access_t access,
                           ti_rdma_desc_t* desc, ti_mem_handle_t* ph) {
  if (in_interrupt()) return TI_INVALID_OPERATION;
  ib_phys_buf buf{addr, bytes};
  u64 iova = addr;
  ib_mr* mr = ib_reg_phys_mr(p->pd, &buf, 1, access_flags(access), &iova);
  if (!mr) return TI_INSUFFICIENT_RESOURCES;
  auto* m = new Mem;
  m->inst = i;
  m->pd = p;
  m->mr = mr;
  ++p->users;
  i->mems.insert(m);
  node()->mems.insert(m);
  node()->issue(m, HandleKind::Mem);
  desc->vaddr = addr;
  desc->rkey = mr->rkey;
  *ph = handle_of<ti_mem_handle_t>(m);
  log_at(i->debug, TI_DBG_VERBOSE, "registered %llu bytes at 0x%llx, rkey 0x%x", static_cast<unsigned long long>(bytes),
         static_cast<unsigned long long>(addr), static_cast<unsigned>(mr->rkey));
  return TI_SUCCESS;
}

ti_status_t op_reg_virt_mem(ti_handle_t h_ti, ti_pd_handle_t h_pd, void* p_vaddr, uint32_t byte_count,
                            ti_access_t access_rights, ti_rdma_desc_t* p_rdma_desc, ti_mem_handle_t* ph_vmem) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  Pd* p = pd_of(h_pd);
  if (!p || p->inst != i || !p_vaddr || !byte_count || !p_rdma_desc || !ph_vmem || access_rights < TI_MEM_READ ||
      access_rights > TI_MEM_READ_WRITE)
    return TI_INVALID_PARAMETER;
  return register_range(i, p, reinterpret_cast<std::uint64_t>(p_vaddr), byte_count, access_rights, p_rdma_desc,
                        ph_vmem);
}

// Physical pages are node memory addresses; the pages must be contiguous
// (4 KiB each), and the region is addressed by them.
ti_status_t op_reg_phys_mem(ti_handle_t h_ti, ti_pd_handle_t h_pd, uint64_t* pages, uint32_t num_pages,
                            ti_access_t access_rights, ti_rdma_desc_t* p_rdma_desc, ti_mem_handle_t* ph_pmem) {
  constexpr std::uint64_t kPage = 4096;
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  Pd* p = pd_of(h_pd);
  if (!p || p->inst != i || !pages || !num_pages || !p_rdma_desc || !ph_pmem || access_rights < TI_MEM_READ ||
      access_rights > TI_MEM_READ_WRITE)
    return TI_INVALID_PARAMETER;
  for (std::uint32_t k = 0; k < num_pages; ++k)
    if (pages[k] % kPage || pages[k] != pages[0] + k * kPage) return TI_INVALID_PARAMETER;
  const std::uint64_t offset = p_rdma_desc->vaddr % kPage;
  ti_status_t s = register_range(i, p, pages[0], num_pages * kPage, access_rights, p_rdma_desc, ph_pmem);
  if (s == TI_SUCCESS) p_rdma_desc->vaddr = pages[0] + offset;
  return s;
}

ti_status_t op_dereg_mem(ti_mem_handle_t h_mem) {
  TiNode* n = node();
  Mem* m = n ? mem_of(h_mem) : nullptr;
  if (!m) return TI_INVALID_HANDLE;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  if (ib_dereg_mr(m->mr)) return TI_ERROR;
  --m->pd->users;
  m->inst->mems.erase(m);
  n->mems.erase(m);
  n->revoke(m);
  delete m;
  return TI_SUCCESS;
}

// ---- io_ctl ---------------------------------------------------------------------

ti_status_t op_io_ctl(ti_handle_t h_ti, ti_ioctl_t cmd, uint32_t* p_bytes, void* p_data) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (cmd != TI_GET_CONN_PROFILE) return TI_INVALID_SETTING;
  if (!p_bytes || !p_data || *p_bytes < sizeof(ti_conn_profile_t)) return TI_INVALID_PARAMETER;
  auto* prof = static_cast<ti_conn_profile_t*>(p_data);
  Conn* c = conn_of(prof->conn_handle);
  if (!c || c->inst != i || c->listener) return TI_INVALID_HANDLE;
  TiNode* n = node();
  prof->path_mtu = n->path_mtu;
  prof->max_transfer_size = c->attr.max_transfer_size;
  prof->max_rdma_size = c->attr.max_rdma_size;
  prof->max_transfer_depth = c->attr.max_transfer_depth;
  prof->max_recv_depth = c->attr.max_recv_depth;
  prof->send_credits = fc_credits(c);
  prof->msg_flow_control = c->attr.msg_flow_control;
  SET_IPV4_ADDR(prof->local_addr, c->local.ip);
  SET_IPV4_ADDR(prof->remote_addr, c->remote.ip);
  prof->local_port = c->local.port;
  prof->remote_port = c->remote.port;
  *p_bytes = sizeof(ti_conn_profile_t);
  return TI_SUCCESS;
}

char* status_2_str(ti_status_t status) { return ti_status_to_str(status); }

// The instance an operation's first argument belongs to (nullptr: none,
// or not a live handle): its debug_svc level decides what is logged.
const Instance* owner(ti_handle_t h) { return instance_of(h); }
const Instance* owner(ti_endpoint_handle_t h) {
  const Endpoint* o = endpoint_of(h);
  return o ? o->inst : nullptr;
}
const Instance* owner(ti_pd_handle_t h) {
  const Pd* o = pd_of(h);
  return o ? o->inst : nullptr;
}
const Instance* owner(ti_cq_handle_t h) {
  const Cq* o = cq_of(h);
  return o ? o->inst : nullptr;
}
const Instance* owner(ti_conn_handle_t h) {
  const Conn* o = conn_of(h);
  return o ? o->inst : nullptr;
}
const Instance* owner(ti_res_pool_handle_t h) {
  const Pool* o = pool_of(h);
  return o ? o->inst : nullptr;
}
const Instance* owner(ti_mem_handle_t h) {
  const Mem* o = mem_of(h);
  return o ? o->inst : nullptr;
}
const Instance* owner(ti_conn_request_t* r) { return r ? owner(r->conn_handle) : nullptr; }
template <class T>
const Instance* owner(T) {
  return nullptr;
}

// An operation with its routine entry and exit and its failures logged
// at its instance's level (ti/common/ti_log.h).
template <class F, class First, class... Rest>
ti_status_t logged(const char* name, F fn, First first, Rest... rest) {
  return ti_core::logged_call(
      name, [](auto h) { return level_of(owner(h)); }, fn, first, rest...);
}
#define NICSIM_TI_LOGGED(field, fn)      \
  o.field = [](auto... a) {              \
    NICSIM_API_CALL_NAMED("ti_" #field); \
    return logged(#field, fn, a...);     \
  }

char kTransportName[] = "InfiniBand (nicsim HCA, kernel verbs + CMA)";
char kLinkDevName[] = "ib0";

ti_ops_t make_ops() {
  ti_ops_t o{};
  o.transport_name = kTransportName;
  o.link_dev_name = kLinkDevName;
  o.ti_status_2_str = status_2_str;
  NICSIM_TI_LOGGED(events_register, op_events_register);
  NICSIM_TI_LOGGED(events_deregister, op_events_deregister);
  NICSIM_TI_LOGGED(create_ti, op_create_ti);
  NICSIM_TI_LOGGED(destroy_ti, op_destroy_ti);
  NICSIM_TI_LOGGED(debug_svc, op_debug_svc);
  NICSIM_TI_LOGGED(create_endpoint, op_create_endpoint);
  NICSIM_TI_LOGGED(destroy_endpoint, op_destroy_endpoint);
  NICSIM_TI_LOGGED(create_pd, op_create_pd);
  NICSIM_TI_LOGGED(destroy_pd, op_destroy_pd);
  NICSIM_TI_LOGGED(create_cq, op_create_cq);
  NICSIM_TI_LOGGED(poll_cq, cq_poll);
  NICSIM_TI_LOGGED(rearm_cq, cq_rearm);
  NICSIM_TI_LOGGED(destroy_cq, op_destroy_cq);
  NICSIM_TI_LOGGED(connect, conn_connect);
  NICSIM_TI_LOGGED(accept, conn_accept);
  NICSIM_TI_LOGGED(reject, conn_reject);
  NICSIM_TI_LOGGED(listen, conn_listen);
  NICSIM_TI_LOGGED(disconnect, conn_disconnect);
  NICSIM_TI_LOGGED(reg_virt_mem, op_reg_virt_mem);
  NICSIM_TI_LOGGED(reg_phys_mem, op_reg_phys_mem);
  NICSIM_TI_LOGGED(dereg_mem, op_dereg_mem);
  NICSIM_TI_LOGGED(res_pool_create, pool_create);
  NICSIM_TI_LOGGED(res_pool_destroy, pool_destroy);
  NICSIM_TI_LOGGED(res_pool_get, pool_get);
  NICSIM_TI_LOGGED(res_pool_put, pool_put);
  NICSIM_TI_LOGGED(msg_send, data_msg_send);
  NICSIM_TI_LOGGED(msg_recv, data_msg_recv);
  NICSIM_TI_LOGGED(rdma_read, data_rdma_read);
  NICSIM_TI_LOGGED(rdma_write, data_rdma_write);
  NICSIM_TI_LOGGED(rdma_read_send, data_rdma_read_send);
  NICSIM_TI_LOGGED(rdma_write_send, data_rdma_write_send);
  NICSIM_TI_LOGGED(atomic_op, data_atomic_op);
  NICSIM_TI_LOGGED(io_ctl, op_io_ctl);
  return o;
}
#undef NICSIM_TI_LOGGED

ti_ops_t g_ops = make_ops();

// TI layer events reach SDP through this (no TI-layer event is raised today).
void ti_layer_event(const ti_event_t, const void*, const void*) {}

}  // namespace

extern "C" {

ti_ops_t* ti_ib_ops(void) { return &g_ops; }

ti_ops_t* ti_ib_transport_load(void) {
  if (!node()) return nullptr;
  SDP_register_transport(&g_ops, ti_layer_event);
  return &g_ops;
}

char* ti_status_to_str(const ti_status_t status) {
  static char names[][32] = {"No Status",
                             "Success",
                             "Pending",
                             "Insufficient Resources",
                             "Insufficient Memory",
                             "Invalid Parameter",
                             "Invalid Permission",
                             "Invalid Address",
                             "Invalid Handle",
                             "Invalid Setting",
                             "Invalid Operation",
                             "Unsupported",
                             "Resource Busy",
                             "Rejected",
                             "Canceled",
                             "Timeout",
                             "CQ Error",
                             "CQ Overrun Error",
                             "Not Found",
                             "Error"};
  static char unknown[] = "Unknown Status";
  const int k = static_cast<int>(status) + 1;
  return k >= 0 && k < static_cast<int>(sizeof names / sizeof names[0]) ? names[k] : unknown;
}

char* ti_event_to_str(ti_event_t event, void* data, char* buf, u32 buf_len) {
  static const char* const names[] = {"NONE",
                                      "NETDEV_ONLINE",
                                      "NETDEV_UP",
                                      "NETDEV_DOWN",
                                      "NETDEV_REBOOT",
                                      "NETDEV_CHANGE",
                                      "NETDEV_REGISTER",
                                      "NETDEV_UNREGISTER",
                                      "NETDEV_CHANGEMTU",
                                      "NETDEV_CHANGEADDR",
                                      "NETDEV_GOING_DOWN",
                                      "NETDEV_CHANGENAME",
                                      "SYS_DOWN",
                                      "SYS_RESTART",
                                      "SYS_HALT",
                                      "SYS_POWER_OFF",
                                      "RTF_UP",
                                      "RTF_GATEWAY",
                                      "RTF_HOST",
                                      "RTF_REINSTATE",
                                      "RTF_DYNAMIC",
                                      "RTF_MODIFIED",
                                      "RTF_MTU",
                                      "RTF_MSS",
                                      "RTF_WINDOW",
                                      "RTF_IRTT",
                                      "RTF_REJECT",
                                      "RTF_DEFAULT",
                                      "RTF_ALLONLINK",
                                      "RTF_ADDRCONF",
                                      "RTF_NONEXTHOP",
                                      "RTF_EXPIRES",
                                      "RTF_CACHE",
                                      "RTF_FLOW",
                                      "RTF_POLICY",
                                      "RTF_LOCAL",
                                      "RTMSG_NEWDEVICE",
                                      "RTMSG_DELDEVICE",
                                      "RTMSG_NEWROUTE",
                                      "RTMSG_DELROUTE",
                                      "TI_SHUTDOWN",
                                      "PROTO_SHUTDOWN"};
  if (!buf || !buf_len) return buf;
  const int k = static_cast<int>(event);
  const char* name = k >= 0 && k < static_cast<int>(sizeof names / sizeof names[0]) ? names[k] : "UNKNOWN";
  if (event == TI_EVENT_NETDEV_ONLINE && data) {
    const auto* d = static_cast<const ti_transport_desc_t*>(data);
    char ip[16] = "";
    if (d->IP_addr) {
      const std::uint32_t a = d->IP_addr->ipv4_addr;
      unsigned char b[4] = {static_cast<unsigned char>(a >> 24), static_cast<unsigned char>(a >> 16),
                            static_cast<unsigned char>(a >> 8), static_cast<unsigned char>(a)};
      mk_inet_addr_p(b, ip);
    }
    std::snprintf(buf, buf_len, "TI_EVENT_%s %s", name, ip);
  } else {
    std::snprintf(buf, buf_len, "TI_EVENT_%s", name);
  }
  return buf;
}

char* mk_inet_addr_p(unchar* IPv4_addr, char* buf) {
  if (!buf) return buf;
  if (!IPv4_addr) {
    buf[0] = 0;
    return buf;
  }
  std::snprintf(buf, 16, "%u.%u.%u.%u", IPv4_addr[0], IPv4_addr[1], IPv4_addr[2], IPv4_addr[3]);
  return buf;
}

}  // extern "C"
