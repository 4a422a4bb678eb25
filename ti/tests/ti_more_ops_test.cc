// The same consumer over Elan and over IB: receives of three buffers,
// RDMA writes with OOB data (the data's receive completes after the bytes
// are in place, in order with the messages around it), and atomics (one
// at a time, and sixteen fetch-adds in flight at once on one word), every
// payload byte checked where it lands. After each, no TI object is left.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "sim/tests/world_run.h"
#include "ti/elan/ti_elan.h"
#include "ti/ib/ti_ib.h"
#include "ti/tests/ti_peer.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 5800;
constexpr std::uint32_t kBufs[3] = {100, 1000, 3000};  // a receive element's buffers
constexpr std::uint32_t kMsgSizes[3] = {4100, 1500, 50};
constexpr std::uint32_t kRegion = 131072, kWrite1 = 20000, kWrite2 = 70000;
constexpr std::uint32_t kWord = kRegion - 16, kCounter = kRegion - 8;  // the atomics' words
constexpr std::uint32_t kOob1 = 0xabcd0001u, kOob2 = 0xabcd0002u;
constexpr int kConcurrentAdds = 16;

ti_ops_t* (*g_load)(void) = nullptr;

// What the server saw, and what the client's atomics returned.
struct Seen {
  int multi_ok = 0, oob_in_place = 0, order_ok = 0;
  std::uint64_t fetch_add_old = 0, cas_old = 0, cas_miss_old = 0, word = 0, counter = 0;
  std::uint32_t add_olds = 0;  // bit k: some fetch-add of the sixteen saw k
  int atomics_ok = 0, rdma_ok = 0, bad_op = TI_SUCCESS, bad_align = TI_SUCCESS, bad_null = TI_SUCCESS;
  ti_status_t held = TI_NO_STATUS;  // msg_send of the message behind the first write
};
Seen g_seen;
Peer g_srv, g_cli;
ti_res_pool_handle_t g_multi = nullptr;  // the server's receive pool, three buffers an element
unsigned char* g_region = nullptr;
ElementQueue g_rdma;

// The order the server's receives must complete in: the three messages,
// the first write's OOB data, a message, the second write's OOB data, its
// bundled message.
struct Expect {
  std::uint32_t bytes;
  bool oob;
  std::uint32_t oob_data;
  int seed;
};
constexpr Expect kOrder[] = {{4100, false, 0, 0}, {1500, false, 0, 1}, {50, false, 0, 2}, {0, true, kOob1, 0},
                             {300, false, 0, 3},  {0, true, kOob2, 0}, {8, false, 0, 4}};
constexpr int kExpected = sizeof kOrder / sizeof kOrder[0];

bool region_holds(std::uint32_t off, std::uint32_t len, int seed) {
  for (std::uint32_t i = 0; i < len; ++i)
    if (g_region[off + i] != pattern(seed, i)) return false;
  return true;
}

// The bytes of a message, in the element's buffers in order.
bool scattered_ok(const ti_data_element_t* e, std::uint32_t len, int seed) {
  std::uint32_t off = 0;
  for (std::uint32_t b = 0; b < e->num_io_bufs && off < len; ++b)
    for (std::uint32_t i = 0; i < e->local_data_desc[b].byte_count && off < len; ++i, ++off)
      if (static_cast<const unsigned char*>(e->local_data_desc[b].vaddr)[i] != pattern(seed, off)) return false;
  return off == len;
}

// Interrupt context: the OOB data's receive finds the write's bytes in place.
void srv_recv(ti_cq_handle_t, ti_data_element_t* list) {
  int k = g_srv.received.count;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg, ++k) {
    if (e->status != TI_SUCCESS || k >= kExpected) continue;
    const Expect& x = kOrder[k];
    const bool oob = e->oob_data_len == 4;
    if (oob != x.oob || e->recv_byte_count != x.bytes || (oob && e->oob_data != x.oob_data)) continue;
    ++g_seen.order_ok;
    if (oob)
      g_seen.oob_in_place += x.oob_data == kOob1 ? region_holds(0, kWrite1, 21) : region_holds(kWrite1, kWrite2, 22);
    else
      g_seen.multi_ok += scattered_ok(e, x.bytes, x.seed);
  }
  g_srv.received.add_list(list);
}
void srv_sent(ti_cq_handle_t, ti_data_element_t* l) { g_srv.sent.add_list(l); }
void cli_sent(ti_cq_handle_t, ti_data_element_t* l) { g_cli.sent.add_list(l); }
void cli_recv(ti_cq_handle_t, ti_data_element_t* l) { g_cli.received.add_list(l); }
void cli_rdma(ti_cq_handle_t, ti_data_element_t* l) { g_rdma.add_list(l); }

ti_data_element_t* multi_get(std::uint32_t n) {
  ti_pool_response_t r{};
  EXPECT_EQ(g_srv.ops->res_pool_get(g_multi, n, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  return r.p_element_list;
}

int more_server() {
  Peer& p = g_srv;
  peer_open(p, nicsim_workload_node(1), kPort, 4, 256, 0, g_load);
  std::uint32_t sizes[3] = {kBufs[0], kBufs[1], kBufs[2]};
  if (p.ops->res_pool_create(p.ti, TI_RES_POOL_MSG, 12, 3, sizes, 0, &g_multi) != TI_SUCCESS) return 1;
  g_region = static_cast<unsigned char*>(nicsim_alloc(kRegion, 64));
  const std::uint64_t five = 5, zero = 0;
  std::memcpy(g_region + kWord, &five, 8);
  std::memcpy(g_region + kCounter, &zero, 8);
  ti_rdma_desc_t desc{};
  ti_mem_handle_t mem = nullptr;
  if (p.ops->reg_virt_mem(p.ti, p.pd, g_region, kRegion, TI_MEM_READ_WRITE, &desc, &mem) != TI_SUCCESS) return 1;
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(p, peer_keep_request, false);
  if (p.ops->listen(p.ti, &attr, &info, nullptr, &p.listen_conn) != TI_SUCCESS) return 1;
  nicsim_barrier();
  if (!wait_until(p.requests, 1)) return 1;
  p.req.private_data = &desc;  // the reply names the region
  p.req.private_data_len = sizeof desc;
  ti_comp_info_t comp = peer_comp(p, srv_sent, srv_recv);
  if (p.ops->accept(&p.req, 0, &comp, multi_get(12)) != TI_SUCCESS) return 1;
  p.conn = p.req.conn_handle;
  nicsim_barrier();  // the client is done
  std::memcpy(&g_seen.word, g_region + kWord, 8);
  std::memcpy(&g_seen.counter, g_region + kCounter, 8);
  wait_for([&] { return p.errors > 0; });  // the client disconnected
  wait_until(p.received.count, 12);
  for (int k = 0; k < p.received.count && k < 256; ++k)
    EXPECT_EQ(p.ops->res_pool_put(g_multi, p.received.items[k]), TI_SUCCESS);
  p.received.count = 0;
  p.ops->disconnect(p.conn, peer_counted, const_cast<int*>(&p.disconnected));
  wait_until(p.disconnected, 1);
  p.ops->disconnect(p.listen_conn, nullptr, nullptr);
  p.ops->dereg_mem(mem);
  peer_close(p);
  nicsim_free(g_region);
  return 0;
}

// Accepts the reply, then counts it (the client goes on once accepted).
void client_reply(ti_conn_request_t* r) {
  if (r->cb_type == CN_REPLY) {
    ti_comp_info_t comp = peer_comp(g_cli, cli_sent, cli_recv);
    comp.pfn_rdma_cb = cli_rdma;
    ti_pool_response_t pr{};
    g_cli.ops->res_pool_get(g_cli.pool, 2, FALSE, nullptr, nullptr, nullptr, &pr);
    EXPECT_EQ(g_cli.ops->accept(r, 0, &comp, pr.p_element_list), TI_SUCCESS);
  }
  peer_keep_request(r);
}

ti_data_element_t* message(Peer& p, std::uint32_t len, int seed) {
  ti_data_element_t* m = peer_get(p, 1);
  for (std::uint32_t i = 0; i < len; ++i)
    static_cast<unsigned char*>(m->local_data_desc[0].vaddr)[i] = pattern(seed, i);
  m->local_data_desc[0].byte_count = len;
  return m;
}

// An RDMA element of the consumer's registered memory.
ti_data_element_t* rdma_element(ti_res_pool_handle_t pool, unsigned char* local, const ti_rdma_desc_t& mine,
                                std::uint32_t len, std::uint64_t remote, std::uint32_t rkey) {
  ti_pool_response_t r{};
  EXPECT_EQ(g_cli.ops->res_pool_get(pool, 1, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  ti_data_element_t* e = r.p_element_list;
  TI_RDMA_LOCAL_DESC(e)[0] = ti_local_data_desc_t{};
  TI_RDMA_LOCAL_DESC(e)[0].vaddr = local;
  TI_RDMA_LOCAL_DESC(e)[0].byte_count = len;
  TI_RDMA_LOCAL_DESC(e)[0].lkey = mine.rkey;
  e->rdma_data_desc[0].vaddr = remote;
  e->rdma_data_desc[0].rkey = rkey;
  e->num_io_bufs = 1;
  return e;
}

// Writes with OOB data: the first alone, then a message; the second with
// its bundled message.
void writes(Peer& p, const ti_rdma_desc_t& region) {
  auto* local = static_cast<unsigned char*>(nicsim_alloc(kWrite1 + kWrite2, 64));
  for (std::uint32_t i = 0; i < kWrite1; ++i) local[i] = pattern(21, i);
  for (std::uint32_t i = 0; i < kWrite2; ++i) local[kWrite1 + i] = pattern(22, i);
  ti_rdma_desc_t mine{};
  ti_mem_handle_t mem = nullptr;
  ASSERT_EQ(p.ops->reg_virt_mem(p.ti, p.pd, local, kWrite1 + kWrite2, TI_MEM_READ_WRITE, &mine, &mem), TI_SUCCESS);
  ti_res_pool_handle_t pool = nullptr;
  std::uint32_t none = 0;
  ASSERT_EQ(p.ops->res_pool_create(p.ti, TI_RES_POOL_RDMA, 2, 1, &none, 0, &pool), TI_SUCCESS);
  ti_data_element_t* w1 = rdma_element(pool, local, mine, kWrite1, region.vaddr, region.rkey);
  w1->oob_data_len = 4;
  w1->oob_data = kOob1;
  ASSERT_EQ(p.ops->rdma_write(p.conn, w1), TI_SUCCESS);
  // Over Elan the message waits for the write's OOB data (TI_PENDING).
  g_seen.held = p.ops->msg_send(p.conn, message(p, 300, 3));
  ASSERT_TRUE(g_seen.held == TI_SUCCESS || g_seen.held == TI_PENDING) << g_seen.held;
  ti_data_element_t* w2 = rdma_element(pool, local + kWrite1, mine, kWrite2, region.vaddr + kWrite1, region.rkey);
  w2->oob_data_len = 4;
  w2->oob_data = kOob2;
  ASSERT_EQ(p.ops->rdma_write_send(p.conn, w2, message(p, 8, 4)), TI_SUCCESS);
  ASSERT_TRUE(wait_until(g_rdma.count, 2));
  for (int k = 0; k < 2; ++k) g_seen.rdma_ok += g_rdma.items[k]->status == TI_SUCCESS;
  for (int k = 0; k < 2; ++k) EXPECT_EQ(p.ops->res_pool_put(pool, g_rdma.items[k]), TI_SUCCESS);
  g_rdma.count = 0;
  EXPECT_EQ(p.ops->res_pool_destroy(pool), TI_SUCCESS);
  EXPECT_EQ(p.ops->dereg_mem(mem), TI_SUCCESS);
  nicsim_free(local);
}

// One atomic on the word; returns the former value.
std::uint64_t atomic(Peer& p, ti_res_pool_handle_t pool, ti_atomic_op_t op, std::uint64_t a, std::uint64_t b,
                     const ti_rdma_desc_t& region, std::uint32_t off) {
  ti_pool_response_t r{};
  EXPECT_EQ(p.ops->res_pool_get(pool, 1, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  ti_data_element_t* e = r.p_element_list;
  const std::uint64_t operands[2] = {a, b};
  std::memcpy(TI_RDMA_LOCAL_DESC(e)[0].vaddr, operands, 16);
  e->rdma_data_desc[0] = {region.vaddr + off, region.rkey};
  const int before = g_rdma.count;
  EXPECT_EQ(p.ops->atomic_op(p.conn, op, e), TI_SUCCESS);
  EXPECT_TRUE(wait_until(g_rdma.count, before + 1));
  g_seen.atomics_ok += e->status == TI_SUCCESS;
  std::uint64_t old = 0;
  std::memcpy(&old, TI_RDMA_LOCAL_DESC(e)[0].vaddr, 8);
  EXPECT_EQ(p.ops->res_pool_put(pool, e), TI_SUCCESS);
  g_rdma.count = before;
  return old;
}

void atomics(Peer& p, const ti_rdma_desc_t& region) {
  ti_res_pool_handle_t pool = nullptr;
  std::uint32_t size = 16;
  ASSERT_EQ(p.ops->res_pool_create(p.ti, TI_RES_POOL_RDMA, kConcurrentAdds, 1, &size, 0, &pool), TI_SUCCESS);
  g_seen.fetch_add_old = atomic(p, pool, TI_ATOMIC_FETCH_ADD, 3, 0, region, kWord);     // 5 -> 8
  g_seen.cas_old = atomic(p, pool, TI_ATOMIC_COMPARE_SWAP, 8, 42, region, kWord);       // 8 -> 42
  g_seen.cas_miss_old = atomic(p, pool, TI_ATOMIC_COMPARE_SWAP, 7, 99, region, kWord);  // stays 42
  // Bad input: the seed's code, nothing sent.
  ti_pool_response_t r{};
  ASSERT_EQ(p.ops->res_pool_get(pool, kConcurrentAdds, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  ti_data_element_t* elements[kConcurrentAdds];
  ti_data_element_t* list = r.p_element_list;
  for (int k = 0; k < kConcurrentAdds; ++k, list = list->p_next_msg) elements[k] = list;
  for (ti_data_element_t* e : elements) e->p_next_msg = nullptr;
  elements[0]->rdma_data_desc[0] = {region.vaddr + kWord + 4, region.rkey};
  g_seen.bad_align = p.ops->atomic_op(p.conn, TI_ATOMIC_FETCH_ADD, elements[0]);
  g_seen.bad_op = p.ops->atomic_op(p.conn, static_cast<ti_atomic_op_t>(7), elements[0]);
  g_seen.bad_null = p.ops->atomic_op(p.conn, TI_ATOMIC_FETCH_ADD, nullptr);
  // Sixteen fetch-adds of 1 in flight at once: each sees a different value.
  for (ti_data_element_t* e : elements) {
    const std::uint64_t operands[2] = {1, 0};
    std::memcpy(TI_RDMA_LOCAL_DESC(e)[0].vaddr, operands, 16);
    e->rdma_data_desc[0] = {region.vaddr + kCounter, region.rkey};
  }
  for (ti_data_element_t* e : elements) EXPECT_EQ(p.ops->atomic_op(p.conn, TI_ATOMIC_FETCH_ADD, e), TI_SUCCESS);
  ASSERT_TRUE(wait_until(g_rdma.count, kConcurrentAdds));
  for (ti_data_element_t* e : elements) {
    std::uint64_t old = 0;
    std::memcpy(&old, TI_RDMA_LOCAL_DESC(e)[0].vaddr, 8);
    if (e->status == TI_SUCCESS && old < 32) g_seen.add_olds |= 1u << old;
    EXPECT_EQ(p.ops->res_pool_put(pool, e), TI_SUCCESS);
  }
  g_rdma.count = 0;
  EXPECT_EQ(p.ops->res_pool_destroy(pool), TI_SUCCESS);
}

int more_client() {
  Peer& p = g_cli;
  peer_open(p, nicsim_workload_node(0), kPort, 8, 8192, 0, g_load);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(p, client_reply, true);
  nicsim_barrier();
  static ti_conn_request_t req;  // the provider fills it at the reply
  if (p.ops->connect(p.ti, &attr, &info, &req, &p.conn) != TI_SUCCESS || !wait_until(p.replies, 1)) return 1;
  ti_rdma_desc_t region{};
  std::memcpy(&region, p.req_private, sizeof region);
  ti_data_element_t* chain = nullptr;  // three messages, into three, two and one of the server's buffers
  for (int k = 2; k >= 0; --k) {
    ti_data_element_t* m = message(p, kMsgSizes[k], k);
    m->p_next_msg = chain;
    chain = m;
  }
  const ti_status_t sent = p.ops->msg_send(p.conn, chain);
  EXPECT_TRUE(sent == TI_SUCCESS || sent == TI_PENDING) << sent;
  writes(p, region);
  atomics(p, region);
  wait_until(p.sent.count, 5);
  p.ops->disconnect(p.conn, peer_counted, const_cast<int*>(&p.disconnected));
  wait_until(p.disconnected, 1);
  wait_until(p.received.count, 2);
  nicsim_barrier();
  peer_put_all(p, p.received);
  peer_put_all(p, p.sent);
  peer_close(p);
  return 0;
}

int more_probe(int, char**) { return nicsim_workload_rank() == 0 ? more_server() : more_client(); }
const BuiltinProgram reg_more("ti_more_ops_probe", more_probe,
                              "test: multi-buffer receives, RDMA writes with OOB data, atomics");

void expect_all() {
  EXPECT_EQ(g_seen.order_ok, kExpected) << "the receives, in order, with their sizes and OOB data";
  EXPECT_EQ(g_seen.multi_ok, 5) << "the messages' bytes, scattered over the buffers";
  EXPECT_EQ(g_seen.oob_in_place, 2) << "each write's bytes in place when its OOB data came";
  EXPECT_EQ(g_seen.rdma_ok, 2);
  EXPECT_EQ(g_seen.fetch_add_old, 5u);
  EXPECT_EQ(g_seen.cas_old, 8u);
  EXPECT_EQ(g_seen.cas_miss_old, 42u);
  EXPECT_EQ(g_seen.atomics_ok, 3);
  EXPECT_EQ(g_seen.word, 42u);
  EXPECT_EQ(g_seen.counter, static_cast<std::uint64_t>(kConcurrentAdds));
  EXPECT_EQ(g_seen.add_olds, (1u << kConcurrentAdds) - 1) << "every fetch-add saw a different value";
  EXPECT_EQ(g_seen.bad_align, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_seen.bad_op, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_seen.bad_null, TI_INVALID_PARAMETER);
}

TEST(TiElan, MultiBufferReceivesRdmaWriteOobAndAtomicsEveryByteChecked) {
  g_load = ti_elan_transport_load;
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
      if (ti_elan::ElanTiNode* n = ti_elan::node_if_started(w.node(i).host())) {
        EXPECT_EQ(n->counters().objects, 0u) << w.node(i).name();
        EXPECT_EQ(n->counters().conns, 0u) << w.node(i).name();
      }
  };
  nicsim::testing::run_text(
      "seed: 1\ntopology { elite_fat_tree { nodes: 2 } node_param { key: \"bus.profile\" value: \"pci-66\" } }\n"
      "link_defaults { delay: \"10ns\" }\n"
      "workload { program: \"ti_more_ops_probe\" nodes: \"h0\" nodes: \"h1\" }\n",
      o);
  expect_all();
  EXPECT_EQ(g_seen.held, TI_PENDING) << "the message waits for the write's OOB data";
}

TEST(Ti, MultiBufferReceivesRdmaWriteOobAndAtomicsEveryByteChecked) {
  g_load = ti_ib_transport_load;
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
      if (TiNode* n = node_if_started(w.node(i).host())) {
        EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
      }
  };
  nicsim::testing::run_text(scenario(3, "ti_more_ops_probe", "nodes: \"h1\" nodes: \"h2\""), o);
  expect_all();
}

}  // namespace
}  // namespace nicsim::ti
