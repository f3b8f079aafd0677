/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives: posting one (spin_me_append_typed(): the type's window
 * in the buffer with its handler context, or a staging buffer when the
 * type is host-based or NIC memory is short) and finishing it on its event
 * (spin_typed_recv_complete(): host unpack of a staged or unexpected
 * message), so event delivery (shim_eq.c) stays untouched and the unpack
 * runs on the thread that consumed the event. Counters for spin.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim_ddt.h"

#define RECV_MAGIC 0x54524356u /* "TRCV" */

#define TYPED_BAD_OPTIONS (PTL_ME_OP_GET | PTL_ME_MANAGE_LOCAL | PTL_IOVEC | \
			   PTL_ME_EVENT_COMM_DISABLE | \
			   PTL_ME_EVENT_SUCCESS_DISABLE | \
			   PTL_ME_EVENT_OVER_DISABLE | \
			   PTL_ME_LOCAL_INC_UH_RLENGTH)

struct spin_typed_recv {
	uint32_t magic;
	enum spin_type_strategy strat; /* HOST after a fallback */
	struct spin_type_offload *off;
	ptl_handle_me_t me;
	uint8_t *buf;              /* MPI buffer origin */
	uint8_t *stage;            /* HOST: staging buffer */
	bool stage_region;         /* stage from spin_host_alloc() */
	void *user_ptr;
	struct shim_lc_entry *lce; /* spin_me_append_ddt() by the host path
				      or the entry's NIC candidate: its
				      time refines the entry */
	uint64_t post_ns;          /* CLOCK_MONOTONIC at the post */
};

static uint64_t
recv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Add one to a counter of shim_type_st: atomic, so that a post or a
 * completion never waits for shim_type_lock, which an upload holds. */
#define TYPE_COUNT(field) \
	__atomic_fetch_add(&shim_type_st.field, 1, __ATOMIC_RELAXED)

static void
recv_free(struct spin_typed_recv *r)
{
	if (r->stage_region)
		spin_host_free(r->stage);
	else
		free(r->stage);
	r->magic = 0;
	free(r);
}

static void
recv_done(struct spin_typed_recv *r)
{
	__atomic_fetch_sub(&r->off->posted, 1, __ATOMIC_ACQ_REL);
	recv_free(r);
}

/* Staging buffer of a host-based receive. @return 0 or -ENOMEM */
static int
recv_stage(struct spin_typed_recv *r, size_t size)
{
	if (size == 0)
		size = 1;
	r->stage = spin_host_alloc(size);
	if (r->stage != NULL) {
		r->stage_region = true;
		return 0;
	}
	/* outside the region: still valid, through process_vm_writev */
	r->stage = malloc(size);
	return r->stage != NULL ? 0 : -ENOMEM;
}

/* Take a posted reference on off (@p counted: the caller took it),
 * uploading it if its strategy needs the NIC; NIC memory short: r falls
 * back to the host. @return 0 or a negative errno (no reference taken
 * by this call) */
static int
recv_claim(struct spin_typed_recv *r, struct spin_type_offload *off,
	   bool counted, spin_handle_ctx_t *ctx_p)
{
	bool nic;
	int rc;

	pthread_mutex_lock(&shim_type_lock);
	if (off->on_lru)
		shim_type_lru_touch(off);
	nic = off->strat != SPIN_TYPE_HOST && off->strat != SPIN_TYPE_CONTIG;
	if (nic && !off->loaded) {
		rc = shim_type_load(off);
		if (rc == -ENOMEM) {
			r->strat = SPIN_TYPE_HOST;
			nic = false;
		} else if (rc != 0) {
			pthread_mutex_unlock(&shim_type_lock);
			return rc;
		}
	}
	*ctx_p = nic ? off->ctx : SPIN_CTX_NONE;
	if (!counted)
		__atomic_fetch_add(&off->posted, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&shim_type_lock);
	return 0;
}

/* Post r's entry (reference on r->off taken). @return 0 or a negative
 * errno */
static int
recv_post(struct spin_typed_recv *r, ptl_handle_ni_t ni_handle,
	  ptl_pt_index_t pt_index, const ptl_me_t *me, spin_handle_ctx_t ctx)
{
	const struct spin_type_offload *off = r->off;
	ptl_me_t e = *me;
	int rc;

	/* the receive is freed at completion: no event may follow it */
	e.options |= PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_LINK_DISABLE;
	if (r->strat == SPIN_TYPE_HOST) {
		rc = recv_stage(r, (size_t)off->size);
		if (rc != 0)
			return rc;
		e.start = r->stage;
		e.length = (ptl_size_t)off->size;
	} else {
		e.start = r->buf + off->lo;
		e.length = off->span;
	}
	return shim_entry_append(ni_handle, pt_index, &e, 0, PTL_PRIORITY_LIST,
				 ctx, r, &r->me);
}

int
spin_me_append_typed(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		     const ptl_me_t *me, struct spin_type_offload *off,
		     void *buf, void *user_ptr, struct spin_typed_recv **r_p)
{
	struct spin_typed_recv *r;
	spin_handle_ctx_t ctx;
	uint64_t t0;
	int rc;

	SHIM_ENTER();
	t0 = recv_now_ns();
	if (me == NULL || off == NULL || r_p == NULL || off->ni != ni_handle ||
	    (buf == NULL && off->size > 0) ||
	    (me->options & TYPED_BAD_OPTIONS))
		return PTL_ARG_INVALID;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return PTL_NO_SPACE;
	r->magic = RECV_MAGIC;
	r->off = off;
	r->buf = buf;
	r->user_ptr = user_ptr;
	r->strat = off->strat;
	rc = recv_claim(r, off, false, &ctx);
	if (rc != 0) {
		free(r);
		return shim_ptl(rc);
	}
	rc = recv_post(r, ni_handle, pt_index, me, ctx);
	if (rc != 0) {
		recv_done(r);
		return shim_ptl(rc);
	}
	if (r->strat == SPIN_TYPE_HOST && off->strat == SPIN_TYPE_HOST)
		TYPE_COUNT(host);
	else if (r->strat == SPIN_TYPE_HOST)
		TYPE_COUNT(fallbacks);
	else
		TYPE_COUNT(offloaded);
	r->post_ns = t0;
	*r_p = r;
	return PTL_OK;
}

int
spin_me_append_ddt(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		   const ptl_me_t *me, const struct ddt_type *t, int64_t count,
		   void *buf, void *user_ptr, struct spin_typed_recv **r_p)
{
	struct spin_typed_recv *r;
	struct shim_lc_use u;
	struct shim_ni *ni;
	uint64_t t0;
	int rc;

	SHIM_ENTER();
	t0 = recv_now_ns();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || me == NULL || t == NULL || r_p == NULL ||
	    count < 0 || !ddt_is_committed(t) ||
	    (ni->options & PTL_NI_NO_MATCHING) ||
	    (buf == NULL && count > 0 && ddt_size(t) > 0) ||
	    (me->options & TYPED_BAD_OPTIONS))
		return PTL_ARG_INVALID;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return PTL_NO_SPACE;
	/* the cache takes the posted reference: no lock an upload holds */
	rc = shim_lc_acquire(ni_handle, t, count, buf, &u);
	if (rc != 0) {
		free(r);
		return shim_ptl(rc);
	}
	r->magic = RECV_MAGIC;
	r->off = u.off;
	r->buf = buf;
	r->user_ptr = user_ptr;
	r->strat = u.off->strat;
	if (u.need_load) {
		/* static or forced: today's upload at the post */
		rc = recv_claim(r, u.off, true, &u.ctx);
		if (rc != 0) {
			recv_done(r);
			return shim_ptl(rc);
		}
	}
	rc = recv_post(r, ni_handle, pt_index, me, u.ctx);
	if (rc != 0) {
		recv_done(r);
		return shim_ptl(rc);
	}
	if (r->strat == SPIN_TYPE_HOST && u.off->strat == SPIN_TYPE_HOST) {
		TYPE_COUNT(host);
		/* the entry stays while this receive holds its reference */
		r->lce = u.e;
	} else if (r->strat == SPIN_TYPE_HOST) {
		TYPE_COUNT(fallbacks);
	} else {
		TYPE_COUNT(offloaded);
		/* the layout's NIC candidate (not a static or forced one,
		 * which no estimate decides) */
		if (!u.need_load && r->strat != SPIN_TYPE_CONTIG)
			r->lce = u.e;
	}
	r->post_ns = t0;
	*r_p = r;
	return PTL_OK;
}

int
spin_type_cache_flush(ptl_handle_ni_t ni_handle)
{
	SHIM_ENTER();
	if (shim_to_ni(ni_handle, NULL) == NULL)
		return PTL_ARG_INVALID;
	return shim_lc_flush(ni_handle) == -EBUSY ? PTL_IN_USE : PTL_OK;
}

/* Unpack the first len bytes of the stream at src into buf. @return 0 or
 * a negative errno */
static int
type_unpack(const struct spin_type_offload *o, const void *src,
	    uint64_t len, void *buf)
{
	struct ddt_segment *s;
	int rc;

	if (len == (uint64_t)o->size)
		return ddt_unpack(o->t, o->count, src, buf);
	s = ddt_segment_create(o->t, o->count);
	if (s == NULL)
		return -ENOMEM;
	rc = ddt_segment_unpack(s, 0, (int64_t)len, src, buf);
	ddt_segment_free(s);
	return rc;
}

/* What a receive's event says about its data. @return 0 or a negative
 * errno (the message failed, or the unpack did) */
static int
recv_finish(const struct spin_typed_recv *r, const ptl_event_t *ev)
{
	const struct spin_type_offload *o = r->off;

	if (ev->ni_fail_type != PTL_NI_OK || ev->mlength > (ptl_size_t)o->size)
		return -EIO;
	if (ev->type == PTL_EVENT_PUT_OVERFLOW) {
		/* unexpected: the data is where the overflow entry put it */
		TYPE_COUNT(unexpected);
		return type_unpack(o, ev->start, ev->mlength, r->buf);
	}
	if (r->strat == SPIN_TYPE_HOST) {
		TYPE_COUNT(host_unpacks);
		return type_unpack(o, r->stage, ev->mlength, r->buf);
	}
	return 0;
}

int
spin_typed_recv_complete(struct spin_typed_recv *r, const ptl_event_t *ev,
			 void **user_ptr_p)
{
	int rc;

	if (r == NULL || ev == NULL || r->magic != RECV_MAGIC ||
	    ev->user_ptr != r ||
	    (ev->type != PTL_EVENT_PUT && ev->type != PTL_EVENT_PUT_OVERFLOW))
		return PTL_ARG_INVALID;
	if (user_ptr_p != NULL)
		*user_ptr_p = r->user_ptr;
	if (ev->type == PTL_EVENT_PUT && ev->ni_fail_type == PTL_NI_OK) {
		/* refinement: from the data's arrival at the NIC to the data
		 * in place (spinnic's NIC time + the host's unpack + the
		 * completion latency, shim_ddt_ctx_sample()); without a NIC
		 * time, post to data in place as the application sees it.
		 * Every typed receive (the calibration's: a sender ready at
		 * once) tells the completion latency */
		uint64_t nic_ns = 0, a, b;

		if (spin_event_nic_time(ev, &nic_ns) != PTL_OK)
			nic_ns = 0;
		a = recv_now_ns();
		rc = recv_finish(r, ev);
		b = recv_now_ns();
		if (rc == 0 && ev->mlength == (ptl_size_t)r->off->size)
			shim_lc_observe_times(r->lce,
					      r->strat != SPIN_TYPE_HOST,
					      (double)(b - r->post_ns),
					      (double)nic_ns,
					      (double)(b - a));
	} else {
		rc = recv_finish(r, ev);
	}
	if (rc != 0)
		TYPE_COUNT(errors);
	recv_done(r);
	/* any failure of the message or its unpack is the spec's PTL_FAIL */
	return rc != 0 ? PTL_FAIL : PTL_OK;
}

int
spin_typed_recv_cancel(struct spin_typed_recv *r)
{
	int rc;

	if (r == NULL || r->magic != RECV_MAGIC)
		return PTL_ARG_INVALID;
	rc = PtlMEUnlink(r->me);
	if (rc == PTL_ARG_INVALID)
		return PTL_IN_USE; /* the NIC unlinked it: it matched */
	if (rc != PTL_OK)
		return rc;
	recv_done(r);
	return PTL_OK;
}

enum spin_type_strategy
spin_typed_recv_strategy(const struct spin_typed_recv *r)
{
	return r->strat;
}

int
spin_type_unpack(const struct spin_type_offload *off, const void *src,
		 size_t len, void *buf)
{
	if (off == NULL || (len > 0 && (src == NULL || buf == NULL)) ||
	    len > (uint64_t)off->size)
		return PTL_ARG_INVALID;
	/* a stream lib/ddt cannot unpack is the caller's invalid argument */
	if (type_unpack(off, src, len, buf) != 0)
		return PTL_ARG_INVALID;
	TYPE_COUNT(unexpected);
	return PTL_OK;
}

void
spin_type_stats(struct spin_type_stats *s_p)
{
	const uint64_t *src = (const uint64_t *)&shim_type_st;
	uint64_t *dst = (uint64_t *)s_p;
	size_t i;

	_Static_assert(sizeof(shim_type_st) % sizeof(uint64_t) == 0,
		       "spin_type_stats holds uint64_t counters only");
	/* the lock for the fields the NIC side changes, atomic loads for
	 * the counters that change without it */
	pthread_mutex_lock(&shim_type_lock);
	for (i = 0; i < sizeof(shim_type_st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&shim_type_lock);
}

void
spin_type_cache_stats(struct spin_type_cache_stats *s_p)
{
	struct shim_lc_stats st;

	if (s_p == NULL)
		return;
	shim_lc_stats_get(&st);
	*s_p = (struct spin_type_cache_stats){
		.hits = st.hits,
		.misses = st.misses,
		.evictions = st.evicted,
		.entries = st.entries,
		.bytes = st.bytes,
		.prep_queued = st.prep_queued,
		.prep_done = st.prep_done,
		.prep_failed = st.prep_failed,
		.host_choices = st.host_choices,
		.nic_choices = st.nic_choices,
		.host_while_preparing = st.host_while_preparing,
		.explorations = st.explores,
		.samples = st.observed,
		.nic_timed = st.nic_timed,
	};
}
