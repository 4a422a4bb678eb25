/*
 * The kernel services the Elan IP driver of the Kernel Comms manual
 * (chapter 4) is written against: the Solaris STREAMS message and queue
 * calls (allocb, freemsg, msgdsize, mcopymsg, bcopy, putq, putbq, getq, canput,
 * putnext, qenable), kernel memory (kmem_zalloc), mutexes (mutex_enter) and
 * cmn_err, with their Solaris names and meanings, implemented by nicsim's
 * simulated node kernel (ep/eip/eip_kernel.cc). Message data lives in the
 * node's memory, so the Elan reaches it by DMA once it is mapped.
 *
 * Only what the driver and its consumers use is here; the structures carry
 * the Solaris field names the driver touches (b_rptr, b_wptr, b_cont,
 * q_next, q_ptr, ...). Every call charges the node's CPU (host cost classes
 * cost.streams_*, copies at the node's copy_bandwidth).
 */
#ifndef ELAN3_EIP_STREAMS_H
#define ELAN3_EIP_STREAMS_H

#include <stddef.h>
#include <stdint.h>
/* Included before bcopy is defined below, so that a later inclusion (which
 * the include guards make empty) cannot meet the macro. */
#include <string.h>
#include <strings.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- messages ------------------------------------------------------------ */

typedef struct datab {
    unsigned char *db_base; /* first byte of the buffer */
    unsigned char *db_lim;  /* one past its last byte */
    unsigned int db_ref;    /* message blocks sharing it */
} dblk_t;

typedef struct msgb {
    struct msgb *b_next;    /* next message on a queue */
    struct msgb *b_prev;    /* previous message on a queue */
    struct msgb *b_cont;    /* next block of this message */
    unsigned char *b_rptr;  /* first unread byte */
    unsigned char *b_wptr;  /* first unwritten byte */
    struct datab *b_datap;  /* the data buffer */
} mblk_t;

/* allocb priorities (advisory in Solaris; recorded, not used). */
#define BPRI_LO 1
#define BPRI_MED 2
#define BPRI_HI 3

/* A message block with a new buffer of `size` bytes in node memory
 * (b_rptr = b_wptr = start); NULL when node memory is exhausted. */
mblk_t *allocb(size_t size, unsigned int pri);
/* Frees one block (its buffer when no other block shares it). */
void freeb(mblk_t *mp);
/* Frees every block of a message (b_cont chain). */
void freemsg(mblk_t *mp);
/* Data bytes in a message: the sum of b_wptr - b_rptr over its blocks. */
size_t msgdsize(const mblk_t *mp);
/* The manual's msgsize: msgdsize as an int (the driver compares it with
 * and assigns it to ints, as the pre-size_t DDI's msgdsize returned). */
#define msgsize(mp) ((int)msgdsize(mp))
/* Copies the data of every block of `mp`, in order, to `buf`, then frees
 * `mp` (Solaris mcopymsg). */
void mcopymsg(mblk_t *mp, unsigned char *buf);
/* A new message with the same data as `mp` in one block (Solaris copymsg
 * keeps the block structure; one block is equivalent for every reader);
 * NULL when node memory is exhausted. */
mblk_t *copymsg(mblk_t *mp);

/* ---- queues --------------------------------------------------------------- */

typedef struct queue queue_t;
struct queue {
    queue_t *q_next;               /* the next queue in the stream's direction */
    mblk_t *q_first, *q_last;      /* messages waiting (putq) */
    size_t q_count;                /* data bytes waiting */
    size_t q_hiwat;                /* canput() is false at or above this */
    void *q_ptr;                   /* the module's private data */
    int (*q_put)(queue_t *q, mblk_t *mp); /* put procedure */
    int (*q_srv)(queue_t *q);      /* service procedure (may be NULL) */
    int q_enabled;                 /* a service run is scheduled */
    void *q_kernel;                /* the simulated kernel's bookkeeping */
};

/* Appends to q; schedules its service procedure. Returns 1. */
int putq(queue_t *q, mblk_t *mp);
/* Puts back at the head of q (a service procedure that cannot go on);
 * does not schedule the service procedure. Returns 1. */
int putbq(queue_t *q, mblk_t *mp);
/* Removes the first message, or NULL. */
mblk_t *getq(queue_t *q);
/* Schedules q's service procedure to run soon in a kernel thread. */
void qenable(queue_t *q);
/* Whether q (usually q->q_next) accepts more: q_count below q_hiwat. */
int canput(queue_t *q);
/* Calls q->q_next's put procedure with mp. */
void putnext(queue_t *q, mblk_t *mp);

/* ---- kernel memory, mutexes, messages ----------------------------------- */

#define KM_SLEEP 0
#define KM_NOSLEEP 1
/* Zeroed node memory; NULL only with KM_NOSLEEP. */
void *kmem_zalloc(size_t size, int flags);
void kmem_free(void *p, size_t size);

typedef struct kmutex {
    void *m_owner; /* the simulated kernel's lock; NULL: not yet used */
} kmutex_t;
/* As on Solaris, a zeroed kmutex_t (kmem_zalloc'd, or static) is a valid
 * default mutex without mutex_init: the manual's eip_initialise enters
 * dev_freetmdlock without initialising it. */
void mutex_init(kmutex_t *m, const char *name, int type, void *arg);
void mutex_destroy(kmutex_t *m);
/* Blocks in a thread; from an interrupt handler the mutex must be free (a
 * held one would never be released on a uniprocessor: reported as an error). */
void mutex_enter(kmutex_t *m);
void mutex_exit(kmutex_t *m);
#define MUTEX_DEFAULT 0

#define CE_CONT 0
#define CE_NOTE 1
#define CE_WARN 2
/* A kernel message: written to the node's log (and the trace). */
void cmn_err(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The kernel's bcopy(from, to, len): overlapping ranges allowed. glibc
 * declares it only outside strict ISO C, so it is the kernel's own call
 * (charged like the other copies) under the kernel's name. */
void nicsim_kernel_bcopy(const void *from, void *to, size_t len);
#undef bcopy
#define bcopy(from, to, len) nicsim_kernel_bcopy((from), (to), (len))

/* Solaris DDI servicing_interrupt(): nonzero in interrupt context (a
 * callback of the Elan or a timer), where nothing may block. */
int servicing_interrupt(void);

/* nicsim's bookkeeping of the devices attached on each node (a Solaris
 * driver's soft state): the driver's entry points take a device, or its
 * write queue, only if it is attached on the calling node, so a freed
 * device, another node's or any other pointer is refused without being
 * read. */
void nicsim_kernel_dev_attached(void *dev, queue_t *wq);
void nicsim_kernel_dev_detached(void *dev);
int nicsim_kernel_dev_live(const void *dev);
/* The device whose write queue `wq` is, or NULL. */
void *nicsim_kernel_dev_of_wq(const queue_t *wq);

/* Pages of the Elan's 8 KiB pages needed for `bytes`, rounded up. */
#define btopr(bytes) (((bytes) + ELAN3_PAGE_SIZE - 1) >> ELAN3_PAGE_SHIFT)
#define PAGEOFFSET ELAN3_PAGE_OFFSET

#ifdef __cplusplus
}
#endif

#endif /* ELAN3_EIP_STREAMS_H */
