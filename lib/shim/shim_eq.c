/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event queues: allocation, and reading and waiting on the rings the
 * NIC writes into the region.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "shim_internal.h"

/* ---- allocation ---------------------------------------------------------- */

int
PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
	   ptl_handle_eq_t *eq_handle)
{
	struct spinnic_ctrl_msg msg;
	struct spinnic_eq *ring;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	ptl_handle_any_t h;
	uint32_t n = 1;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || eq_handle == NULL || count == 0 ||
	    count > (1u << 24))
		return PTL_ARG_INVALID;
	while (n < count)
		n <<= 1;
	ring = shim_heap_alloc(sizeof(*ring) +
			       (size_t)n * sizeof(struct spinnic_event));
	if (ring == NULL)
		return PTL_NO_SPACE;
	memset(ring, 0, sizeof(*ring) + (size_t)n * sizeof(ring->slots[0]));
	ring->mask = n - 1;

	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_EQ, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL) {
		shim_heap_free(ring);
		return PTL_NO_SPACE;
	}
	shim_ctrl_prep_eq(&msg, SPINNIC_CTRL_EQ_ALLOC, ni->nic_ni,
			  SPINNIC_HANDLE_NONE);
	msg.u.eq.ring_off = shim_region_off(ring);
	msg.u.eq.count = n;
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		shim_obj_release(o);
		shim_heap_free(ring);
		return shim_ptl(rc);
	}
	o->nic_id = msg.u.eq.eq;
	o->u.eq.ring = ring;
	o->u.eq.count = n;
	pthread_mutex_init(&o->u.eq.lock, NULL);
	*eq_handle = h;
	return PTL_OK;
}

int
PtlEQFree(ptl_handle_eq_t eq_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	SHIM_ENTER();
	o = shim_to_eq(eq_handle, &ni);
	if (o == NULL || o->closing)
		return PTL_ARG_INVALID;
	shim_ctrl_prep_eq(&msg, SPINNIC_CTRL_EQ_FREE, ni->nic_ni, o->nic_id);
	rc = shim_ctrl_call(&msg);
	if (rc != 0 && rc != -EIO)
		return shim_ptl(rc);
	/* the NIC no longer writes the ring (or is gone): release it */
	shim_obj_drain(o, &o->u.eq.ring->futex);
	pthread_mutex_destroy(&o->u.eq.lock);
	shim_heap_free(o->u.eq.ring);
	shim_obj_release(o);
	return shim_ptl(rc);
}

/* ---- reading and waiting ------------------------------------------------- */

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
		/* what the message matched: target events, ACK */
		ev->ptl_list = e->list == SPINNIC_PTL_OVERFLOW_LIST ?
			PTL_OVERFLOW_LIST : PTL_PRIORITY_LIST;
		break;
	}
	ev->pt_index = e->pt_index;
	ev->ni_fail_type = e->ni_fail_type;
	ev->atomic_operation = (ptl_op_t)e->atomic_op;
	ev->atomic_type = (ptl_datatype_t)e->atomic_type;
}

/* The NIC's time of the last event this thread took (spinnic_event.nic_ns,
 * not in ptl_event_t), with what names that event: spin_event_nic_time()
 * gives it only for an event equal in these fields. */
static _Thread_local struct {
	uint64_t user_ptr, match_bits, mlength;
	uint32_t nic_ns;
	uint16_t type;
} eq_last;

int
spin_event_nic_time(const ptl_event_t *ev, uint64_t *ns_p)
{
	if (ev == NULL || ns_p == NULL || eq_last.nic_ns == 0 ||
	    eq_last.user_ptr != (uint64_t)(uintptr_t)ev->user_ptr ||
	    eq_last.match_bits != ev->match_bits ||
	    eq_last.mlength != ev->mlength ||
	    eq_last.type != (uint16_t)ev->type)
		return PTL_FAIL;
	*ns_p = eq_last.nic_ns;
	return PTL_OK;
}

/* Take the next event of one EQ. @return 0; -EOVERFLOW (taken, but events
 * were lost before it: PTL_EQ_DROPPED); -EAGAIN (none: PTL_EQ_EMPTY) */
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
		return -EAGAIN;
	}
	e = *s;
	q->tail = t + 1;
	/* hands the slot back to the NIC */
	__atomic_store_n(&q->ring->tail, t + 1, __ATOMIC_RELEASE);
	d = __atomic_load_n(&q->ring->dropped, __ATOMIC_ACQUIRE);
	rc = d != q->last_dropped ? -EOVERFLOW : 0;
	q->last_dropped = d;
	pthread_mutex_unlock(&q->lock);
	event_convert(ni, &e, ev);
	eq_last.user_ptr = e.user_ptr;
	eq_last.match_bits = e.match_bits;
	eq_last.mlength = e.mlength;
	eq_last.type = e.type;
	eq_last.nic_ns = e.nic_ns;
	return rc;
}

struct eq_wait {
	struct shim_wait w;
	ptl_event_t *ev;
	int rc;                    /* of the take: 0 or -EOVERFLOW */
};

static bool
eq_wait_take(struct shim_wait *w, struct shim_obj *o, const struct shim_ni *ni,
	     unsigned i)
{
	struct eq_wait *ew = (struct eq_wait *)w;

	(void)i;
	ew->rc = eq_take(o, ni, ew->ev);
	return ew->rc != -EAGAIN;
}

/* @return 0 or a negative errno, as eq_take() (-EAGAIN: the timeout) */
static int
eq_poll(const ptl_handle_eq_t *hs, unsigned n, ptl_time_t timeout,
	ptl_event_t *ev, unsigned *which)
{
	struct eq_wait ew = {
		.w = { .kind = SHIM_KIND_EQ, .timeout = timeout,
		       .take = eq_wait_take },
		.ev = ev,
	};
	int rc;

	if (hs == NULL || n == 0 || ev == NULL || which == NULL)
		return -EINVAL;
	rc = shim_wait(&ew.w, hs, n, which);
	if (rc == 0)
		return ew.rc;
	/* for an EQ, nothing by the deadline is "empty" */
	return rc == -ETIMEDOUT ? -EAGAIN : rc;
}

int
PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	struct shim_ni *ni;
	struct shim_obj *o;

	SHIM_ENTER();
	o = shim_to_eq(eq_handle, &ni);
	if (o == NULL || event == NULL)
		return PTL_ARG_INVALID;
	return shim_ptl(eq_take(o, ni, event));
}

int
PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	unsigned which;

	SHIM_ENTER();
	return shim_ptl(eq_poll(&eq_handle, 1, PTL_TIME_FOREVER, event,
				&which));
}

int
PtlEQPoll(const ptl_handle_eq_t *eq_handles, unsigned int size,
	  ptl_time_t timeout, ptl_event_t *event, unsigned int *which)
{
	SHIM_ENTER();
	return shim_ptl(eq_poll(eq_handles, size, timeout, event, which));
}
