/*
 * nicsim -- finding the verbs provider of the calling node.
 *
 * On a node whose NIC is the InfiniBand HCA (`nic: "hca"`), nicsim's verbs
 * driver fills a ci_interface_t (iba/ib_ci.h) and registers it with
 * ib_register_ca.  A consumer running on a simulated thread of that node
 * gets it here, then calls the verbs exactly as the seed specifies:
 *
 *     const ci_interface_t *ci = nicsim_ci_interface();
 *     ib_ca_handle_t h_ca;
 *     if (!ci || ci->open_ca(ci->guid, my_comp_cb, my_async_cb, ctx, &h_ca))
 *         ...
 *
 * Plain C99 and C++; needs only iba/ib_ci.h.
 *
 * Conventions of this provider where the seed leaves a choice:
 *  - L_Keys are host-order integers (as ib_local_ds_t.lkey takes them);
 *    R_Keys are returned in wire (network) order and are taken in wire
 *    order in remote_ops.rkey and ib_bind_wr_t.current_rkey, as the seed
 *    asks, so a consumer passes them to its peer unswapped.
 *  - Completion and asynchronous event callbacks run in the node's
 *    interrupt context: they may poll and re-arm CQs and post work
 *    requests, but not block (ci_close_ca, ci_destroy_qp/cq/eec and every
 *    verb that runs an HCA command block; the host reports such a call).
 *  - ib_register_ca / ib_deregister_ca work per node (each node is its own
 *    host).  Both return IB_INVALID_PARAMETER for a NULL interface or when
 *    called outside a simulated thread; ib_deregister_ca also for an
 *    interface that is not registered on the calling node.
 */
#ifndef NICSIM_IBA_NICSIM_CA_H
#define NICSIM_IBA_NICSIM_CA_H

#include "ib_ci.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The verbs provider registered on the calling thread's node, or NULL if
 * the node has no HCA (its host bus probe bound no verbs driver), the
 * caller is not a simulated thread of a node, or the HCA failed to
 * initialise.  The first call on a node loads the driver
 * (reads the HCA's identity and capabilities, sets up its event queue,
 * special QPs and ports: some tens of microseconds of simulated time on
 * the calling thread); it must not be made from interrupt context.
 */
const ci_interface_t *nicsim_ci_interface(void);

/* The GUID of the calling node's HCA, in network order: the value of
 * ci_interface_t.guid, which ci_open_ca takes.  0 when there is none. */
ib_net64_t nicsim_ca_guid(void);

/* nicsim: the same CA for a subnet manager running as a kernel agent beside
 * the node's consumer. Its open_ca gives a second open instance, reserved
 * for the SM (one per CA); everything else is the consumer's interface.
 * Port events go to both instances. */
const ci_interface_t *nicsim_sm_ci_interface(void);

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_IBA_NICSIM_CA_H */
