/*
 * A small IPv4 layer over the Elan IP driver (elan3/eip.h): what the node's
 * IP module does above the eip device, reduced to what the eip programs
 * need. IPv4 (no options, no fragmentation: the device carries datagrams
 * up to its dl_max_sdu whole), ICMP echo (answered by the layer itself, as
 * a kernel does), and UDP with bound ports; unicast and broadcast.
 *
 * Addresses come from the node: node n (its ep_nodeid) is 10.0.0.0 + n + 1
 * on the network 10.0.0.0/8, whose broadcast address is 10.255.255.255.
 * There is no ARP: the driver's link address (EIP_ADDRESS) is the node id
 * itself, so the link destination follows from the IP address, and the
 * broadcast address maps to the driver's broadcast (ip_bcast).
 *
 * Datagrams arrive on the driver's IP queue (eip_ip_queue) by either
 * receive path; its service procedure, run by the node's STREAMS thread,
 * checks and demultiplexes them. Counters are MIB-II's (RFC 1213) ip, icmp
 * and udp groups, for the ones this layer can meet.
 */
#ifndef EIP_IP_H
#define EIP_IP_H

#include <elan3/eip.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EIP_IP_HLEN 20 /* IPv4 header without options */
#define EIP_ICMP_HLEN 8
#define EIP_UDP_HLEN 8
#define EIP_IPPROTO_ICMP 1
#define EIP_IPPROTO_UDP 17
/* Bytes needed in front of a transport header for the IP and link headers. */
#define EIP_IP_HEADROOM (EIP_HEADER_SIZE + EIP_IP_HLEN)
/* The largest UDP payload or ICMP echo data: one datagram of dl_max_sdu. */
#define EIP_UDP_MAXDATA (EIP_MAX_SDU - EIP_IP_HLEN - EIP_UDP_HLEN)
#define EIP_ICMP_MAXDATA (EIP_MAX_SDU - EIP_IP_HLEN - EIP_ICMP_HLEN)

#define EIP_IP_NET 0x0a000000u       /* 10.0.0.0/8 */
#define EIP_IP_NETMASK 0xff000000u
#define EIP_IP_BROADCAST 0x0affffffu /* 10.255.255.255 */

/* A UDP socket's receive queue holds up to this many bytes; datagrams
 * beyond it are dropped (udpInErrors), as a full socket buffer does. */
#define EIP_UDP_RCVBUF (4u << 20)

/* MIB-II counters, one list: name and meaning. */
#define EIP_IP_MIB_COUNTERS(X)                                                         \
    X(ipInReceives, "datagrams received from the device")                             \
    X(ipInHdrErrors, "bad version, length or header checksum")                        \
    X(ipInAddrErrors, "not addressed to this node nor broadcast")                     \
    X(ipInUnknownProtos, "a protocol other than ICMP and UDP")                        \
    X(ipInDiscards, "no memory to make a received message one block")               \
    X(ipInDelivers, "datagrams given to ICMP or UDP")                                 \
    X(ipOutRequests, "datagrams handed to the device")                                \
    X(ipOutNoRoutes, "destination outside 10.0.0.0/8")                                \
    X(ipOutDiscards, "no room in front of the data for the headers")                  \
    X(icmpInMsgs, "ICMP messages received")                                           \
    X(icmpInErrors, "ICMP messages too short or with a bad checksum")                 \
    X(icmpInEchos, "echo requests received (each answered)")                          \
    X(icmpInEchoReps, "echo replies received")                                        \
    X(icmpOutMsgs, "ICMP messages sent")                                              \
    X(icmpOutEchos, "echo requests sent")                                             \
    X(icmpOutEchoReps, "echo replies sent")                                           \
    X(udpInDatagrams, "UDP datagrams delivered to a socket")                          \
    X(udpNoPorts, "UDP datagrams for a port no socket is bound to")                   \
    X(udpInErrors, "UDP datagrams malformed, with a bad checksum, or over the rcvbuf") \
    X(udpOutDatagrams, "UDP datagrams sent")

typedef struct eip_ip_mib {
#define EIP_IP_MIB_FIELD(name, doc) uint64_t name;
    EIP_IP_MIB_COUNTERS(EIP_IP_MIB_FIELD)
#undef EIP_IP_MIB_FIELD
} EIP_IP_MIB;

struct eip_ipif;

typedef struct eip_udp {
    struct eip_ipif *u_ipif;
    uint16_t u_port;
    queue_t u_rq; /* datagrams for the port, waiting for eip_udp_recv */
    struct eip_udp *u_next;
} EIP_UDP;

typedef struct eip_ipif {
    EIP_DEV *ip_dev;
    queue_t *ip_inq;        /* the driver's IP queue; its service procedure is IP input */
    uint32_t ip_addr;       /* this node's address */
    uint16_t ip_id;         /* identification of the next datagram */
    queue_t ip_echoreps;    /* echo replies, waiting for eip_icmp_echo_reply */
    EIP_UDP *ip_udp;        /* bound sockets */
    EIP_IP_MIB ip_mib;
} EIP_IPIF;

/* Node n's address, and the node of an address: -1 for the broadcast
 * address, -2 outside the network. */
uint32_t eip_ip_addr_of(int node);
int eip_ip_node_of(uint32_t addr);

/* Binds IP to the device (its IP queue and fast path). NULL on failure. */
EIP_IPIF *eip_ip_attach(EIP_DEV *dev);
/* Unbinds: closes every socket, frees what waits. The device stays. */
void eip_ip_detach(EIP_IPIF *ip);

/* A message with room for `len` bytes of data at b_rptr (b_wptr = b_rptr)
 * and the transport, IP and link headers in front. NULL: no memory. */
mblk_t *eip_ip_alloc(uint32_t len);

/* UDP. eip_udp_send takes the data in `mp` (from eip_ip_alloc), waits while
 * the device's write queue is flow-controlled, and sends it; 0, or -1 when
 * it could not (counted, `mp` freed). eip_udp_recv waits up to timeout_ns
 * (0: forever) and returns a datagram with b_rptr at its data, its source
 * in *src and *sport (either may be NULL); NULL on timeout. */
EIP_UDP *eip_udp_bind(EIP_IPIF *ip, uint16_t port);
void eip_udp_unbind(EIP_UDP *u);
int eip_udp_send(EIP_UDP *u, uint32_t dst, uint16_t dport, mblk_t *mp);
mblk_t *eip_udp_recv(EIP_UDP *u, uint64_t timeout_ns, uint32_t *src, uint16_t *sport);

/* ICMP echo: sends a request carrying the data in `mp`; a reply comes back
 * with b_rptr at its data, and its source, identifier and sequence number. */
int eip_icmp_echo(EIP_IPIF *ip, uint32_t dst, uint16_t id, uint16_t seq, mblk_t *mp);
mblk_t *eip_icmp_echo_reply(EIP_IPIF *ip, uint64_t timeout_ns, uint32_t *src, uint16_t *id, uint16_t *seq);

/* Reports every nonzero driver counter (EIP_STATS, "<prefix>eip.<name>")
 * and MIB-II counter ("<prefix>mib.<name>") as results of the program. */
void eip_ip_report(EIP_IPIF *ip, const char *prefix);

/* The node kernel's Internet checksum: the ones'-complement sum of `len`
 * bytes (as big-endian 16-bit words) added to `sum`, folded to 16 bits and
 * not complemented. Charged to the CPU as a pass over the bytes. */
uint32_t nicsim_kernel_cksum(const void *p, size_t len, uint32_t sum);

#ifdef __cplusplus
}
#endif

#endif /* EIP_IP_H */
