/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench dht (issue #17, paper 004 Fig. 1/6c, Listings 2 and 3):
 * distributed-hashtable inserts per second through a real `spinnic
 * --virtual 2 --idle-sleep-us 0`, one client inserting into its own
 * volume through the NIC, at --collisions percent of inserts that hit an
 * occupied slot:
 *   rma  Listing 2 with Portals atomics, each operation waited for: CAS
 *        of the element into its slot (PtlSwap CSWAP); on a collision a
 *        fetch-add of next_free_cell (PtlFetchAtomic), a put of the
 *        element to the free cell (acked), a swap of last_ptr[pos]
 *        (PtlSwap), a CAS of the slot's ptr, and when that fails a put
 *        of the cell's index into the previous cell's ptr (acked)
 *   aa   Listing 3: one put of the element to its slot, a page marked
 *        R|WLD (redirected into the access log); the client drains its
 *        log every --batch puts and runs the same insert locally; done
 *        when every insert is processed
 *   aa_futex  the same puts; a second thread of the client sleeps on the
 *        log (spin_aa_log_wait: a futex wake every 10 records, as the
 *        paper's interrupt scheme, or 200 µs after the first) and runs
 *        the insert
 *   aa_handler  the same puts to a log bound to an "aa_dht" context: the
 *        NIC's access handler inserts with 8-byte host atomics (its own
 *        layout, active_access.h); the client waits for the
 *        handler's processed count
 *   am   active messages: a put of the key per insert to an ME carrying
 *        an "aa_dht" context, the slot as header data: its payload
 *        handler inserts with the same host atomics (no marks, no log)
 * Every volume is checked after every sample: every element once.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "bench.h"
#include "active_access.h"

#define PG SPIN_AA_PAGE
#define NSLOT 8192u
#define MAX_INS 8192u
#define MATCH 0xd47ull
#define WAIT_MS 10000

struct elem {
	uint64_t elem;
	uint64_t ptr;      /* 1 + cell index of the next element, 0: none */
};

/* The volume, one ME: slots, then overflow cells, next_free, last_ptr. */
struct vol {
	struct elem slot[NSLOT];
	struct elem cell[MAX_INS];
	uint64_t next_free;
	uint64_t last_ptr[NSLOT];  /* 1 + last cell of the slot's chain */
};

/* The volume of the aa_dht handler (struct aa_dht_args), one ME
 * of its own: keys, chain heads, cells {key, next}, counters; the table
 * page-aligned for the marks. */
struct hvol {
	uint64_t table[NSLOT];
	uint64_t head[NSLOT];
	uint64_t heap[MAX_INS][2];
	uint64_t next_free, overflow, processed;
};

#define NROWS 5             /* rma, aa, aa_futex, aa_handler, am */
enum { ROW_RMA, ROW_AA, ROW_FUTEX, ROW_HANDLER, ROW_AM };

static const long coll_default[] = { 0, 5, 25, 50 };

static struct {
	long inserts;
	long rounds;
	long samples;
	long batch;
	long coll[8];
	int ncoll;
	const char *spinnic;
	const char *handlers;
} dcfg = { 2000, 2, 2, 64, { 0 }, 0, NULL, NULL };

static const struct bench_cmd_opt dht_opts[] = {
	{ "inserts", 1, "inserts per sample (default 2000, at most 8192)" },
	{ "rounds", 1, "rounds, one spinnic each (default 2)" },
	{ "samples", 1, "samples per round and row (default 2)" },
	{ "batch", 1, "aa: puts between two drains of the log (default 64)" },
	{ "collisions", 1, "percentages, comma-separated (default 0,5,25,50)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "handlers", 1, "the Active Access plugin " BENCH_AA_PLUGIN
	  " (default: the build tree's, else the installed one)" },
	{ NULL, 0, NULL },
};

static int
dht_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "inserts", &dcfg.inserts, 1, MAX_INS },
		{ "rounds", &dcfg.rounds, 1, 100 },
		{ "samples", &dcfg.samples, 1, 1000 },
		{ "batch", &dcfg.batch, 1, 4096 },
	};

	if (strcmp(name, "spinnic") == 0) {
		dcfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "handlers") == 0) {
		dcfg.handlers = arg;
		return 0;
	}
	if (strcmp(name, "collisions") == 0) {
		char *end;
		const char *p = arg;

		dcfg.ncoll = 0;
		while (*p != '\0' && dcfg.ncoll < 8) {
			long v = strtol(p, &end, 10);

			if (end == p || v < 0 || v > 100 ||
			    (*end != ',' && *end != '\0')) {
				bench_err("bad --collisions '%s'", arg);
				return -EINVAL;
			}
			dcfg.coll[dcfg.ncoll++] = v;
			p = *end == ',' ? end + 1 : end;
		}
		return dcfg.ncoll > 0 ? 0 : -EINVAL;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- the client ------------------------------------------------------------ */

struct dht {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	spin_handle_aalog_t log;
	spin_handle_aalog_t flog;  /* aa_futex: the thread's log */
	spin_handle_aalog_t hlog;  /* aa_handler: consumed on the NIC */
	spin_handle_ctx_t hctx;
	struct hvol *hv;
	struct hvol *av;        /* am: the active messages' volume */
	struct vol *v;
	uint64_t *loc;          /* operands and results; from 8: the keys
				   the aa puts send */
	uint32_t pos[MAX_INS];  /* each insert's slot */
	uint64_t processed;     /* atomic (aa_futex: the thread's) */
	bool stop;              /* aa_futex: the thread leaves */
};

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("dht client: %s: %s", #call, spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

#define OFF(field) ((ptl_size_t)((uint8_t *)&(field) - (uint8_t *)d->v))

static int
dht_open(struct dht *d)
{
	struct spin_aa_log_desc ld = { .size = 1u << 20 };
	ptl_ni_limits_t lim;
	ptl_handle_me_t h;
	uint8_t *raw;
	ptl_md_t md;
	ptl_me_t me;

	memset(d, 0, sizeof(*d));
	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim, &d->ni));
	CHECK_PTL(PtlGetPhysId(d->ni, &d->self));
	CHECK_PTL(PtlEQAlloc(d->ni, 256, &d->eq));
	CHECK_PTL(PtlPTAlloc(d->ni, 0, d->eq, PTL_PT_ANY, &d->pt));
	CHECK_PTL(spin_aa_log_create(d->ni, &ld, &d->log));
	raw = spin_host_alloc(sizeof(struct vol) + PG);
	d->loc = spin_host_alloc((MAX_INS + 8) * 8);
	if (raw == NULL || d->loc == NULL) {
		bench_err("dht client: out of region memory");
		return -ENOMEM;
	}
	d->v = (struct vol *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(&me, 0, sizeof(me));
	me.start = d->v;
	me.length = sizeof(struct vol);
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
		     PTL_ME_EVENT_SUCCESS_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_UNLINK_DISABLE;
	CHECK_PTL(PtlMEAppend(d->ni, d->pt, &me, PTL_PRIORITY_LIST, NULL, &h));
	/* aa_futex: a log with the paper's interrupt every 10 records */
	ld.notify_every = 10;
	ld.notify_us = 200;
	CHECK_PTL(spin_aa_log_create(d->ni, &ld, &d->flog));
	/* aa_handler: the aa_dht family over its own volume */
	raw = spin_host_alloc(sizeof(struct hvol) + PG);
	if (raw == NULL) {
		bench_err("dht client: out of region memory");
		return -ENOMEM;
	}
	d->hv = (struct hvol *)(((uintptr_t)raw + PG - 1) &
				~(uintptr_t)(PG - 1));
	{
		struct aa_dht_args da = {
			.version = AA_DHT_ARGS_VERSION, .nslot = NSLOT,
			.table_off = offsetof(struct hvol, table),
			.head_off = offsetof(struct hvol, head),
			.nheap = MAX_INS,
			.heap_off = offsetof(struct hvol, heap),
			.next_free_off = offsetof(struct hvol, next_free),
			.overflow_off = offsetof(struct hvol, overflow),
			.processed_off = offsetof(struct hvol, processed),
		};
		struct spin_ctx_desc cd = { .family = "aa_dht", .args = &da,
					    .args_len = sizeof(da) };

		CHECK_PTL(spin_ctx_install(d->ni, &cd, &d->hctx));
	}
	ld.notify_every = 0;
	ld.notify_us = 0;
	ld.flags = SPIN_AA_LOG_HANDLER;
	ld.ctx = d->hctx;
	ld.win_addr = d->hv;
	ld.win_len = sizeof(struct hvol);
	CHECK_PTL(spin_aa_log_create(d->ni, &ld, &d->hlog));
	me.start = d->hv;
	me.length = sizeof(struct hvol);
	me.match_bits = MATCH + 1;
	CHECK_PTL(PtlMEAppend(d->ni, d->pt, &me, PTL_PRIORITY_LIST, NULL, &h));
	/* am: the same family's payload handler on an ME over another volume */
	raw = spin_host_alloc(sizeof(struct hvol) + PG);
	if (raw == NULL) {
		bench_err("dht client: out of region memory");
		return -ENOMEM;
	}
	d->av = (struct hvol *)(((uintptr_t)raw + PG - 1) &
				~(uintptr_t)(PG - 1));
	me.start = d->av;
	me.match_bits = MATCH + 2;
	CHECK_PTL(spin_me_append(d->ni, d->pt, &me, PTL_PRIORITY_LIST, d->hctx,
				 NULL, &h));
	memset(&md, 0, sizeof(md));
	md.start = d->loc;
	md.length = (MAX_INS + 8) * 8;
	md.eq_handle = d->eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	CHECK_PTL(PtlMDBind(d->ni, &md, &d->md));
	return 0;
}

/* The slots of a sample: pct percent of the inserts hit a used slot. */
static void
positions(struct dht *d, long pct, unsigned seed)
{
	uint32_t fresh = 0;

	srand(seed);
	for (long i = 0; i < dcfg.inserts; i++)
		d->pos[i] = fresh > 0 && rand() % 100 < pct ?
			d->pos[(unsigned)rand() % (unsigned)i] : fresh++;
}

/* Wait for the next event of @p type; @return 0, -1 */
static int
wait_ev(struct dht *d, ptl_event_kind_t type)
{
	ptl_event_t ev;
	unsigned which;

	do {
		if (PtlEQPoll(&d->eq, 1, WAIT_MS, &ev, &which) != PTL_OK) {
			bench_err("dht client: no event %d", type);
			return -1;
		}
	} while (ev.type != type);
	if (ev.ni_fail_type != PTL_NI_OK) {
		bench_err("dht client: event %d failed: %d", type,
			  ev.ni_fail_type);
		return -1;
	}
	return 0;
}

/* loc[0] operand, loc[1] compare value, loc[2] result */
static int
rma_swap(struct dht *d, ptl_size_t off, uint64_t val, uint64_t cmp,
	 ptl_op_t op, uint64_t *old_p)
{
	d->loc[0] = val;
	d->loc[1] = cmp;
	CHECK_PTL(PtlSwap(d->md, 16, d->md, 0, 8, d->self, d->pt, MATCH, off,
			  NULL, 0, &d->loc[1], op, PTL_UINT64_T));
	if (wait_ev(d, PTL_EVENT_REPLY) < 0)
		return -1;
	*old_p = d->loc[2];
	return 0;
}

static int
rma_put(struct dht *d, ptl_size_t off, uint64_t val)
{
	d->loc[0] = val;
	CHECK_PTL(PtlPut(d->md, 0, 8, PTL_ACK_REQ, d->self, d->pt, MATCH, off,
			 NULL, 0));
	return wait_ev(d, PTL_EVENT_ACK);
}

/* Listing 2. */
static int
rma_insert(struct dht *d, uint64_t key, uint32_t pos)
{
	uint64_t old, cell, prev;

	if (rma_swap(d, OFF(d->v->slot[pos].elem), key, 0, PTL_CSWAP,
		     &old) < 0)
		return -1;
	if (old == 0)
		return 0;
	d->loc[0] = 1;
	CHECK_PTL(PtlFetchAtomic(d->md, 16, d->md, 0, 8, d->self, d->pt,
				 MATCH, OFF(d->v->next_free), NULL, 0,
				 PTL_SUM, PTL_UINT64_T));
	if (wait_ev(d, PTL_EVENT_REPLY) < 0)
		return -1;
	cell = d->loc[2];
	if (cell >= MAX_INS) {
		bench_err("dht client: overflow heap full");
		return -1;
	}
	if (rma_put(d, OFF(d->v->cell[cell].elem), key) < 0 ||
	    rma_swap(d, OFF(d->v->last_ptr[pos]), cell + 1, 0, PTL_SWAP,
		     &prev) < 0 ||
	    rma_swap(d, OFF(d->v->slot[pos].ptr), cell + 1, 0, PTL_CSWAP,
		     &old) < 0)
		return -1;
	if (old != 0 && prev != 0)
		return rma_put(d, OFF(d->v->cell[prev - 1].ptr), cell + 1);
	return 0;
}

/* Listing 3's local_insert, on the host. */
static void
local_insert(struct vol *v, uint64_t key, uint32_t pos)
{
	uint64_t cell, prev;

	if (v->slot[pos].elem == 0) {
		v->slot[pos].elem = key;
		return;
	}
	cell = v->next_free++;
	v->cell[cell].elem = key;
	prev = v->last_ptr[pos];
	v->last_ptr[pos] = cell + 1;
	if (v->slot[pos].ptr == 0)
		v->slot[pos].ptr = cell + 1;
	else
		v->cell[prev - 1].ptr = cell + 1;
}

static int
on_rec(void *arg, const struct spin_aa_rec *r)
{
	struct dht *d = arg;
	uint64_t off = (uint64_t)((uint8_t *)r->addr - (uint8_t *)d->v), key;

	if (r->kind != SPIN_AA_PUT_DATA || r->len != 8 ||
	    off % sizeof(struct elem) != 0 || off >= sizeof(d->v->slot) ||
	    d->v->next_free >= MAX_INS)
		return 0;
	memcpy(&key, r->data, 8);
	local_insert(d->v, key, (uint32_t)(off / sizeof(struct elem)));
	__atomic_fetch_add(&d->processed, 1, __ATOMIC_RELEASE);
	return 0;
}

static int
aa_drain_log(struct dht *d, spin_handle_aalog_t log)
{
	unsigned n;
	int rc;

	while ((rc = spin_aa_log_poll(log, on_rec, d, 256, &n)) == PTL_OK)
		;
	return rc == PTL_EQ_EMPTY ? 0 : -1;
}

static int
aa_drain(struct dht *d)
{
	return aa_drain_log(d, d->log);
}

static int vol_check(const struct dht *d);

/* aa_futex: the consumer thread, asleep on the log between wakes */
static void *
futex_thread(void *arg)
{
	struct dht *d = arg;

	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		if (aa_drain_log(d, d->flog) < 0)
			break;
		spin_aa_log_wait(d->flog, 20);
	}
	return NULL;
}

/* aa_handler, am: every key once in the handler's volume */
static int
hvol_check(const struct hvol *v)
{
	uint64_t n = 0;

	for (uint32_t s = 0; s < NSLOT; s++) {
		uint64_t c;

		n += v->table[s] != 0;
		for (c = v->head[s]; c != 0 && c <= MAX_INS && n <= MAX_INS;
		     c = v->heap[c - 1][1])
			n++;
	}
	if (n != (uint64_t)dcfg.inserts || v->overflow != 0) {
		bench_err("dht client: handler volume: %" PRIu64 " elements, "
			  "want %ld", n, dcfg.inserts);
		return -1;
	}
	return 0;
}

static double
sample_handler(struct dht *d, long pct, unsigned seed)
{
	uint64_t *proc = &d->hv->processed;
	double t0, t;
	long i;

	positions(d, pct, seed);
	memset(d->hv, 0, sizeof(*d->hv));
	if (spin_aa_assoc(d->ni, d->hv->table, sizeof(d->hv->table),
			  SPIN_AA_R | SPIN_AA_WLD, d->hlog) != PTL_OK)
		return -1;
	t0 = bench_now();
	for (i = 0; i < dcfg.inserts; i++) {
		d->loc[8 + i] = (uint64_t)i + 1;
		while (PtlPut(d->md, (ptl_size_t)(8 + i) * 8, 8,
			      PTL_NO_ACK_REQ, d->self, d->pt, MATCH + 1,
			      d->pos[i] * 8, NULL, 0) == PTL_NO_SPACE)
			sched_yield();
	}
	while (__atomic_load_n(proc, __ATOMIC_ACQUIRE) <
	       (uint64_t)dcfg.inserts) {
		if (bench_now() - t0 > WAIT_MS / 1000.0) {
			bench_err("dht client: handler processed %" PRIu64
				  " of %ld", *proc, dcfg.inserts);
			return -1;
		}
		sched_yield();
	}
	t = bench_now() - t0;
	if (spin_aa_assoc(d->ni, d->hv->table, sizeof(d->hv->table),
			  SPIN_AA_W | SPIN_AA_R, SPIN_AA_LOG_NONE) != PTL_OK)
		return -1;
	return hvol_check(d->hv) < 0 ? -1 : (double)dcfg.inserts / t;
}

/* am: one active message per insert; done when the handler counted all */
static double
sample_am(struct dht *d, long pct, unsigned seed)
{
	uint64_t *proc = &d->av->processed;
	double t0, t;
	long i;

	positions(d, pct, seed);
	memset(d->av, 0, sizeof(*d->av));
	t0 = bench_now();
	for (i = 0; i < dcfg.inserts; i++) {
		d->loc[8 + i] = (uint64_t)i + 1;
		while (PtlPut(d->md, (ptl_size_t)(8 + i) * 8, 8,
			      PTL_NO_ACK_REQ, d->self, d->pt, MATCH + 2, 0,
			      NULL, d->pos[i]) == PTL_NO_SPACE)
			sched_yield();
	}
	while (__atomic_load_n(proc, __ATOMIC_ACQUIRE) <
	       (uint64_t)dcfg.inserts) {
		if (bench_now() - t0 > WAIT_MS / 1000.0) {
			bench_err("dht client: active messages processed %"
				  PRIu64 " of %ld", *proc, dcfg.inserts);
			return -1;
		}
		sched_yield();
	}
	t = bench_now() - t0;
	return hvol_check(d->av) < 0 ? -1 : (double)dcfg.inserts / t;
}

static double
sample_futex(struct dht *d, long pct, unsigned seed)
{
	pthread_t th;
	double t0, t;
	long i;

	positions(d, pct, seed);
	memset(d->v, 0, sizeof(*d->v));
	if (spin_aa_assoc(d->ni, d->v->slot, sizeof(d->v->slot),
			  SPIN_AA_R | SPIN_AA_WLD, d->flog) != PTL_OK)
		return -1;
	__atomic_store_n(&d->processed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&d->stop, false, __ATOMIC_RELEASE);
	if (pthread_create(&th, NULL, futex_thread, d) != 0)
		return -1;
	t0 = bench_now();
	for (i = 0; i < dcfg.inserts; i++) {
		d->loc[8 + i] = (uint64_t)i + 1;
		while (PtlPut(d->md, (ptl_size_t)(8 + i) * 8, 8,
			      PTL_NO_ACK_REQ, d->self, d->pt, MATCH,
			      OFF(d->v->slot[d->pos[i]].elem), NULL, 0) ==
		       PTL_NO_SPACE)
			sched_yield();
	}
	while (__atomic_load_n(&d->processed, __ATOMIC_ACQUIRE) <
	       (uint64_t)dcfg.inserts && bench_now() - t0 <= WAIT_MS / 1000.0)
		sched_yield();
	t = bench_now() - t0;
	__atomic_store_n(&d->stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (d->processed < (uint64_t)dcfg.inserts) {
		bench_err("dht client: futex thread processed %" PRIu64
			  " of %ld", d->processed, dcfg.inserts);
		return -1;
	}
	if (spin_aa_assoc(d->ni, d->v->slot, sizeof(d->v->slot),
			  SPIN_AA_W | SPIN_AA_R, SPIN_AA_LOG_NONE) != PTL_OK)
		return -1;
	return vol_check(d) < 0 ? -1 : (double)dcfg.inserts / t;
}

/* Every key once: slots and chains hold dcfg.inserts elements. */
static int
vol_check(const struct dht *d)
{
	uint64_t n = 0;

	for (uint32_t s = 0; s < NSLOT; s++) {
		uint64_t c;

		if (d->v->slot[s].elem == 0)
			continue;
		n++;
		for (c = d->v->slot[s].ptr; c != 0 && n <= MAX_INS;
		     c = d->v->cell[c - 1].ptr)
			n++;
	}
	if (n != (uint64_t)dcfg.inserts) {
		bench_err("dht client: %" PRIu64 " elements, want %ld", n,
			  dcfg.inserts);
		return -1;
	}
	return 0;
}

/* One sample; @return inserts/s, < 0 */
static double
sample(struct dht *d, bool aa, long pct, unsigned seed)
{
	double t0, t;
	long i;

	positions(d, pct, seed);
	memset(d->v, 0, sizeof(*d->v));
	if (aa_drain(d) < 0)
		return -1;
	if (spin_aa_assoc(d->ni, d->v->slot, sizeof(d->v->slot),
			  aa ? SPIN_AA_R | SPIN_AA_WLD : SPIN_AA_W | SPIN_AA_R,
			  aa ? d->log : SPIN_AA_LOG_NONE) != PTL_OK)
		return -1;
	d->processed = 0;
	t0 = bench_now();
	for (i = 0; i < dcfg.inserts; i++) {
		uint64_t key = (uint64_t)i + 1;

		if (!aa) {
			if (rma_insert(d, key, d->pos[i]) < 0)
				return -1;
			continue;
		}
		d->loc[8 + i] = key;
		while (PtlPut(d->md, (ptl_size_t)(8 + i) * 8, 8,
			      PTL_NO_ACK_REQ, d->self, d->pt, MATCH,
			      OFF(d->v->slot[d->pos[i]].elem), NULL, 0) ==
		       PTL_NO_SPACE)
			if (aa_drain(d) < 0)
				return -1;
		if (i % dcfg.batch == dcfg.batch - 1 && aa_drain(d) < 0)
			return -1;
	}
	while (aa && d->processed < (uint64_t)dcfg.inserts) {
		if (bench_now() - t0 > WAIT_MS / 1000.0) {
			bench_err("dht client: %" PRIu64 " of %ld processed",
				  d->processed, dcfg.inserts);
			return -1;
		}
		if (aa_drain(d) < 0)
			return -1;
	}
	t = bench_now() - t0;
	return vol_check(d) < 0 ? -1 : (double)dcfg.inserts / t;
}

/* out[((s * ncoll) + c) * NROWS + ROW_*]; the rows interleaved */
static int
client_child(double *out, void *arg)
{
	long round = *(long *)arg;
	static struct dht d;

	if (dht_open(&d) < 0)
		return -EIO;
	for (long s = 0; s < dcfg.samples; s++)
		for (int c = 0; c < dcfg.ncoll; c++)
			for (int k = 0; k < NROWS; k++) {
				int a = (int)((k + s + round) % NROWS);
				unsigned seed = (unsigned)(round * 1000 +
							   s * 10 + c + 1);
				double r = a == ROW_FUTEX ?
					sample_futex(&d, dcfg.coll[c], seed) :
					a == ROW_AM ?
					sample_am(&d, dcfg.coll[c], seed) :
					a == ROW_HANDLER ?
					sample_handler(&d, dcfg.coll[c], seed) :
					sample(&d, a == ROW_AA, dcfg.coll[c],
					       seed);

				if (r <= 0)
					return -EIO;
				out[(s * dcfg.ncoll + c) * NROWS + a] = r;
			}
	PtlNIFini(d.ni);
	PtlFini();
	return 0;
}

/* ---- the subcommand ---------------------------------------------------------- */

static int
dht_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "collisions", BENCH_COL_INT, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "rma_kips", BENCH_COL_NUM, 1 },
		{ "aa_kips", BENCH_COL_NUM, 1 },
		{ "aa_futex_kips", BENCH_COL_NUM, 1 },
		{ "aa_handler_kips", BENCH_COL_NUM, 1 },
		{ "am_kips", BENCH_COL_NUM, 1 },
		{ "aa_over_rma", BENCH_COL_NUM, 2 },
		{ "futex_over_rma", BENCH_COL_NUM, 2 },
		{ "handler_over_rma", BENCH_COL_NUM, 2 },
		{ "aa_over_am", BENCH_COL_NUM, 2 },
	};
	long per = dcfg.samples * dcfg.rounds;
	size_t n;
	double *all = NULL, *buf = NULL;
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_table *tab = NULL;
	char sock[400], plugin[PATH_MAX];
	const char *const extra[] = { "--handlers", plugin, NULL };
	int rc = 0;

	if (dcfg.ncoll == 0) {
		dcfg.ncoll = 4;
		memcpy(dcfg.coll, coll_default, sizeof(coll_default));
	}
	n = (size_t)dcfg.samples * (size_t)dcfg.ncoll * NROWS;
	all = calloc((size_t)per * (size_t)dcfg.ncoll * NROWS, sizeof(double));
	buf = calloc(n, sizeof(double));
	if (all == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* the aa_handler and am rows: the aa_dht family, a plugin */
	rc = bench_plugin_path(dcfg.handlers, BENCH_AA_PLUGIN, plugin,
			       sizeof(plugin));
	if (rc < 0)
		goto out;
	bench_spinnic_signals();
	for (long r = 0; r < dcfg.rounds; r++) {
		rc = bench_spinnic_start(&nic, dcfg.spinnic, extra);
		if (rc < 0)
			goto out;
		(void)bench_clients_off_lcore();
		snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		rc = bench_in_child(client_child, &r, buf, n, "dht client");
		bench_spinnic_stop(&nic, NULL);
		if (rc < 0)
			goto out;
		for (long s = 0; s < dcfg.samples; s++)
			for (int c = 0; c < dcfg.ncoll; c++)
				for (int k = 0; k < NROWS; k++)
					all[((size_t)c * NROWS + (size_t)k) *
					    (size_t)per + (size_t)(r * dcfg.samples +
								    s)] =
						buf[(s * dcfg.ncoll + c) * NROWS +
						    k];
	}
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < dcfg.ncoll; c++) {
		double m[NROWS], rma, aa;

		for (int k = 0; k < NROWS; k++)
			m[k] = bench_median(all + ((size_t)c * NROWS +
						   (size_t)k) * (size_t)per,
					    (int)per);
		rma = m[ROW_RMA];
		aa = m[ROW_AA];

		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_int(tab, "collisions", dcfg.coll[c]);
		bench_table_set_int(tab, "samples", per);
		bench_table_set_num(tab, "rma_kips", rma / 1e3);
		bench_table_set_num(tab, "aa_kips", aa / 1e3);
		bench_table_set_num(tab, "aa_futex_kips", m[ROW_FUTEX] / 1e3);
		bench_table_set_num(tab, "aa_handler_kips",
				    m[ROW_HANDLER] / 1e3);
		bench_table_set_num(tab, "aa_over_rma", rma > 0 ? aa / rma : 0);
		bench_table_set_num(tab, "futex_over_rma",
				    rma > 0 ? m[ROW_FUTEX] / rma : 0);
		bench_table_set_num(tab, "handler_over_rma",
				    rma > 0 ? m[ROW_HANDLER] / rma : 0);
		bench_table_set_num(tab, "am_kips", m[ROW_AM] / 1e3);
		/* the best AA consumer against active messages */
		bench_table_set_num(tab, "aa_over_am", m[ROW_AM] > 0 ?
				    fmax(aa, fmax(m[ROW_FUTEX],
						  m[ROW_HANDLER])) /
				    m[ROW_AM] : 0);
	}
	rc = bench_table_emit(tab, o);
	printf("# thousand inserts/s, medians of %ld samples of %ld inserts "
	       "(%ld rounds): rma = Listing 2 with Portals atomics, every "
	       "operation waited for; aa = Listing 3, one redirected put per "
	       "insert, the log drained every %ld puts; aa_futex = the same "
	       "puts, a second thread woken every 10 records (or 200 us) "
	       "inserts; aa_handler = the same puts, the aa_dht access "
	       "handler inserts on the NIC with host atomics; am = one "
	       "active message per insert (an 8-byte put to an ME whose "
	       "aa_dht payload handler inserts); aa_over_am = the best aa "
	       "row over am; one client "
	       "inserting into its own volume through spinnic --virtual 2 "
	       "--idle-sleep-us 0; rows interleaved; every sample's volume "
	       "checked\n", per,
	       dcfg.inserts, dcfg.rounds, dcfg.batch);
out:
	bench_table_free(tab);
	free(all);
	free(buf);
	return rc;
}

const struct bench_cmd bench_dht_cmd = {
	.name = "dht",
	.summary = "Active Access: hashtable inserts/s, Portals atomics "
		   "(Listing 2) against one redirected put (Listing 3)",
	.opts = dht_opts,
	.opt = dht_opt,
	.run = dht_run,
};
