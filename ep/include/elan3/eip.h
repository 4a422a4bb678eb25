/*
 * The Elan IP driver of the Elan Kernel Comms manual, chapter 4: IP
 * datagrams (and other link-level frames) between nodes as Kernel Comms
 * large messages on service EP_SVC_LARGE_EIP, unicast with
 * ep_transmit_large and broadcast with ep_multicast_large. The driver
 * routines keep the manual's names and structure (eip_initialise, eip_start,
 * eip_txhandler, eip_rxhandler, eip_wenable, eip_sendup, eip_accept); the
 * STREAMS calls they make are in elan3/eip_streams.h. Implementation:
 * ep/eip/eip_manual.c (the manual's routines, with the errata patch the
 * build applies) and ep/eip/eip_dlpi.c (the rest); docs/eip.md.
 *
 * Where the manual leaves a layout open it is chosen here: an EIP address
 * is six bytes (the size of an Ethernet address, so address resolution can
 * treat it as one) and the link header fourteen, preceded by two bytes of
 * pad so that the IP header after it is 4-byte aligned.
 */
#ifndef ELAN3_EIP_H
#define ELAN3_EIP_H

#include <elan3/eip_streams.h>
#include <elan3/elancomm.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ETHERTYPE_IP 0x0800
#define ETHERTYPE_ARP 0x0806

/* A link address: the node id, the Elan instance, and whether it is the
 * broadcast address (every node). */
typedef struct eip_address {
    uint16_t ip_bcast; /* nonzero: broadcast */
    uint16_t ip_inst;  /* Elan instance on the node */
    uint16_t ip_addr;  /* Elan node id (ep_nodeid() of the node) */
} EIP_ADDRESS;

/* The link header every message starts with, after EIP_HEADER_PAD bytes. */
typedef struct eip_header {
    EIP_ADDRESS h_dhost; /* destination */
    EIP_ADDRESS h_shost; /* source */
    uint16_t h_sap;      /* service access point: ETHERTYPE_IP, ETHERTYPE_ARP, ... */
} EIP_HEADER;

#define EIP_HEADER_PAD 2
#define EIP_HEADER_SIZE (EIP_HEADER_PAD + (int)sizeof(EIP_HEADER))
/* Bytes a message carries besides the datagram (the manual's IPOVERHEAD). */
#define IPOVERHEAD EIP_HEADER_SIZE
/* The largest datagram (DLPI dl_max_sdu): 64 KiB less 256 bytes (choice). */
#define EIP_MAX_SDU 65280

/* High-water mark of the driver's write queue (bytes waiting for a
 * transmit descriptor): canput() on it is false at or above (choice). */
#define EIP_WQ_HIWAT (256u * 1024u)

/* The part of the DLPI information acknowledgement the driver reads. */
typedef struct eip_info_ack {
    uint32_t dl_max_sdu;
    uint32_t dl_min_sdu;
    uint32_t dl_addr_length;
    uint32_t dl_mac_type;
} EIP_INFO_ACK;
extern EIP_INFO_ACK eip_infoack;

/* Driver tunables (the manual's eip_ntmds, eip_nrmds): transmit and receive
 * descriptors per device. Read by eip_initialise. */
extern int eip_ntmds;
extern int eip_nrmds;

/* The driver's counters: the ones the manual's routines count, then
 * nostream (eip_sendup, outside the manual's four routines). */
typedef struct eip_stats {
    uint64_t opackets, obytes, oerrors; /* transmits completed, their bytes, failures */
    uint64_t rbytes, ierrors;           /* bytes received, failed receives */
    uint64_t tmdcnt;                    /* transmits in flight */
    uint64_t rmdcnt;                    /* receive buffers queued */
    uint64_t notmds;                    /* eip_start found no free transmit descriptor */
    uint64_t noxmtbuf;                  /* no buffer for a fragmented message's copy */
    uint64_t allocbfail;                /* allocb failures */
    uint64_t nostream;                  /* received messages no stream accepted */
    /* MIB-II interface counters (BUMP_OutNUcast, BUMP_InNUcast). */
    uint64_t ifOutUcastPkts, ifOutNUcastPkts, ifInUcastPkts, ifInNUcastPkts;
} EIP_STATS;

struct eip_dev;

typedef struct eip_tmd {
    struct eip_dev *tmd_dev;
    int tmd_index;
    struct eip_tmd *tmd_next; /* free list */
    mblk_t *tmd_mblk;         /* the message in flight, freed on completion */
} EIP_TMD;

typedef struct eip_rmd {
    struct eip_dev *rmd_dev;
    int rmd_index;
    mblk_t *rmd_mblk; /* the buffer queued for receiving */
    E3_Addr rmd_addr; /* its Elan address */
} EIP_RMD;

/* An open stream of the device bound to one SAP (the generic DLPI path of
 * eip_sendup): it receives messages with the link header (no pad). */
typedef struct eip_stream {
    struct eip_dev *st_dev;
    uint16_t st_sap;
    queue_t st_rq;            /* the driver's read queue of the stream */
    queue_t st_upq;           /* the consumer's queue above it (st_rq.q_next) */
    struct eip_stream *st_next;
} EIP_STREAM;

typedef struct eip_dev {
    EP_RCVR *dev_rcvr;
    EP_XMTR *dev_xmtr;
    ELAN3_DMA_STATE *dev_sp;
    int dev_instance;
    EIP_ADDRESS dev_addr;
    int dev_ntmds, dev_nrmds;
    int dev_msgsize;   /* bytes of one message buffer: dl_max_sdu + IPOVERHEAD */
    int dev_dvmapages; /* Elan pages reserved per descriptor */
    EIP_TMD *dev_tmds, *dev_freetmds;
    EIP_RMD *dev_rmds;
    kmutex_t dev_freetmdlock, dev_xmtlock;
    ELAN3_DMA_HANDLE *dev_tmdh, *dev_rmdh;
    int dev_wantw;      /* a message waits on dev_wq for a descriptor */
    queue_t dev_wq;     /* the write queue: put eip_wput, service eip_wsrv */
    queue_t *dev_ipq;   /* the IP stream's read queue (the fast path), or NULL */
    void *dev_ip;       /* the IP layer's queues (eip_ip_queue) */
    EIP_STREAM *dev_streams;
    EIP_STATS dev_stats;
} EIP_DEV;

/* MIB-II: one packet out or in, unicast or not (broadcast), by the
 * destination of its link header. */
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

/* Debug output: DBG(flag, call) makes the call when `flag` is set in
 * eip_debug (a tunable, 0 by default), as the manual's DBG(DBG_EIP, ...). */
#define DBG_EIP 0x01
extern int eip_debug;
#define DBG(flag, call)                                          \
    do {                                                         \
        if (eip_debug & (flag)) {                                \
            call;                                                \
        }                                                        \
    } while (0)
/* Writes one line about a packet (who calls, link header, length) with
 * cmn_err. */
void eip_display_packet(const char *str, EIP_HEADER *hdr, mblk_t *mp);

/* ---- the driver (manual chapter 4) --------------------------------------- */

/* 4.2: installs the receiver and transmitter, allocates and maps the
 * descriptors and receive buffers, queues the buffers. 0, or -1 after
 * cmn_err (what it set up stays in `dev`: eip_attach releases it). */
int eip_initialise(EIP_DEV *dev, int instance);
/* 4.3: starts transmitting `mp` (pad, EIP_HEADER, data, in one or more
 * blocks). 0: started, or dropped and counted; 1: no free transmit
 * descriptor, `mp` was put back on wq (putbq) and dev_wantw set. */
int eip_start(queue_t *wq, mblk_t *mp, EIP_DEV *dev, int srv);
/* Re-enables the write queue after a descriptor was freed (4.4). */
void eip_wenable(EIP_DEV *dev);
/* The generic receive path (4.5): gives `bp` (starting at the link header)
 * to every open stream `accept` takes, a copy to all but the last. */
void eip_sendup(EIP_DEV *dev, mblk_t *bp, int (*accept)(EIP_STREAM *st, EIP_HEADER *hdr));
/* Whether `st` takes a message with link header `hdr`: its SAP, and
 * addressed to this node or broadcast. */
int eip_accept(EIP_STREAM *st, EIP_HEADER *hdr);
/* Write-side put and service procedures of dev_wq. eip_wput returns 1 when
 * it took the message (started, queued, or refused by eip_start and counted
 * there), 0 when it dropped it: a queue not the write queue of a device
 * attached on the calling node (the message is freed, nothing counted), or
 * a message shorter than the link header or longer than dev_msgsize
 * (freed, counted in oerrors). */
int eip_wput(queue_t *wq, mblk_t *mp);
int eip_wsrv(queue_t *wq);

/* ---- attaching the driver to a node's kernel (nicsim) -------------------- */

/* Allocates a device, runs eip_initialise and sets up its write queue.
 * NULL when it failed (e.g. EP_SVC_LARGE_EIP already installed, an
 * instance other than 0) or in interrupt context (it may sleep). */
EIP_DEV *eip_attach(int instance);
/* Waits for every transmit in flight, removes the receiver and transmitter,
 * frees the buffers, descriptors and streams. A device not attached on the
 * calling node (NULL, detached, another node's), or a call in interrupt
 * context (it waits), changes nothing and writes a CE_WARN message. */
void eip_detach(EIP_DEV *dev);
/* Builds the pad and link header at the front of `mp` (which must have
 * EIP_HEADER_SIZE bytes of room before b_rptr) for `dest` (a node id, or -1
 * for broadcast) and `sap`. 0, or -1 (nothing written) for a device not
 * attached here, no message, too little room, or `dest` outside -1..65535. */
int eip_fill_header(EIP_DEV *dev, mblk_t *mp, int dest, uint16_t sap);
/* Hands a message to the driver as IP's putnext on the write side does
 * (eip_wput's answer; 0 and the message freed for a device not attached
 * on the calling node). */
int eip_output(EIP_DEV *dev, mblk_t *mp);
/* The IP layer's input queue: datagrams (no link header), whichever path
 * (fast path, or a broadcast through eip_sendup) they came by. Opening it
 * binds the IP stream (SAP ETHERTYPE_IP) and enables the fast path. NULL
 * for a device not attached on the calling node. */
queue_t *eip_ip_queue(EIP_DEV *dev);
/* The smallest SAP: a SAP is an Ethernet type; below 0x0600 the field is
 * an 802.3 length (DLPI's DL_BADSAP). */
#define EIP_MIN_SAP 0x0600
/* Opens a stream bound to `sap` (the generic path). NULL for a device not
 * attached on the calling node, a SAP below EIP_MIN_SAP, or in interrupt
 * context (opening may sleep). A received
 * message shorter than the link header goes to no stream: ierrors. */
EIP_STREAM *eip_open_stream(EIP_DEV *dev, uint16_t sap);
/* Waits up to timeout_ns (0: forever) for a message on read queue q;
 * NULL on timeout or for a NULL queue. In interrupt context it does not
 * wait: the first message, or NULL. */
mblk_t *eip_getq_wait(queue_t *q, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* ELAN3_EIP_H */
