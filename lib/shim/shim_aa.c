/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access, client side (spin_aa.h; doc/NOTES.md "Active Access"):
 * logs are rings in the region heap that the NIC writes; marks are
 * control requests. The consumer trusts nothing in the ring: every record
 * header is copied out and checked before its data is handed out.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "spin_aa.h"
#include "shim_internal.h"

#define LOGS_MAX 64u
#define IDX_BITS 8u

static_assert(SPIN_AA_W == SPINNIC_AA_W && SPIN_AA_RLD == SPINNIC_AA_RLD &&
	      SPIN_AA_PAGE == SPINNIC_AA_PAGE &&
	      SPIN_AA_LOG_DROP == SPINNIC_AA_LOG_DROP &&
	      (int)SPIN_AA_ATOMIC == (int)SPINNIC_AA_ATOMIC &&
	      SPIN_AA_F_HANDLER == SPINNIC_AA_F_HANDLER,
	      "spin_aa.h mirrors spinnic_abi.h");

struct aa_log {
	bool used;
	uint32_t gen;
	uint32_t nic_log;
	struct spinnic_aa_ring *ring;
	uint64_t size;
	uint64_t cons;     /* ours; published to ring->cons */
	uint32_t seq;      /* seq of the next record */
	bool corrupt;
	bool nic;          /* consumed on the NIC (SPIN_AA_LOG_HANDLER) */
	pthread_mutex_t lock;  /* one poller at a time */
};

static struct aa_log logs[LOGS_MAX];
static pthread_mutex_t logs_lock = PTHREAD_MUTEX_INITIALIZER;

static spin_handle_aalog_t
aa_handle(const struct aa_log *lg)
{
	return (spin_handle_aalog_t)(((lg->gen & 0x7fffffu) << IDX_BITS) |
				     (uint32_t)(lg - logs));
}

/* logs_lock held */
static struct aa_log *
aa_get(spin_handle_aalog_t h)
{
	uint32_t idx = (uint32_t)h & ((1u << IDX_BITS) - 1);

	if (h == SPIN_AA_LOG_NONE || idx >= LOGS_MAX || !logs[idx].used ||
	    aa_handle(&logs[idx]) != h)
		return NULL;
	return &logs[idx];
}

int
spin_aa_log_create(ptl_handle_ni_t ni_handle,
		   const struct spin_aa_log_desc *d, spin_handle_aalog_t *log_p)
{
	struct spinnic_ctrl_msg msg;
	struct spinnic_aa_ring *ring;
	struct shim_ni *ni, *cni = NULL;
	struct shim_obj *ctx = NULL;
	struct aa_log *lg = NULL;
	unsigned slot, i, flags;
	size_t size;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (d == NULL)
		return PTL_ARG_INVALID;
	size = d->size;
	flags = d->flags;
	if (ni == NULL || log_p == NULL ||
	    (flags & ~(SPIN_AA_LOG_DROP | SPIN_AA_LOG_HANDLER)) != 0 ||
	    size < SPINNIC_AA_RING_MIN || size > SPINNIC_AA_RING_MAX ||
	    (size & (size - 1)) != 0 || d->notify_us > SPINNIC_AA_NOTIFY_US_MAX)
		return PTL_ARG_INVALID;
	if (flags & SPIN_AA_LOG_HANDLER) {
		ctx = shim_to_ctx(d->ctx, &cni);
		if (ctx == NULL || cni != ni || d->win_len == 0 ||
		    (uintptr_t)d->win_addr + d->win_len < (uintptr_t)d->win_addr)
			return PTL_ARG_INVALID;
	}
	ring = shim_heap_alloc(sizeof(*ring) + size);
	if (ring == NULL)
		return PTL_NO_SPACE;
	memset(ring, 0, sizeof(*ring) + size);
	pthread_mutex_lock(&logs_lock);
	for (i = 0; i < LOGS_MAX; i++) {
		if (!logs[i].used) {
			lg = &logs[i];
			lg->used = true; /* reserved while we ask the NIC */
			lg->ring = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&logs_lock);
	if (lg == NULL) {
		shim_heap_free(ring);
		return PTL_NO_SPACE;
	}
	shim_ctrl_prep(&msg, SPINNIC_CTRL_AA_LOG_CREATE);
	msg.u.aa.ni = ni->nic_ni;
	msg.u.aa.log = SPINNIC_HANDLE_NONE;
	msg.u.aa.ring_off = shim_region_off(ring);
	msg.u.aa.size = size;
	msg.u.aa.flags = (flags & SPIN_AA_LOG_DROP) |
			 (ctx != NULL ? SPINNIC_AA_LOG_HANDLER : 0);
	msg.u.aa.notify_every = d->notify_every;
	msg.u.aa.notify_us = d->notify_us;
	msg.u.aa.ctx = SPINNIC_HANDLE_NONE;
	if (ctx != NULL) {
		msg.u.aa.ctx = ctx->nic_id;
		msg.u.aa.addr = (uintptr_t)d->win_addr;
		msg.u.aa.len = d->win_len;
	}
	rc = shim_ctrl_call(&msg);
	pthread_mutex_lock(&logs_lock);
	if (rc != 0) {
		lg->used = false;
		pthread_mutex_unlock(&logs_lock);
		shim_heap_free(ring);
		return shim_ptl(rc);
	}
	lg->nic_log = msg.u.aa.log;
	lg->ring = ring;
	lg->size = size;
	lg->cons = 0;
	lg->seq = 1;
	lg->corrupt = false;
	lg->nic = ctx != NULL;
	pthread_mutex_init(&lg->lock, NULL);
	*log_p = aa_handle(lg);
	pthread_mutex_unlock(&logs_lock);
	return PTL_OK;
}

void
shim_aa_forget(void)
{
	unsigned i;

	pthread_mutex_lock(&logs_lock);
	for (i = 0; i < LOGS_MAX; i++) {
		struct aa_log *lg = &logs[i];

		if (!lg->used || lg->ring == NULL)
			continue;
		shim_heap_free(lg->ring);
		lg->ring = NULL;
		lg->used = false;
		lg->gen++;
		pthread_mutex_destroy(&lg->lock);
	}
	pthread_mutex_unlock(&logs_lock);
}

int
spin_aa_log_free(spin_handle_aalog_t log)
{
	struct spinnic_ctrl_msg msg;
	struct aa_log *lg;
	void *ring;
	int rc;

	SHIM_ENTER();
	pthread_mutex_lock(&logs_lock);
	lg = aa_get(log);
	if (lg == NULL || lg->ring == NULL) {
		pthread_mutex_unlock(&logs_lock);
		return PTL_ARG_INVALID;
	}
	pthread_mutex_lock(&lg->lock); /* no poll in progress */
	shim_ctrl_prep(&msg, SPINNIC_CTRL_AA_LOG_FREE);
	msg.u.aa.ni = SPINNIC_HANDLE_NONE;
	msg.u.aa.log = lg->nic_log;
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		pthread_mutex_unlock(&lg->lock);
		pthread_mutex_unlock(&logs_lock);
		return shim_ptl(rc);
	}
	ring = lg->ring;
	lg->ring = NULL;
	lg->used = false;
	lg->gen++;
	pthread_mutex_unlock(&lg->lock);
	pthread_mutex_destroy(&lg->lock);
	pthread_mutex_unlock(&logs_lock);
	shim_heap_free(ring);
	return PTL_OK;
}

int
spin_aa_page_size(ptl_handle_ni_t ni_handle, uint64_t *size_p)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || size_p == NULL)
		return PTL_ARG_INVALID;
	/* an ASSOC of nothing: the NIC answers with its page */
	shim_ctrl_prep(&msg, SPINNIC_CTRL_AA_ASSOC);
	msg.u.aa.ni = ni->nic_ni;
	msg.u.aa.log = SPINNIC_HANDLE_NONE;
	rc = shim_ctrl_call(&msg);
	if (rc != 0)
		return shim_ptl(rc);
	/* 0: a NIC that predates --aa-page-size (4096) */
	if (msg.u.aa.page_shift > 30 ||
	    (msg.u.aa.page_shift != 0 && msg.u.aa.page_shift < 12))
		return PTL_FAIL;
	*size_p = msg.u.aa.page_shift == 0 ? SPIN_AA_PAGE :
		  1ull << msg.u.aa.page_shift;
	return PTL_OK;
}

int
spin_aa_assoc(ptl_handle_ni_t ni_handle, void *addr, size_t len,
	      unsigned bits, spin_handle_aalog_t log)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct aa_log *lg;
	unsigned slot;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || (bits & ~SPINNIC_AA_BITS) != 0 || len == 0 ||
	    (uintptr_t)addr % SPIN_AA_PAGE != 0 || len % SPIN_AA_PAGE != 0)
		return PTL_ARG_INVALID;
	shim_ctrl_prep(&msg, SPINNIC_CTRL_AA_ASSOC);
	msg.u.aa.ni = ni->nic_ni;
	msg.u.aa.log = SPINNIC_HANDLE_NONE;
	if (log != SPIN_AA_LOG_NONE) {
		pthread_mutex_lock(&logs_lock);
		lg = aa_get(log);
		if (lg != NULL && lg->ring != NULL)
			msg.u.aa.log = lg->nic_log;
		pthread_mutex_unlock(&logs_lock);
		if (msg.u.aa.log == SPINNIC_HANDLE_NONE)
			return PTL_ARG_INVALID;
	}
	msg.u.aa.addr = (uint64_t)(uintptr_t)addr;
	msg.u.aa.len = len;
	msg.u.aa.bits = bits;
	rc = shim_ctrl_call(&msg);
	return rc != 0 ? shim_ptl(rc) : PTL_OK;
}

int
spin_aa_fault_read(ptl_handle_ni_t ni_handle, struct spin_aa_rec *recs,
		   unsigned max, unsigned *n_p,
		   struct spin_aa_fault_status *st_p)
{
	struct spinnic_ctrl_msg msg;
	struct spinnic_aa_rec *buf;
	struct shim_ni *ni;
	unsigned slot, i;
	int rc, st = PTL_OK;

	SHIM_ENTER();
	if (n_p != NULL)
		*n_p = 0;
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || recs == NULL || max == 0)
		return PTL_ARG_INVALID;
	if (max > SPINNIC_AA_FAULTS_MAX)
		max = SPINNIC_AA_FAULTS_MAX;
	buf = shim_heap_alloc((size_t)max * sizeof(*buf));
	if (buf == NULL)
		return PTL_NO_SPACE;
	shim_ctrl_prep(&msg, SPINNIC_CTRL_AA_FAULT_READ);
	msg.u.aa.ni = ni->nic_ni;
	msg.u.aa.log = SPINNIC_HANDLE_NONE;
	msg.u.aa.ring_off = shim_region_off(buf);
	msg.u.aa.size = max;
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		shim_heap_free(buf);
		return shim_ptl(rc);
	}
	if (msg.u.aa.size > max) {
		shim_heap_free(buf);
		return PTL_FAIL;
	}
	for (i = 0; i < msg.u.aa.size; i++) {
		struct spinnic_aa_rec h;
		struct spin_aa_rec *r = &recs[i];

		memcpy(&h, &buf[i], sizeof(h));
		if (h.kind == 0 || h.kind > SPINNIC_AA_ATOMIC) {
			st = PTL_FAIL;
			break;
		}
		memset(r, 0, sizeof(*r));
		r->kind = h.kind;
		r->flags = h.flags;
		r->mode = h.mode;
		r->addr = (void *)(uintptr_t)h.addr;
		r->initiator.phys.nid = h.src_nid;
		r->initiator.phys.pid = h.src_pid;
		r->msg_id = h.msg_id;
		r->msg_off = h.msg_off;
		r->hdr_data = h.hdr_data;
		r->ts_ns = h.ts_ns;
	}
	shim_heap_free(buf);
	if (n_p != NULL)
		*n_p = i;
	if (st_p != NULL) {
		st_p->logged = msg.u.aa.addr;
		st_p->lost = msg.u.aa.len;
	}
	if (st == PTL_OK && i == 0)
		st = PTL_EQ_EMPTY;
	return st;
}

/* A log of ours with its ring, its poll lock taken. */
static struct aa_log *
aa_lock_log(spin_handle_aalog_t log)
{
	struct aa_log *lg;

	pthread_mutex_lock(&logs_lock);
	lg = aa_get(log);
	if (lg != NULL && lg->ring == NULL)
		lg = NULL;
	if (lg != NULL)
		pthread_mutex_lock(&lg->lock);
	pthread_mutex_unlock(&logs_lock);
	return lg;
}

/* Check a record header copied out of the ring at ring offset pos, with
 * avail bytes written after it. @return its bytes, or 0 when corrupt */
static uint64_t
rec_bytes(const struct aa_log *lg, const struct spinnic_aa_rec *h,
	  uint64_t pos, uint64_t avail)
{
	uint64_t need = sizeof(*h) + ((uint64_t)h->len + 63) / 64 * 64;

	if (h->kind == 0 || (h->kind > SPINNIC_AA_ATOMIC &&
			     h->kind != SPINNIC_AA_PAD))
		return 0;
	if (need > lg->size - pos || need > avail)
		return 0;
	return need;
}

int
spin_aa_log_poll(spin_handle_aalog_t log, spin_aa_fn fn, void *arg,
		 unsigned max, unsigned *n_p)
{
	struct aa_log *lg;
	unsigned n = 0;
	int st = PTL_OK;

	SHIM_ENTER();
	if (n_p != NULL)
		*n_p = 0;
	if (fn == NULL)
		return PTL_ARG_INVALID;
	lg = aa_lock_log(log);
	if (lg == NULL)
		return PTL_ARG_INVALID;
	if (lg->nic) {  /* the NIC's handler consumes it */
		pthread_mutex_unlock(&lg->lock);
		return PTL_ARG_INVALID;
	}
	if (lg->corrupt || __atomic_load_n(&lg->ring->err, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&lg->lock);
		return PTL_FAIL;
	}
	while (n < max) {
		uint64_t prod = __atomic_load_n(&lg->ring->prod, __ATOMIC_ACQUIRE);
		uint64_t pos = lg->cons & (lg->size - 1), need;
		const uint8_t *slot = (const uint8_t *)(lg->ring + 1) + pos;
		struct spinnic_aa_rec h;
		struct spin_aa_rec r;

		if (prod == lg->cons)
			break;
		if (prod - lg->cons > lg->size || prod < lg->cons) {
			lg->corrupt = true;
			st = PTL_FAIL;
			break;
		}
		/* committed? the seq word is stored last */
		if (__atomic_load_n((const uint32_t *)slot, __ATOMIC_ACQUIRE) !=
		    lg->seq)
			break;
		memcpy(&h, slot, sizeof(h));
		need = rec_bytes(lg, &h, pos, prod - lg->cons);
		if (need == 0) {
			lg->corrupt = true;
			st = PTL_FAIL;
			break;
		}
		if (h.kind != SPINNIC_AA_PAD) {
			memset(&r, 0, sizeof(r));
			r.kind = h.kind;
			r.flags = h.flags;
			r.len = h.len;
			r.mode = h.mode;
			r.addr = (void *)(uintptr_t)h.addr;
			r.initiator.phys.nid = h.src_nid;
			r.initiator.phys.pid = h.src_pid;
			r.msg_id = h.msg_id;
			r.msg_off = h.msg_off;
			r.hdr_data = h.hdr_data;
			r.ts_ns = h.ts_ns;
			r.data = h.len > 0 ? slot + sizeof(h) : NULL;
			if (fn(arg, &r) != 0)
				break;
			n++;
		}
		lg->cons += need;
		if (++lg->seq == 0)
			lg->seq = 1;
	}
	__atomic_store_n(&lg->ring->cons, lg->cons, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lg->lock);
	if (n_p != NULL)
		*n_p = n;
	if (st == PTL_OK && n == 0)
		st = PTL_EQ_EMPTY;
	return st;
}

int
spin_aa_log_wait(spin_handle_aalog_t log, int timeout_ms)
{
	uint64_t end = timeout_ms < 0 ? UINT64_MAX :
		shim_now_ms() + (uint64_t)timeout_ms;
	struct spinnic_aa_ring *ring;
	struct aa_log *lg;
	uint64_t cons;
	uint32_t val;
	bool ready;

	SHIM_ENTER();
	lg = aa_lock_log(log);
	if (lg == NULL)
		return PTL_ARG_INVALID;
	if (lg->nic) {
		pthread_mutex_unlock(&lg->lock);
		return PTL_ARG_INVALID;
	}
	/* not held while asleep (pollers go on); a log freed meanwhile
	 * leaves region heap memory: sleeping on it is harmless */
	ring = lg->ring;
	cons = lg->cons;
	pthread_mutex_unlock(&lg->lock);
	for (;;) {
		uint64_t now = shim_now_ms();

		if (__atomic_load_n(&ring->err, __ATOMIC_RELAXED))
			return PTL_FAIL;
		__atomic_fetch_add(&ring->waiters, 1, __ATOMIC_SEQ_CST);
		val = __atomic_load_n(&ring->futex, __ATOMIC_ACQUIRE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		ready = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE) != cons;
		if (!ready && now < end)
			shim_futex_wait(&ring->futex, val,
					end - now > 1000 ? 1000 :
					(int)(end - now));
		__atomic_fetch_sub(&ring->waiters, 1, __ATOMIC_RELEASE);
		ready = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE) != cons;
		if (ready || __atomic_load_n(&ring->futex, __ATOMIC_ACQUIRE) !=
		    val || shim_now_ms() >= end)
			break;
	}
	return ready ? PTL_OK : PTL_EQ_EMPTY;
}

int
spin_aa_log_status(spin_handle_aalog_t log, struct spin_aa_log_status *st_p)
{
	struct aa_log *lg;

	SHIM_ENTER();
	if (st_p == NULL)
		return PTL_ARG_INVALID;
	lg = aa_lock_log(log);
	if (lg == NULL)
		return PTL_ARG_INVALID;
	memset(st_p, 0, sizeof(*st_p));
	st_p->prod = __atomic_load_n(&lg->ring->prod, __ATOMIC_ACQUIRE);
	/* a log the NIC consumes: its index is the NIC's */
	st_p->cons = lg->nic ? __atomic_load_n(&lg->ring->cons,
					       __ATOMIC_ACQUIRE) : lg->cons;
	st_p->lost = __atomic_load_n(&lg->ring->lost, __ATOMIC_RELAXED);
	st_p->err = __atomic_load_n(&lg->ring->err, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lg->lock);
	return PTL_OK;
}

int
spin_aa_log_dump(spin_handle_aalog_t log, void *buf, size_t len,
		 size_t *len_p)
{
	struct aa_log *lg;
	size_t all;

	SHIM_ENTER();
	if (buf == NULL && len > 0)
		return PTL_ARG_INVALID;
	lg = aa_lock_log(log);
	if (lg == NULL)
		return PTL_ARG_INVALID;
	all = sizeof(*lg->ring) + lg->size;
	if (len > 0)
		memcpy(buf, lg->ring, len < all ? len : all);
	pthread_mutex_unlock(&lg->lock);
	if (len_p != NULL)
		*len_p = all;
	return PTL_OK;
}

int
spin_aa_flush(ptl_handle_ni_t ni_handle, ptl_process_t target,
	      ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	      ptl_size_t remote_offset, uint64_t *val_p, int timeout_ms)
{
	uint64_t *buf;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_event_t ev;
	ptl_md_t d;
	unsigned which;
	int rc;

	SHIM_ENTER();
	buf = shim_heap_alloc(64);
	if (buf == NULL)
		return PTL_NO_SPACE;
	rc = PtlEQAlloc(ni_handle, 4, &eq);
	if (rc != PTL_OK)
		goto out_buf;
	memset(&d, 0, sizeof(d));
	d.start = buf;
	d.length = sizeof(*buf);
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	d.eq_handle = eq;
	d.ct_handle = PTL_CT_NONE;
	rc = PtlMDBind(ni_handle, &d, &md);
	if (rc != PTL_OK)
		goto out_eq;
	*buf = 0;
	rc = PtlGet(md, 0, sizeof(*buf), target, pt_index, match_bits,
		    remote_offset, NULL);
	if (rc != PTL_OK)
		goto out_md;
	do {
		rc = PtlEQPoll(&eq, 1, timeout_ms < 0 ? PTL_TIME_FOREVER :
			       (ptl_time_t)timeout_ms, &ev, &which);
	} while (rc == PTL_OK && ev.type != PTL_EVENT_REPLY);
	if (rc == PTL_EQ_EMPTY)
		return rc; /* still in flight: MD, EQ and buffer stay */
	if (rc == PTL_OK && ev.ni_fail_type != PTL_NI_OK)
		rc = PTL_FAIL;
	if (rc == PTL_OK && val_p != NULL)
		*val_p = *buf;
out_md:
	PtlMDRelease(md);
out_eq:
	PtlEQFree(eq);
out_buf:
	shim_heap_free(buf);
	return rc;
}
