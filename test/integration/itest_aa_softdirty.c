/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The paper's premise (004 §4.3), through a real spinnic --virtual 2:
 * remote writes to a client's marked region pages do not set its
 * soft-dirty bits (/proc/self/clear_refs, pagemap bit 55) — the NIC
 * writes through its own mapping, as RDMA bypasses the MMU — while the
 * access log has every one of them. The target clears its bits, the
 * initiator puts 4 region pages and 4 malloc'd pages (W|R|WL), the
 * region pages must read clean and every page of both ranges must have
 * its records (each PUT_META, at the put's offset), nothing lost, and the
 * NIC must have logged exactly the records the target consumed. The
 * malloc'd pages' bits are printed, not checked (spinnic reaches them
 * through the kernel, which may well set them).
 *
 * Exits 77 (skip) where the kernel keeps no soft-dirty bits: pagemap or
 * clear_refs missing, or the control — a local write after a clear —
 * not setting the bit (first on an anonymous page before spinnic starts,
 * then on a region page of the target itself). A local write after the
 * remote ones must set the bit again (else the check proved nothing).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "harness.h"
#include "itest_aa.h"
#include "kid.h"

#define SD_PAGES 4u

/* Soft-dirty bit (pagemap bit 55) of the page at @p p: 0, 1, -1 error. */
static int
soft_dirty(int fd, const void *p)
{
	uint64_t e;
	off_t off = (off_t)((uintptr_t)p / PG * 8);

	if (pread(fd, &e, sizeof(e), off) != (ssize_t)sizeof(e))
		return -1;
	return (int)((e >> 55) & 1);
}

/* Clear the soft-dirty bits; @return 0, or -1 when unsupported. */
static int
soft_dirty_clear(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f == NULL)
		return -1;
	if (fputs("4", f) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * The control on @p page (of this process): cleared it reads 0, a local
 * write sets it. @return NULL when it holds, else why not.
 */
static const char *
soft_dirty_control(int fd, volatile uint8_t *page)
{
	int b;

	if (fd < 0)
		return "no /proc/self/pagemap";
	page[0] = 1;    /* mapped before the clear */
	if (soft_dirty_clear() != 0)
		return "no /proc/self/clear_refs";
	b = soft_dirty(fd, (const void *)page);
	if (b != 0)
		return b < 0 ? "pagemap unreadable" :
		       "the bit stays set after a clear";
	__atomic_store_n(&page[1], 2, __ATOMIC_SEQ_CST);
	if (soft_dirty(fd, (const void *)page) != 1)
		return "a local write does not set the bit";
	return NULL;
}

/* Before spinnic: where the kernel keeps no soft-dirty bits, skip. */
static void
skip_unless_kept(void)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint8_t *p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const char *why = p == MAP_FAILED ? "mmap" :
			  soft_dirty_control(fd, p);

	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED)
		munmap(p, PG);
	if (why != NULL) {
		printf("itest_aa_softdirty: SKIP: soft-dirty bits not kept "
		       "here (%s): premise not shown\n", why);
		exit(ITEST_SKIP);
	}
}

struct sd_count {
	uint8_t *reg, *mal;
	unsigned n, bad;
	unsigned reg_recs[SD_PAGES], mal_recs[SD_PAGES];
};

/* spin_aa_log_poll callback: per page of either range, PUT_META at the
 * put's offset (both puts write from offset 0) */
static int
on_sd(void *arg, const struct spin_aa_rec *r)
{
	struct sd_count *c = arg;
	const uint8_t *a = r->addr;
	uint8_t *base = NULL;
	unsigned *per = NULL;

	c->n++;
	if (a >= c->reg && a < c->reg + SD_PAGES * PG) {
		base = c->reg;
		per = c->reg_recs;
	} else if (a >= c->mal && a < c->mal + SD_PAGES * PG) {
		base = c->mal;
		per = c->mal_recs;
	}
	if (base == NULL || r->kind != SPIN_AA_PUT_META ||
	    r->msg_off != (uint64_t)(a - base)) {
		c->bad++;
		return 0;
	}
	per[(a - base) / PG]++;
	return 0;
}

/*
 * Region pages 0..SD_PAGES-1 and SD_PAGES malloc'd pages marked W|R|WL,
 * region page SD_PAGES unmarked (the control); after the control holds,
 * the bits are cleared and the initiator writes both ranges.
 */
static int
target_main(struct kid *self, void *arg)
{
	struct sd_count c = { 0 };
	unsigned p, got, dirty_region = 0, dirty_malloc = 0;
	struct spin_aa_log_status st;
	spin_handle_aalog_t log;
	ptl_handle_me_t meh[2];
	const char *why;
	struct kid_ni n;
	char line[64];
	uint8_t *raw;
	int fd, k, after;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc((SD_PAGES + 2) * PG);
	KCHECK(self, raw != NULL && posix_memalign((void **)&c.mal, PG,
						   SD_PAGES * PG) == 0,
	       "alloc");
	c.reg = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(c.reg, 1, (SD_PAGES + 1) * PG);
	memset(c.mal, 1, SD_PAGES * PG);
	KCHECK(self, aa_log_new(n.ni, 1u << 16, 0, 0, &log) == PTL_OK,
	       "log");
	for (k = 0; k < 2; k++) {
		uint8_t *b = k == 0 ? c.reg : c.mal;
		ptl_me_t me;

		KCHECK(self, spin_aa_assoc(n.ni, b, SD_PAGES * PG,
					   A_W | A_R | A_WL, log) == PTL_OK,
		       "assoc");
		memset(&me, 0, sizeof(me));
		me.start = b;
		me.length = SD_PAGES * PG;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = MATCH + (uint64_t)k;
		KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST,
					 NULL, &meh[k]) == PTL_OK, "append");
	}
	fd = open("/proc/self/pagemap", O_RDONLY);
	/* the control on the region itself: the mapping the NIC shares */
	why = soft_dirty_control(fd, c.reg + SD_PAGES * PG);
	if (why != NULL) {
		kid_say(self, "skip %s", why);
		kid_line(self, line, sizeof(line), 60000);
		return 0;
	}
	KCHECK(self, soft_dirty_clear() == 0, "clear_refs");
	for (p = 0; p <= SD_PAGES; p++)
		KCHECK(self, soft_dirty(fd, c.reg + p * PG) == 0,
		       "region page %u dirty after the clear", p);
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	for (p = 0; p < SD_PAGES; p++) {
		dirty_region += soft_dirty(fd, c.reg + p * PG) == 1;
		dirty_malloc += soft_dirty(fd, c.mal + p * PG) == 1;
	}
	/* the bits are still kept: a write of our own sets one */
	__atomic_store_n(&c.reg[SD_PAGES * PG + 2], 3, __ATOMIC_SEQ_CST);
	after = soft_dirty(fd, c.reg + SD_PAGES * PG);
	close(fd);
	KCHECK(self, c.reg[0] == 0x77 && c.reg[SD_PAGES * PG - 1] == 0x77 &&
	       c.mal[0] == 0x77 && c.mal[SD_PAGES * PG - 1] == 0x77,
	       "the puts did not land");
	while (spin_aa_log_poll(log, on_sd, &c, 64, &got) == PTL_OK)
		;
	KCHECK(self, spin_aa_log_status(log, &st) == PTL_OK && st.lost == 0 &&
	       st.err == 0, "log lost %" PRIu64 " err %u", st.lost, st.err);
	for (p = 0; p < SD_PAGES; p++)
		KCHECK(self, c.reg_recs[p] > 0 && c.mal_recs[p] > 0,
		       "page %u unlogged: %u region, %u malloc'd records", p,
		       c.reg_recs[p], c.mal_recs[p]);
	for (k = 0; k < 2; k++)
		PtlMEUnlink(meh[k]);
	KCHECK(self, spin_aa_assoc(n.ni, c.reg, SD_PAGES * PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK &&
	       spin_aa_assoc(n.ni, c.mal, SD_PAGES * PG, A_W | A_R,
			     SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok dirty_region=%u dirty_malloc=%u records=%u bad=%u "
		"after=%d", dirty_region, dirty_malloc, c.n, c.bad, after);
	return 0;
}

/* Two acked puts of SD_PAGES pages of 0x77: to the region ME, the
 * malloc'd one. */
static int
ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(SD_PAGES * PG);
	ptl_handle_md_t md;
	struct kid_ni n;
	unsigned which;
	ptl_md_t d;
	int k;

	KCHECK(self, loc != NULL, "alloc");
	memset(loc, 0x77, SD_PAGES * PG);
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = SD_PAGES * PG;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (k = 0; k < 2; k++) {
		ptl_event_t ev;

		KCHECK(self, PtlPut(md, 0, SD_PAGES * PG, PTL_ACK_REQ, t,
				    ia->pt, MATCH + (uint64_t)k, 0, NULL, 0) ==
		       PTL_OK, "put");
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.type == PTL_EVENT_ACK &&
		       ev.ni_fail_type == PTL_NI_OK, "ack");
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	unsigned dr, dm, nrec, bad;
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];
	int after;

	itest_init("itest_aa_softdirty", 90);
	skip_unless_kept();
	itest_spinnic_start(NULL);
	kid_start(&tk, "aa-sd-target", 1, false, target_main, NULL);
	kid_expect(&tk, "", line, sizeof(line));
	if (strncmp(line, "skip", 4) == 0) {
		printf("itest_aa_softdirty: SKIP: on the region: %s: premise "
		       "not shown\n", line + 5);
		kid_tell(&tk, "end");
		kid_end(&tk);
		itest_spinnic_finish();
		exit(ITEST_SKIP);
	}
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-sd-initiator", 0, false, ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	kid_tell(&tk, "check");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	ITEST_CHECK(sscanf(line, "ok dirty_region=%u dirty_malloc=%u "
			   "records=%u bad=%u after=%d", &dr, &dm, &nrec, &bad,
			   &after) == 5, "%s", line);
	printf("itest_aa_softdirty: after remote writes to %u region and %u "
	       "malloc'd pages: %u and %u soft-dirty, %u log records (%u "
	       "bad); a local write after sets the bit: %d\n", SD_PAGES,
	       SD_PAGES, dr, dm, nrec, bad, after);
	ITEST_CHECK(after == 1, "soft-dirty bits stopped being kept during "
		    "the test: nothing shown");
	ITEST_CHECK(dr == 0, "the NIC's writes set %u region soft-dirty "
		    "bits", dr);
	ITEST_CHECK(bad == 0, "%u records not PUT_META of the puts", bad);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	/* every record the NIC logged was one the target consumed */
	aa_expect_logged("itest_aa_softdirty", nrec);
	return 0;
}
