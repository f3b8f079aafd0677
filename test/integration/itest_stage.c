/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Staged puts (spin.h SPIN_MD_STAGE: the NIC copies a put whole into NIC
 * memory before its first packet leaves; paper 003 Fig. 4, doc/NOTES.md
 * "Staged sends") through a real spinnic --virtual 2 whose clients may
 * use 1 MiB of NIC memory each. A client on node 0 puts from staged MDs
 * over region memory, malloc'd memory and iovec pieces of both, sizes
 * from 1 byte to three copy pieces (768 KiB), into an entry of a client
 * on node 1, and reads each back with a get; a triggered staged put; a
 * staged put larger than its NIC memory share fails (SEND with
 * PTL_NI_DROPPED) and the next one works; an unknown MD option bit is
 * refused. Last it posts a 768 KiB staged put and exits at once. The
 * counters must show every staged put and the one refused, and no NIC
 * memory may be left in use at the end. Again over the lossy link
 * (itest_stage_lossy): resends of staged packets are copies of the frames
 * first sent. The clients are forked children linked with libspinnic
 * (kid.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"

#define MATCH 0x57a9eull
#define BIG (768u * 1024)      /* the largest put: three copy pieces */
#define CAP "1M"               /* --nic-mem-per-client */
#define OVER ((1u << 20) + 64) /* a staged put that cannot fit */
#define NSRC 3                 /* region, malloc'd, iovec */
#define ROFF 100u              /* puts land from here in the entry */

static const uint64_t sizes[] = { 1, 2048, 5000, 300000, BIG };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
/* staged puts that must succeed: every size from every source, the
 * triggered one, the one after the refusal */
#define STAGED_OK (NSIZES * NSRC + 2)

static uint8_t
pat(unsigned round, uint64_t i)
{
	return (uint8_t)(i * 29 + (i >> 9) + round * 17 + 3);
}

/* ---- the target ---------------------------------------------------------- */

static int
target_main(struct kid *self, void *arg)
{
	unsigned puts = 0, gets = 0, bad = 0;
	uint8_t *buf = spin_host_alloc(ROFF + BIG);
	ptl_handle_me_t meh;
	struct kid_ni n;
	ptl_event_t ev;
	char line[64];
	ptl_me_t me;

	(void)arg;
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	KCHECK(self, buf != NULL, "spin_host_alloc");
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = ROFF + BIG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
		     strcmp(line, "done") == 0, "no done line");
	for (;;) {
		unsigned which;

		if (PtlEQPoll(&n.eq, 1, 0, &ev, &which) != PTL_OK)
			break;
		if (ev.type == PTL_EVENT_LINK)
			continue;
		if (ev.ni_fail_type != PTL_NI_OK ||
		    (ev.type != PTL_EVENT_PUT && ev.type != PTL_EVENT_GET))
			bad++;
		puts += ev.type == PTL_EVENT_PUT;
		gets += ev.type == PTL_EVENT_GET;
	}
	kid_say(self, "events put=%u get=%u bad=%u", puts, gets, bad);
	PtlMEUnlink(meh);
	kid_ni_close(&n);
	return 0;
}

/* ---- the initiator ------------------------------------------------------- */

struct ini {
	struct kid_ni n;
	ptl_process_t t;
	unsigned pt;
	ptl_handle_md_t back_md;
	uint8_t *back;
};

/* Read [ROFF, +len) of the target back and check it against round @p r. */
static int
check_back(struct kid *self, struct ini *x, unsigned r, uint64_t len,
	   const char *what)
{
	ptl_event_t ev;

	memset(x->back, 0, len);
	KCHECK(self, PtlGet(x->back_md, 0, len, x->t, x->pt, MATCH, ROFF,
			    NULL) == PTL_OK, "PtlGet");
	if (kid_want_event(self, &x->n, PTL_EVENT_REPLY, PTL_NI_OK, &ev))
		return 1;
	for (uint64_t i = 0; i < len; i++)
		KCHECK(self, x->back[i] == pat(r, i),
		       "%s, %" PRIu64 " bytes: byte %" PRIu64 " %#x, wanted %#x",
		       what, len, i, x->back[i], pat(r, i));
	return 0;
}

/* One staged put of @p len bytes from @p md at @p loff, then checked. */
static int
put_one(struct kid *self, struct ini *x, ptl_handle_md_t md, uint64_t loff,
	unsigned r, uint64_t len, const char *what)
{
	ptl_event_t ev;

	KCHECK(self, PtlPut(md, loff, len, PTL_ACK_REQ, x->t, x->pt, MATCH,
			    ROFF, NULL, 0) == PTL_OK, "PtlPut %s", what);
	if (kid_want_event(self, &x->n, PTL_EVENT_SEND, PTL_NI_OK, &ev) ||
	    kid_want_event(self, &x->n, PTL_EVENT_ACK, PTL_NI_OK, &ev))
		return 1;
	KCHECK(self, ev.mlength == len, "%s: ACK mlength %" PRIu64, what,
	       (uint64_t)ev.mlength);
	return check_back(self, x, r, len, what);
}

static int
initiator_main(struct kid *self, void *arg)
{
	/* the iovec source: region, malloc'd, region pieces */
	static const uint64_t piece[3] = { 1000, BIG / 2, BIG / 2 - 1000 };
	uint8_t *reg = spin_host_alloc(BIG), *heap = malloc(OVER);
	ptl_handle_md_t md[NSRC], mdx;
	ptl_handle_ct_t ct;
	ptl_iovec_t iov[3];
	unsigned nid, pid, ptx, r = 0;
	struct ini x;
	ptl_event_t ev;
	char line[64];
	ptl_md_t d;

	(void)arg;
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
		     sscanf(line, "go %u %u %u", &nid, &pid, &ptx) == 3,
	       "no go line");
	memset(&x, 0, sizeof(x));
	x.t.phys.nid = nid;
	x.t.phys.pid = pid;
	x.pt = ptx;
	if (kid_ni_open(self, &x.n, 256) != 0)
		return 1;
	x.back = spin_host_alloc(BIG);
	KCHECK(self, reg != NULL && heap != NULL && x.back != NULL, "buffers");
	for (unsigned k = 0; k < 3; k++) {
		iov[k].iov_len = piece[k];
		iov[k].iov_base = k == 1 ? malloc(piece[k]) :
					   spin_host_alloc(piece[k]);
		KCHECK(self, iov[k].iov_base != NULL, "piece %u", k);
	}
	memset(&d, 0, sizeof(d));
	d.eq_handle = x.n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.start = x.back;
	d.length = BIG;
	KCHECK(self, PtlMDBind(x.n.ni, &d, &x.back_md) == PTL_OK, "back MD");
	d.options = SPIN_MD_STAGE;
	d.start = reg;
	KCHECK(self, PtlMDBind(x.n.ni, &d, &md[0]) == PTL_OK, "MD region");
	d.start = heap;
	d.length = OVER;
	KCHECK(self, PtlMDBind(x.n.ni, &d, &md[1]) == PTL_OK, "MD heap");
	d.options = SPIN_MD_STAGE | PTL_IOVEC;
	d.start = iov;
	d.length = 3;
	KCHECK(self, PtlMDBind(x.n.ni, &d, &md[2]) == PTL_OK, "MD iovec");
	/* a bit nobody defined */
	d.options = 1u << 29;
	d.start = reg;
	d.length = BIG;
	KCHECK(self, PtlMDBind(x.n.ni, &d, &mdx) == PTL_ARG_INVALID,
	       "MD option bit 29 accepted");

	for (unsigned s = 0; s < NSRC; s++)
		for (unsigned z = 0; z < NSIZES; z++, r++) {
			uint64_t len = sizes[z];
			char what[48];

			for (uint64_t i = 0; i < len; i++) {
				uint64_t j = i, k = 0;

				if (s == 0) {
					reg[i] = pat(r, i);
					continue;
				}
				if (s == 1) {
					heap[i] = pat(r, i);
					continue;
				}
				while (j >= piece[k])
					j -= piece[k++];
				((uint8_t *)iov[k].iov_base)[j] = pat(r, i);
			}
			snprintf(what, sizeof(what), "source %u size %" PRIu64,
				 s, len);
			if (put_one(self, &x, md[s], 0, r, len, what))
				return 1;
		}

	/* triggered: the bytes are read (and staged) when it fires */
	KCHECK(self, PtlCTAlloc(x.n.ni, &ct) == PTL_OK, "PtlCTAlloc");
	for (uint64_t i = 0; i < 100000; i++)
		reg[i] = 0;
	KCHECK(self, PtlTriggeredPut(md[0], 0, 100000, PTL_ACK_REQ, x.t,
				     x.pt, MATCH, ROFF, NULL, 0, ct, 1) ==
		     PTL_OK, "PtlTriggeredPut");
	for (uint64_t i = 0; i < 100000; i++)
		reg[i] = pat(r, i);
	KCHECK(self, PtlCTInc(ct, (ptl_ct_event_t){ 1, 0 }) == PTL_OK,
	       "PtlCTInc");
	if (kid_want_event(self, &x.n, PTL_EVENT_SEND, PTL_NI_OK, &ev) ||
	    kid_want_event(self, &x.n, PTL_EVENT_ACK, PTL_NI_OK, &ev) ||
	    check_back(self, &x, r++, 100000, "triggered"))
		return 1;
	PtlCTFree(ct);

	/* more than this client's NIC memory: refused, nothing sent */
	KCHECK(self, PtlPut(md[1], 0, OVER, PTL_NO_ACK_REQ, x.t, x.pt, MATCH,
			    0, NULL, 0) == PTL_OK, "PtlPut over");
	if (kid_want_event(self, &x.n, PTL_EVENT_SEND, PTL_NI_DROPPED, &ev))
		return 1;
	/* ... and its memory share is whole again */
	for (uint64_t i = 0; i < BIG; i++)
		heap[i] = pat(r, i);
	if (put_one(self, &x, md[1], 0, r++, BIG, "after the refusal"))
		return 1;
	kid_say(self, "ok");
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
		     strcmp(line, "exit") == 0, "no exit line");
	/* exit with a staged put in flight: spinnic frees its copy */
	KCHECK(self, PtlPut(md[0], 0, BIG, PTL_ACK_REQ, x.t, x.pt, MATCH, ROFF,
			    NULL, 0) == PTL_OK, "PtlPut last");
	_exit(0);
}

/* ---- the test ------------------------------------------------------------ */

static long long
counter(unsigned node, const char *name)
{
	long long v = itest_counter(node, name);

	return v < 0 ? 0 : v; /* zero counters are not printed */
}

int
main(void)
{
	static const char *const extra[] = {
		"--nic-mem-per-client", CAP, NULL,
	};
	unsigned nid, pid, pt, puts, gets, bad;
	long long staged, no_mem, used;
	struct kid t, i;
	char line[128];

	itest_init("itest_stage", 240);
	itest_spinnic_start(extra);
	kid_line_ms = 120000;
	kid_start(&t, "target", 1, false, target_main, NULL);
	kid_expect(&t, "ready ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &nid, &pid, &pt) == 3,
		    "target said \"%s\"", line);
	kid_start(&i, "initiator", 0, false, initiator_main, NULL);
	snprintf(line, sizeof(line), "go %u %u %u", nid, pid, pt);
	kid_tell(&i, line);
	kid_expect(&i, "ok", line, sizeof(line));
	kid_tell(&i, "exit");
	kid_end(&i);
	/* the last put may or may not have reached the target */
	sleep(1);
	kid_tell(&t, "done");
	kid_expect(&t, "events ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "events put=%u get=%u bad=%u", &puts, &gets,
			   &bad) == 3 &&
		    puts >= STAGED_OK && puts <= STAGED_OK + 1 &&
		    gets == STAGED_OK && bad == 0,
		    "target said \"%s\"", line);
	kid_end(&t);
	itest_spinnic_finish();
	staged = counter(0, "stage_puts");
	no_mem = counter(0, "stage_no_mem");
	used = itest_counter(0, "nic_mem_used");
	/*
	 * Every put that must succeed was staged but the 1-byte one from
	 * malloc'd memory: the shim copies a small put from outside the
	 * region into its command (SPINNIC_CMD_F_INLINE), which has no host
	 * memory to stage from. The last one, staged or dropped before its
	 * copy (its client left at once): at most one more. (This counted
	 * the inlined put as staged and passed only when the last put was
	 * staged: CI caught stage_puts 16.)
	 */
	ITEST_CHECK(staged >= (long long)STAGED_OK - 1 &&
		    staged <= (long long)STAGED_OK,
		    "stage_puts %lld, wanted %u (+1)", staged,
		    (unsigned)STAGED_OK - 1);
	ITEST_CHECK(no_mem == 1, "stage_no_mem %lld, wanted 1", no_mem);
	ITEST_CHECK(used == 0, "nic_mem_used %lld at the end", used);
	/* no itest_expect_no_drops(): the initiator that left mid-put leaves
	 * acknowledgements for an operation nobody owns (drop_unknown_op)
	 * and packets of a reset epoch (drop_rel_epoch), as itest_kill */
	fprintf(stderr, "itest_stage: %u staged puts byte-checked, %lld "
		"staged in all, %lld staged bytes; retransmits %lld\n",
		(unsigned)STAGED_OK, staged, counter(0, "stage_bytes"),
		itest_counter(0, "retransmits"));
	return 0;
}
