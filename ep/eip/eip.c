/*
 * The Elan IP driver of the Elan Kernel Comms manual, chapter 4, written
 * against elan3/elancomm.h and the kernel services of elan3/eip_streams.h
 * only. The routines follow the manual's sections: eip_initialise (4.2),
 * eip_start (4.3), eip_txhandler (4.4), eip_rxhandler (4.5), with the two
 * receive paths it describes (the IP fast path and eip_sendup). Byte order:
 * the simulated hosts are little-endian, so buffers are mapped
 * PTE_LOAD_LITTLE_ENDIAN where the manual's SPARC driver said big-endian.
 */
#include <elan3/eip.h>
#include <nicsim/app.h>
#include <string.h>

EIP_INFO_ACK eip_infoack = {EIP_MAX_SDU, 0, sizeof(EIP_ADDRESS) + sizeof(uint16_t), 0};
int eip_ntmds = 32;
int eip_nrmds = 32;

static void eip_txhandler(EP_TXD *txd, void *arg, int status);
static void eip_rxhandler(EP_RXD *rxd);

/* MIB-II: unicast or non-unicast (broadcast) packets out and in. */
#define BUMP_OutNUcast(dev, hp)                                  \
    do {                                                         \
        if ((hp)->h_dhost.ip_bcast)                              \
            (dev)->dev_stats.ifOutNUcastPkts++;                  \
        else                                                     \
            (dev)->dev_stats.ifOutUcastPkts++;                   \
    } while (0)
#define BUMP_InNUcast(dev, hp)                                   \
    do {                                                         \
        if ((hp)->h_dhost.ip_bcast)                              \
            (dev)->dev_stats.ifInNUcastPkts++;                   \
        else                                                     \
            (dev)->dev_stats.ifInUcastPkts++;                    \
    } while (0)

/* Releases what eip_initialise set up, in reverse order. */
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
        mutex_destroy(&dev->dev_freetmdlock);
        mutex_destroy(&dev->dev_xmtlock);
    }
    if (dev->dev_xmtr)
        ep_free_large_xmtr(dev->dev_xmtr);
    dev->dev_xmtr = NULL;
}

int eip_initialise(EIP_DEV *dev, int instance)
{
    ELAN3_DMA_REQUEST dmareq;
    EIP_TMD *tmd;
    EIP_RMD *rmd;
    int i;

    dev->dev_rcvr = ep_install_large_rcvr(instance, EP_SVC_LARGE_EIP, eip_nrmds * 2);
    dev->dev_xmtr = ep_alloc_large_xmtr(instance);
    if (dev->dev_rcvr == NULL || dev->dev_xmtr == NULL) {
        cmn_err(CE_CONT, "eip%d: cannot create kernel comms service\n", instance);
        goto failed;
    }
    dev->dev_sp = ep_xmtr_dma_state(dev->dev_xmtr);
    dev->dev_instance = instance;
    dev->dev_addr.ip_addr = (uint16_t)ep_nodeid();
    dev->dev_addr.ip_inst = (uint16_t)instance;
    dev->dev_addr.ip_bcast = 0;
    dev->dev_ntmds = eip_ntmds;
    dev->dev_nrmds = eip_nrmds;
    dev->dev_msgsize = (int)eip_infoack.dl_max_sdu + IPOVERHEAD;
    /* a message in at most two pieces, each of unknown alignment: one extra
     * page per piece */
    dev->dev_dvmapages = (int)btopr((u_int)dev->dev_msgsize) + 2;

    dev->dev_tmds = (EIP_TMD *)kmem_zalloc((size_t)dev->dev_ntmds * sizeof(EIP_TMD), KM_SLEEP);
    dev->dev_rmds = (EIP_RMD *)kmem_zalloc((size_t)dev->dev_nrmds * sizeof(EIP_RMD), KM_SLEEP);
    if (dev->dev_tmds == NULL || dev->dev_rmds == NULL) {
        cmn_err(CE_CONT, "eip%d: cannot allocate tmd/rmds\n", instance);
        goto failed;
    }
    mutex_init(&dev->dev_freetmdlock, "eip freetmd", MUTEX_DEFAULT, NULL);
    mutex_init(&dev->dev_xmtlock, "eip xmt", MUTEX_DEFAULT, NULL);

    mutex_enter(&dev->dev_freetmdlock);
    for (i = 0, tmd = dev->dev_tmds; i < dev->dev_ntmds; i++, tmd++) {
        tmd->tmd_dev = dev;
        tmd->tmd_index = i;
        tmd->tmd_next = dev->dev_freetmds;
        dev->dev_freetmds = tmd;
    }
    mutex_exit(&dev->dev_freetmdlock);

    /* Elan address space for every descriptor's buffer at once: transmit
     * buffers are read by the receivers (pull), receive buffers written. */
    memset(&dmareq, 0, sizeof dmareq);
    dmareq.Waitfn = DDI_DMA_SLEEP;
    dmareq.ElanAddr = (E3_Addr)0;
    dmareq.Attr = PTE_LOAD_LITTLE_ENDIAN | PTE_LOAD_STREAMABLE;
    dmareq.Perm = ELAN_PERM_REMOTEREAD;
    if (elan3_dma_reserve(dev->dev_sp, dev->dev_ntmds * dev->dev_dvmapages, &dmareq, &dev->dev_tmdh) !=
        DDI_SUCCESS) {
        cmn_err(CE_CONT, "eip%d: cannot reserve tx dvma resource\n", instance);
        goto failed;
    }
    dmareq.Attr = PTE_LOAD_LITTLE_ENDIAN;
    dmareq.Perm = ELAN_PERM_REMOTEWRITE;
    if (elan3_dma_reserve(dev->dev_sp, dev->dev_nrmds * dev->dev_dvmapages, &dmareq, &dev->dev_rmdh) !=
        DDI_SUCCESS) {
        cmn_err(CE_CONT, "eip%d: cannot reserve rx dvma resource\n", instance);
        goto failed;
    }

    for (i = 0, rmd = dev->dev_rmds; i < dev->dev_nrmds; i++, rmd++) {
        rmd->rmd_dev = dev;
        rmd->rmd_index = i;
        if ((rmd->rmd_mblk = allocb((size_t)dev->dev_msgsize, BPRI_LO)) == NULL) {
            cmn_err(CE_CONT, "eip%d: cannot allocate receive buffer\n", instance);
            goto failed;
        }
        elan3_dvma_kaddr_load(dev->dev_sp, dev->dev_rmdh, (caddr_t)rmd->rmd_mblk->b_rptr,
                              (u_int)dev->dev_msgsize, (u_int)(dev->dev_dvmapages * i), &rmd->rmd_addr);
        if (ep_queue_receive(dev->dev_rcvr, eip_rxhandler, rmd, rmd->rmd_addr, (E3_uint32)dev->dev_msgsize,
                             0) != ESUCCESS) {
            cmn_err(CE_CONT, "eip%d: ep_queue_receive failed\n", instance);
            goto failed;
        }
        dev->dev_stats.rmdcnt++;
    }
    return 0;

failed:
    eip_teardown(dev);
    return -1;
}

int eip_start(queue_t *wq, mblk_t *mp, EIP_DEV *dev, int srv)
{
    mblk_t *nmp = NULL;
    EIP_HEADER *headerp;
    EIP_HEADER header;
    EIP_TMD *tmd;
    mblk_t *bp;
    int len1, len2, iovlen, rc;
    EP_IOVEC iovec[2];

    (void)srv;
    if ((int)msgsize(mp) > dev->dev_msgsize) {
        dev->dev_stats.toobig++;
        freemsg(mp);
        return 0;
    }
    if (mp->b_wptr - mp->b_rptr < EIP_HEADER_SIZE) {
        /* the link header must be in the first block */
        dev->dev_stats.oerrors++;
        freemsg(mp);
        return 0;
    }
    /* The header is read in place when aligned as its fields, else copied. */
    headerp = (EIP_HEADER *)(void *)(mp->b_rptr + EIP_HEADER_PAD);
    if (((uintptr_t)headerp & 1) != 0) {
        memcpy(&header, headerp, sizeof header);
        headerp = &header;
    }

    mutex_enter(&dev->dev_xmtlock);
    mutex_enter(&dev->dev_freetmdlock);
    while ((tmd = dev->dev_freetmds) == NULL) {
        mutex_exit(&dev->dev_freetmdlock);
        /* Completed transmits run eip_txhandler now and free descriptors;
         * none completed: requeue the message and wait for a callback. */
        if (ep_enable_txcallbacks(dev->dev_xmtr) == 0)
            goto notmds;
        ep_disable_txcallbacks(dev->dev_xmtr);
        mutex_enter(&dev->dev_freetmdlock);
    }
    dev->dev_freetmds = tmd->tmd_next;
    mutex_exit(&dev->dev_freetmdlock);

    /* One piece, or two with a second of at least a block, is mapped where
     * it lies; anything else is first copied into one contiguous block. */
    bp = mp->b_cont;
    len1 = (int)(mp->b_wptr - mp->b_rptr);
    if (bp == NULL) {
        elan3_dvma_kaddr_load(dev->dev_sp, dev->dev_tmdh, (caddr_t)mp->b_rptr, (u_int)len1,
                              (u_int)(dev->dev_dvmapages * tmd->tmd_index), &iovec[0].Base);
        iovec[0].Len = (E3_uint32)len1;
        iovlen = 1;
    } else if (bp->b_cont == NULL && (len2 = (int)(bp->b_wptr - bp->b_rptr)) >= E3_BLK_SIZE) {
        int index1 = dev->dev_dvmapages * tmd->tmd_index;
        int index2 = index1 + (int)btopr((u_int)len1 + ((uintptr_t)mp->b_rptr & PAGEOFFSET));
        elan3_dvma_kaddr_load(dev->dev_sp, dev->dev_tmdh, (caddr_t)mp->b_rptr, (u_int)len1, (u_int)index1,
                              &iovec[0].Base);
        elan3_dvma_kaddr_load(dev->dev_sp, dev->dev_tmdh, (caddr_t)bp->b_rptr, (u_int)len2, (u_int)index2,
                              &iovec[1].Base);
        iovec[0].Len = (E3_uint32)len1;
        iovec[1].Len = (E3_uint32)len2;
        iovlen = 2;
    } else {
        len1 = (int)msgsize(mp);
        if ((nmp = allocb((size_t)len1, BPRI_HI)) == NULL) {
            dev->dev_stats.noxmtbuf++;
            dev->dev_stats.allocbfail++;
            goto bad;
        }
        if (headerp != &header) {
            memcpy(&header, headerp, sizeof header); /* mcopymsg frees the original */
            headerp = &header;
        }
        mcopymsg(mp, nmp->b_rptr);
        nmp->b_wptr = nmp->b_rptr + len1;
        mp = nmp;
        nmp = NULL;
        elan3_dvma_kaddr_load(dev->dev_sp, dev->dev_tmdh, (caddr_t)mp->b_rptr, (u_int)len1,
                              (u_int)(dev->dev_dvmapages * tmd->tmd_index), &iovec[0].Base);
        iovec[0].Len = (E3_uint32)len1;
        iovlen = 1;
    }
    /* freed by eip_txhandler when the transmit completes */
    tmd->tmd_mblk = mp;

    if (headerp->h_dhost.ip_bcast)
        rc = ep_multicast_large(dev->dev_xmtr, -1, -1, NULL, EP_SVC_LARGE_EIP,
                                EP_NO_SLEEP | EP_NO_INTERRUPT | EP_NOT_MYSELF, eip_txhandler, tmd, iovec, iovlen);
    else
        rc = ep_transmit_large(dev->dev_xmtr, headerp->h_dhost.ip_addr, EP_SVC_LARGE_EIP,
                               EP_NO_SLEEP | EP_NO_INTERRUPT, eip_txhandler, tmd, iovec, iovlen);
    if (rc != ESUCCESS)
        goto bad;
    dev->dev_stats.tmdcnt++;
    BUMP_OutNUcast(dev, headerp);
    mutex_exit(&dev->dev_xmtlock);
    return 0;

bad:
    dev->dev_stats.oerrors++;
    elan3_dvma_unload(dev->dev_sp, dev->dev_tmdh, (u_int)(dev->dev_dvmapages * tmd->tmd_index),
                      (u_int)dev->dev_dvmapages);
    tmd->tmd_mblk = NULL;
    mutex_enter(&dev->dev_freetmdlock);
    tmd->tmd_next = dev->dev_freetmds;
    dev->dev_freetmds = tmd;
    mutex_exit(&dev->dev_freetmdlock);
    mutex_exit(&dev->dev_xmtlock);
    if (nmp)
        freemsg(nmp);
    freemsg(mp);
    return 0; /* not started; the message is dropped, as IP allows */

notmds:
    dev->dev_stats.notmds++;
    dev->dev_wantw = 1;
    ep_poll_transmits(dev->dev_xmtr);
    mutex_exit(&dev->dev_xmtlock);
    putbq(wq, mp);
    return 1; /* requeued: eip_wenable runs the queue again */
}

static void eip_txhandler(EP_TXD *txd, void *arg, int status)
{
    EIP_TMD *tmd = (EIP_TMD *)arg;
    EIP_DEV *dev = tmd->tmd_dev;

    (void)txd;
    if (status != ESUCCESS) {
        dev->dev_stats.oerrors++;
    } else {
        dev->dev_stats.opackets++;
        dev->dev_stats.obytes += msgsize(tmd->tmd_mblk);
    }
    dev->dev_stats.tmdcnt--;
    elan3_dvma_unload(dev->dev_sp, dev->dev_tmdh, (u_int)(tmd->tmd_index * dev->dev_dvmapages),
                      (u_int)dev->dev_dvmapages);
    freemsg(tmd->tmd_mblk);
    tmd->tmd_mblk = NULL;

    mutex_enter(&dev->dev_freetmdlock);
    tmd->tmd_next = dev->dev_freetmds;
    dev->dev_freetmds = tmd;
    mutex_exit(&dev->dev_freetmdlock);

    if (dev->dev_wantw)
        eip_wenable(dev);
}

static void eip_rxhandler(EP_RXD *rxd)
{
    EIP_RMD *rmd = (EIP_RMD *)ep_rxd_arg(rxd);
    EIP_DEV *dev = rmd->rmd_dev;
    mblk_t *bp = rmd->rmd_mblk;
    EIP_HEADER *headerp = (EIP_HEADER *)(void *)(bp->b_rptr + EIP_HEADER_PAD);
    int len = ep_rxd_len(rxd);
    queue_t *ipq = dev->dev_ipq;
    mblk_t *nbp = NULL;

    /* A full buffer goes up and a fresh one takes its place at the same
     * Elan address; without a fresh one the message is dropped. */
    if (ep_rxd_status(rxd) != ESUCCESS) {
        dev->dev_stats.ierrors++;
    } else if ((nbp = allocb((size_t)dev->dev_msgsize, BPRI_LO)) == NULL) {
        dev->dev_stats.allocbfail++;
    } else {
        BUMP_InNUcast(dev, headerp);
        dev->dev_stats.rbytes += (uint64_t)len;
        elan3_dvma_unload(dev->dev_sp, dev->dev_rmdh, (u_int)(rmd->rmd_index * dev->dev_dvmapages),
                          (u_int)dev->dev_dvmapages);
        elan3_dvma_kaddr_load(dev->dev_sp, dev->dev_rmdh, (caddr_t)nbp->b_rptr, (u_int)dev->dev_msgsize,
                              (u_int)(rmd->rmd_index * dev->dev_dvmapages), &rmd->rmd_addr);
        rmd->rmd_mblk = nbp;
    }
    ep_requeue_receive(rxd, eip_rxhandler, rmd, rmd->rmd_addr, (E3_uint32)dev->dev_msgsize);
    if (nbp == NULL)
        return;

    bp->b_wptr = bp->b_rptr + len;
    if (len < EIP_HEADER_SIZE) {
        dev->dev_stats.ierrors++;
        freemsg(bp);
        return;
    }
    dev->dev_stats.ipackets++;
    if (headerp->h_sap == ETHERTYPE_IP && headerp->h_dhost.ip_bcast == 0 && ipq && canput(ipq->q_next)) {
        /* the fast path: IP gets the datagram alone */
        bp->b_rptr += EIP_HEADER_SIZE;
        putnext(ipq, bp);
    } else {
        /* the generic path: every stream that wants it, with the header */
        bp->b_rptr += EIP_HEADER_PAD;
        eip_sendup(dev, bp, eip_accept);
    }
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
    EIP_DEV *dev = (EIP_DEV *)wq->q_ptr;
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
    queue_t fast_rq;   /* dev_ipq: putnext gives a bare datagram */
    queue_t strip_q;   /* above the IP stream: drops the link header */
    queue_t input;     /* IP's input: datagrams */
    EIP_STREAM *stream;
} EIP_IP;

static int eip_ip_put(queue_t *q, mblk_t *mp)
{
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
    EIP_DEV *dev = (EIP_DEV *)kmem_zalloc(sizeof(EIP_DEV), KM_SLEEP);
    if (dev == NULL)
        return NULL;
    if (eip_initialise(dev, instance) != 0) {
        kmem_free(dev, sizeof(EIP_DEV));
        return NULL;
    }
    dev->dev_wq.q_ptr = dev;
    dev->dev_wq.q_put = eip_wput;
    dev->dev_wq.q_srv = eip_wsrv;
    dev->dev_wq.q_hiwat = EIP_WQ_HIWAT;
    return dev;
}

void eip_detach(EIP_DEV *dev)
{
    mblk_t *mp;
    EIP_STREAM *st;
    if (dev == NULL)
        return;
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

void eip_fill_header(EIP_DEV *dev, mblk_t *mp, int dest, uint16_t sap)
{
    EIP_HEADER h;
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
}

int eip_output(EIP_DEV *dev, mblk_t *mp)
{
    return dev->dev_wq.q_put(&dev->dev_wq, mp);
}

EIP_STREAM *eip_open_stream(EIP_DEV *dev, uint16_t sap)
{
    EIP_STREAM *st = (EIP_STREAM *)kmem_zalloc(sizeof *st, KM_SLEEP);
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
    EIP_IP *ip = (EIP_IP *)dev->dev_ip;
    if (ip)
        return &ip->input;
    ip = (EIP_IP *)kmem_zalloc(sizeof *ip, KM_SLEEP);
    if (ip == NULL)
        return NULL;
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
