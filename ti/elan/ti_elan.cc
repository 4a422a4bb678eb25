// The Elan3 transport provider: the node's transport (its Kernel Comms
// services, its system thread, its handle table), create/destroy_ti,
// endpoints, protection domains, completion queues, memory registration
// (Elan DMA mappings), io_ctl and the operations vector.
#include "ti/elan/ti_elan.h"

#include <fmt/format.h>

#include <cstring>

#include "core/sim.h"

namespace nicsim::ti_elan {

const FsmType& ElanConnMachine::type() {
  using S = ElanConnState;
  using E = ElanConnEvent;
  static const FsmType type =
      make_fsm_type<ElanConnMachine>("ti.elan.conn", {{S::Idle, E::Connect, S::Connecting, "send_req"},
                                                      {S::Idle, E::Listen, S::Listening, "listen"},
                                                      {S::Idle, E::RequestArrived, S::Requested, "cr_callback"},
                                                      {S::Listening, E::Disconnect, S::Closed, "stop_listening"},
                                                      {S::Connecting, E::ReplyArrived, S::ReplyReceived, "cr_callback"},
                                                      {S::Connecting, E::Rejected, S::Closed, "rejected"},
                                                      {S::Connecting, E::Disconnect, S::Closed, "cancel"},
                                                      {S::ReplyReceived, E::Accept, S::Established, "send_rtu"},
                                                      {S::ReplyReceived, E::Reject, S::Closed, "send_rej"},
                                                      {S::ReplyReceived, E::Disconnect, S::Closed, "send_rej"},
                                                      {S::ReplyReceived, E::PeerDisconnected, S::Closed, "peer_gone"},
                                                      {S::Requested, E::Accept, S::Accepting, "send_rep"},
                                                      {S::Requested, E::Reject, S::Closed, "send_rej"},
                                                      {S::Requested, E::Disconnect, S::Closed, "send_rej"},
                                                      {S::Requested, E::PeerDisconnected, S::Closed, "peer_gone"},
                                                      {S::Accepting, E::RtuArrived, S::Established, "rtu"},
                                                      {S::Accepting, E::Rejected, S::Closed, "peer_rejected"},
                                                      {S::Accepting, E::PeerDisconnected, S::Closed, "peer_gone"},
                                                      {S::Accepting, E::Disconnect, S::Closed, "send_dreq"},
                                                      {S::Established, E::Disconnect, S::Closed, "send_dreq"},
                                                      {S::Established, E::PeerDisconnected, S::Closed, "flush"},
                                                      {S::Closed, E::Disconnect, S::Closed, "release"},
                                                      {S::Closed, E::PeerDisconnected, S::Closed, "late_dreq"}});
  return type;
}

Conn::Conn(std::uint32_t conn_id, host::Host& node)
    : id(conn_id), fsm(fmt::format("{}.tielan{}", node.node_name(), conn_id), node.node_id(), ElanConnState::Idle) {}

ElanTiNode::ElanTiNode(host::Host& h) : host(h), system_thread_(h, "ti_elan") {}

ElanTiNode::~ElanTiNode() {
  // The node's software ends with the simulation: what its programs left
  // open goes with it (the Kernel Comms objects go with the Elan's node).
  for (auto& [token, o] : objs_) delete o;
}

void ElanTiNode::adopt(Obj* o, Kind k, Instance* i) {
  o->kind = k;
  o->inst = i;
  // The node is in the token: nodes share one process and each numbers
  // its objects from 1, so without it another node's handle would name
  // one of this node's.
  constexpr unsigned kKindBits = 4, kNodeShift = 44;
  o->token = (static_cast<std::uintptr_t>(host.node_id() + 1) << kNodeShift) | (serial_++ << kKindBits) |
             static_cast<std::uintptr_t>(k);
  objs_[o->token] = o;
}

void ElanTiNode::drop(Obj* o) {
  objs_.erase(o->token);
  delete o;
}

Obj* ElanTiNode::lookup(const void* handle, Kind k) const {
  auto it = objs_.find(reinterpret_cast<std::uintptr_t>(handle));
  return it != objs_.end() && it->second->kind == k ? it->second : nullptr;
}

Obj* ElanTiNode::find(const void* handle) const {
  auto it = objs_.find(reinterpret_cast<std::uintptr_t>(handle));
  return it != objs_.end() ? it->second : nullptr;
}

ti_debug_level_t level_of(const void* handle) {
  host::Host* h = host::Host::current_host();
  ElanTiNode* n = h ? h->software<ElanTiNode>() : nullptr;
  const Obj* o = n ? n->find(handle) : nullptr;
  return o && o->inst ? o->inst->debug : TI_DBG_OFF;
}

ti_debug_level_t level_of(const ti_conn_request_t* r) { return r ? level_of(r->conn_handle) : TI_DBG_OFF; }

std::vector<Obj*> ElanTiNode::owned_by(const Instance* i) const {
  std::vector<Obj*> v;
  for (const auto& [token, o] : objs_)
    if (o->inst == i && o != i) v.push_back(o);
  return v;
}

std::vector<Obj*> ElanTiNode::all(Kind k) const {
  std::vector<Obj*> v;
  for (const auto& [token, o] : objs_)
    if (o->kind == k) v.push_back(o);
  return v;
}

int ElanTiNode::alloc_service() {
  for (int s = kFirstDataService; s < EP_NUM_SERVICES; ++s)
    if (!services_used[s]) {
      services_used[s] = true;
      return s;
    }
  return -1;
}

void ElanTiNode::free_service(int s) {
  if (s >= 0 && s < EP_NUM_SERVICES) services_used[s] = false;
}

void ElanTiNode::defer(std::function<void()> fn) {
  system_thread_.post(std::move(fn));
  system_thread_.start();
}

Counters ElanTiNode::counters() const {
  Counters c;
  c.objects = static_cast<std::uint32_t>(objs_.size());
  c.conns = static_cast<std::uint32_t>(conns.size());
  for (bool u : services_used) c.services += u ? 1 : 0;
  return c;
}

std::uint32_t elan_ip(int nodeid) { return 0x0a000000u + static_cast<std::uint32_t>(nodeid) + 1; }
int node_of_ip(std::uint32_t ip) {
  if ((ip & 0xff000000u) != 0x0a000000u || (ip & 0x00ffffffu) == 0) return -1;
  const int n = static_cast<int>((ip & 0x00ffffffu) - 1);
  return n < ep_numnodes() ? n : -1;
}

namespace {

// The node's Kernel Comms services: control (small messages), RDMA RPCs
// (each with an empty receive buffer: the RPC's payload says it all).
bool install(ElanTiNode& n) {
  constexpr int kRpcBuffers = 64;
  n.ctl_rcvr = ep_install_small_rcvr(0, kCtlService, EP_SVC_TYPE_SMALL, sizeof(CtlMsg), 64, on_ctl, &n);
  n.ctl_xmtr = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, sizeof(CtlMsg));
  n.rpc_rcvr = ep_install_large_rcvr(0, kRpcService, kRpcBuffers);
  n.large = ep_alloc_large_xmtr(0);
  if (!n.ctl_rcvr || !n.ctl_xmtr || !n.rpc_rcvr || !n.large) return false;
  for (int k = 0; k < kRpcBuffers; ++k)
    if (ep_queue_receive(n.rpc_rcvr, on_rpc, &n, 0, 0, 0) != ESUCCESS) return false;
  return true;
}

}  // namespace

ElanTiNode* node_if_started(host::Host& h) { return h.software<ElanTiNode>(); }

ElanTiNode* node() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  if (ElanTiNode* n = h->software<ElanTiNode>()) return n;
  if (h->in_interrupt()) return nullptr;
  const int self = ep_nodeid();
  if (self < 0) return nullptr;
  ElanTiNode& n = h->add_software(std::make_unique<ElanTiNode>(*h));
  n.nodeid = self;
  n.services_used.assign(EP_NUM_SERVICES, false);
  Sim::get().fsm().declare<ElanConnMachine>();
  if (!install(n)) return nullptr;
  return &n;
}

Mem* mem_covering(const Instance* i, std::uint64_t addr, std::uint64_t len) {
  ElanTiNode* n = node();
  if (!n) return nullptr;
  for (Obj* o : n->owned_by(i))
    if (o->kind == Kind::Mem && static_cast<Mem*>(o)->contains(addr, len)) return static_cast<Mem*>(o);
  return nullptr;
}

Mem* map_range(Instance* i, void* addr, std::uint32_t len) {
  ElanTiNode* n = node();
  ELAN3_DMA_HANDLE* h = nullptr;
  if (elan3_dma_addr_setup(ep_xmtr_dma_state(n->large), nullptr, static_cast<caddr_t>(addr), len, ELAN_PERM_REMOTEWRITE,
                           0, 0, DDI_DMA_SLEEP, nullptr, &h) != DDI_DMA_MAPPED)
    return nullptr;
  Mem* m = n->make<Mem>(Kind::Mem, i);
  m->base = static_cast<unsigned char*>(addr);
  m->len = len;
  m->map = h;
  m->eaddr = elan3_dma_handle_to_addr(h);
  return m;
}

void unmap(Mem* m) {
  ElanTiNode* n = node();
  elan3_dma_unmap(ep_xmtr_dma_state(n->large), m->map);
  n->drop(m);
}

}  // namespace nicsim::ti_elan
