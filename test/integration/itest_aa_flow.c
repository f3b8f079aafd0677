/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access flow through a real spinnic --virtual 2: active flush
 * (1000 redirected puts without acks to a slow consumer, then
 * spin_aa_flush returns the processed count kept on the flushing page);
 * full logs (a 16 KiB log whose consumer starts once the NIC has held
 * something back, read through telemetry: back-pressure loses
 * no record of puts, gets, atomics, iovec-ME puts, handler DMAs or refused
 * gets; drop mode loses exactly the excess and redirected puts say
 * PTL_NI_DROPPED); notification (spin_aa_log_wait times out on an empty
 * log, and is woken every 10 records). Again over the lossy
 * link (itest_aa_flow_lossy): every record exactly once.
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
#include <spin_handler_args.h>

#include "harness.h"
#include "itest_aa.h"
#include "kid.h"
#include "tel.h"

#define LOG_SIZE (1u << 20)

/* ---- active flush ----------------------------------------------------------- */

#define NFLUSH 1000u

struct flush_ctx {
	uint8_t *buf;
	uint64_t count;
	unsigned bad;
};

static int
on_flush_rec(void *arg, const struct spin_aa_rec *r)
{
	struct flush_ctx *f = arg;

	if (r->kind != SPIN_AA_PUT_DATA || r->flags != SPIN_AA_F_REDIRECTED ||
	    r->len != 8 || r->addr != f->buf)
		f->bad++;
	f->count++;
	/* what the flush returns: records processed */
	__atomic_store_n((uint64_t *)(f->buf + PG), f->count, __ATOMIC_RELEASE);
	return 0;
}

/* A slow consumer: page 0 redirects puts into the log, page 1 is the
 * log's flushing page holding the processed count. */
static int
flush_target_main(struct kid *self, void *arg)
{
	struct flush_ctx f = { 0 };
	spin_handle_aalog_t log;
	ptl_handle_me_t meh;
	struct kid_ni n;
	char line[64];
	uint8_t *raw;
	ptl_me_t me;
	unsigned got;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc(3 * PG);
	KCHECK(self, raw != NULL, "alloc");
	f.buf = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(f.buf, 0, 2 * PG);
	KCHECK(self, aa_log_new(n.ni, LOG_SIZE, SPIN_AA_LOG_DROP, 0,
				&log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, f.buf, PG, A_R | A_WLD, log) == PTL_OK,
	       "assoc redirect");
	KCHECK(self, spin_aa_assoc(n.ni, f.buf + PG, PG, A_R | SPIN_AA_FLUSH,
				   log) == PTL_OK, "assoc flush");
	memset(&me, 0, sizeof(me));
	me.start = f.buf;
	me.length = 2 * PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
		     PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	/* 8 records per millisecond at most, until told */
	while (kid_line(self, line, sizeof(line), 1) != 0)
		spin_aa_log_poll(log, on_flush_rec, &f, 8, &got);
	KCHECK(self, strcmp(line, "done") == 0, "line %s", line);
	KCHECK(self, f.bad == 0, "%u bad records", f.bad);
	PtlMEUnlink(meh);
	KCHECK(self, spin_aa_assoc(n.ni, f.buf, 2 * PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok count=%" PRIu64, f.count);
	return 0;
}

/* NFLUSH 8-byte puts without acks, then spin_aa_flush: it must see every
 * one of them processed. */
static int
flush_ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(64);
	struct timespec t0, t1;
	ptl_handle_md_t md;
	struct kid_ni n;
	uint64_t val = 0;
	ptl_event_t ev;
	unsigned i;
	ptl_md_t d;
	int rc;

	KCHECK(self, loc != NULL, "alloc");
	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (i = 0; i < NFLUSH; i++) {
		memcpy(loc, &i, sizeof(i));
		do {
			rc = PtlPut(md, 0, 8, PTL_NO_ACK_REQ, t, ia->pt, MATCH,
				    0, NULL, 0);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "put %u: %d", i, rc);
		while (PtlEQGet(n.eq, &ev) == PTL_OK)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = spin_aa_flush(n.ni, t, ia->pt, MATCH, PG, &val, 30000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	KCHECK(self, rc == PTL_OK, "flush: %d", rc);
	KCHECK(self, val == NFLUSH, "flush saw %" PRIu64 " processed, want %u",
	       val, NFLUSH);
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok flush_us=%ld",
		(long)((t1.tv_sec - t0.tv_sec) * 1000000 +
		       (t1.tv_nsec - t0.tv_nsec) / 1000));
	return 0;
}

static void
run_flush(void)
{
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];

	kid_start(&tk, "aa-flush-target", 1, false, flush_target_main, NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-flush-initiator", 0, false, flush_ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	printf("itest_aa: active flush after %u redirected puts: %s\n", NFLUSH,
	       line);
	kid_end(&ik);
	kid_tell(&tk, "done");
	kid_expect(&tk, "ok", line, sizeof(line));
	ITEST_CHECK(strcmp(line, "ok count=1000") == 0, "target %s", line);
	kid_end(&tk);
}

/* ---- full logs: back-pressure and drop ----------------------------------------- */

#define NBP 1000u
#define BP_RING 16384u /* 128 records of 8 bytes, 256 without data */

/* What the initiator does to the target's marked page 0. */
enum bp_op {
	BP_PUT,      /* 8-byte puts to an R|WLD page (redirected) */
	BP_GET,      /* 8-byte gets of an R|RLD page */
	BP_ATOMIC,   /* PtlAtomic SUM of 1 (int64) on a W|R|WL page */
	BP_IOVEC,    /* 8-byte puts to an iovec ME of two 4-byte entries on
			an R|WLD page: two records per put */
	BP_HANDLER,  /* 8-byte puts whose checksum handler DMAs them to a
			W|R|WLD page */
	BP_GETREF,   /* 8-byte gets of an RL page (R=0): refused, one
			GET_BLOCKED record each */
};

static const char *const bp_names[] = {
	[BP_PUT] = "puts", [BP_GET] = "gets", [BP_ATOMIC] = "atomics",
	[BP_IOVEC] = "iovec-ME puts", [BP_HANDLER] = "handler DMAs",
	[BP_GETREF] = "refused gets",
};

struct bp_arg {
	bool drop;
	enum bp_op op;
	unsigned nid, pid, pt;  /* the initiator's target */
};

struct bp_count {
	enum bp_op op;
	unsigned n;
};

static int
on_bp_rec(void *arg, const struct spin_aa_rec *r)
{
	struct bp_count *bc = arg;

	switch (bc->op) {
	case BP_PUT:
		bc->n += r->kind == SPIN_AA_PUT_DATA && r->len == 8;
		break;
	case BP_GET:
		bc->n += r->kind == SPIN_AA_GET_DATA && r->len == 8;
		break;
	case BP_ATOMIC:
		bc->n += r->kind == SPIN_AA_ATOMIC && r->len == 0;
		break;
	case BP_IOVEC:
		bc->n += r->kind == SPIN_AA_PUT_DATA && r->len == 4;
		break;
	case BP_HANDLER:
		bc->n += r->kind == SPIN_AA_PUT_DATA && r->len == 8 &&
			 (r->flags & SPIN_AA_F_HANDLER);
		break;
	case BP_GETREF:
		bc->n += r->kind == SPIN_AA_GET_BLOCKED && r->len == 0;
		break;
	}
	return 0;
}

/* A target whose 16 KiB log is not consumed until told "consume". */
static int
bp_target_main(struct kid *self, void *arg)
{
	static const unsigned bits[] = {
		[BP_PUT] = A_R | A_WLD, [BP_GET] = A_R | A_RLD,
		[BP_ATOMIC] = A_W | A_R | A_WL, [BP_IOVEC] = A_R | A_WLD,
		[BP_HANDLER] = A_W | A_R | A_WLD, [BP_GETREF] = A_RL,
	};
	const struct bp_arg *ba = arg;
	struct spin_csum_args ca = { .version = SPIN_CSUM_ARGS_VERSION,
				     .flags = SPIN_CSUM_F_COPY,
				     .result_off = PG };
	struct spin_ctx_desc cd = { .family = "checksum", .args = &ca,
				    .args_len = sizeof(ca) };
	struct bp_count bc = { .op = ba->op };
	spin_handle_ctx_t ctx = SPIN_CTX_NONE;
	struct spin_aa_log_status st;
	spin_handle_aalog_t log;
	ptl_iovec_t iov[2];
	ptl_handle_me_t meh;
	unsigned got;
	int64_t sum;
	struct kid_ni n;
	char line[64];
	uint8_t *raw, *buf;
	ptl_me_t me;

	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc(3 * PG);
	KCHECK(self, raw != NULL, "alloc");
	buf = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(buf, 0, 2 * PG);
	KCHECK(self, aa_log_new(n.ni, BP_RING,
				ba->drop ? SPIN_AA_LOG_DROP : 0, 0,
				&log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, buf, PG, bits[ba->op], log) == PTL_OK,
	       "assoc");
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
		     PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	if (ba->op == BP_IOVEC) {
		iov[0].iov_base = buf;
		iov[0].iov_len = 4;
		iov[1].iov_base = buf + 64;
		iov[1].iov_len = 4;
		me.start = iov;
		me.length = 2;
		me.options |= PTL_IOVEC;
	}
	if (ba->op == BP_HANDLER) {
		/* the data to page 0, the result to page 1 (unmarked) */
		me.length = 2 * PG;
		KCHECK(self, spin_ctx_install(n.ni, &cd, &ctx) == PTL_OK,
		       "ctx");
		KCHECK(self, spin_me_append(n.ni, n.pt, &me, PTL_PRIORITY_LIST,
					    ctx, NULL, &meh) == PTL_OK,
		       "spin_me_append");
	} else {
		KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST,
					 NULL, &meh) == PTL_OK, "PtlMEAppend");
	}
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "consume") == 0, "no consume line");
	while (kid_line(self, line, sizeof(line), 1) != 0)
		while (spin_aa_log_poll(log, on_bp_rec, &bc, 64, &got) ==
		       PTL_OK)
			;
	KCHECK(self, strcmp(line, "done") == 0, "line %s", line);
	while (spin_aa_log_poll(log, on_bp_rec, &bc, 64, &got) == PTL_OK)
		;
	KCHECK(self, spin_aa_log_status(log, &st) == PTL_OK, "status");
	memcpy(&sum, buf, sizeof(sum));
	PtlMEUnlink(meh);
	if (ctx != SPIN_CTX_NONE)
		KCHECK(self, spin_ctx_free(ctx) == PTL_OK, "ctx free");
	KCHECK(self, spin_aa_assoc(n.ni, buf, PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok count=%u lost=%" PRIu64 " sum=%" PRId64, bc.n,
		st.lost, sum);
	return 0;
}

/* NBP operations with acks (replies for gets); counts those that say
 * DROPPED, and PERM_VIOLATION (refused gets). */
static int
bp_ini_main(struct kid *self, void *arg)
{
	const struct bp_arg *ba = arg;
	ptl_process_t t = { .phys = { ba->nid, ba->pid } };
	uint8_t *loc = spin_host_alloc(64);
	unsigned i, acks = 0, dropped = 0, perm = 0, bad = 0, which;
	const bool get = ba->op == BP_GET || ba->op == BP_GETREF;
	const int64_t one = 1;
	ptl_handle_md_t md;
	struct kid_ni n;
	ptl_event_t ev;
	ptl_md_t d;
	int rc;

	KCHECK(self, loc != NULL, "alloc");
	memcpy(loc, &one, sizeof(one));
	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (i = 0; i < NBP || acks < NBP;) {
		if (i < NBP) {
			if (get)
				rc = PtlGet(md, 8, 8, t, ba->pt, MATCH, 0,
					    NULL);
			else if (ba->op == BP_ATOMIC)
				rc = PtlAtomic(md, 0, 8, PTL_ACK_REQ, t,
					       ba->pt, MATCH, 0, NULL, 0,
					       PTL_SUM, PTL_INT64_T);
			else
				rc = PtlPut(md, 0, 8, PTL_ACK_REQ, t, ba->pt,
					    MATCH, 0, NULL, 0);
			KCHECK(self, rc == PTL_OK || rc == PTL_NO_SPACE,
			       "op %u: %d", i, rc);
			i += rc == PTL_OK;
		}
		rc = PtlEQPoll(&n.eq, 1, i < NBP ? 0 : 30000, &ev, &which);
		if (i == NBP)
			KCHECK(self, rc == PTL_OK, "ack %u: none", acks);
		if (rc != PTL_OK ||
		    ev.type != (get ? PTL_EVENT_REPLY : PTL_EVENT_ACK))
			continue;
		acks++;
		dropped += ev.ni_fail_type == PTL_NI_DROPPED;
		perm += ev.ni_fail_type == PTL_NI_PERM_VIOLATION;
		bad += ev.ni_fail_type != PTL_NI_OK &&
		       ev.ni_fail_type != PTL_NI_DROPPED &&
		       ev.ni_fail_type != PTL_NI_PERM_VIOLATION;
	}
	KCHECK(self, bad == 0, "%u acks failed otherwise", bad);
	KCHECK(self, perm == (ba->op == BP_GETREF ? NBP : 0),
	       "%u acks say PERM_VIOLATION", perm);
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok dropped=%u", dropped);
	return 0;
}

/* Records of the op per operation, and how many a full 16 KiB ring
 * holds. */
static unsigned
bp_per_op(enum bp_op op)
{
	return op == BP_IOVEC ? 2 : 1;
}

static unsigned
bp_ring_holds(enum bp_op op)
{
	/* records without data take 64 bytes */
	return op == BP_ATOMIC || op == BP_GETREF ? BP_RING / 64 :
	       BP_RING / 128;
}

/* Records the NIC logs in one run_full (exactly once). */
static unsigned long
bp_logged(enum bp_op op, bool drop)
{
	return drop ? bp_ring_holds(op) : bp_per_op(op) * NBP;
}

/* spinnic's telemetry socket (the back-pressure runs read node 1's
 * counters while they run) */
static int tel_fd = -1;

/* What node 1 has held back so far: packets refused for a full log,
 * replies, atomics and gets parked, handler records held on the NIC. */
static long long
held_back(void)
{
	static const char *const keys[] = {
		"drop_aa_full", "reply_waits", "atomic_waits", "get_waits",
		"dma_waits",
	};
	char *r = tel_query(tel_fd, "/spinnic/aa,1");
	long long v = 0;
	unsigned i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		v += tel_need(r, "node1", keys[i]);
	free(r);
	return v;
}

/* The consumer starts once the NIC holds something back, so that the
 * run tests back-pressure however slowly the initiator starts (under
 * ASan, on a loaded machine), then a little later, so that more waits. */
static void
await_held_back(long long before)
{
	unsigned ms;

	for (ms = 0; held_back() == before; ms++) {
		ITEST_CHECK(ms < 60000, "the NIC held nothing back in 60 s");
		usleep(1000);
	}
	usleep(50000);
}

static void
run_full(bool drop, enum bp_op op)
{
	struct bp_arg ba = { .drop = drop, .op = op };
	const unsigned holds = bp_ring_holds(op), per = bp_per_op(op);
	unsigned count, dropped, want_dropped;
	unsigned long long lost;
	long long sum, before;
	struct kid tk, ik;
	char line[256];

	kid_start(&tk, "aa-bp-target", 1, false, bp_target_main, &ba);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ba.nid, &ba.pid,
			   &ba.pt) == 3, "target line %s", line);
	before = held_back();
	kid_start(&ik, "aa-bp-initiator", 0, false, bp_ini_main, &ba);
	if (drop) {
		/* every put answered while nobody consumes */
		kid_expect(&ik, "ok", line, sizeof(line));
		kid_tell(&tk, "consume");
	} else {
		/* the puts wait for the consumer, which starts late */
		await_held_back(before);
		kid_tell(&tk, "consume");
		kid_expect(&ik, "ok", line, sizeof(line));
	}
	ITEST_CHECK(sscanf(line, "ok dropped=%u", &dropped) == 1, "%s", line);
	kid_end(&ik);
	kid_tell(&tk, "done");
	kid_expect(&tk, "ok", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ok count=%u lost=%llu sum=%lld", &count,
			   &lost, &sum) == 3, "%s", line);
	kid_end(&tk);
	printf("itest_aa: full log of %s, %s: %u records processed, %llu "
	       "lost, %u DROPPED\n", bp_names[op],
	       drop ? "drop" : "back-pressure", count, lost, dropped);
	/* a redirected piece whose record is lost fails its put; a lost
	 * record of a written piece (atomic, handler DMA) or of a get
	 * only counts */
	want_dropped = op == BP_PUT ? NBP - holds :
		       op == BP_IOVEC ? NBP - holds / per : 0;
	if (drop)
		ITEST_CHECK(count == holds && lost == per * NBP - holds &&
			    dropped == want_dropped,
			    "drop: exact loss (count %u, lost %llu, dropped "
			    "%u, want %u, %u, %u)", count, lost, dropped,
			    holds, per * NBP - holds, want_dropped);
	else
		ITEST_CHECK(count == per * NBP && lost == 0 && dropped == 0,
			    "back-pressure: nothing lost (count %u, lost "
			    "%llu, dropped %u)", count, lost, dropped);
	if (op == BP_ATOMIC)
		ITEST_CHECK(sum == NBP, "atomics: sum %lld, want %u", sum,
			    NBP);
}

/* ---- notification: spin_aa_log_wait, woken every 10 records ------------------- */

#define NNOTIFY 100u

static int
notify_target_main(struct kid *self, void *arg)
{
	unsigned count = 0, returns = 0, got;
	struct timespec t0, t1;
	spin_handle_aalog_t log;
	ptl_handle_me_t meh;
	uint8_t hdr[64];
	struct kid_ni n;
	uint32_t wakes;
	uint8_t *raw, *buf;
	ptl_me_t me;
	long ms;
	int rc;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc(2 * PG);
	KCHECK(self, raw != NULL, "alloc");
	buf = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	KCHECK(self, aa_log_new(n.ni, 1u << 16, 0, 10, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, buf, PG, A_R | A_WLD, log) == PTL_OK,
	       "assoc");
	/* nothing there: the wait times out */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = spin_aa_log_wait(log, 50);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	KCHECK(self, rc == PTL_EQ_EMPTY && ms >= 45, "empty wait: %d after "
	       "%ld ms", rc, ms);
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	while (count < NNOTIFY) {
		rc = spin_aa_log_wait(log, 10000);
		KCHECK(self, rc == PTL_OK || rc == PTL_EQ_EMPTY,
		       "wait: %d after %u records", rc, count);
		returns++;
		while (spin_aa_log_poll(log, on_count, &count, 64, &got) ==
		       PTL_OK)
			;
	}
	KCHECK(self, spin_aa_log_dump(log, hdr, sizeof(hdr), NULL) == PTL_OK,
	       "dump");
	memcpy(&wakes, hdr + 32, sizeof(wakes)); /* the futex word */
	PtlMEUnlink(meh);
	KCHECK(self, spin_aa_assoc(n.ni, buf, PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok count=%u returns=%u wakes=%u", count, returns,
		wakes);
	return 0;
}

/* NNOTIFY 8-byte puts, each waiting for its ack. */
static int
notify_ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(64);
	ptl_handle_md_t md;
	struct kid_ni n;
	unsigned i, which;
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
	for (i = 0; i < NNOTIFY; i++) {
		ptl_event_t ev;

		KCHECK(self, PtlPut(md, 0, 8, PTL_ACK_REQ, t, ia->pt, MATCH, 0,
				    NULL, 0) == PTL_OK, "put");
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.ni_fail_type == PTL_NI_OK, "ack %u", i);
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

static void
run_notify(void)
{
	unsigned count, returns, wakes;
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];

	kid_start(&tk, "aa-notify-target", 1, false, notify_target_main,
		  NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-notify-initiator", 0, false, notify_ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	ITEST_CHECK(sscanf(line, "ok count=%u returns=%u wakes=%u", &count,
			   &returns, &wakes) == 3, "%s", line);
	printf("itest_aa: %u records with notify_every 10: %u NIC wakes, %u "
	       "waits returned\n", count, wakes, returns);
	ITEST_CHECK(count == NNOTIFY && wakes >= 1 && wakes <= NNOTIFY / 10,
		    "wakes %u for %u records", wakes, count);
}

int
main(void)
{
	unsigned long want = 0;
	char tel_path[256];
	enum bp_op op;

	itest_init("itest_aa_flow", 240);
	itest_spinnic_start(NULL);
	if (itest_log_word("telemetry: ", tel_path, sizeof(tel_path)) != 0 ||
	    tel_path[0] != '/')
		itest_fail("spinnic did not log its telemetry socket");
	tel_fd = tel_connect(tel_path);
	run_flush();
	want += NFLUSH;
	for (op = BP_PUT; op <= BP_GETREF; op++) {
		run_full(false, op);
		run_full(true, op);
		want += bp_logged(op, false) + bp_logged(op, true);
	}
	run_notify();
	want += NNOTIFY;
	close(tel_fd);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	aa_expect_logged("itest_aa_flow", want);
	ITEST_CHECK(itest_counter(1, "aa_backpressure") > 0 &&
		    itest_counter(1, "drop_aa_full") > 0 &&
		    itest_counter(1, "aa_reply_waits") > 0 &&
		    itest_counter(1, "aa_atomic_waits") > 0 &&
		    itest_counter(1, "aa_dma_waits") > 0 &&
		    itest_counter(1, "aa_get_waits") > 0,
		    "the paused consumer held nothing back "
		    "(aa_backpressure %lld, drop_aa_full %lld, "
		    "aa_reply_waits %lld, aa_atomic_waits %lld, "
		    "aa_dma_waits %lld, aa_get_waits %lld)",
		    itest_counter(1, "aa_backpressure"),
		    itest_counter(1, "drop_aa_full"),
		    itest_counter(1, "aa_reply_waits"),
		    itest_counter(1, "aa_atomic_waits"),
		    itest_counter(1, "aa_dma_waits"),
		    itest_counter(1, "aa_get_waits"));
	ITEST_CHECK(itest_counter(1, "aa_dma_wait_lost") <= 0,
		    "%lld handler DMAs gave up waiting",
		    itest_counter(1, "aa_dma_wait_lost"));
	return 0;
}
