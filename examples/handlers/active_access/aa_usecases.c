/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The use cases of Active Access (paper 004 §4) on spinnic, one program:
 * run it as the owner of the marked memory on one node and as the
 * initiator on another (tools/aa-examples.sh runs every case against a
 * spinnic --virtual 2 and is the meson test aa_examples).
 *
 *   aa_usecases owner CASE            prints "ready NID PID PT", serves,
 *                                     checks, prints "ok ..."
 *   aa_usecases init CASE NID PID PT  the remote side; prints "ok ..."
 *
 * CASE:
 *   dht-host     the hashtable insert (§4.1, Listing 3): one redirected
 *                put per key (table marked R|WLD); the owner's thread
 *                drains its log (futex wake every 16 records or 500 µs)
 *                and inserts with its CPU's atomics
 *   dht-handler  the same inserts run on the NIC by the "aa_dht" access
 *                handler with 8-byte host atomics; the owner only checks
 *   count        access counting (§4.2): pages W|R|WL|RL, the "aa_count"
 *                access handler counts puts and gets per page
 *   ickpt        incremental checkpointing (§4.3): pages W|R|WL, the
 *                owner takes a full image, the initiator writes some
 *                pages, the dirty pages come from the log, the image is
 *                rebuilt from them and compared byte for byte
 *   getlog       logging gets (§4.4): pages R|RLD, every byte the
 *                initiator reads lands in the owner's log, checked
 *
 * Every case ends with spin_aa_flush (the owner's consumer, host or
 * handler, processed everything the initiator sent) and a put of 1 to
 * the owner's "done" word. Deterministic data: both sides compute what
 * to expect.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "active_access.h"

#define PG SPIN_AA_PAGE
#define MATCH 0xaa0ull
#define MATCH_FLUSH 0xaa1ull

/* dht: the volume of aa_dht_args, in pages */
#define NSLOT 1024u
#define NKEY 3000u
#define P_TABLE 0u
#define P_HEAD 2u
#define P_HEAP 4u               /* NKEY cells of 16 bytes: 12 pages */
#define P_FREE 16u              /* next_free, overflow */
/* count */
#define NCPAGE 4u
#define P_CNT 4u
/* ickpt and getlog: data pages */
#define NDPAGE 64u
/* every case: the flushing page and the done word follow the data */
#define NPAGES 80u
#define P_FLUSH 78u
#define P_DONE 79u

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aa_usecases: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
check(int rc, const char *what)
{
	if (rc != PTL_OK)
		die("%s: %s", what, spin_strerror(rc));
}

static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t
key_of(unsigned i)
{
	uint64_t k = mix(i + 1);

	return k == 0 ? 1 : k;
}

/* ickpt: is page p written by the initiator? (about a third) */
static bool
ickpt_dirty(unsigned p)
{
	return mix(p * 7 + 3) % 3 == 0;
}

/* count: puts and gets to counted page p */
static unsigned
count_puts(unsigned p)
{
	return 10 * (p + 1);
}

static unsigned
count_gets(unsigned p)
{
	return 5 * (p + 2);
}

/* getlog: get i reads [getlog_off(i), + getlog_len(i)) of the data */
static uint64_t
getlog_len(unsigned i)
{
	return 8 + mix(i) % 6000;
}

static uint64_t
getlog_off(unsigned i)
{
	return mix(i + 1000) % (NDPAGE * PG - getlog_len(i));
}

#define NGETS 200u

struct node {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_process_t id;
};

static void
node_open(struct node *n)
{
	check(PtlInit(), "PtlInit");
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			PTL_PID_ANY, NULL, NULL, &n->ni), "PtlNIInit");
	check(PtlGetPhysId(n->ni, &n->id), "PtlGetPhysId");
	check(PtlEQAlloc(n->ni, 4096, &n->eq), "PtlEQAlloc");
	check(PtlPTAlloc(n->ni, 0, n->eq, PTL_PT_ANY, &n->pt), "PtlPTAlloc");
}

static void
node_close(struct node *n)
{
	PtlPTFree(n->ni, n->pt);
	PtlEQFree(n->eq);
	PtlNIFini(n->ni);
	PtlFini();
}

/* ---- the owner ----------------------------------------------------------- */

struct owner {
	struct node n;
	uint8_t *b;                  /* NPAGES pages, page-aligned */
	spin_handle_aalog_t log;
	spin_handle_ctx_t ctx;
	bool has_ctx;
	ptl_handle_me_t me[2];
	/* ickpt: the checkpoint image and the dirty pages the log names */
	uint8_t *image;
	uint8_t dirty[NDPAGE];
	uint64_t log_bytes;          /* getlog: data bytes logged */
	unsigned bad;
};

static uint64_t *
word(uint8_t *b, unsigned page, unsigned idx)
{
	return (uint64_t *)(b + (size_t)page * PG) + idx;
}

static void
processed_inc(struct owner *o)
{
	__atomic_fetch_add(word(o->b, P_FLUSH, 0), 1, __ATOMIC_RELEASE);
}

/* Listing 3's local_insert with the CPU's atomics, on the layout the
 * aa_dht handler uses, so one check serves both */
static int
on_dht(void *arg, const struct spin_aa_rec *r)
{
	struct owner *o = arg;
	uint64_t pos = (uint64_t)((uint8_t *)r->addr - o->b) / 8, key, cell,
		 zero = 0, old;

	if (r->kind != SPIN_AA_PUT_DATA || r->len != 8 || pos >= NSLOT) {
		o->bad++;
	} else {
		memcpy(&key, r->data, 8);
		if (!__atomic_compare_exchange_n(word(o->b, P_TABLE, pos),
						 &zero, key, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			cell = __atomic_fetch_add(word(o->b, P_FREE, 0), 1,
						  __ATOMIC_ACQ_REL);
			if (cell >= NKEY) {
				o->bad++;
			} else {
				*word(o->b, P_HEAP, (unsigned)cell * 2) = key;
				old = __atomic_exchange_n(word(o->b, P_HEAD,
							       pos), cell + 1,
							  __ATOMIC_ACQ_REL);
				*word(o->b, P_HEAP, (unsigned)cell * 2 + 1) =
					old;
			}
		}
	}
	processed_inc(o);
	return 0;
}

static int
on_ickpt(void *arg, const struct spin_aa_rec *r)
{
	struct owner *o = arg;
	uint64_t p = (uint64_t)((uint8_t *)r->addr - o->b) / PG;

	if (r->kind != SPIN_AA_PUT_META || p >= NDPAGE)
		o->bad++;
	else
		o->dirty[p] = 1;
	processed_inc(o);
	return 0;
}

static int
on_getlog(void *arg, const struct spin_aa_rec *r)
{
	struct owner *o = arg;
	const uint8_t *at = r->addr;

	/* the log holds the bytes the get returned: the memory's */
	if (r->kind != SPIN_AA_GET_DATA || at < o->b ||
	    at + r->len > o->b + NDPAGE * PG || memcmp(r->data, at, r->len))
		o->bad++;
	o->log_bytes += r->len;
	processed_inc(o);
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* every key once, at its hash position: table and chains */
static unsigned
dht_check(struct owner *o, uint64_t *chained_p)
{
	uint64_t *got = calloc(NKEY, 8), *want = calloc(NKEY, 8);
	unsigned n = 0, bad = 0, i, s, steps;

	if (got == NULL || want == NULL)
		die("out of memory");
	*chained_p = 0;
	for (s = 0; s < NSLOT; s++) {
		uint64_t k = *word(o->b, P_TABLE, s), c;

		if (k != 0) {
			bad += k % NSLOT != s || n == NKEY;
			if (n < NKEY)
				got[n++] = k;
		}
		c = *word(o->b, P_HEAD, s);
		for (steps = 0; c != 0 && c <= NKEY && steps <= NKEY; steps++) {
			uint64_t *cell = word(o->b, P_HEAP,
					      (unsigned)(c - 1) * 2);

			bad += cell[0] % NSLOT != s || n == NKEY;
			if (n < NKEY)
				got[n++] = cell[0];
			(*chained_p)++;
			c = cell[1];
		}
		bad += c != 0;
	}
	for (i = 0; i < NKEY; i++)
		want[i] = key_of(i);
	qsort(got, n, 8, cmp_u64);
	qsort(want, NKEY, 8, cmp_u64);
	bad += n != NKEY || memcmp(got, want, NKEY * 8) != 0;
	free(got);
	free(want);
	return bad;
}

static void
owner_setup(struct owner *o, const char *cas)
{
	struct spin_aa_log_desc ld = { .size = 1u << 20, .notify_every = 16,
				       .notify_us = 500 };
	struct aa_dht_args da = {
		.version = AA_DHT_ARGS_VERSION, .nslot = NSLOT,
		.table_off = P_TABLE * PG, .head_off = P_HEAD * PG,
		.nheap = NKEY, .heap_off = P_HEAP * PG,
		.next_free_off = P_FREE * PG, .overflow_off = P_FREE * PG + 8,
		.processed_off = P_FLUSH * PG,
	};
	struct aa_count_args ca = {
		.version = AA_COUNT_ARGS_VERSION, .npages = NCPAGE,
		.counters_off = P_CNT * PG, .processed_off = P_FLUSH * PG,
	};
	struct spin_ctx_desc cd = { 0 };
	uint8_t *raw;
	unsigned k, bits = 0, npg = 0, p;
	ptl_me_t me;

	raw = spin_host_alloc((NPAGES + 1) * PG);
	if (raw == NULL)
		die("spin_host_alloc: region too small (SPINNIC_REGION_SIZE)");
	o->b = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(o->b, 0, NPAGES * PG);
	ca.base = (uintptr_t)o->b;
	if (strcmp(cas, "dht-handler") == 0 || strcmp(cas, "count") == 0) {
		bool dht = cas[0] == 'd';

		cd.family = dht ? "aa_dht" : "aa_count";
		cd.args = dht ? (const void *)&da : (const void *)&ca;
		cd.args_len = dht ? sizeof(da) : sizeof(ca);
		check(spin_ctx_install(o->n.ni, &cd, &o->ctx),
		      "spin_ctx_install");
		o->has_ctx = true;
		ld.flags = SPIN_AA_LOG_HANDLER;
		ld.ctx = o->ctx;
		ld.win_addr = o->b;
		ld.win_len = NPAGES * PG;
	}
	check(spin_aa_log_create(o->n.ni, &ld, &o->log), "spin_aa_log_create");
	if (strncmp(cas, "dht", 3) == 0) {
		bits = SPIN_AA_R | SPIN_AA_WLD;       /* redirected inserts */
		npg = 2;
	} else if (strcmp(cas, "count") == 0) {
		bits = SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL | SPIN_AA_RL;
		npg = NCPAGE;
	} else if (strcmp(cas, "ickpt") == 0) {
		bits = SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL;
		npg = NDPAGE;
		for (p = 0; p < NDPAGE * PG / 8; p++)
			*word(o->b, 0, p) = mix(p);
		/* the full checkpoint the increments start from */
		o->image = malloc(NDPAGE * PG);
		if (o->image == NULL)
			die("out of memory");
		memcpy(o->image, o->b, NDPAGE * PG);
	} else if (strcmp(cas, "getlog") == 0) {
		bits = SPIN_AA_R | SPIN_AA_RLD;
		npg = NDPAGE;
		for (p = 0; p < NDPAGE * PG / 8; p++)
			*word(o->b, 0, p) = mix(p ^ 0x5a5a);
	} else {
		die("unknown case %s", cas);
	}
	check(spin_aa_assoc(o->n.ni, o->b, (size_t)npg * PG, bits, o->log),
	      "spin_aa_assoc");
	check(spin_aa_assoc(o->n.ni, o->b + P_FLUSH * PG, PG,
			    SPIN_AA_R | SPIN_AA_FLUSH, o->log),
	      "spin_aa_assoc flush");
	for (k = 0; k < 2; k++) {
		memset(&me, 0, sizeof(me));
		me.start = k == 0 ? o->b : o->b + P_FLUSH * PG;
		me.length = k == 0 ? NPAGES * PG : 8;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
			     PTL_ME_EVENT_SUCCESS_DISABLE;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = k == 0 ? MATCH : MATCH_FLUSH;
		check(PtlMEAppend(o->n.ni, o->n.pt, &me, PTL_PRIORITY_LIST,
				  NULL, &o->me[k]), "PtlMEAppend");
	}
}

static int
owner_main(const char *cas)
{
	struct owner o = { 0 };
	spin_aa_fn fn = NULL;
	unsigned got, p, k, ndirty = 0, want;
	uint64_t chained;

	node_open(&o.n);
	owner_setup(&o, cas);
	if (strcmp(cas, "dht-host") == 0)
		fn = on_dht;
	else if (strcmp(cas, "ickpt") == 0)
		fn = on_ickpt;
	else if (strcmp(cas, "getlog") == 0)
		fn = on_getlog;
	printf("ready %u %u %u\n", o.n.id.phys.nid, o.n.id.phys.pid, o.n.pt);
	fflush(stdout);
	/* serve until the initiator says done (a handler serves itself) */
	while (__atomic_load_n(word(o.b, P_DONE, 0), __ATOMIC_ACQUIRE) == 0) {
		if (fn == NULL)
			usleep(1000);
		else if (spin_aa_log_poll(o.log, fn, &o, 64, &got) ==
			 PTL_EQ_EMPTY)
			spin_aa_log_wait(o.log, 100);
	}
	while (fn != NULL && spin_aa_log_poll(o.log, fn, &o, 64, &got) ==
	       PTL_OK)
		;
	if (o.bad != 0)
		die("%u records were not what they should be", o.bad);
	if (strncmp(cas, "dht", 3) == 0) {
		if (*word(o.b, P_FLUSH, 0) != NKEY || *word(o.b, P_FREE, 1) != 0 ||
		    dht_check(&o, &chained) != 0 ||
		    chained != *word(o.b, P_FREE, 0))
			die("the table differs from the %u keys inserted",
			    NKEY);
		printf("ok %u keys, %" PRIu64 " chained\n", NKEY, chained);
	} else if (strcmp(cas, "count") == 0) {
		for (p = 0; p < NCPAGE; p++)
			if (*word(o.b, P_CNT, p) != count_puts(p) ||
			    *word(o.b, P_CNT, NCPAGE + p) != count_gets(p))
				die("page %u: %" PRIu64 " puts, %" PRIu64
				    " gets counted, want %u and %u", p,
				    *word(o.b, P_CNT, p),
				    *word(o.b, P_CNT, NCPAGE + p),
				    count_puts(p), count_gets(p));
		printf("ok counts of %u pages exact\n", NCPAGE);
	} else if (strcmp(cas, "ickpt") == 0) {
		/* the increment: dirty pages copied into the image */
		for (p = 0; p < NDPAGE; p++) {
			if (o.dirty[p] != ickpt_dirty(p))
				die("page %u: dirty %u in the log, written %u",
				    p, o.dirty[p], ickpt_dirty(p));
			if (o.dirty[p]) {
				memcpy(o.image + (size_t)p * PG,
				       o.b + (size_t)p * PG, PG);
				ndirty++;
			}
		}
		if (memcmp(o.image, o.b, NDPAGE * PG) != 0)
			die("the rebuilt image differs from the memory");
		printf("ok image rebuilt from %u of %u pages (%u of %u bytes)\n",
		       ndirty, NDPAGE, ndirty * PG, NDPAGE * PG);
	} else {
		for (k = 0, want = 0; k < NGETS; k++)
			want += (unsigned)getlog_len(k);
		if (o.log_bytes != want)
			die("%" PRIu64 " bytes logged, %u read", o.log_bytes,
			    want);
		printf("ok %u gets, %u bytes read, every one logged\n", NGETS,
		       want);
	}
	for (k = 0; k < 2; k++)
		PtlMEUnlink(o.me[k]);
	check(spin_aa_assoc(o.n.ni, o.b, NPAGES * PG, SPIN_AA_W | SPIN_AA_R,
			    SPIN_AA_LOG_NONE), "unmark");
	check(spin_aa_log_free(o.log), "spin_aa_log_free");
	if (o.has_ctx)
		spin_ctx_free(o.ctx);
	free(o.image);
	node_close(&o.n);
	return 0;
}

/* ---- the initiator -------------------------------------------------------- */

static void
wait_event(struct node *n, ptl_event_kind_t kind)
{
	ptl_event_t ev;
	unsigned which;

	do {
		check(PtlEQPoll(&n->eq, 1, 30000, &ev, &which), "PtlEQPoll");
		if (ev.ni_fail_type != PTL_NI_OK)
			die("event %d failed: %d", ev.type, ev.ni_fail_type);
	} while (ev.type != kind);
}

static void
put(struct node *n, ptl_handle_md_t md, ptl_size_t loff, ptl_size_t len,
    ptl_process_t t, ptl_pt_index_t pt, ptl_size_t roff)
{
	int rc;

	do {
		rc = PtlPut(md, loff, len, PTL_NO_ACK_REQ, t, pt, MATCH, roff,
			    NULL, 0);
	} while (rc == PTL_NO_SPACE);
	check(rc, "PtlPut");
	(void)n;
}

static int
init_main(const char *cas, unsigned nid, unsigned pid, unsigned pt)
{
	ptl_process_t t = { .phys = { nid, pid } };
	size_t len = NDPAGE * PG + 4096;
	uint8_t *buf = spin_host_alloc(len);
	uint64_t done = 0, sent = 0, *w = (uint64_t *)buf;
	struct node n;
	ptl_handle_md_t md;
	unsigned i, p, k;
	ptl_md_t d;

	if (buf == NULL)
		die("spin_host_alloc: region too small");
	node_open(&n);
	memset(&d, 0, sizeof(d));
	d.start = buf;
	d.length = len;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	check(PtlMDBind(n.ni, &d, &md), "PtlMDBind");
	if (strncmp(cas, "dht", 3) == 0) {
		for (i = 0; i < NKEY; i++) {
			w[i] = key_of(i);
			put(&n, md, i * 8, 8, t, pt,
			    P_TABLE * PG + (w[i] % NSLOT) * 8);
		}
		sent = NKEY;
	} else if (strcmp(cas, "count") == 0) {
		for (p = 0; p < NCPAGE; p++) {
			for (k = 0; k < count_puts(p); k++)
				put(&n, md, 0, 8, t, pt, p * PG + 8 * (k % 64));
			for (k = 0; k < count_gets(p); k++) {
				check(PtlGet(md, 64, 8, t, pt, MATCH, p * PG,
					     NULL), "PtlGet");
				wait_event(&n, PTL_EVENT_REPLY);
			}
			sent += count_puts(p) + count_gets(p);
		}
	} else if (strcmp(cas, "ickpt") == 0) {
		for (p = 0; p < NDPAGE; p++) {
			if (!ickpt_dirty(p))
				continue;
			for (k = 0; k < 8; k++)
				w[k] = mix(p * 1000 + k);
			/* 64 bytes somewhere in the page */
			put(&n, md, 0, 64, t, pt, p * PG + mix(p) % 63 * 64);
			sent++;
		}
	} else if (strcmp(cas, "getlog") == 0) {
		for (i = 0; i < NGETS; i++) {
			check(PtlGet(md, 0, getlog_len(i), t, pt, MATCH,
				     getlog_off(i), NULL), "PtlGet");
			wait_event(&n, PTL_EVENT_REPLY);
			/* what a get returns: the owner's deterministic data */
			for (k = 0; k < getlog_len(i); k++) {
				uint64_t o = getlog_off(i) + k;

				if (buf[k] != (uint8_t)(mix((o / 8) ^ 0x5a5a) >>
							(8 * (o % 8))))
					die("get %u: byte %u differs", i, k);
			}
		}
	} else {
		die("unknown case %s", cas);
	}
	/* processed by the owner's consumer: host thread or NIC handler */
	check(spin_aa_flush(n.ni, t, pt, MATCH_FLUSH, 0, &done, 30000),
	      "spin_aa_flush");
	if (done < sent)
		die("flush: %" PRIu64 " processed, %" PRIu64 " sent", done,
		    sent);
	w[0] = 1;
	check(PtlPut(md, 0, 8, PTL_ACK_REQ, t, pt, MATCH, P_DONE * PG, NULL,
		     0), "PtlPut done");
	wait_event(&n, PTL_EVENT_ACK);
	PtlMDRelease(md);
	node_close(&n);
	printf("ok flush saw %" PRIu64 " processed\n", done);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "owner") == 0)
		return owner_main(argv[2]);
	if (argc == 6 && strcmp(argv[1], "init") == 0)
		return init_main(argv[2], (unsigned)atoi(argv[3]),
				 (unsigned)atoi(argv[4]),
				 (unsigned)atoi(argv[5]));
	fprintf(stderr, "usage: aa_usecases owner CASE\n"
		"       aa_usecases init CASE NID PID PT\n"
		"CASE: dht-host dht-handler count ickpt getlog\n");
	return 2;
}
