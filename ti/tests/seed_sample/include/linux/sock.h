/*
 * The 2.4 kernel's struct sock as the interface's SDP sample code uses it:
 * "ap_opt structure has been added to the 'sock' structure; see
 * linux/sock.h". Included by the sample once its struct ap_opt is
 * declared. Then the helpers the sample calls without defining them.
 */
#ifndef NICSIM_SAMPLE_LINUX_SOCK_H
#define NICSIM_SAMPLE_LINUX_SOCK_H

#include <linux/net.h>

struct sock {
	int state;
	unsigned short num;
	uint32_t rcv_saddr, saddr, daddr;
	uint16_t sport, dport;
	int userlocks;
	int err, done;
	int use_write_queue;
	int sndbuf, rcvbuf;
	struct proto *prot;
	union {
		struct ap_opt af_ap;
	} tp_pinfo;
};

/* SDP's own pieces the sample names and leaves out. */
struct sock *ap_alloc_sock(struct sock *sk, int priority);
void SignalConnectRequest(struct ap_opt *p_conn);
void SignalConnectDone(struct ap_opt *p_conn);
void WaitOnSignalConnectRequest(void);
void WaitOnSignalRecvData(struct sock *sk);
void RequestCanceled(void *request, ti_status_t status);
int sample_rdma_write(struct sock *sk, struct msghdr *msg, int size);
int sample_rdma_read(struct sock *sk, struct msghdr *msg, int size);
void insert_queue_tail_locked(atomic_t *lock, ti_data_element_t **queue, ti_data_element_t *element);

#endif /* NICSIM_SAMPLE_LINUX_SOCK_H */
