/*
 * linux/in.h (compat): IPv4 socket addresses as the kernel declares them.
 * sin_port and sin_addr are in network byte order. C99 and C++.
 */
#ifndef NICSIM_COMPAT_LINUX_IN_H
#define NICSIM_COMPAT_LINUX_IN_H

#include <linux/socket.h>

struct in_addr {
	__be32 s_addr;
};

struct sockaddr_in {
	sa_family_t sin_family; /* AF_INET */
	__be16 sin_port;
	struct in_addr sin_addr;
	unsigned char __pad[8]; /* to the size of struct sockaddr */
};

#endif /* NICSIM_COMPAT_LINUX_IN_H */
