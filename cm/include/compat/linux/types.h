/*
 * linux/types.h (compat): the kernel's fixed-width integer names that the
 * 2.6.13-era InfiniBand kernel headers use (u8..u64, __u8..__u64, the
 * big-endian annotations __be16/__be32/__be64). Self-contained: it includes
 * no system header. C99 and C++.
 */
#ifndef NICSIM_COMPAT_LINUX_TYPES_H
#define NICSIM_COMPAT_LINUX_TYPES_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

/* Values in network (big-endian) byte order. */
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;

#endif /* NICSIM_COMPAT_LINUX_TYPES_H */
