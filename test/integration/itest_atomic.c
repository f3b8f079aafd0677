/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomics through a real spinnic --virtual 2 (issue 13): PtlAtomic,
 * PtlFetchAtomic and PtlSwap from a client on node 0 to one on node 1, on
 * region and on malloc'd target memory. Each case puts the target's
 * starting values, applies the atomic, reads the target back with a get
 * and checks it, and the old values of a fetching one, against results
 * computed here in the element's own C type; the initiator's events (SEND,
 * ACK, REPLY) and the target's (ATOMIC, FETCH_ATOMIC with the operation
 * and datatype) are checked too. Then arguments the specification refuses,
 * truncation at the end of the ME, and two initiators on both nodes adding
 * 1 to one counter with PtlFetchAtomic: the old values they got are each
 * number below the total exactly once (atomic, and applied exactly once
 * even over the lossy link of itest_atomic_lossy).
 * The clients are forked children linked with libspinnic (kid.c).
 */
#include <complex.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"

#define MATCH 0xa70ull
#define MATCH_ALL 0xa11ull /* the target's ME over all memory */
#define TBUF 4096u          /* the target's ME */
#define COUNTER 2048u       /* offset of the shared counter */
#define NADD 200u           /* fetch-adds per initiator */
#define LBUF 8192u          /* an initiator's MD */
#define OPND 0u             /* ... operand values */
#define OLD 1024u           /* ... old values (fetching atomics) */
#define BACK 2048u          /* ... the target read back */

struct target_arg {
	bool region;
};

struct peer {
	ptl_process_t id;
	ptl_pt_index_t pt;
	uint64_t addr;          /* its ME's buffer */
};

/* ---- the target -------------------------------------------------------- */

/* An event's check: atomic events carry the operation and datatype the
 * initiator wrote into hdr_data (op << 8 | type). */
static bool
target_event_ok(const ptl_event_t *ev)
{
	if (ev->ni_fail_type != PTL_NI_OK)
		return false;
	if (ev->type != PTL_EVENT_ATOMIC && ev->type != PTL_EVENT_FETCH_ATOMIC)
		return ev->type == PTL_EVENT_PUT || ev->type == PTL_EVENT_GET ||
		       ev->type == PTL_EVENT_LINK;
	return ev->atomic_operation == (ptl_op_t)(ev->hdr_data >> 8) &&
	       ev->atomic_type == (ptl_datatype_t)(ev->hdr_data & 0xff);
}

static int
target_main(struct kid *self, void *arg)
{
	const struct target_arg *ta = arg;
	unsigned atomics = 0, fetches = 0, bad = 0, bad_type = 0;
	uint64_t bad_hd = 0;
	struct kid_ni n;
	ptl_handle_me_t meh, meh_all;
	ptl_event_t ev;
	char line[128];
	uint8_t *buf;
	ptl_me_t me;

	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	buf = ta->region ? spin_host_alloc(TBUF) : malloc(TBUF);
	KCHECK(self, buf != NULL, "target buffer");
	memset(buf, 0, TBUF);
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = TBUF;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	/* and one over all of memory: offsets are addresses (osc/portals4's
	 * dynamic windows) */
	me.start = NULL;
	me.length = PTL_SIZE_MAX;
	me.match_bits = MATCH_ALL;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh_all) == PTL_OK, "PtlMEAppend all");
	kid_say(self, "ready %u %u %u %" PRIu64, n.id.phys.nid, n.id.phys.pid,
		n.pt, (uint64_t)(uintptr_t)buf);
	/* "done": the initiators finished; report the events and counter */
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
		     strcmp(line, "done") == 0, "no done line");
	while (PtlEQGet(n.eq, &ev) == PTL_OK) {
		if (!target_event_ok(&ev)) {
			bad++;
			bad_type = ev.type | (unsigned)ev.ni_fail_type << 8 |
				   (unsigned)ev.atomic_operation << 16 |
				   (unsigned)ev.atomic_type << 24;
			bad_hd = ev.hdr_data;
		}
		atomics += ev.type == PTL_EVENT_ATOMIC;
		fetches += ev.type == PTL_EVENT_FETCH_ATOMIC;
	}
	kid_say(self, "events atomic=%u fetch=%u bad=%u counter=%" PRIu64
		" (last bad: type|fail|op|datatype %#x, hdr_data %#" PRIx64 ")",
		atomics, fetches, bad, *(uint64_t *)(buf + COUNTER), bad_type,
		bad_hd);
	PtlMEUnlink(meh);
	PtlMEUnlink(meh_all);
	kid_ni_close(&n);
	return 0;
}

/* ---- an initiator ------------------------------------------------------- */

struct ini {
	struct kid *self;
	struct kid_ni n;
	ptl_handle_md_t md;
	uint8_t *loc;
	struct peer t;
	ptl_ni_limits_t lim;
};

/* The next event must be @p type, successful; @return 0 or 1 (said) */
static int
want(struct ini *x, ptl_event_kind_t type, ptl_event_t *ev_p)
{
	ptl_event_t ev;
	unsigned which;
	int rc;

	rc = PtlEQPoll(&x->n.eq, 1, 10000, &ev, &which);
	KCHECK(x->self, rc == PTL_OK, "no event (wanted %d): %d", type, rc);
	KCHECK(x->self, ev.type == type && ev.ni_fail_type == PTL_NI_OK,
	       "event %d fail %d, wanted %d", ev.type, ev.ni_fail_type, type);
	if (ev_p != NULL)
		*ev_p = ev;
	return 0;
}

/* Put @p len bytes of @p v to the target at @p off. */
static int
target_set(struct ini *x, uint64_t off, const void *v, size_t len)
{
	memcpy(x->loc + OPND, v, len);
	KCHECK(x->self, PtlPut(x->md, OPND, len, PTL_ACK_REQ, x->t.id, x->t.pt,
			       MATCH, off, NULL, 0) == PTL_OK, "PtlPut");
	return want(x, PTL_EVENT_SEND, NULL) || want(x, PTL_EVENT_ACK, NULL);
}

/* Get @p len bytes of the target at @p off into loc + BACK. */
static int
target_get(struct ini *x, uint64_t off, size_t len)
{
	KCHECK(x->self, PtlGet(x->md, BACK, len, x->t.id, x->t.pt, MATCH, off,
			       NULL) == PTL_OK, "PtlGet");
	return want(x, PTL_EVENT_REPLY, NULL);
}

/* One case: the target starts as @p t0, the atomic applies @p v (and
 * @p cmp for a conditional swap or MSWAP); the target must become @p t1
 * and a fetching one's old values be @p t0. kind: 'a' PtlAtomic, 'f'
 * PtlFetchAtomic, 's' PtlSwap. */
struct acase {
	const char *what;
	char kind;
	ptl_op_t op;
	ptl_datatype_t type;
	size_t len;
	const void *t0, *v, *cmp, *t1;
};

static int
run_case(struct ini *x, const struct acase *c)
{
	ptl_hdr_data_t hd = (ptl_hdr_data_t)c->op << 8 | c->type;
	ptl_event_t ev;
	int rc;

	if (target_set(x, 0, c->t0, c->len) != 0)
		return 1;
	memcpy(x->loc + OPND, c->v, c->len);
	memset(x->loc + OLD, 0xee, c->len);
	if (c->kind == 'a')
		rc = PtlAtomic(x->md, OPND, c->len, PTL_ACK_REQ, x->t.id,
			       x->t.pt, MATCH, 0, NULL, hd, c->op, c->type);
	else if (c->kind == 'f')
		rc = PtlFetchAtomic(x->md, OLD, x->md, OPND, c->len, x->t.id,
				    x->t.pt, MATCH, 0, NULL, hd, c->op,
				    c->type);
	else
		rc = PtlSwap(x->md, OLD, x->md, OPND, c->len, x->t.id, x->t.pt,
			     MATCH, 0, NULL, hd, c->cmp, c->op, c->type);
	KCHECK(x->self, rc == PTL_OK, "%s: %d", c->what, rc);
	if (want(x, PTL_EVENT_SEND, NULL) != 0)
		return 1;
	if (want(x, c->kind == 'a' ? PTL_EVENT_ACK : PTL_EVENT_REPLY, &ev))
		return 1;
	KCHECK(x->self, ev.mlength == c->len, "%s: mlength %" PRIu64,
	       c->what, (uint64_t)ev.mlength);
	if (c->kind != 'a')
		KCHECK(x->self, memcmp(x->loc + OLD, c->t0, c->len) == 0,
		       "%s: old values differ", c->what);
	if (target_get(x, 0, c->len) != 0)
		return 1;
	if (memcmp(x->loc + BACK, c->t1, c->len) != 0) {
		char got[2 * 64 + 1], exp[2 * 64 + 1];
		size_t k;

		for (k = 0; k < c->len && k < 64; k++) {
			sprintf(got + 2 * k, "%02x", x->loc[BACK + k]);
			sprintf(exp + 2 * k, "%02x",
				((const uint8_t *)c->t1)[k]);
		}
		KCHECK(x->self, false, "%s: target %s, wanted %s", c->what,
		       got, exp);
	}
	return 0;
}

/* The cases, with results written out by hand in each element's type. */
static int
run_cases(struct ini *x, unsigned *atomics, unsigned *fetches)
{
	static const int64_t sum_t0[] = { 5, -3, 100 }, sum_v[] = { 10, 20, -50 },
		sum_t1[] = { 15, 17, 50 };
	static const int32_t max_t0[] = { 1, 9, -4 }, max_v[] = { 3, 2, -5 },
		max_t1[] = { 3, 9, -4 };
	static const uint64_t bx_t0[] = { 0xf0f0, 0xff }, bx_v[] = { 0xff00, 0x0f },
		bx_t1[] = { 0x0ff0, 0xf0 };
	static const double pr_t0[] = { 1.5, -2.0 }, pr_v[] = { 2.0, 4.0 },
		pr_t1[] = { 3.0, -8.0 };
	static const int8_t la_t0[] = { 0, 3, 5 }, la_v[] = { 7, 0, 1 },
		la_t1[] = { 0, 0, 1 };
	static const uint16_t sw_t0[] = { 1, 2, 3 }, sw_v[] = { 7, 8, 9 };
	static const int64_t cs_42[] = { 42 }, cs_99[] = { 99 }, cs_7[] = { 7 };
	static const double lt_t0[] = { 2.0 }, lt_cmp[] = { 1.0 },
		lt_v[] = { 5.0 };
	static const uint32_t ms_t0[] = { 0xaaaaaaaau },
		ms_mask[] = { 0x0000ffffu }, ms_v[] = { 0x12345678u },
		ms_t1[] = { 0xaaaa5678u };
	static const double complex dc_t0[] = { 1.0 + 2.0 * I },
		dc_v[] = { 3.0 - 1.0 * I }, dc_t1[] = { 4.0 + 1.0 * I };
	/* zeroed first: long double's padding bytes are stored as zeros */
	static long double ld_t0[1], ld_v[1], ld_t1[1];
	struct acase cases[] = {
		{ "SUM int64", 'a', PTL_SUM, PTL_INT64_T, sizeof(sum_t0),
		  sum_t0, sum_v, NULL, sum_t1 },
		{ "MAX int32", 'a', PTL_MAX, PTL_INT32_T, sizeof(max_t0),
		  max_t0, max_v, NULL, max_t1 },
		{ "LAND int8", 'a', PTL_LAND, PTL_INT8_T, sizeof(la_t0),
		  la_t0, la_v, NULL, la_t1 },
		{ "SUM double complex", 'a', PTL_SUM, PTL_DOUBLE_COMPLEX,
		  sizeof(dc_t0), dc_t0, dc_v, NULL, dc_t1 },
		{ "SUM long double", 'a', PTL_SUM, PTL_LONG_DOUBLE,
		  sizeof(ld_t0), ld_t0, ld_v, NULL, ld_t1 },
		{ "fetch BXOR uint64", 'f', PTL_BXOR, PTL_UINT64_T,
		  sizeof(bx_t0), bx_t0, bx_v, NULL, bx_t1 },
		{ "fetch PROD double", 'f', PTL_PROD, PTL_DOUBLE,
		  sizeof(pr_t0), pr_t0, pr_v, NULL, pr_t1 },
		{ "SWAP uint16", 's', PTL_SWAP, PTL_UINT16_T, sizeof(sw_t0),
		  sw_t0, sw_v, NULL, sw_v },
		{ "CSWAP int64 equal", 's', PTL_CSWAP, PTL_INT64_T,
		  sizeof(cs_42), cs_42, cs_99, cs_42, cs_99 },
		{ "CSWAP int64 not equal", 's', PTL_CSWAP, PTL_INT64_T,
		  sizeof(cs_99), cs_99, cs_7, cs_42, cs_99 },
		{ "CSWAP_LT double", 's', PTL_CSWAP_LT, PTL_DOUBLE,
		  sizeof(lt_t0), lt_t0, lt_v, lt_cmp, lt_v },
		{ "MSWAP uint32", 's', PTL_MSWAP, PTL_UINT32_T, sizeof(ms_t0),
		  ms_t0, ms_v, ms_mask, ms_t1 },
	};
	unsigned i;

	memset(ld_t0, 0, sizeof(ld_t0));
	memset(ld_v, 0, sizeof(ld_v));
	memset(ld_t1, 0, sizeof(ld_t1));
	ld_t0[0] = 1.25L;
	ld_v[0] = 2.5L;
	ld_t1[0] = 3.75L;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (run_case(x, &cases[i]) != 0)
			return 1;
		*atomics += cases[i].kind == 'a';
		*fetches += cases[i].kind != 'a';
	}
	return 0;
}

/* What the specification refuses is refused at the call. */
static int
run_refusals(struct ini *x)
{
	int64_t cmp = 0;

	KCHECK(x->self, x->lim.max_atomic_size >= 32 &&
		     x->lim.max_fetch_atomic_size >= 32 &&
		     x->lim.max_waw_ordered_size >= 64,
	       "limits: atomic %zu fetch %zu waw %zu",
	       (size_t)x->lim.max_atomic_size,
	       (size_t)x->lim.max_fetch_atomic_size,
	       (size_t)x->lim.max_waw_ordered_size);
	KCHECK(x->self, PtlAtomic(x->md, OPND, 8, PTL_NO_ACK_REQ, x->t.id,
				  x->t.pt, MATCH, 0, NULL, 0, PTL_BAND,
				  PTL_DOUBLE) == PTL_ARG_INVALID, "BAND double");
	KCHECK(x->self, PtlAtomic(x->md, OPND, 8, PTL_NO_ACK_REQ, x->t.id,
				  x->t.pt, MATCH, 0, NULL, 0, PTL_CSWAP,
				  PTL_INT64_T) == PTL_ARG_INVALID,
	       "PtlAtomic with CSWAP");
	KCHECK(x->self, PtlSwap(x->md, OLD, x->md, OPND, 8, x->t.id, x->t.pt,
				MATCH, 0, NULL, 0, &cmp, PTL_SUM,
				PTL_INT64_T) == PTL_ARG_INVALID,
	       "PtlSwap with SUM");
	KCHECK(x->self, PtlSwap(x->md, OLD, x->md, OPND, 16, x->t.id, x->t.pt,
				MATCH, 0, NULL, 0, &cmp, PTL_CSWAP,
				PTL_INT64_T) == PTL_ARG_INVALID,
	       "CSWAP of two elements");
	KCHECK(x->self, PtlAtomic(x->md, OPND, 6, PTL_NO_ACK_REQ, x->t.id,
				  x->t.pt, MATCH, 0, NULL, 0, PTL_SUM,
				  PTL_INT32_T) == PTL_ARG_INVALID,
	       "part of an element");
	KCHECK(x->self, PtlAtomic(x->md, OPND, x->lim.max_atomic_size + 32,
				  PTL_NO_ACK_REQ, x->t.id, x->t.pt, MATCH, 0,
				  NULL, 0, PTL_SUM, PTL_INT64_T) ==
		     PTL_ARG_INVALID, "over max_atomic_size");
	return 0;
}

/* An atomic past the ME's end is truncated to the elements that fit. */
static int
run_truncated(struct ini *x, unsigned *atomics)
{
	static const int64_t t0[] = { 7 }, v[] = { 1, 1 };
	ptl_event_t ev;

	if (target_set(x, TBUF - 8, t0, sizeof(t0)) != 0)
		return 1;
	memcpy(x->loc + OPND, v, sizeof(v));
	KCHECK(x->self, PtlAtomic(x->md, OPND, sizeof(v), PTL_ACK_REQ, x->t.id,
				  x->t.pt, MATCH, TBUF - 8, NULL,
				  (ptl_hdr_data_t)PTL_SUM << 8 | PTL_INT64_T,
				  PTL_SUM, PTL_INT64_T) == PTL_OK, "PtlAtomic");
	if (want(x, PTL_EVENT_SEND, NULL) || want(x, PTL_EVENT_ACK, &ev))
		return 1;
	KCHECK(x->self, ev.mlength == 8, "truncated mlength %" PRIu64,
	       (uint64_t)ev.mlength);
	if (target_get(x, TBUF - 8, 8) != 0)
		return 1;
	KCHECK(x->self, *(int64_t *)(x->loc + BACK) == 8, "truncated value");
	++*atomics;
	return 0;
}

/* MDs and MEs over all of memory (start 0, length PTL_SIZE_MAX: how
 * Portals MPIs bind): offsets are addresses, each access checked where it
 * lands. A put and an atomic through them, the first read back. */
static int
run_all_memory(struct ini *x, unsigned *atomics)
{
	ptl_md_t md = { .start = NULL, .length = PTL_SIZE_MAX,
			.eq_handle = x->n.eq, .ct_handle = PTL_CT_NONE };
	uint64_t dst = x->t.addr + 64, v = 0x0123456789abcdefull;
	ptl_handle_md_t all;

	KCHECK(x->self, PtlMDBind(x->n.ni, &md, &all) == PTL_OK,
	       "PtlMDBind of all memory");
	memcpy(x->loc + OPND, &v, 8);
	KCHECK(x->self, PtlPut(all, (uintptr_t)(x->loc + OPND), 8, PTL_ACK_REQ,
			       x->t.id, x->t.pt, MATCH_ALL, dst, NULL, 0) ==
		     PTL_OK, "PtlPut all memory");
	if (want(x, PTL_EVENT_SEND, NULL) || want(x, PTL_EVENT_ACK, NULL))
		return 1;
	v = 1;
	memcpy(x->loc + OPND, &v, 8);
	KCHECK(x->self, PtlAtomic(all, (uintptr_t)(x->loc + OPND), 8,
				  PTL_ACK_REQ, x->t.id, x->t.pt, MATCH_ALL, dst,
				  NULL, (ptl_hdr_data_t)PTL_SUM << 8 |
				  PTL_UINT64_T, PTL_SUM, PTL_UINT64_T) ==
		     PTL_OK, "PtlAtomic all memory");
	if (want(x, PTL_EVENT_SEND, NULL) || want(x, PTL_EVENT_ACK, NULL))
		return 1;
	if (target_get(x, 64, 8) != 0)
		return 1;
	KCHECK(x->self, *(uint64_t *)(x->loc + BACK) == 0x0123456789abcdf0ull,
	       "all memory: %#" PRIx64, *(uint64_t *)(x->loc + BACK));
	PtlMDRelease(all);
	++*atomics;
	return 0;
}

/* NADD fetch-adds of 1 to the counter; the old values to the file
 * @p path (NADD int64s), then "olds". */
static int
run_adds(struct ini *x, const char *path)
{
	static int64_t olds[NADD];
	unsigned i;
	FILE *f;

	*(int64_t *)(x->loc + OPND) = 1;
	for (i = 0; i < NADD; i++) {
		KCHECK(x->self, PtlFetchAtomic(x->md, OLD, x->md, OPND, 8,
					       x->t.id, x->t.pt, MATCH, COUNTER,
					       NULL, (ptl_hdr_data_t)PTL_SUM << 8 |
					       PTL_INT64_T, PTL_SUM,
					       PTL_INT64_T) == PTL_OK,
		       "PtlFetchAtomic");
		if (want(x, PTL_EVENT_SEND, NULL) ||
		    want(x, PTL_EVENT_REPLY, NULL))
			return 1;
		olds[i] = *(int64_t *)(x->loc + OLD);
	}
	f = fopen(path, "w");
	KCHECK(x->self, f != NULL && fwrite(olds, sizeof(olds), 1, f) == 1 &&
		     fclose(f) == 0, "%s: cannot write", path);
	kid_say(x->self, "olds");
	return 0;
}

/* Where initiator @p name leaves its old values. */
static void
olds_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/olds.%s", itest_dir(), name);
}

/* "go NID PID PT [cases]": the target; cases: the single cases first. */
static int
initiator_main(struct kid *self, void *arg)
{
	unsigned atomics = 0, fetches = 0, nid, pid, pt;
	struct ini x = { .self = self };
	char line[128], what[16] = "", path[512];
	ptl_md_t md;

	(void)arg;
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
		     sscanf(line, "go %u %u %u %" SCNu64 " %15s", &nid, &pid,
			    &pt, &x.t.addr, what) >= 4,
	       "no go line");
	if (kid_ni_open(self, &x.n, 1024) != 0)
		return 1;
	x.lim = x.n.lim;
	x.t.id.phys.nid = nid;
	x.t.id.phys.pid = pid;
	x.t.pt = pt;
	x.loc = spin_host_alloc(LBUF);
	KCHECK(self, x.loc != NULL, "spin_host_alloc");
	memset(&md, 0, sizeof(md));
	md.start = x.loc;
	md.length = LBUF;
	md.eq_handle = x.n.eq;
	md.ct_handle = PTL_CT_NONE;
	KCHECK(self, PtlMDBind(x.n.ni, &md, &x.md) == PTL_OK, "PtlMDBind");
	if (strcmp(what, "cases") == 0 &&
	    (run_refusals(&x) != 0 || run_cases(&x, &atomics, &fetches) != 0 ||
	     run_truncated(&x, &atomics) != 0 ||
	     run_all_memory(&x, &atomics) != 0))
		return 1;
	kid_say(self, "cases atomic=%u fetch=%u", atomics, fetches);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
		     strcmp(line, "adds") == 0, "no adds line");
	olds_path(self->name, path, sizeof(path));
	if (run_adds(&x, path) != 0)
		return 1;
	PtlMDRelease(x.md);
	kid_ni_close(&x.n);
	return 0;
}

/* ---- the test ------------------------------------------------------------ */

/* The old values both initiators got: each of 0 .. 2 * NADD - 1 once. */
static void
check_olds(void)
{
	static const char *const names[] = { "initiator0", "initiator1" };
	static uint8_t seen[2 * NADD];
	int64_t olds[NADD];
	char path[512];
	unsigned k, i;
	FILE *f;

	memset(seen, 0, sizeof(seen));
	for (k = 0; k < 2; k++) {
		olds_path(names[k], path, sizeof(path));
		f = fopen(path, "r");
		ITEST_CHECK(f != NULL && fread(olds, sizeof(olds), 1, f) == 1,
			    "%s: no old values", path);
		fclose(f);
		unlink(path);
		for (i = 0; i < NADD; i++) {
			int64_t v = olds[i];

			ITEST_CHECK(v >= 0 && v < 2 * NADD && !seen[v],
				    "%s: old value %" PRId64 " twice or out of range",
				    names[k], v);
			seen[v] = 1;
		}
	}
}

static void
run(bool region)
{
	struct target_arg ta = { .region = region };
	unsigned nid, pid, pt, ta_n, tf_n, bad, ca, cf;
	struct kid t, i0, i1;
	char line[96], big[256];
	uint64_t counter, taddr;

	kid_line_ms = 60000;
	kid_start(&t, "target", 1, false, target_main, &ta);
	kid_expect(&t, "ready ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u %" SCNu64, &nid, &pid, &pt,
			   &taddr) == 4, "target said \"%s\"", line);
	kid_start(&i0, "initiator0", 0, false, initiator_main, NULL);
	kid_start(&i1, "initiator1", 1, false, initiator_main, NULL);
	snprintf(big, sizeof(big), "go %u %u %u %" PRIu64 " cases", nid, pid,
		 pt, taddr);
	kid_tell(&i0, big);
	snprintf(big, sizeof(big), "go %u %u %u %" PRIu64, nid, pid, pt,
		 taddr);
	kid_tell(&i1, big);
	kid_expect(&i0, "cases ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "cases atomic=%u fetch=%u", &ca, &cf) == 2,
		    "initiator0 said \"%s\"", line);
	kid_expect(&i1, "cases ", line, sizeof(line));
	/* both add at once */
	kid_tell(&i0, "adds");
	kid_tell(&i1, "adds");
	kid_expect(&i0, "olds", line, sizeof(line));
	kid_expect(&i1, "olds", line, sizeof(line));
	check_olds();
	kid_end(&i0);
	kid_end(&i1);
	kid_tell(&t, "done");
	kid_expect(&t, "events ", big, sizeof(big));
	ITEST_CHECK(sscanf(big, "events atomic=%u fetch=%u bad=%u counter=%"
			   SCNu64, &ta_n, &tf_n, &bad, &counter) == 4,
		    "target said \"%s\"", big);
	ITEST_CHECK(bad == 0 && ta_n == ca && tf_n == cf + 2 * NADD &&
		    counter == 2 * NADD,
		    "%s target: %s (initiators: atomic=%u fetch=%u)",
		    region ? "region" : "malloc", big, ca, cf + 2 * NADD);
	kid_end(&t);
	fprintf(stderr, "itest_atomic: %s target: %u atomics, %u fetching, counter %" PRIu64 "\n",
		region ? "region" : "malloc", ta_n, tf_n, counter);
}

int
main(void)
{
	itest_init("itest_atomic", 240);
	itest_spinnic_start(NULL);
	run(true);
	run(false);
	itest_spinnic_finish();
	if (getenv("SPINNIC_ITEST_FAULTS") == NULL)
		itest_expect_no_drops();
	return 0;
}
