// The seed's ib_cma.h exactly as written (seed/ib_cma.h) and the kernel
// verbs compile as C++ too. The seed has no extern "C", so a C++ consumer
// of the verbatim text wraps it; nicsim's rdma/ib_cma.h carries the guard.
#include <rdma/ib_verbs.h>
extern "C" {
#include "seed/ib_cma.h"
}

static_assert(sizeof(__be64) == 8);
static_assert(IB_CMA_EVENT_UNREACHABLE == 3);
static_assert(IB_QOS_PREMIUM == 8);
static_assert(IB_CONNECT_MULTIPATH_FLAG == 1);
static_assert(IB_QPT_GSI == 1 && IB_QPT_RC == 2 && IB_QPT_UD == 4);
static_assert(IB_WR_SEND == 2 && IB_WR_ATOMIC_FETCH_AND_ADD == 6);
static_assert(IB_ACCESS_REMOTE_READ == 4);
static_assert(IB_MTU_2048 == 4);

int cm_headers_check_cxx(ib_qp* qp) {
  ib_cma_conn conn{};
  conn.qp = qp;
  ib_cma_id id{};
  return ib_cma_connect(&conn, &id) + ib_cma_disconnect(qp, &id);
}
