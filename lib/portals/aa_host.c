/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access on client memory (doc/NOTES.md "Active Access"): the
 * control operations that create logs and mark pages, and the accesses a
 * remote initiator makes through the NIC (puts, get replies, atomics,
 * handler DMAs), checked page piece by page piece against the client's
 * marks and logged. A client with no marks costs one flag load.
 */
#include <limits.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "ptl_internal.h"

#define LOG_IDX_BITS 8u
static bool bl_free(struct ptl_client *c, struct ptl_aa_log *lg);

/* a flush mark that counts held handler records (ptl_match_flush_mark) */
#define AA_MARK_HELD (1ull << 63)
#define AA_MIN3(a, b, c) ((a) < (b) ? ((a) < (c) ? (a) : (c)) : \
			   ((b) < (c) ? (b) : (c)))

static bool
aa_on(const struct ptl_client *c)
{
	return __atomic_load_n(&c->aa.on, __ATOMIC_ACQUIRE) != 0;
}

bool
ptl_aa_active(const struct ptl_client *c)
{
	return c != NULL && aa_on(c);
}

/* May [addr, addr + len) touch a marked page? (no lock: the bounds and
 * the region's page map are set under aa.lock before the control reply,
 * so an access that starts after a mark's reply sees them) */
static bool
aa_hits(const struct ptl_client *c, uint64_t addr, uint64_t len)
{
	const uint8_t *map;
	uint64_t p, last;

	if (!aa_on(c))
		return false;
	if (addr >= __atomic_load_n(&c->aa.hi, __ATOMIC_ACQUIRE) ||
	    addr + len <= __atomic_load_n(&c->aa.lo, __ATOMIC_ACQUIRE))
		return false;
	map = __atomic_load_n(&c->aa.rmap, __ATOMIC_ACQUIRE);
	if (map == NULL || len == 0 || addr < c->base_va ||
	    !ptl_range_ok(addr - c->base_va, len, c->size))
		return true; /* outside the region: the table decides */
	last = (addr - c->base_va + len - 1) / SPINNIC_AA_PAGE;
	for (p = (addr - c->base_va) / SPINNIC_AA_PAGE; p <= last; p++)
		if (__atomic_load_n(&map[p], __ATOMIC_RELAXED) != 0)
			return true;
	return false;
}

/* aa.lock held: [addr, addr + len) in the region page map */
static void
rmap_set(uint8_t *map, const struct ptl_client *c, uint64_t addr,
	 uint64_t len, bool marked)
{
	uint64_t lo, hi, p;

	lo = addr > c->base_va ? addr : c->base_va;
	hi = addr + len < c->base_va + c->size ? addr + len :
	     c->base_va + c->size;
	for (p = lo; p < hi; p += SPINNIC_AA_PAGE)
		__atomic_store_n(&map[(p - c->base_va) / SPINNIC_AA_PAGE],
				 marked ? 1 : 0, __ATOMIC_RELEASE);
}

/* aa.lock held, the table already changed: the region page map after a
 * mark of [addr, addr + len). Made at the first mark from the whole
 * table; without it (no memory) accesses in the bounds take the lock. */
static void
rmap_update(struct ptl_client *c, uint64_t addr, uint64_t len, bool marked)
{
	uint8_t *m;
	uint32_t i;

	if (c->aa.rmap != NULL) {
		rmap_set(c->aa.rmap, c, addr, len, marked);
		return;
	}
	if (c->base_va % SPINNIC_AA_PAGE != 0)
		return;
	m = calloc(c->size / SPINNIC_AA_PAGE + 1, 1);
	if (m == NULL)
		return;
	for (i = 0; i < c->aa.t.n; i++)
		rmap_set(m, c, c->aa.t.r[i].start,
			 c->aa.t.r[i].end - c->aa.t.r[i].start, true);
	__atomic_store_n(&c->aa.rmap, m, __ATOMIC_RELEASE);
}

/* ---- the IOTLB model (--aa-iotlb) ---- */

/*
 * The IOTLB model sees [addr, addr + len) of client c: one lookup per
 * 4 KiB piece (an IOMMU transaction, as accesses are cut), of the marking
 * page holding it; a miss counts a page-table walk of aa_walk_levels
 * reads. Counting only: the translation is the table's as always.
 */
static void
iotlb_touch(struct ptl_client *c, uint64_t addr, uint64_t len)
{
	struct ptl_nic *nic = c->nic;
	const unsigned shift = (unsigned)__builtin_ctzll(nic->conf.aa_page);
	uint64_t hits = 0, misses = 0, end = addr + len;

	if (nic->aa_tlb.entries == 0 || len == 0 || end < addr)
		return;
	ptl_lock(&nic->aa_tlb_lock);
	while (addr < end) {
		uint64_t next = (addr | (SPINNIC_AA_PAGE - 1)) + 1;

		if (ptl_aa_iotlb_lookup(&nic->aa_tlb, c->pid, addr >> shift))
			hits++;
		else
			misses++;
		addr = next > addr && next < end ? next : end;
	}
	ptl_unlock(&nic->aa_tlb_lock);
	PTL_STAT_ADD(nic, aa_iotlb_hits, hits);
	PTL_STAT_ADD(nic, aa_iotlb_misses, misses);
	PTL_STAT_ADD(nic, aa_iotlb_walk_reads, misses * nic->aa_walk_levels);
}

/* Marks changed or the client left: drop its entries (a domain-selective
 * invalidation, as the OS does after changing a page table). */
static void
iotlb_inval(struct ptl_client *c)
{
	struct ptl_nic *nic = c->nic;
	uint32_t n;

	if (nic->aa_tlb.entries == 0)
		return;
	ptl_lock(&nic->aa_tlb_lock);
	n = ptl_aa_iotlb_inval(&nic->aa_tlb, c->pid);
	ptl_unlock(&nic->aa_tlb_lock);
	PTL_STAT_ADD(nic, aa_iotlb_inval, n);
}

static uint32_t
log_handle(const struct ptl_aa_log *lg, uint32_t idx)
{
	return (lg->gen & 0xffffffu) << LOG_IDX_BITS | idx;
}

/* aa.lock held: the live log a handle names, or NULL */
static struct ptl_aa_log *
log_get(struct ptl_client *c, uint32_t h)
{
	uint32_t idx = h & ((1u << LOG_IDX_BITS) - 1);
	struct ptl_aa_log *lg;

	if (h == SPINNIC_HANDLE_NONE || idx >= SPINNIC_AA_LOGS_MAX)
		return NULL;
	lg = &c->aa.logs[idx];
	if (!lg->used || log_handle(lg, idx) != h)
		return NULL;
	return lg;
}

/* ---- the NIC's own service of logs (ptl_aa_poll) ---- */

static bool
log_watched(const struct ptl_aa_log *lg)
{
	return lg->ctx != SPINNIC_HANDLE_NONE || lg->notify_ns != 0;
}

/* the client gains a served log: its pid joins the watch list */
static int
watch_add(struct ptl_nic *nic, struct ptl_client *c)
{
	int rc = 0;

	ptl_lock(&nic->aa_wlock);
	if (c->aa.watched == 0) {
		if (nic->aa_wn == SPINNIC_AA_WATCH_MAX) {
			rc = -ENOSPC;
			goto out;
		}
		nic->aa_wpid[nic->aa_wn] = c->pid;
		nic->aa_wcl[nic->aa_wn] = c;
		__atomic_store_n(&nic->aa_wn, nic->aa_wn + 1, __ATOMIC_RELEASE);
	}
	c->aa.watched++;
out:
	ptl_unlock(&nic->aa_wlock);
	return rc;
}

static void
watch_del(struct ptl_nic *nic, struct ptl_client *c)
{
	uint32_t i;

	ptl_lock(&nic->aa_wlock);
	if (c->aa.watched > 0 && --c->aa.watched == 0) {
		for (i = 0; i < nic->aa_wn; i++)
			if (nic->aa_wcl[i] == c)
				break;
		if (i < nic->aa_wn) {
			nic->aa_wpid[i] = nic->aa_wpid[nic->aa_wn - 1];
			nic->aa_wcl[i] = nic->aa_wcl[nic->aa_wn - 1];
			__atomic_store_n(&nic->aa_wn, nic->aa_wn - 1,
					 __ATOMIC_RELEASE);
		}
	}
	ptl_unlock(&nic->aa_wlock);
}

/* ---- control (nic->lock held) ---- */

static bool
rings_overlap(const struct ptl_client *c, uint64_t off, uint64_t bytes)
{
	uint32_t i;

	for (i = 0; i < SPINNIC_AA_LOGS_MAX; i++) {
		const struct ptl_aa_log *lg = &c->aa.logs[i];
		uint64_t o;

		if (!lg->used)
			continue;
		o = (uint64_t)((const uint8_t *)lg->ring - c->region);
		if (off < o + sizeof(*lg->ring) + lg->size && o < off + bytes)
			return true;
	}
	return false;
}

static int
aa_log_create(struct ptl_nic *nic, struct ptl_client *c,
	      struct spinnic_ctrl_aa *r)
{
	const bool hnd = (r->flags & SPINNIC_AA_LOG_HANDLER) != 0;
	uint64_t bytes = sizeof(struct spinnic_aa_ring) + r->size;
	struct ptl_aa_log *lg;
	uint32_t i;

	if ((r->flags & ~(SPINNIC_AA_LOG_DROP | SPINNIC_AA_LOG_HANDLER)) != 0 ||
	    r->notify_us > SPINNIC_AA_NOTIFY_US_MAX ||
	    (hnd && (r->ctx == SPINNIC_HANDLE_NONE ||
	     (r->len == 0 || r->addr + r->len < r->addr ||
	      r->addr + r->len > (1ull << 56)))) ||
	    r->size < SPINNIC_AA_RING_MIN || r->size > SPINNIC_AA_RING_MAX ||
	    !ptl_is_pow2(r->size) || r->ring_off % 64 != 0 ||
	    r->ring_off < sizeof(struct spinnic_region_hdr) ||
	    !ptl_range_ok(r->ring_off, bytes, c->size) ||
	    rings_overlap(c, r->ring_off, bytes))
		return SPINNIC_PTL_ARG_INVALID;
	for (i = 0; i < SPINNIC_AA_LOGS_MAX; i++)
		if (!c->aa.logs[i].used)
			break;
	if (i == SPINNIC_AA_LOGS_MAX)
		return SPINNIC_PTL_NO_SPACE;
	lg = &c->aa.logs[i];
	if ((hnd || r->notify_us != 0) && watch_add(nic, c) != 0)
		return SPINNIC_PTL_NO_SPACE;
	ptl_lock(&c->aa.lock);
	ptl_aa_log_init(lg, c->region + r->ring_off, r->size);
	lg->flags = r->flags & SPINNIC_AA_LOG_DROP;
	lg->notify_every = r->notify_every == 0 ? 1 : r->notify_every;
	lg->since = 0;
	lg->notify_ns = (uint64_t)r->notify_us * 1000u;
	lg->first_ns = 0;
	lg->ctx = hnd ? r->ctx : SPINNIC_HANDLE_NONE;
	lg->cseq = 0;
	lg->ccons = 0;
	lg->win_addr = hnd ? r->addr : 0;
	lg->win_len = hnd ? r->len : 0;
	lg->cbusy = false;
	lg->used = true;
	ptl_unlock(&c->aa.lock);
	r->log = log_handle(lg, i);
	PTL_STAT(nic, aa_logs_live);
	return SPINNIC_PTL_OK;
}

static int
aa_log_free(struct ptl_nic *nic, struct ptl_client *c,
	    struct spinnic_ctrl_aa *r)
{
	struct ptl_aa_log *lg;
	int st = SPINNIC_PTL_OK;
	bool watched = false;

	ptl_lock(&c->aa.lock);
	lg = log_get(c, r->log);
	if (lg == NULL) {
		st = SPINNIC_PTL_ARG_INVALID;
	} else if (ptl_aa_table_uses_log(&c->aa.t, r->log)) {
		st = SPINNIC_PTL_IN_USE;
	} else {
		watched = log_watched(lg);
		/* its held records go with it (and its watch) */
		if (bl_free(c, lg))
			watch_del(nic, c);
		lg->used = false;
		lg->gen++;
		lg->ring = NULL;
		PTL_STAT_ADD(nic, aa_logs_live, -1ull);
	}
	ptl_unlock(&c->aa.lock);
	if (watched)
		watch_del(nic, c);
	return st;
}

static int
aa_assoc(struct ptl_client *c, struct spinnic_ctrl_aa *r)
{
	const uint32_t logging = SPINNIC_AA_WL | SPINNIC_AA_WLD |
				 SPINNIC_AA_RL | SPINNIC_AA_RLD |
				 SPINNIC_AA_FLUSH;
	/* what only a log can hold: data, and a flushing page's log */
	const uint32_t needs_log = SPINNIC_AA_WLD | SPINNIC_AA_RLD |
				   SPINNIC_AA_FLUSH;
	uint32_t log = r->log;
	int rc, st = SPINNIC_PTL_OK;

	if ((r->bits & ~SPINNIC_AA_BITS) != 0)
		return SPINNIC_PTL_ARG_INVALID;
	if (r->addr == 0 && r->len == 0 && r->bits == 0 &&
	    log == SPINNIC_HANDLE_NONE)
		return SPINNIC_PTL_OK; /* a query of the page size */
	/* marks at the NIC's granularity (the table checks 4 KiB) */
	if (r->addr % c->nic->conf.aa_page != 0 ||
	    r->len % c->nic->conf.aa_page != 0)
		return SPINNIC_PTL_ARG_INVALID;
	ptl_lock(&c->aa.lock);
	if (log != SPINNIC_HANDLE_NONE && log_get(c, log) == NULL) {
		st = SPINNIC_PTL_ARG_INVALID;     /* not a live log of ours */
	} else if ((r->bits & needs_log) != 0 && log == SPINNIC_HANDLE_NONE) {
		st = SPINNIC_PTL_ARG_INVALID;     /* data needs a log */
	} else if ((r->bits & logging) != 0 && log == SPINNIC_HANDLE_NONE &&
		   c->aa.fault == NULL &&
		   (c->aa.fault = calloc(SPINNIC_AA_FAULTS_MAX,
					 sizeof(*c->aa.fault))) == NULL) {
		st = SPINNIC_PTL_NO_SPACE;
	} else {
		if ((r->bits & logging) == 0)
			log = SPINNIC_HANDLE_NONE;
		else if (log == SPINNIC_HANDLE_NONE)
			log = PTL_AA_LOG_FAULT;   /* E = 0: the fault log */
		rc = ptl_aa_table_set(&c->aa.t, r->addr, r->len, r->bits, log);
		st = ptl_errno_to_status(rc);
		if (rc == 0) {
			rmap_update(c, r->addr, r->len,
				    r->bits != PTL_AA_DEFAULT ||
				    log != SPINNIC_HANDLE_NONE);
			iotlb_inval(c);
		}
		__atomic_store_n(&c->aa.lo, c->aa.t.n > 0 ? c->aa.t.r[0].start :
				 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->aa.hi, c->aa.t.n > 0 ?
				 c->aa.t.r[c->aa.t.n - 1].end : 0,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&c->aa.on, c->aa.t.n > 0 ? 1u : 0u,
				 __ATOMIC_RELEASE);
	}
	ptl_unlock(&c->aa.lock);
	return st;
}

/*
 * Move the caller's oldest fault records into its region: only this
 * client's fault log is read (each client has its own), so no client
 * sees another's records.
 */
static int
aa_fault_read(struct ptl_nic *nic, struct ptl_client *c,
	      struct spinnic_ctrl_aa *r)
{
	struct spinnic_aa_rec *out;
	uint32_t n = 0;

	if (r->size == 0 || r->size > SPINNIC_AA_FAULTS_MAX ||
	    r->ring_off % 64 != 0 ||
	    r->ring_off < sizeof(struct spinnic_region_hdr) ||
	    !ptl_range_ok(r->ring_off, r->size * sizeof(*out), c->size))
		return SPINNIC_PTL_ARG_INVALID;
	out = (struct spinnic_aa_rec *)(void *)(c->region + r->ring_off);
	ptl_lock(&c->aa.lock);
	while (n < r->size && c->aa.fault_n > 0) {
		memcpy(&out[n++], &c->aa.fault[c->aa.fault_head],
		       sizeof(*out));
		c->aa.fault_head = (c->aa.fault_head + 1) %
				   SPINNIC_AA_FAULTS_MAX;
		c->aa.fault_n--;
	}
	r->size = n;
	r->addr = c->aa.faults;
	r->len = c->aa.fault_lost;
	ptl_unlock(&c->aa.lock);
	PTL_STAT_ADD(nic, aa_faults_read, n);
	return SPINNIC_PTL_OK;
}

int
ptl_ctrl_aa(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    struct spinnic_ctrl_aa *r)
{
	if (op != SPINNIC_CTRL_AA_LOG_FREE && ptl_ni_get(c, r->ni) == NULL)
		return SPINNIC_PTL_ARG_INVALID;
	r->page_shift = (uint32_t)__builtin_ctzll(nic->conf.aa_page);
	switch (op) {
	case SPINNIC_CTRL_AA_LOG_CREATE:
		return aa_log_create(nic, c, r);
	case SPINNIC_CTRL_AA_LOG_FREE:
		return aa_log_free(nic, c, r);
	case SPINNIC_CTRL_AA_ASSOC:
		return aa_assoc(c, r);
	case SPINNIC_CTRL_AA_FAULT_READ:
		return aa_fault_read(nic, c, r);
	default:
		return SPINNIC_PTL_ARG_INVALID;
	}
}

void
ptl_aa_client_fini(struct ptl_client *c)
{
	uint32_t i;

	ptl_lock(&c->aa.lock);
	__atomic_store_n(&c->aa.on, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->aa.lo, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->aa.hi, 0, __ATOMIC_RELAXED);
	ptl_aa_table_clear(&c->aa.t);
	free(c->aa.rmap);
	c->aa.rmap = NULL;
	free(c->aa.fault);
	c->aa.fault = NULL;
	c->aa.fault_n = 0;
	iotlb_inval(c);
	for (i = 0; i < SPINNIC_AA_LOGS_MAX; i++) {
		bl_free(c, &c->aa.logs[i]);
		if (c->aa.logs[i].used) {
			c->aa.logs[i].used = false;
			c->aa.logs[i].gen++;
			PTL_STAT_ADD(c->nic, aa_logs_live, -1ull);
		}
	}
	ptl_unlock(&c->aa.lock);
	/* every log went: the pid leaves the watch list */
	ptl_lock(&c->nic->aa_wlock);
	if (c->aa.watched > 0)
		c->aa.watched = 1;
	ptl_unlock(&c->nic->aa_wlock);
	watch_del(c->nic, c);
}

/* ---- monitoring ---- */

int
ptl_client_aa_dump(struct ptl_nic *nic, uint32_t pid,
		   struct ptl_aa_client_info *ci_p,
		   struct ptl_aa_log_info *out, unsigned max, unsigned *n_p)
{
	struct ptl_client *c;
	unsigned n = 0;
	uint32_t i;

	if (pid >= nic->conf.max_clients)
		return -ERANGE;
	memset(ci_p, 0, sizeof(*ci_p));
	*n_p = 0;
	ptl_lock(&nic->lock);
	c = nic->clients[pid];
	if (c == NULL) {
		ptl_unlock(&nic->lock);
		return -ENOENT;
	}
	ptl_lock(&c->aa.lock);
	ci_p->ranges = c->aa.t.n;
	ci_p->faults = c->aa.faults;
	ci_p->fault_lost = c->aa.fault_lost;
	ci_p->fault_held = c->aa.fault_n;
	for (i = 0; i < c->aa.t.n; i++)
		ci_p->marked_bytes += c->aa.t.r[i].end - c->aa.t.r[i].start;
	for (i = 0; i < SPINNIC_AA_LOGS_MAX; i++) {
		const struct ptl_aa_log *lg = &c->aa.logs[i];
		struct ptl_aa_log_info *li;

		if (!lg->used)
			continue;
		ci_p->logs++;
		if (n == max)
			continue;
		li = &out[n++];
		memset(li, 0, sizeof(*li));
		li->handle = log_handle(lg, i);
		li->drop = (lg->flags & SPINNIC_AA_LOG_DROP) != 0;
		li->served = lg->ctx != SPINNIC_HANDLE_NONE;
		li->err = lg->err;
		li->ctx = lg->ctx;
		li->notify_every = lg->notify_every;
		li->notify_us = lg->notify_ns / 1000u;
		li->size = lg->size;
		li->prod = lg->prod;
		/* the client's word: whatever it holds, only reported */
		li->cons = __atomic_load_n(&lg->ring->cons, __ATOMIC_ACQUIRE);
		li->cons_ok = li->cons <= li->prod &&
			      li->prod - li->cons <= li->size;
		li->records = lg->records;
		li->lost = lg->lost;
		li->held = lg->bl_in - lg->bl_out;
	}
	ptl_unlock(&c->aa.lock);
	ptl_unlock(&nic->lock);
	*n_p = n;
	return 0;
}

/* ---- accesses on behalf of a remote initiator ---- */

static uint64_t
aa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* aa.lock held: wake the log's sleepers, if any. prod was published
 * before; the client raises waiters before it reads prod (both sides
 * fence): one of the two sees the other. */
static void
log_notify(struct ptl_client *c, struct ptl_aa_log *lg)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&lg->ring->waiters, __ATOMIC_RELAXED) == 0)
		return;
	lg->since = 0;
	__atomic_fetch_add(&lg->ring->futex, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &lg->ring->futex, FUTEX_WAKE, INT_MAX, NULL, NULL,
		0);
	PTL_STAT(c->nic, futex_wakes);
}

/*
 * aa.lock held: a record of an E = 0 page to the client's fault log
 * (metadata only, as the paper's fault entries). Full: the new record
 * is lost and counted (the paper's fault log does not record on
 * overflow; nothing waits for it).
 */
static int
fault_record(struct ptl_client *c, struct spinnic_aa_rec *h)
{
	if (c->aa.fault == NULL || c->aa.fault_n == SPINNIC_AA_FAULTS_MAX) {
		c->aa.fault_lost++;
		PTL_STAT(c->nic, aa_faults_lost);
		return -ENOSPC;
	}
	h->len = 0;
	h->ts_ns = aa_now_ns();
	h->seq = (uint32_t)++c->aa.faults;
	c->aa.fault[(c->aa.fault_head + c->aa.fault_n) %
		    SPINNIC_AA_FAULTS_MAX] = *h;
	c->aa.fault_n++;
	PTL_STAT(c->nic, aa_faults);
	return 0;
}

/* aa.lock held: append one record to a live log, count and notify;
 * @return 0 or why it was lost */
static int
log_put(struct ptl_client *c, struct ptl_aa_log *lg, uint32_t log,
	struct spinnic_aa_rec *h, const void *buf)
{
	bool was_err = lg->err;
	int rc;

	rc = ptl_aa_log_append(lg, h, buf);
	if (rc == 0) {
		PTL_STAT(c->nic, aa_records);
		if (lg->since == 0 && lg->notify_ns != 0)
			lg->first_ns = aa_now_ns();
		if (++lg->since >= lg->notify_every)
			log_notify(c, lg);
		return 0;
	}
	PTL_STAT(c->nic, aa_lost);
	if (!was_err && lg->err) {
		PTL_STAT(c->nic, aa_log_err);
		PTL_LOG(NOTICE, "client pid %u: access log %#x stopped: invalid "
			"consumer index", c->pid, log);
	}
	return rc;
}

/*
 * aa.lock held: hold a handler DMA's record on the NIC (its log is full
 * or already holds some). The client's held bytes are bounded: past
 * PTL_AA_BACKLOG_MAX the record is lost and counted, as in drop mode. A
 * log's first held record puts the client on the watch list, so that
 * ptl_aa_poll moves the records on when the consumer makes room.
 * @return 0; -ENOSPC lost
 */
static int
bl_push(struct ptl_client *c, struct ptl_aa_log *lg,
	const struct spinnic_aa_rec *h, const void *buf)
{
	const uint64_t bytes = sizeof(struct ptl_aa_bl) + h->len;
	struct ptl_aa_bl *e = NULL;

	if (c->aa.bl_bytes + bytes <= PTL_AA_BACKLOG_MAX)
		e = malloc(bytes);
	if (e != NULL && lg->bl_head == NULL && watch_add(c->nic, c) != 0) {
		free(e);
		e = NULL;
	}
	if (e == NULL) {
		ptl_aa_log_lose(lg);
		PTL_STAT(c->nic, aa_lost);
		PTL_STAT(c->nic, aa_dma_wait_lost);
		return -ENOSPC;
	}
	e->next = NULL;
	e->h = *h;
	if (h->len > 0)
		memcpy(e->data, buf, h->len);
	if (lg->bl_tail != NULL)
		lg->bl_tail->next = e;
	else
		lg->bl_head = e;
	lg->bl_tail = e;
	lg->bl_in++;
	__atomic_store_n(&c->aa.bl_bytes, c->aa.bl_bytes + bytes,
			 __ATOMIC_RELAXED);
	PTL_STAT(c->nic, aa_dma_waits);
	return 0;
}

/* aa.lock held: one held record gone from its log (appended or not) */
static void
bl_release(struct ptl_client *c, struct ptl_aa_bl *e)
{
	__atomic_store_n(&c->aa.bl_bytes, c->aa.bl_bytes -
			 (sizeof(*e) + e->h.len), __ATOMIC_RELAXED);
	free(e);
}

/* aa.lock held: drop a log's held records (the log or client goes);
 * @return true when it held some */
static bool
bl_free(struct ptl_client *c, struct ptl_aa_log *lg)
{
	struct ptl_aa_bl *e, *next;
	bool had = lg->bl_head != NULL;

	for (e = lg->bl_head; e != NULL; e = next) {
		next = e->next;
		bl_release(c, e);
	}
	lg->bl_head = lg->bl_tail = NULL;
	lg->bl_out = lg->bl_in;
	if (had)
		__atomic_fetch_add(&c->nic->aa_unheld, 1, __ATOMIC_RELEASE);
	return had;
}

/*
 * aa.lock held: append the log's held records the ring has room for, in
 * order (a stopped log loses and counts them all). The last one leaves
 * the watch list.
 */
static void
bl_drain(struct ptl_client *c, uint32_t i)
{
	struct ptl_aa_log *lg = &c->aa.logs[i];
	struct ptl_aa_bl *e;

	if (lg->bl_head == NULL)
		return;
	while ((e = lg->bl_head) != NULL) {
		if (!ptl_aa_log_fits(lg, e->h.len))
			return;
		(void)log_put(c, lg, log_handle(lg, i), &e->h, e->data);
		lg->bl_head = e->next;
		if (lg->bl_head == NULL)
			lg->bl_tail = NULL;
		lg->bl_out++;
		bl_release(c, e);
	}
	watch_del(c->nic, c);
	__atomic_fetch_add(&c->nic->aa_unheld, 1, __ATOMIC_RELEASE);
}

/* aa.lock held: bl_drain of every log of the client */
static void
bl_drain_all(struct ptl_client *c)
{
	uint32_t i;

	if (c->aa.bl_bytes == 0)
		return;
	for (i = 0; i < SPINNIC_AA_LOGS_MAX; i++)
		if (c->aa.logs[i].used)
			bl_drain(c, i);
}

/* aa.lock held: one record; @return 0 or why it was lost */
static int
aa_record(struct ptl_client *c, uint32_t log, const struct ptl_aa_verdict *v,
	  uint32_t bits, uint64_t addr, const void *buf, uint64_t n,
	  const struct ptl_aa_src *s, uint64_t msg_off)
{
	struct ptl_aa_log *lg = log_get(c, log);
	struct spinnic_aa_rec h = { 0 };

	if (lg == NULL && log != PTL_AA_LOG_FAULT) {
		PTL_STAT(c->nic, aa_lost);
		return -ENOENT;
	}
	h.kind = v->kind;
	h.flags = (uint16_t)((v->redirected ? SPINNIC_AA_F_REDIRECTED : 0) |
			     (s->handler ? SPINNIC_AA_F_HANDLER : 0));
	h.len = v->data ? (uint32_t)n : 0;
	h.mode = bits;
	h.addr = addr;
	h.src_nid = s->nid;
	h.src_pid = s->pid;
	h.msg_id = s->msg_id;
	h.msg_off = msg_off;
	h.hdr_data = s->hdr_data;
	if (lg == NULL)
		return fault_record(c, &h);
	/* a handler's DMA cannot come again as a packet can: its records
	 * wait on the NIC, behind those already waiting */
	if (s->defer && !(lg->flags & SPINNIC_AA_LOG_DROP) && !lg->err &&
	    (lg->bl_head != NULL || !ptl_aa_log_fits(lg, h.len)))
		return bl_push(c, lg, &h, buf);
	return log_put(c, lg, log, &h, buf);
}

/* What an access does to a page piece with bits (records included). */
typedef void aa_rule_fn(uint32_t bits, bool write, const struct ptl_aa_src *s,
			struct ptl_aa_verdict *v_p);

/* Puts, get replies and handler DMAs: the bytes move (ptl_aa_rule). */
static void
move_rule(uint32_t bits, bool write, const struct ptl_aa_src *s,
	  struct ptl_aa_verdict *v_p)
{
	(void)s;
	ptl_aa_rule(bits, write, v_p);
}

/*
 * A check without data (gets before their first reply packet, atomics
 * before they apply; write true: an atomic): only refused pieces are
 * recorded (GET_BLOCKED, PUT_BLOCKED) and, for atomics, one ATOMIC
 * record (no data) per logged piece.
 */
static void
check_rule(uint32_t bits, bool write, const struct ptl_aa_src *s,
	   struct ptl_aa_verdict *v_p)
{
	struct ptl_aa_verdict r;

	ptl_aa_rule(bits, write, v_p);
	if (write && !v_p->fail) {
		/* a fetching atomic reads too; a redirecting one is refused
		 * (its old values cannot come from a log) */
		ptl_aa_rule(bits, false, &r);
		if (v_p->redirected) {
			v_p->fail = true;
			v_p->kind = 0;
		} else if (s->fetch && r.fail) {
			v_p->fail = true;
			v_p->kind = r.kind; /* GET_BLOCKED with RL/RLD */
		} else if (v_p->kind != 0 || (s->fetch && r.kind != 0)) {
			v_p->kind = SPINNIC_AA_ATOMIC;
		}
	} else if (!v_p->fail) {
		v_p->kind = 0; /* logged when the data moves */
	}
	v_p->data = false;
	v_p->redirected = false;
}

/* Where each back-pressuring log's writer would be after an access's
 * records (PADs included): one access may span several ranges. */
struct aa_fit {
	uint64_t pos[SPINNIC_AA_LOGS_MAX];
	uint32_t used;
	bool held;    /* a log holds handler records: they go first */
};

/*
 * aa.lock held: add the records of [addr, addr + len) to @p f. Logs that
 * drop or are stopped are left out (the append decides there).
 */
static void
fit_add(struct ptl_client *c, struct aa_fit *f, uint64_t addr, uint64_t len,
	bool write, aa_rule_fn *rule, const struct ptl_aa_src *s)
{
	uint32_t i;

	while (len > 0) {
		uint64_t end, n, page_end, need, room_at;
		struct ptl_aa_verdict v;
		struct ptl_aa_log *lg;
		uint32_t log, bits;

		bits = ptl_aa_table_find(&c->aa.t, addr, &end, &log);
		if (bits == PTL_AA_DEFAULT && log == SPINNIC_HANDLE_NONE) {
			n = end - addr < len ? end - addr : len;
			goto next;
		}
		page_end = (addr | (SPINNIC_AA_PAGE - 1)) + 1;
		n = AA_MIN3(end - addr, page_end - addr, len);
		rule(bits, write, s, &v);
		lg = v.kind != 0 ? log_get(c, log) : NULL;
		if (lg != NULL && !(lg->flags & SPINNIC_AA_LOG_DROP) && !lg->err) {
			if (lg->bl_head != NULL)
				f->held = true;
			i = (uint32_t)(lg - c->aa.logs);
			if (!(f->used & (1u << i))) {
				f->used |= 1u << i;
				f->pos[i] = lg->prod;
			}
			need = sizeof(struct spinnic_aa_rec) +
			       (v.data ? (n + 63) / 64 * 64 : 0);
			room_at = lg->size - (f->pos[i] & (lg->size - 1));
			if (room_at < need)
				f->pos[i] += room_at; /* a PAD first */
			f->pos[i] += need;
		}
next:
		addr += n;
		len -= n;
	}
}

/*
 * aa.lock held: would every record added to @p f fit in its log? A log
 * that could not take them even empty (never blocks for ever) or whose
 * cons is corrupt says yes: the append decides there.
 */
static bool
fit_ok(struct ptl_client *c, const struct aa_fit *f)
{
	uint32_t i;

	if (f->held)
		return false;
	for (i = 0; i < SPINNIC_AA_LOGS_MAX; i++) {
		struct ptl_aa_log *lg = &c->aa.logs[i];
		uint64_t cons;

		if (!(f->used & (1u << i)))
			continue;
		cons = __atomic_load_n(&lg->ring->cons, __ATOMIC_ACQUIRE);
		if (cons > lg->prod || lg->prod - cons > lg->size)
			continue; /* corrupt: the append stops the log */
		if (f->pos[i] - cons > lg->size &&
		    f->pos[i] - lg->prod <= lg->size)
			return false;
	}
	return true;
}

/*
 * aa.lock held: [addr, addr + len) of one contiguous client range:
 * unmarked runs copied as ptl_host_read/write would, marked pages piece
 * by piece by the rule. Pieces are independent (as an IOMMU's
 * transactions): a blocked piece leaves memory untouched and the others
 * still happen.
 * @return 0; -EPERM a piece was blocked; -ENOSPC a redirected piece was
 *   lost (its log was its only destination); host errors as
 *   ptl_host_write (the access stops there)
 */
static int
aa_range_locked(struct ptl_client *c, uint64_t addr, uint8_t *buf,
		uint64_t len, bool write, const struct ptl_aa_src *s,
		uint64_t msg_off)
{
	int rc = 0, res = 0;

	while (len > 0) {
		uint64_t end, n, page_end;
		struct ptl_aa_verdict v;
		uint32_t log, bits;

		bits = ptl_aa_table_find(&c->aa.t, addr, &end, &log);
		if (bits == PTL_AA_DEFAULT && log == SPINNIC_HANDLE_NONE) {
			n = end - addr < len ? end - addr : len;
			iotlb_touch(c, addr, n);
			rc = write ? ptl_host_write(c, addr, buf, n) :
				     ptl_host_read(c, addr, buf, n);
			if (rc != 0)
				break;
		} else {
			page_end = (addr | (SPINNIC_AA_PAGE - 1)) + 1;
			n = page_end - addr < len ? page_end - addr : len;
			iotlb_touch(c, addr, n);
			ptl_aa_rule(bits, write, &v);
			if (v.mem) {
				rc = write ? ptl_host_write(c, addr, buf, n) :
					     ptl_host_read(c, addr, buf, n);
				if (rc != 0)
					break;
			}
			if (v.kind != 0 &&
			    aa_record(c, log, &v, bits, addr, buf, n, s,
				      msg_off) != 0 && v.redirected && res == 0)
				res = -ENOSPC;
			if (v.fail) {
				PTL_STAT(c->nic, aa_blocked);
				if (res == 0)
					res = -EPERM;
			}
			if (v.redirected)
				PTL_STAT(c->nic, aa_redirected);
		}
		addr += n;
		buf += n;
		len -= n;
		msg_off += n;
	}
	return rc != 0 ? rc : res;
}

/*
 * A handler's DMA (s->defer) cannot be refused and come again as a
 * packet can, and an HPU that waited for the consumer would hold its
 * lcore (and, with one HPU, the access handlers that drain a log served
 * on the NIC): it happens now, and the records a full back-pressuring
 * log cannot take are held on the NIC (bl_push) until it can. A caller
 * that can come again (s->may_block) is refused whole instead.
 */
int
ptl_host_access_remote(struct ptl_client *c, uint64_t addr, void *buf,
		       uint64_t len, bool write, const struct ptl_aa_src *s)
{
	int rc;

	if (!aa_hits(c, addr, len))
		return write ? ptl_host_write(c, addr, buf, len) :
			       ptl_host_read(c, addr, buf, len);
	if (addr + len < addr)
		return -EFAULT;
	ptl_lock(&c->aa.lock);
	bl_drain_all(c);
	if (s->may_block) {
		struct aa_fit f = { .used = 0 };

		fit_add(c, &f, addr, len, write, move_rule, s);
		if (!fit_ok(c, &f)) {
			ptl_unlock(&c->aa.lock);
			PTL_STAT(c->nic, aa_backpressure);
			return -EAGAIN;
		}
	}
	rc = aa_range_locked(c, addr, buf, len, write, s, s->msg_off);
	ptl_unlock(&c->aa.lock);
	return rc;
}

uint64_t
ptl_aa_unheld(const struct ptl_nic *nic)
{
	return __atomic_load_n(&nic->aa_unheld, __ATOMIC_ACQUIRE);
}

bool
ptl_aa_backlogged(const struct ptl_client *c)
{
	return __atomic_load_n(&c->aa.bl_bytes, __ATOMIC_RELAXED) != 0;
}

bool
ptl_host_marked(struct ptl_client *c, uint64_t addr, uint64_t len)
{
	uint64_t end;
	uint32_t log, bits;
	bool marked;

	if (len == 0 || !aa_hits(c, addr, len))
		return false;
	ptl_lock(&c->aa.lock);
	bits = ptl_aa_table_find(&c->aa.t, addr, &end, &log);
	marked = bits != PTL_AA_DEFAULT || log != SPINNIC_HANDLE_NONE ||
		 end - addr < len;
	ptl_unlock(&c->aa.lock);
	return marked;
}

/* One contiguous client range of a match: [addr, addr + len) at
 * msg_off in the message. */
struct aa_piece {
	uint64_t addr, len, msg_off;
};

/* A match's [off, off + len) as contiguous client ranges (iovec MEs: one
 * per entry; the rest, when the entries end, in *rest_p).
 * @return the pieces written to p (at most max) */
static uint32_t
match_pieces(const struct ptl_match *mt, uint64_t off, uint64_t len,
	     struct aa_piece *p, uint32_t max, uint64_t *rest_p)
{
	const struct ptl_iovs *v = mt->iov;
	uint64_t at = mt->local_offset + off, msg_off = off;
	uint32_t i, k = 0;

	if (v == NULL) {
		p[0] = (struct aa_piece){ mt->start + off, len, off };
		*rest_p = 0;
		return 1;
	}
	for (i = 0; i < v->n && len > 0 && k < max; i++) {
		uint64_t take;

		if (at >= v->ent[i].len) {
			at -= v->ent[i].len;
			continue;
		}
		take = v->ent[i].len - at < len ? v->ent[i].len - at : len;
		p[k++] = (struct aa_piece){ v->ent[i].addr + at, take,
					    msg_off };
		len -= take;
		msg_off += take;
		at = 0;
	}
	*rest_p = len;
	return k;
}

/*
 * A match's [off, off + len) through aa_range_locked, piece by piece,
 * under one hold of the lock: with s->may_block every record of every
 * piece must fit first (-EAGAIN: nothing done), so an iovec ME's packet
 * is refused whole as a contiguous one is.
 */
static int
match_walk(const struct ptl_match *mt, uint64_t off, uint8_t *buf,
	   uint64_t len, bool write, const struct ptl_aa_src *s)
{
	struct aa_piece p[PTL_MAX_IOVECS];
	struct ptl_client *c = mt->c;
	struct aa_fit f = { .used = 0 };
	uint64_t rest;
	uint32_t k, i;
	int rc, res = 0;

	k = match_pieces(mt, off, len, p, PTL_MAX_IOVECS, &rest);
	for (i = 0; i < k; i++)
		if (p[i].addr + p[i].len < p[i].addr)
			return -EFAULT;
	ptl_lock(&c->aa.lock);
	bl_drain_all(c);
	if (s->may_block) {
		for (i = 0; i < k; i++)
			fit_add(c, &f, p[i].addr, p[i].len, write, move_rule,
				s);
		if (!fit_ok(c, &f)) {
			ptl_unlock(&c->aa.lock);
			PTL_STAT(c->nic, aa_backpressure);
			return -EAGAIN;
		}
	}
	for (i = 0; i < k; i++) {
		rc = aa_range_locked(c, p[i].addr, buf, p[i].len, write, s,
				     p[i].msg_off);
		if (rc == -EPERM || rc == -ENOSPC) {
			if (res == 0)
				res = rc;
		} else if (rc != 0) {
			res = rc;
			break;
		}
		buf += p[i].len;
	}
	ptl_unlock(&c->aa.lock);
	if (res != 0 && res != -EPERM && res != -ENOSPC)
		return res;
	return rest > 0 ? -ERANGE : res;
}

static void
match_src(const struct ptl_match *mt, bool write, struct ptl_aa_src *s_p)
{
	memset(s_p, 0, sizeof(*s_p));
	s_p->nid = mt->initiator.nid;
	s_p->pid = mt->initiator.pid;
	s_p->msg_id = mt->msg_id;
	s_p->hdr_data = write ? mt->hdr_data : 0;
}

int
ptl_match_access_remote(const struct ptl_match *mt, uint64_t off, void *buf,
			uint64_t len, bool write)
{
	struct ptl_aa_src s;

	if (!aa_on(mt->c) ||
	    (mt->iov == NULL && !aa_hits(mt->c, mt->start + off, len)))
		return ptl_match_access(mt, off, buf, len, write);
	match_src(mt, write, &s);
	/* a put packet can come again, a reply packet be read again */
	s.may_block = true;
	return match_walk(mt, off, buf, len, write, &s);
}

/* aa.lock held: the check (check_rule) of [addr, addr + len): records
 * for refused and atomic pieces. @return 0 or -EPERM */
static int
check_range_locked(struct ptl_client *c, uint64_t addr, uint64_t len,
		   bool write, const struct ptl_aa_src *s, uint64_t msg_off)
{
	int res = 0;

	while (len > 0) {
		uint64_t end, n, page_end;
		struct ptl_aa_verdict v;
		uint32_t log, bits;

		bits = ptl_aa_table_find(&c->aa.t, addr, &end, &log);
		if (bits == PTL_AA_DEFAULT && log == SPINNIC_HANDLE_NONE) {
			n = end - addr < len ? end - addr : len;
			if (write) /* an atomic; a get's reply looks up */
				iotlb_touch(c, addr, n);
			goto next;
		}
		page_end = (addr | (SPINNIC_AA_PAGE - 1)) + 1;
		n = page_end - addr < len ? page_end - addr : len;
		if (write)
			iotlb_touch(c, addr, n);
		check_rule(bits, write, s, &v);
		if (v.kind != 0)
			aa_record(c, log, &v, bits, addr, NULL, n, s, msg_off);
		if (v.fail) {
			PTL_STAT(c->nic, aa_blocked);
			res = -EPERM;
		}
next:
		addr += n;
		len -= n;
		msg_off += n;
	}
	return res;
}

int
ptl_match_check_remote(const struct ptl_match *mt, uint64_t len, bool write,
		       bool fetch)
{
	struct aa_piece p[PTL_MAX_IOVECS];
	struct ptl_client *c = mt->c;
	struct aa_fit f = { .used = 0 };
	struct ptl_aa_src s;
	uint64_t rest;
	uint32_t k, i;
	int res = 0;

	if (!aa_on(c) || (mt->iov == NULL && !aa_hits(c, mt->start, len)))
		return 0;
	match_src(mt, write, &s);
	s.fetch = fetch;
	k = match_pieces(mt, 0, len, p, PTL_MAX_IOVECS, &rest);
	for (i = 0; i < k; i++)
		if (p[i].addr + p[i].len < p[i].addr)
			return -EFAULT;
	ptl_lock(&c->aa.lock);
	bl_drain_all(c);
	/* the records before anything happens: an atomic or a get request
	 * can come again (not acknowledged), so it waits for room as a put
	 * packet does */
	for (i = 0; i < k; i++)
		fit_add(c, &f, p[i].addr, p[i].len, write, check_rule, &s);
	if (!fit_ok(c, &f)) {
		ptl_unlock(&c->aa.lock);
		if (write)
			PTL_STAT(c->nic, aa_atomic_waits);
		else
			PTL_STAT(c->nic, aa_get_waits);
		return -EAGAIN;
	}
	for (i = 0; i < k; i++)
		if (check_range_locked(c, p[i].addr, p[i].len, write, &s,
				       p[i].msg_off) != 0)
			res = -EPERM;
	ptl_unlock(&c->aa.lock);
	return res;
}

/* ---- active flush ---- */

bool
ptl_match_flush_mark(const struct ptl_match *mt, uint64_t len,
		     uint32_t *log_p, uint64_t *mark_p)
{
	struct ptl_client *c = mt->c;
	uint64_t addr = mt->start, end;
	struct ptl_aa_log *lg;
	uint32_t bits, log;
	bool found = false;

	/* flushing pages are looked for in contiguous MEs only */
	if (mt->iov != NULL || addr + len < addr || !aa_hits(c, addr, len))
		return false;
	ptl_lock(&c->aa.lock);
	while (len > 0 && !found) {
		uint64_t n;

		bits = ptl_aa_table_find(&c->aa.t, addr, &end, &log);
		n = end - addr < len ? end - addr : len;
		if ((bits & SPINNIC_AA_FLUSH) && (lg = log_get(c, log)) != NULL) {
			*log_p = log;
			/* held handler records come before: their number,
			 * until the last of them is in the ring */
			*mark_p = lg->bl_head != NULL ? AA_MARK_HELD | lg->bl_in :
							lg->prod;
			found = true;
		}
		addr += n;
		len -= n;
	}
	ptl_unlock(&c->aa.lock);
	return found;
}

bool
ptl_aa_flush_done(struct ptl_client *c, uint32_t log, uint64_t *mark_p)
{
	struct ptl_aa_log *lg;
	bool done = true;
	uint64_t cons, mark;

	ptl_lock(&c->aa.lock);
	bl_drain_all(c);
	lg = log_get(c, log);
	if (lg != NULL && (*mark_p & AA_MARK_HELD)) {
		if (lg->bl_out < (*mark_p & ~AA_MARK_HELD) && !lg->err) {
			ptl_unlock(&c->aa.lock);
			return false;
		}
		/* in the ring now, before prod (maybe with later ones) */
		*mark_p = lg->prod;
	}
	mark = *mark_p;
	if (lg != NULL && !lg->err) {
		/* the client's word, read once: beyond prod it is corrupt
		 * (the next record stops the log), answer now */
		cons = __atomic_load_n(&lg->ring->cons, __ATOMIC_ACQUIRE);
		done = cons >= mark || cons > lg->prod;
	}
	ptl_unlock(&c->aa.lock);
	if (done)
		PTL_STAT(c->nic, aa_flushes);
	return done;
}

/* ---- the NIC's own service: timed wakes, access handlers ---- */

/*
 * Consume up to @p budget records of log @p i on the NIC: the records
 * between the NIC's consumer position and prod were committed by the
 * NIC before prod moved, but the ring lies in the client's memory, so
 * each header is copied out and checked (seq, kind, length, inside the
 * ring) and the data copied to NIC memory before the handler sees it; a
 * ring the client scribbled on stops the log as a corrupt cons does.
 */
static unsigned
log_consume(struct ptl_client *c, uint32_t i, ptl_aa_access_fn fn,
	    void *arg, unsigned budget)
{
	static __thread uint8_t data[SPINNIC_AA_PAGE];
	struct ptl_aa_log *lg = &c->aa.logs[i];
	struct spinnic_aa_ring *ring;
	uint64_t prod, ccons, size, wa, wl;
	uint32_t gen, ctx, cseq, next;
	unsigned n = 0;
	bool bad = false;

	ptl_lock(&c->aa.lock);
	if (!lg->used || lg->ctx == SPINNIC_HANDLE_NONE || lg->err ||
	    lg->cbusy || lg->ccons == lg->prod) {
		ptl_unlock(&c->aa.lock);
		return 0;
	}
	ring = lg->ring;
	prod = lg->prod;
	ccons = lg->ccons;
	cseq = lg->cseq;
	size = lg->size;
	gen = lg->gen;
	ctx = lg->ctx;
	wa = lg->win_addr;
	wl = lg->win_len;
	lg->cbusy = true;
	ptl_unlock(&c->aa.lock);

	while (ccons < prod && n < budget) {
		const uint8_t *base = (const uint8_t *)(ring + 1);
		uint64_t off = ccons & (size - 1), bytes;
		struct spinnic_aa_rec h;

		memcpy(&h, base + off, sizeof(h));
		next = cseq + 1 == 0 ? 1 : cseq + 1;
		bytes = sizeof(h) + (((uint64_t)h.len + 63) & ~63ull);
		if (h.seq != next || bytes > size - off ||
		    (h.kind == SPINNIC_AA_PAD ? off + bytes != size :
		     (h.kind < SPINNIC_AA_PUT_META ||
		      h.kind > SPINNIC_AA_ATOMIC || h.len > sizeof(data)))) {
			bad = true;
			break;
		}
		if (h.kind != SPINNIC_AA_PAD) {
			memcpy(data, base + off + sizeof(h), h.len);
			fn(arg, c, ctx, wa, wl, &h, data);
			PTL_STAT(c->nic, aa_handled);
			n++;
		}
		cseq = next;
		ccons += bytes;
		/* the space is free and a flush may answer */
		__atomic_store_n(&ring->cons, ccons, __ATOMIC_RELEASE);
	}

	ptl_lock(&c->aa.lock);
	if (lg->used && lg->gen == gen) {
		lg->ccons = ccons;
		lg->cseq = cseq;
		lg->cbusy = false;
		if (bad && !lg->err) {
			lg->err = true;
			__atomic_store_n(&ring->err, 1u, __ATOMIC_RELEASE);
			PTL_STAT(c->nic, aa_log_err);
			PTL_LOG(NOTICE, "client pid %u: access log %#x stopped: "
				"its ring was overwritten", c->pid,
				log_handle(lg, i));
		}
	}
	ptl_unlock(&c->aa.lock);
	return n;
}

/* aa.lock held: wake the sleepers of a log whose notify_us passed */
static unsigned
log_timer(struct ptl_client *c, struct ptl_aa_log *lg, uint64_t now)
{
	if (lg->notify_ns == 0 || lg->since == 0 ||
	    now - lg->first_ns < lg->notify_ns)
		return 0;
	if (__atomic_load_n(&lg->ring->waiters, __ATOMIC_RELAXED) == 0)
		return 0;
	log_notify(c, lg);
	PTL_STAT(c->nic, aa_timer_wakes);
	return 1;
}

unsigned
ptl_aa_poll(struct ptl_nic *nic, ptl_aa_access_fn fn, void *arg,
	    unsigned budget)
{
	uint32_t pids[SPINNIC_AA_WATCH_MAX];
	struct ptl_client *cls[SPINNIC_AA_WATCH_MAX];
	uint32_t nw, k, i;
	unsigned n = 0;
	uint64_t now;

	if (__atomic_load_n(&nic->aa_wn, __ATOMIC_ACQUIRE) == 0)
		return 0;
	/* every HPU may poll at once: a log is consumed by one of them at
	 * a time (cbusy), in order; other logs go on meanwhile */
	ptl_lock(&nic->aa_wlock);
	nw = nic->aa_wn;
	memcpy(pids, nic->aa_wpid, nw * sizeof(pids[0]));
	memcpy(cls, nic->aa_wcl, nw * sizeof(cls[0]));
	ptl_unlock(&nic->aa_wlock);
	now = aa_now_ns();
	for (k = 0; k < nw && n < budget; k++) {
		struct ptl_client *c = ptl_client_lookup(nic, pids[k]);

		/* the pid's client now, and still the one watched */
		if (c == NULL || c != cls[k] || !ptl_client_is_alive(c)) {
			ptl_client_put(c);
			continue;
		}
		for (i = 0; i < SPINNIC_AA_LOGS_MAX && n < budget; i++) {
			struct ptl_aa_log *lg = &c->aa.logs[i];

			ptl_lock(&c->aa.lock);
			if (lg->used)
				n += log_timer(c, lg, now);
			ptl_unlock(&c->aa.lock);
			if (fn != NULL)
				n += log_consume(c, i, fn, arg, budget - n);
			/* held handler records, where the consumer made room */
			if (__atomic_load_n(&c->aa.bl_bytes,
					    __ATOMIC_RELAXED) != 0) {
				ptl_lock(&c->aa.lock);
				if (lg->used)
					bl_drain(c, i);
				ptl_unlock(&c->aa.lock);
			}
		}
		ptl_client_put(c);
	}
	return n;
}
