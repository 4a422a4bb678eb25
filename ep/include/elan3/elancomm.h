/*
 * elan3/elancomm.h: Elan Kernel Comms, the kernel message-passing interface
 * to the Elan3 (seed 003, "Elan Kernel Comms" manual, chapters 2 and 3).
 *
 * Every call, type and constant the manual names, with its signatures as
 * the manual's SYNOPSIS sections write them. Values come from the public
 * record where one exists (EP_MAXFRAG 4, a 64-byte E3_BLK_SIZE, a 32-bit
 * E3_Addr, 8 KiB Elan3 pages, the Solaris DDI DMA result codes); every other
 * value is chosen here and says so. Status codes are the host's errno
 * values (<errno.h>), as the manual's ESUCCESS/ENOMEM/E2BIG/ENETRESET/...
 * are; ESUCCESS is 0.
 *
 * In nicsim every simulated node runs its own Kernel Comms: a call made on
 * a node's simulated thread acts on that node's Elan ("instance" 0; the
 * manual's multirail instances beyond 0 are not supported and make the
 * install/alloc calls return NULL).
 *
 * C99 and C++; needs nothing else from nicsim.
 */
#ifndef ELAN3_ELANCOMM_H
#define ELAN3_ELANCOMM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elan3/bitmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- base types ---------------------------------------------------------- */

typedef uint8_t E3_uint8;
typedef uint16_t E3_uint16;
typedef uint32_t E3_uint32;
typedef uint64_t E3_uint64;
typedef int32_t E3_int32;
/* An Elan virtual address: 32 bits (public record). */
typedef E3_uint32 E3_Addr;

/* The kernel types the manual's signatures use. glibc defines them in
 * <sys/types.h> only outside strict ISO mode; this header supplies them when
 * the host headers did not (strict C99), with the same definitions. */
#if !defined(__u_char_defined) && !defined(_U_INT) && !defined(_UINT_T_DECLARED)
typedef unsigned char u_char;
typedef unsigned short u_short;
typedef unsigned int u_int;
typedef unsigned long u_long;
#endif
#if !defined(__daddr_t_defined) && !defined(_CADDR_T)
typedef char *caddr_t;
#endif

#ifndef ESUCCESS
#define ESUCCESS 0 /* the manual's success code; not in POSIX <errno.h> */
#endif

/* ---- sizes --------------------------------------------------------------- */

#define EP_MAXFRAG 4              /* fragments per large message (public record) */
#define E3_BLK_SIZE 64            /* Elan block: DMA and queue granule (public record) */
#define E3_BLOCK_SIZE E3_BLK_SIZE /* the spelling chapter 4's prose uses */
#define ELAN3_PAGE_SHIFT 13       /* Elan3 pages are 8 KiB (public record) */
#define ELAN3_PAGE_SIZE (1u << ELAN3_PAGE_SHIFT)
#define ELAN3_PAGE_OFFSET (ELAN3_PAGE_SIZE - 1)

/* Service numbers: "statically allocated ... there are currently 256"
 * (manual 2.1.2). Only EP_SVC_LARGE_EIP is named by the manual; the
 * numbering is chosen here. Service 0 is Kernel Comms' own (virtual circuit
 * set-up, membership heartbeats): a consumer cannot install it. */
#define EP_NUM_SERVICES 256
#define EP_SVC_KCOMMS 0                 /* reserved: Kernel Comms control */
#define EP_SVC_LARGE_EIP 1              /* the Elan IP driver (chapter 4) */
#define EP_SVC_LARGE_CFS 2              /* a bulk data mover (CFS, manual 2.1.1) */
#define EP_SVC_LARGE_PORTALS_SMALL 3    /* Portals, small (public record name) */
#define EP_SVC_LARGE_PORTALS_LARGE 4    /* Portals, large (public record name) */
#define EP_SVC_FIRST_FREE 16            /* 16..255: free for other services */

/* Small-message service types (ep_install_small_rcvr, ep_alloc_small_xmtr). */
#define EP_SVC_TYPE_SMALL 1   /* needs a virtual circuit */
#define EP_SVC_TYPE_SPECIAL 2 /* no circuit needed; needs a timeout */
/* Ordering types of manual 2.1.8, announced as a future enhancement: defined
 * so code naming them compiles; no call takes them yet. */
#define EP_TYPE_PARTIAL_ORDER 0x10
#define EP_TYPE_STRICT_ORDER 0x20

/* Transmit/receive flags (values chosen). */
#define EP_NO_SLEEP 0x01     /* do not sleep if no descriptor is free: ENOMEM */
#define EP_NO_ALLOC 0x02     /* do not allocate descriptors: ENOMEM when the pool is empty */
#define EP_NO_INTERRUPT 0x04 /* completion found by polling (manual 2.1.5) */
#define EP_NOT_MYSELF 0x08   /* multicast: skip the sending node */

/* ---- DMA mapping constants ----------------------------------------------- */

/* Elan access permissions of a mapping, ordered as the Elan3 page
 * permission levels (each level includes the ones below it; values chosen). */
#define ELAN_PERM_NOREMOTE 0x0    /* local Elan access only */
#define ELAN_PERM_LOCALREAD 0x1   /* local read only */
#define ELAN_PERM_REMOTEREAD 0x2  /* remote nodes may read: transmit buffers */
#define ELAN_PERM_REMOTEWRITE 0x3 /* remote nodes may read and write: receive buffers */
#define ELAN_PERM_REMOTEEVENT 0x4 /* ... and set events */
#define ELAN_PERM_REMOTEALL 0x5   /* everything */

/* Page table entry attributes (values chosen). The byte order says how the
 * Elan loads words from the page; STREAMABLE lets the host bridge prefetch. */
#define PTE_LOAD_LITTLE_ENDIAN 0x00
#define PTE_LOAD_BIG_ENDIAN 0x01
#define PTE_LOAD_STREAMABLE 0x02

/* Results of the mapping calls: the Solaris DDI values (public record). The
 * manual spells NORESOURCE without the S; both spellings are given. */
#define DDI_SUCCESS 0
#define DDI_FAILURE (-1)
#define DDI_DMA_MAPPED 0
#define DDI_DMA_NORESOURCE (-1)
#define DDI_DMA_NORESOURCES DDI_DMA_NORESOURCE
#define DDI_DMA_NOMAPPING (-2)

/* Wait arguments of the mapping calls, as the Solaris DDI encodes them:
 * function pointers with the values 1 (sleep until resources are free) and
 * 0 (return DDI_DMA_NORESOURCE at once). Any other function is called with
 * its argument when resources run out, and the call then fails at once. */
#define DDI_DMA_SLEEP ((int (*)(caddr_t))1)
#define DDI_DMA_WAIT DDI_DMA_SLEEP
#define DDI_DMA_NOWAIT ((int (*)(caddr_t))0)
#define DDI_DMA_DONTWAIT DDI_DMA_NOWAIT

/* Object types of an ELAN3_DMA_OBJ. */
#define ELAN3_OTYPE_VADDR 1 /* a kernel virtual address range */
#define ELAN3_OTYPE_BUF 2   /* a struct buf */

/* ---- opaque objects ------------------------------------------------------ */

typedef struct ep_rcvr EP_RCVR;
typedef struct ep_xmtr EP_XMTR;
typedef struct ep_txd EP_TXD;
typedef struct ep_rxd EP_RXD;
typedef struct elan3_dma_state ELAN3_DMA_STATE;
/* The manual returns E3_DMA_STATE from ep_xmtr_dma_state and passes the
 * same pointer as ELAN3_DMA_STATE: one type, two names. */
typedef ELAN3_DMA_STATE E3_DMA_STATE;
typedef struct elan3_dma_handle ELAN3_DMA_HANDLE;

/* ---- message descriptors ------------------------------------------------- */

typedef struct ep_iovec {
    E3_Addr Base;  /* Elan address of the segment */
    E3_uint32 Len; /* bytes */
} EP_IOVEC;

typedef struct ep_datavec {
    E3_Addr Source; /* Elan address of the data on the replying node */
    E3_Addr Dest;   /* Elan address the RPC sender mapped for it */
    E3_uint32 Len;  /* bytes */
} EP_DATAVEC;

/* The status block an RPC receiver returns (size chosen: one Elan block). */
#define EP_STATUSBLK_SIZE E3_BLK_SIZE
typedef struct ep_statusblk {
    E3_uint32 Data[EP_STATUSBLK_SIZE / sizeof(E3_uint32)];
} EP_STATUSBLK;

/* The request data an RPC carries in its envelope (size chosen). */
#define EP_RPC_PAYLOAD_SIZE 64
typedef struct ep_rpc_payload {
    E3_uint32 Data[EP_RPC_PAYLOAD_SIZE / sizeof(E3_uint32)];
} EP_RPC_PAYLOAD;

/* The envelope of a large message, as it lands in the receiver's input
 * queue slot (little-endian words; layout chosen, see docs/ep.md). The
 * receiver reads it through ep_rxd_envelope(rxd), e.g.
 * ep_rxd_envelope(rxd)->Payload.RPC for an RPC's request data. */
#define EP_ENVELOPE_VERSION 0x45500001u /* "EP", format 1 */
typedef struct ep_envelope {
    E3_uint32 Version;   /* EP_ENVELOPE_VERSION */
    E3_uint32 Attr;      /* message kind and flags (EP_ENV_*) */
    E3_uint32 Service;   /* destination service number */
    E3_uint32 NodeId;    /* node holding the data (Frags): the sender, or the tree parent */
    E3_uint32 Xid;       /* sender's transmit id (descriptor index and generation) */
    E3_uint32 Circuit;   /* sender's incarnation of the virtual circuit */
    E3_uint32 Len;       /* total data bytes in Frags */
    E3_uint32 nFrags;    /* 0..EP_MAXFRAG */
    EP_IOVEC Frags[EP_MAXFRAG]; /* where the data is, in the sender's Elan space */
    E3_Addr TxdDone;     /* sender's completion word: receivers write it when done */
    E3_Addr StatusBlk;   /* RPC: where the status block goes on the sender */
    E3_uint32 RangeLo;   /* multicast: lowest node of the destination range */
    E3_uint32 RangeHi;   /* multicast: highest node */
    E3_uint32 Root;      /* multicast: node that started the transmit */
    E3_uint32 Parent;    /* node whose event TxdDone is (multicast: the tree parent) */
    E3_uint32 BcastSeq;  /* multicast by hardware broadcast: the sender's broadcast number */
    E3_uint32 Reserved[9];
    union {
        EP_RPC_PAYLOAD RPC; /* RPC request data */
        E3_uint32 Words[EP_RPC_PAYLOAD_SIZE / sizeof(E3_uint32)];
    } Payload;
} EP_ENVELOPE;

/* EP_ENVELOPE.Attr: the kind in the low byte, flags above. */
#define EP_ENV_LARGE 1
#define EP_ENV_RPC 2
#define EP_ENV_MULTICAST 3
#define EP_ENV_KIND_MASK 0xff
#define EP_ENV_HAS_BITMAP 0x100 /* multicast: a node bitmap follows the envelope */
#define EP_ENV_BCAST_DATA 0x200 /* multicast by hardware broadcast: the data is in the receiver's broadcast area */

/* ---- callbacks ----------------------------------------------------------- */

/* Small message receive handler: msg points into the input queue and is
 * reused as soon as the handler returns. Runs in interrupt context. */
typedef void(EP_RCV)(void *arg, caddr_t msg);
/* Transmit completion handler: ESUCCESS, ETIMEDOUT (special messages) or
 * ENETRESET. Runs in interrupt context for interrupting transmits, on the
 * polling thread for EP_NO_INTERRUPT transmits. */
typedef void(EP_TXH)(struct ep_txd *txd, void *arg, int status);
/* Large message receive handler. Runs in interrupt context. */
typedef void(EP_RXH)(struct ep_rxd *rxd);

/* ---- DMA mapping objects ------------------------------------------------- */

/* A struct buf, the part of the Solaris/Tru64 kernel buffer header that
 * elan3_dma_buf_setup reads: b_bcount bytes at b_un.b_addr. Defined here
 * unless the including code has its own (define EP_HAVE_STRUCT_BUF). */
#ifndef EP_HAVE_STRUCT_BUF
struct buf {
    int b_flags;
    size_t b_bcount;
    union {
        caddr_t b_addr;
    } b_un;
};
#endif

typedef struct elan3_dma_obj {
    int Type; /* ELAN3_OTYPE_VADDR or ELAN3_OTYPE_BUF */
    union {
        struct {
            void *As;     /* address space; NULL is kernel memory */
            caddr_t Addr; /* start, any alignment */
            u_int Len;    /* bytes */
        } Vaddr;
        struct buf *Buf;
    } Data;
} ELAN3_DMA_OBJ;

typedef struct elan3_dma_request {
    ELAN3_DMA_OBJ Object;
    u_int Perm; /* ELAN_PERM_* */
    u_int Attr; /* PTE_* */
#ifdef __cplusplus
    /* C++ has no unprototyped functions: the prototype DDI_DMA_* carry. */
    int (*Waitfn)(caddr_t);
#else
    int (*Waitfn)(); /* as the manual declares it */
#endif
    caddr_t Waitarg;
    E3_Addr ElanAddr; /* 0: chosen by the allocator */
} ELAN3_DMA_REQUEST;

/* ---- node identity ------------------------------------------------------- */

/* This node's Elan node number (its position in the network), 0..N-1. */
int ep_nodeid(void);
/* The number of node positions in the network, N (public record name). */
int ep_numnodes(void);

/* ---- 3.1 core functions -------------------------------------------------- */

EP_RCVR *ep_install_small_rcvr(int instance, int service, int type, int msgsize,
                               int msgentries, EP_RCV *handler, void *arg);
void ep_remove_small_rcvr(EP_RCVR *rcvr);
EP_XMTR *ep_alloc_small_xmtr(int instance, int type, int msgsize);
void ep_free_small_xmtr(EP_XMTR *xmtr);
int ep_transmit_small(EP_XMTR *xmtr, int dest, int service, int flags, E3_uint64 timeout,
                      EP_TXH *handler, void *arg, caddr_t buffer, int len);
int ep_waitfor_small_message(EP_RCVR *rcvr, caddr_t *msg);
/* The manual's SYNOPSIS takes caddr_t *, its example passes the message
 * pointer itself: both are accepted (the message address, or the address of
 * a variable holding it). */
void ep_consume_small_message(EP_RCVR *rcvr, caddr_t *msg);

EP_RCVR *ep_install_large_rcvr(int instance, int service, int nenvelopes);
void ep_remove_large_rcvr(EP_RCVR *rcvr);
EP_XMTR *ep_alloc_large_xmtr(int instance);
void ep_free_large_xmtr(EP_XMTR *xmtr);
int ep_transmit_large(EP_XMTR *xmtr, int dest, int service, int flags, EP_TXH *handler,
                      void *arg, EP_IOVEC *iovec, int iovlen);
int ep_multicast_large(EP_XMTR *xmtr, int destLo, int destHi, bitmap_t *bitmap, int service,
                       int flags, EP_TXH *handler, void *arg, EP_IOVEC *iovec, int iovlen);
int ep_transmit_rpc(EP_XMTR *xmtr, int dest, int service, int flags, EP_TXH *handler,
                    void *arg, EP_RPC_PAYLOAD *payload, EP_IOVEC *iovec, int iovlen);
int ep_poll_transmits(EP_XMTR *xmtr);
int ep_queue_receive(EP_RCVR *rcvr, EP_RXH *handler, void *arg, E3_Addr buffer,
                     E3_uint32 size, int flags);
int ep_requeue_receive(EP_RXD *rxd, EP_RXH *handler, void *arg, E3_Addr buffer,
                       E3_uint32 size);
/* The manual's example driver (4.5) calls ep_requeue_receive with a sixth
 * argument, the flags of ep_queue_receive, where the SYNOPSIS (3) has five:
 * both forms compile. The six-argument call goes to
 * ep_requeue_receive_flags; requeueing reuses the descriptor and allocates
 * nothing, so EP_NO_SLEEP and EP_NO_ALLOC have nothing to act on; any other
 * bit is EINVAL. The macro is function-like: ep_requeue_receive named
 * without arguments (taking its address) is still the function. */
int ep_requeue_receive_flags(EP_RXD *rxd, EP_RXH *handler, void *arg, E3_Addr buffer,
                             E3_uint32 size, int flags);
#define EP_REQUEUE_RECEIVE_PICK_(a1, a2, a3, a4, a5, a6, name, ...) name
#define ep_requeue_receive(...)                                                      \
    EP_REQUEUE_RECEIVE_PICK_(__VA_ARGS__, ep_requeue_receive_flags, ep_requeue_receive, \
                             0)(__VA_ARGS__)
EP_RXD *ep_waitfor_large_receive(EP_RCVR *rcvr);
int ep_complete_rpc(EP_RXD *rxd, EP_RXH *handler, void *arg, EP_STATUSBLK *blk,
                    EP_DATAVEC *datavec, int dataveclen);
void ep_complete_receive(EP_RXD *rxd);
int ep_enable_txcallbacks(EP_XMTR *xmtr);
int ep_disable_txcallbacks(EP_XMTR *xmtr);

/* Receive and transmit descriptor accessors (manual: ep_queue_receive(3),
 * ep_transmit_rpc(3)). */
void *ep_rxd_arg(struct ep_rxd *rxd);
int ep_rxd_status(struct ep_rxd *rxd);
int ep_rxd_len(struct ep_rxd *rxd);
int ep_rxd_node(struct ep_rxd *rxd);
int ep_rxd_isrpc(struct ep_rxd *rxd);
EP_ENVELOPE *ep_rxd_envelope(struct ep_rxd *rxd);
EP_STATUSBLK *ep_txd_statusblk(struct ep_txd *txd);

/* ---- 3.2 buffer mapping functions ---------------------------------------- */

E3_DMA_STATE *ep_xmtr_dma_state(EP_XMTR *xmtr);
E3_DMA_STATE *ep_rcvr_dma_state(EP_RCVR *rcvr);
int elan3_dma_map(ELAN3_DMA_STATE *sp, ELAN3_DMA_REQUEST *reqp, ELAN3_DMA_HANDLE **mpp);
void elan3_dma_unmap(ELAN3_DMA_STATE *sp, ELAN3_DMA_HANDLE *mp);
E3_Addr elan3_dma_handle_to_addr(ELAN3_DMA_HANDLE *mp);
int elan3_dma_addr_setup(ELAN3_DMA_STATE *sp, void *as, caddr_t addr, u_int len, u_int perm,
                         u_int attr, E3_Addr eaddr, int (*waitfp)(caddr_t), caddr_t arg,
                         ELAN3_DMA_HANDLE **handlep);
int elan3_dma_buf_setup(ELAN3_DMA_STATE *sp, struct buf *bp, u_int perm, u_int attr,
                        E3_Addr eaddr, int (*waitfp)(caddr_t), caddr_t arg,
                        ELAN3_DMA_HANDLE **handlep);
int elan3_dma_reserve(ELAN3_DMA_STATE *sp, int npages, ELAN3_DMA_REQUEST *dmareq,
                      ELAN3_DMA_HANDLE **mpp);
void elan3_dma_release(ELAN3_DMA_STATE *sp, ELAN3_DMA_HANDLE *mp);
void elan3_dvma_kaddr_load(ELAN3_DMA_STATE *sp, ELAN3_DMA_HANDLE *mp, caddr_t addr, u_int len,
                           u_int index, E3_Addr *addrp);
void elan3_dvma_unload(ELAN3_DMA_STATE *sp, ELAN3_DMA_HANDLE *mp, u_int index, u_int npages);

#ifdef __cplusplus
}
#endif

#endif /* ELAN3_ELANCOMM_H */
