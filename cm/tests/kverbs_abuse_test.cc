// The kernel verbs (rdma/ib_verbs.h) against bad arguments, as one table
// of (call, argument class, answer): every verb with NULL, freed, wrong-type
// and another node's handles, out-of-range sizes, counts, ports and enum
// values, objects in use and QPs in the wrong state, and the verbs from
// interrupt context (a host timer, where completion handlers run). The
// header's conventions give the answers: -EINVAL for a bad argument or
// another node's handle, -EBUSY for an object in use, NULL from a create
// call. From interrupt context, polling, arming and posting work; what
// would issue an HCA command (and block) answers as for an object it cannot
// make or release now (NULL, -EBUSY, or -EINVAL for queries and modifies)
// without blocking and without a simulation error. After the rows, every
// object is still there and works, and nothing is left on either node.
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <rdma/ib_verbs.h>

#include "cm/kverbs/kverbs.h"
#include "core/sim.h"
#include "host/host.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/programs.h"

namespace nicsim::kverbs {
namespace {

constexpr int kNull = 1;  // a create call's answer NULL (an object made is destroyed, and answers 0)

struct Side {
  ib_device* dev = nullptr;
  ib_pd *pd = nullptr, *dead_pd = nullptr;
  ib_cq *cq = nullptr, *spare_cq = nullptr, *dead_cq = nullptr;
  ib_qp *rc = nullptr, *ud = nullptr, *dead_qp = nullptr, *init_qp = nullptr;  // rc in RESET, ud in RTS
  ib_mr *dma = nullptr, *mr = nullptr, *plain_mr = nullptr, *dead_mr = nullptr;
  ib_ah *ah = nullptr, *dead_ah = nullptr;
  ib_mw *mw = nullptr, *dead_mw = nullptr;
  unsigned char* buf = nullptr;  // node memory, 8 KiB: mr covers the first 4 KiB, plain_mr the second
  unsigned char junk[64] = {};   // never a handle
};
Side g_side[2];

struct Row {
  const char* call;
  const char* arg_class;
  int want;
  std::function<int()> fn;
};

struct Outcome {
  int rows = 0, irq_rows = 0;
  std::vector<std::string> wrong;
  bool irq_done = false, still_works = false;
};
Outcome g_out;

void run_rows(const std::vector<Row>& rows, int& count) {
  for (const Row& r : rows) {
    const std::size_t before = Sim::get().errors().all().size();
    const int got = r.fn();
    const bool reported = Sim::get().errors().all().size() > before;
    ++count;
    if (got != r.want || reported)
      g_out.wrong.push_back(std::string(r.call) + " with " + r.arg_class + ": got " + std::to_string(got) +
                            (reported ? " (and a simulation error)" : "") + ", want " + std::to_string(r.want));
  }
}

// A create call's answer as a row's: kNull for NULL; an object made is
// released at once (the row fails on 0).
template <class T>
int made(T* obj, int (*release)(T*)) {
  if (!obj) return kNull;
  release(obj);
  return 0;
}

template <class T>
T* as(void* p) {
  return reinterpret_cast<T*>(p);
}

ib_qp_init_attr qp_attr(ib_cq* scq, ib_cq* rcq, ib_qp_type type) {
  ib_qp_init_attr ia{};
  ia.send_cq = scq;
  ia.recv_cq = rcq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = type;
  return ia;
}

// A send on `qp`; on a UD QP, to QP 1 of the address `ah` names.
int post_send(ib_qp* qp, ib_sge* sge, int nsge, ib_wr_opcode op, ib_ah* ah = nullptr) {
  ib_send_wr wr{};
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = 1;
  wr.sg_list = sge;
  wr.num_sge = nsge;
  wr.opcode = op;
  ib_send_wr* bad = nullptr;
  return ib_post_send(qp, &wr, &bad);
}

int post_recv(ib_qp* qp, ib_sge* sge, int nsge) {
  ib_recv_wr wr{};
  wr.sg_list = sge;
  wr.num_sge = nsge;
  ib_recv_wr* bad = nullptr;
  return ib_post_recv(qp, &wr, &bad);
}

// The device, PD, AH and CQ verbs.
std::vector<Row> device_rows(Side& s, Side& o) {
  const int E = -EINVAL;
  return {
      {"ib_query_device", "NULL device", E,
       [] {
         ib_device_attr a{};
         return ib_query_device(nullptr, &a);
       }},
      {"ib_query_device", "NULL attributes", E, [&s] { return ib_query_device(s.dev, nullptr); }},
      {"ib_query_device", "other node's device", E,
       [&o] {
         ib_device_attr a{};
         return ib_query_device(o.dev, &a);
       }},
      {"ib_query_device", "a PD as device", E,
       [&s] {
         ib_device_attr a{};
         return ib_query_device(as<ib_device>(s.pd), &a);
       }},
      {"ib_query_port", "port 0", E,
       [&s] {
         ib_port_attr a{};
         return ib_query_port(s.dev, 0, &a);
       }},
      {"ib_query_port", "port 3", E,
       [&s] {
         ib_port_attr a{};
         return ib_query_port(s.dev, 3, &a);
       }},
      {"ib_query_port", "NULL attributes", E, [&s] { return ib_query_port(s.dev, 1, nullptr); }},
      {"ib_query_port", "other node's device", E,
       [&o] {
         ib_port_attr a{};
         return ib_query_port(o.dev, 1, &a);
       }},
      {"ib_query_gid", "index -1", E,
       [&s] {
         ib_gid g{};
         return ib_query_gid(s.dev, 1, -1, &g);
       }},
      {"ib_query_gid", "index 1", E,
       [&s] {
         ib_gid g{};
         return ib_query_gid(s.dev, 1, 1, &g);
       }},
      {"ib_query_gid", "port 9", E,
       [&s] {
         ib_gid g{};
         return ib_query_gid(s.dev, 9, 0, &g);
       }},
      {"ib_query_gid", "NULL gid", E, [&s] { return ib_query_gid(s.dev, 1, 0, nullptr); }},
      {"ib_query_gid", "other node's device", E,
       [&o] {
         ib_gid g{};
         return ib_query_gid(o.dev, 1, 0, &g);
       }},
      {"ib_alloc_pd", "NULL device", kNull, [] { return made(ib_alloc_pd(nullptr), ib_dealloc_pd); }},
      {"ib_alloc_pd", "other node's device", kNull, [&o] { return made(ib_alloc_pd(o.dev), ib_dealloc_pd); }},
      {"ib_alloc_pd", "a CQ as device", kNull, [&s] { return made(ib_alloc_pd(as<ib_device>(s.cq)), ib_dealloc_pd); }},
      {"ib_dealloc_pd", "NULL", E, [] { return ib_dealloc_pd(nullptr); }},
      {"ib_dealloc_pd", "freed", E, [&s] { return ib_dealloc_pd(s.dead_pd); }},
      {"ib_dealloc_pd", "a CQ", E, [&s] { return ib_dealloc_pd(as<ib_pd>(s.cq)); }},
      {"ib_dealloc_pd", "other node's", E, [&o] { return ib_dealloc_pd(o.pd); }},
      {"ib_dealloc_pd", "QPs, MRs, an AH and a window on it", -EBUSY, [&s] { return ib_dealloc_pd(s.pd); }},
      {"ib_create_ah", "NULL PD", kNull,
       [] {
         ib_ah_attr a{};
         a.port_num = 1;
         a.dlid = 1;
         return made(ib_create_ah(nullptr, &a), ib_destroy_ah);
       }},
      {"ib_create_ah", "freed PD", kNull,
       [&s] {
         ib_ah_attr a{};
         a.port_num = 1;
         a.dlid = 1;
         return made(ib_create_ah(s.dead_pd, &a), ib_destroy_ah);
       }},
      {"ib_create_ah", "other node's PD", kNull,
       [&o] {
         ib_ah_attr a{};
         a.port_num = 1;
         a.dlid = 1;
         return made(ib_create_ah(o.pd, &a), ib_destroy_ah);
       }},
      {"ib_create_ah", "NULL attributes", kNull, [&s] { return made(ib_create_ah(s.pd, nullptr), ib_destroy_ah); }},
      {"ib_create_ah", "port 3", kNull,
       [&s] {
         ib_ah_attr a{};
         a.port_num = 3;
         a.dlid = 1;
         return made(ib_create_ah(s.pd, &a), ib_destroy_ah);
       }},
      {"ib_destroy_ah", "NULL", E, [] { return ib_destroy_ah(nullptr); }},
      {"ib_destroy_ah", "freed", E, [&s] { return ib_destroy_ah(s.dead_ah); }},
      {"ib_destroy_ah", "a PD", E, [&s] { return ib_destroy_ah(as<ib_ah>(s.pd)); }},
      {"ib_destroy_ah", "other node's", E, [&o] { return ib_destroy_ah(o.ah); }},
      {"ib_create_cq", "NULL device", kNull,
       [] { return made(ib_create_cq(nullptr, nullptr, nullptr, nullptr, 8), ib_destroy_cq); }},
      {"ib_create_cq", "other node's device", kNull,
       [&o] { return made(ib_create_cq(o.dev, nullptr, nullptr, nullptr, 8), ib_destroy_cq); }},
      {"ib_create_cq", "0 entries", kNull,
       [&s] { return made(ib_create_cq(s.dev, nullptr, nullptr, nullptr, 0), ib_destroy_cq); }},
      {"ib_create_cq", "-1 entries", kNull,
       [&s] { return made(ib_create_cq(s.dev, nullptr, nullptr, nullptr, -1), ib_destroy_cq); }},
      {"ib_create_cq", "2^30 entries", kNull,
       [&s] { return made(ib_create_cq(s.dev, nullptr, nullptr, nullptr, 1 << 30), ib_destroy_cq); }},
      {"ib_destroy_cq", "NULL", E, [] { return ib_destroy_cq(nullptr); }},
      {"ib_destroy_cq", "freed", E, [&s] { return ib_destroy_cq(s.dead_cq); }},
      {"ib_destroy_cq", "a QP", E, [&s] { return ib_destroy_cq(as<ib_cq>(s.rc)); }},
      {"ib_destroy_cq", "other node's", E, [&o] { return ib_destroy_cq(o.cq); }},
      {"ib_destroy_cq", "QPs use it", -EBUSY, [&s] { return ib_destroy_cq(s.cq); }},
      {"ib_req_notify_cq", "NULL", E, [] { return ib_req_notify_cq(nullptr, IB_CQ_NEXT_COMP); }},
      {"ib_req_notify_cq", "freed", E, [&s] { return ib_req_notify_cq(s.dead_cq, IB_CQ_NEXT_COMP); }},
      {"ib_req_notify_cq", "other node's", E, [&o] { return ib_req_notify_cq(o.cq, IB_CQ_NEXT_COMP); }},
      {"ib_req_notify_cq", "notify 7", E, [&s] { return ib_req_notify_cq(s.cq, static_cast<ib_cq_notify>(7)); }},
      {"ib_poll_cq", "NULL", E,
       [] {
         ib_wc w{};
         return ib_poll_cq(nullptr, 1, &w);
       }},
      {"ib_poll_cq", "freed", E,
       [&s] {
         ib_wc w{};
         return ib_poll_cq(s.dead_cq, 1, &w);
       }},
      {"ib_poll_cq", "a PD", E,
       [&s] {
         ib_wc w{};
         return ib_poll_cq(as<ib_cq>(s.pd), 1, &w);
       }},
      {"ib_poll_cq", "other node's", E,
       [&o] {
         ib_wc w{};
         return ib_poll_cq(o.cq, 1, &w);
       }},
      {"ib_poll_cq", "-1 entries", E,
       [&s] {
         ib_wc w{};
         return ib_poll_cq(s.cq, -1, &w);
       }},
      {"ib_poll_cq", "NULL completions", E, [&s] { return ib_poll_cq(s.cq, 1, nullptr); }},
  };
}

// The QP verbs.
std::vector<Row> qp_rows(Side& s, Side& o) {
  const int E = -EINVAL;
  auto create = [](ib_pd* pd, ib_qp_init_attr ia) { return made(ib_create_qp(pd, &ia), ib_destroy_qp); };
  auto modify_init = [](ib_qp* qp, int state, int mask) {
    ib_qp_attr a{};
    a.qp_state = static_cast<ib_qp_state>(state);
    a.port_num = 1;
    a.qp_access_flags = IB_ACCESS_LOCAL_WRITE;
    return ib_modify_qp(qp, &a, mask);
  };
  const int init_mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS;
  return {
      {"ib_create_qp", "NULL PD", kNull, [&s, create] { return create(nullptr, qp_attr(s.cq, s.cq, IB_QPT_RC)); }},
      {"ib_create_qp", "freed PD", kNull, [&s, create] { return create(s.dead_pd, qp_attr(s.cq, s.cq, IB_QPT_RC)); }},
      {"ib_create_qp", "other node's PD", kNull,
       [&s, &o, create] { return create(o.pd, qp_attr(s.cq, s.cq, IB_QPT_RC)); }},
      {"ib_create_qp", "NULL attributes", kNull, [&s] { return made(ib_create_qp(s.pd, nullptr), ib_destroy_qp); }},
      {"ib_create_qp", "NULL send CQ", kNull, [&s, create] { return create(s.pd, qp_attr(nullptr, s.cq, IB_QPT_RC)); }},
      {"ib_create_qp", "freed receive CQ", kNull,
       [&s, create] { return create(s.pd, qp_attr(s.cq, s.dead_cq, IB_QPT_RC)); }},
      {"ib_create_qp", "other node's CQ", kNull,
       [&s, &o, create] { return create(s.pd, qp_attr(o.cq, o.cq, IB_QPT_RC)); }},
      {"ib_create_qp", "QP type 9", kNull,
       [&s, create] { return create(s.pd, qp_attr(s.cq, s.cq, static_cast<ib_qp_type>(9))); }},
      {"ib_create_qp", "2^30 send requests", kNull,
       [&s, create] {
         ib_qp_init_attr ia = qp_attr(s.cq, s.cq, IB_QPT_RC);
         ia.cap.max_send_wr = 1u << 30;
         return create(s.pd, ia);
       }},
      {"ib_create_qp", "4096 receive SGEs", kNull,
       [&s, create] {
         ib_qp_init_attr ia = qp_attr(s.cq, s.cq, IB_QPT_RC);
         ia.cap.max_recv_sge = 4096;
         return create(s.pd, ia);
       }},
      {"ib_modify_qp", "NULL", E, [modify_init, init_mask] { return modify_init(nullptr, IB_QPS_INIT, init_mask); }},
      {"ib_modify_qp", "freed", E,
       [&s, modify_init, init_mask] { return modify_init(s.dead_qp, IB_QPS_INIT, init_mask); }},
      {"ib_modify_qp", "a CQ", E,
       [&s, modify_init, init_mask] { return modify_init(as<ib_qp>(s.cq), IB_QPS_INIT, init_mask); }},
      {"ib_modify_qp", "other node's", E,
       [&o, modify_init, init_mask] { return modify_init(o.rc, IB_QPS_INIT, init_mask); }},
      {"ib_modify_qp", "NULL attributes", E, [&s, init_mask] { return ib_modify_qp(s.rc, nullptr, init_mask); }},
      {"ib_modify_qp", "no IB_QP_STATE", E,
       [&s, modify_init] { return modify_init(s.rc, IB_QPS_INIT, IB_QP_PORT | IB_QP_ACCESS_FLAGS); }},
      {"ib_modify_qp", "state 42", E, [&s, modify_init, init_mask] { return modify_init(s.rc, 42, init_mask); }},
      {"ib_modify_qp", "RESET to RTS", E,
       [&s, modify_init] { return modify_init(s.rc, IB_QPS_RTS, IB_QP_STATE | IB_QP_SQ_PSN); }},
      {"ib_modify_qp", "port 3", E,
       [&s, init_mask] {
         ib_qp_attr a{};
         a.qp_state = IB_QPS_INIT;
         a.port_num = 3;
         a.qp_access_flags = IB_ACCESS_LOCAL_WRITE;
         return ib_modify_qp(s.rc, &a, init_mask);
       }},
      {"ib_query_qp", "NULL", E,
       [] {
         ib_qp_attr a{};
         return ib_query_qp(nullptr, &a, 0, nullptr);
       }},
      {"ib_query_qp", "freed", E,
       [&s] {
         ib_qp_attr a{};
         return ib_query_qp(s.dead_qp, &a, 0, nullptr);
       }},
      {"ib_query_qp", "other node's", E,
       [&o] {
         ib_qp_attr a{};
         return ib_query_qp(o.rc, &a, 0, nullptr);
       }},
      {"ib_query_qp", "NULL attributes", E, [&s] { return ib_query_qp(s.rc, nullptr, 0, nullptr); }},
      {"ib_destroy_qp", "NULL", E, [] { return ib_destroy_qp(nullptr); }},
      {"ib_destroy_qp", "freed", E, [&s] { return ib_destroy_qp(s.dead_qp); }},
      {"ib_destroy_qp", "a CQ", E, [&s] { return ib_destroy_qp(as<ib_qp>(s.cq)); }},
      {"ib_destroy_qp", "other node's", E, [&o] { return ib_destroy_qp(o.rc); }},
  };
}

// Memory regions and windows.
std::vector<Row> memory_rows(Side& s, Side& o) {
  const int E = -EINVAL;
  auto reg = [](ib_pd* pd, ib_phys_buf* bufs, int n, u64 iova) {
    return made(ib_reg_phys_mr(pd, bufs, n, IB_ACCESS_LOCAL_WRITE, &iova), ib_dereg_mr);
  };
  auto bind = [](Side& s, ib_qp* qp, ib_mw* mw, ib_mr* mr, u64 addr, u32 len) {
    ib_mw_bind b{};
    b.mr = mr;
    b.addr = addr;
    b.length = len;
    b.mw_access_flags = IB_ACCESS_REMOTE_READ;
    (void)s;
    return ib_bind_mw(qp, mw, &b);
  };
  const auto base = [&s] { return reinterpret_cast<u64>(s.buf); };
  return {
      {"ib_get_dma_mr", "NULL PD", kNull,
       [] { return made(ib_get_dma_mr(nullptr, IB_ACCESS_LOCAL_WRITE), ib_dereg_mr); }},
      {"ib_get_dma_mr", "freed PD", kNull,
       [&s] { return made(ib_get_dma_mr(s.dead_pd, IB_ACCESS_LOCAL_WRITE), ib_dereg_mr); }},
      {"ib_get_dma_mr", "other node's PD", kNull,
       [&o] { return made(ib_get_dma_mr(o.pd, IB_ACCESS_LOCAL_WRITE), ib_dereg_mr); }},
      {"ib_reg_phys_mr", "NULL PD", kNull,
       [&s, reg, base] {
         ib_phys_buf b{base(), 4096};
         return reg(nullptr, &b, 1, base());
       }},
      {"ib_reg_phys_mr", "other node's PD", kNull,
       [&s, &o, reg, base] {
         ib_phys_buf b{base(), 4096};
         return reg(o.pd, &b, 1, base());
       }},
      {"ib_reg_phys_mr", "NULL buffers", kNull, [&s, reg, base] { return reg(s.pd, nullptr, 1, base()); }},
      {"ib_reg_phys_mr", "0 buffers", kNull,
       [&s, reg, base] {
         ib_phys_buf b{base(), 4096};
         return reg(s.pd, &b, 0, base());
       }},
      {"ib_reg_phys_mr", "-1 buffers", kNull,
       [&s, reg, base] {
         ib_phys_buf b{base(), 4096};
         return reg(s.pd, &b, -1, base());
       }},
      {"ib_reg_phys_mr", "0 bytes", kNull,
       [&s, reg, base] {
         ib_phys_buf b{base(), 0};
         return reg(s.pd, &b, 1, base());
       }},
      {"ib_reg_phys_mr", "buffers not contiguous", kNull,
       [&s, reg, base] {
         ib_phys_buf b[2] = {{base(), 1024}, {base() + 4096, 1024}};
         return reg(s.pd, b, 2, base());
       }},
      {"ib_reg_phys_mr", "iova not the first address", kNull,
       [&s, reg, base] {
         ib_phys_buf b{base(), 4096};
         return reg(s.pd, &b, 1, base() + 64);
       }},
      {"ib_reg_phys_mr", "NULL iova", kNull,
       [&s, base] {
         ib_phys_buf b{base(), 4096};
         return made(ib_reg_phys_mr(s.pd, &b, 1, IB_ACCESS_LOCAL_WRITE, nullptr), ib_dereg_mr);
       }},
      {"ib_dereg_mr", "NULL", E, [] { return ib_dereg_mr(nullptr); }},
      {"ib_dereg_mr", "freed", E, [&s] { return ib_dereg_mr(s.dead_mr); }},
      {"ib_dereg_mr", "a PD", E, [&s] { return ib_dereg_mr(as<ib_mr>(s.pd)); }},
      {"ib_dereg_mr", "other node's", E, [&o] { return ib_dereg_mr(o.mr); }},
      {"ib_alloc_mw", "NULL PD", kNull, [] { return made(ib_alloc_mw(nullptr), ib_dealloc_mw); }},
      {"ib_alloc_mw", "freed PD", kNull, [&s] { return made(ib_alloc_mw(s.dead_pd), ib_dealloc_mw); }},
      {"ib_alloc_mw", "other node's PD", kNull, [&o] { return made(ib_alloc_mw(o.pd), ib_dealloc_mw); }},
      {"ib_bind_mw", "NULL QP", E, [&s, bind, base] { return bind(s, nullptr, s.mw, s.mr, base(), 64); }},
      {"ib_bind_mw", "NULL window", E, [&s, bind, base] { return bind(s, s.rc, nullptr, s.mr, base(), 64); }},
      {"ib_bind_mw", "freed window", E, [&s, bind, base] { return bind(s, s.rc, s.dead_mw, s.mr, base(), 64); }},
      {"ib_bind_mw", "other node's window", E, [&s, &o, bind, base] { return bind(s, s.rc, o.mw, s.mr, base(), 64); }},
      {"ib_bind_mw", "other node's QP", E, [&s, &o, bind, base] { return bind(s, o.rc, s.mw, s.mr, base(), 64); }},
      {"ib_bind_mw", "freed region", E, [&s, bind, base] { return bind(s, s.rc, s.mw, s.dead_mr, base(), 64); }},
      {"ib_bind_mw", "the DMA MR", E, [&s, bind, base] { return bind(s, s.rc, s.mw, s.dma, base(), 64); }},
      {"ib_bind_mw", "NULL bind", E, [&s] { return ib_bind_mw(s.rc, s.mw, nullptr); }},
      {"ib_bind_mw", "a UD QP", E, [&s, bind, base] { return bind(s, s.ud, s.mw, s.mr, base(), 64); }},
      {"ib_bind_mw", "a range beyond the region", E,
       [&s, bind, base] { return bind(s, s.rc, s.mw, s.mr, base() + 4000, 200); }},
      {"ib_bind_mw", "a region without IB_ACCESS_MW_BIND", -EACCES,
       [&s, bind, base] { return bind(s, s.rc, s.mw, s.plain_mr, base() + 4096, 64); }},
      {"ib_dealloc_mw", "NULL", E, [] { return ib_dealloc_mw(nullptr); }},
      {"ib_dealloc_mw", "freed", E, [&s] { return ib_dealloc_mw(s.dead_mw); }},
      {"ib_dealloc_mw", "an MR", E, [&s] { return ib_dealloc_mw(as<ib_mw>(s.mr)); }},
      {"ib_dealloc_mw", "other node's", E, [&o] { return ib_dealloc_mw(o.mw); }},
  };
}

// Posting: handles, lists, SGEs, opcodes; QPs in the wrong state.
std::vector<Row> post_rows(Side& s, Side& o) {
  const int E = -EINVAL;
  static ib_sge sge;
  sge = {reinterpret_cast<u64>(s.buf), 64, s.mr->lkey};
  return {
      {"ib_post_send", "NULL QP", E, [] { return post_send(nullptr, &sge, 1, IB_WR_SEND); }},
      {"ib_post_send", "freed QP", E, [&s] { return post_send(s.dead_qp, &sge, 1, IB_WR_SEND); }},
      {"ib_post_send", "a CQ", E, [&s] { return post_send(as<ib_qp>(s.cq), &sge, 1, IB_WR_SEND); }},
      {"ib_post_send", "other node's QP", E, [&o] { return post_send(o.rc, &sge, 1, IB_WR_SEND); }},
      {"ib_post_send", "NULL request", E,
       [&s] {
         ib_send_wr* bad = nullptr;
         return ib_post_send(s.rc, nullptr, &bad);
       }},
      {"ib_post_send", "QP in RESET", E, [&s] { return post_send(s.rc, &sge, 1, IB_WR_SEND); }},
      {"ib_post_send", "NULL SGE list with 1 SGE", E, [&s] { return post_send(s.ud, nullptr, 1, IB_WR_SEND, s.ah); }},
      {"ib_post_send", "-1 SGEs", E, [&s] { return post_send(s.ud, &sge, -1, IB_WR_SEND, s.ah); }},
      {"ib_post_send", "opcode 99", E, [&s] { return post_send(s.ud, &sge, 1, static_cast<ib_wr_opcode>(99), s.ah); }},
      {"ib_post_recv", "NULL QP", E, [] { return post_recv(nullptr, &sge, 1); }},
      {"ib_post_recv", "freed QP", E, [&s] { return post_recv(s.dead_qp, &sge, 1); }},
      {"ib_post_recv", "other node's QP", E, [&o] { return post_recv(o.rc, &sge, 1); }},
      {"ib_post_recv", "NULL request", E,
       [&s] {
         ib_recv_wr* bad = nullptr;
         return ib_post_recv(s.rc, nullptr, &bad);
       }},
      {"ib_post_recv", "QP in RESET", E, [&s] { return post_recv(s.rc, &sge, 1); }},
      {"ib_post_recv", "NULL SGE list with 1 SGE", E, [&s] { return post_recv(s.ud, nullptr, 1); }},
      {"ib_post_recv", "-1 SGEs", E, [&s] { return post_recv(s.ud, &sge, -1); }},
      {"ib_post_send", "RC QP in INIT", E, [&s] { return post_send(s.init_qp, &sge, 1, IB_WR_SEND); }},
      {"ib_modify_qp", "INIT to RTS (RTR skipped)", E,
       [&s] {
         ib_qp_attr a{};
         a.qp_state = IB_QPS_RTS;
         a.sq_psn = 1;
         return ib_modify_qp(s.init_qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
       }},
      {"ib_modify_qp", "RTS to INIT", E,
       [&s] {
         ib_qp_attr a{};
         a.qp_state = IB_QPS_INIT;
         a.port_num = 1;
         a.qkey = 0x1234;
         return ib_modify_qp(s.ud, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY);
       }},
  };
}

// From a host timer: interrupt context. Polling, arming and posting (of a
// registered buffer) work; the rest would issue an HCA command.
std::vector<Row> irq_rows(Side& s) {
  static ib_sge sge;
  sge = {reinterpret_cast<u64>(s.buf), 64, s.mr->lkey};
  return {
      {"ib_poll_cq", "interrupt context (allowed)", 0,
       [&s] {
         ib_wc w{};
         return ib_poll_cq(s.cq, 1, &w);
       }},
      {"ib_req_notify_cq", "interrupt context (allowed)", 0, [&s] { return ib_req_notify_cq(s.cq, IB_CQ_NEXT_COMP); }},
      {"ib_post_recv", "interrupt context (allowed)", 0, [&s] { return post_recv(s.ud, &sge, 1); }},
      {"ib_alloc_pd, ib_dealloc_pd", "interrupt context (allowed)", 0,
       [&s] { return made(ib_alloc_pd(s.dev), ib_dealloc_pd); }},
      {"ib_create_cq", "interrupt context", kNull,
       [&s] { return made(ib_create_cq(s.dev, nullptr, nullptr, nullptr, 8), ib_destroy_cq); }},
      {"ib_reg_phys_mr", "interrupt context", kNull,
       [&s] {
         u64 iova = reinterpret_cast<u64>(s.buf);
         ib_phys_buf b{iova, 4096};
         return made(ib_reg_phys_mr(s.pd, &b, 1, IB_ACCESS_LOCAL_WRITE, &iova), ib_dereg_mr);
       }},
      {"ib_create_ah, ib_destroy_ah", "interrupt context (allowed)", 0,
       [&s] {
         ib_ah_attr a{};
         a.port_num = 1;
         a.dlid = 1;
         return made(ib_create_ah(s.pd, &a), ib_destroy_ah);
       }},
      {"ib_alloc_mw", "interrupt context", kNull, [&s] { return made(ib_alloc_mw(s.pd), ib_dealloc_mw); }},
      {"ib_destroy_cq", "interrupt context", -EBUSY, [&s] { return ib_destroy_cq(s.spare_cq); }},
      {"ib_destroy_qp", "interrupt context", -EBUSY, [&s] { return ib_destroy_qp(s.rc); }},
      {"ib_dereg_mr", "interrupt context", -EBUSY, [&s] { return ib_dereg_mr(s.mr); }},
      {"ib_dealloc_mw", "interrupt context", -EBUSY, [&s] { return ib_dealloc_mw(s.mw); }},
      {"ib_modify_qp", "interrupt context", -EINVAL,
       [&s] {
         ib_qp_attr a{};
         a.qp_state = IB_QPS_ERR;
         return ib_modify_qp(s.ud, &a, IB_QP_STATE);
       }},
      {"ib_query_qp", "interrupt context (allowed)", 0,
       [&s] {
         ib_qp_attr a{};
         return ib_query_qp(s.rc, &a, 0, nullptr);
       }},
      {"ib_query_port", "interrupt context", -EINVAL,
       [&s] {
         ib_port_attr a{};
         return ib_query_port(s.dev, 1, &a);
       }},
      {"ib_query_gid", "interrupt context", -EINVAL,
       [&s] {
         ib_gid g{};
         return ib_query_gid(s.dev, 1, 0, &g);
       }},
      {"ib_query_device", "interrupt context", -EINVAL,
       [&s] {
         ib_device_attr a{};
         return ib_query_device(s.dev, &a);
       }},
  };
}

// One of everything, and one of each kind made and released (freed).
void open_side(Side& s) {
  s.dev = node_device();
  ASSERT_NE(s.dev, nullptr);
  s.buf = static_cast<unsigned char*>(nicsim_alloc(8192, 4096));
  s.pd = ib_alloc_pd(s.dev);
  s.cq = ib_create_cq(s.dev, nullptr, nullptr, nullptr, 16);
  s.spare_cq = ib_create_cq(s.dev, nullptr, nullptr, nullptr, 4);
  ASSERT_TRUE(s.pd && s.cq && s.spare_cq);
  ib_qp_init_attr rc = qp_attr(s.cq, s.cq, IB_QPT_RC), ud = qp_attr(s.cq, s.cq, IB_QPT_UD);
  s.rc = ib_create_qp(s.pd, &rc);
  s.ud = ib_create_qp(s.pd, &ud);
  s.dead_qp = ib_create_qp(s.pd, &rc);
  s.init_qp = ib_create_qp(s.pd, &rc);
  ASSERT_TRUE(s.rc && s.ud && s.dead_qp && s.init_qp);
  ASSERT_EQ(ib_destroy_qp(s.dead_qp), 0);
  // The UD QP goes to RTS: sends and receives may be posted on it.
  ib_qp_attr a{};
  a.qp_state = IB_QPS_INIT;
  a.port_num = 1;
  a.qkey = 0x1234;
  ASSERT_EQ(ib_modify_qp(s.ud, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY), 0);
  a.qp_access_flags = IB_ACCESS_LOCAL_WRITE;
  ASSERT_EQ(ib_modify_qp(s.init_qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
  a.qp_state = IB_QPS_RTR;
  ASSERT_EQ(ib_modify_qp(s.ud, &a, IB_QP_STATE), 0);
  a.qp_state = IB_QPS_RTS;
  a.sq_psn = 1;
  ASSERT_EQ(ib_modify_qp(s.ud, &a, IB_QP_STATE | IB_QP_SQ_PSN), 0);
  s.dma = ib_get_dma_mr(s.pd, IB_ACCESS_LOCAL_WRITE);
  u64 iova = reinterpret_cast<u64>(s.buf);
  ib_phys_buf b{iova, 4096};
  s.mr = ib_reg_phys_mr(s.pd, &b, 1, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND, &iova);
  iova = reinterpret_cast<u64>(s.buf) + 4096;
  ib_phys_buf b2{iova, 4096};
  s.plain_mr = ib_reg_phys_mr(s.pd, &b2, 1, IB_ACCESS_LOCAL_WRITE, &iova);
  iova = reinterpret_cast<u64>(s.buf);
  s.dead_mr = ib_reg_phys_mr(s.pd, &b, 1, IB_ACCESS_LOCAL_WRITE, &iova);
  ASSERT_TRUE(s.dma && s.mr && s.plain_mr && s.dead_mr);
  ASSERT_EQ(ib_dereg_mr(s.dead_mr), 0);
  ib_ah_attr ah{};
  ah.port_num = 1;
  ah.dlid = 1;
  s.ah = ib_create_ah(s.pd, &ah);
  s.dead_ah = ib_create_ah(s.pd, &ah);
  s.mw = ib_alloc_mw(s.pd);
  s.dead_mw = ib_alloc_mw(s.pd);
  ASSERT_TRUE(s.ah && s.dead_ah && s.mw && s.dead_mw);
  ASSERT_EQ(ib_destroy_ah(s.dead_ah), 0);
  ASSERT_EQ(ib_dealloc_mw(s.dead_mw), 0);
  s.dead_pd = ib_alloc_pd(s.dev);
  s.dead_cq = ib_create_cq(s.dev, nullptr, nullptr, nullptr, 4);
  ASSERT_EQ(ib_dealloc_pd(s.dead_pd), 0);
  ASSERT_EQ(ib_destroy_cq(s.dead_cq), 0);
}

// Everything the rows refused is still there: each release succeeds once.
void close_side(Side& s) {
  EXPECT_EQ(ib_dealloc_mw(s.mw), 0);
  EXPECT_EQ(ib_destroy_ah(s.ah), 0);
  EXPECT_EQ(ib_destroy_qp(s.rc), 0);
  EXPECT_EQ(ib_destroy_qp(s.ud), 0);
  EXPECT_EQ(ib_destroy_qp(s.init_qp), 0);
  EXPECT_EQ(ib_dereg_mr(s.dma), 0);
  EXPECT_EQ(ib_dereg_mr(s.mr), 0);
  EXPECT_EQ(ib_dereg_mr(s.plain_mr), 0);
  EXPECT_EQ(ib_destroy_cq(s.cq), 0);
  EXPECT_EQ(ib_destroy_cq(s.spare_cq), 0);
  EXPECT_EQ(ib_dealloc_pd(s.pd), 0);
  EXPECT_EQ(counts(s.dev).total(), 0u);
  nicsim_free(s.buf);
}

// The live objects work after the rows: a PD and a CQ made and released,
// and the CQ polled empty (the receive the interrupt row posted waits).
bool still_works(Side& s) {
  ib_pd* pd = ib_alloc_pd(s.dev);
  ib_wc w{};
  const bool ok = pd && ib_dealloc_pd(pd) == 0 && ib_poll_cq(s.cq, 1, &w) == 0 && qp_state(s.ud) == IB_QPS_RTS;
  return ok;
}

int abuse_main(int, char**) {
  const int rank = static_cast<int>(nicsim_workload_rank());
  Side& s = g_side[rank];
  open_side(s);
  if (::testing::Test::HasFatalFailure()) return 1;
  nicsim_barrier();
  if (rank == 0) {
    Side& o = g_side[1];
    for (auto part : {device_rows, qp_rows, memory_rows, post_rows}) run_rows(part(s, o), g_out.rows);
    host::Timer t(*host::Host::current_host(), "kverbs_abuse", [&s] {
      run_rows(irq_rows(s), g_out.irq_rows);
      g_out.irq_done = true;
    });
    t.start(1000);
    for (int i = 0; i < 1000 && !g_out.irq_done; ++i) nicsim_sleep_ns(1000);
    g_out.still_works = still_works(s);
  }
  nicsim_barrier();
  close_side(s);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg("kverbs_abuse_probe", abuse_main, "test: kernel verbs with bad arguments");

TEST(KernelVerbsAbuse, EveryVerbAnswersBadArgumentsWithTheHeadersErrno) {
  testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"kverbs_abuse_probe\" nodes: \"h0\" nodes: \"h1\" }\n");
  EXPECT_EQ(g_out.rows, 50 + 27 + 34 + 19);  // device, PD, AH, CQ; QP; memory; posting and QP states
  EXPECT_EQ(g_out.irq_rows, 17);             // 6 allowed, 11 refused
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
  EXPECT_TRUE(g_out.still_works);
}

}  // namespace
}  // namespace nicsim::kverbs
