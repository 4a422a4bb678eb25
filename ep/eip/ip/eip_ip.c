/*
 * The IPv4 layer over the Elan IP driver (eip_ip.h): output builds the IP
 * header in the room in front of the data and hands the datagram to the
 * driver's write queue; input is the service procedure of the driver's IP
 * queue, run by the node's STREAMS thread, which checks each datagram and
 * gives it to ICMP (echo requests answered at once) or to a UDP socket.
 * Header fields are in network byte order, written byte by byte.
 */
#include "ep/eip/ip/eip_ip.h"

#include <nicsim/app.h>
#include <stdio.h>
#include <string.h>

#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8
#define IP_TTL 64
#define IP_DF 0x4000 /* don't fragment: there is no fragmentation here */

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void put16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}
static void put32(unsigned char *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v);
}

uint32_t eip_ip_addr_of(int node) { return EIP_IP_NET + (uint32_t)node + 1u; }

int eip_ip_node_of(uint32_t addr)
{
    if (addr == EIP_IP_BROADCAST || addr == 0xffffffffu)
        return -1;
    if ((addr & EIP_IP_NETMASK) != EIP_IP_NET || (addr & ~EIP_IP_NETMASK) == 0)
        return -2;
    return (int)(addr - EIP_IP_NET) - 1;
}

mblk_t *eip_ip_alloc(uint32_t len)
{
    /* transport header, IP header and link header in front of the data */
    const uint32_t room = EIP_IP_HEADROOM + EIP_UDP_HLEN;
    mblk_t *mp = allocb(room + len, BPRI_MED);
    if (mp) {
        mp->b_rptr += room;
        mp->b_wptr = mp->b_rptr;
    }
    return mp;
}

/* ---- output ---------------------------------------------------------------- */

/* `mp` starts at the transport header: prepends the IP header and the link
 * header, and hands the datagram to the driver. */
static int ip_output(EIP_IPIF *ip, mblk_t *mp, uint32_t dst, uint8_t proto)
{
    const int node = eip_ip_node_of(dst);
    const uint32_t len = (uint32_t)msgdsize(mp) + EIP_IP_HLEN;
    unsigned char *h;
    if (node == -2) {
        ip->ip_mib.ipOutNoRoutes++;
        freemsg(mp);
        return -1;
    }
    if (mp->b_rptr - mp->b_datap->db_base < EIP_IP_HEADROOM || len > EIP_MAX_SDU) {
        ip->ip_mib.ipOutDiscards++;
        freemsg(mp);
        return -1;
    }
    mp->b_rptr -= EIP_IP_HLEN;
    h = mp->b_rptr;
    h[0] = 0x45; /* version 4, five words */
    h[1] = 0;
    put16(h + 2, len);
    put16(h + 4, ip->ip_id++);
    put16(h + 6, IP_DF);
    h[8] = IP_TTL;
    h[9] = proto;
    put16(h + 10, 0);
    put32(h + 12, ip->ip_addr);
    put32(h + 16, dst);
    put16(h + 10, ~nicsim_kernel_cksum(h, EIP_IP_HLEN, 0));
    eip_fill_header(ip->ip_dev, mp, node, ETHERTYPE_IP);
    ip->ip_mib.ipOutRequests++;
    eip_output(ip->ip_dev, mp);
    return 0;
}

/* The UDP checksum's pseudo-header sum. */
static uint32_t udp_pseudo(uint32_t src, uint32_t dst, uint32_t ulen)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + EIP_IPPROTO_UDP + ulen;
}

int eip_udp_send(EIP_UDP *u, uint32_t dst, uint16_t dport, mblk_t *mp)
{
    EIP_IPIF *ip = u->u_ipif;
    const uint32_t ulen = (uint32_t)msgdsize(mp) + EIP_UDP_HLEN;
    uint32_t sum;
    unsigned char *h;
    if (mp->b_rptr - mp->b_datap->db_base < EIP_IP_HEADROOM + EIP_UDP_HLEN) {
        ip->ip_mib.ipOutDiscards++;
        freemsg(mp);
        return -1;
    }
    mp->b_rptr -= EIP_UDP_HLEN;
    h = mp->b_rptr;
    put16(h, u->u_port);
    put16(h + 2, dport);
    put16(h + 4, ulen);
    put16(h + 6, 0);
    sum = (uint16_t)~nicsim_kernel_cksum(h, ulen, udp_pseudo(ip->ip_addr, dst, ulen));
    put16(h + 6, sum ? sum : 0xffff); /* 0 would mean "no checksum" */
    /* a socket's send blocks while the driver's queue is full */
    while (!canput(&ip->ip_dev->dev_wq))
        nicsim_sleep_ns(1000);
    ip->ip_mib.udpOutDatagrams++;
    return ip_output(ip, mp, dst, EIP_IPPROTO_UDP);
}

/* Sends an ICMP message whose header `mp` starts with (checksum filled in). */
static int icmp_send(EIP_IPIF *ip, mblk_t *mp, uint32_t dst)
{
    unsigned char *h = mp->b_rptr;
    put16(h + 2, 0);
    put16(h + 2, ~nicsim_kernel_cksum(h, msgdsize(mp), 0));
    ip->ip_mib.icmpOutMsgs++;
    return ip_output(ip, mp, dst, EIP_IPPROTO_ICMP);
}

int eip_icmp_echo(EIP_IPIF *ip, uint32_t dst, uint16_t id, uint16_t seq, mblk_t *mp)
{
    unsigned char *h;
    if (mp->b_rptr - mp->b_datap->db_base < EIP_IP_HEADROOM + EIP_ICMP_HLEN) {
        ip->ip_mib.ipOutDiscards++;
        freemsg(mp);
        return -1;
    }
    mp->b_rptr -= EIP_ICMP_HLEN;
    h = mp->b_rptr;
    h[0] = ICMP_ECHO;
    h[1] = 0;
    put16(h + 4, id);
    put16(h + 6, seq);
    ip->ip_mib.icmpOutEchos++;
    return icmp_send(ip, mp, dst);
}

/* ---- input ----------------------------------------------------------------- */

/* ICMP: an echo request is answered with its own buffer, the header turned
 * round; a reply waits for eip_icmp_echo_reply (with its IP header). */
static void icmp_input(EIP_IPIF *ip, mblk_t *mp, uint32_t hlen)
{
    unsigned char *h = mp->b_rptr + hlen;
    const uint32_t len = (uint32_t)msgdsize(mp) - hlen;
    ip->ip_mib.icmpInMsgs++;
    if (len < EIP_ICMP_HLEN || nicsim_kernel_cksum(h, len, 0) != 0xffff) {
        ip->ip_mib.icmpInErrors++;
        freemsg(mp);
        return;
    }
    ip->ip_mib.ipInDelivers++;
    if (h[0] == ICMP_ECHO) {
        const uint32_t src = get32(mp->b_rptr + 12);
        ip->ip_mib.icmpInEchos++;
        mp->b_rptr = h;
        h[0] = ICMP_ECHOREPLY;
        ip->ip_mib.icmpOutEchoReps++;
        icmp_send(ip, mp, src);
    } else if (h[0] == ICMP_ECHOREPLY) {
        ip->ip_mib.icmpInEchoReps++;
        putq(&ip->ip_echoreps, mp);
    } else {
        freemsg(mp);
    }
}

static EIP_UDP *udp_lookup(EIP_IPIF *ip, uint16_t port)
{
    EIP_UDP *u;
    for (u = ip->ip_udp; u; u = u->u_next)
        if (u->u_port == port)
            return u;
    return NULL;
}

/* UDP: checked and queued on the socket bound to the destination port. */
static void udp_input(EIP_IPIF *ip, mblk_t *mp, uint32_t hlen)
{
    unsigned char *h = mp->b_rptr + hlen;
    const uint32_t len = (uint32_t)msgdsize(mp) - hlen;
    const uint32_t src = get32(mp->b_rptr + 12), dst = get32(mp->b_rptr + 16);
    EIP_UDP *u;
    if (len < EIP_UDP_HLEN || get16(h + 4) != len ||
        (get16(h + 6) != 0 && nicsim_kernel_cksum(h, len, udp_pseudo(src, dst, len)) != 0xffff)) {
        ip->ip_mib.udpInErrors++;
        freemsg(mp);
        return;
    }
    if ((u = udp_lookup(ip, get16(h + 2))) == NULL) {
        ip->ip_mib.udpNoPorts++;
        freemsg(mp);
        return;
    }
    if (!canput(&u->u_rq)) {
        ip->ip_mib.udpInErrors++;
        freemsg(mp);
        return;
    }
    ip->ip_mib.ipInDelivers++;
    ip->ip_mib.udpInDatagrams++;
    putq(&u->u_rq, mp);
}

/* Checks one datagram (one block, trimmed to its total length) and gives
 * it to its protocol. */
static void ip_input(EIP_IPIF *ip, mblk_t *mp)
{
    uint32_t len, hlen, tot, dst;
    unsigned char *h;
    ip->ip_mib.ipInReceives++;
    if (mp->b_cont) {
        mblk_t *one = copymsg(mp);
        freemsg(mp);
        if ((mp = one) == NULL) {
            ip->ip_mib.ipInDiscards++;
            return;
        }
    }
    h = mp->b_rptr;
    len = (uint32_t)msgdsize(mp);
    hlen = len ? (uint32_t)(h[0] & 15) * 4 : 0;
    if (len < EIP_IP_HLEN || h[0] >> 4 != 4 || hlen < EIP_IP_HLEN || hlen > len ||
        (tot = get16(h + 2)) < hlen || tot > len || nicsim_kernel_cksum(h, hlen, 0) != 0xffff) {
        ip->ip_mib.ipInHdrErrors++;
        freemsg(mp);
        return;
    }
    dst = get32(h + 16);
    if (dst != ip->ip_addr && eip_ip_node_of(dst) != -1) {
        ip->ip_mib.ipInAddrErrors++;
        freemsg(mp);
        return;
    }
    mp->b_wptr = mp->b_rptr + tot;
    if (h[9] == EIP_IPPROTO_ICMP)
        icmp_input(ip, mp, hlen);
    else if (h[9] == EIP_IPPROTO_UDP)
        udp_input(ip, mp, hlen);
    else {
        ip->ip_mib.ipInUnknownProtos++;
        freemsg(mp);
    }
}

/* The service procedure of the driver's IP queue. */
static int ip_rsrv(queue_t *q)
{
    EIP_IPIF *ip = (EIP_IPIF *)q->q_ptr;
    mblk_t *mp;
    while ((mp = getq(q)) != NULL)
        ip_input(ip, mp);
    return 0;
}

/* ---- sockets and replies ------------------------------------------------------ */

EIP_UDP *eip_udp_bind(EIP_IPIF *ip, uint16_t port)
{
    EIP_UDP *u;
    if (port == 0 || udp_lookup(ip, port))
        return NULL;
    if ((u = (EIP_UDP *)kmem_zalloc(sizeof *u, KM_SLEEP)) == NULL)
        return NULL;
    u->u_ipif = ip;
    u->u_port = port;
    u->u_rq.q_hiwat = EIP_UDP_RCVBUF;
    u->u_next = ip->ip_udp;
    ip->ip_udp = u;
    return u;
}

void eip_udp_unbind(EIP_UDP *u)
{
    EIP_UDP **p;
    mblk_t *mp;
    for (p = &u->u_ipif->ip_udp; *p; p = &(*p)->u_next)
        if (*p == u) {
            *p = u->u_next;
            break;
        }
    while ((mp = getq(&u->u_rq)) != NULL)
        freemsg(mp);
    kmem_free(u, sizeof *u);
}

mblk_t *eip_udp_recv(EIP_UDP *u, uint64_t timeout_ns, uint32_t *src, uint16_t *sport)
{
    mblk_t *mp = eip_getq_wait(&u->u_rq, timeout_ns);
    uint32_t hlen;
    if (!mp)
        return NULL;
    hlen = (uint32_t)(mp->b_rptr[0] & 15) * 4;
    if (src)
        *src = get32(mp->b_rptr + 12);
    if (sport)
        *sport = get16(mp->b_rptr + hlen);
    mp->b_rptr += hlen + EIP_UDP_HLEN;
    return mp;
}

mblk_t *eip_icmp_echo_reply(EIP_IPIF *ip, uint64_t timeout_ns, uint32_t *src, uint16_t *id, uint16_t *seq)
{
    mblk_t *mp = eip_getq_wait(&ip->ip_echoreps, timeout_ns);
    unsigned char *h;
    if (!mp)
        return NULL;
    h = mp->b_rptr + (mp->b_rptr[0] & 15) * 4;
    if (src)
        *src = get32(mp->b_rptr + 12);
    if (id)
        *id = get16(h + 4);
    if (seq)
        *seq = get16(h + 6);
    mp->b_rptr = h + EIP_ICMP_HLEN;
    return mp;
}

/* ---- attach, detach, report ---------------------------------------------------- */

EIP_IPIF *eip_ip_attach(EIP_DEV *dev)
{
    EIP_IPIF *ip = (EIP_IPIF *)kmem_zalloc(sizeof *ip, KM_SLEEP);
    if (ip == NULL)
        return NULL;
    if ((ip->ip_inq = eip_ip_queue(dev)) == NULL) {
        kmem_free(ip, sizeof *ip);
        return NULL;
    }
    ip->ip_dev = dev;
    ip->ip_addr = eip_ip_addr_of(ep_nodeid());
    ip->ip_echoreps.q_hiwat = EIP_UDP_RCVBUF;
    ip->ip_inq->q_ptr = ip;
    ip->ip_inq->q_srv = ip_rsrv;
    /* starts the STREAMS thread now, from a thread, and takes in anything
     * that arrived before */
    qenable(ip->ip_inq);
    return ip;
}

void eip_ip_detach(EIP_IPIF *ip)
{
    mblk_t *mp;
    /* the STREAMS thread must not find the queue enabled once it is gone */
    while (ip->ip_inq->q_enabled)
        nicsim_sleep_ns(1000);
    ip->ip_inq->q_srv = NULL;
    ip->ip_inq->q_ptr = NULL;
    while (ip->ip_udp)
        eip_udp_unbind(ip->ip_udp);
    while ((mp = getq(&ip->ip_echoreps)) != NULL)
        freemsg(mp);
    kmem_free(ip, sizeof *ip);
}

static void report(const char *prefix, const char *group, const char *name, uint64_t v)
{
    char full[96];
    if (v == 0)
        return;
    snprintf(full, sizeof full, "%s%s.%s", prefix, group, name);
    nicsim_result(full, (double)v, strstr(name, "bytes") ? "bytes" : "count");
}

void eip_ip_report(EIP_IPIF *ip, const char *prefix)
{
    const EIP_STATS *s = &ip->ip_dev->dev_stats;
#define EIP_REPORT_DEV(f) report(prefix, "eip", #f, s->f)
    EIP_REPORT_DEV(opackets);
    EIP_REPORT_DEV(obytes);
    EIP_REPORT_DEV(oerrors);
    EIP_REPORT_DEV(rbytes);
    EIP_REPORT_DEV(ierrors);
    EIP_REPORT_DEV(notmds);
    EIP_REPORT_DEV(noxmtbuf);
    EIP_REPORT_DEV(allocbfail);
    EIP_REPORT_DEV(nostream);
    EIP_REPORT_DEV(ifOutUcastPkts);
    EIP_REPORT_DEV(ifOutNUcastPkts);
    EIP_REPORT_DEV(ifInUcastPkts);
    EIP_REPORT_DEV(ifInNUcastPkts);
#undef EIP_REPORT_DEV
#define EIP_REPORT_MIB(name, doc) report(prefix, "mib", #name, ip->ip_mib.name);
    EIP_IP_MIB_COUNTERS(EIP_REPORT_MIB)
#undef EIP_REPORT_MIB
}
