/*
 * linux/in6.h, the part the SDP Transport Interface names: struct in6_addr
 * with the kernel's union members (s6_addr, s6_addr16, s6_addr32).
 * Self-contained, C99 and C++; the kernel's own layout.
 */
#ifndef NICSIM_COMPAT_LINUX_IN6_H
#define NICSIM_COMPAT_LINUX_IN6_H

#include <linux/types.h>

struct in6_addr {
  union {
    __u8 u6_addr8[16];
    __be16 u6_addr16[8];
    __be32 u6_addr32[4];
  } in6_u;
#define s6_addr in6_u.u6_addr8
#define s6_addr16 in6_u.u6_addr16
#define s6_addr32 in6_u.u6_addr32
};

#endif /* NICSIM_COMPAT_LINUX_IN6_H */
