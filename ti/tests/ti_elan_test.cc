// The TI over Elan Kernel Comms: the same SDP sockets and programs as over
// IB, every byte checked where it lands; the provider's operations between
// two Elan nodes (messages of several buffers, RDMA write and read, a bad
// key); bad handles and unestablished connections get the seed's codes.
// After each, no TI object is left on either node.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "sim/tests/scenario_figures.h"
#include "sim/tests/world_run.h"
#include "ti/elan/ti_elan.h"
#include "ti/sdp/sdp.h"
#include "ti/tests/ti_peer.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

std::string elan_scenario(const std::string& program, const std::string& args = "") {
  return "seed: 1\ntopology { elite_fat_tree { nodes: 2 } node_param { key: \"bus.profile\" value: \"pci-66\" } }\n"
         "link_defaults { delay: \"10ns\" }\n"
         "workload { program: \"" +
         program + "\" nodes: \"h0\" nodes: \"h1\"" + args + " }\n";
}

void elan_leak_check(World& w) {
  for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
    if (ti_elan::ElanTiNode* n = ti_elan::node_if_started(w.node(i).host())) {
      EXPECT_EQ(n->counters().objects, 0u) << w.node(i).name();
      EXPECT_EQ(n->counters().conns, 0u) << w.node(i).name();
      EXPECT_EQ(n->counters().services, 0u) << w.node(i).name();
    }
}

// ---- SDP sockets over either transport, from the same code ---------------------

constexpr std::size_t kSmall = 3000, kLarge = 100000;  // copied; zero-copy (64 KiB threshold)

struct SdpSeen {
  std::string transport;
  std::size_t received = 0, wrong = 0;
  std::uint32_t zcopy = 0;
  bool ok = false;
};
SdpSeen g_sdp[2];

void sdp_exchange(sdp_sock* s, int rank, SdpSeen& seen) {
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(kLarge, 64));
  for (const std::size_t len : {kSmall, kLarge}) {
    if (rank == 1) {
      for (std::size_t i = 0; i < len; ++i) buf[i] = pattern(static_cast<int>(len), i);
      ASSERT_EQ(sdp_send(s, buf, len), 0);
      continue;
    }
    std::size_t got = 0;
    while (got < len) {
      const long n = sdp_recv(s, buf + got, len - got);
      ASSERT_GT(n, 0);
      for (long i = 0; i < n; ++i)
        seen.wrong += buf[got + i] != pattern(static_cast<int>(len), got + static_cast<std::size_t>(i));
      got += static_cast<std::size_t>(n);
    }
    seen.received += got;
  }
  nicsim_free(buf);
}

int sdp_either(int, char**) {
  const std::uint32_t rank = nicsim_workload_rank();
  SdpSeen& seen = g_sdp[rank];
  sdp_sock* s = nullptr;
  if (rank == 0) {
    s = sdp_accept(5600);
  } else {
    nicsim_barrier();
    s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, 5600);
  }
  if (!s) return 1;
  seen.transport = sdp_transport()->transport_name;
  sdp_exchange(s, static_cast<int>(rank), seen);
  seen.zcopy = sdp_messages_sent(s, 0xfd) + sdp_messages_sent(s, 0xfe) + sdp_messages_received(s, 0xfd) +
               sdp_messages_received(s, 0xfe);
  nicsim_barrier();
  seen.ok = sdp_close(s) == 0;
  return 0;
}
const BuiltinProgram reg_either("sdp_either_transport", sdp_either,
                                "test: one SDP connection, copied and zero-copy bytes, on the node's transport");

void expect_sdp(const char* transport) {
  EXPECT_NE(g_sdp[0].transport.find(transport), std::string::npos) << g_sdp[0].transport;
  EXPECT_EQ(g_sdp[1].transport, g_sdp[0].transport);
  EXPECT_EQ(g_sdp[0].received, kSmall + kLarge);
  EXPECT_EQ(g_sdp[0].wrong, 0u);
  EXPECT_GT(g_sdp[0].zcopy, 0u) << "the large send moved by RDMA";
  EXPECT_TRUE(g_sdp[0].ok);
  EXPECT_TRUE(g_sdp[1].ok);
}

// The same program on Elan nodes and on IB nodes: the node's NIC decides
// the transport SDP loads.
TEST(TiElan, SdpOverElanEveryByteChecked) {
  nicsim::testing::RunOptions o;
  o.inspect = elan_leak_check;
  nicsim::testing::run_text(elan_scenario("sdp_either_transport"), o);
  expect_sdp("Elan3");
}

TEST(TiElan, SameSdpProgramOverIbEveryByteChecked) {
  nicsim::testing::run_text(scenario(3, "sdp_either_transport", "nodes: \"h1\" nodes: \"h2\""));
  expect_sdp("InfiniBand");
}

TEST(TiElan, PingpongScenarioOverElanEveryByteChecked) {
  const auto r = nicsim::testing::scenario_results("sdp_pingpong_elan.textproto");
  EXPECT_EQ(r.at("bytes_ok"), 2.0 * 20 * (1 + 64 + 1024 + 4096 + 16384 + 65536));
  // The figures docs/ti.md and the README quote (half round trips, ns).
  const std::vector<std::pair<const char*, double>> want = {
      {"sdp_pingpong_1_ns", 16518.6}, {"sdp_pingpong_1024_ns", 24052.5}, {"sdp_pingpong_65536_ns", 242067}};
  for (const auto& [name, value] : want) EXPECT_NEAR(r.at(name), value, 0.5) << name;
}

TEST(TiElan, StreamScenarioOverElanEveryByteChecked) {
  const auto r = nicsim::testing::scenario_results("sdp_stream_elan.textproto");
  EXPECT_EQ(r.at("bytes_ok"), 5.0 * 2 * 4194304);
  EXPECT_GT(r.at("zcopy_msgs"), 0);
  EXPECT_NEAR(r.at("sdp_stream_1048576_MBps"), 316.235, 0.01);
}

// ---- the provider's operations between two Elan nodes ----------------------------

constexpr ti_port_t kPort = 5700;
constexpr std::uint32_t kRegion = 16384, kMsg = 2048;

struct OpsSeen {
  ti_status_t early_send = TI_SUCCESS, bad_addr = TI_SUCCESS, atomic = TI_SUCCESS, empty_poll = TI_SUCCESS;
  ti_status_t bad_level = TI_SUCCESS, invented_send = TI_SUCCESS, invented_pd = TI_SUCCESS, null_ti = TI_SUCCESS,
              foreign_put = TI_SUCCESS;
  ti_status_t write = TI_NO_STATUS, read = TI_NO_STATUS, bad_key = TI_NO_STATUS, bad_atomic_key = TI_NO_STATUS;
  std::string req_private, rep_private;
  std::size_t msgs_ok = 0, region_wrong = 0, read_wrong = 0;
  int canceled_recvs = 0, peer_error = TI_SUCCESS;
};
OpsSeen g_ops;
Peer g_srv, g_cli;
ElementQueue g_rdma_done;

void on_sent(ti_cq_handle_t, ti_data_element_t* l) { g_cli.sent.add_list(l); }
void on_rdma(ti_cq_handle_t, ti_data_element_t* l) { g_rdma_done.add_list(l); }
void srv_recv(ti_cq_handle_t, ti_data_element_t* l) { g_srv.received.add_list(l); }
void srv_sent(ti_cq_handle_t, ti_data_element_t* l) { g_srv.sent.add_list(l); }
void cli_recv(ti_cq_handle_t, ti_data_element_t* l) { g_cli.received.add_list(l); }

void fill(ti_data_element_t* e, int seed, std::uint32_t len) {
  auto* p = static_cast<unsigned char*>(e->local_data_desc[0].vaddr);
  for (std::uint32_t i = 0; i < len; ++i) p[i] = pattern(seed, i);
  e->local_data_desc[0].byte_count = len;
}

// The server: listens, accepts with private data, takes three messages and
// the region's description, lets the client write and read its region.
int ops_server() {
  Peer& p = g_srv;
  peer_open(p, 1, kPort, 8, kMsg, 0, ti_elan_transport_load);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(p, peer_keep_request, false);
  if (p.ops->listen(p.ti, &attr, &info, nullptr, &p.listen_conn) != TI_SUCCESS) return 1;
  nicsim_barrier();
  if (!wait_until(p.requests, 1)) return 1;
  g_ops.req_private.assign(static_cast<const char*>(p.req.private_data), p.req.private_data_len);
  static char reply[] = "welcome to elan";
  p.req.private_data = reply;
  p.req.private_data_len = sizeof reply;
  ti_comp_info_t comp = peer_comp(p, srv_sent, srv_recv);
  if (p.ops->accept(&p.req, 0, &comp, peer_get(p, 6)) != TI_SUCCESS) return 1;
  p.conn = p.req.conn_handle;
  auto* region = static_cast<unsigned char*>(nicsim_alloc(kRegion, 64));
  for (std::uint32_t i = 0; i < kRegion; ++i) region[i] = pattern(9, i);
  ti_rdma_desc_t desc{};
  ti_mem_handle_t mem = nullptr;
  if (p.ops->reg_virt_mem(p.ti, p.pd, region, kRegion, TI_MEM_READ_WRITE, &desc, &mem) != TI_SUCCESS) return 1;
  ti_data_element_t* m = peer_get(p, 1);
  std::memcpy(m->local_data_desc[0].vaddr, &desc, sizeof desc);
  m->local_data_desc[0].byte_count = sizeof desc;
  if (p.ops->msg_send(p.conn, m) != TI_SUCCESS) return 1;
  if (!wait_until(p.received.count, 3)) return 1;
  for (int k = 0; k < 3; ++k) {
    const ti_data_element_t* e = p.received.items[k];
    bool ok = e->status == TI_SUCCESS && e->recv_byte_count == kMsg - 100 * k &&
              e->oob_data_len == (k == 1 ? 4u : 0u) && (k != 1 || e->oob_data == 0xfeedf00du);
    for (std::uint32_t i = 0; ok && i < e->recv_byte_count; ++i)
      ok = static_cast<unsigned char*>(e->local_data_desc[0].vaddr)[i] == pattern(k, i);
    g_ops.msgs_ok += ok;
  }
  nicsim_barrier();  // the client wrote the region's first half and read its second
  for (std::uint32_t i = 0; i < kRegion / 2; ++i) g_ops.region_wrong += region[i] != pattern(5, i);
  nicsim_barrier();  // the client disconnected
  wait_for([&] { return p.errors > 0; });
  g_ops.peer_error = p.error_code;
  for (int k = 3; k < p.received.count && k < 256; ++k)
    g_ops.canceled_recvs += p.received.items[k]->status == TI_CANCELED;
  p.ops->disconnect(p.conn, peer_counted, const_cast<int*>(&p.disconnected));
  wait_until(p.disconnected, 1);
  p.ops->disconnect(p.listen_conn, nullptr, nullptr);
  p.ops->dereg_mem(mem);
  peer_put_all(p, p.received);
  peer_put_all(p, p.sent);
  peer_close(p);
  nicsim_free(region);
  return 0;
}

// Bad input on the client's live objects: each a status, nothing changes.
void bad_input(Peer& p) {
  g_ops.null_ti = p.ops->create_ti(nullptr);
  g_ops.bad_level = p.ops->debug_svc(p.ti, static_cast<ti_debug_level_t>(7));
  g_ops.invented_pd = p.ops->create_pd(reinterpret_cast<ti_handle_t>(0x1234560), p.me, &p.pd);
  ti_data_element_t* e = peer_get(p, 1);
  g_ops.invented_send = p.ops->msg_send(reinterpret_cast<ti_conn_handle_t>(0x777), e);
  ti_data_element_t stranger{};
  g_ops.foreign_put = p.ops->res_pool_put(p.pool, &stranger);
  ti_data_element_t* got = nullptr;
  g_ops.empty_poll = p.ops->poll_cq(p.cq, &got);
  p.ops->res_pool_put(p.pool, e);
}

// RDMA write of the region's first half, read of its second half, and a
// read with a key the server never gave.
void rdma(Peer& p, const ti_rdma_desc_t& region) {
  auto* local = static_cast<unsigned char*>(nicsim_alloc(kRegion, 64));  // node memory: the Elan maps it
  for (std::uint32_t i = 0; i < kRegion / 2; ++i) local[i] = pattern(5, i);
  ti_rdma_desc_t mine{};
  ti_mem_handle_t mem = nullptr;
  ASSERT_EQ(p.ops->reg_virt_mem(p.ti, p.pd, local, kRegion, TI_MEM_READ_WRITE, &mine, &mem), TI_SUCCESS);
  ti_res_pool_handle_t pool = nullptr;
  std::uint32_t none = 0;
  ASSERT_EQ(p.ops->res_pool_create(p.ti, TI_RES_POOL_RDMA, 1, 1, &none, 0, &pool), TI_SUCCESS);
  ti_pool_response_t r{};
  ASSERT_EQ(p.ops->res_pool_get(pool, 1, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  ti_data_element_t* e = r.p_element_list;
  const struct {
    std::uint32_t offset;
    std::uint32_t key;
    bool write;
    ti_status_t* seen;
  } steps[] = {{0, region.rkey, true, &g_ops.write},
               {kRegion / 2, region.rkey, false, &g_ops.read},
               {0, region.rkey + 0x100000u, false, &g_ops.bad_key}};
  for (const auto& s : steps) {
    TI_RDMA_LOCAL_DESC(e)[0].vaddr = local + s.offset;
    TI_RDMA_LOCAL_DESC(e)[0].byte_count = kRegion / 2;
    e->rdma_data_desc[0].vaddr = region.vaddr + s.offset;
    e->rdma_data_desc[0].rkey = s.key;
    e->num_io_bufs = 1;
    const int before = g_rdma_done.count;
    ASSERT_EQ(s.write ? p.ops->rdma_write(p.conn, e) : p.ops->rdma_read(p.conn, e), TI_SUCCESS);
    ASSERT_TRUE(wait_until(g_rdma_done.count, before + 1));
    *s.seen = e->status;
  }
  for (std::uint32_t i = kRegion / 2; i < kRegion; ++i) g_ops.read_wrong += local[i] != pattern(9, i);
  // An atomic on a word of a key the server never gave: the server's
  // provider finds no region and answers a failure.
  TI_RDMA_LOCAL_DESC(e)[0].vaddr = local;
  TI_RDMA_LOCAL_DESC(e)[0].byte_count = 16;
  e->rdma_data_desc[0].vaddr = region.vaddr;
  e->rdma_data_desc[0].rkey = region.rkey + 0x100000u;
  const int before = g_rdma_done.count;
  ASSERT_EQ(p.ops->atomic_op(p.conn, TI_ATOMIC_FETCH_ADD, e), TI_SUCCESS);
  ASSERT_TRUE(wait_until(g_rdma_done.count, before + 1));
  g_ops.bad_atomic_key = e->status;
  g_rdma_done.count = 0;
  EXPECT_EQ(p.ops->res_pool_put(pool, e), TI_SUCCESS);
  EXPECT_EQ(p.ops->res_pool_destroy(pool), TI_SUCCESS);
  EXPECT_EQ(p.ops->dereg_mem(mem), TI_SUCCESS);
  nicsim_free(local);
}

int ops_client() {
  Peer& p = g_cli;
  peer_open(p, 0, kPort, 8, kMsg, 0, ti_elan_transport_load);
  bad_input(p);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(p, peer_keep_request, true);
  static char hello[] = "hello over the elite switch";
  info.private_data = hello;
  info.private_data_len = sizeof hello;
  ti_inet_addr_t nowhere{};
  SET_IPV4_ADDR(nowhere, 0x0a0000c8u);
  ti_endpoint_handle_t far = nullptr;
  ti_conn_handle_t none = nullptr;
  p.ops->create_endpoint(p.ti, &nowhere, kPort, &far);
  ti_conn_info_t far_info = info;
  far_info.dst_ep = far;
  g_ops.bad_addr = p.ops->connect(p.ti, &attr, &far_info, nullptr, &none);
  nicsim_barrier();
  if (p.ops->connect(p.ti, &attr, &info, nullptr, &p.conn) != TI_SUCCESS) return 1;
  ti_data_element_t* early = peer_get(p, 1);
  g_ops.early_send = p.ops->msg_send(p.conn, early);
  p.ops->res_pool_put(p.pool, early);
  if (!wait_until(p.replies, 1)) return 1;
  g_ops.rep_private.assign(static_cast<const char*>(p.req.private_data), p.req.private_data_len);
  ti_comp_info_t comp = peer_comp(p, on_sent, cli_recv);
  comp.pfn_rdma_cb = on_rdma;
  if (p.ops->accept(&p.req, 0, &comp, peer_get(p, 2)) != TI_SUCCESS) return 1;
  g_ops.atomic = p.ops->atomic_op(p.conn, TI_ATOMIC_FETCH_ADD, nullptr);
  ti_data_element_t* list = peer_get(p, 3);
  int k = 0;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg, ++k) fill(e, k, kMsg - 100 * k);
  list->p_next_msg->oob_data_len = 4;  // the second message carries OOB data
  list->p_next_msg->oob_data = 0xfeedf00du;
  if (p.ops->msg_send(p.conn, list) != TI_SUCCESS || !wait_until(p.received.count, 1)) return 1;
  ti_rdma_desc_t region{};
  std::memcpy(&region, p.received.items[0]->local_data_desc[0].vaddr, sizeof region);
  rdma(p, region);
  nicsim_barrier();
  p.ops->disconnect(p.conn, peer_counted, const_cast<int*>(&p.disconnected));
  wait_until(p.disconnected, 1);
  nicsim_barrier();
  wait_until(p.sent.count, 3);
  peer_put_all(p, p.received);
  peer_put_all(p, p.sent);
  peer_close(p);
  return 0;
}

int ops_probe(int, char**) { return nicsim_workload_rank() == 0 ? ops_server() : ops_client(); }
const BuiltinProgram reg_ops("ti_elan_ops_probe", ops_probe, "test: the TI operations between two Elan nodes");

TEST(TiElan, OperationsBetweenTwoElanNodesWithPayloadCheckedAndBadInputAsStatuses) {
  nicsim::testing::RunOptions o;
  o.inspect = elan_leak_check;
  nicsim::testing::run_text(elan_scenario("ti_elan_ops_probe"), o);
  EXPECT_EQ(g_ops.req_private, std::string("hello over the elite switch", 28));
  EXPECT_EQ(g_ops.rep_private, std::string("welcome to elan", 16));
  EXPECT_EQ(g_ops.msgs_ok, 3u) << "payloads, and the second's OOB data";
  EXPECT_EQ(g_ops.write, TI_SUCCESS);
  EXPECT_EQ(g_ops.region_wrong, 0u);
  EXPECT_EQ(g_ops.read, TI_SUCCESS);
  EXPECT_EQ(g_ops.read_wrong, 0u);
  EXPECT_EQ(g_ops.bad_key, TI_ERROR) << "a key the peer never gave moves nothing";
  EXPECT_EQ(g_ops.bad_atomic_key, TI_ERROR) << "nor does an atomic with it";
  EXPECT_EQ(g_ops.canceled_recvs, 3) << "the server's unused receives come back once";
  EXPECT_EQ(g_ops.peer_error, TI_CANCELED);
  // Bad input and unestablished connections: the seed's codes.
  EXPECT_EQ(g_ops.early_send, TI_INVALID_OPERATION);
  EXPECT_EQ(g_ops.bad_addr, TI_INVALID_ADDRESS);
  EXPECT_EQ(g_ops.atomic, TI_INVALID_PARAMETER);  // no element
  EXPECT_EQ(g_ops.null_ti, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_ops.bad_level, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_ops.invented_pd, TI_INVALID_HANDLE);
  EXPECT_EQ(g_ops.invented_send, TI_INVALID_HANDLE);
  EXPECT_EQ(g_ops.foreign_put, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_ops.empty_poll, TI_NOT_FOUND);
}

}  // namespace
}  // namespace nicsim::ti
