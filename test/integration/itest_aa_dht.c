/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access use case (paper 004 §4.1, Listing 3): a distributed
 * hashtable insert is one put. The owner (node 1) marks its table
 * (NSLOT 8-byte slots) R|WLD: a put of a key to slot hash(key) leaves the
 * table untouched and lands in the owner's access log; the owner drains
 * the log and runs the local insert (empty slot: store; else push on the
 * slot's overflow chain in a local heap). Two inserters (nodes 0 and 1)
 * put NKEY keys each without acks, then spin_aa_flush: the flush returns
 * the owner's processed count, which must cover every key of the caller.
 * Then each inserter looks its first key up with a plain get (R=1), and
 * the owner checks the table and chains hold exactly the keys inserted,
 * each at its hash position (regenerated from the seeds here).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "harness.h"
#include "kid.h"

#define PG SPIN_AA_PAGE
#define NSLOT 1024u             /* 8 KiB: two pages */
#define NKEY 2000u              /* per inserter */
#define NINS 2u
#define NHEAP (NINS * NKEY)
#define MATCH_TABLE 0xd47ull
#define MATCH_FLUSH 0xd48ull

static uint64_t
key_of(unsigned ins, unsigned i)
{
	uint64_t x = (uint64_t)ins << 32 | (i + 1);

	/* splitmix64: distinct keys, never 0 */
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

/* ---- the owner ---------------------------------------------------------- */

struct volume {
	uint64_t *table;        /* NSLOT slots, marked R|WLD */
	uint64_t *processed;    /* the flushing page's first word */
	uint32_t chain[NSLOT];  /* 1 + heap cell of the chain head, 0: none */
	struct { uint64_t key; uint32_t next; } heap[NHEAP];
	uint32_t next_free;
	unsigned bad;
};

/* Listing 3's local_insert, run for each log record. */
static int
on_insert(void *arg, const struct spin_aa_rec *r)
{
	struct volume *v = arg;
	uint64_t key, pos = ((uint64_t)(uintptr_t)r->addr -
			     (uint64_t)(uintptr_t)v->table) / 8;

	if (r->kind != SPIN_AA_PUT_DATA || r->len != 8 || pos >= NSLOT ||
	    !(r->flags & SPIN_AA_F_REDIRECTED) || v->next_free == NHEAP) {
		v->bad++;
	} else {
		memcpy(&key, r->data, 8);
		if (v->table[pos] == 0) {
			__atomic_store_n(&v->table[pos], key, __ATOMIC_RELEASE);
		} else {
			v->heap[v->next_free].key = key;
			v->heap[v->next_free].next = v->chain[pos];
			v->chain[pos] = ++v->next_free;
		}
	}
	__atomic_store_n(v->processed, *v->processed + 1, __ATOMIC_RELEASE);
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every key inserted once, at its hash position. @return mismatches */
static unsigned
volume_check(const struct volume *v)
{
	uint64_t *got = calloc(NHEAP, 8), *want = calloc(NHEAP, 8);
	unsigned n = 0, bad = 0, i, s;

	if (got == NULL || want == NULL) {
		free(got);
		free(want);
		return 1;
	}
	for (s = 0; s < NSLOT; s++) {
		uint32_t c;

		if (v->table[s] != 0) {
			bad += hash_of(v->table[s]) != s || n == NHEAP;
			if (n < NHEAP)
				got[n++] = v->table[s];
		}
		for (c = v->chain[s]; c != 0; c = v->heap[c - 1].next) {
			bad += hash_of(v->heap[c - 1].key) != s || n == NHEAP;
			if (n < NHEAP)
				got[n++] = v->heap[c - 1].key;
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

static int
owner_main(struct kid *self, void *arg)
{
	struct spin_aa_log_desc d = { .size = 1u << 20 };
	static struct volume v;
	spin_handle_aalog_t log;
	ptl_handle_me_t meh[2];
	struct kid_ni n;
	char line[64];
	uint8_t *raw;
	unsigned got;
	ptl_me_t me;
	int k;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc(4 * PG);
	KCHECK(self, raw != NULL, "alloc");
	v.table = (uint64_t *)(((uintptr_t)raw + PG - 1) &
			       ~(uintptr_t)(PG - 1));
	v.processed = v.table + NSLOT;      /* the third page */
	memset(v.table, 0, 3 * PG);
	KCHECK(self, spin_aa_log_create(n.ni, &d, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, v.table, NSLOT * 8,
				   SPIN_AA_R | SPIN_AA_WLD, log) == PTL_OK,
	       "assoc table");
	KCHECK(self, spin_aa_assoc(n.ni, v.processed, PG,
				   SPIN_AA_R | SPIN_AA_FLUSH, log) == PTL_OK,
	       "assoc flush");
	for (k = 0; k < 2; k++) {
		memset(&me, 0, sizeof(me));
		me.start = k == 0 ? (void *)v.table : (void *)v.processed;
		me.length = k == 0 ? NSLOT * 8 : 8;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
			     PTL_ME_EVENT_SUCCESS_DISABLE;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = k == 0 ? MATCH_TABLE : MATCH_FLUSH;
		KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST,
					 NULL, &meh[k]) == PTL_OK, "append");
	}
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	/* the insert handler: drain the log until told */
	while (kid_line(self, line, sizeof(line), 0) != 0)
		if (spin_aa_log_poll(log, on_insert, &v, 64, &got) ==
		    PTL_EQ_EMPTY)
			spin_aa_log_wait(log, 1);
	KCHECK(self, strcmp(line, "done") == 0, "line %s", line);
	while (spin_aa_log_poll(log, on_insert, &v, 64, &got) == PTL_OK)
		;
	KCHECK(self, v.bad == 0, "%u bad records", v.bad);
	KCHECK(self, *v.processed == NHEAP, "processed %" PRIu64,
	       *v.processed);
	KCHECK(self, volume_check(&v) == 0, "the volume differs from the "
	       "keys inserted");
	for (k = 0; k < 2; k++)
		PtlMEUnlink(meh[k]);
	KCHECK(self, spin_aa_assoc(n.ni, v.table, 3 * PG,
				   SPIN_AA_W | SPIN_AA_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok chained=%u", v.next_free);
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
	uint64_t *loc = spin_host_alloc(NKEY * 8 + 64), processed = 0;
	ptl_handle_md_t md;
	struct kid_ni n;
	ptl_event_t ev;
	unsigned i, which;
	ptl_md_t d;
	int rc;

	KCHECK(self, loc != NULL, "alloc");
	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	for (i = 0; i < NKEY; i++)
		loc[i] = key_of(ia->ins, i);
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = NKEY * 8 + 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	/* one put per insert: the key to its slot */
	for (i = 0; i < NKEY; i++) {
		do {
			rc = PtlPut(md, i * 8, 8, PTL_NO_ACK_REQ, t, ia->pt,
				    MATCH_TABLE, hash_of(loc[i]) * 8, NULL, 0);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "put %u: %d", i, rc);
	}
	KCHECK(self, spin_aa_flush(n.ni, t, ia->pt, MATCH_FLUSH, 0,
				   &processed, 30000) == PTL_OK, "flush");
	KCHECK(self, processed >= NKEY, "flush saw %" PRIu64 " processed",
	       processed);
	/* a lookup: a plain get of the first key's slot (R=1) */
	loc[NKEY] = 0;
	KCHECK(self, PtlGet(md, NKEY * 8, 8, t, ia->pt, MATCH_TABLE,
			    hash_of(loc[0]) * 8, NULL) == PTL_OK, "get");
	do {
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) == PTL_OK,
		       "no reply");
	} while (ev.type != PTL_EVENT_REPLY);
	KCHECK(self, ev.ni_fail_type == PTL_NI_OK && loc[NKEY] != 0 &&
	       hash_of(loc[NKEY]) == hash_of(loc[0]), "lookup");
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok processed=%" PRIu64, processed);
	return 0;
}

int
main(void)
{
	struct ins_arg ia[NINS];
	struct kid ok, ik[NINS];
	char line[256];
	unsigned i, nid, pid, pt;

	itest_init("itest_aa_dht", 180);
	itest_spinnic_start(NULL);
	kid_start(&ok, "dht-owner", 1, false, owner_main, NULL);
	kid_expect(&ok, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &nid, &pid, &pt) == 3,
		    "owner line %s", line);
	for (i = 0; i < NINS; i++) {
		ia[i] = (struct ins_arg){ i, nid, pid, pt };
		kid_start(&ik[i], i == 0 ? "dht-ins0" : "dht-ins1", i % 2,
			  false, ins_main, &ia[i]);
	}
	for (i = 0; i < NINS; i++) {
		kid_expect(&ik[i], "ok", line, sizeof(line));
		printf("itest_aa_dht: inserter %u: %s\n", i, line);
		kid_end(&ik[i]);
	}
	kid_tell(&ok, "done");
	kid_expect(&ok, "ok", line, sizeof(line));
	printf("itest_aa_dht: %u keys into %u slots: %s\n", NHEAP, NSLOT,
	       line);
	kid_end(&ok);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	return 0;
}
