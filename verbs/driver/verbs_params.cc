// CPU cost classes of the verbs driver, in the "host" scope as
// cost.verbs_<name> (charged with Host::charge). Defaults describe the 2003
// node of host_params.cc (2.4 GHz Xeon, 533 MHz FSB, DDR266) running a
// Mellanox-style kernel verbs provider (THH/VAPI, later mthca): the fast
// path (post, poll, arm) is a few hundred instructions plus cache misses on
// lines the HCA wrote; context management is dominated by the HCA's own
// command latency (nic.hca.command_latency), which is not CPU time.
#include "core/params.h"

namespace nicsim::verbs {
namespace {

const ParamRegistration verbs_costs(
    "host", "",
    {
        {"cost.verbs_post_send", UnitKind::Time, "150ns", "0ps", "1s", {},
         "ci_post_send, per call: QP lock, WR checks, doorbell preparation; the WQE bytes the "
         "CPU writes into the ring are charged on top at copy_bandwidth"},
        {"cost.verbs_post_recv", UnitKind::Time, "120ns", "0ps", "1s", {},
         "ci_post_recv, per call (plus the receive WQE bytes at copy_bandwidth)"},
        {"cost.verbs_bind_mw", UnitKind::Time, "250ns", "0ps", "1s", {},
         "ci_bind_mw: checks and the bind WQE (plus its bytes at copy_bandwidth)"},
        {"cost.verbs_poll_cq", UnitKind::Time, "100ns", "0ps", "1s", {},
         "ci_poll_cq, per call: CQ lock and the look at the next entry (an empty poll costs this)"},
        {"cost.verbs_poll_cqe", UnitKind::Time, "90ns", "0ps", "1s", {},
         "ci_poll_cq, per completion returned: the cache miss on the CQE the HCA wrote by DMA, "
         "conversion to ib_wc_t, work queue bookkeeping"},
        {"cost.verbs_arm_cq", UnitKind::Time, "80ns", "0ps", "1s", {},
         "ci_enable_cq_notify: building the arm doorbell"},
        {"cost.verbs_eq_event", UnitKind::Time, "250ns", "0ps", "1s", {},
         "interrupt handler, per event queue entry: read (cache miss), decode, dispatch to the "
         "consumer's callback"},
        {"cost.verbs_cmd", UnitKind::Time, "1us", "0ps", "1s", {},
         "per HCA command: take the HCR lock, fill the mailbox (its bytes at copy_bandwidth) "
         "and the HCR; the wait for the HCA is simulated time, not CPU"},
        {"cost.verbs_open_ca", UnitKind::Time, "20us", "0ps", "1s", {},
         "ci_open_ca: an open instance with its callbacks"},
        {"cost.verbs_query_ca", UnitKind::Time, "3us", "0ps", "1s", {},
         "ci_query_ca: assembling the attribute structure (plus QUERY_HCA and the PortInfo, "
         "GUIDInfo and P_KeyTable MADs)"},
        {"cost.verbs_modify_ca", UnitKind::Time, "1us", "0ps", "1s", {}, "ci_modify_ca (plus SET_IB/CLOSE_IB)"},
        {"cost.verbs_close_ca", UnitKind::Time, "10us", "0ps", "1s", {}, "ci_close_ca"},
        {"cost.verbs_pd", UnitKind::Time, "800ns", "0ps", "1s", {}, "ci_allocate_pd / ci_deallocate_pd"},
        {"cost.verbs_av", UnitKind::Time, "400ns", "0ps", "1s", {},
         "address vector create/query/modify/destroy (driver memory only)"},
        {"cost.verbs_create_qp", UnitKind::Time, "6us", "0ps", "1s", {},
         "ci_create_qp / ci_create_spl_qp: QPN, ring allocation and zeroing, bookkeeping"},
        {"cost.verbs_modify_qp", UnitKind::Time, "2us", "0ps", "1s", {},
         "ci_modify_qp: attribute table checks and the QP context mailbox (plus MODIFY_QP)"},
        {"cost.verbs_query_qp", UnitKind::Time, "1us", "0ps", "1s", {}, "ci_query_qp (plus QUERY_QP)"},
        {"cost.verbs_destroy_qp", UnitKind::Time, "4us", "0ps", "1s", {}, "ci_destroy_qp (plus MODIFY_QP to reset)"},
        {"cost.verbs_create_cq", UnitKind::Time, "4us", "0ps", "1s", {}, "ci_create_cq (plus SW2HW_CQ)"},
        {"cost.verbs_resize_cq", UnitKind::Time, "4us", "0ps", "1s", {},
         "ci_resize_cq (plus copying the unconsumed entries at copy_bandwidth, and RESIZE_CQ)"},
        {"cost.verbs_query_cq", UnitKind::Time, "200ns", "0ps", "1s", {}, "ci_query_cq"},
        {"cost.verbs_destroy_cq", UnitKind::Time, "3us", "0ps", "1s", {}, "ci_destroy_cq (plus HW2SW_CQ)"},
        {"cost.verbs_reg_mr", UnitKind::Time, "5us", "0ps", "1s", {},
         "region registration or re-registration: MPT entry and page list (8 bytes per page at "
         "copy_bandwidth), plus WRITE_MTT and SW2HW_MPT"},
        {"cost.verbs_pin_page", UnitKind::Time, "250ns", "0ps", "1s", {},
         "pinning one 4 KiB page of a consumer buffer that is not node memory (get_user_pages)"},
        {"cost.verbs_dereg_mr", UnitKind::Time, "3us", "0ps", "1s", {}, "ci_deregister_mr (plus HW2SW_MPT)"},
        {"cost.verbs_query_mr", UnitKind::Time, "200ns", "0ps", "1s", {}, "ci_query_mr / ci_query_mw"},
        {"cost.verbs_create_mw", UnitKind::Time, "2us", "0ps", "1s", {}, "ci_create_mw (plus SW2HW_MPT)"},
        {"cost.verbs_destroy_mw", UnitKind::Time, "2us", "0ps", "1s", {}, "ci_destroy_mw (plus HW2SW_MPT)"},
        {"cost.verbs_mcast", UnitKind::Time, "1us", "0ps", "1s", {},
         "ci_attach_mcast / ci_detach_mcast (plus ATTACH_MCG/DETACH_MCG)"},
        {"cost.verbs_local_mad", UnitKind::Time, "1us", "0ps", "1s", {},
         "ci_local_mad: copying the MAD in and out (plus MAD_IFC)"},
    });

}  // namespace
}  // namespace nicsim::verbs
