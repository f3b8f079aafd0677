/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node fault log (doc/NOTES.md "Active Access", fault log): pages
 * marked WL with no log (the paper's E = 0) send their records to their
 * owner's fault log on the NIC. Two targets on node 1 take puts from one
 * initiator: A's page refuses writes (R|WL: PUT_BLOCKED, memory
 * untouched), B's logs them (W|R|WL: PUT_META, memory written). A gets
 * SPIN_AA_FAULTS_MAX + 4 puts: it reads exactly the first
 * SPIN_AA_FAULTS_MAX records, in order, and 4 lost; B reads exactly its
 * 5, none of A's (and A none of B's). The node's counters say the same;
 * over the lossy link each record is there once. spinnic runs with the
 * IOTLB model (--aa-iotlb 64,4): every put is one lookup, the two pages
 * (one per client) miss once each; bad --aa-iotlb values are refused
 * before the EAL.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "harness.h"
#include "itest_aa.h"
#include "kid.h"

#define NA (SPIN_AA_FAULTS_MAX + 4u)  /* puts to A */
#define NB 5u                         /* puts to B */
#define B_TAG 1000u                   /* B's hdr_data: B_TAG + i */

/* spinnic --aa-iotlb @p spec must exit 2 with one line, before the EAL */
static void
expect_iotlb_refused(const char *spec)
{
	const char *a[] = { "--", "--virtual", "2", "--aa-iotlb", spec,
			    NULL };
	const char *log, *nl;
	int st;

	st = itest_spinnic_run(a, 30000);
	log = itest_spinnic_log();
	nl = strchr(log, '\n');
	ITEST_CHECK(st == 2 && strstr(log, "--aa-iotlb") != NULL &&
		    nl != NULL && nl[1] == '\0' && strstr(log, "EAL:") == NULL,
		    "--aa-iotlb %s: status %d, want 2 and one line\n%s", spec,
		    st, log);
}

struct tgt_arg {
	bool refuse;   /* A: R|WL; B: W|R|WL */
	unsigned puts; /* puts it receives */
};

static int
target_main(struct kid *self, void *arg)
{
	const struct tgt_arg *ta = arg;
	static struct spin_aa_rec r[SPIN_AA_FAULTS_MAX];
	struct spin_aa_fault_status fs;
	const unsigned kept = ta->puts < SPIN_AA_FAULTS_MAX ? ta->puts :
			      SPIN_AA_FAULTS_MAX;
	ptl_handle_me_t meh;
	unsigned got = 0, n, i;
	struct kid_ni n_;
	uint8_t *raw, *pg;
	char line[64];
	ptl_me_t me;

	if (kid_ni_open(self, &n_, 64) != 0)
		return 1;
	raw = spin_host_alloc(2 * PG);
	KCHECK(self, raw != NULL, "alloc");
	pg = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(pg, 0, PG);
	/* data bits still need a log */
	KCHECK(self, spin_aa_assoc(n_.ni, pg, PG, A_R | A_WLD,
				   SPIN_AA_LOG_NONE) == PTL_ARG_INVALID,
	       "WLD with no log taken");
	KCHECK(self, spin_aa_assoc(n_.ni, pg, PG, ta->refuse ?
				   A_R | A_WL : A_W | A_R | A_WL,
				   SPIN_AA_LOG_NONE) == PTL_OK, "assoc E=0");
	KCHECK(self, spin_aa_fault_read(n_.ni, r, 4, &n, &fs) ==
	       PTL_EQ_EMPTY && n == 0 && fs.logged == 0 && fs.lost == 0,
	       "fault log not empty at first");
	KCHECK(self, spin_aa_fault_read(n_.ni, NULL, 4, &n, &fs) ==
	       PTL_ARG_INVALID && spin_aa_fault_read(n_.ni, r, 0, &n, &fs) ==
	       PTL_ARG_INVALID, "bad fault reads taken");
	memset(&me, 0, sizeof(me));
	me.start = pg;
	me.length = PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n_.ni, n_.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n_.id.phys.nid, n_.id.phys.pid,
		n_.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	/* two reads: 100, then the rest; records in put order */
	while (got < kept) {
		int st = spin_aa_fault_read(n_.ni, r, got == 0 ? 100 : 1000,
					    &n, &fs);

		KCHECK(self, st == PTL_OK && n > 0, "fault read: %d, %u "
		       "after %u", st, n, got);
		for (i = 0; i < n; i++, got++) {
			uint64_t want = ta->refuse ? got : B_TAG + got;

			KCHECK(self, r[i].hdr_data == want, "record %u: "
			       "hdr_data %" PRIu64 ", want %" PRIu64
			       " (another client's?)", got, r[i].hdr_data,
			       want);
			KCHECK(self, r[i].kind == (ta->refuse ?
			       SPIN_AA_PUT_BLOCKED : SPIN_AA_PUT_META) &&
			       r[i].len == 0 && r[i].data == NULL &&
			       r[i].addr == pg + 8 * got &&
			       r[i].msg_off == 0 && r[i].mode == (ta->refuse ?
			       A_R | A_WL : A_W | A_R | A_WL),
			       "record %u: kind %u len %u addr %p mode %#x",
			       got, r[i].kind, r[i].len, r[i].addr,
			       r[i].mode);
		}
	}
	KCHECK(self, spin_aa_fault_read(n_.ni, r, 8, &n, &fs) ==
	       PTL_EQ_EMPTY && n == 0 && fs.logged == kept &&
	       fs.lost == ta->puts - kept, "after: %u more, logged %" PRIu64
	       " lost %" PRIu64, n, fs.logged, fs.lost);
	for (i = 0; i < NB && !ta->refuse; i++)
		KCHECK(self, pg[8 * i] == (uint8_t)(0x40 + i),
		       "B's byte %u not written", 8 * i);
	for (i = 0; i < PG && ta->refuse; i++)
		KCHECK(self, pg[i] == 0, "A's byte %u written", i);
	PtlMEUnlink(meh);
	KCHECK(self, spin_aa_assoc(n_.ni, pg, PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	kid_ni_close(&n_);
	kid_say(self, "ok records=%u lost=%" PRIu64, got, fs.lost);
	return 0;
}

struct two {
	struct ini_arg a, b;
};

/* puts of 8 bytes at 8 * i, acked: to A refused, to B done */
static int
ini_main(struct kid *self, void *arg)
{
	const struct two *tw = arg;
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
	for (i = 0; i < NA + NB; i++) {
		const bool to_a = i < NA;
		const struct ini_arg *t = to_a ? &tw->a : &tw->b;
		ptl_process_t p = { .phys = { t->nid, t->pid } };
		unsigned k = to_a ? i : i - NA;
		ptl_event_t ev;

		memset(loc, 0x40 + k, 8);
		KCHECK(self, PtlPut(md, 0, 8, PTL_ACK_REQ, p, t->pt, MATCH,
				    8 * k, NULL, to_a ? k : B_TAG + k) ==
		       PTL_OK, "put %u", i);
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.type == PTL_EVENT_ACK &&
		       ev.ni_fail_type == (to_a ? PTL_NI_PERM_VIOLATION :
					   PTL_NI_OK),
		       "ack %u: type %d fail %d", i, (int)ev.type,
		       (int)ev.ni_fail_type);
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	struct tgt_arg aa = { .refuse = true, .puts = NA };
	struct tgt_arg ab = { .refuse = false, .puts = NB };
	unsigned ra, rb;
	unsigned long la, lb;
	struct kid ka, kb, ki;
	char line[256];
	struct two tw;

	itest_init("itest_aa_fault", 120);
	expect_iotlb_refused("48");
	expect_iotlb_refused("64,128");
	expect_iotlb_refused("64,3");
	expect_iotlb_refused("64,4,fifo");
	expect_iotlb_refused("131072");
	{
		const char *opts[] = { "--aa-iotlb", "64,4", NULL };

		itest_spinnic_start(opts);
	}
	kid_start(&ka, "aa-fault-A", 1, false, target_main, &aa);
	kid_expect(&ka, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &tw.a.nid, &tw.a.pid,
			   &tw.a.pt) == 3, "A's line %s", line);
	kid_start(&kb, "aa-fault-B", 1, false, target_main, &ab);
	kid_expect(&kb, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &tw.b.nid, &tw.b.pid,
			   &tw.b.pt) == 3, "B's line %s", line);
	kid_start(&ki, "aa-fault-ini", 0, false, ini_main, &tw);
	kid_expect(&ki, "ok", line, sizeof(line));
	kid_end(&ki);
	kid_tell(&ka, "check");
	kid_expect(&ka, "ok", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ok records=%u lost=%lu", &ra, &la) == 2,
		    "%s", line);
	kid_end(&ka);
	kid_tell(&kb, "check");
	kid_expect(&kb, "ok", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ok records=%u lost=%lu", &rb, &lb) == 2,
		    "%s", line);
	kid_end(&kb);
	printf("itest_aa_fault: A %u records %lu lost, B %u records %lu lost\n",
	       ra, la, rb, lb);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	/* no access log was written (a zero counter is not printed) */
	ITEST_CHECK(itest_counter(1, "aa_records") <= 0,
		    "aa_records %lld", itest_counter(1, "aa_records"));
	ITEST_CHECK(getenv("SPINNIC_ITEST_FAULTS") == NULL ||
		    itest_counter(0, "faults") + itest_counter(1, "faults") >
		    0, "no fault was injected");
	ITEST_CHECK(itest_counter(1, "aa_faults") == SPIN_AA_FAULTS_MAX + NB &&
		    itest_counter(1, "aa_faults_lost") == NA -
		    SPIN_AA_FAULTS_MAX &&
		    itest_counter(1, "aa_faults_read") ==
		    SPIN_AA_FAULTS_MAX + NB,
		    "node 1: aa_faults %lld lost %lld read %lld",
		    itest_counter(1, "aa_faults"),
		    itest_counter(1, "aa_faults_lost"),
		    itest_counter(1, "aa_faults_read"));
	/* the IOTLB model: one lookup per put (each one 8-byte piece, once
	 * however often the link repeats it), A's and B's page one miss
	 * each (the marks came before every put, the unmarks after) */
	ITEST_CHECK(itest_counter(1, "aa_iotlb_hits") == NA + NB - 2 &&
		    itest_counter(1, "aa_iotlb_misses") == 2 &&
		    itest_counter(1, "aa_iotlb_walk_reads") == 8,
		    "node 1 IOTLB: hits %lld misses %lld walk reads %lld",
		    itest_counter(1, "aa_iotlb_hits"),
		    itest_counter(1, "aa_iotlb_misses"),
		    itest_counter(1, "aa_iotlb_walk_reads"));
	return 0;
}
