/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic --aa-page-size (doc/NOTES.md "Active Access", third slice):
 * sizes that are not a power of two in 4K..1G are refused before the EAL
 * with one line; with --aa-page-size 64K a client learns the page
 * (spin_aa_page_size), marks aligned to 4 KiB only are refused, a 64 KiB
 * mark redirects puts anywhere in the page (its last bytes included) and
 * logs them in 4 KiB pieces; the default NIC says 4096.
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

#define BIG (64u * 1024)

/* spinnic with these options must exit 2 with one line naming the
 * option, before the EAL */
static void
expect_refused(const char *size)
{
	const char *a[] = { "--", "--virtual", "2", "--aa-page-size", size,
			    NULL };
	const char *log, *nl;
	int st;

	st = itest_spinnic_run(a, 30000);
	log = itest_spinnic_log();
	nl = strchr(log, '\n');
	ITEST_CHECK(st == 2 && strstr(log, "--aa-page-size") != NULL &&
		    nl != NULL && nl[1] == '\0' && strstr(log, "EAL:") == NULL,
		    "--aa-page-size %s: status %d, want 2 and one line\n%s",
		    size, st, log);
}

struct page_res {
	unsigned records, bad;
};

static int
on_rec(void *arg, const struct spin_aa_rec *r)
{
	struct page_res *pr = arg;

	pr->records++;
	pr->bad += r->kind != SPIN_AA_PUT_DATA ||
		   !(r->flags & SPIN_AA_F_REDIRECTED) || r->len > SPIN_AA_PAGE;
	return 0;
}

/* The target: a 64 KiB page marked R|WLD; its memory must stay zero. */
static int
target_main(struct kid *self, void *arg)
{
	const uint64_t want = *(const uint64_t *)arg;
	struct page_res pr = { 0 };
	spin_handle_aalog_t log;
	ptl_handle_me_t meh;
	uint64_t page = 0, j;
	struct kid_ni n;
	char line[64];
	uint8_t *raw, *buf;
	unsigned got;
	ptl_me_t me;

	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, spin_aa_page_size(n.ni, &page) == PTL_OK &&
	       page == want, "page size %" PRIu64 ", want %" PRIu64, page,
	       want);
	KCHECK(self, spin_aa_page_size(n.ni, NULL) == PTL_ARG_INVALID,
	       "NULL size_p");
	if (want != BIG) {
		kid_ni_close(&n);
		kid_say(self, "ok records=0");
		return 0;
	}
	raw = spin_host_alloc(3 * BIG);
	KCHECK(self, raw != NULL, "alloc");
	buf = (uint8_t *)(((uintptr_t)raw + BIG - 1) & ~(uintptr_t)(BIG - 1));
	memset(buf, 0, BIG);
	KCHECK(self, aa_log_new(n.ni, 1u << 16, 0, 0, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, buf + PG, BIG, A_R | A_WLD, log) ==
	       PTL_ARG_INVALID && spin_aa_assoc(n.ni, buf, PG, A_R | A_WLD,
					      log) == PTL_ARG_INVALID,
	       "a mark aligned to 4 KiB only was taken");
	KCHECK(self, spin_aa_assoc(n.ni, buf, BIG, A_R | A_WLD, log) == PTL_OK,
	       "assoc 64 KiB");
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = BIG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	while (spin_aa_log_poll(log, on_rec, &pr, 64, &got) == PTL_OK)
		;
	for (j = 0; j < BIG; j++)
		KCHECK(self, buf[j] == 0, "redirected byte %" PRIu64 " written",
		       j);
	KCHECK(self, pr.bad == 0, "%u bad records", pr.bad);
	PtlMEUnlink(meh);
	KCHECK(self, spin_aa_assoc(n.ni, buf, BIG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok records=%u", pr.records);
	return 0;
}

/* Three acked puts: 8 bytes at 0, 8 KiB at 4 KiB (two records), 8 bytes
 * at the page's last 8. */
static int
ini_main(struct kid *self, void *arg)
{
	static const uint64_t off[] = { 0, 4096, BIG - 8 };
	static const uint64_t len[] = { 8, 8192, 8 };
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(8192);
	unsigned i, which;
	ptl_handle_md_t md;
	struct kid_ni n;
	ptl_md_t d;

	KCHECK(self, loc != NULL, "alloc");
	memset(loc, 0x5a, 8192);
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 8192;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (i = 0; i < 3; i++) {
		ptl_event_t ev;

		KCHECK(self, PtlPut(md, 0, len[i], PTL_ACK_REQ, t, ia->pt,
				    MATCH, off[i], NULL, 0) == PTL_OK,
		       "put %u", i);
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.type == PTL_EVENT_ACK &&
		       ev.ni_fail_type == PTL_NI_OK, "ack %u", i);
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	uint64_t want = BIG;
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];
	unsigned records;

	itest_init("itest_aa_page", 90);
	expect_refused("5000");
	expect_refused("2K");
	expect_refused("2G");
	expect_refused("12K");
	{
		const char *opts[] = { "--aa-page-size", "64K", NULL };

		itest_spinnic_start(opts);
	}
	kid_start(&tk, "aa-page-target", 1, false, target_main, &want);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-page-initiator", 0, false, ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	kid_tell(&tk, "check");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	ITEST_CHECK(sscanf(line, "ok records=%u", &records) == 1, "%s", line);
	/* one record per (packet, 4 KiB piece), 2 KiB packets: 1 + 4 (8 KiB
	 * in four packets, each inside one piece) + 1 */
	printf("itest_aa_page: 64 KiB page: %u records\n", records);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	aa_expect_logged("itest_aa_page", records);
	ITEST_CHECK(records == 6, "%u records for three puts, want 6",
		    records);

	/* the default NIC: 4096 */
	want = 4096;
	itest_spinnic_start(NULL);
	kid_start(&tk, "aa-page-default", 1, false, target_main, &want);
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	itest_spinnic_finish();
	return 0;
}
