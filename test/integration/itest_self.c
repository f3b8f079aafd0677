/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Operations a client makes to itself, with its MD and its ME on one event
 * queue, through a real spinnic --virtual 2 (doc/NOTES.md "A get to
 * oneself"): the target reads before the initiator receives, so
 *  - PtlGet of a use-once ME: GET, then AUTO_UNLINK, then REPLY, with the
 *    bytes read when the get matched (the ME rewritten after the GET event
 *    does not change the REPLY);
 *  - PtlFetchAtomic (SUM int64): FETCH_ATOMIC, then REPLY with the old
 *    value;
 * sizes of 8 B, 3000 B (two packets) and 64 KiB, the largest kept. Again
 * over the lossy link (itest_self_lossy): REPLY packets resent from the
 * copy.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"

#define M_GET 0x5e1full
#define M_ATOM 0x5e2full
#define BIG (64u << 10)

static int
next_event(struct kid *self, struct kid_ni *n, ptl_event_t *ev)
{
	unsigned which;
	int rc = PtlEQPoll(&n->eq, 1, 20000, ev, &which);

	KCHECK(self, rc == PTL_OK, "PtlEQPoll %d", rc);
	KCHECK(self, ev->ni_fail_type == PTL_NI_OK, "event %d failed %d",
	       ev->type, (int)ev->ni_fail_type);
	return 0;
}

static int
me_add(struct kid_ni *n, void *buf, ptl_size_t len, uint64_t bits,
       unsigned options)
{
	ptl_handle_me_t meh;
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = len;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = options | PTL_ME_EVENT_LINK_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	return PtlMEAppend(n->ni, n->pt, &me, PTL_PRIORITY_LIST, NULL,
			   &meh) == PTL_OK ? 0 : -1;
}

/* One get of @p len bytes from a use-once ME of this client. */
static int
self_get(struct kid *self, struct kid_ni *n, ptl_handle_md_t mdh,
	 uint8_t *src, uint8_t *dst, size_t len, uint8_t fill)
{
	ptl_event_t ev;
	size_t i;

	memset(src, fill, len);
	memset(dst, 0, len);
	KCHECK(self, me_add(n, src, len, M_GET, PTL_ME_OP_GET |
			    PTL_ME_USE_ONCE) == 0, "ME");
	KCHECK(self, PtlGet(mdh, 0, len, n->id, n->pt, M_GET, 0, NULL) ==
	       PTL_OK, "PtlGet");
	if (next_event(self, n, &ev) != 0)
		return 1;
	KCHECK(self, ev.type == PTL_EVENT_GET && ev.mlength == len,
	       "%zu B: first event %d (mlength %" PRIu64 "), wanted GET", len,
	       ev.type, (uint64_t)ev.mlength);
	/* the GET said the target is done with it: the REPLY's bytes were
	 * read before this */
	memset(src, (uint8_t)~fill, len);
	if (next_event(self, n, &ev) != 0)
		return 1;
	KCHECK(self, ev.type == PTL_EVENT_AUTO_UNLINK,
	       "%zu B: second event %d, wanted AUTO_UNLINK", len, ev.type);
	if (next_event(self, n, &ev) != 0)
		return 1;
	KCHECK(self, ev.type == PTL_EVENT_REPLY && ev.mlength == len,
	       "%zu B: third event %d, wanted REPLY", len, ev.type);
	for (i = 0; i < len; i++)
		KCHECK(self, dst[i] == fill, "%zu B: byte %zu is %#x", len, i,
		       dst[i]);
	return 0;
}

static int
kid_main(struct kid *self, void *arg)
{
	static const size_t sizes[] = { 8, 3000, BIG };
	uint8_t *src, *dst;
	int64_t *cell, *opnd, *old;
	ptl_handle_md_t mdh, amdh;
	ptl_event_t ev;
	struct kid_ni n;
	ptl_md_t md;
	unsigned i;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	src = spin_host_alloc(BIG);
	dst = spin_host_alloc(BIG);
	cell = spin_host_alloc(3 * sizeof(*cell));
	KCHECK(self, src && dst && cell, "spin_host_alloc");
	opnd = cell + 1;
	old = cell + 2;
	memset(&md, 0, sizeof(md));
	md.start = dst;
	md.length = BIG;
	md.eq_handle = n.eq;
	md.ct_handle = PTL_CT_NONE;
	KCHECK(self, PtlMDBind(n.ni, &md, &mdh) == PTL_OK, "PtlMDBind");
	for (i = 0; i < 3; i++)
		if (self_get(self, &n, mdh, src, dst, sizes[i],
			     (uint8_t)(0x31 + i)) != 0)
			return 1;

	/* a fetching atomic to oneself */
	*cell = 40;
	*opnd = 2;
	*old = -1;
	KCHECK(self, me_add(&n, cell, sizeof(*cell), M_ATOM,
			    PTL_ME_OP_PUT | PTL_ME_OP_GET) == 0, "atomic ME");
	md.start = opnd;
	md.length = 2 * sizeof(*opnd);
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &md, &amdh) == PTL_OK, "PtlMDBind");
	KCHECK(self, PtlFetchAtomic(amdh, sizeof(*opnd), amdh, 0,
				    sizeof(*opnd), n.id, n.pt, M_ATOM, 0,
				    NULL, 0, PTL_SUM, PTL_INT64_T) == PTL_OK,
	       "PtlFetchAtomic");
	if (next_event(self, &n, &ev) != 0)
		return 1;
	KCHECK(self, ev.type == PTL_EVENT_FETCH_ATOMIC,
	       "atomic: first event %d, wanted FETCH_ATOMIC", ev.type);
	if (next_event(self, &n, &ev) != 0)
		return 1;
	KCHECK(self, ev.type == PTL_EVENT_REPLY,
	       "atomic: second event %d, wanted REPLY", ev.type);
	KCHECK(self, *old == 40 && *cell == 42, "atomic: old %" PRId64
	       ", now %" PRId64, *old, *cell);
	kid_say(self, "ok");
	PtlMDRelease(amdh);
	PtlMDRelease(mdh);
	kid_ni_close(&n);
	return 0;
}

int
main(void)
{
	char line[128];
	struct kid k;

	itest_init("itest_self", 120);
	itest_spinnic_start(NULL);
	kid_start(&k, "self", 0, false, kid_main, NULL);
	kid_expect(&k, "ok", line, sizeof(line));
	kid_end(&k);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	printf("itest_self: gets of 8 B, 3000 B and 64 KiB and a fetch-atomic to oneself, one EQ: GET, AUTO_UNLINK, REPLY; FETCH_ATOMIC, REPLY: ok\n");
	return 0;
}
