/*
 * dat/dat_platform_specific.h: the basic types of the DAT API (uDAPL 1.1,
 * the DAT Collaborative's specification of 2003), for a Linux platform as
 * the 2003 reference implementation defined them: fixed-size integers,
 * virtual addresses and lengths, handles, the IA address as a struct
 * sockaddr (from <sys/socket.h>).
 *
 * C99 and C++; nothing from the project.
 */
#ifndef DAT_PLATFORM_SPECIFIC_H
#define DAT_PLATFORM_SPECIFIC_H

#include <stddef.h>
#include <sys/socket.h>

typedef unsigned int DAT_UINT32;
typedef unsigned long long DAT_UINT64;
typedef int DAT_COUNT;
typedef void* DAT_PVOID;
typedef char* DAT_NAME_PTR;
typedef DAT_UINT64 DAT_VADDR; /* a virtual address of the consumer */
typedef DAT_UINT64 DAT_VLEN;  /* a length in bytes */

/* The IA address: an IPv4 (or IPv6) socket address. */
typedef struct sockaddr DAT_SOCK_ADDR;
typedef struct sockaddr DAT_SOCK_ADDR6; /* nicsim: IPv4 only, so the same */
typedef DAT_SOCK_ADDR* DAT_IA_ADDRESS_PTR;

typedef DAT_UINT64 DAT_CONN_QUAL; /* becomes the IB service id */
typedef DAT_UINT64 DAT_PORT_QUAL;

/* Microseconds (uDAPL 1.1); DAT_TIMEOUT_INFINITE waits for ever. */
typedef DAT_UINT32 DAT_TIMEOUT;
#define DAT_TIMEOUT_INFINITE ((DAT_TIMEOUT)~0u)

#endif /* DAT_PLATFORM_SPECIFIC_H */
