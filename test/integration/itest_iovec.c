/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iovec MDs and MEs through a real spinnic --virtual 2 (issue 13, doc/
 * NOTES.md "iovec MDs and MEs"). A client on node 0 puts from an iovec MD
 * of malloc'd and region pieces (a zero-length entry among them) into an
 * iovec ME of a client on node 1, made of other malloc'd and region
 * pieces; a second put from the middle of the MD lands in the middle of
 * the ME; a get reads the whole ME back into a third iovec MD. Messages
 * span several packets and entries cut packets anywhere. The initiator
 * checks what came back byte by byte, the target checks its pieces and
 * its events (start: the iovec array's address). Last, an MD entry at an
 * address the client does not have: the put fails at use (SEND with
 * PTL_NI_SEGV). Again over the lossy link (itest_iovec_lossy): resends of
 * iovec packets are copies of the frames first sent.
 * The clients are forked children linked with libspinnic (kid.c).
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

#define MATCH 0x10ecull
#define NPIECE 6
#define SECOND_LOFF 500u  /* the second put: from here in the MD */
#define SECOND_ROFF 7000u /* ... to here in the ME */
#define SECOND_LEN 3000u
#define ROUNDS 16         /* put, put, get: more packets to lose */

/* piece sizes, summing to TOTAL on each side; 0: a zero-length entry;
 * even index malloc'd, odd in the region */
static const size_t me_sizes[NPIECE] = { 1000, 3000, 0, 5, 4100, 2000 };
static const size_t md_sizes[NPIECE] = { 777, 5000, 0, 4000, 328, 0 };
static const size_t back_sizes[NPIECE] = { 6000, 1, 0, 2100, 2004, 0 };
#define TOTAL 10105u

static uint8_t
pat(uint64_t i)
{
	return (uint8_t)(i * 31 + (i >> 8) + 7);
}

/* What the ME holds after both puts. */
static uint8_t
expect_at(uint64_t i)
{
	if (i >= SECOND_ROFF && i < SECOND_ROFF + SECOND_LEN)
		return pat(SECOND_LOFF + i - SECOND_ROFF);
	return pat(i);
}

/* The pieces of one side: even index malloc'd, odd from the region. */
static int
pieces(ptl_iovec_t *iov, const size_t *sizes)
{
	for (unsigned i = 0; i < NPIECE; i++) {
		iov[i].iov_len = sizes[i];
		if (sizes[i] == 0) {
			iov[i].iov_base = NULL;
			continue;
		}
		iov[i].iov_base = i % 2 ? spin_host_alloc(sizes[i]) :
					  malloc(sizes[i]);
		if (iov[i].iov_base == NULL)
			return -1;
		memset(iov[i].iov_base, 0, sizes[i]);
	}
	return 0;
}

/* Byte @p i of the logical space of @p iov. */
static uint8_t *
byte_at(const ptl_iovec_t *iov, uint64_t i)
{
	for (unsigned k = 0; k < NPIECE; k++) {
		if (i < iov[k].iov_len)
			return (uint8_t *)iov[k].iov_base + i;
		i -= iov[k].iov_len;
	}
	return NULL;
}

/* ---- the target ---------------------------------------------------------- */

static int
target_main(struct kid *self, void *arg)
{
	unsigned puts = 0, gets = 0, bad = 0;
	ptl_iovec_t *iov = malloc(NPIECE * sizeof(*iov));
	uint64_t bad_at = UINT64_MAX;
	struct kid_ni n;
	ptl_handle_me_t meh;
	ptl_event_t ev;
	char line[64];
	ptl_me_t me;

	(void)arg;
	if (kid_ni_open(self, &n, 4 * ROUNDS + 16) != 0)
		return 1;
	KCHECK(self, n.lim.max_iovecs >= NPIECE, "max_iovecs %d",
	       n.lim.max_iovecs);
	KCHECK(self, iov != NULL && pieces(iov, me_sizes) == 0, "pieces");
	memset(&me, 0, sizeof(me));
	me.start = iov;
	me.length = NPIECE;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_IOVEC;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend iovec");
	/* the NIC copied the array: what it holds now does not count */
	iov[0].iov_len = 1;
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
		     strcmp(line, "done") == 0, "no done line");
	iov[0].iov_len = me_sizes[0];
	/* a GET's event follows the acknowledgement of its REPLY's last
	 * packet, which over the lossy link may come after "done": wait
	 * for the events due (then take whatever else is there) */
	for (;;) {
		bool due = puts + gets + bad < 3 * ROUNDS;
		unsigned which;

		if (PtlEQPoll(&n.eq, 1, due ? 10000 : 0, &ev, &which) !=
		    PTL_OK)
			break;
		if (ev.type == PTL_EVENT_LINK)
			continue;
		if (ev.ni_fail_type != PTL_NI_OK || ev.start != (void *)iov ||
		    (ev.type != PTL_EVENT_PUT && ev.type != PTL_EVENT_GET))
			bad++;
		puts += ev.type == PTL_EVENT_PUT;
		gets += ev.type == PTL_EVENT_GET;
	}
	for (uint64_t i = 0; i < TOTAL; i++)
		if (*byte_at(iov, i) != expect_at(i)) {
			bad_at = i;
			break;
		}
	kid_say(self, "events put=%u get=%u bad=%u bad_at=%" PRId64, puts,
		gets, bad, bad_at == UINT64_MAX ? -1 : (int64_t)bad_at);
	PtlMEUnlink(meh);
	kid_ni_close(&n);
	return 0;
}

/* ---- the initiator ------------------------------------------------------- */

static int
initiator_main(struct kid *self, void *arg)
{
	ptl_iovec_t src[NPIECE], back[NPIECE], bad[2];
	ptl_handle_md_t md, mdb, mdx;
	unsigned nid, pid, ptx;
	ptl_process_t t;
	struct kid_ni n;
	ptl_event_t ev;
	char line[64];
	ptl_md_t d;

	(void)arg;
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
		     sscanf(line, "go %u %u %u", &nid, &pid, &ptx) == 3,
	       "no go line");
	t.phys.nid = nid;
	t.phys.pid = pid;
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	KCHECK(self, pieces(src, md_sizes) == 0 &&
		     pieces(back, back_sizes) == 0, "pieces");
	for (uint64_t i = 0; i < TOTAL; i++)
		*byte_at(src, i) = pat(i);
	memset(&d, 0, sizeof(d));
	d.start = src;
	d.length = NPIECE;
	d.options = PTL_IOVEC;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind src");
	d.start = back;
	KCHECK(self, PtlMDBind(n.ni, &d, &mdb) == PTL_OK, "PtlMDBind back");
	/* more entries than the NI has: refused */
	d.length = (ptl_size_t)n.lim.max_iovecs + 1;
	KCHECK(self, PtlMDBind(n.ni, &d, &mdx) == PTL_ARG_INVALID,
	       "PtlMDBind of max_iovecs + 1 entries");

	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned k = 0; k < NPIECE; k++)
			if (back[k].iov_len > 0)
				memset(back[k].iov_base, 0, back[k].iov_len);
		/* the whole MD to the whole ME */
		KCHECK(self, PtlPut(md, 0, TOTAL, PTL_ACK_REQ, t, ptx, MATCH,
				    0, NULL, 1) == PTL_OK, "PtlPut");
		if (kid_want_event(self, &n, PTL_EVENT_SEND, PTL_NI_OK, &ev) ||
		    kid_want_event(self, &n, PTL_EVENT_ACK, PTL_NI_OK, &ev))
			return 1;
		KCHECK(self, ev.mlength == TOTAL, "ACK mlength %" PRIu64,
		       (uint64_t)ev.mlength);
		/* a middle of the MD to a middle of the ME */
		KCHECK(self, PtlPut(md, SECOND_LOFF, SECOND_LEN, PTL_ACK_REQ,
				    t, ptx, MATCH, SECOND_ROFF, NULL, 2) ==
			     PTL_OK, "PtlPut 2");
		if (kid_want_event(self, &n, PTL_EVENT_SEND, PTL_NI_OK, &ev) ||
		    kid_want_event(self, &n, PTL_EVENT_ACK, PTL_NI_OK, &ev))
			return 1;
		/* the whole ME back */
		KCHECK(self, PtlGet(mdb, 0, TOTAL, t, ptx, MATCH, 0, NULL) ==
			     PTL_OK, "PtlGet");
		if (kid_want_event(self, &n, PTL_EVENT_REPLY, PTL_NI_OK, &ev))
			return 1;
		KCHECK(self, ev.mlength == TOTAL, "REPLY mlength %" PRIu64,
		       (uint64_t)ev.mlength);
		for (uint64_t i = 0; i < TOTAL; i++)
			KCHECK(self, *byte_at(back, i) == expect_at(i),
			       "round %u byte %" PRIu64 ": %#x, wanted %#x",
			       r, i, *byte_at(back, i), expect_at(i));
	}

	/* an entry where this process has nothing: fails at use */
	bad[0] = src[1];
	bad[1].iov_base = (void *)(uintptr_t)4096;
	bad[1].iov_len = 64;
	d.start = bad;
	d.length = 2;
	KCHECK(self, PtlMDBind(n.ni, &d, &mdx) == PTL_OK, "PtlMDBind bad");
	KCHECK(self, PtlPut(mdx, bad[0].iov_len - 8, 16, PTL_NO_ACK_REQ, t,
			    ptx, MATCH ^ 1, 0, NULL, 3) == PTL_OK, "PtlPut bad");
	if (kid_want_event(self, &n, PTL_EVENT_SEND, PTL_NI_SEGV, &ev))
		return 1;
	kid_say(self, "ok");
	PtlMDRelease(mdx);
	PtlMDRelease(md);
	PtlMDRelease(mdb);
	kid_ni_close(&n);
	return 0;
}

/* ---- the test ------------------------------------------------------------ */

int
main(void)
{
	unsigned nid, pid, pt, puts, gets, bad;
	int64_t bad_at;
	struct kid t, i;
	char line[128];

	itest_init("itest_iovec", 180);
	itest_spinnic_start(NULL);
	kid_line_ms = 60000;
	kid_start(&t, "target", 1, false, target_main, NULL);
	kid_expect(&t, "ready ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &nid, &pid, &pt) == 3,
		    "target said \"%s\"", line);
	kid_start(&i, "initiator", 0, false, initiator_main, NULL);
	snprintf(line, sizeof(line), "go %u %u %u", nid, pid, pt);
	kid_tell(&i, line);
	kid_expect(&i, "ok", line, sizeof(line));
	kid_end(&i);
	kid_tell(&t, "done");
	kid_expect(&t, "events ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "events put=%u get=%u bad=%u bad_at=%" SCNd64,
			   &puts, &gets, &bad, &bad_at) == 4 &&
		    puts == 2 * ROUNDS && gets == ROUNDS && bad == 0 &&
		    bad_at == -1,
		    "target said \"%s\"", line);
	kid_end(&t);
	itest_spinnic_finish();
	if (getenv("SPINNIC_ITEST_FAULTS") == NULL)
		itest_expect_no_drops();
	fprintf(stderr, "itest_iovec: %u x %u bytes out of and into %u pieces, "
		"back byte-checked; retransmits %lld + %lld\n", ROUNDS, TOTAL,
		NPIECE, itest_counter(0, "retransmits"),
		itest_counter(1, "retransmits"));
	return 0;
}
