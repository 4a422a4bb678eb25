// Compile check of the public verbs headers as C++20:
//   g++ -std=c++20 -Wall -Wextra -Werror -I verbs/include -c
//
// Pins values and layouts with static_assert, checks that every verb type
// is a function pointer returning ib_api_status_t, and builds a
// ci_interface_t naming every member in the seed's order (C++20
// designated initializers must follow declaration order, so a member out
// of place stops the build).
#include <iba/ib_ci.h>
#include <iba/ib_types.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace {

// ---- status codes ----
static_assert(IB_SUCCESS == 0);
static_assert(IB_INSUFFICIENT_RESOURCES == 1);
static_assert(IB_INVALID_PARAMETER == 3);
static_assert(IB_NOT_FOUND == 5);
static_assert(IB_UNSUPPORTED == 10);
static_assert(IB_OVERFLOW == 11);
static_assert(IB_INVALID_QP_STATE == 13);
static_assert(IB_RESOURCE_BUSY == 18);
static_assert(IB_INVALID_CA_HANDLE == 29);
static_assert(IB_INVALID_EEC_HANDLE == 32);
static_assert(IB_INVALID_QP_HANDLE == 33);
static_assert(IB_INVALID_RDD_HANDLE == 37);
static_assert(IB_INVALID_MCAST_HANDLE == 38);
static_assert(IB_INVALID_WR_TYPE == 45);
static_assert(IB_INVALID_PORT == 48);
static_assert(IB_UNKNOWN_ERROR == 50);
static_assert(IB_DUPLICATE_CA == 51);
static_assert(IB_QP_INVALID_STATE == IB_INVALID_QP_STATE);
static_assert(IB_INVALID_PD == IB_INVALID_PD_HANDLE);
static_assert(IB_INVALID_PMIG_STATE == IB_INVALID_APM_STATE);
static_assert(IB_INVALID_ADDR_HANDLE == IB_INVALID_AV_HANDLE);
static_assert(IB_BUSY == IB_RESOURCE_BUSY);
static_assert(IB_INVALID_EE_CONTEXT == IB_WCS_INVALID_EECN);

// The X-macro tables have one entry per distinct value, in order.
#define COUNT_ONE(name, value) +1
static_assert(0 IB_API_STATUS_LIST(COUNT_ONE) == IB_DUPLICATE_CA + 1);
static_assert(0 IB_WC_STATUS_LIST(COUNT_ONE) == IB_WCS_UNKNOWN + 1);
static_assert(0 IB_ASYNC_EVENT_LIST(COUNT_ONE) == IB_AE_UNKNOWN);
#undef COUNT_ONE

// ---- layouts ----
static_assert(sizeof(ib_gid_t) == 16);
static_assert(sizeof(ib_grh_t) == 40);
static_assert(offsetof(ib_grh_t, dest_gid) == 24);
static_assert(sizeof(ib_mad_t) == 24);
static_assert(offsetof(ib_mad_t, attr_id) == 16);
static_assert(MAD_BLOCK_SIZE == 256);
static_assert(sizeof(ci_interface_t::libname) == MAX_LIB_NAME);
static_assert(offsetof(ci_interface_t, guid) == 0);
static_assert(offsetof(ci_interface_t, open_ca) < offsetof(ci_interface_t, local_mad));

// Every type a consumer touches is plain C data.
template <typename... T>
constexpr bool all_standard_layout = (std::is_standard_layout_v<T> && ...);
static_assert(all_standard_layout<ib_gid_t, ib_grh_t, ib_mad_t, ib_event_rec_t, ib_port_cap_t, ib_port_attr_mod_t,
                                  ib_port_attr_t, ib_ca_attr_t, ib_av_attr_t, ib_qp_create_t, ib_qp_attr_t, ib_qp_mod_t,
                                  ib_eec_attr_t, ib_eec_mod_t, ib_local_ds_t, ib_send_wr_t, ib_recv_wr_t, ib_bind_wr_t,
                                  ib_wc_t, ib_mr_create_t, ib_phys_range_t, ib_phys_create_t, ib_mr_attr_t,
                                  ib_async_event_rec_t, ci_umv_buf_t, ci_interface_t, ib_ee_attr_t, ib_qp_query_t>);
static_assert(std::is_same_v<ib_access_ctrl_t, ib_access_t>);
static_assert(std::is_same_v<ib_ee_handle_t, ib_eec_handle_t>);
static_assert(std::is_same_v<ib_qp_state_t, std::uint32_t>);
static_assert(std::is_same_v<ib_net16_t, std::uint16_t> && std::is_same_v<ib_net32_t, std::uint32_t> &&
              std::is_same_v<ib_net64_t, std::uint64_t>);
static_assert(std::is_same_v<boolean_t, int>);
static_assert(sizeof(uintn_t) == sizeof(void*) && sizeof(intn_t) == sizeof(void*));

// ---- verbs: a stub of the right type for any ci_* pointer ----
template <typename F>
struct stub;
template <typename... A>
struct stub<ib_api_status_t (*)(A...)> {
  static ib_api_status_t fn(A...) { return IB_UNSUPPORTED; }
};

template <typename F>
constexpr bool is_verb = false;
template <typename... A>
constexpr bool is_verb<ib_api_status_t (*)(A...)> = true;

static_assert(is_verb<ci_open_ca> && is_verb<ci_query_ca> && is_verb<ci_modify_ca> && is_verb<ci_close_ca> &&
              is_verb<ci_allocate_pd> && is_verb<ci_deallocate_pd> && is_verb<ci_allocate_rdd> &&
              is_verb<ci_deallocate_rdd> && is_verb<ci_create_av> && is_verb<ci_query_av> && is_verb<ci_modify_av> &&
              is_verb<ci_destroy_av> && is_verb<ci_create_qp> && is_verb<ci_create_spl_qp> && is_verb<ci_modify_qp> &&
              is_verb<ci_query_qp> && is_verb<ci_destroy_qp> && is_verb<ci_create_cq> && is_verb<ci_resize_cq> &&
              is_verb<ci_query_cq> && is_verb<ci_destroy_cq> && is_verb<ci_create_eec> && is_verb<ci_query_eec> &&
              is_verb<ci_modify_eec> && is_verb<ci_destroy_eec> && is_verb<ci_register_mr> &&
              is_verb<ci_register_pmr> && is_verb<ci_query_mr> && is_verb<ci_modify_mr> && is_verb<ci_modify_pmr> &&
              is_verb<ci_register_smr> && is_verb<ci_deregister_mr> && is_verb<ci_create_mw> && is_verb<ci_query_mw> &&
              is_verb<ci_bind_mw> && is_verb<ci_destroy_mw> && is_verb<ci_post_send> && is_verb<ci_post_recv> &&
              is_verb<ci_poll_cq> && is_verb<ci_enable_cq_notify> && is_verb<ci_attach_mcast> &&
              is_verb<ci_detach_mcast> && is_verb<ci_local_mad>);

// A few exact signatures, as the seed writes them.
static_assert(
    std::is_same_v<ci_query_ca, ib_api_status_t (*)(ib_ca_handle_t, ib_ca_attr_t*, std::size_t*, ci_umv_buf_t*)>);
static_assert(std::is_same_v<ci_create_cq, ib_api_status_t (*)(ib_pd_handle_t, const void*, std::uint32_t*,
                                                               ib_cq_handle_t*, ci_umv_buf_t*)>);
static_assert(std::is_same_v<ci_poll_cq, ib_api_status_t (*)(ib_cq_handle_t, ib_wc_t**, ib_wc_t**)>);
static_assert(std::is_same_v<ci_async_event_cb_t, void (*)(const ib_event_rec_t*)>);
static_assert(std::is_same_v<decltype(&ib_deregister_ca), ib_api_status_t (*)(const ci_interface_t*)>);

void completion_cb(void*) {}
void async_cb(const ib_event_rec_t*) {}

// Every member named, in the seed's order.
const ci_interface_t g_ci = {
    .guid = 0,
    .vend_id = 0,
    .dev_id = 0,
    .dev_revision = 0,
    .libname = "",
    .version = IB_CI_VERSION,
    .open_ca = stub<ci_open_ca>::fn,
    .query_ca = stub<ci_query_ca>::fn,
    .modify_ca = stub<ci_modify_ca>::fn,
    .close_ca = stub<ci_close_ca>::fn,
    .allocate_pd = stub<ci_allocate_pd>::fn,
    .deallocate_pd = stub<ci_deallocate_pd>::fn,
    .allocate_rdd = stub<ci_allocate_rdd>::fn,
    .deallocate_rdd = stub<ci_deallocate_rdd>::fn,
    .create_av = stub<ci_create_av>::fn,
    .query_av = stub<ci_query_av>::fn,
    .modify_av = stub<ci_modify_av>::fn,
    .destroy_av = stub<ci_destroy_av>::fn,
    .create_qp = stub<ci_create_qp>::fn,
    .create_spl_qp = stub<ci_create_spl_qp>::fn,
    .modify_qp = stub<ci_modify_qp>::fn,
    .query_qp = stub<ci_query_qp>::fn,
    .destroy_qp = stub<ci_destroy_qp>::fn,
    .create_cq = stub<ci_create_cq>::fn,
    .resize_cq = stub<ci_resize_cq>::fn,
    .query_cq = stub<ci_query_cq>::fn,
    .destroy_cq = stub<ci_destroy_cq>::fn,
    .create_eec = stub<ci_create_eec>::fn,
    .query_eec = stub<ci_query_eec>::fn,
    .modify_eec = stub<ci_modify_eec>::fn,
    .destroy_eec = stub<ci_destroy_eec>::fn,
    .register_mr = stub<ci_register_mr>::fn,
    .register_pmr = stub<ci_register_pmr>::fn,
    .query_mr = stub<ci_query_mr>::fn,
    .modify_mr = stub<ci_modify_mr>::fn,
    .modify_pmr = stub<ci_modify_pmr>::fn,
    .register_smr = stub<ci_register_smr>::fn,
    .deregister_mr = stub<ci_deregister_mr>::fn,
    .create_mw = stub<ci_create_mw>::fn,
    .query_mw = stub<ci_query_mw>::fn,
    .bind_mw = stub<ci_bind_mw>::fn,
    .destroy_mw = stub<ci_destroy_mw>::fn,
    .post_send = stub<ci_post_send>::fn,
    .post_recv = stub<ci_post_recv>::fn,
    .poll_cq = stub<ci_poll_cq>::fn,
    .enable_cq_notify = stub<ci_enable_cq_notify>::fn,
    .attach_mcast = stub<ci_attach_mcast>::fn,
    .detach_mcast = stub<ci_detach_mcast>::fn,
    .local_mad = stub<ci_local_mad>::fn,
};

}  // namespace

// Sets fields of the structures a consumer fills most, and calls through
// the interface; returns something so nothing is optimised away.
std::size_t headers_cxx_touch();
std::size_t headers_cxx_touch() {
  ib_local_ds_t ds{};
  ds.lkey = 1;
  ib_send_wr_t wr{};
  wr.wr_type = WR_SEND;
  wr.send_opt = IB_SEND_OPT_SIGNALED | IB_SEND_OPT_INLINE;
  wr.num_ds = 1;
  wr.ds_array = &ds;
  wr.dgrm.ud.remote_qp = cl_hton32(2);
  wr.remote_ops.rkey = 0x1234;
  ib_send_wr_t* failed = nullptr;
  ib_recv_wr_t rwr{};
  rwr.ds_array = &ds;
  ib_recv_wr_t* rfailed = nullptr;
  ib_qp_mod_t mod{};
  mod.req_state = IB_QPS_RTR;
  mod.state.rtr.dest_qp = cl_hton32(7);
  mod.state.rtr.primary_av.conn.path_mtu = IB_MTU_LEN_1024;
  mod.state.rtr.rnr_nak_timeout = IB_RNR_NAK_0_64;
  ib_qp_attr_t attr{};
  ib_wc_t wc{};
  wc.status = IB_WCS_SUCCESS;
  wc.wc_type = IB_WC_RDMA_WRITE;
  ib_wc_t* free_list = &wc;
  ib_wc_t* done_list = nullptr;
  ib_ca_attr_t ca{};
  std::size_t size = sizeof(ca);
  ib_event_rec_t ev{};
  ev.type = IB_AE_PORT_ACTIVE;
  ci_umv_buf_t umv{};
  umv.status = -1;
  ib_async_event_rec_t rec{};
  rec.code = IB_AE_QP_COMM;
  rec.handle.h_qp = nullptr;
  ib_pfn_event_cb_t on_event = [](ib_async_event_rec_t*) {};
  ib_pfn_comp_cb_t on_comp = [](const ib_cq_handle_t, void*) {};
  on_event(&rec);
  on_comp(nullptr, nullptr);
  ci_completion_cb_t ccb = completion_cb;
  ci_async_event_cb_t acb = async_cb;
  ccb(nullptr);
  acb(&ev);

  std::size_t n = 0;
  n += g_ci.post_send(nullptr, &wr, &failed);
  n += g_ci.post_recv(nullptr, &rwr, &rfailed);
  n += g_ci.modify_qp(nullptr, &mod, &attr, &umv);
  n += g_ci.poll_cq(nullptr, &free_list, &done_list);
  n += g_ci.query_ca(nullptr, &ca, &size, nullptr);
  n += g_ci.open_ca(0, ccb, acb, nullptr, nullptr);
  n += g_ci.enable_cq_notify(nullptr, TRUE);
  n += ib_get_err_str(IB_INVALID_QP_HANDLE)[0];
  n += ib_get_wc_status_str(wc.status)[0];
  n += ib_get_async_event_str(ev.type)[0];
  n += cl_ntoh16(cl_hton16(3)) + cl_ntoh64(cl_hton64(4));
  return n + (failed != nullptr) + (done_list != nullptr) + (rfailed != nullptr);
}
