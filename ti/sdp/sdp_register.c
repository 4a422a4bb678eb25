/*
 * SDP's exports to transports (the interface's protocol provider entry
 * points): a transport registers its operations vector here when it loads.
 * The vector is the same on every node (each call acts on the calling
 * node), so SDP keeps one.
 */
#include <sdp_ti.h>

#include "ti/sdp/sdp.h"

static ti_ops_t *registered_ops;
static ti_event_cb_t registered_notify;

void SDP_register_transport(ti_ops_t *ops, ti_event_cb_t ti_event_notify)
{
	if (!ops)
		return;
	registered_ops = ops;
	registered_notify = ti_event_notify;
}

void SDP_deregister_transport(ti_ops_t *ops, ti_event_cb_t ti_event_notify)
{
	if (ops == registered_ops && ti_event_notify == registered_notify) {
		registered_ops = 0;
		registered_notify = 0;
	}
}

ti_ops_t *sdp_transport(void)
{
	if (!registered_ops)
		ti_ib_transport_load();
	return registered_ops;
}
