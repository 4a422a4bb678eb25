/*
 * SDP's exports to transports (the interface's protocol provider entry
 * points): a transport registers its operations vector here when it loads.
 * Each node keeps its own registration (sdp_node_state): a transport
 * loads, and may go, per node.
 */
#include <sdp_ti.h>

#include "ti/sdp/sdp.h"
#include "ti/sdp/sdp_sock.h"

void SDP_register_transport(ti_ops_t *ops, ti_event_cb_t ti_event_notify)
{
	struct sdp_node *n = sdp_node_state();
	if (!ops || !n)
		return;
	n->ops = ops;
	n->notify = ti_event_notify;
}

void SDP_deregister_transport(ti_ops_t *ops, ti_event_cb_t ti_event_notify)
{
	struct sdp_node *n = sdp_node_state();
	if (n && ops == n->ops && ti_event_notify == n->notify) {
		n->ops = 0;
		n->notify = 0;
	}
}

ti_ops_t *sdp_transport(void)
{
	struct sdp_node *n = sdp_node_state();
	if (!n)
		return 0;
	/* The node's NIC decides: the IB transport on a node with an HCA, the
	 * Elan transport on a node with an Elan (the scenario's choice). */
	if (!n->ops && !ti_ib_transport_load())
		ti_elan_transport_load();
	return n->ops;
}
