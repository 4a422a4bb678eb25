/*
 * The kernel environment the interface's SDP sample code assumes (a
 * Linux 2.4 socket layer with SDP's AF_INET_OFFLOAD protocol under it),
 * reduced to what the sample names, so that the sample compiles against
 * sdp_ti.h as a test. Nothing here runs: the sample is compiled, not
 * linked. The helpers the sample calls without defining them (SDP's own
 * signalling, its RDMA paths, its queue) are declared at the end.
 */
#ifndef NICSIM_SAMPLE_LINUX_NET_H
#define NICSIM_SAMPLE_LINUX_NET_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <linux/in.h>
#include <linux/socket.h>

/* errno values (asm/errno.h) */
#define EPERM 1
#define EFAULT 14
#define EINVAL 22
#define EAGAIN 11
#define EINTR 4
#define EPIPE 32
#define ENOSR 63
#define ENOBUFS 105
#define EAFNOSUPPORT 97
#define EADDRINUSE 98
#define EADDRNOTAVAIL 99
#define ENETUNREACH 101
#define ENOTCONN 107
#define ERESTARTSYS 512

/* TCP states (linux/tcp.h) */
enum { TCP_ESTABLISHED = 1, TCP_SYN_SENT, TCP_SYN_RECV, TCP_FIN_WAIT1, TCP_FIN_WAIT2, TCP_TIME_WAIT,
       TCP_CLOSE, TCP_CLOSE_WAIT, TCP_LAST_ACK, TCP_LISTEN, TCP_CLOSING };

#define SOCK_BINDADDR_LOCK 4
#define SOCK_BINDPORT_LOCK 8
#define GFP_KERNEL 0x1f0

#define min(a, b) ((a) < (b) ? (a) : (b))

static inline uint16_t htons(uint16_t v) { return (uint16_t)((v >> 8) | (v << 8)); }
static inline uint16_t ntohs(uint16_t v) { return (uint16_t)((v >> 8) | (v << 8)); }

/* atomics and wait queues (asm/atomic.h, linux/wait.h) */
typedef struct { volatile int counter; } atomic_t;
static inline void atomic_inc(atomic_t *v) { ++v->counter; }
typedef struct { volatile int woken; } wait_queue_head_t;
static inline void init_waitqueue_head(wait_queue_head_t *q) { q->woken = 0; }
static inline void wake_up_interruptible(wait_queue_head_t *q) { q->woken = 1; }
void interruptible_sleep_on(wait_queue_head_t *q);
#define wait_event_interruptible(wq, condition)             \
	({                                                  \
		while (!(condition))                        \
			interruptible_sleep_on(&(wq));      \
		0;                                          \
	})

/* messages (linux/uio.h, linux/socket.h) */
struct iovec {
	void *iov_base;
	size_t iov_len;
};
struct msghdr {
	void *msg_name;
	int msg_namelen;
	struct iovec *msg_iov;
	size_t msg_iovlen;
};
int memcpy_fromiovec(unsigned char *kdata, struct iovec *iov, int len);
int memcpy_toiovec(struct iovec *iov, unsigned char *kdata, int len);

struct sock;
struct socket;
struct proto {
	int (*get_port)(struct sock *sk, unsigned short snum);
	void (*hash)(struct sock *sk);
};
void lock_sock(struct sock *sk);
void release_sock(struct sock *sk);
void sk_dst_reset(struct sock *sk);

/* SDP's tunables (its sysctls) */
extern int sysctl_ap_msg_size;
extern int sysctl_ap_msg_depth;
#define SUCCESS 0

#endif /* NICSIM_SAMPLE_LINUX_NET_H */
