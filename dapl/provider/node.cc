// The provider on one node: the handle table, connection attempts, the
// connect timer thread (started lazily, as the seed's dapls_timer_set
// starts it), and the calls on handles of any kind.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <cstring>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {

namespace {
const ParamRegistration dapl_params("host", "",
                                    {{"cost.dapl_call",
                                      UnitKind::Time,
                                      "150ns",
                                      "0ps",
                                      "1ms",
                                      {},
                                      "DAPL provider, per DAT call: handle checks and the provider's bookkeeping "
                                      "(the verbs and CM calls it makes cost their own)"}});
const host::CostClass kCall{"dapl_call"};
}  // namespace

// Held by the Host: the provider's state goes with the node.
struct NodeSoftware : host::HostSoftware {
  explicit NodeSoftware(host::Host& h) : node(h) {}
  Node node;
};

Node::Node(host::Host& h) : host_(h), node_tag_(h.node_id() + 1), timer_wq_(std::make_unique<host::WaitQueue>(h)) {}
Node::~Node() = default;

Node* Node::current() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  if (auto* s = h->software<NodeSoftware>()) return &s->node;
  return &h->add_software(std::make_unique<NodeSoftware>(*h)).node;
}

Node* Node::of(host::Host& h) {
  auto* s = h.software<NodeSoftware>();
  return s ? &s->node : nullptr;
}

void charge_call(Node& n) { n.host().work(kCall); }

Object* Node::find(DAT_HANDLE h) const {
  auto it = objects_.find(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h)));
  return it == objects_.end() ? nullptr : it->second.get();
}

void Node::remove(Object* o) {
  for (auto it = attempts_.begin(); it != attempts_.end();)
    it = it->second == o->handle ? attempts_.erase(it) : std::next(it);
  auto it = objects_.find(o->handle);
  if (it == objects_.end()) return;
  std::unique_ptr<Object> owned = std::move(it->second);
  objects_.erase(it);
  if (owned->pins > 0) {
    owned->dead = true;
    zombies_.emplace(owned.get(), std::move(owned));
  }
}

void Node::unpin(Object* o) {
  if (--o->pins > 0 || !o->dead) return;
  auto it = zombies_.find(o);
  if (it == zombies_.end()) return;
  std::unique_ptr<Object> owned = std::move(it->second);
  zombies_.erase(it);
  owned->reap(*this);
}

std::vector<Object*> Node::objects_of(const Ia* ia) const {
  std::vector<Object*> out;
  for (const auto& [h, o] : objects_)
    if (o->ia == ia && o.get() != ia) out.push_back(o.get());
  return out;
}

Ep* Node::ep_of_serial(std::uint32_t serial) const {
  const std::uint64_t h =
      (static_cast<std::uint64_t>(node_tag_) << 40) | (static_cast<std::uint64_t>(Kind::Ep) << 32) | serial;
  auto it = objects_.find(h);
  return it == objects_.end() ? nullptr : static_cast<Ep*>(it->second.get());
}

std::uint64_t Node::new_attempt(Ep& ep) {
  for (auto it = attempts_.begin(); it != attempts_.end();)
    it = it->second == ep.handle ? attempts_.erase(it) : std::next(it);
  const std::uint64_t token = next_attempt_++;
  attempts_.emplace(token, ep.handle);
  ep.attempt = token;
  return token;
}

Ep* Node::ep_of_attempt(std::uint64_t token) const {
  auto it = attempts_.find(token);
  if (it == attempts_.end()) return nullptr;
  auto o = objects_.find(it->second);
  if (o == objects_.end() || o->second->kind != Kind::Ep) return nullptr;
  auto* ep = static_cast<Ep*>(o->second.get());
  return ep->attempt == token ? ep : nullptr;
}

void Node::set_timer(Ep& ep, Tick deadline) {
  cancel_timer(ep);
  ep.deadline = deadline;
  timers_.emplace(deadline, ep.handle);
  ++counters_.timers;
  if (!timer_started_) {
    timer_started_ = true;
    host_.spawn("dapl_timer", [this] { timer_thread(); });
  }
  timer_wq_->notify_all();
}

void Node::cancel_timer(Ep& ep) {
  if (!ep.deadline) return;
  for (auto it = timers_.begin(); it != timers_.end(); ++it)
    if (it->second == ep.handle) {
      timers_.erase(it);
      --counters_.timers;
      break;
    }
  ep.deadline = 0;
}

// Sleeps until the first deadline (or a new earlier one), then times out
// the EPs whose connection is still pending.
void Node::timer_thread() {
  for (;;) {
    if (timers_.empty()) {
      timer_wq_->wait();
      continue;
    }
    const Tick first = timers_.begin()->first;
    if (now() < first) {
      timer_wq_->wait_until(first);
      continue;
    }
    const std::uint64_t h = timers_.begin()->second;
    timers_.erase(timers_.begin());
    --counters_.timers;
    auto* ep = find_as<Ep>(reinterpret_cast<DAT_HANDLE>(static_cast<std::uintptr_t>(h)), Kind::Ep);
    if (!ep) continue;
    ep->deadline = 0;
    if (ep->fsm.state() == EpState::ActiveConnectionPending) ep_connection_timed_out(*this, *ep);
  }
}

Evd::Evd(Ia* owner, host::Host& h) : Object(Kind::Evd, owner), wq(std::make_unique<host::WaitQueue>(h)) {}
Evd::~Evd() = default;

Ep::Ep(Ia* owner, std::uint32_t device, const std::string& name)
    : Object(Kind::Ep, owner), fsm(name, device, EpState::Unconnected), inspectable("dat.ep", name, &inspect, this) {}

std::string Node::new_ep_name() { return fmt::format("{}.dat.ep{}", host_.node_name(), ++eps_named_); }

namespace {
std::string address(const sockaddr_in& a) {
  if (a.sin_family != AF_INET) return "-";
  const std::uint32_t ip = ntohl(a.sin_addr.s_addr);
  return fmt::format("{}.{}.{}.{}:{}", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, ntohs(a.sin_port));
}
}  // namespace

// What dat_ep_query and the provider know of the endpoint: its bindings,
// its QP, the connection, and the DTOs posted and not yet completed.
void Ep::inspect(const void* self, InspectRows& rows) {
  const Ep& ep = *static_cast<const Ep*>(self);
  add_row(rows, "handle", fmt::format("{:#x}", ep.handle));
  add_row(rows, "ia", ep.ia ? ep.ia->name : "-");
  add_row(rows, "qp", ep.qp ? std::to_string(ep.qp->qp_num) : "none");
  add_row(rows, "qp_failed", ep.qp_failed ? "yes" : "no");
  add_row(rows, "local", address(ep.local_addr));
  add_row(rows, "remote", address(ep.remote_addr));
  add_row(rows, "cma_id", ep.cma_id ? fmt::format("{:#x}", ep.cma_id) : "none");
  add_row(rows, "made_by", ep.provider_made ? "PSP (provider EP)" : "consumer");
  add_row(rows, "connect_deadline", ep.deadline ? format_time(ep.deadline) : "none");
  add_row(rows, "graceful_disconnect_pending", ep.graceful_pending ? "yes" : "no");
  add_row(rows, "requests_outstanding", std::to_string(ep.requests.size()));
  add_row(rows, "recvs_outstanding", std::to_string(ep.recvs.size()));
  add_row(rows, "next_dto", std::to_string(ep.next_seq));
  for (std::size_t i = 0; i < ep.requests.size(); ++i)
    add_row(rows, fmt::format("request[{}]", i),
            fmt::format("dto {:#x}, {} bytes{}", ep.requests[i].seq, ep.requests[i].length,
                        ep.requests[i].rmr ? ", RMR bind" : ""));
  for (std::size_t i = 0; i < ep.recvs.size(); ++i)
    add_row(rows, fmt::format("recv[{}]", i), fmt::format("dto {:#x}, {} bytes", ep.recvs[i].seq, ep.recvs[i].length));
}

DAT_RETURN bad_ep_state(const Ep& ep) {
  static constexpr DAT_RETURN_SUBTYPE kSub[] = {
      DAT_INVALID_STATE_EP_UNCONNECTED,    DAT_INVALID_STATE_EP_RESERVED,        DAT_INVALID_STATE_EP_PASSCONNPENDING,
      DAT_INVALID_STATE_EP_ACTCONNPENDING, DAT_INVALID_STATE_EP_TENTCONNPENDING, DAT_INVALID_STATE_EP_CONNECTED,
      DAT_INVALID_STATE_EP_DISCPENDING,    DAT_INVALID_STATE_EP_DISCONNECTED,    DAT_INVALID_STATE_EP_COMPLPENDING};
  return err(DAT_INVALID_STATE, kSub[static_cast<int>(ep.fsm.state())]);
}

}  // namespace nicsim::dapl

using namespace nicsim::dapl;

extern "C" {

DAT_RETURN dat_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE* handle_type) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Object* o = n ? n->find(handle) : nullptr;
  if (!o) return bad_handle(DAT_INVALID_HANDLE1);
  if (!handle_type) return bad_arg(2);
  static constexpr DAT_HANDLE_TYPE kType[] = {DAT_HANDLE_TYPE_IA,  DAT_HANDLE_TYPE_IA,  DAT_HANDLE_TYPE_PZ,
                                              DAT_HANDLE_TYPE_LMR, DAT_HANDLE_TYPE_EVD, DAT_HANDLE_TYPE_EP,
                                              DAT_HANDLE_TYPE_PSP, DAT_HANDLE_TYPE_RSP, DAT_HANDLE_TYPE_CR,
                                              DAT_HANDLE_TYPE_RMR, DAT_HANDLE_TYPE_CNO};
  *handle_type = kType[static_cast<int>(o->kind)];
  return DAT_SUCCESS;
}

DAT_RETURN dat_set_consumer_context(DAT_HANDLE handle, DAT_CONTEXT context) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Object* o = n ? n->find(handle) : nullptr;
  if (!o) return bad_handle(DAT_INVALID_HANDLE1);
  o->context = context;
  return DAT_SUCCESS;
}

DAT_RETURN dat_get_consumer_context(DAT_HANDLE handle, DAT_CONTEXT* context) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Object* o = n ? n->find(handle) : nullptr;
  if (!o) return bad_handle(DAT_INVALID_HANDLE1);
  if (!context) return bad_arg(2);
  *context = o->context;
  return DAT_SUCCESS;
}

DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle, DAT_CONN_QUAL) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  if (!n || !n->find_as<Cr>(cr_handle, Kind::Cr)) return bad_handle(DAT_INVALID_HANDLE_CR);
  // The seed leaves it out of the reference implementation (it needs kernel
  // mediation): not implemented, and the CR is left as it was.
  return err(DAT_NOT_IMPLEMENTED);
}

}  // extern "C"
