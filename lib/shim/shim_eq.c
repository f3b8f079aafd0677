/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading event queues and counters the NIC writes into the region, and
 * waiting on them: a short spin, then futex sleeps on the shared futex
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

#define WAIT_SPINS 2000
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
static void
futex_wait_any(volatile uint32_t *const *addrs, const uint32_t *vals,
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

static uint64_t
now_ms(void)
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

/* ---- event queues -------------------------------------------------------- */

static void
event_convert(const struct shim_ni *ni, const struct spinnic_event *e,
	      ptl_event_t *ev)
{
	ev->start = (void *)(uintptr_t)e->start;
	ev->user_ptr = (void *)(uintptr_t)e->user_ptr;
	ev->hdr_data = e->hdr_data;
	ev->match_bits = e->match_bits;
	ev->rlength = e->rlength;
	ev->mlength = e->mlength;
	ev->remote_offset = e->remote_offset;
	ev->uid = e->uid;
	ev->initiator = shim_initiator(ni, e->initiator);
	ev->type = (ptl_event_kind_t)e->type;
	switch (e->type) {
	case PTL_EVENT_GET_OVERFLOW:
	case PTL_EVENT_PUT_OVERFLOW:
	case PTL_EVENT_ATOMIC_OVERFLOW:
	case PTL_EVENT_FETCH_ATOMIC_OVERFLOW:
		ev->ptl_list = PTL_OVERFLOW_LIST;
		break;
	default:
		ev->ptl_list = PTL_PRIORITY_LIST;
		break;
	}
	ev->pt_index = e->pt_index;
	ev->ni_fail_type = e->ni_fail_type;
	ev->atomic_operation = (ptl_op_t)e->atomic_op;
	ev->atomic_type = (ptl_datatype_t)e->atomic_type;
}

/* Take the next event of one EQ: PTL_OK, PTL_EQ_DROPPED or PTL_EQ_EMPTY. */
static int
eq_take(struct shim_obj *o, const struct shim_ni *ni, ptl_event_t *ev)
{
	struct shim_eq *q = &o->u.eq;
	struct spinnic_event e;
	const struct spinnic_event *s;
	uint32_t t, d;
	int rc;

	pthread_mutex_lock(&q->lock);
	t = q->tail;
	s = &q->ring->slots[t & (q->count - 1)];
	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != t + 1) {
		pthread_mutex_unlock(&q->lock);
		return PTL_EQ_EMPTY;
	}
	e = *s;
	q->tail = t + 1;
	/* hands the slot back to the NIC */
	__atomic_store_n(&q->ring->tail, t + 1, __ATOMIC_RELEASE);
	d = __atomic_load_n(&q->ring->dropped, __ATOMIC_ACQUIRE);
	rc = d != q->last_dropped ? PTL_EQ_DROPPED : PTL_OK;
	q->last_dropped = d;
	pthread_mutex_unlock(&q->lock);
	event_convert(ni, &e, ev);
	return rc;
}

static int
eq_poll(const ptl_handle_eq_t *hs, unsigned n, ptl_time_t timeout,
	ptl_event_t *ev, unsigned *which)
{
	struct shim_obj *objs_stack[8], **objs = objs_stack;
	struct shim_ni *nis_stack[8], **nis = nis_stack;
	volatile uint32_t *words_stack[8], **words = words_stack;
	uint32_t vals_stack[8], *vals = vals_stack;
	uint64_t deadline = 0;
	unsigned i, spins = 0;
	int rc = PTL_ARG_INVALID;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (hs == NULL || n == 0 || ev == NULL || which == NULL)
		return PTL_ARG_INVALID;
	if (n > 8) {
		objs = malloc(n * sizeof(*objs));
		nis = malloc(n * sizeof(*nis));
		words = malloc(n * sizeof(*words));
		vals = malloc(n * sizeof(*vals));
		if (objs == NULL || nis == NULL || words == NULL ||
		    vals == NULL) {
			rc = PTL_NO_SPACE;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		objs[i] = shim_obj_get(hs[i], SHIM_KIND_EQ, &nis[i]);
		if (objs[i] == NULL)
			goto out;
		words[i] = &objs[i]->u.eq.ring->futex;
	}
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&objs[i]->waiters, 1, __ATOMIC_SEQ_CST);
	if (timeout != PTL_TIME_FOREVER)
		deadline = now_ms() + timeout;
	for (;;) {
		int sleep_ok = spins >= WAIT_SPINS;

		for (i = 0; i < n; i++) {
			if (__atomic_load_n(&objs[i]->closing, __ATOMIC_ACQUIRE)) {
				rc = PTL_INTERRUPTED;
				goto leave;
			}
			vals[i] = __atomic_load_n(words[i], __ATOMIC_ACQUIRE);
			if (sleep_ok)
				__atomic_add_fetch(&objs[i]->u.eq.ring->waiters,
						   1, __ATOMIC_SEQ_CST);
		}
		for (i = 0; i < n; i++) {
			rc = eq_take(objs[i], nis[i], ev);
			if (rc != PTL_EQ_EMPTY) {
				*which = i;
				break;
			}
		}
		if (rc == PTL_EQ_EMPTY && sleep_ok) {
			uint64_t left = (uint64_t)shim_g.slice_ms;

			if (timeout != PTL_TIME_FOREVER) {
				uint64_t t = now_ms();

				left = t >= deadline ? 0 : deadline - t;
				if (left > (uint64_t)shim_g.slice_ms)
					left = (uint64_t)shim_g.slice_ms;
			}
			if (left > 0 && !shim_ctrl_gone())
				futex_wait_any(words, vals, n, (int)left);
		}
		if (sleep_ok) {
			for (i = 0; i < n; i++)
				__atomic_sub_fetch(&objs[i]->u.eq.ring->waiters,
						   1, __ATOMIC_SEQ_CST);
		}
		if (rc != PTL_EQ_EMPTY)
			goto leave;
		if (timeout != PTL_TIME_FOREVER && now_ms() >= deadline)
			goto leave;
		if (shim_g.dead) {
			rc = PTL_INTERRUPTED;
			goto leave;
		}
		if (!sleep_ok) {
			spins++;
			shim_cpu_relax();
		}
	}
leave:
	for (i = 0; i < n; i++)
		__atomic_sub_fetch(&objs[i]->waiters, 1, __ATOMIC_SEQ_CST);
out:
	if (n > 8) {
		free(objs);
		free(nis);
		free(words);
		free(vals);
	}
	return rc;
}

int
PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	struct shim_ni *ni;
	struct shim_obj *o;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(eq_handle, SHIM_KIND_EQ, &ni);
	if (o == NULL || event == NULL)
		return PTL_ARG_INVALID;
	return eq_take(o, ni, event);
}

int
PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	unsigned which;

	return eq_poll(&eq_handle, 1, PTL_TIME_FOREVER, event, &which);
}

int
PtlEQPoll(const ptl_handle_eq_t *eq_handles, unsigned int size,
	  ptl_time_t timeout, ptl_event_t *event, unsigned int *which)
{
	return eq_poll(eq_handles, size, timeout, event, which);
}

/* ---- counters ------------------------------------------------------------ */

/* A consistent (success, failure) pair: the NIC bumps futex after each
 * change, so equal futex values around the reads mean no change between. */
static void
ct_read(const struct spinnic_ct *c, ptl_ct_event_t *ev)
{
	for (int i = 0; i < 64; i++) {
		uint32_t f = __atomic_load_n(&c->futex, __ATOMIC_ACQUIRE);

		ev->success = __atomic_load_n(&c->success, __ATOMIC_ACQUIRE);
		ev->failure = __atomic_load_n(&c->failure, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->futex, __ATOMIC_ACQUIRE) == f)
			return;
	}
}

int
PtlCTGet(ptl_handle_ct_t ct_handle, ptl_ct_event_t *event)
{
	struct shim_obj *o;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(ct_handle, SHIM_KIND_CT, NULL);
	if (o == NULL || event == NULL)
		return PTL_ARG_INVALID;
	ct_read(o->u.ct.rec, event);
	return PTL_OK;
}

static int
ct_poll(const ptl_handle_ct_t *hs, const ptl_size_t *tests, unsigned n,
	ptl_time_t timeout, ptl_ct_event_t *ev, unsigned *which)
{
	struct shim_obj *objs_stack[8], **objs = objs_stack;
	volatile uint32_t *words_stack[8], **words = words_stack;
	uint32_t vals_stack[8], *vals = vals_stack;
	uint64_t deadline = 0;
	unsigned i, spins = 0;
	int rc = PTL_ARG_INVALID;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (hs == NULL || tests == NULL || n == 0 || ev == NULL ||
	    which == NULL)
		return PTL_ARG_INVALID;
	if (n > 8) {
		objs = malloc(n * sizeof(*objs));
		words = malloc(n * sizeof(*words));
		vals = malloc(n * sizeof(*vals));
		if (objs == NULL || words == NULL || vals == NULL) {
			rc = PTL_NO_SPACE;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		objs[i] = shim_obj_get(hs[i], SHIM_KIND_CT, NULL);
		if (objs[i] == NULL)
			goto out;
		words[i] = &objs[i]->u.ct.rec->futex;
	}
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&objs[i]->waiters, 1, __ATOMIC_SEQ_CST);
	if (timeout != PTL_TIME_FOREVER)
		deadline = now_ms() + timeout;
	rc = PTL_CT_NONE_REACHED;
	for (;;) {
		int sleep_ok = spins >= WAIT_SPINS;

		for (i = 0; i < n; i++) {
			if (__atomic_load_n(&objs[i]->closing, __ATOMIC_ACQUIRE)) {
				rc = PTL_INTERRUPTED;
				goto leave;
			}
			vals[i] = __atomic_load_n(words[i], __ATOMIC_ACQUIRE);
			if (sleep_ok)
				__atomic_add_fetch(&objs[i]->u.ct.rec->waiters,
						   1, __ATOMIC_SEQ_CST);
		}
		for (i = 0; i < n; i++) {
			ct_read(objs[i]->u.ct.rec, ev);
			if (ev->success + ev->failure >= tests[i]) {
				*which = i;
				rc = PTL_OK;
				break;
			}
		}
		if (rc != PTL_OK && sleep_ok) {
			uint64_t left = (uint64_t)shim_g.slice_ms;

			if (timeout != PTL_TIME_FOREVER) {
				uint64_t t = now_ms();

				left = t >= deadline ? 0 : deadline - t;
				if (left > (uint64_t)shim_g.slice_ms)
					left = (uint64_t)shim_g.slice_ms;
			}
			if (left > 0 && !shim_ctrl_gone())
				futex_wait_any(words, vals, n, (int)left);
		}
		if (sleep_ok) {
			for (i = 0; i < n; i++)
				__atomic_sub_fetch(&objs[i]->u.ct.rec->waiters,
						   1, __ATOMIC_SEQ_CST);
		}
		if (rc == PTL_OK)
			goto leave;
		if (timeout != PTL_TIME_FOREVER && now_ms() >= deadline)
			goto leave;
		if (shim_g.dead) {
			rc = PTL_INTERRUPTED;
			goto leave;
		}
		if (!sleep_ok) {
			spins++;
			shim_cpu_relax();
		}
	}
leave:
	for (i = 0; i < n; i++)
		__atomic_sub_fetch(&objs[i]->waiters, 1, __ATOMIC_SEQ_CST);
out:
	if (n > 8) {
		free(objs);
		free(words);
		free(vals);
	}
	return rc;
}

int
PtlCTWait(ptl_handle_ct_t ct_handle, ptl_size_t test, ptl_ct_event_t *event)
{
	unsigned which;

	return ct_poll(&ct_handle, &test, 1, PTL_TIME_FOREVER, event, &which);
}

int
PtlCTPoll(const ptl_handle_ct_t *ct_handles, const ptl_size_t *tests,
	  unsigned int size, ptl_time_t timeout, ptl_ct_event_t *event,
	  unsigned int *which)
{
	return ct_poll(ct_handles, tests, size, timeout, event, which);
}
