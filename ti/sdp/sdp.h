/*
 * SDP stream sockets over the SDP Transport Interface (sdp_ti.h): the
 * socket calls nicsim programs use, and the wire protocol's constants.
 */
#ifndef NICSIM_SDP_H
#define NICSIM_SDP_H

#include <stddef.h>
#include <stdint.h>
#include <sdp_ti.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The transport SDP uses on this node (loads the IB transport if none
 * registered yet); NULL without one. */
ti_ops_t* sdp_transport(void);

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_SDP_H */
