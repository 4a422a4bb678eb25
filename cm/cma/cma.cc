// The connection manager abstraction (rdma/ib_cma.h) over the node's CM:
// argument checks, the cma_id handles (the CM's connection handles, never
// reused), the consumer's handlers wrapped as the connection's upcalls.
#include <cerrno>
#include <cstring>
#include <type_traits>

#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>

#include "cm/cma/cma_mra.h"
#include "host/api_call.h"
#include "cm/core/cm_node.h"
#include "cm/kverbs/kverbs.h"

namespace nicsim::cm {
namespace {

std::uint64_t get(const std::uint8_t* p, unsigned n) { return mad::get(p, n); }
// Service ids travel big-endian: the consumer's __be64 holds the wire bytes.
std::uint64_t be64(__be64 v) { return get(reinterpret_cast<const std::uint8_t*>(&v), 8); }

ib_cma_event event_of(Upcall u) {
  switch (u) {
    case Upcall::Established:
      return IB_CMA_EVENT_ESTABLISHED;
    case Upcall::Rejected:
      return IB_CMA_EVENT_REJECTED;
    case Upcall::Disconnected:
      return IB_CMA_EVENT_DISCONNECTED;
    default:
      return IB_CMA_EVENT_UNREACHABLE;
  }
}

std::uint64_t handle_of(const ib_cma_id* id) { return reinterpret_cast<std::uintptr_t>(id->cm_id); }

// The calling node's CM and the live connection `id` names, or nullptr.
Conn* conn_of(ib_cma_id* id, CmNode*& n) {
  host::Host* h = host::Host::current_host();
  n = h ? node_cm_if_started(*h) : nullptr;
  return n && id ? n->find(handle_of(id)) : nullptr;
}

bool rc_qp(ib_qp* qp) { return qp && kverbs::qp_live(qp) && qp->qp_type == IB_QPT_RC; }

bool ipv4_of(const sockaddr* a, std::uint32_t& ip) {
  if (!a || a->sa_family != AF_INET) return false;
  const auto* in = reinterpret_cast<const sockaddr_in*>(a);
  ip = static_cast<std::uint32_t>(mad::get(reinterpret_cast<const std::uint8_t*>(&in->sin_addr.s_addr), 4));
  return true;
}

void take_qp_attr(Conn& c, const ib_qp_attr* a) {
  c.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
  c.resp_res = c.init_depth = 4;
  if (!a) return;
  c.access = a->qp_access_flags;
  c.resp_res = a->max_dest_rd_atomic;
  c.init_depth = a->max_rd_atomic;
  if (a->timeout) c.ack_timeout = a->timeout;
  if (a->retry_cnt) c.retry_cnt = a->retry_cnt;
  if (a->rnr_retry) c.rnr_retry = a->rnr_retry;
  if (a->min_rnr_timer) c.min_rnr = a->min_rnr_timer;
}

int check_connect(const ib_cma_conn* cc, const ib_cma_id* id, std::uint32_t& ip) {
  if (!cc || !id || !cc->cma_event_handler || !rc_qp(cc->qp) || !ipv4_of(cc->dst_ip, ip)) return -EINVAL;
  if (cc->private_data_len > IB_CMA_REQ_PRIVATE_DATA_SIZE || (cc->private_data_len && !cc->private_data))
    return -EINVAL;
  // A C consumer may put any value in these enum fields: read their bits
  // (a C++ load of a value outside the enum's range is undefined).
  std::underlying_type_t<ib_qos> qos;
  std::underlying_type_t<ib_connect_flags> flags;
  std::memcpy(&qos, &cc->qos, sizeof qos);
  std::memcpy(&flags, &cc->connect_flags, sizeof flags);
  if (static_cast<unsigned>(qos) & ~0xfu) return -EINVAL;
  if (flags == IB_CONNECT_MULTIPATH_FLAG) return -EOPNOTSUPP;
  if (flags != IB_CONNECT_DEFAULT_FLAG) return -EINVAL;
  return 0;
}

}  // namespace
}  // namespace nicsim::cm

using namespace nicsim::cm;

int ib_cma_get_device(struct sockaddr* remote_address, struct ib_device** device) {
  NICSIM_API_CALL();
  std::uint32_t ip = 0;
  if (!device || !ipv4_of(remote_address, ip)) return -EINVAL;
  CmNode* n = node_cm();
  if (!n) return -ENODEV;
  *device = n->device();
  return 0;
}

int ib_cma_connect(struct ib_cma_conn* cc, union ib_cma_id* cma_id) {
  NICSIM_API_CALL();
  std::uint32_t ip = 0;
  if (int rc = check_connect(cc, cma_id, ip)) return rc;
  CmNode* n = node_cm();
  if (!n) return -ENODEV;
  Conn* c = n->new_conn();
  c->qp = cc->qp;
  take_qp_attr(*c, cc->qp_attr);
  c->service_id = be64(cc->service_id);
  c->upcall = [h = cc->cma_event_handler, ctx = cc->context](Upcall u, const std::uint8_t* priv) {
    h(event_of(u), ctx, const_cast<std::uint8_t*>(priv));
  };
  cma_id->cm_id = reinterpret_cast<ib_cm_id*>(static_cast<std::uintptr_t>(c->handle));
  return n->connect(c, ip, cc->timeout, static_cast<const std::uint8_t*>(cc->private_data), cc->private_data_len);
}

int ib_cma_disconnect(struct ib_qp* qp, union ib_cma_id* cma_id) {
  NICSIM_API_CALL();
  CmNode* n = nullptr;
  Conn* c = conn_of(cma_id, n);
  if (!c || c->fsm.state() == CmState::Listen || !qp) return -EINVAL;
  if (c->fsm.state() == CmState::Established && c->qp != qp) return -EINVAL;
  return n->disconnect(c);
}

int ib_cma_sid_listen(struct ib_device* device, __be64 service_id, void* context,
                      ib_cma_listen_handler cm_listen_handler, union ib_cma_id* cma_id) {
  NICSIM_API_CALL();
  if (!cm_listen_handler || !cma_id) return -EINVAL;
  CmNode* n = node_cm();
  if (!n) return -ENODEV;
  if (device && device != n->device()) return -EINVAL;
  Conn* l = nullptr;
  auto on_request = [cm_listen_handler, context](Upcall, const std::uint8_t* buf) {
    ib_cma_id id;
    id.cm_id = reinterpret_cast<ib_cm_id*>(static_cast<std::uintptr_t>(get(buf, 8)));
    cm_listen_handler(&id, const_cast<std::uint8_t*>(buf + 8), context);
  };
  if (int rc = n->listen(be64(service_id), on_request, &l)) return rc;
  cma_id->cm_id = reinterpret_cast<ib_cm_id*>(static_cast<std::uintptr_t>(l->handle));
  return 0;
}

int ib_cma_sid_destroy(union ib_cma_id* cma_id) {
  NICSIM_API_CALL();
  CmNode* n = nullptr;
  Conn* c = conn_of(cma_id, n);
  return c ? n->stop_listen(c) : -EINVAL;
}

int ib_cma_accept(union ib_cma_id* cma_id, struct ib_qp* qp, const void* private_data, u8 private_data_len,
                  void* context, ib_cma_ac_handler cm_accept_handler) {
  NICSIM_API_CALL();
  CmNode* n = nullptr;
  Conn* c = conn_of(cma_id, n);
  if (!c || !cm_accept_handler || !rc_qp(qp) || private_data_len > IB_CMA_REP_PRIVATE_DATA_SIZE ||
      (private_data_len && !private_data))
    return -EINVAL;
  const int rc = n->accept(c, qp, static_cast<const std::uint8_t*>(private_data), private_data_len);
  if (rc == 0)
    c->upcall = [cm_accept_handler, context](Upcall u, const std::uint8_t*) {
      cm_accept_handler(event_of(u), context);
    };
  return rc;
}

int ib_cma_reject(union ib_cma_id* cma_id, const void* private_data, u8 private_data_len) {
  NICSIM_API_CALL();
  CmNode* n = nullptr;
  Conn* c = conn_of(cma_id, n);
  if (!c || private_data_len > IB_CMA_REJ_PRIVATE_DATA_SIZE || (private_data_len && !private_data)) return -EINVAL;
  return n->reject(c, static_cast<const std::uint8_t*>(private_data), private_data_len);
}

int ib_cma_get_src_ip(union ib_cma_id* cma_id, ib_cma_rarp_handler rarp_handler, void* context) {
  NICSIM_API_CALL();
  CmNode* n = nullptr;
  Conn* c = conn_of(cma_id, n);
  if (!c || !rarp_handler || c->active || c->fsm.state() == CmState::Listen) return -EINVAL;
  const std::array<std::uint8_t, 16> gid = c->path.dgid;  // the REQ's primary local port GID
  n->post([n, gid, rarp_handler, context] {
    n->reverse(gid, [n, rarp_handler, context](std::uint32_t ip) {
      n->upcall([ip, rarp_handler, context] {
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        mad::put(reinterpret_cast<std::uint8_t*>(&sin.sin_addr.s_addr), 4, ip);
        rarp_handler(ip ? reinterpret_cast<sockaddr*>(&sin) : nullptr, context);
      });
    });
  });
  return 0;
}

int nicsim::cm::cma_on_mra(union ib_cma_id* cma_id, std::function<void()> fn) {
  CmNode* n = nullptr;
  Conn* c = conn_of(cma_id, n);
  if (!c || !c->active || !fn) return -EINVAL;
  c->on_mra = std::move(fn);
  return 0;
}
