// nicsim's one addition to the CMA, for the SDP Transport Interface's
// provider: the seed's rdma/ib_cma.h has no event for an MRA (its CM
// handles MRAs itself and only waits longer), but the interface reports
// one to a connect's callback (CN_MRA). Kept out of ib_cma.h so that the
// seed's consumers see the events it lists and no others.
#pragma once
#include <functional>

union ib_cma_id;  // rdma/ib_cma.h

namespace nicsim::cm {

// Calls `fn` in the node's interrupt context each time the CM of an
// active side's connection receives an MRA for its REQ (the passive side
// got the REQ and will answer later; the CM waits the MRA's service
// timeout longer), until the connection's final event. Returns 0, or
// -EINVAL (not a live id of an active side on this node, or no fn).
int cma_on_mra(union ib_cma_id* cma_id, std::function<void()> fn);

}  // namespace nicsim::cm
