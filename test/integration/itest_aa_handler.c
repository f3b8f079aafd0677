/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access consumed on the NIC (paper 004 §3.5, the dedicated
 * hardware thread): logs created with SPIN_AA_LOG_HANDLER are drained by
 * the `access` handlers of an execution context on spinnic's HPUs, which
 * update host memory with 8-byte host atomics. Through a real spinnic
 * --virtual 2 (and over the lossy link, itest_aa_handler_lossy):
 *  - "aa_dht": two inserters put NKEY keys each to the owner's table
 *    (R|WLD, one redirected put per insert, no acks); the handler runs
 *    Listing 3's local_insert with host CAS, fetch-add and swap; each
 *    inserter's spin_aa_flush returns the handler's processed count; the
 *    owner finds exactly the keys inserted, each at its hash position;
 *  - "aa_count": puts and gets to four W|R|WL|RL pages are counted per
 *    page by the handler's host fetch-adds on counter words that the
 *    inserters hit with Portals atomics (SUM) at the same time: every
 *    count exact (the two kinds of atomics are atomic against each
 *    other), every record handled exactly once (aa_handled); the same
 *    with the counters and the flushing page in malloc'd memory (the
 *    bounce path of both kinds of atomics);
 *  - the timed wake: a log with notify_every 1000 and notify_us 2000
 *    wakes a sleeping consumer for one record well before its 1 s sleep
 *    slice would (aa_timer_wakes);
 *  - hostile arguments: a context without an access handler, another
 *    client's handle, no window; polling a NIC-consumed log is refused;
 *  - a message's handler (aa_dht as an active message) cannot reach a
 *    marked page with a host atomic: the message fails, no key lands.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "harness.h"
#include "kid.h"
#include "active_access.h"
#include "spin_handler_args.h"

#define PG SPIN_AA_PAGE
#define NSLOT 1024u             /* two pages */
#define NKEY 2000u              /* per inserter */
#define NINS 2u
#define NHEAP (NINS * NKEY)
#define NCNT 200u               /* puts, gets and atomics per inserter */
#define MATCH 0xaa4ull
#define MATCH_FD 0xaa5ull       /* flush page of the dht log */
#define MATCH_FC 0xaa6ull       /* flush page of the count log */
#define MATCH_AM 0xaa7ull       /* an aa_dht active-message ME */
#define MATCH_M 0xaa8ull        /* the malloc'd counters */
#define MATCH_MF 0xaa9ull       /* their flushing page (malloc'd too) */

/* the owner's volume, in pages from its base */
#define P_TABLE 0u              /* 2 pages: NSLOT keys, R|WLD */
#define P_FLUSH_D 2u            /* R|FLUSH: processed count of aa_dht */
#define P_HEAD 3u               /* 2 pages: NSLOT chain heads */
#define P_HEAP 5u               /* 16 pages: NHEAP cells {key, next} */
#define P_FREE 21u              /* next_free, overflow */
#define P_COUNT 22u             /* 4 pages W|R|WL|RL, counted */
#define P_CNT 26u               /* counters: 4 writes, 4 reads */
#define P_FLUSH_C 27u           /* R|FLUSH: processed count of aa_count */
#define P_TIMER 28u             /* W|R|WL, a host-consumed timed log */
#define P_COUNT2 29u            /* W|R|WL, counted into malloc'd memory */
#define NPAGES 30u

static_assert(NHEAP * 16 <= 16 * PG, "heap pages");

static uint64_t
key_of(unsigned ins, unsigned i)
{
	uint64_t x = (uint64_t)ins << 32 | (i + 1);

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x == 0 ? 1 : x;
}

static unsigned
hash_of(uint64_t key)
{
	return (unsigned)(key % NSLOT);
}

static uint64_t *
word(uint8_t *base, unsigned page, unsigned idx)
{
	return (uint64_t *)(base + (size_t)page * PG) + idx;
}

static uint64_t
load(uint8_t *base, unsigned page, unsigned idx)
{
	return __atomic_load_n(word(base, page, idx), __ATOMIC_ACQUIRE);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every key once, at its hash position, table and chains. @return
 * mismatches */
static unsigned
volume_check(uint8_t *b, uint64_t *chained_p)
{
	uint64_t *got = calloc(NHEAP, 8), *want = calloc(NHEAP, 8);
	unsigned n = 0, bad = 0, i, s, steps;

	*chained_p = 0;
	if (got == NULL || want == NULL) {
		free(got);
		free(want);
		return 1;
	}
	for (s = 0; s < NSLOT; s++) {
		uint64_t k = load(b, P_TABLE, s), c;

		if (k != 0) {
			bad += hash_of(k) != s || n == NHEAP;
			if (n < NHEAP)
				got[n++] = k;
		}
		c = load(b, P_HEAD, s);
		for (steps = 0; c != 0 && steps <= NHEAP; steps++) {
			uint64_t *cell;

			if (c > NHEAP) {
				bad++;
				break;
			}
			cell = word(b, P_HEAP, (unsigned)(c - 1) * 2);
			bad += hash_of(cell[0]) != s || n == NHEAP;
			if (n < NHEAP)
				got[n++] = cell[0];
			(*chained_p)++;
			c = cell[1];
		}
	}
	for (i = 0; i < NHEAP; i++)
		want[i] = key_of(i / NKEY, i % NKEY);
	qsort(got, n, 8, cmp_u64);
	qsort(want, NHEAP, 8, cmp_u64);
	bad += n != NHEAP || memcmp(got, want, NHEAP * 8) != 0;
	free(got);
	free(want);
	return bad;
}

static uint64_t
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (uint64_t)(t1.tv_sec - t0->tv_sec) * 1000u +
	       (uint64_t)((t1.tv_nsec - t0->tv_nsec) / 1000000);
}

static int
never(void *arg, const struct spin_aa_rec *r)
{
	(void)arg;
	(void)r;
	return 0;
}

/* ---- the owner ---------------------------------------------------------- */

static int
owner_main(struct kid *self, void *arg)
{
	struct aa_dht_args da = {
		.version = AA_DHT_ARGS_VERSION,
		.nslot = NSLOT, .table_off = P_TABLE * PG,
		.head_off = P_HEAD * PG, .nheap = NHEAP,
		.heap_off = P_HEAP * PG, .next_free_off = P_FREE * PG,
		.overflow_off = P_FREE * PG + 8,
		.processed_off = P_FLUSH_D * PG,
	};
	struct aa_count_args ca = {
		.version = AA_COUNT_ARGS_VERSION,
		.npages = 4, .counters_off = P_CNT * PG,
		.processed_off = P_FLUSH_C * PG,
	};
	struct spin_ctx_desc cd = { 0 };
	struct spin_aa_log_desc ld = { .size = 1u << 20 };
	spin_handle_ctx_t cdht, ccnt, ccsum, ccnt2;
	spin_handle_aalog_t ldht, lcnt, ltim, lbad, lm;
	ptl_handle_me_t meh[6];
	uint8_t *mraw, *mm;
	struct timespec t0;
	struct kid_ni n;
	uint64_t chained, ms, w;
	unsigned k, got;
	char line[64];
	uint8_t *raw, *b;
	ptl_me_t me;
	int rc;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc((NPAGES + 1) * PG);
	KCHECK(self, raw != NULL, "alloc");
	b = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(b, 0, NPAGES * PG);
	ca.base = (uintptr_t)b + P_COUNT * PG;

	cd.family = "aa_dht";
	cd.args = &da;
	cd.args_len = sizeof(da);
	KCHECK(self, spin_ctx_install(n.ni, &cd, &cdht) == PTL_OK, "ctx dht");
	cd.family = "aa_count";
	cd.args = &ca;
	cd.args_len = sizeof(ca);
	KCHECK(self, spin_ctx_install(n.ni, &cd, &ccnt) == PTL_OK,
	       "ctx count");

	/* hostile or wrong descriptions */
	{
		struct spin_csum_args sa = { .version = SPIN_CSUM_ARGS_VERSION };

		cd.family = "checksum";
		cd.args = &sa;
		cd.args_len = sizeof(sa);
		KCHECK(self, spin_ctx_install(n.ni, &cd, &ccsum) == PTL_OK,
		       "ctx checksum");
	}
	ld.flags = SPIN_AA_LOG_HANDLER;
	ld.ctx = ccsum;              /* no access handler */
	ld.win_addr = b;
	ld.win_len = NPAGES * PG;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &lbad) == PTL_ARG_INVALID,
	       "a family without access handler bound");
	ld.ctx = (ptl_handle_any_t)0x12345;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &lbad) == PTL_ARG_INVALID,
	       "a handle of nobody bound");
	ld.ctx = cdht;
	ld.win_len = 0;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &lbad) == PTL_ARG_INVALID,
	       "an empty window");
	ld.win_len = NPAGES * PG;
	ld.notify_us = 2000000;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &lbad) == PTL_ARG_INVALID,
	       "notify_us above one second");
	ld.notify_us = 0;
	KCHECK(self, spin_ctx_free(ccsum) == PTL_OK, "free checksum");

	/* the two NIC-consumed logs and the timed host-consumed one */
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &ldht) == PTL_OK,
	       "dht log");
	ld.ctx = ccnt;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &lcnt) == PTL_OK,
	       "count log");
	KCHECK(self, spin_aa_log_poll(ldht, never, NULL, 1, &got) ==
	       PTL_ARG_INVALID && spin_aa_log_wait(lcnt, 0) ==
	       PTL_ARG_INVALID, "a NIC-consumed log polled");
	ld = (struct spin_aa_log_desc){ .size = 1u << 16,
					 .notify_every = 1000,
					 .notify_us = 2000 };
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &ltim) == PTL_OK,
	       "timed log");

	/* malloc'd memory: counters and flushing page outside the region,
	 * reached by the handler's host atomics and by Portals atomics
	 * through the same bounce path */
	mraw = malloc(4 * PG);
	KCHECK(self, mraw != NULL, "malloc");
	mm = (uint8_t *)(((uintptr_t)mraw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(mm, 0, 2 * PG);
	KCHECK(self, !spin_host_contains(mm, 2 * PG), "malloc'd in region");
	{
		struct aa_count_args c2 = {
			.version = AA_COUNT_ARGS_VERSION,
			.base = (uintptr_t)b + P_COUNT2 * PG, .npages = 1,
			.counters_off = 0, .processed_off = PG,
		};

		cd.family = "aa_count";
		cd.args = &c2;
		cd.args_len = sizeof(c2);
		KCHECK(self, spin_ctx_install(n.ni, &cd, &ccnt2) == PTL_OK,
		       "ctx count2");
	}
	ld = (struct spin_aa_log_desc){ .size = 1u << 16,
					 .flags = SPIN_AA_LOG_HANDLER,
					 .ctx = ccnt2, .win_addr = mm,
					 .win_len = 2 * PG };
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &lm) == PTL_OK,
	       "malloc'd window log");

	KCHECK(self, spin_aa_assoc(n.ni, b + P_TABLE * PG, 2 * PG,
				   SPIN_AA_R | SPIN_AA_WLD, ldht) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_FLUSH_D * PG, PG,
			     SPIN_AA_R | SPIN_AA_FLUSH, ldht) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_COUNT * PG, 4 * PG,
			     SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL | SPIN_AA_RL,
			     lcnt) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_FLUSH_C * PG, PG,
			     SPIN_AA_R | SPIN_AA_FLUSH, lcnt) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_TIMER * PG, PG,
			     SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL, ltim) ==
	       PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_COUNT2 * PG, PG,
			     SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL, lm) ==
	       PTL_OK &&
	       spin_aa_assoc(n.ni, mm + PG, PG, SPIN_AA_R | SPIN_AA_FLUSH,
			     lm) == PTL_OK, "assoc");
	for (k = 0; k < 3; k++) {
		memset(&me, 0, sizeof(me));
		me.start = k == 0 ? b : b + (k == 1 ? P_FLUSH_D : P_FLUSH_C) *
					    PG;
		me.length = k == 0 ? NPAGES * PG : 8;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
			     PTL_ME_EVENT_SUCCESS_DISABLE;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = k == 0 ? MATCH : k == 1 ? MATCH_FD : MATCH_FC;
		KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST,
					 NULL, &meh[k]) == PTL_OK, "append");
	}
	/* an active-message ME over the same volume: its payload handler's
	 * host atomics must not reach the marked table */
	memset(&me, 0, sizeof(me));
	me.start = b;
	me.length = NPAGES * PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH_AM;
	KCHECK(self, spin_me_append(n.ni, n.pt, &me, PTL_PRIORITY_LIST, cdht,
				    NULL, &meh[3]) == PTL_OK, "append am");
	for (k = 4; k < 6; k++) {
		me.start = k == 4 ? mm : mm + PG;
		me.length = k == 4 ? 2 * PG : 8;
		me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
			     PTL_ME_EVENT_SUCCESS_DISABLE;
		me.match_bits = k == 4 ? MATCH_M : MATCH_MF;
		KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST,
					 NULL, &meh[k]) == PTL_OK,
		       "append malloc'd");
	}
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);

	/* the timed wake: one record, notify_every 1000 */
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strcmp(line, "timer") == 0, "no timer line");
	kid_say(self, "waiting");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = spin_aa_log_wait(ltim, 5000);
	ms = ms_since(&t0);
	KCHECK(self, rc == PTL_OK, "timed wait: %d after %" PRIu64 " ms", rc,
	       ms);

	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	KCHECK(self, load(b, P_FLUSH_D, 0) == NHEAP, "dht processed %" PRIu64,
	       load(b, P_FLUSH_D, 0));
	KCHECK(self, load(b, P_FREE, 1) == 0, "heap overflow %" PRIu64,
	       load(b, P_FREE, 1));
	KCHECK(self, volume_check(b, &chained) == 0,
	       "the volume differs from the keys inserted");
	KCHECK(self, chained == load(b, P_FREE, 0), "chained %" PRIu64
	       " but next_free %" PRIu64, chained, load(b, P_FREE, 0));
	KCHECK(self, load(b, P_FLUSH_C, 0) == NINS * 2 * NCNT,
	       "count processed %" PRIu64, load(b, P_FLUSH_C, 0));
	for (k = 0; k < 4; k++) {
		w = load(b, P_CNT, k);
		KCHECK(self, w == NINS * 2 * (NCNT / 4), "page %u: %" PRIu64
		       " writes counted, want %u", k, w, NINS * 2 * (NCNT / 4));
		w = load(b, P_CNT, 4 + k);
		KCHECK(self, w == NINS * (NCNT / 4), "page %u: %" PRIu64
		       " reads counted, want %u", k, w, NINS * (NCNT / 4));
	}
	w = __atomic_load_n((uint64_t *)mm, __ATOMIC_ACQUIRE);
	KCHECK(self, w == NINS * 2 * NCNT, "malloc'd counter %" PRIu64
	       ", want %u", w, NINS * 2 * NCNT);
	w = __atomic_load_n((uint64_t *)(mm + PG), __ATOMIC_ACQUIRE);
	KCHECK(self, w == NINS * NCNT, "malloc'd processed %" PRIu64, w);
	for (k = 0; k < 6; k++)
		PtlMEUnlink(meh[k]);
	KCHECK(self, spin_aa_assoc(n.ni, b, NPAGES * PG, SPIN_AA_W | SPIN_AA_R,
				   SPIN_AA_LOG_NONE) == PTL_OK &&
	       spin_aa_assoc(n.ni, mm, 2 * PG, SPIN_AA_W | SPIN_AA_R,
			     SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(lm) == PTL_OK &&
	       spin_ctx_free(ccnt2) == PTL_OK, "malloc'd log free");
	free(mraw);
	KCHECK(self, spin_aa_log_free(ldht) == PTL_OK &&
	       spin_aa_log_free(lcnt) == PTL_OK &&
	       spin_aa_log_free(ltim) == PTL_OK, "log free");
	KCHECK(self, spin_ctx_free(cdht) == PTL_OK &&
	       spin_ctx_free(ccnt) == PTL_OK, "ctx free");
	kid_ni_close(&n);
	kid_say(self, "ok chained=%" PRIu64 " timed_wait_ms=%" PRIu64,
		chained, ms);
	return 0;
}

/* ---- an inserter ----------------------------------------------------------- */

struct ins_arg {
	unsigned ins;
	unsigned nid, pid, pt;
};

static int
ins_main(struct kid *self, void *arg)
{
	const struct ins_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint64_t *loc = spin_host_alloc(NKEY * 8 + 64), done = 0;
	ptl_handle_md_t md;
	struct kid_ni n;
	ptl_event_t ev;
	unsigned i, which, replies = 0;
	ptl_md_t d;
	int rc;

	KCHECK(self, loc != NULL, "alloc");
	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	for (i = 0; i < NKEY; i++)
		loc[i] = key_of(ia->ins, i);
	loc[NKEY] = 1;                  /* the atomics' operand */
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = NKEY * 8 + 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	/* inserts, counted puts and Portals atomics on the counter words
	 * the handler adds to, interleaved */
	for (i = 0; i < NKEY; i++) {
		do {
			rc = PtlPut(md, i * 8, 8, PTL_NO_ACK_REQ, t, ia->pt,
				    MATCH, P_TABLE * PG + hash_of(loc[i]) * 8,
				    NULL, 0);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "put %u: %d", i, rc);
		if (i % (NKEY / NCNT) != 0)
			continue;
		do {
			rc = PtlPut(md, i * 8, 8, PTL_NO_ACK_REQ, t, ia->pt,
				    MATCH, (P_COUNT + i / (NKEY / NCNT) % 4) *
				    PG + 64 * ia->ins, NULL, 0);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "count put %u: %d", i, rc);
		do {
			rc = PtlAtomic(md, NKEY * 8, 8, PTL_NO_ACK_REQ, t,
				       ia->pt, MATCH, P_CNT * PG +
				       (i / (NKEY / NCNT) % 4) * 8, NULL, 0,
				       PTL_SUM, PTL_UINT64_T);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "atomic %u: %d", i, rc);
		do {
			rc = PtlGet(md, NKEY * 8 + 8, 8, t, ia->pt, MATCH,
				    (P_COUNT + i / (NKEY / NCNT) % 4) * PG, NULL);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "get %u: %d", i, rc);
		/* the malloc'd counters: a counted put, a Portals atomic */
		do {
			rc = PtlPut(md, i * 8, 8, PTL_NO_ACK_REQ, t, ia->pt,
				    MATCH, P_COUNT2 * PG + 64 * ia->ins, NULL,
				    0);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "count2 put %u: %d", i, rc);
		do {
			rc = PtlAtomic(md, NKEY * 8, 8, PTL_NO_ACK_REQ, t,
				       ia->pt, MATCH_M, 0, NULL, 0, PTL_SUM,
				       PTL_UINT64_T);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "malloc'd atomic %u: %d", i, rc);
	}
	while (replies < NCNT) {
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) == PTL_OK,
		       "no reply (%u)", replies);
		if (ev.type == PTL_EVENT_REPLY) {
			KCHECK(self, ev.ni_fail_type == PTL_NI_OK, "get failed");
			replies++;
		}
	}
	KCHECK(self, spin_aa_flush(n.ni, t, ia->pt, MATCH_FD, 0, &done,
				   30000) == PTL_OK, "flush dht");
	KCHECK(self, done >= NKEY, "dht flush saw %" PRIu64 " processed",
	       done);
	KCHECK(self, spin_aa_flush(n.ni, t, ia->pt, MATCH_FC, 0, &done,
				   30000) == PTL_OK, "flush count");
	KCHECK(self, done >= 2 * NCNT, "count flush saw %" PRIu64
	       " processed", done);
	KCHECK(self, spin_aa_flush(n.ni, t, ia->pt, MATCH_MF, 0, &done,
				   30000) == PTL_OK, "flush malloc'd");
	KCHECK(self, done >= NCNT, "malloc'd flush saw %" PRIu64
	       " processed", done);
	/* an active message whose handler's host CAS hits the marked table:
	 * refused, the message fails, no key lands */
	if (ia->ins == 0) {
		loc[NKEY + 2] = 0xdeadull;
		KCHECK(self, PtlPut(md, (NKEY + 2) * 8, 8, PTL_ACK_REQ, t,
				    ia->pt, MATCH_AM, 0, NULL, 5) == PTL_OK,
		       "am put");
		do {
			KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
			       PTL_OK, "no am ack");
		} while (ev.type != PTL_EVENT_ACK);
		KCHECK(self, ev.ni_fail_type != PTL_NI_OK,
		       "a handler's host atomic reached a marked page");
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* one put to the timed page, @p arg ms after it starts */
static int
timer_main(struct kid *self, void *arg)
{
	const struct ins_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint64_t *loc = spin_host_alloc(64);
	ptl_handle_md_t md;
	struct kid_ni n;
	ptl_event_t ev;
	unsigned which;
	ptl_md_t d;

	KCHECK(self, loc != NULL, "alloc");
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	usleep(200000);
	KCHECK(self, PtlPut(md, 0, 8, PTL_ACK_REQ, t, ia->pt, MATCH,
			    P_TIMER * PG, NULL, 0) == PTL_OK, "put");
	do {
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) == PTL_OK,
		       "no ack");
	} while (ev.type != PTL_EVENT_ACK);
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	struct ins_arg ia[NINS], ta;
	struct kid ok, ik[NINS], tk;
	char line[256];
	unsigned i, nid, pid, pt;
	long long handled;

	itest_init("itest_aa_handler", 200);
	itest_spinnic_start(NULL);
	kid_start(&ok, "aah-owner", 1, false, owner_main, NULL);
	kid_expect(&ok, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &nid, &pid, &pt) == 3,
		    "owner line %s", line);
	for (i = 0; i < NINS; i++) {
		ia[i] = (struct ins_arg){ i, nid, pid, pt };
		kid_start(&ik[i], i == 0 ? "aah-ins0" : "aah-ins1", i % 2,
			  false, ins_main, &ia[i]);
	}
	for (i = 0; i < NINS; i++) {
		kid_expect(&ik[i], "ok", line, sizeof(line));
		kid_end(&ik[i]);
	}
	kid_tell(&ok, "timer");
	kid_expect(&ok, "waiting", line, sizeof(line));
	ta = (struct ins_arg){ 0, nid, pid, pt };
	kid_start(&tk, "aah-timer", 0, false, timer_main, &ta);
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	kid_tell(&ok, "check");
	kid_expect(&ok, "ok", line, sizeof(line));
	printf("itest_aa_handler: %u keys, %u counted accesses: %s\n", NHEAP,
	       NINS * 5 * NCNT, line);
	kid_end(&ok);
	itest_spinnic_finish();
	/* every record handled once: NKEY inserts, NCNT puts and NCNT gets
	 * per inserter (lost or duplicated packets make none more) */
	handled = itest_counter(1, "aa_handled");
	ITEST_CHECK(handled == (long long)(NINS * (NKEY + 3 * NCNT)),
		    "aa_handled %lld, want %u", handled,
		    NINS * (NKEY + 3 * NCNT));
	ITEST_CHECK(itest_counter(1, "aa_timer_wakes") >= 1,
		    "no timed wake counted");
	itest_expect_no_leaks();
	return 0;
}
