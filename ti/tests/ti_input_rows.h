// The bad-input table of the TI operations, shared by the providers' tests
// (ti_input_test.cc over IB, ti_elan_input_test.cc over Elan): every
// handle-taking operation with a NULL, invented, stale, wrong-type and
// other node's handle, and bad parameters with good handles. A row is the
// call and the status the seed lists.
#pragma once
#include <gtest/gtest.h>
#include <sdp_ti.h>

#include <functional>
#include <string>
#include <vector>

#include "ti/tests/ti_peer.h"

namespace nicsim::ti::testing::input {

struct Handles {
  ti_ops_t* o = nullptr;
  // Live objects.
  ti_handle_t ti = nullptr;
  ti_endpoint_handle_t ep = nullptr;
  ti_pd_handle_t pd = nullptr;
  ti_cq_handle_t cq = nullptr;
  ti_res_pool_handle_t pool = nullptr, other_pool = nullptr;
  ti_mem_handle_t mem = nullptr;
  ti_conn_handle_t listen = nullptr;
  // Objects of an instance that was destroyed.
  ti_handle_t old_ti = nullptr;
  ti_endpoint_handle_t old_ep = nullptr;
  ti_pd_handle_t old_pd = nullptr;
  ti_cq_handle_t old_cq = nullptr;
  ti_res_pool_handle_t old_pool = nullptr;
  ti_mem_handle_t old_mem = nullptr;
  ti_conn_handle_t old_conn = nullptr;
  unsigned char invented[64] = {};    // never a handle
  unsigned char region[256] = {};     // scratch: never registered
  unsigned char* node_mem = nullptr;  // registered (node memory: the Elan maps only that)
  ti_data_element_t loose{};          // not an element of any pool
};

struct Row {
  std::string what;
  std::function<ti_status_t(Handles&)> call;
  ti_status_t want;
};

inline void no_cb(ti_conn_request_t*) {}
inline void no_event(const ti_event_t, const void*, const void*) {}
inline void no_pool_cb(ti_pool_response_t*) {}

template <class T>
inline T as(void* p) {
  return reinterpret_cast<T>(p);
}

// A handle-taking operation: which kind of handle it takes, the call with
// a bad one in that place, the status the interface lists.
enum Kind { kTi, kEp, kPd, kCq, kPool, kMem, kConn };
using Op = std::function<ti_status_t(Handles&, void*)>;
struct OpRow {
  const char* name;
  Kind kind;
  Op op;
  ti_status_t want;
};

inline std::vector<OpRow> instance_ops() {  // instances and endpoints
  return {
      {"destroy_ti", kTi, [](Handles& h, void* b) { return h.o->destroy_ti(as<ti_handle_t>(b), nullptr, nullptr); },
       TI_INVALID_HANDLE},
      {"debug_svc", kTi, [](Handles& h, void* b) { return h.o->debug_svc(as<ti_handle_t>(b), TI_DBG_STD); },
       TI_INVALID_HANDLE},
      {"create_endpoint", kTi,
       [](Handles& h, void* b) {
         ti_inet_addr_t a = ip_of_node(1);
         ti_endpoint_handle_t e;
         return h.o->create_endpoint(as<ti_handle_t>(b), &a, 1, &e);
       },
       TI_INVALID_HANDLE},
      {"destroy_endpoint", kEp, [](Handles& h, void* b) { return h.o->destroy_endpoint(as<ti_endpoint_handle_t>(b)); },
       TI_INVALID_PARAMETER},
      {"create_pd(ti)", kTi,
       [](Handles& h, void* b) {
         ti_pd_handle_t p;
         return h.o->create_pd(as<ti_handle_t>(b), h.ep, &p);
       },
       TI_INVALID_HANDLE},
      {"create_pd(endpoint)", kEp,
       [](Handles& h, void* b) {
         ti_pd_handle_t p;
         return h.o->create_pd(h.ti, as<ti_endpoint_handle_t>(b), &p);
       },
       TI_INVALID_PARAMETER},
  };
}

inline std::vector<OpRow> cq_ops() {  // PDs and CQs
  return {
      {"destroy_pd", kPd, [](Handles& h, void* b) { return h.o->destroy_pd(as<ti_pd_handle_t>(b)); },
       TI_INVALID_PARAMETER},
      {"create_cq(ti)", kTi,
       [](Handles& h, void* b) {
         ti_cq_handle_t c;
         return h.o->create_cq(as<ti_handle_t>(b), h.pd, 8, &c);
       },
       TI_INVALID_HANDLE},
      {"create_cq(pd)", kPd,
       [](Handles& h, void* b) {
         ti_cq_handle_t c;
         return h.o->create_cq(h.ti, as<ti_pd_handle_t>(b), 8, &c);
       },
       TI_INVALID_PARAMETER},
      {"poll_cq", kCq,
       [](Handles& h, void* b) {
         ti_data_element_t* l;
         return h.o->poll_cq(as<ti_cq_handle_t>(b), &l);
       },
       TI_INVALID_PARAMETER},
      {"rearm_cq", kCq, [](Handles& h, void* b) { return h.o->rearm_cq(as<ti_cq_handle_t>(b)); }, TI_INVALID_PARAMETER},
      {"destroy_cq", kCq, [](Handles& h, void* b) { return h.o->destroy_cq(as<ti_cq_handle_t>(b)); },
       TI_INVALID_PARAMETER},
  };
}

inline std::vector<OpRow> connection_ops() {  // connections
  return {
      {"connect", kTi,
       [](Handles& h, void* b) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i{h.ep, h.ep, h.pd, h.cq, h.cq, nullptr, 0, 0, 0, no_cb, nullptr};
         ti_conn_request_t r;
         ti_conn_handle_t c;
         return h.o->connect(as<ti_handle_t>(b), &a, &i, &r, &c);
       },
       TI_INVALID_HANDLE},
      {"listen", kTi,
       [](Handles& h, void* b) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i{h.ep, nullptr, h.pd, nullptr, nullptr, nullptr, 0, 0, 0, no_cb, nullptr};
         ti_conn_handle_t c;
         return h.o->listen(as<ti_handle_t>(b), &a, &i, nullptr, &c);
       },
       TI_INVALID_HANDLE},
      {"accept", kConn,
       [](Handles& h, void* b) {
         ti_conn_request_t r{};
         r.conn_handle = as<ti_conn_handle_t>(b);
         ti_comp_info_t c{h.cq, h.cq, nullptr, nullptr, nullptr, nullptr, nullptr};
         return h.o->accept(&r, 0, &c, nullptr);
       },
       TI_INVALID_PARAMETER},
      {"reject", kConn,
       [](Handles& h, void* b) {
         ti_conn_request_t r{};
         r.conn_handle = as<ti_conn_handle_t>(b);
         return h.o->reject(&r);
       },
       TI_INVALID_PARAMETER},
      {"disconnect", kConn,
       [](Handles& h, void* b) { return h.o->disconnect(as<ti_conn_handle_t>(b), nullptr, nullptr); },
       TI_INVALID_HANDLE},
  };
}

inline std::vector<OpRow> memory_and_pool_ops() {  // memory and pools
  return {
      {"reg_virt_mem(ti)", kTi,
       [](Handles& h, void* b) {
         ti_rdma_desc_t d;
         ti_mem_handle_t m;
         return h.o->reg_virt_mem(as<ti_handle_t>(b), h.pd, h.region, 64, TI_MEM_READ, &d, &m);
       },
       TI_INVALID_HANDLE},
      {"reg_virt_mem(pd)", kPd,
       [](Handles& h, void* b) {
         ti_rdma_desc_t d;
         ti_mem_handle_t m;
         return h.o->reg_virt_mem(h.ti, as<ti_pd_handle_t>(b), h.region, 64, TI_MEM_READ, &d, &m);
       },
       TI_INVALID_PARAMETER},
      {"reg_phys_mem", kTi,
       [](Handles& h, void* b) {
         uint64_t page = 4096;
         ti_rdma_desc_t d{};
         ti_mem_handle_t m;
         return h.o->reg_phys_mem(as<ti_handle_t>(b), h.pd, &page, 1, TI_MEM_READ, &d, &m);
       },
       TI_INVALID_HANDLE},
      {"dereg_mem", kMem, [](Handles& h, void* b) { return h.o->dereg_mem(as<ti_mem_handle_t>(b)); },
       TI_INVALID_HANDLE},
      {"res_pool_create", kTi,
       [](Handles& h, void* b) {
         uint32_t size = 64;
         ti_res_pool_handle_t p;
         return h.o->res_pool_create(as<ti_handle_t>(b), TI_RES_POOL_MSG, 1, 1, &size, 0, &p);
       },
       TI_INVALID_HANDLE},
      {"res_pool_destroy", kPool,
       [](Handles& h, void* b) { return h.o->res_pool_destroy(as<ti_res_pool_handle_t>(b)); }, TI_INVALID_HANDLE},
      {"res_pool_get", kPool,
       [](Handles& h, void* b) {
         ti_pool_response_t r;
         return h.o->res_pool_get(as<ti_res_pool_handle_t>(b), 1, FALSE, nullptr, nullptr, nullptr, &r);
       },
       TI_INVALID_HANDLE},
      {"res_pool_put", kPool,
       [](Handles& h, void* b) { return h.o->res_pool_put(as<ti_res_pool_handle_t>(b), &h.loose); }, TI_INVALID_HANDLE},
  };
}

inline std::vector<OpRow> data_ops() {  // data transfer and io_ctl
  return {
      {"msg_send", kConn, [](Handles& h, void* b) { return h.o->msg_send(as<ti_conn_handle_t>(b), &h.loose); },
       TI_INVALID_HANDLE},
      {"msg_recv", kConn, [](Handles& h, void* b) { return h.o->msg_recv(as<ti_conn_handle_t>(b), &h.loose); },
       TI_INVALID_HANDLE},
      {"rdma_read", kConn, [](Handles& h, void* b) { return h.o->rdma_read(as<ti_conn_handle_t>(b), &h.loose); },
       TI_INVALID_HANDLE},
      {"rdma_write", kConn, [](Handles& h, void* b) { return h.o->rdma_write(as<ti_conn_handle_t>(b), &h.loose); },
       TI_INVALID_HANDLE},
      {"rdma_read_send", kConn,
       [](Handles& h, void* b) { return h.o->rdma_read_send(as<ti_conn_handle_t>(b), &h.loose, &h.loose); },
       TI_INVALID_HANDLE},
      {"rdma_write_send", kConn,
       [](Handles& h, void* b) { return h.o->rdma_write_send(as<ti_conn_handle_t>(b), &h.loose, &h.loose); },
       TI_INVALID_HANDLE},
      {"atomic_op", kConn,
       [](Handles& h, void* b) { return h.o->atomic_op(as<ti_conn_handle_t>(b), TI_ATOMIC_FETCH_ADD, &h.loose); },
       TI_INVALID_HANDLE},
      {"io_ctl", kTi,
       [](Handles& h, void* b) {
         ti_conn_profile_t p{};
         uint32_t n = sizeof p;
         return h.o->io_ctl(as<ti_handle_t>(b), TI_GET_CONN_PROFILE, &n, &p);
       },
       TI_INVALID_HANDLE},
      {"io_ctl(profile)", kConn,
       [](Handles& h, void* b) {
         ti_conn_profile_t p{};
         p.conn_handle = as<ti_conn_handle_t>(b);
         uint32_t n = sizeof p;
         return h.o->io_ctl(h.ti, TI_GET_CONN_PROFILE, &n, &p);
       },
       TI_INVALID_HANDLE},
  };
}

inline Handles g_other;  // the other node's live objects: on this node, only numbers

// Every handle-taking operation with each kind of bad handle.
inline void handle_rows(std::vector<Row>& rows) {
  struct Bad {
    const char* name;
    std::function<void*(Handles&)> of;  // the bad handle for a slot of kind `kind`
  };
  auto stale = [](Handles& h, Kind k) -> void* {
    void* v[] = {h.old_ti, h.old_ep, h.old_pd, h.old_cq, h.old_pool, h.old_mem, h.old_conn};
    return v[k];
  };
  auto wrong = [](Handles& h, Kind k) -> void* {  // a live handle of another kind
    void* v[] = {h.pd, h.cq, h.ti, h.pool, h.mem, h.ep, h.pool};
    return v[k];
  };
  std::vector<OpRow> ops;
  for (auto group : {instance_ops, cq_ops, connection_ops, memory_and_pool_ops, data_ops})
    for (OpRow& op : group()) ops.push_back(std::move(op));
  const std::vector<Bad> bads = {
      {"NULL", [](Handles&) -> void* { return nullptr; }},
      {"invented", [](Handles& h) -> void* { return h.invented; }},
  };
  auto other = [](Handles&, Kind k) -> void* {  // a live handle of that kind on the other node
    void* v[] = {g_other.ti, g_other.ep, g_other.pd, g_other.cq, g_other.pool, g_other.mem, g_other.listen};
    return v[k];
  };
  for (const OpRow& op : ops) {
    for (const Bad& bad : bads) {
      auto of = bad.of;
      auto call = op.op;
      rows.push_back(
          {std::string(op.name) + " " + bad.name, [of, call](Handles& h) { return call(h, of(h)); }, op.want});
    }
    const Kind k = op.kind;
    auto call = op.op;
    rows.push_back(
        {std::string(op.name) + " stale", [k, call, stale](Handles& h) { return call(h, stale(h, k)); }, op.want});
    rows.push_back(
        {std::string(op.name) + " wrong type", [k, call, wrong](Handles& h) { return call(h, wrong(h, k)); }, op.want});
    rows.push_back({std::string(op.name) + " other node's",
                    [k, call, other](Handles& h) { return call(h, other(h, k)); }, op.want});
  }
}

// Instances, endpoints, PDs and CQs: bad parameters with good handles.
inline void instance_parameter_rows(std::vector<Row>& rows) {
  const ti_status_t P = TI_INVALID_PARAMETER;
  rows.push_back(
      {"events_register NULL callback", [](Handles& h) { return h.o->events_register(nullptr, nullptr); }, P});
  rows.push_back({"events_deregister never registered", [](Handles& h) { return h.o->events_deregister(&h, no_event); },
                  TI_NOT_FOUND});
  rows.push_back({"create_ti NULL", [](Handles& h) { return h.o->create_ti(nullptr); }, P});
  rows.push_back(
      {"debug_svc level 99", [](Handles& h) { return h.o->debug_svc(h.ti, static_cast<ti_debug_level_t>(99)); }, P});
  rows.push_back({"create_endpoint NULL address",
                  [](Handles& h) {
                    ti_endpoint_handle_t e;
                    return h.o->create_endpoint(h.ti, nullptr, 1, &e);
                  },
                  P});
  rows.push_back({"create_endpoint NULL out",
                  [](Handles& h) {
                    ti_inet_addr_t a = ip_of_node(1);
                    return h.o->create_endpoint(h.ti, &a, 1, nullptr);
                  },
                  P});
  rows.push_back({"create_pd NULL out", [](Handles& h) { return h.o->create_pd(h.ti, h.ep, nullptr); }, P});
  rows.push_back({"create_cq no entries",
                  [](Handles& h) {
                    ti_cq_handle_t c;
                    return h.o->create_cq(h.ti, h.pd, 0, &c);
                  },
                  P});
  rows.push_back({"poll_cq NULL list", [](Handles& h) { return h.o->poll_cq(h.cq, nullptr); }, P});
  rows.push_back({"destroy_pd in use", [](Handles& h) { return h.o->destroy_pd(h.pd); }, TI_RESOURCE_BUSY});
}

// Connections: bad parameters with good handles.
inline void connection_parameter_rows(std::vector<Row>& rows) {
  const ti_status_t P = TI_INVALID_PARAMETER;
  const ti_conn_attr_t attr = default_attr();
  rows.push_back({"connect NULL attr",
                  [](Handles& h) {
                    ti_conn_info_t i{h.ep, h.ep, h.pd, h.cq, h.cq, nullptr, 0, 0, 0, no_cb, nullptr};
                    ti_conn_request_t r;
                    ti_conn_handle_t c;
                    return h.o->connect(h.ti, nullptr, &i, &r, &c);
                  },
                  P});
  rows.push_back({"connect no callback",
                  [attr](Handles& h) {
                    ti_conn_attr_t a = attr;
                    ti_conn_info_t i{h.ep, h.ep, h.pd, h.cq, h.cq, nullptr, 0, 0, 0, nullptr, nullptr};
                    ti_conn_request_t r;
                    ti_conn_handle_t c;
                    return h.o->connect(h.ti, &a, &i, &r, &c);
                  },
                  P});
  rows.push_back({"connect stale endpoint",
                  [attr](Handles& h) {
                    ti_conn_attr_t a = attr;
                    ti_conn_info_t i{h.ep, h.old_ep, h.pd, h.cq, h.cq, nullptr, 0, 0, 0, no_cb, nullptr};
                    ti_conn_request_t r;
                    ti_conn_handle_t c;
                    return h.o->connect(h.ti, &a, &i, &r, &c);
                  },
                  P});
  rows.push_back({"connect 93 bytes of private data",
                  [attr](Handles& h) {
                    ti_conn_attr_t a = attr;
                    ti_conn_info_t i{h.ep, h.ep, h.pd, h.cq, h.cq, h.region, 93, 0, 0, no_cb, nullptr};
                    ti_conn_request_t r;
                    ti_conn_handle_t c;
                    return h.o->connect(h.ti, &a, &i, &r, &c);
                  },
                  P});
  rows.push_back({"connect private length without data",
                  [attr](Handles& h) {
                    ti_conn_attr_t a = attr;
                    ti_conn_info_t i{h.ep, h.ep, h.pd, h.cq, h.cq, nullptr, 8, 0, 0, no_cb, nullptr};
                    ti_conn_request_t r;
                    ti_conn_handle_t c;
                    return h.o->connect(h.ti, &a, &i, &r, &c);
                  },
                  P});
  rows.push_back({"listen on a port already listening",
                  [attr](Handles& h) {
                    ti_conn_attr_t a = attr;
                    ti_conn_info_t i{h.ep, nullptr, h.pd, nullptr, nullptr, nullptr, 0, 0, 0, no_cb, nullptr};
                    ti_conn_handle_t c;
                    return h.o->listen(h.ti, &a, &i, nullptr, &c);
                  },
                  TI_INVALID_OPERATION});
  rows.push_back({"accept NULL request", [](Handles& h) { return h.o->accept(nullptr, 0, nullptr, nullptr); }, P});
  rows.push_back({"accept a listen handle",
                  [](Handles& h) {
                    ti_conn_request_t r{};
                    r.conn_handle = h.listen;
                    ti_comp_info_t c{h.cq, h.cq, nullptr, nullptr, nullptr, nullptr, nullptr};
                    return h.o->accept(&r, 0, &c, nullptr);
                  },
                  P});
  rows.push_back({"reject NULL request", [](Handles& h) { return h.o->reject(nullptr); }, P});
  rows.push_back(
      {"msg_send on a listen handle", [](Handles& h) { return h.o->msg_send(h.listen, &h.loose); }, TI_INVALID_HANDLE});
}

// Memory registration: bad parameters with good handles.
inline void memory_parameter_rows(std::vector<Row>& rows) {
  const ti_status_t P = TI_INVALID_PARAMETER;
  rows.push_back({"reg_virt_mem NULL address",
                  [](Handles& h) {
                    ti_rdma_desc_t d;
                    ti_mem_handle_t m;
                    return h.o->reg_virt_mem(h.ti, h.pd, nullptr, 64, TI_MEM_READ, &d, &m);
                  },
                  P});
  rows.push_back({"reg_virt_mem no bytes",
                  [](Handles& h) {
                    ti_rdma_desc_t d;
                    ti_mem_handle_t m;
                    return h.o->reg_virt_mem(h.ti, h.pd, h.region, 0, TI_MEM_READ, &d, &m);
                  },
                  P});
  rows.push_back({"reg_virt_mem access 7",
                  [](Handles& h) {
                    ti_rdma_desc_t d;
                    ti_mem_handle_t m;
                    return h.o->reg_virt_mem(h.ti, h.pd, h.region, 64, static_cast<ti_access_t>(7), &d, &m);
                  },
                  P});
  rows.push_back({"reg_phys_mem pages not contiguous",
                  [](Handles& h) {
                    uint64_t pages[2] = {8192, 4096 * 7};
                    ti_rdma_desc_t d{};
                    ti_mem_handle_t m;
                    return h.o->reg_phys_mem(h.ti, h.pd, pages, 2, TI_MEM_READ, &d, &m);
                  },
                  P});
  rows.push_back({"reg_phys_mem page not aligned",
                  [](Handles& h) {
                    uint64_t page = 4097;
                    ti_rdma_desc_t d{};
                    ti_mem_handle_t m;
                    return h.o->reg_phys_mem(h.ti, h.pd, &page, 1, TI_MEM_READ, &d, &m);
                  },
                  P});
}

// Pools: bad parameters with good handles.
inline void pool_parameter_rows(std::vector<Row>& rows) {
  const ti_status_t P = TI_INVALID_PARAMETER;
  rows.push_back({"res_pool_create no elements",
                  [](Handles& h) {
                    uint32_t size = 64;
                    ti_res_pool_handle_t p;
                    return h.o->res_pool_create(h.ti, TI_RES_POOL_MSG, 0, 1, &size, 0, &p);
                  },
                  P});
  rows.push_back({"res_pool_create type 5",
                  [](Handles& h) {
                    uint32_t size = 64;
                    ti_res_pool_handle_t p;
                    return h.o->res_pool_create(h.ti, static_cast<ti_res_pool_type_t>(5), 1, 1, &size, 0, &p);
                  },
                  P});
  rows.push_back({"res_pool_create NULL sizes",
                  [](Handles& h) {
                    ti_res_pool_handle_t p;
                    return h.o->res_pool_create(h.ti, TI_RES_POOL_MSG, 1, 1, nullptr, 0, &p);
                  },
                  P});
  rows.push_back({"res_pool_get none",
                  [](Handles& h) {
                    ti_pool_response_t r;
                    return h.o->res_pool_get(h.pool, 0, FALSE, nullptr, nullptr, nullptr, &r);
                  },
                  TI_INVALID_SETTING});
  rows.push_back({"res_pool_get callback and response",
                  [](Handles& h) {
                    ti_pool_response_t r;
                    return h.o->res_pool_get(h.pool, 1, FALSE, no_pool_cb, nullptr, nullptr, &r);
                  },
                  TI_INVALID_SETTING});
  rows.push_back({"res_pool_get neither",
                  [](Handles& h) { return h.o->res_pool_get(h.pool, 1, FALSE, nullptr, nullptr, nullptr, nullptr); },
                  TI_INVALID_SETTING});
  rows.push_back({"res_pool_get more than the pool",
                  [](Handles& h) {
                    ti_pool_response_t r;
                    return h.o->res_pool_get(h.pool, 1000, TRUE, nullptr, nullptr, nullptr, &r);
                  },
                  TI_INVALID_SETTING});
  rows.push_back({"res_pool_put NULL list", [](Handles& h) { return h.o->res_pool_put(h.pool, nullptr); }, P});
  rows.push_back({"res_pool_put a loose element", [](Handles& h) { return h.o->res_pool_put(h.pool, &h.loose); }, P});
  rows.push_back({"res_pool_put an element already free",
                  [](Handles& h) {
                    ti_pool_response_t r;
                    h.o->res_pool_get(h.pool, 1, FALSE, nullptr, nullptr, nullptr, &r);
                    h.o->res_pool_put(h.pool, r.p_element_list);
                    return h.o->res_pool_put(h.pool, r.p_element_list);
                  },
                  P});
  rows.push_back({"res_pool_put into another pool",
                  [](Handles& h) {
                    ti_pool_response_t r;
                    h.o->res_pool_get(h.pool, 1, FALSE, nullptr, nullptr, nullptr, &r);
                    const ti_status_t s = h.o->res_pool_put(h.other_pool, r.p_element_list);
                    h.o->res_pool_put(h.pool, r.p_element_list);
                    return s;
                  },
                  P});
}

// Data transfer and io_ctl: bad parameters with good handles.
inline void data_parameter_rows(std::vector<Row>& rows) {
  const ti_status_t P = TI_INVALID_PARAMETER;
  rows.push_back({"atomic_op operation 7",
                  [](Handles& h) { return h.o->atomic_op(h.listen, static_cast<ti_atomic_op_t>(7), &h.loose); }, P});
  rows.push_back({"io_ctl command 9",
                  [](Handles& h) {
                    uint32_t n = 0;
                    return h.o->io_ctl(h.ti, static_cast<ti_ioctl_t>(9), &n, &h.region);
                  },
                  TI_INVALID_SETTING});
  rows.push_back(
      {"io_ctl NULL size", [](Handles& h) { return h.o->io_ctl(h.ti, TI_GET_CONN_PROFILE, nullptr, &h.region); }, P});
  rows.push_back({"io_ctl short buffer",
                  [](Handles& h) {
                    uint32_t n = 4;
                    return h.o->io_ctl(h.ti, TI_GET_CONN_PROFILE, &n, &h.region);
                  },
                  P});
}

inline void parameter_rows(std::vector<Row>& rows) {
  for (auto part : {instance_parameter_rows, connection_parameter_rows, memory_parameter_rows, pool_parameter_rows,
                    data_parameter_rows})
    part(rows);
}

// Opens one of everything on `load`'s provider, and one of everything of
// an instance destroyed at once (its handles are stale).
inline void open_handles(Handles& h, ti_ops_t* (*load)(void)) {
  h.o = load();
  ASSERT_NE(h.o, nullptr);
  h.node_mem = static_cast<unsigned char*>(nicsim_alloc(4096, 64));
  ti_inet_addr_t me = ip_of_node(nicsim_node_id());
  uint32_t size = 256;
  ti_conn_attr_t a = default_attr();
  // An instance with one of everything, then destroyed: its handles are stale.
  ASSERT_EQ(h.o->create_ti(&h.old_ti), TI_SUCCESS);
  ASSERT_EQ(h.o->create_endpoint(h.old_ti, &me, 7001, &h.old_ep), TI_SUCCESS);
  ASSERT_EQ(h.o->create_pd(h.old_ti, h.old_ep, &h.old_pd), TI_SUCCESS);
  ASSERT_EQ(h.o->create_cq(h.old_ti, h.old_pd, 8, &h.old_cq), TI_SUCCESS);
  ASSERT_EQ(h.o->res_pool_create(h.old_ti, TI_RES_POOL_MSG, 2, 1, &size, 0, &h.old_pool), TI_SUCCESS);
  ti_rdma_desc_t d;
  ASSERT_EQ(h.o->reg_virt_mem(h.old_ti, h.old_pd, h.node_mem, 64, TI_MEM_READ, &d, &h.old_mem), TI_SUCCESS);
  ti_conn_info_t oi{h.old_ep, nullptr, h.old_pd, nullptr, nullptr, nullptr, 0, 0, 0, no_cb, nullptr};
  ASSERT_EQ(h.o->listen(h.old_ti, &a, &oi, nullptr, &h.old_conn), TI_SUCCESS);
  volatile int gone = 0;
  ASSERT_EQ(h.o->destroy_ti(h.old_ti, peer_counted, const_cast<int*>(&gone)), TI_SUCCESS);
  ASSERT_TRUE(wait_until(gone, 1));
  // The live instance.
  ASSERT_EQ(h.o->create_ti(&h.ti), TI_SUCCESS);
  ASSERT_EQ(h.o->create_endpoint(h.ti, &me, 7000, &h.ep), TI_SUCCESS);
  ASSERT_EQ(h.o->create_pd(h.ti, h.ep, &h.pd), TI_SUCCESS);
  ASSERT_EQ(h.o->create_cq(h.ti, h.pd, 8, &h.cq), TI_SUCCESS);
  ASSERT_EQ(h.o->res_pool_create(h.ti, TI_RES_POOL_MSG, 4, 1, &size, 0, &h.pool), TI_SUCCESS);
  ASSERT_EQ(h.o->res_pool_create(h.ti, TI_RES_POOL_MSG, 4, 1, &size, 0, &h.other_pool), TI_SUCCESS);
  ASSERT_EQ(h.o->reg_virt_mem(h.ti, h.pd, h.node_mem + 64, 64, TI_MEM_READ, &d, &h.mem), TI_SUCCESS);
  ti_conn_info_t li{h.ep, nullptr, h.pd, nullptr, nullptr, nullptr, 0, 0, 0, no_cb, nullptr};
  ASSERT_EQ(h.o->listen(h.ti, &a, &li, nullptr, &h.listen), TI_SUCCESS);
}

// After destroy_ti: the registered memory goes.
inline void free_handles(Handles& h) {
  nicsim_free(h.node_mem);
  h.node_mem = nullptr;
}

}  // namespace nicsim::ti::testing::input
