// RMRs, two-sided: the server binds a window over part of its LMR on the
// connected EP and sends the window's rmr_context; the client reads and
// writes through it (every byte checked on both sides); the server then
// binds the window elsewhere, and the client's RDMA write with the stale
// rmr_context is refused by the server's HCA (a remote access error,
// nothing written). The bad calls around RMRs, and those of a connected
// and a disconnected EP, return their DAT errors.
#include <dat/udat.h>

#include <cstring>

#include "dapl/programs/dapl_common.h"
#include "dapl/provider/dapl.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::dapl {
namespace {

constexpr DAT_CONN_QUAL kQual = 0x524d52;
constexpr int kOff = 64, kLen = 128;  // the window, in the server's RDMA area

unsigned char server_byte(int j) { return static_cast<unsigned char>(0xa5 ^ j); }
unsigned char client_byte(int j, int round) { return static_cast<unsigned char>(3 * j + 17 * round); }

bool is(DAT_RETURN got, DAT_RETURN_TYPE type, int sub) {
  const DAT_RETURN want = DAT_CLASS_ERROR | static_cast<DAT_UINT32>(type) | static_cast<DAT_UINT32>(sub);
  if (got != want) ADD_FAILURE() << std::hex << "0x" << got << " instead of 0x" << want;
  return got == want;
}

// A request completion on the EP's DTO EVD: its event, status and cookie.
bool completion(dt_ep& e, DAT_EVENT_NUMBER number, int status, DAT_UINT64 cookie) {
  DAT_EVENT ev{};
  if (dt_wait(e.dto_evd, number, &ev, 1000000)) return false;
  if (number == DAT_RMR_BIND_COMPLETION_EVENT)
    return ev.event_data.rmr_completion_event_data.status == status &&
           ev.event_data.rmr_completion_event_data.user_cookie.as_64 == cookie;
  return ev.event_data.dto_completion_event_data.status == status &&
         ev.event_data.dto_completion_event_data.user_cookie.as_64 == cookie;
}

bool post(dt_ep& e, bool recv, DAT_UINT64 cookie, DAT_VLEN len) {
  DAT_LMR_TRIPLET iov = dt_iov(&e, recv ? dt_recv_area(&e) : dt_send_area(&e), len);
  DAT_DTO_COOKIE c;
  c.as_64 = cookie;
  return (recv ? dat_ep_post_recv(e.ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG)
               : dat_ep_post_send(e.ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG)) == DAT_SUCCESS;
}

// Binds the RMR over [off, off+len) of the RDMA area; the new context.
bool bind(dt_ep& e, DAT_RMR_HANDLE rmr, int off, int len, DAT_UINT64 cookie, DAT_RMR_CONTEXT& ctx) {
  DAT_LMR_TRIPLET t = dt_iov(&e, dt_rdma_area(&e) + off, static_cast<DAT_VLEN>(len));
  DAT_RMR_COOKIE c;
  c.as_64 = cookie;
  const auto priv = static_cast<DAT_MEM_PRIV_FLAGS>(DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG);
  return dat_rmr_bind(rmr, &t, priv, e.ep, c, DAT_COMPLETION_DEFAULT_FLAG, &ctx) == DAT_SUCCESS &&
         completion(e, DAT_RMR_BIND_COMPLETION_EVENT, DAT_DTO_SUCCESS, cookie);
}

int serve(DAT_PZ_HANDLE pz, dt_ep& e, DAT_EVD_HANDLE cr_evd) {
  DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
  DAT_RMR_CONTEXT k1 = 0, k2 = 0;
  DAT_EVENT ev{};
  DT_CHECK(dat_rmr_create(pz, &rmr));
  DAT_RMR_CONTEXT unused = 0;
  DAT_LMR_TRIPLET t = dt_iov(&e, dt_rdma_area(&e), 8);
  if (!is(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, e.ep, {}, DAT_COMPLETION_DEFAULT_FLAG, &unused),
          DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED))
    return nicsim_log("bind on an unconnected EP"), 1;
  for (int j = 0; j < 256; ++j) dt_rdma_area(&e)[j] = server_byte(j);
  if (!post(e, true, 1, 64) || dt_wait(cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev, 2000000)) return 1;
  DT_CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, e.ep, 0, nullptr));
  if (dt_wait(e.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 1000000)) return 1;
  if (!bind(e, rmr, kOff, kLen, 77, k1)) return nicsim_log("first bind"), 1;
  if (!is(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_LOCAL_READ_FLAG, e.ep, {}, DAT_COMPLETION_DEFAULT_FLAG, &unused),
          DAT_INVALID_PARAMETER, DAT_INVALID_ARG3) ||
      !is(dat_lmr_free(e.lmr), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE) ||
      !is(dat_pz_free(pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE))
    return nicsim_log("bad calls on a bound RMR"), 1;
  const DAT_VADDR addr = reinterpret_cast<DAT_VADDR>(dt_rdma_area(&e) + kOff);
  std::memcpy(dt_send_area(&e), &k1, 4);
  std::memcpy(dt_send_area(&e) + 4, &addr, 8);
  if (!post(e, false, 2, 12) || !completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 2)) return 1;
  if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 1)) return nicsim_log("client's done"), 1;
  for (int j = 0; j < 256; ++j)
    if (dt_rdma_area(&e)[j] != (j >= kOff && j < kOff + kLen ? client_byte(j - kOff, 1) : server_byte(j)))
      return nicsim_log("server byte %d after the write through the window", j), 1;
  if (!bind(e, rmr, 0, 32, 78, k2) || k2 == k1) return nicsim_log("second bind"), 1;
  if (!post(e, false, 3, 1) || !completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 3)) return 1;
  nicsim_barrier();  // the client's write with the stale context is over
  for (int j = kOff; j < kOff + kLen; ++j)
    if (dt_rdma_area(&e)[j] != client_byte(j - kOff, 1)) return nicsim_log("stale context wrote byte %d", j), 1;
  if (dt_wait(e.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, 1000000)) return 1;
  DT_CHECK(dat_rmr_free(rmr));
  if (!is(dat_rmr_free(rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR)) return nicsim_log("RMR freed twice"), 1;
  return 0;
}

// Calls a CONNECTED EP refuses: too many or a negative number of IOVs,
// a message over the EP's max_mtu_size (100), an RDMA longer than its
// remote segment, no remote segment, and the calls its state forbids.
int connected_bad_calls(dt_ep& e, const DAT_RMR_TRIPLET& r) {
  DAT_LMR_TRIPLET iovs[5];
  for (auto& t : iovs) t = dt_iov(&e, dt_send_area(&e), 8);
  DAT_LMR_TRIPLET big = dt_iov(&e, dt_send_area(&e), 101), l = dt_iov(&e, dt_rdma_area(&e), kLen);
  DAT_RMR_TRIPLET shorter = r;
  shorter.segment_length = kLen / 2;
  const DAT_DTO_COOKIE c{};
  const auto f = DAT_COMPLETION_DEFAULT_FLAG;
  const int connected = DAT_INVALID_STATE_EP_CONNECTED;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  DAT_EP_PARAM p{};
  const bool ok = is(dat_ep_post_send(e.ep, 5, iovs, c, f), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2) &&
                  is(dat_ep_post_send(e.ep, -1, iovs, c, f), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2) &&
                  is(dat_ep_post_send(e.ep, 1, &big, c, f), DAT_LENGTH_ERROR, 0) &&
                  is(dat_ep_post_rdma_write(e.ep, 1, &l, c, &shorter, f), DAT_LENGTH_ERROR, 0) &&
                  is(dat_ep_post_rdma_read(e.ep, 1, &l, c, nullptr, f), DAT_INVALID_PARAMETER, DAT_INVALID_ARG5) &&
                  is(dat_ep_connect(e.ep, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&a), kQual, 10, 0, nullptr,
                                    DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
                     DAT_INVALID_STATE, connected) &&
                  is(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &p), DAT_INVALID_STATE, connected) &&
                  is(dat_ep_reset(e.ep), DAT_INVALID_STATE, connected);
  return ok ? 0 : (nicsim_log("a connected EP's bad calls"), 1);
}

// Requests in flight up to the EP's max_request_dtos (16): the next is
// DAT_INSUFFICIENT_RESOURCES with DAT_RESOURCE_TEP; every one completes.
int request_limit(dt_ep& e, const DAT_RMR_TRIPLET& r) {
  DAT_LMR_TRIPLET l = dt_iov(&e, dt_rdma_area(&e), kLen);
  DAT_DTO_COOKIE c{};
  int n = 0;
  DAT_RETURN rc = DAT_SUCCESS;
  for (; n < 64; ++n) {
    c.as_64 = 100 + static_cast<DAT_UINT64>(n);
    if ((rc = dat_ep_post_rdma_read(e.ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG)) != DAT_SUCCESS) break;
  }
  if (n != 16 || !is(rc, DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP)) return nicsim_log("%d requests", n), 1;
  for (int i = 0; i < n; ++i)
    if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 100 + static_cast<DAT_UINT64>(i))) return 1;
  return 0;
}

// The EP's message size limit: 100 bytes (set before connecting).
int limit_message_size(dt_ep& e) {
  DAT_EP_PARAM p{};
  p.ep_attr = ep_default_attr();
  p.ep_attr.max_mtu_size = 100;
  DT_CHECK(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &p));
  return 0;
}

int use_window(dt_ep& e) {
  DAT_EVENT ev{};
  sockaddr_in server{};
  dt_addr(&server, dt_node_ip(nicsim_workload_node(0)));
  if (limit_message_size(e) || !post(e, true, 1, 64)) return 1;
  DT_CHECK(dat_ep_connect(e.ep, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&server), kQual, 1000000, 0, nullptr,
                          DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
  if (dt_wait(e.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 1000000)) return 1;
  if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 1) || !post(e, true, 2, 64)) return 1;
  DAT_RMR_TRIPLET r{};
  std::memcpy(&r.rmr_context, dt_recv_area(&e), 4);
  std::memcpy(&r.target_address, dt_recv_area(&e) + 4, 8);
  r.segment_length = kLen;
  if (connected_bad_calls(e, r) || request_limit(e, r)) return 1;
  DAT_LMR_TRIPLET l = dt_iov(&e, dt_rdma_area(&e), kLen);
  DAT_DTO_COOKIE c{};
  c.as_64 = 10;
  DT_CHECK(dat_ep_post_rdma_read(e.ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
  if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 10)) return nicsim_log("RR through the window"), 1;
  for (int j = 0; j < kLen; ++j)
    if (dt_rdma_area(&e)[j] != server_byte(kOff + j)) return nicsim_log("RR byte %d", j), 1;
  for (int round = 1; round <= 2; ++round) {
    for (int j = 0; j < kLen; ++j) dt_rdma_area(&e)[j] = client_byte(j, round);
    c.as_64 = 10 + static_cast<DAT_UINT64>(round);
    DT_CHECK(dat_ep_post_rdma_write(e.ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
    if (round == 2) {
      // The window moved: the context is stale, the server's HCA refuses it.
      if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_ERR_REMOTE_ACCESS, 12)) return nicsim_log("stale"), 1;
      break;
    }
    if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 11) || !post(e, false, 3, 1) ||
        !completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 3))
      return nicsim_log("RW through the window"), 1;
    if (!completion(e, DAT_DTO_COMPLETION_EVENT, DAT_DTO_SUCCESS, 2)) return nicsim_log("rebound"), 1;
  }
  nicsim_barrier();
  DT_CHECK(dat_ep_disconnect(e.ep, DAT_CLOSE_ABRUPT_FLAG));
  if (dt_wait(e.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, 1000000)) return 1;
  if (!is(dat_ep_post_rdma_write(e.ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE,
          DAT_INVALID_STATE_EP_DISCONNECTED) ||
      !is(dat_ep_connect(e.ep, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&server), kQual, 10, 0, nullptr,
                         DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
          DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCONNECTED))
    return nicsim_log("a disconnected EP's bad calls"), 1;
  return 0;
}

int rmr_main(int, char**) {
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL, cr_evd = DAT_HANDLE_NULL;
  DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
  DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
  dt_ep e{};
  char ib0[] = "ib0";
  const bool server = nicsim_workload_rank() == 0;
  DT_CHECK(dat_ia_open(ib0, 8, &async, &ia));
  DT_CHECK(dat_pz_create(ia, &pz));
  if (dt_ep_open(ia, pz, &e, 256, 1)) return 1;
  if (server) {
    DT_CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd));
    DT_CHECK(dat_psp_create(ia, kQual, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
  }
  nicsim_barrier();
  if (server ? serve(pz, e, cr_evd) : use_window(e)) return 1;
  if (server) {
    DT_CHECK(dat_psp_free(psp));
    DT_CHECK(dat_evd_free(cr_evd));
  }
  if (dt_ep_close(&e)) return 1;
  DT_CHECK(dat_pz_free(pz));
  DT_CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
  nicsim_result("rmr_ok", 1, "");
  return 0;
}

const int registered = nicsim_register_program("dapl_rmr_window", rmr_main, "RDMA through a bound RMR");

TEST(DaplRmr, RdmaThroughABoundWindowAndAStaleContextIsRefused) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 1; i < w.num_nodes(); ++i) {
      Node* n = Node::of(w.node(i).host());
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
    }
  };
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_rmr_window\" nodes: \"h1\" nodes: \"h2\" }\n",
      o);
  EXPECT_EQ(r.results.at("rmr_ok"), 1);
}

}  // namespace
}  // namespace nicsim::dapl
