/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counting events: allocation, reading and waiting on the records the
 * NIC writes into the region; CTSet/CTInc change the record here and tell
 * the NIC through the command ring (CT_CHECK: its triggered operations).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "shim_internal.h"

int
PtlCTAlloc(ptl_handle_ni_t ni_handle, ptl_handle_ct_t *ct_handle)
{
	struct spinnic_ctrl_msg msg;
	struct spinnic_ct *rec;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	ptl_handle_any_t h;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || ct_handle == NULL)
		return PTL_ARG_INVALID;
	rec = shim_heap_alloc(sizeof(*rec));
	if (rec == NULL)
		return PTL_NO_SPACE;
	memset(rec, 0, sizeof(*rec));
	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_CT, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL) {
		shim_heap_free(rec);
		return PTL_NO_SPACE;
	}
	shim_ctrl_prep_ct(&msg, SPINNIC_CTRL_CT_ALLOC, ni->nic_ni,
			  SPINNIC_HANDLE_NONE);
	msg.u.ct.ct_off = shim_region_off(rec);
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		shim_obj_release(o);
		shim_heap_free(rec);
		return shim_ptl(rc);
	}
	o->nic_id = msg.u.ct.ct;
	o->u.ct.rec = rec;
	*ct_handle = h;
	return PTL_OK;
}

int
PtlCTFree(ptl_handle_ct_t ct_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	SHIM_ENTER();
	o = shim_to_ct(ct_handle, &ni);
	if (o == NULL || o->closing)
		return PTL_ARG_INVALID;
	shim_ctrl_prep_ct(&msg, SPINNIC_CTRL_CT_FREE, ni->nic_ni, o->nic_id);
	rc = shim_ctrl_call(&msg);
	/* spinnic gone: the counter goes here all the same */
	if (rc != 0 && rc != -EIO)
		return shim_ptl(rc);
	shim_obj_drain(o, &o->u.ct.rec->futex);
	shim_heap_free(o->u.ct.rec);
	shim_obj_release(o);
	return shim_ptl(rc);
}

/* ---- reading and waiting ------------------------------------------------- */

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

	SHIM_ENTER();
	o = shim_to_ct(ct_handle, NULL);
	if (o == NULL || event == NULL)
		return PTL_ARG_INVALID;
	ct_read(o->u.ct.rec, event);
	return PTL_OK;
}

struct ct_wait {
	struct shim_wait w;
	const ptl_size_t *tests;
	ptl_ct_event_t *ev;
};

static bool
ct_wait_take(struct shim_wait *w, struct shim_obj *o, const struct shim_ni *ni,
	     unsigned i)
{
	struct ct_wait *cw = (struct ct_wait *)w;

	(void)ni;
	ct_read(o->u.ct.rec, cw->ev);
	return cw->ev->success + cw->ev->failure >= cw->tests[i];
}

/* @return 0 or a negative errno (shim_wait()'s) */
static int
ct_poll(const ptl_handle_ct_t *hs, const ptl_size_t *tests, unsigned n,
	ptl_time_t timeout, ptl_ct_event_t *ev, unsigned *which)
{
	struct ct_wait cw = {
		.w = { .kind = SHIM_KIND_CT, .timeout = timeout,
		       .take = ct_wait_take },
		.tests = tests, .ev = ev,
	};

	if (hs == NULL || tests == NULL || n == 0 || ev == NULL ||
	    which == NULL)
		return -EINVAL;
	return shim_wait(&cw.w, hs, n, which);
}

int
PtlCTWait(ptl_handle_ct_t ct_handle, ptl_size_t test, ptl_ct_event_t *event)
{
	unsigned which;

	SHIM_ENTER();
	return shim_ptl(ct_poll(&ct_handle, &test, 1, PTL_TIME_FOREVER, event,
				&which));
}

int
PtlCTPoll(const ptl_handle_ct_t *ct_handles, const ptl_size_t *tests,
	  unsigned int size, ptl_time_t timeout, ptl_ct_event_t *event,
	  unsigned int *which)
{
	SHIM_ENTER();
	return shim_ptl(ct_poll(ct_handles, tests, size, timeout, event,
				which));
}

/* Apply a Set or an Inc to the counter record here, so this thread's
 * next PtlCTGet/PtlCTWait sees it, and wake other waiters; the NIC then
 * only fires what the new value releases (CT_CHECK, in ring order with
 * the triggered operations posted before). @return 0 or a negative errno */
static int
ct_op(bool set, ptl_handle_ct_t ct_handle, ptl_ct_event_t v)
{
	struct spinnic_cmd cmd;
	struct spinnic_ct *rec;
	struct shim_ni *ni;
	struct shim_obj *o;

	o = shim_to_ct(ct_handle, &ni);
	if (o == NULL || o->closing || (!set && !shim_ct_inc_ok(v)))
		return -EINVAL;
	rec = o->u.ct.rec;
	if (set) {
		__atomic_store_n(&rec->success, v.success, __ATOMIC_RELEASE);
		__atomic_store_n(&rec->failure, v.failure, __ATOMIC_RELEASE);
	} else {
		__atomic_fetch_add(&rec->success, v.success, __ATOMIC_RELEASE);
		__atomic_fetch_add(&rec->failure, v.failure, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&rec->futex, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&rec->waiters, __ATOMIC_ACQUIRE) != 0)
		shim_futex_wake(&rec->futex);
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_CT_CHECK;
	cmd.ni = ni->nic_ni;
	cmd.md = o->nic_id;
	return shim_cmd_post(&cmd);
}

int
PtlCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct)
{
	SHIM_ENTER();
	return shim_ptl(ct_op(true, ct_handle, new_ct));
}

int
PtlCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment)
{
	SHIM_ENTER();
	return shim_ptl(ct_op(false, ct_handle, increment));
}
