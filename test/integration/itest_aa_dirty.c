/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "aa_dirty" access handler (paper 004 §4.3's dirty set, on the NIC;
 * doc/NOTES.md "Active Access", fourth slice): a target's 16 pages log
 * their accesses to a log consumed on the NIC by aa_dirty, which sets one
 * byte per page that a remote write reached. An initiator puts to pages
 * 1 (twice), 5, 9 and 15 (W|R|WL), redirects a put to page 3 (R|WLD:
 * memory untouched), has a put to page 4 refused (R|WL) and gets from
 * page 6 (W|R|WL|RL); its active flush returns the records processed (8)
 * and the bitmap is exactly {1, 5, 9, 15}; over the lossy link too.
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
#include "active_access.h"

#define NDATA 16u
#define P_BITMAP 16u
#define P_FLUSH 17u
#define NPG 18u
#define MATCH_F 0xaa18ull
#define NRECS 8u

static int
target_main(struct kid *self, void *arg)
{
	struct aa_dirty_args da = {
		.version = AA_DIRTY_ARGS_VERSION, .npages = NDATA,
		.bitmap_off = P_BITMAP * PG, .processed_off = P_FLUSH * PG,
	};
	struct spin_ctx_desc cd = { 0 };
	struct spin_aa_log_desc ld = { .size = 1u << 16,
				       .flags = SPIN_AA_LOG_HANDLER };
	spin_handle_aalog_t log;
	spin_handle_ctx_t ctx;
	ptl_handle_me_t meh[2];
	struct kid_ni n;
	uint8_t *raw, *b;
	char line[64];
	unsigned i;
	ptl_me_t me;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc((NPG + 1) * PG);
	KCHECK(self, raw != NULL, "alloc");
	b = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(b, 0, NPG * PG);
	da.base = (uintptr_t)b;
	cd.family = "aa_dirty";
	cd.args = &da;
	cd.args_len = sizeof(da);
	da.flags = 1;
	KCHECK(self, spin_ctx_install(n.ni, &cd, &ctx) != PTL_OK,
	       "bad aa_dirty args taken");
	da.flags = 0;
	KCHECK(self, spin_ctx_install(n.ni, &cd, &ctx) == PTL_OK, "ctx");
	ld.ctx = ctx;
	ld.win_addr = b;
	ld.win_len = NPG * PG;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, b, NDATA * PG, A_W | A_R | A_WL,
				   log) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + 3 * PG, PG, A_R | A_WLD, log) ==
	       PTL_OK &&
	       spin_aa_assoc(n.ni, b + 4 * PG, PG, A_R | A_WL, log) ==
	       PTL_OK &&
	       spin_aa_assoc(n.ni, b + 6 * PG, PG, A_W | A_R | A_WL | A_RL,
			     log) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_FLUSH * PG, PG, A_R | SPIN_AA_FLUSH,
			     log) == PTL_OK, "assoc");
	memset(&me, 0, sizeof(me));
	me.start = b;
	me.length = NDATA * PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
		     PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh[0]) == PTL_OK, "ME");
	me.start = b + P_FLUSH * PG;
	me.length = PG;
	me.options = PTL_ME_OP_GET | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_bits = MATCH_F;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh[1]) == PTL_OK, "flush ME");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	for (i = 0; i < NDATA; i++) {
		const bool want = i == 1 || i == 5 || i == 9 || i == 15;

		KCHECK(self, b[P_BITMAP * PG + i] == (want ? 1 : 0),
		       "page %u: dirty byte %u", i, b[P_BITMAP * PG + i]);
	}
	KCHECK(self, kid_bytes_all(b + P_BITMAP * PG + NDATA, PG - NDATA, 0),
	       "bitmap written past its pages");
	KCHECK(self, b[PG] == 0x61 && b[15 * PG + 8] == 0x61,
	       "written pages not written");
	KCHECK(self, kid_bytes_all(b + 3 * PG, 2 * PG, 0),
	       "redirected or refused page written");
	PtlMEUnlink(meh[0]);
	PtlMEUnlink(meh[1]);
	KCHECK(self, spin_aa_assoc(n.ni, b, NPG * PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	KCHECK(self, spin_ctx_free(ctx) == PTL_OK, "ctx free");
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* puts {page, offset, fail}, a get from page 6, then the flush */
static int
ini_main(struct kid *self, void *arg)
{
	static const struct { unsigned page, off; int fail; } puts[] = {
		{ 1, 0, PTL_NI_OK }, { 1, 64, PTL_NI_OK }, { 5, 0, PTL_NI_OK },
		{ 9, 0, PTL_NI_OK }, { 15, 8, PTL_NI_OK }, { 3, 0, PTL_NI_OK },
		{ 4, 0, PTL_NI_PERM_VIOLATION },
	};
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(64);
	ptl_handle_md_t md;
	struct kid_ni n;
	unsigned i, which;
	uint64_t val = 0;
	ptl_event_t ev;
	ptl_md_t d;

	KCHECK(self, loc != NULL, "alloc");
	memset(loc, 0x61, 64);
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (i = 0; i < sizeof(puts) / sizeof(puts[0]); i++) {
		KCHECK(self, PtlPut(md, 0, 8, PTL_ACK_REQ, t, ia->pt, MATCH,
				    puts[i].page * PG + puts[i].off, NULL, 0) ==
		       PTL_OK, "put %u", i);
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.type == PTL_EVENT_ACK &&
		       (int)ev.ni_fail_type == puts[i].fail,
		       "ack %u: type %d fail %d", i, (int)ev.type,
		       (int)ev.ni_fail_type);
	}
	KCHECK(self, PtlGet(md, 8, 8, t, ia->pt, MATCH, 6 * PG, NULL) ==
	       PTL_OK, "get");
	KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) == PTL_OK &&
	       ev.type == PTL_EVENT_REPLY && ev.ni_fail_type == PTL_NI_OK,
	       "reply: type %d fail %d", (int)ev.type, (int)ev.ni_fail_type);
	/* returns once aa_dirty ran for every record before it */
	KCHECK(self, spin_aa_flush(n.ni, t, ia->pt, MATCH_F, 0, &val, 20000)
	       == PTL_OK, "flush");
	KCHECK(self, val == NRECS, "processed %" PRIu64 ", want %u", val,
	       NRECS);
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];

	itest_init("itest_aa_dirty", 90);
	itest_spinnic_start(NULL);
	kid_start(&tk, "aa-dirty-target", 1, false, target_main, NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-dirty-initiator", 0, false, ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	kid_tell(&tk, "check");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	/* 8 records, each handled once (however often the link repeats) */
	ITEST_CHECK(itest_counter(1, "aa_records") == NRECS &&
		    itest_counter(1, "aa_handled") == NRECS,
		    "node 1: aa_records %lld aa_handled %lld",
		    itest_counter(1, "aa_records"),
		    itest_counter(1, "aa_handled"));
	ITEST_CHECK(getenv("SPINNIC_ITEST_FAULTS") == NULL ||
		    itest_counter(0, "faults") + itest_counter(1, "faults") >
		    0, "no fault was injected");
	return 0;
}
