/*
 * The parts of the Elan IP driver the manual does not print (its chapter 4
 * gives only eip_initialise, eip_start, eip_txhandler and eip_rxhandler, in
 * eip_manual.c): the tunables and the DLPI information acknowledgement
 * eip_initialise reads, eip_wenable, eip_sendup and eip_accept that the
 * handlers call, the write queue's put and service procedures, debug
 * output, and the attach and detach that a Solaris driver's attach(9E)
 * and detach(9E) would do, with the streams above the driver: a stream
 * bound to a SAP (eip_open_stream) and the IP module's queues
 * (eip_ip_queue).
 */
#include <elan3/eip.h>
#include <nicsim/app.h>
#include <stddef.h>
#include <string.h>

/* DLPI information acknowledgement: the largest datagram (dl_max_sdu)
 * sizes the driver's buffers; an address is an EIP_ADDRESS and a SAP. */
EIP_INFO_ACK eip_infoack = {EIP_MAX_SDU, 0, sizeof(EIP_ADDRESS) + sizeof(uint16_t), 0};
int eip_ntmds = 32;
int eip_nrmds = 32;
int eip_debug = 0;

void eip_display_packet(const char *str, EIP_HEADER *hdr, mblk_t *mp)
{
    cmn_err(CE_CONT, "eip: %s: to %s%u.%u from %u.%u sap 0x%04x, %d bytes\n", str,
            hdr->h_dhost.ip_bcast ? "broadcast " : "", hdr->h_dhost.ip_addr, hdr->h_dhost.ip_inst,
            hdr->h_shost.ip_addr, hdr->h_shost.ip_inst, hdr->h_sap, msgsize(mp));
}

/* Releases what eip_initialise set up (all of it, or as far as it got),
 * in reverse order. */
static void eip_teardown(EIP_DEV *dev)
{
    int i;
    if (dev->dev_rcvr)
        ep_remove_large_rcvr(dev->dev_rcvr);
    dev->dev_rcvr = NULL;
    if (dev->dev_rmds) {
        for (i = 0; i < dev->dev_nrmds; i++)
            if (dev->dev_rmds[i].rmd_mblk)
                freemsg(dev->dev_rmds[i].rmd_mblk);
        kmem_free(dev->dev_rmds, (size_t)dev->dev_nrmds * sizeof(EIP_RMD));
        dev->dev_rmds = NULL;
    }
    if (dev->dev_rmdh)
        elan3_dma_release(dev->dev_sp, dev->dev_rmdh);
    if (dev->dev_tmdh)
        elan3_dma_release(dev->dev_sp, dev->dev_tmdh);
    dev->dev_rmdh = dev->dev_tmdh = NULL;
    if (dev->dev_tmds) {
        kmem_free(dev->dev_tmds, (size_t)dev->dev_ntmds * sizeof(EIP_TMD));
        dev->dev_tmds = NULL;
    }
    mutex_destroy(&dev->dev_freetmdlock);
    mutex_destroy(&dev->dev_xmtlock);
    if (dev->dev_xmtr)
        ep_free_large_xmtr(dev->dev_xmtr);
    dev->dev_xmtr = NULL;
}

void eip_wenable(EIP_DEV *dev)
{
    dev->dev_wantw = 0;
    qenable(&dev->dev_wq);
}

int eip_accept(EIP_STREAM *st, EIP_HEADER *hdr)
{
    const EIP_DEV *dev = st->st_dev;
    if (st->st_sap != hdr->h_sap)
        return 0;
    return hdr->h_dhost.ip_bcast ||
           (hdr->h_dhost.ip_addr == dev->dev_addr.ip_addr && hdr->h_dhost.ip_inst == dev->dev_addr.ip_inst);
}

void eip_sendup(EIP_DEV *dev, mblk_t *bp, int (*accept)(EIP_STREAM *st, EIP_HEADER *hdr))
{
    EIP_HEADER header;
    EIP_STREAM *st, *last = NULL;

    /* a frame shorter than the link header (eip_rxhandler reads the
     * header from the buffer whatever the length) */
    if (bp->b_wptr < bp->b_rptr + sizeof header) {
        dev->dev_stats.ierrors++;
        freemsg(bp);
        return;
    }
    memcpy(&header, bp->b_rptr, sizeof header);
    for (st = dev->dev_streams; st; st = st->st_next) {
        if (!accept(st, &header) || !canput(st->st_rq.q_next))
            continue;
        if (last) {
            mblk_t *copy = copymsg(bp);
            if (copy)
                putnext(&last->st_rq, copy);
            else
                dev->dev_stats.allocbfail++;
        }
        last = st;
    }
    if (last) {
        putnext(&last->st_rq, bp);
    } else {
        dev->dev_stats.nostream++;
        freemsg(bp);
    }
}

int eip_wput(queue_t *wq, mblk_t *mp)
{
    EIP_DEV *dev = (EIP_DEV *)nicsim_kernel_dev_of_wq(wq);
    size_t len;
    if (dev == NULL || mp == NULL) {
        if (mp)
            freemsg(mp);
        return 0;
    }
    /* eip_start reads the header unchecked, and drops an oversize
     * message without counting it */
    len = msgdsize(mp);
    if (len < (size_t)EIP_HEADER_SIZE || len > (size_t)dev->dev_msgsize) {
        dev->dev_stats.oerrors++;
        freemsg(mp);
        return 0;
    }
    /* behind messages already waiting, to keep the order */
    if (wq->q_first || dev->dev_wantw)
        return putq(wq, mp);
    eip_start(wq, mp, dev, 0);
    return 1;
}

int eip_wsrv(queue_t *wq)
{
    EIP_DEV *dev = (EIP_DEV *)wq->q_ptr;
    mblk_t *mp;
    while ((mp = getq(wq)) != NULL)
        if (eip_start(wq, mp, dev, 1))
            break; /* put back; eip_wenable resumes */
    return 0;
}

/* ---- attaching the driver to a node's kernel ----------------------------- */

/* The IP layer's queues: the fast path's driver read queue (dev_ipq), the
 * IP stream for the generic path, and IP's input queue both lead to. */
typedef struct eip_ip {
    queue_t fast_rq;   /* dev_ipq: putnext gives a bare datagram (q_ptr: the device) */
    queue_t strip_q;   /* above the IP stream: drops the link header */
    queue_t input;     /* IP's input: datagrams */
    EIP_STREAM *stream;
} EIP_IP;

static int eip_ip_put(queue_t *q, mblk_t *mp)
{
    /* the fast path skipped a link header a short frame did not have */
    if (mp->b_wptr < mp->b_rptr) {
        const EIP_IP *ip = (const EIP_IP *)((char *)q - offsetof(EIP_IP, input));
        ((EIP_DEV *)ip->fast_rq.q_ptr)->dev_stats.ierrors++;
        freemsg(mp);
        return 0;
    }
    return putq(q, mp);
}

static int eip_ip_strip_put(queue_t *q, mblk_t *mp)
{
    EIP_IP *ip = (EIP_IP *)q->q_ptr;
    mp->b_rptr += sizeof(EIP_HEADER);
    return putq(&ip->input, mp);
}

static int eip_upper_put(queue_t *q, mblk_t *mp)
{
    return putq(q, mp);
}

EIP_DEV *eip_attach(int instance)
{
    EIP_DEV *dev;
    if (servicing_interrupt()) {
        cmn_err(CE_WARN, "eip%d: attach in interrupt context\n", instance);
        return NULL;
    }
    dev = (EIP_DEV *)kmem_zalloc(sizeof(EIP_DEV), KM_SLEEP);
    if (dev == NULL)
        return NULL;
    if (eip_initialise(dev, instance) != 0) {
        /* the manual's eip_initialise returns with whatever it set up */
        eip_teardown(dev);
        kmem_free(dev, sizeof(EIP_DEV));
        return NULL;
    }
    dev->dev_wq.q_ptr = dev;
    dev->dev_wq.q_put = eip_wput;
    dev->dev_wq.q_srv = eip_wsrv;
    dev->dev_wq.q_hiwat = EIP_WQ_HIWAT;
    nicsim_kernel_dev_attached(dev, &dev->dev_wq);
    return dev;
}

void eip_detach(EIP_DEV *dev)
{
    mblk_t *mp;
    EIP_STREAM *st;
    if (!nicsim_kernel_dev_live(dev)) {
        cmn_err(CE_WARN, "eip: detach of %p, not a device attached on this node\n", (void *)dev);
        return;
    }
    if (servicing_interrupt()) {
        cmn_err(CE_WARN, "eip%d: detach in interrupt context\n", dev->dev_instance);
        return;
    }
    while ((mp = getq(&dev->dev_wq)) != NULL) {
        dev->dev_stats.oerrors++;
        freemsg(mp);
    }
    /* every transmit in flight completes (or fails) before its buffer goes */
    ep_enable_txcallbacks(dev->dev_xmtr);
    while (dev->dev_stats.tmdcnt > 0)
        if (ep_poll_transmits(dev->dev_xmtr) == 0)
            nicsim_sleep_ns(1000);
    ep_disable_txcallbacks(dev->dev_xmtr);
    /* the STREAMS thread must not find the write queue enabled once it is gone */
    while (dev->dev_wq.q_enabled)
        nicsim_sleep_ns(1000);
    nicsim_kernel_dev_detached(dev);
    eip_teardown(dev);
    while ((st = dev->dev_streams) != NULL) {
        dev->dev_streams = st->st_next;
        while ((mp = getq(&st->st_upq)) != NULL)
            freemsg(mp);
        kmem_free(st, sizeof *st);
    }
    if (dev->dev_ip) {
        EIP_IP *ip = (EIP_IP *)dev->dev_ip;
        while ((mp = getq(&ip->input)) != NULL)
            freemsg(mp);
        kmem_free(ip, sizeof *ip);
    }
    kmem_free(dev, sizeof(EIP_DEV));
}

int eip_fill_header(EIP_DEV *dev, mblk_t *mp, int dest, uint16_t sap)
{
    EIP_HEADER h;
    if (!nicsim_kernel_dev_live(dev) || mp == NULL || dest < -1 || dest > 0xffff ||
        mp->b_rptr - mp->b_datap->db_base < EIP_HEADER_SIZE)
        return -1;
    memset(&h, 0, sizeof h);
    if (dest < 0) {
        h.h_dhost.ip_bcast = 1;
    } else {
        h.h_dhost.ip_addr = (uint16_t)dest;
        h.h_dhost.ip_inst = dev->dev_addr.ip_inst;
    }
    h.h_shost = dev->dev_addr;
    h.h_sap = sap;
    mp->b_rptr -= EIP_HEADER_SIZE;
    memset(mp->b_rptr, 0, EIP_HEADER_PAD);
    memcpy(mp->b_rptr + EIP_HEADER_PAD, &h, sizeof h);
    return 0;
}

int eip_output(EIP_DEV *dev, mblk_t *mp)
{
    if (!nicsim_kernel_dev_live(dev)) {
        if (mp)
            freemsg(mp);
        return 0;
    }
    return dev->dev_wq.q_put(&dev->dev_wq, mp);
}

EIP_STREAM *eip_open_stream(EIP_DEV *dev, uint16_t sap)
{
    EIP_STREAM *st;
    /* opening a stream is open(9E): process context (it allocates, may sleep) */
    if (!nicsim_kernel_dev_live(dev) || sap < EIP_MIN_SAP || servicing_interrupt())
        return NULL;
    st = (EIP_STREAM *)kmem_zalloc(sizeof *st, KM_SLEEP);
    if (st == NULL)
        return NULL;
    st->st_dev = dev;
    st->st_sap = sap;
    st->st_rq.q_next = &st->st_upq;
    st->st_upq.q_put = eip_upper_put;
    st->st_upq.q_hiwat = 1u << 20;
    st->st_next = dev->dev_streams;
    dev->dev_streams = st;
    return st;
}

queue_t *eip_ip_queue(EIP_DEV *dev)
{
    EIP_IP *ip;
    if (!nicsim_kernel_dev_live(dev))
        return NULL;
    ip = (EIP_IP *)dev->dev_ip;
    if (ip)
        return &ip->input;
    ip = (EIP_IP *)kmem_zalloc(sizeof *ip, KM_SLEEP);
    if (ip == NULL)
        return NULL;
    ip->fast_rq.q_ptr = dev;
    ip->input.q_put = eip_ip_put;
    ip->input.q_hiwat = 1u << 20;
    ip->fast_rq.q_next = &ip->input;
    ip->strip_q.q_put = eip_ip_strip_put;
    ip->strip_q.q_ptr = ip;
    ip->strip_q.q_hiwat = 1u << 20;
    ip->stream = eip_open_stream(dev, ETHERTYPE_IP);
    if (ip->stream == NULL) {
        kmem_free(ip, sizeof *ip);
        return NULL;
    }
    ip->stream->st_rq.q_next = &ip->strip_q;
    dev->dev_ip = ip;
    dev->dev_ipq = &ip->fast_rq;
    return &ip->input;
}
