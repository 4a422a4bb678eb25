/*
 * asm/atomic.h (compat): the kernel's atomic_t as the InfiniBand kernel
 * structures embed it (use counts). A simulated node's kernel code runs on
 * one simulated CPU at a time, so plain reads and writes suffice.
 */
#ifndef NICSIM_COMPAT_ASM_ATOMIC_H
#define NICSIM_COMPAT_ASM_ATOMIC_H

typedef struct {
	volatile int counter;
} atomic_t;

#define atomic_read(v) ((v)->counter)
#define atomic_set(v, i) (((v)->counter) = (i))

#endif /* NICSIM_COMPAT_ASM_ATOMIC_H */
