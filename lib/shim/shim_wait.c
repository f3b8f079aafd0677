/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting on event queues and counters the NIC writes into the region:
 * a short spin, then futex sleeps on the shared futex
 * words (not the private op: the NIC wakes them from another process) in
 * bounded slices, so a missed wake-up costs at most one slice.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim_internal.h"

#define POLL_MAX_WAITV 128

void
shim_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

void
shim_futex_wait(volatile uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000,
	};

	(void)syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

void
shim_futex_wake(volatile uint32_t *addr)
{
	(void)syscall(SYS_futex, addr, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Sleep until one of the words changes or ms pass (futex_waitv, else a
 * slice on the first word). */
void
shim_futex_wait_any(volatile uint32_t *const *addrs, const uint32_t *vals,
	       unsigned n, int ms)
{
#ifdef SYS_futex_waitv
	static int no_waitv;

	if (n > 1 && n <= POLL_MAX_WAITV && !no_waitv) {
		struct futex_waitv w[POLL_MAX_WAITV];
		struct timespec ts;

		memset(w, 0, n * sizeof(w[0]));
		for (unsigned i = 0; i < n; i++) {
			w[i].val = vals[i];
			w[i].uaddr = (uint64_t)(uintptr_t)addrs[i];
			w[i].flags = FUTEX_32;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)ms * 1000000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		if (syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC) >= 0 ||
		    errno != ENOSYS)
			return;
		no_waitv = 1;
	}
#endif
	/* one word only: keep the slice short when others are not watched */
	shim_futex_wait(addrs[0], vals[0], n > 1 ? 1 : ms);
}

uint64_t
shim_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
shim_obj_drain(struct shim_obj *o, volatile uint32_t *futex)
{
	__atomic_store_n(&o->closing, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&o->waiters, __ATOMIC_ACQUIRE) > 0) {
		shim_futex_wake(futex);
		sched_yield();
	}
}
