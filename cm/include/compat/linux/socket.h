/*
 * linux/socket.h (compat): the generic socket address of the kernel
 * (struct sockaddr, sa_family_t) and the address families the connection
 * manager abstraction takes (AF_INET). IPv4 addresses are in linux/in.h.
 * Self-contained (no system header), so a consumer of rdma/ib_cma.h sees
 * the kernel's names. C99 and C++.
 */
#ifndef NICSIM_COMPAT_LINUX_SOCKET_H
#define NICSIM_COMPAT_LINUX_SOCKET_H

#include <linux/types.h>

typedef unsigned short sa_family_t;

#ifndef AF_UNSPEC
#define AF_UNSPEC 0
#endif
#ifndef AF_INET
#define AF_INET 2
#endif

struct sockaddr {
	sa_family_t sa_family; /* AF_INET: the rest is a struct sockaddr_in */
	char sa_data[14];
};

#endif /* NICSIM_COMPAT_LINUX_SOCKET_H */
