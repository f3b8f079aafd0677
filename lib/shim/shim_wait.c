/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting on event queues and counters the NIC writes into the region:
 * a short spin that yields the CPU at every poll, then futex sleeps on
 * the shared futex words (not the private op: the NIC wakes them from another process) in
 * bounded slices, so a missed wake-up costs at most one slice.
 */
#include <errno.h>
#include <stdbool.h>
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

int
spin_set_wait_polls(unsigned polls)
{
	if (polls > SHIM_WAIT_POLLS_MAX)
		return -EINVAL;
	return (int)__atomic_exchange_n(&shim_g.wait_polls, polls,
					__ATOMIC_RELAXED);
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

/* The futex word the NIC bumps, and the count of sleepers it reads
 * before waking, of an EQ or a CT. */
static volatile uint32_t *
wait_futex(struct shim_obj *o, unsigned kind)
{
	return kind == SHIM_KIND_EQ ? &o->u.eq.ring->futex : &o->u.ct.rec->futex;
}

static volatile uint32_t *
wait_sleepers(struct shim_obj *o, unsigned kind)
{
	return kind == SHIM_KIND_EQ ? &o->u.eq.ring->waiters :
		&o->u.ct.rec->waiters;
}

/* Milliseconds of the next sleep: a slice, less what is left. */
static int
wait_slice(ptl_time_t timeout, uint64_t deadline)
{
	uint64_t left = (uint64_t)shim_g.slice_ms;

	if (timeout != PTL_TIME_FOREVER) {
		uint64_t t = shim_now_ms();

		left = t >= deadline ? 0 : deadline - t;
		if (left > (uint64_t)shim_g.slice_ms)
			left = (uint64_t)shim_g.slice_ms;
	}
	return (int)left;
}

static int
wait_loop(struct shim_wait *w, struct shim_obj **objs, struct shim_ni **nis,
	  volatile uint32_t **words, uint32_t *vals, unsigned n,
	  unsigned *which_p)
{
	uint64_t deadline = 0;
	unsigned i, spins = 0;
	int rc = -ETIMEDOUT;

	for (i = 0; i < n; i++)
		__atomic_add_fetch(&objs[i]->waiters, 1, __ATOMIC_SEQ_CST);
	if (w->timeout != PTL_TIME_FOREVER)
		deadline = shim_now_ms() + w->timeout;
	for (;;) {
		bool sleep_ok = spins >= __atomic_load_n(&shim_g.wait_polls,
							 __ATOMIC_RELAXED);
		bool found = false;

		for (i = 0; i < n; i++) {
			if (__atomic_load_n(&objs[i]->closing, __ATOMIC_ACQUIRE)) {
				rc = -EINTR;
				goto leave;
			}
			vals[i] = __atomic_load_n(words[i], __ATOMIC_ACQUIRE);
			if (sleep_ok)
				__atomic_add_fetch(wait_sleepers(objs[i], w->kind),
						   1, __ATOMIC_SEQ_CST);
		}
		for (i = 0; i < n && !found; i++) {
			found = w->take(w, objs[i], nis[i], i);
			if (found)
				*which_p = i;
		}
		if (!found && sleep_ok) {
			int ms = wait_slice(w->timeout, deadline);

			if (ms > 0 && !shim_ctrl_gone())
				shim_futex_wait_any(words, vals, n, ms);
		}
		if (sleep_ok) {
			for (i = 0; i < n; i++)
				__atomic_sub_fetch(wait_sleepers(objs[i], w->kind),
						   1, __ATOMIC_SEQ_CST);
		}
		if (found) {
			rc = 0;
			goto leave;
		}
		if (w->timeout != PTL_TIME_FOREVER && shim_now_ms() >= deadline)
			goto leave;
		if (shim_g.dead) {
			rc = -EINTR;
			goto leave;
		}
		if (!sleep_ok) {
			/* the NIC does the work: a rank that shares its CPU
			 * (ranks > cores, or the NIC's lcore) lets the others
			 * run instead of burning their time slice; alone on
			 * its CPU, a yield is a cheap system call */
			spins++;
			shim_cpu_relax();
			sched_yield();
		}
	}
leave:
	for (i = 0; i < n; i++)
		__atomic_sub_fetch(&objs[i]->waiters, 1, __ATOMIC_SEQ_CST);
	return rc;
}

int
shim_wait(struct shim_wait *w, const ptl_handle_any_t *hs, unsigned n,
	  unsigned *which_p)
{
	struct shim_obj *objs_stack[8], **objs = objs_stack;
	struct shim_ni *nis_stack[8], **nis = nis_stack;
	volatile uint32_t *words_stack[8], **words = words_stack;
	uint32_t vals_stack[8], *vals = vals_stack;
	int rc = -EINVAL;

	if (n > 8) {
		objs = malloc(n * sizeof(*objs));
		nis = malloc(n * sizeof(*nis));
		words = malloc(n * sizeof(*words));
		vals = malloc(n * sizeof(*vals));
		if (objs == NULL || nis == NULL || words == NULL ||
		    vals == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		objs[i] = shim_obj_get(hs[i], w->kind, &nis[i]);
		if (objs[i] == NULL)
			goto out;
		words[i] = wait_futex(objs[i], w->kind);
	}
	rc = wait_loop(w, objs, nis, words, vals, n, which_p);
out:
	if (n > 8) {
		free(objs);
		free(nis);
		free(words);
		free(vals);
	}
	return rc;
}
