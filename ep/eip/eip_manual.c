/*
 * The Elan IP driver's four routines as the Elan Kernel Comms manual prints
 * them in chapter 4: eip_initialise (4.2), eip_start (4.3), eip_txhandler
 * (4.4) and eip_rxhandler (4.5). The text is the scan's, with only what the
 * OCR garbled repaired: identifiers (tnd -> tmd, nsgsize -> msgsize, El P ->
 * EIP, crm_err -> cmn_err, "eip%l" -> "eip%d", ...), spacing and
 * punctuation. Statements, gotos, casts, calls and argument lists are the
 * manual's, including where they are wrong: the corrections are the
 * separate errata patch (eip_manual_errata.patch, applied by the build;
 * docs/eip.md lists them).
 *
 * Comments in square brackets mark where the scan is unreadable or leaves
 * something out, and say how it was reconstructed. The print's margin
 * callouts ("[6]", "[9]": numbers pointing at its explanations beside the
 * code) and page headers are not code and are left out. Everything else the
 * driver needs (attach, detach, the write queue's procedures, DLPI, the
 * info-ack, eip_wenable, eip_sendup, eip_accept) is in eip_dlpi.c.
 */

/* [not printed: the file's frame, the includes and the prototypes of the
 * two static handlers eip_initialise and eip_start name before their
 * definitions.] */
#include <elan3/eip.h>

static void eip_txhandler (EP_TXD *txd, void *arg, int status);
static void eip_rxhandler (EP_RXD *rxd);

int
eip_initialise (EIP_DEV *dev, int instance)
{
    /* [not printed: the declarations. The print starts at the first
     * statement; these are reconstructed from the uses below.] */
    ELAN3_DMA_REQUEST dmareq;
    EIP_TMD *tmd;
    EIP_RMD *rmd;
    int i;

    dev->dev_rcvr = ep_install_large_rcvr (instance,
                                           EP_SVC_LARGE_EIP,
                                           eip_nrmds*2);

    dev->dev_xmtr = ep_alloc_large_xmtr (instance);

    if (dev->dev_rcvr == NULL || dev->dev_xmtr == NULL)
    {
        /* [scan: the line breaks after the format; its last argument,
         * "instance);", is printed further down the page among the next
         * statements, and is put back here.] */
        cmn_err (CE_CONT, "eip%d: cannot create kernel comms service\n", instance);
        goto failed;
    }

    dev->dev_sp = ep_xmtr_dma_state (dev->dev_xmtr);
    dev->dev_instance = instance;

    dev->dev_addr.ip_addr = ep_nodeid ();
    dev->dev_addr.ip_inst = instance;
    dev->dev_addr.ip_bcast = 0;

    dev->dev_ntmds = eip_ntmds;
    dev->dev_nrmds = eip_nrmds;

    /* [scan: the line ends ", @" and the one after next ". .": stray
     * marks; both statements end in ";".] */
    dev->dev_msgsize = eip_infoack.dl_max_sdu + IPOVERHEAD;
    /* one page extra for each piece for worst case alignment */
    dev->dev_dvmapages = btopr(dev->dev_msgsize) + 2;

    /* Allocate the transmit and receive message descriptors */
    dev->dev_tmds = (EIP_TMD *) kmem_zalloc (dev->dev_ntmds * sizeof (EIP_TMD), KM_SLEEP);
    dev->dev_rmds = (EIP_RMD *) kmem_zalloc (dev->dev_nrmds * sizeof (EIP_RMD), KM_SLEEP);

    if (dev->dev_tmds == NULL || dev->dev_rmds == NULL)
    {
        cmn_err (CE_CONT, "eip%d: cannot allocate tmd/rmds\n");
        goto failed;
    }

    /* Initialise and chain the tmds on the free list */
    mutex_enter (&dev->dev_freetmdlock);
    for (i = 0, tmd = dev->dev_tmds; i < dev->dev_ntmds; i++, tmd++)
    {
        /* [scan: "tnd->tnd_dev dev;" and "tmd->tnd_index i": the "=" and
         * the ";" are lost; the statements are the assignments the prose
         * describes.] */
        tmd->tmd_dev = dev;
        tmd->tmd_index = i;
        tmd->tmd_next = dev->dev_freetmds;
        dev->dev_freetmds = tmd;
    }
    mutex_exit (&dev->dev_freetmdlock);

    /* Reserve the DVMA space */
    dmareq.Waitfn = DDI_DMA_SLEEP;
    dmareq.ElanAddr = (E3_Addr) 0;
    dmareq.Attr = PTE_LOAD_BIG_ENDIAN | PTE_LOAD_STREAMABLE;
    dmareq.Perm = ELAN_PERM_REMOTEREAD;
    /* [scan: the "{" opening the block below is lost.] */
    if (elan3_dma_reserve (dev->dev_sp,
                           dev->dev_ntmds * dev->dev_dvmapages,
                           &dmareq,
                           &dev->dev_tmdh) != DDI_SUCCESS)
    {
        cmn_err (CE_CONT, "eip%d: cannot reserve tx dvma resource\n", instance);
        goto failed;
    }

    /* [scan: "PTE_LOAD_BIG_ENDIAN," ends in a comma; a ";" as on every
     * other line.] */
    dmareq.Attr = PTE_LOAD_BIG_ENDIAN;
    dmareq.Perm = ELAN_PERM_REMOTEWRITE;
    /* [scan: the "{" opening the block below is lost.] */
    if (elan3_dma_reserve (dev->dev_sp,
                           dev->dev_nrmds * dev->dev_dvmapages,
                           &dmareq,
                           &dev->dev_rmdh) != DDI_SUCCESS)
    {
        cmn_err (CE_CONT, "eip%d: cannot reserve rx dvma resource\n", instance);
        goto failed;
    }

    /* Hang out the receive buffers */
    for (i = 0, rmd = dev->dev_rmds; i < dev->dev_nrmds; i++, rmd++)
    {
        /* [scan: "rmd->rnd_dev dev;": the "=" is lost.] */
        rmd->rmd_dev = dev;
        rmd->rmd_index = i;

        if ((rmd->rmd_mblk = allocb (dev->dev_msgsize, BPRI_LO)) == NULL)
        {
            cmn_err (CE_CONT, "eip%d: cannot allocate receive buffer\n", instance);
            goto failed;
        }

        elan3_dvma_kaddr_load (dev->dev_sp,
                               dev->dev_rmdh,
                               (caddr_t) rmd->rmd_mblk->b_rptr,
                               dev->dev_msgsize,
                               dev->dev_dvmapages*i,
                               &rmd->rmd_addr);

        if (ep_queue_receive (dev->dev_rcvr,
                              eip_rxhandler,
                              rmd,
                              rmd->rmd_addr,
                              dev->dev_msgsize,
                              0) != ESUCCESS)
        {
            cmn_err (CE_CONT, "eip%d: ep_queue_receive failed\n", instance);
        }

        dev->dev_stats.rmdcnt++;
    }

    /* [not printed: the page ends after the loop, before the function's
     * end; the success return and the "failed" label the gotos above jump
     * to are not in the scan. Reconstructed as the smallest completion:
     * 0 on success, -1 on failure; eip_attach (eip_dlpi.c) releases what
     * was set up.] */
    return (0);

 failed:
    return (-1);
}

int
eip_start (queue_t *wq, mblk_t *mp, EIP_DEV *dev, int srv)
{
    mblk_t      *nmp = (mblk_t *) NULL;
    EIP_HEADER  *headerp = (EIP_HEADER *) (mp->b_rptr + EIP_HEADER_PAD);
    int          dest;
    EIP_HEADER   header;
    EIP_TMD     *tmd;
    mblk_t      *bp;
    int          len1;
    int          len2;
    EP_IOVEC     iovec[2];
    int          iovlen;

    /*
     * update MIB II statistics
     */
    BUMP_OutNUcast (dev, headerp);

    if (msgsize(mp) > dev->dev_msgsize)
    {
        freemsg (mp);
        return (0);
    }

    if (((u_long) headerp & 1) != 0)
    {
        /* get an aligned copy of header so we can look in it */
        bcopy ((caddr_t) headerp, (caddr_t) &header, sizeof (header));
        headerp = &header;
    }

    DBG(DBG_EIP, eip_display_packet ("eip_start", headerp, mp));

    mutex_enter (&dev->dev_xmtlock);

    mutex_enter (&dev->dev_freetmdlock);
    while ((tmd = dev->dev_freetmds) == NULL)
    {
        mutex_exit (&dev->dev_freetmdlock);

        if (ep_enable_txcallbacks (dev->dev_xmtr) == 0)
            goto notmds;

        ep_disable_txcallbacks (dev->dev_xmtr);
        mutex_enter (&dev->dev_freetmdlock);
    }
    dev->dev_freetmds = tmd->tmd_next;
    mutex_exit (&dev->dev_freetmdlock);

    /*
     * Now see how many pieces the message is in; we've allocated enough DVMA
     * resource to cope with two (worst case aligned) pieces. If there's more
     * than two pieces then we have to copy to a single contiguous mblk.
     */
    bp = mp->b_cont;

    len1 = mp->b_wptr - mp->b_rptr;
    if (bp == NULL)
    {
        elan3_dvma_kaddr_load (dev->dev_sp,
                               dev->dev_tmdh,
                               (caddr_t) mp->b_rptr,
                               len1,
                               dev->dev_dvmapages * tmd->tmd_index,
                               &iovec[0].Base);
        iovec[0].Len = len1;
        iovlen = 1;
    }
    else if ((bp->b_cont == NULL) &&
             (len2 = (bp->b_wptr - bp->b_rptr)) >= E3_BLK_SIZE)
    {
        int index1 = dev->dev_dvmapages * tmd->tmd_index;
        int index2 = index1 + btopr (len1 + ((uintptr_t) mp->b_rptr & PAGEOFFSET));

        elan3_dvma_kaddr_load (dev->dev_sp,
                               dev->dev_tmdh,
                               (caddr_t) mp->b_rptr,
                               len1,
                               index1,
                               &iovec[0].Base);
        elan3_dvma_kaddr_load (dev->dev_sp,
                               dev->dev_tmdh,
                               (caddr_t) bp->b_rptr,
                               len2,
                               index2,
                               &iovec[1].Base);
        iovec[0].Len = len1;
        iovec[1].Len = len2;
        iovlen = 2;
    }
    else
    {
        len1 = msgsize (mp);
        bp = mp;

        if ((nmp = allocb (len1, BPRI_HI)) == NULL)
        {
            dev->dev_stats.noxmtbuf++;
            dev->dev_stats.allocbfail++;
            goto bad;
        }

        mcopymsg (bp, (u_char *) nmp->b_rptr);

        elan3_dvma_kaddr_load (dev->dev_sp,
                               dev->dev_tmdh,
                               (caddr_t) mp->b_rptr,
                               len1,
                               dev->dev_dvmapages * tmd->tmd_index,
                               &iovec[0].Base);

        /* [scan: "iovec[0].Len lenl;": the "=" is lost.] */
        iovec[0].Len = len1;
        iovlen = 1;
    }

    /* remember the mblk in the tmd, so we can free it when the */
    /* transmit completes */
    tmd->tmd_mblk = mp;

    if (headerp->h_dhost.ip_bcast)
    {
        if (ep_multicast_large (dev->dev_xmtr,
                                -1,
                                -1,
                                NULL,
                                EP_SVC_LARGE_EIP,
                                EP_NO_SLEEP | EP_NO_INTERRUPT | EP_NOT_MYSELF,
                                eip_txhandler,
                                tmd,
                                iovec,
                                iovlen) != ESUCCESS)
        {
            goto bad;
        }
    }
    else
    {
        if (ep_transmit_large (dev->dev_xmtr,
                               headerp->h_dhost.ip_addr,
                               EP_SVC_LARGE_EIP,
                               EP_NO_SLEEP | EP_NO_INTERRUPT,
                               eip_txhandler,
                               tmd,
                               iovec,
                               iovlen) != ESUCCESS)
        {
            goto bad;
        }
    }

    dev->dev_stats.tmdcnt++;

    /* update MIB II statistics */
    BUMP_OutNUcast (dev, headerp);

    mutex_exit (&dev->dev_xmtlock);

 bad:
    dev->dev_stats.oerrors++;

    elan3_dvma_unload (dev->dev_sp,
                       dev->dev_tmdh,
                       dev->dev_dvmapages * tmd->tmd_index,
                       dev->dev_dvmapages);

    mutex_enter (&dev->dev_freetmdlock);
    tmd->tmd_next = dev->dev_freetmds;
    dev->dev_freetmds = tmd;
    mutex_exit (&dev->dev_freetmdlock);

    mutex_exit (&dev->dev_xmtlock);

    if (nmp) freemsg (nmp);
    freemsg(mp);

    /* the transmit was not successfully initiated */
    return (0);

 notmds:
    dev->dev_stats.notmds++;
    dev->dev_wantw = 1;

    ep_poll_transmits (dev->dev_xmtr);
    mutex_exit (&dev->dev_xmtlock);

    if (nmp) freemsg (nmp);
    putbq (wq, mp);

    /* the transmit has been re-queued */
    return (1);
}

static void
eip_txhandler (EP_TXD *txd, void *arg, int status)
{
    EIP_TMD *tmd = (EIP_TMD *) arg;
    EIP_DEV *dev = tmd->tmd_dev;

    /* [scan: the "if" and "else" and their braces are printed apart from
     * the statements they govern (the layout is lost); reconstructed as
     * the prose reads: "Depending on the status value passed in, the
     * appropriate device statistics are updated".] */
    if (status != ESUCCESS)
        dev->dev_stats.oerrors++;
    else
    {
        dev->dev_stats.opackets++;
        /* update MIB II stats */
        dev->dev_stats.obytes += msgsize (tmd->tmd_mblk);
    }

    dev->dev_stats.tmdcnt--;

    /* unmap the tmd from the elan */
    elan3_dvma_unload (dev->dev_sp,
                       dev->dev_tmdh,
                       tmd->tmd_index * dev->dev_dvmapages,
                       dev->dev_dvmapages);

    /* and free of the mblk */
    freemsg (tmd->tmd_mblk);

    mutex_enter (&dev->dev_freetmdlock);
    tmd->tmd_next = dev->dev_freetmds;
    dev->dev_freetmds = tmd;
    mutex_exit (&dev->dev_freetmdlock);

    if (dev->dev_wantw)
        eip_wenable (dev);
}

static void
eip_rxhandler (EP_RXD *rxd)
{
    EIP_RMD     *rmd = (EIP_RMD *) ep_rxd_arg(rxd);
    EIP_DEV     *dev = rmd->rmd_dev;
    mblk_t      *bp = rmd->rmd_mblk;
    EIP_HEADER  *headerp = (EIP_HEADER *) (bp->b_rptr + EIP_HEADER_PAD);
    int          len = ep_rxd_len(rxd);
    queue_t     *ipq = dev->dev_ipq;
    mblk_t      *nbp = NULL;
    /* [scan: "i nt [": one more declaration, unreadable after its type.
     * Nothing in the routine uses another local, so it is left out.] */

    /*
     * If the receive completed successfully, then allocate a new mblk,
     * and pass the existing one up stream
     */
    /* [scan: "dev->dev_stats.ierrors++" has lost its ";".] */
    if (ep_rxd_status(rxd) != ESUCCESS)
        dev->dev_stats.ierrors++;
    else
    {
        if ((nbp = allocb (dev->dev_msgsize, BPRI_LO)) == NULL)
        {
            dev->dev_stats.allocbfail++;
        }
        else
        {
            /* Update MIB II statistics */
            BUMP_InNUcast (dev, headerp);

            dev->dev_stats.rbytes += len;

            /* unmap the current mblk from the elan */
            elan3_dvma_unload (dev->dev_sp,
                               dev->dev_rmdh,
                               rmd->rmd_index * dev->dev_dvmapages,
                               dev->dev_dvmapages);

            /* and map the new one in at the same address */
            elan3_dvma_kaddr_load (dev->dev_sp,
                                   dev->dev_rmdh,
                                   (caddr_t) nbp->b_rptr,
                                   dev->dev_msgsize,
                                   rmd->rmd_index*dev->dev_dvmapages,
                                   &rmd->rmd_addr);

            rmd->rmd_mblk = nbp;
        }
    }

    /* [scan: the call ends "dev->dev_msgsize, 0)" without its ";".] */
    ep_requeue_receive (rxd,
                        eip_rxhandler,
                        rmd,
                        rmd->rmd_addr,
                        dev->dev_msgsize, 0);

    if (nbp != NULL)
    {
        /* set the length of the received message. */
        bp->b_wptr = bp->b_rptr + len;

        DBG(DBG_EIP, eip_display_packet ("eip_rxhandler", headerp, bp));

        /* [scan: the braces of the "if" and "else" below are lost; each
         * branch is two statements, as the comments inside them say.] */
        if ((headerp->h_sap == ETHERTYPE_IP) &&
            (headerp->h_dhost.ip_bcast == 0) &&
            ipq &&
            canput (ipq->q_next))
        {
            /*
             * skip the ethernet header (including padding) before
             * sending up to IP.
             */
            bp->b_rptr += EIP_HEADER_SIZE;

            putnext (ipq, bp);
        }
        else
        {
            /*
             * skip the padding before sending up the
             * "regular" ethernet header.
             */
            bp->b_rptr += EIP_HEADER_PAD;

            eip_sendup (dev, bp, eip_accept);
        }
    }
    /* [not printed: the page ends here; the routine's closing brace is
     * reconstructed.] */
}
