// The kernel verbs (rdma/ib_verbs.h) and the CMA (rdma/ib_cma.h) as the
// provider sees them: inside namespace kib, because their compat headers
// declare struct sockaddr, which the DAT headers take from <sys/socket.h>.
// The functions have C linkage, so kib::ib_post_send is the kernel verbs'
// ib_post_send. Include after <dat/udat.h>.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

namespace kib {
#include <linux/in.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cma.h>
}  // namespace kib
