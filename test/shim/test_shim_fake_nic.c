/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libspinnic against a fake NIC (fake_nic.c): the ATTACH message and
 * region, control requests, commands written to the ring, events and
 * counters read back (drops, futex wake-ups, timeouts), handle checks,
 * logical NIs, sPIN contexts and NIC memory, and a NIC that hangs up.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_nic.h"
#include "shim_internal.h"

struct fx {
	struct fake_nic f;
	ptl_handle_ni_t ni;
};

static int
setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	if (x == NULL || fake_nic_start(&x->f, FAKE_ANSWER) != 0)
		return -1;
	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, NULL, &x->ni) != PTL_OK)
		return -1;
	*state = x;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *x = *state;
	int bad;

	/* also after a failed test that left extra references */
	while (shim_g.init_refs > 0)
		PtlFini();
	unsetenv("SPINNIC_WAIT_SLICE_MS");
	fake_nic_stop(&x->f);
	bad = x->f.bad_msgs;
	if (bad != 0)
		print_error("fake NIC saw %d bad messages: %s\n", bad, x->f.why);
	free(x);
	return bad == 0 ? 0 : -1;
}

static uint32_t
last_id(struct fx *x, int op)
{
	struct spinnic_ctrl_msg m;

	pthread_mutex_lock(&x->f.lock);
	m = x->f.last[op];
	pthread_mutex_unlock(&x->f.lock);
	switch (op) {
	case SPINNIC_CTRL_EQ_ALLOC:
		return m.u.eq.eq;
	case SPINNIC_CTRL_CT_ALLOC:
		return m.u.ct.ct;
	case SPINNIC_CTRL_MD_BIND:
		return m.u.md.md;
	case SPINNIC_CTRL_ME_APPEND:
		return m.u.me.me;
	case SPINNIC_CTRL_CTX_INSTALL:
		return m.u.ctx.ctx;
	default:
		return m.u.nicmem.handle;
	}
}

static int
total_ops(struct fx *x)
{
	int n = 0;

	for (int op = 1; op < SPINNIC_CTRL_OP_MAX; op++)
		n += fake_nic_count(&x->f, op);
	return n;
}

static ptl_process_t
phys(uint32_t nid, uint32_t pid)
{
	ptl_process_t p;

	p.phys.nid = nid;
	p.phys.pid = pid;
	return p;
}

static void
test_attach(void **state)
{
	struct fx *x = *state;
	struct spin_nic_info info;
	ptl_process_t id;
	ptl_handle_ni_t ni2;
	ptl_ni_limits_t lim;
	struct stat st;

	assert_int_equal(x->f.nfds, 1);
	assert_non_null(x->f.region);
	assert_int_equal(x->f.attach.client_pid, getpid());
	assert_int_equal(x->f.attach.want_pid, SPINNIC_HANDLE_NONE);
	assert_int_equal(x->f.attach.region_size, 4u << 20);
	assert_int_equal(stat(x->f.path, &st), 0);
	/* the client's address of the region is its own mapping */
	assert_int_equal(x->f.attach.region_base_va,
			 (uintptr_t)shim_g.region.base);
	assert_int_equal(x->f.last[SPINNIC_CTRL_NI_INIT].u.ni.options,
			 PTL_NI_MATCHING | PTL_NI_PHYSICAL);
	assert_int_equal(x->f.last[SPINNIC_CTRL_NI_INIT].u.ni.desired.max_eqs,
			 -1);

	assert_int_equal(PtlGetPhysId(x->ni, &id), PTL_OK);
	assert_int_equal(id.phys.nid, 7);
	assert_int_equal(id.phys.pid, 42);
	assert_int_equal(spin_nic_info(x->ni, &info), PTL_OK);
	assert_int_equal(info.payload_size, 2048);
	assert_int_equal(info.nic_mem_total, 1u << 20);
	assert_int_equal(info.region_size, 4u << 20);
	/* the HPU count comes from the attach reply (ABI 5) */
	assert_int_equal(info.nhpu, 2);

	/* same options again: same NI, reference counted, no new request */
	assert_int_equal(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
				   PTL_PID_ANY, NULL, &lim, &ni2), PTL_OK);
	assert_true(PtlHandleIsEqual(ni2, x->ni));
	assert_int_equal(lim.max_pt_index, 63);
	assert_int_equal(fake_nic_count(&x->f, SPINNIC_CTRL_NI_INIT), 1);
	assert_int_equal(PtlNIFini(ni2), PTL_OK);
	assert_int_equal(fake_nic_count(&x->f, SPINNIC_CTRL_NI_FINI), 0);
	/* a different pid than the process has is refused */
	assert_int_equal(PtlNIInit(0, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, 9,
				   NULL, NULL, &ni2), PTL_ARG_INVALID);
	/* bad option combinations never reach the NIC */
	assert_int_equal(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_NO_MATCHING |
				   PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
				   &ni2), PTL_ARG_INVALID);
	assert_int_equal(PtlNIInit(0, PTL_NI_MATCHING, PTL_PID_ANY, NULL, NULL,
				   &ni2), PTL_ARG_INVALID);
	assert_int_equal(PtlNIInit(3, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
				   PTL_PID_ANY, NULL, NULL, &ni2),
			 PTL_ARG_INVALID);
	assert_int_equal(fake_nic_count(&x->f, SPINNIC_CTRL_NI_INIT), 1);
	/* the last PtlNIFini reaches the NIC */
	assert_int_equal(PtlNIFini(x->ni), PTL_OK);
	assert_int_equal(fake_nic_count(&x->f, SPINNIC_CTRL_NI_FINI), 1);
	assert_int_equal(PtlNIFini(x->ni), PTL_ARG_INVALID);
}

static void
test_put_get_commands(void **state)
{
	struct fx *x = *state;
	uint8_t *buf = spin_host_alloc(4096);
	ptl_md_t md = {
		.start = buf, .length = 4096, .eq_handle = PTL_EQ_NONE,
		.ct_handle = PTL_CT_NONE,
	};
	struct spinnic_cmd c;
	ptl_handle_md_t mdh;
	ptl_handle_ct_t cth;
	ptl_ct_event_t inc = { .success = 3, .failure = 1 };
	uint32_t md_id;

	assert_non_null(buf);
	assert_int_equal(PtlMDBind(x->ni, &md, &mdh), PTL_OK);
	md_id = last_id(x, SPINNIC_CTRL_MD_BIND);
	assert_int_equal(x->f.last[SPINNIC_CTRL_MD_BIND].u.md.start,
			 (uintptr_t)buf);
	assert_int_equal(x->f.last[SPINNIC_CTRL_MD_BIND].u.md.eq,
			 SPINNIC_HANDLE_NONE);
	assert_false(fake_nic_cmd_pop(&x->f, &c));

	/* an ack needs an EQ (full) or a CT (counting): this MD has none */
	assert_int_equal(PtlPut(mdh, 16, 1000, PTL_ACK_REQ, phys(1, 2), 4,
				0xabcdull, 77, (void *)0x1234, 0x5678),
			 PTL_ARG_INVALID);
	assert_int_equal(PtlPut(mdh, 16, 1000, PTL_CT_ACK_REQ, phys(1, 2), 4,
				0xabcdull, 77, (void *)0x1234, 0x5678),
			 PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(PtlPut(mdh, 16, 1000, PTL_NO_ACK_REQ, phys(1, 2), 4,
				0xabcdull, 77, (void *)0x1234, 0x5678), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_PUT);
	assert_int_equal(c.ni, 3);
	assert_int_equal(c.md, md_id);
	assert_int_equal(c.ack_req, SPINNIC_PTL_NO_ACK_REQ);
	assert_int_equal(c.local_offset, 16);
	assert_int_equal(c.length, 1000);
	assert_int_equal(c.target.nid, 1);
	assert_int_equal(c.target.pid, 2);
	assert_int_equal(c.pt_index, 4);
	assert_int_equal(c.match_bits, 0xabcd);
	assert_int_equal(c.remote_offset, 77);
	assert_int_equal(c.user_ptr, 0x1234);
	assert_int_equal(c.hdr_data, 0x5678);

	assert_int_equal(PtlGet(mdh, 0, 4096, phys(5, 6), 9, 1, 2,
				(void *)0x99), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_GET);
	assert_int_equal(c.length, 4096);
	assert_int_equal(c.target.nid, 5);
	assert_int_equal(c.pt_index, 9);
	assert_int_equal(c.user_ptr, 0x99);

	/* outside the MD, bad ack, bad PT, wildcard target: refused here */
	assert_int_equal(PtlPut(mdh, 4000, 97, PTL_NO_ACK_REQ, phys(1, 2), 4,
				0, 0, NULL, 0), PTL_ARG_INVALID);
	assert_int_equal(PtlPut(mdh, 0, 1, (ptl_ack_req_t)9, phys(1, 2), 4, 0,
				0, NULL, 0), PTL_ARG_INVALID);
	assert_int_equal(PtlPut(mdh, 0, 1, PTL_NO_ACK_REQ, phys(1, 2), 64, 0,
				0, NULL, 0), PTL_ARG_INVALID);
	assert_int_equal(PtlPut(mdh, 0, 1, PTL_NO_ACK_REQ,
				phys(PTL_NID_ANY, 2), 4, 0, 0, NULL, 0),
			 PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&x->f, &c));

	/* counter updates apply here, then tell the NIC (ordered with puts:
	 * it fires what they release) */
	assert_int_equal(PtlCTAlloc(x->ni, &cth), PTL_OK);
	/* only one of success and failure may be non-zero in an increment */
	assert_int_equal(PtlCTInc(cth, inc), PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&x->f, &c));
	inc.failure = 0;
	assert_int_equal(PtlCTInc(cth, inc), PTL_OK);
	assert_int_equal(PtlCTInc(cth, inc), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_CT_CHECK);
	assert_int_equal(c.md, last_id(x, SPINNIC_CTRL_CT_ALLOC));
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(PtlCTSet(cth, inc), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_CT_CHECK);
	assert_false(fake_nic_cmd_pop(&x->f, &c));

	assert_int_equal(PtlMDRelease(mdh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_MD_RELEASE].u.md.md, md_id);
	assert_int_equal(PtlPut(mdh, 0, 1, PTL_NO_ACK_REQ, phys(1, 2), 4, 0, 0,
				NULL, 0), PTL_ARG_INVALID);
	assert_int_equal(PtlCTFree(cth), PTL_OK);
	spin_host_free(buf);
}

/* A full command ring makes PtlPut wait, never drop. */
struct drain {
	struct fake_nic *f;
	int n;
	uint64_t next;
	int in_order;
};

static void *
drain_ring(void *arg)
{
	struct drain *d = arg;
	struct spinnic_cmd c;

	usleep(50000); /* let the producer fill the ring and block */
	while (d->next < (uint64_t)d->n) {
		if (!fake_nic_cmd_pop(d->f, &c)) {
			sched_yield();
			continue;
		}
		d->in_order &= c.match_bits == d->next;
		d->next++;
	}
	return NULL;
}

static void
test_ring_full(void **state)
{
	struct fx *x = *state;
	uint64_t word = 0;
	ptl_md_t md = {
		.start = &word, .length = sizeof(word),
		.eq_handle = PTL_EQ_NONE, .ct_handle = PTL_CT_NONE,
	};
	struct drain d = { .f = &x->f, .n = 3000, .in_order = 1 };
	ptl_handle_md_t mdh;
	pthread_t t;

	/* malloc'd (here: stack) memory is a valid MD too */
	assert_int_equal(PtlMDBind(x->ni, &md, &mdh), PTL_OK);
	assert_int_equal(pthread_create(&t, NULL, drain_ring, &d), 0);
	for (int i = 0; i < d.n; i++)
		assert_int_equal(PtlPut(mdh, 0, 8, PTL_NO_ACK_REQ, phys(1, 1),
					0, (uint64_t)i, 0, NULL, 0), PTL_OK);
	pthread_join(t, NULL);
	assert_int_equal(d.next, d.n);
	assert_true(d.in_order);
}

/* Puts from several threads: every command arrives once, each thread's
 * in its own order. */
struct producer {
	ptl_handle_md_t md;
	uint64_t base;
	int n;
	int rc;
};

static void *
produce(void *arg)
{
	struct producer *p = arg;

	p->rc = PTL_OK;
	for (int i = 0; i < p->n && p->rc == PTL_OK; i++)
		p->rc = PtlPut(p->md, 0, 8, PTL_NO_ACK_REQ, phys(1, 1), 0,
			       p->base + (uint64_t)i, 0, NULL, 0);
	return NULL;
}

static void
test_ring_threads(void **state)
{
	struct fx *x = *state;
	uint64_t word = 0, next[2] = { 0, 0 };
	ptl_md_t md = {
		.start = &word, .length = sizeof(word),
		.eq_handle = PTL_EQ_NONE, .ct_handle = PTL_CT_NONE,
	};
	struct producer p[2] = {
		{ .base = 0, .n = 2500 }, { .base = 1ull << 32, .n = 2500 },
	};
	struct spinnic_cmd c;
	pthread_t t[2];
	int got = 0;

	assert_int_equal(PtlMDBind(x->ni, &md, &p[0].md), PTL_OK);
	p[1].md = p[0].md;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, produce, &p[i]), 0);
	while (got < p[0].n + p[1].n) {
		if (!fake_nic_cmd_pop(&x->f, &c)) {
			sched_yield();
			continue;
		}
		int k = (int)(c.match_bits >> 32);

		assert_true(k == 0 || k == 1);
		assert_int_equal(c.match_bits, p[k].base + next[k]);
		next[k]++;
		got++;
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(p[i].rc, PTL_OK);
	}
	assert_false(fake_nic_cmd_pop(&x->f, &c));
}

static struct spinnic_event
ev_make(uint16_t type, uint64_t start, uint64_t user_ptr, uint64_t mlength)
{
	struct spinnic_event e;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.start = start;
	e.user_ptr = user_ptr;
	e.mlength = mlength;
	e.rlength = mlength + 1;
	e.hdr_data = 0xfeed;
	e.match_bits = 0x77;
	e.remote_offset = 5;
	e.initiator.nid = 11;
	e.initiator.pid = 12;
	e.uid = 1000;
	e.pt_index = 3;
	e.ni_fail_type = SPINNIC_PTL_NI_OK;
	return e;
}

static void
test_eq_events_and_drops(void **state)
{
	struct fx *x = *state;
	struct spinnic_event e;
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	uint32_t id;

	assert_int_equal(PtlEQAlloc(x->ni, 3, &eq), PTL_OK);
	id = last_id(x, SPINNIC_CTRL_EQ_ALLOC);
	assert_int_equal(x->f.eq_count[id], 4); /* rounded to a power of 2 */
	assert_int_equal(fake_nic_eq(&x->f, id)->mask, 3);
	assert_int_equal(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);

	e = ev_make(PTL_EVENT_PUT_OVERFLOW, 0x1000, 0x2000, 64);
	assert_true(fake_nic_post_event(&x->f, id, &e));
	assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
	assert_int_equal(ev.type, PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.ptl_list, PTL_OVERFLOW_LIST);
	assert_ptr_equal(ev.start, (void *)0x1000);
	assert_ptr_equal(ev.user_ptr, (void *)0x2000);
	assert_int_equal(ev.mlength, 64);
	assert_int_equal(ev.rlength, 65);
	assert_int_equal(ev.hdr_data, 0xfeed);
	assert_int_equal(ev.match_bits, 0x77);
	assert_int_equal(ev.remote_offset, 5);
	assert_int_equal(ev.initiator.phys.nid, 11);
	assert_int_equal(ev.initiator.phys.pid, 12);
	assert_int_equal(ev.uid, 1000);
	assert_int_equal(ev.pt_index, 3);
	assert_int_equal(ev.ni_fail_type, PTL_NI_OK);
	assert_int_equal(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);

	/* six events into four slots: two dropped, reported once */
	for (int i = 0; i < 6; i++) {
		e = ev_make(PTL_EVENT_SEND, 0, (uint64_t)i, 0);
		assert_int_equal(fake_nic_post_event(&x->f, id, &e), i < 4);
	}
	assert_int_equal(PtlEQGet(eq, &ev), PTL_EQ_DROPPED);
	assert_ptr_equal(ev.user_ptr, (void *)0);
	assert_int_equal(ev.ptl_list, PTL_PRIORITY_LIST);
	for (int i = 1; i < 4; i++) {
		assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
		assert_ptr_equal(ev.user_ptr, (void *)(uintptr_t)i);
	}
	assert_int_equal(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
	/* space again: the ring wraps and sequence numbers keep checking */
	for (int i = 0; i < 9; i++) {
		e = ev_make(PTL_EVENT_ACK, 0, 100 + (uint64_t)i, 0);
		assert_true(fake_nic_post_event(&x->f, id, &e));
		assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
		assert_ptr_equal(ev.user_ptr, (void *)(uintptr_t)(100 + i));
	}
	/* a stale slot (seq of the previous lap) is not an event */
	assert_int_equal(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
	assert_int_equal(PtlEQPoll(&eq, 1, 0, &ev, &id), PTL_EQ_EMPTY);
	assert_int_equal(PtlEQFree(eq), PTL_OK);
	assert_int_equal(PtlEQGet(eq, &ev), PTL_ARG_INVALID);
}

/* spinnic's NIC time in the event record (ABI 8), not in ptl_event_t:
 * spin_event_nic_time() gives it for the last event this thread took,
 * and only for that event */
static void
test_eq_nic_time(void **state)
{
	struct fx *x = *state;
	struct spinnic_event e;
	ptl_handle_eq_t eq;
	ptl_event_t ev, first;
	uint64_t ns = 0;
	uint32_t id;

	assert_int_equal(PtlEQAlloc(x->ni, 4, &eq), PTL_OK);
	id = last_id(x, SPINNIC_CTRL_EQ_ALLOC);
	e = ev_make(PTL_EVENT_PUT, 0x1000, 0x2000, 64);
	e.nic_ns = 12345;
	assert_true(fake_nic_post_event(&x->f, id, &e));
	assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
	assert_int_equal(spin_event_nic_time(&ev, &ns), PTL_OK);
	assert_int_equal(ns, 12345);
	/* saturated by the NIC: the largest time it can say */
	e.nic_ns = UINT32_MAX;
	assert_true(fake_nic_post_event(&x->f, id, &e));
	assert_int_equal(PtlEQWait(eq, &ev), PTL_OK);
	assert_int_equal(spin_event_nic_time(&ev, &ns), PTL_OK);
	assert_int_equal(ns, UINT32_MAX);
	first = ev;
	/* an event without a time (0: an older spinnic, an initiator
	 * event) has none, and the earlier event's is gone with it */
	e = ev_make(PTL_EVENT_PUT, 0x1000, 0x3000, 64);
	assert_true(fake_nic_post_event(&x->f, id, &e));
	assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
	assert_int_equal(spin_event_nic_time(&ev, &ns), PTL_FAIL);
	assert_int_equal(spin_event_nic_time(&first, &ns), PTL_FAIL);
	/* another event than the last one taken: none */
	e = ev_make(PTL_EVENT_PUT, 0x1000, 0x2000, 64);
	e.nic_ns = 7;
	assert_true(fake_nic_post_event(&x->f, id, &e));
	assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
	first = ev;
	first.mlength = 63;
	assert_int_equal(spin_event_nic_time(&first, &ns), PTL_FAIL);
	first = ev;
	first.user_ptr = (void *)0x2001;
	assert_int_equal(spin_event_nic_time(&first, &ns), PTL_FAIL);
	assert_int_equal(spin_event_nic_time(NULL, &ns), PTL_FAIL);
	assert_int_equal(spin_event_nic_time(&ev, NULL), PTL_FAIL);
	assert_int_equal(spin_event_nic_time(&ev, &ns), PTL_OK);
	assert_int_equal(ns, 7);
	assert_int_equal(PtlEQFree(eq), PTL_OK);
}

struct waiter {
	ptl_handle_eq_t eqs[2];
	unsigned n;
	ptl_time_t timeout;
	ptl_event_t ev;
	unsigned which;
	int rc;
};

static void *
eq_waiter(void *arg)
{
	struct waiter *w = arg;

	if (w->n == 1 && w->timeout == PTL_TIME_FOREVER)
		w->rc = PtlEQWait(w->eqs[0], &w->ev);
	else
		w->rc = PtlEQPoll(w->eqs, w->n, w->timeout, &w->ev, &w->which);
	return NULL;
}

/*
 * Waits sleep at most one slice per futex wait, so a lost wake-up only
 * costs a slice. With 2 s slices a wake-up that does not work shows as a
 * waiter still asleep long after the post.
 */
static void
long_slices(void)
{
	setenv("SPINNIC_WAIT_SLICE_MS", "2000", 1);
	assert_int_equal(PtlInit(), PTL_OK); /* re-reads the environment */
}

static void
long_slices_end(void)
{
	PtlFini();
	unsetenv("SPINNIC_WAIT_SLICE_MS");
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait until a sleeping client registered on the EQ's futex. */
static void
wait_for_sleeper(volatile uint32_t *waiters)
{
	for (int i = 0; i < 5000 &&
	     __atomic_load_n(waiters, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(1000);
	assert_true(__atomic_load_n(waiters, __ATOMIC_ACQUIRE) > 0);
}

static void
test_eq_wait_wakeup(void **state)
{
	struct fx *x = *state;
	struct waiter w = { .n = 1, .timeout = PTL_TIME_FOREVER };
	struct spinnic_event e = ev_make(PTL_EVENT_PUT, 0, 0x42, 8);
	uint32_t id;
	pthread_t t;

	double t0;

	long_slices();
	assert_int_equal(PtlEQAlloc(x->ni, 16, &w.eqs[0]), PTL_OK);
	id = last_id(x, SPINNIC_CTRL_EQ_ALLOC);
	assert_int_equal(pthread_create(&t, NULL, eq_waiter, &w), 0);
	/* the waiter spins, then sleeps on the shared futex word */
	wait_for_sleeper(&fake_nic_eq(&x->f, id)->waiters);
	t0 = now_s();
	assert_true(fake_nic_post_event(&x->f, id, &e));
	pthread_join(t, NULL);
	assert_true(now_s() - t0 < 1.0); /* woken, not timed out */
	assert_int_equal(w.rc, PTL_OK);
	assert_int_equal(w.ev.type, PTL_EVENT_PUT);
	assert_ptr_equal(w.ev.user_ptr, (void *)0x42);
	assert_int_equal(fake_nic_eq(&x->f, id)->waiters, 0);

	/* PtlEQFree while a thread waits: it returns PTL_INTERRUPTED */
	assert_int_equal(pthread_create(&t, NULL, eq_waiter, &w), 0);
	wait_for_sleeper(&fake_nic_eq(&x->f, id)->waiters);
	t0 = now_s();
	assert_int_equal(PtlEQFree(w.eqs[0]), PTL_OK);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, PTL_INTERRUPTED);
	assert_true(now_s() - t0 < 1.0);
	long_slices_end();
}

static void
test_eq_poll_multi(void **state)
{
	struct fx *x = *state;
	struct waiter w = { .n = 2, .timeout = 20 };
	struct spinnic_event e = ev_make(PTL_EVENT_GET, 0, 0x7, 0);
	uint32_t id0, id1;
	pthread_t t;
	double t0;

	long_slices();
	assert_int_equal(PtlEQAlloc(x->ni, 8, &w.eqs[0]), PTL_OK);
	id0 = last_id(x, SPINNIC_CTRL_EQ_ALLOC);
	assert_int_equal(PtlEQAlloc(x->ni, 8, &w.eqs[1]), PTL_OK);
	id1 = last_id(x, SPINNIC_CTRL_EQ_ALLOC);
	/* nothing there: the timeout ends it */
	eq_waiter(&w);
	assert_int_equal(w.rc, PTL_EQ_EMPTY);
	/* an event on the second EQ wakes a waiter on both */
	w.timeout = PTL_TIME_FOREVER;
	assert_int_equal(pthread_create(&t, NULL, eq_waiter, &w), 0);
	wait_for_sleeper(&fake_nic_eq(&x->f, id1)->waiters);
	t0 = now_s();
	assert_true(fake_nic_post_event(&x->f, id1, &e));
	pthread_join(t, NULL);
	assert_true(now_s() - t0 < 1.0);
	assert_int_equal(w.rc, PTL_OK);
	assert_int_equal(w.which, 1);
	assert_ptr_equal(w.ev.user_ptr, (void *)0x7);
	/* events on both: the first EQ is reported */
	assert_true(fake_nic_post_event(&x->f, id1, &e));
	assert_true(fake_nic_post_event(&x->f, id0, &e));
	eq_waiter(&w);
	assert_int_equal(w.rc, PTL_OK);
	assert_int_equal(w.which, 0);
	/* a handle of another kind in the set */
	w.eqs[0] = x->ni;
	eq_waiter(&w);
	assert_int_equal(w.rc, PTL_ARG_INVALID);
	long_slices_end();
}

struct ct_waiter {
	ptl_handle_ct_t ct;
	ptl_size_t test;
	ptl_ct_event_t ev;
	int rc;
};

static void *
ct_waiter(void *arg)
{
	struct ct_waiter *w = arg;

	w->rc = PtlCTWait(w->ct, w->test, &w->ev);
	return NULL;
}

static void
test_ct(void **state)
{
	struct fx *x = *state;
	struct ct_waiter w = { .test = 5 };
	ptl_ct_event_t ev;
	ptl_size_t tests[1] = { 100 };
	unsigned which;
	uint32_t id;
	pthread_t t;

	double t0;

	long_slices();
	assert_int_equal(PtlCTAlloc(x->ni, &w.ct), PTL_OK);
	id = last_id(x, SPINNIC_CTRL_CT_ALLOC);
	assert_int_equal(PtlCTGet(w.ct, &ev), PTL_OK);
	assert_int_equal(ev.success, 0);
	fake_nic_ct_set(&x->f, id, 3, 0);
	assert_int_equal(PtlCTGet(w.ct, &ev), PTL_OK);
	assert_int_equal(ev.success, 3);

	assert_int_equal(pthread_create(&t, NULL, ct_waiter, &w), 0);
	wait_for_sleeper(&fake_nic_ct(&x->f, id)->waiters);
	fake_nic_ct_set(&x->f, id, 4, 0); /* not yet: 4 < 5 */
	usleep(20000);
	t0 = now_s();
	fake_nic_ct_set(&x->f, id, 4, 1); /* success + failure reaches 5 */
	pthread_join(t, NULL);
	assert_true(now_s() - t0 < 1.0);
	assert_int_equal(w.rc, PTL_OK);
	assert_int_equal(w.ev.success, 4);
	assert_int_equal(w.ev.failure, 1);

	assert_int_equal(PtlCTPoll(&w.ct, tests, 1, 10, &ev, &which),
			 PTL_CT_NONE_REACHED);
	tests[0] = 5;
	assert_int_equal(PtlCTPoll(&w.ct, tests, 1, 10, &ev, &which), PTL_OK);
	assert_int_equal(which, 0);
	assert_int_equal(PtlCTFree(w.ct), PTL_OK);
	assert_int_equal(PtlCTGet(w.ct, &ev), PTL_ARG_INVALID);
	long_slices_end();
}

/* spin_set_wait_polls: range, previous value; 0 sleeps at the first
 * failed poll and the NIC's wake-up still ends the wait */
static void
test_wait_polls(void **state)
{
	struct fx *x = *state;
	struct ct_waiter w = { .test = 2 };
	uint32_t id;
	pthread_t t;
	int old;

	assert_int_equal(spin_set_wait_polls(1000001), -EINVAL);
	old = spin_set_wait_polls(0);
	assert_int_equal(old, 2000); /* the default (no SPINNIC_WAIT_POLLS) */
	assert_int_equal(spin_set_wait_polls(0), 0);
	long_slices();
	assert_int_equal(PtlCTAlloc(x->ni, &w.ct), PTL_OK);
	id = last_id(x, SPINNIC_CTRL_CT_ALLOC);
	assert_int_equal(pthread_create(&t, NULL, ct_waiter, &w), 0);
	wait_for_sleeper(&fake_nic_ct(&x->f, id)->waiters);
	fake_nic_ct_set(&x->f, id, 2, 0);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, PTL_OK);
	assert_int_equal(w.ev.success, 2);
	assert_int_equal(PtlCTFree(w.ct), PTL_OK);
	long_slices_end();
	assert_int_equal(spin_set_wait_polls((unsigned)old), 0);
}

static void
test_handle_kinds(void **state)
{
	struct fx *x = *state;
	ptl_me_t me = {
		.start = NULL, .length = 0, .ct_handle = PTL_CT_NONE,
		.uid = PTL_UID_ANY, .options = PTL_ME_OP_PUT,
		.match_bits = 1,
	};
	ptl_le_t le = { .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY };
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_handle_me_t meh;
	ptl_handle_le_t leh;
	ptl_handle_ni_t ni;
	ptl_event_t ev;
	ptl_ct_event_t cev;
	ptl_pt_index_t pt;
	int before;

	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	assert_int_equal(PtlEQAlloc(x->ni, 8, &eq), PTL_OK);
	assert_int_equal(PtlCTAlloc(x->ni, &ct), PTL_OK);
	assert_int_equal(PtlPTAlloc(x->ni, 0, eq, PTL_PT_ANY, &pt), PTL_OK);
	assert_int_equal(pt, 5);
	assert_int_equal(x->f.last[SPINNIC_CTRL_PT_ALLOC].u.pt.eq,
			 last_id(x, SPINNIC_CTRL_EQ_ALLOC));
	assert_int_equal(PtlMEAppend(x->ni, pt, &me, PTL_PRIORITY_LIST,
				     (void *)0x5, &meh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.match_bits, 1);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.user_ptr, 5);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.match_id.nid,
			 PTL_NID_ANY);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.ctx,
			 SPINNIC_HANDLE_NONE);

	/* every handle names its NI */
	assert_int_equal(PtlNIHandle(eq, &ni), PTL_OK);
	assert_true(PtlHandleIsEqual(ni, x->ni));
	assert_int_equal(PtlNIHandle(meh, &ni), PTL_OK);
	assert_true(PtlHandleIsEqual(ni, x->ni));
	assert_int_equal(PtlNIHandle(PTL_INVALID_HANDLE, &ni), PTL_ARG_INVALID);
	assert_false(PtlHandleIsEqual(eq, ct));

	before = total_ops(x);
	/* wrong kinds: refused without asking the NIC */
	assert_int_equal(PtlEQGet(ct, &ev), PTL_ARG_INVALID);
	assert_int_equal(PtlCTGet(eq, &cev), PTL_ARG_INVALID);
	assert_int_equal(PtlCTGet(PTL_CT_NONE, &cev), PTL_ARG_INVALID);
	assert_int_equal(PtlEQGet(PTL_EQ_NONE, &ev), PTL_ARG_INVALID);
	assert_int_equal(PtlMDRelease(eq), PTL_ARG_INVALID);
	assert_int_equal(PtlEQFree(x->ni), PTL_ARG_INVALID);
	assert_int_equal(PtlLEUnlink(meh), PTL_ARG_INVALID);
	assert_int_equal(PtlMEUnlink(eq), PTL_ARG_INVALID);
	assert_int_equal(PtlCTInc(eq, cev), PTL_ARG_INVALID);
	assert_int_equal(spin_ctx_free(ct), PTL_ARG_INVALID);
	/* an LE on a matching NI, an ME with a CT handle of the wrong kind */
	assert_int_equal(PtlLEAppend(x->ni, pt, &le, PTL_PRIORITY_LIST, NULL,
				     &leh), PTL_ARG_INVALID);
	me.ct_handle = eq;
	assert_int_equal(PtlMEAppend(x->ni, pt, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_ARG_INVALID);
	me.ct_handle = PTL_CT_NONE;
	assert_int_equal(PtlMEAppend(x->ni, 64, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_ARG_INVALID);
	assert_int_equal(PtlMEAppend(x->ni, pt, &me, (ptl_list_t)7, NULL,
				     &meh), PTL_ARG_INVALID);
	me.options = 1u << 25;
	assert_int_equal(PtlMEAppend(x->ni, pt, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_ARG_INVALID);
	me.options = PTL_ME_OP_PUT;
	me.start = (void *)(UINTPTR_MAX - 4);
	me.length = 10; /* a range that wraps */
	assert_int_equal(PtlMEAppend(x->ni, pt, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_ARG_INVALID);
	me.start = NULL;
	me.length = 0;
	assert_int_equal(PtlPTAlloc(x->ni, PTL_PT_FLOWCTRL, PTL_EQ_NONE,
				    PTL_PT_ANY, &pt), PTL_PT_EQ_NEEDED);
	assert_int_equal(PtlPTAlloc(x->ni, 0, ct, PTL_PT_ANY, &pt),
			 PTL_ARG_INVALID);
	assert_int_equal(before, total_ops(x));

	/* the right kind reaches the NIC with the NIC's id */
	assert_int_equal(PtlMEUnlink(meh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_UNLINK].u.me.me,
			 x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.me);
	/* the NIC's verdict on a stale entry comes back */
	x->f.status[SPINNIC_CTRL_ME_UNLINK] = SPINNIC_PTL_ARG_INVALID;
	assert_int_equal(PtlMEUnlink(meh), PTL_ARG_INVALID);
	/* a freed EQ's handle is dead, and so after reuse of its slot */
	assert_int_equal(PtlEQFree(eq), PTL_OK);
	assert_int_equal(PtlEQFree(eq), PTL_ARG_INVALID);
	for (int i = 0; i < 40; i++) {
		ptl_handle_eq_t eq2;

		/* 16 slots: the freed one comes back with a new generation */
		assert_int_equal(PtlEQAlloc(x->ni, 8, &eq2), PTL_OK);
		assert_false(PtlHandleIsEqual(eq, eq2));
		assert_int_equal(PtlEQGet(eq, &ev), PTL_ARG_INVALID);
		assert_int_equal(PtlEQGet(eq2, &ev), PTL_EQ_EMPTY);
		assert_int_equal(PtlEQFree(eq2), PTL_OK);
	}
	/* PtlPTFree goes to the NIC */
	assert_int_equal(PtlPTFree(x->ni, 5), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_PT_FREE].u.pt.pt_index, 5);
	assert_int_equal(PtlPTFree(x->ni, PTL_PT_ANY), PTL_ARG_INVALID);
}

static void
test_nonmatching_le(void **state)
{
	struct fx *x = *state;
	uint8_t *buf = spin_host_alloc(256);
	ptl_le_t le = {
		.start = buf, .length = 256, .ct_handle = PTL_CT_NONE,
		.uid = PTL_UID_ANY, .options = PTL_LE_OP_PUT | PTL_LE_USE_ONCE,
	};
	ptl_me_t me = { .ct_handle = PTL_CT_NONE };
	ptl_handle_ni_t ni;
	ptl_handle_le_t leh;
	ptl_handle_me_t meh;

	assert_int_equal(PtlNIInit(0, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL,
				   42, NULL, NULL, &ni), PTL_OK);
	assert_false(PtlHandleIsEqual(ni, x->ni));
	assert_int_equal(x->f.last[SPINNIC_CTRL_NI_INIT].u.ni.options,
			 PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL);
	assert_int_equal(PtlLEAppend(ni, 1, &le, PTL_OVERFLOW_LIST, NULL,
				     &leh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.list,
			 PTL_OVERFLOW_LIST);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.start,
			 (uintptr_t)buf);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.ignore_bits, 0);
	assert_int_equal(PtlMEAppend(ni, 1, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_ARG_INVALID);
	assert_int_equal(PtlMEUnlink(leh), PTL_ARG_INVALID);
	assert_int_equal(PtlLESearch(ni, 1, &le, PTL_SEARCH_DELETE, NULL),
			 PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_SEARCH].u.me.list,
			 SPINNIC_PTL_SEARCH_DELETE);
	assert_int_equal(PtlLEUnlink(leh), PTL_OK);
	assert_int_equal(PtlNIFini(ni), PTL_OK);
	spin_host_free(buf);
}

static void
test_logical(void **state)
{
	struct fx *x = *state;
	ptl_process_t map[3] = { phys(1, 10), phys(7, 42), phys(2, 20) };
	ptl_process_t got[3], id;
	struct spinnic_event e = ev_make(PTL_EVENT_PUT, 0, 0, 0);
	uint64_t word;
	ptl_md_t md = {
		.start = &word, .length = 8, .eq_handle = PTL_EQ_NONE,
		.ct_handle = PTL_CT_NONE,
	};
	ptl_me_t me = { .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
			.options = PTL_ME_OP_PUT };
	struct spinnic_cmd c;
	ptl_handle_md_t mdh;
	ptl_handle_me_t meh;
	ptl_handle_eq_t eq;
	ptl_handle_ni_t ni;
	ptl_size_t n;
	ptl_event_t ev;

	assert_int_equal(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_LOGICAL,
				   PTL_PID_ANY, NULL, NULL, &ni), PTL_OK);
	assert_int_equal(PtlGetId(ni, &id), PTL_ARG_INVALID); /* no map yet */
	assert_int_equal(PtlSetMap(ni, 3, map), PTL_OK);
	assert_int_equal(PtlSetMap(x->ni, 3, map), PTL_ARG_INVALID);
	assert_int_equal(PtlGetMap(ni, 3, got, &n), PTL_OK);
	assert_int_equal(n, 3);
	assert_int_equal(got[2].phys.pid, 20);
	assert_int_equal(PtlGetId(ni, &id), PTL_OK);
	assert_int_equal(id.rank, 1);

	assert_int_equal(PtlMDBind(ni, &md, &mdh), PTL_OK);
	id.rank = 2;
	assert_int_equal(PtlPut(mdh, 0, 8, PTL_NO_ACK_REQ, id, 0, 0, 0, NULL,
				0), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.target.nid, 2);
	assert_int_equal(c.target.pid, 20);
	id.rank = 3;
	assert_int_equal(PtlPut(mdh, 0, 8, PTL_NO_ACK_REQ, id, 0, 0, 0, NULL,
				0), PTL_ARG_INVALID);

	me.match_id.rank = 0;
	assert_int_equal(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.match_id.nid, 1);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.match_id.pid,
			 10);
	me.match_id.rank = PTL_RANK_ANY;
	assert_int_equal(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL,
				     &meh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.match_id.pid,
			 PTL_PID_ANY);

	/* events name the initiator by rank */
	assert_int_equal(PtlEQAlloc(ni, 4, &eq), PTL_OK);
	e.initiator.nid = 2;
	e.initiator.pid = 20;
	assert_true(fake_nic_post_event(&x->f,
					last_id(x, SPINNIC_CTRL_EQ_ALLOC), &e));
	assert_int_equal(PtlEQGet(eq, &ev), PTL_OK);
	assert_int_equal(ev.initiator.rank, 2);
	assert_int_equal(PtlNIFini(ni), PTL_OK);
}

static void
test_spin_ctx_and_nicmem(void **state)
{
	struct fx *x = *state;
	static const char args[] = "vector(4,1,8)[double]";
	struct spin_ctx_desc d = {
		.family = "vector", .args = args, .args_len = sizeof(args),
		.state_len = 128, .policy = SPIN_SCHED_BLOCKED_RR,
		.delta_p = 4, .nvhpu = 2,
	};
	ptl_me_t me = { .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
			.options = PTL_ME_OP_PUT };
	uint8_t *pattern = malloc(3000);
	spin_handle_ctx_t ctx;
	spin_handle_nicmem_t mem;
	ptl_handle_me_t meh;
	uint32_t nic_id;
	uint64_t used;

	assert_non_null(pattern);
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	used = shim_heap_used();
	assert_int_equal(spin_ctx_install(x->ni, &d, &ctx), PTL_OK);
	assert_string_equal(x->f.ctx_family, "vector");
	assert_int_equal(x->f.ctx_args_len, sizeof(args));
	assert_memory_equal(x->f.ctx_args, args, sizeof(args));
	assert_int_equal(x->f.last[SPINNIC_CTRL_CTX_INSTALL].u.ctx.policy,
			 SPINNIC_SCHED_BLOCKED_RR);
	assert_int_equal(x->f.last[SPINNIC_CTRL_CTX_INSTALL].u.ctx.delta_p, 4);
	assert_int_equal(x->f.last[SPINNIC_CTRL_CTX_INSTALL].u.ctx.state_len,
			 128);
	/* the staged arguments were released */
	assert_int_equal(shim_heap_used(), used);

	assert_int_equal(spin_me_append(x->ni, 0, &me, PTL_PRIORITY_LIST, ctx,
					NULL, &meh), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.ctx,
			 last_id(x, SPINNIC_CTRL_CTX_INSTALL));
	assert_int_equal(spin_me_append(x->ni, 0, &me, PTL_PRIORITY_LIST,
					x->ni, NULL, &meh), PTL_ARG_INVALID);

	/* NIC memory short: the NIC's PTL_NO_SPACE reaches the caller */
	x->f.status[SPINNIC_CTRL_CTX_INSTALL] = SPINNIC_PTL_NO_SPACE;
	assert_int_equal(spin_ctx_install(x->ni, &d, &ctx), PTL_NO_SPACE);
	x->f.status[SPINNIC_CTRL_CTX_INSTALL] = SPINNIC_PTL_OK;
	/* invalid descriptions never reach the NIC */
	d.delta_p = 0;
	assert_int_equal(spin_ctx_install(x->ni, &d, &ctx), PTL_ARG_INVALID);
	d.delta_p = 4;
	d.family = "a-name-that-is-far-too-long-for-the-handler-table-x";
	assert_int_equal(spin_ctx_install(x->ni, &d, &ctx), PTL_ARG_INVALID);
	assert_int_equal(fake_nic_count(&x->f, SPINNIC_CTRL_CTX_INSTALL), 2);

	/* a blob written from malloc'd memory is staged through the region */
	for (int i = 0; i < 3000; i++)
		pattern[i] = (uint8_t)(i * 7);
	assert_int_equal(spin_nicmem_alloc(x->ni, 4000, &mem), PTL_OK);
	assert_int_equal(spin_nicmem_id(mem, &nic_id), PTL_OK);
	assert_int_equal(nic_id, last_id(x, SPINNIC_CTRL_NICMEM_ALLOC));
	assert_int_equal(spin_nicmem_write(mem, 1000, pattern, 3000), PTL_OK);
	assert_memory_equal(x->f.blob + 1000, pattern, 3000);
	assert_int_equal(spin_nicmem_write(mem, 1001, pattern, 3000),
			 PTL_ARG_INVALID);
	assert_int_equal(spin_nicmem_alloc(x->ni, 2u << 20, &mem),
			 PTL_NO_SPACE);
	assert_int_equal(spin_nicmem_free(mem), PTL_OK);
	assert_int_equal(spin_nicmem_free(mem), PTL_ARG_INVALID);
	assert_int_equal(shim_heap_used(), used);
	free(pattern);
}

static void
test_hangup(void **state)
{
	struct fx *x = *state;
	struct waiter w = { .n = 1, .timeout = PTL_TIME_FOREVER };
	uint64_t word;
	ptl_md_t md = {
		.start = &word, .length = 8, .eq_handle = PTL_EQ_NONE,
		.ct_handle = PTL_CT_NONE,
	};
	ptl_handle_md_t mdh;
	ptl_pt_index_t pt;
	pthread_t t;

	assert_int_equal(PtlMDBind(x->ni, &md, &mdh), PTL_OK);
	assert_int_equal(PtlEQAlloc(x->ni, 4, &w.eqs[0]), PTL_OK);
	assert_int_equal(pthread_create(&t, NULL, eq_waiter, &w), 0);
	usleep(20000);
	fake_nic_hangup(&x->f);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, PTL_INTERRUPTED);
	assert_int_equal(PtlPTAlloc(x->ni, 0, PTL_EQ_NONE, PTL_PT_ANY, &pt),
			 PTL_FAIL);
	assert_int_equal(PtlPut(mdh, 0, 8, PTL_NO_ACK_REQ, phys(1, 1), 0, 0, 0,
				NULL, 0), PTL_FAIL);
	/* local teardown still works */
	assert_int_equal(PtlEQFree(w.eqs[0]), PTL_FAIL);
	assert_int_equal(PtlEQGet(w.eqs[0], &w.ev), PTL_ARG_INVALID);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_attach, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_get_commands, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ring_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_threads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eq_events_and_drops, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eq_nic_time, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eq_wait_wakeup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eq_poll_multi, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_polls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_handle_kinds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nonmatching_le, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_logical, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spin_ctx_and_nicmem, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hangup, setup, teardown),
	};

	setenv("SPINNIC_REGION_SIZE", "4M", 1);
	setenv("SPINNIC_HUGEPAGES", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
