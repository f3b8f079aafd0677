/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batched setup (SPINNIC_CTRL_BATCH, spin.h spin_batch_*) on a real
 * spinnic, by forked clients linked with libspinnic (kid.h); the raw
 * requests through shim_internal.h:
 *  - a CT, an MD counting into it and an ME counting into it: one round
 *    trip; a put from the MD lands in the ME and both count;
 *  - a record failing in the middle (an entry on a PT never allocated):
 *    the failing index, every handle invalid, the region heap as before;
 *    repeated past max_cts, so that a CT leaked by any of them would
 *    make a later one fail otherwise;
 *  - more records than one request holds (SPINNIC_CTRL_BATCH_MAX): one
 *    round trip per 256, and a failure in the second chunk undoes the
 *    first (the shim) and its own (spinnic);
 *  - hostile raw batches: count 0 and over the cap, an offset outside
 *    the region, wrapping, misaligned; records that are BATCH, ATTACH,
 *    DETACH, an sPIN op, of another ABI version; references forward, to
 *    themselves, to a record of another kind: each refused with its
 *    index, what came before undone (PTL_ABORTED);
 *  - another thread rewriting the records while spinnic reads them;
 *  - a second client's counter and entry, whose handles the first one
 *    names in its batches, keep working;
 * then spinnic's counters (batches, refusals, rollbacks, no failed undo)
 * and nothing leaked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"
#include "shim_internal.h"

#define BITS 0x4242
#define LEN 256

/* A put from @p md to our own PT, until @p ct counts @p want. */
static int
put_self(struct kid *self, struct kid_ni *n, ptl_handle_md_t md,
	 ptl_handle_ct_t ct, ptl_size_t want)
{
	ptl_ct_event_t ev;

	KCHECK(self, PtlPut(md, 0, LEN, PTL_NO_ACK_REQ, n->id, n->pt, BITS, 0,
			    NULL, 0) == PTL_OK, "PtlPut");
	KCHECK(self, PtlCTWait(ct, want, &ev) == PTL_OK && ev.failure == 0,
	       "PtlCTWait: %llu ok %llu failed",
	       (unsigned long long)ev.success,
	       (unsigned long long)ev.failure);
	return 0;
}

static void
me_desc(ptl_me_t *me, void *buf, ptl_handle_ct_t ct)
{
	memset(me, 0, sizeof(*me));
	me->start = buf;
	me->length = LEN;
	me->ct_handle = ct;
	me->uid = PTL_UID_ANY;
	me->match_id.phys.nid = PTL_NID_ANY;
	me->match_id.phys.pid = PTL_PID_ANY;
	me->match_bits = BITS;
	me->options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		      PTL_ME_EVENT_COMM_DISABLE | PTL_ME_ACK_DISABLE |
		      PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
}

static void
md_desc(ptl_md_t *md, void *buf, ptl_handle_ct_t ct)
{
	memset(md, 0, sizeof(*md));
	md->start = buf;
	md->length = LEN;
	md->eq_handle = PTL_EQ_NONE;
	md->ct_handle = ct;
	md->options = ct != PTL_CT_NONE ? PTL_MD_EVENT_CT_SEND : 0;
}

/* a CT, an MD and an ME counting into it: one round trip, and it works */
static int
t_success(struct kid *self, struct kid_ni *n, uint8_t *src, uint8_t *dst)
{
	ptl_handle_ct_t ct, ct2;
	ptl_handle_md_t md;
	ptl_handle_me_t me = PTL_INVALID_HANDLE;
	ptl_me_t med;
	ptl_md_t mdd;
	spin_batch_t *b;
	uint64_t rt;
	int failed, rc;

	KCHECK(self, spin_batch_create(n->ni, &b) == PTL_OK, "create");
	KCHECK(self, spin_batch_ct_alloc(b, &ct) == PTL_OK, "ct_alloc");
	/* not usable outside the batch before the submit */
	KCHECK(self, PtlCTFree(ct) == PTL_ARG_INVALID, "CT freed early");
	md_desc(&mdd, src, ct);
	KCHECK(self, spin_batch_md_bind(b, &mdd, &md) == PTL_OK, "md_bind");
	me_desc(&med, dst, ct);
	KCHECK(self, PtlMEAppend(n->ni, n->pt, &med, PTL_PRIORITY_LIST, NULL,
				 &me) == PTL_ARG_INVALID, "pending CT used");
	KCHECK(self, spin_batch_me_append(b, n->pt, &med, PTL_PRIORITY_LIST,
					  NULL, &me) == PTL_OK, "me_append");
	KCHECK(self, spin_batch_count(b) == 3, "count");
	rt = spin_ctrl_round_trips();
	rc = spin_batch_submit(b, &failed);
	rt = spin_ctrl_round_trips() - rt;
	KCHECK(self, rc == PTL_OK && failed == -1, "submit: %d at %d", rc,
	       failed);
	KCHECK(self, rt == 1, "%llu round trips", (unsigned long long)rt);
	KCHECK(self, me != PTL_INVALID_HANDLE &&
	       spin_batch_handle(b, 2) == me &&
	       spin_batch_handle(b, 0) == ct, "handles");
	KCHECK(self, spin_batch_submit(b, NULL) == PTL_ARG_INVALID,
	       "submitted twice");
	KCHECK(self, spin_batch_ct_alloc(b, &ct2) == PTL_ARG_INVALID,
	       "added after the submit");
	spin_batch_free(b);
	memset(src, 0xa5, LEN);
	memset(dst, 0, LEN);
	/* the ME counts into ct, and so does the MD's send */
	if (put_self(self, n, md, ct, 2) != 0)
		return 1;
	KCHECK(self, kid_bytes_all(dst, LEN, 0xa5), "bytes");
	KCHECK(self, PtlMEUnlink(me) == PTL_OK, "unlink");
	KCHECK(self, PtlMDRelease(md) == PTL_OK, "release");
	KCHECK(self, PtlCTFree(ct) == PTL_OK, "free");
	kid_say(self, "info success: 3 records in 1 round trip");
	return 0;
}

/* A CT, an MD into it, an ME, then an ME on a PT never allocated. */
static int
fail_once(struct kid *self, struct kid_ni *n, uint8_t *src, uint8_t *dst,
	  bool check)
{
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_handle_me_t me = PTL_INVALID_HANDLE, me2 = PTL_INVALID_HANDLE;
	ptl_me_t med;
	ptl_md_t mdd;
	ptl_ct_event_t ev;
	spin_batch_t *b;
	int failed, rc;

	KCHECK(self, spin_batch_create(n->ni, &b) == PTL_OK, "create");
	KCHECK(self, spin_batch_ct_alloc(b, &ct) == PTL_OK, "ct_alloc");
	md_desc(&mdd, src, ct);
	KCHECK(self, spin_batch_md_bind(b, &mdd, &md) == PTL_OK, "md_bind");
	me_desc(&med, dst, ct);
	KCHECK(self, spin_batch_me_append(b, n->pt, &med, PTL_PRIORITY_LIST,
					  NULL, &me) == PTL_OK, "me_append");
	KCHECK(self, spin_batch_me_append(b, n->pt + 1, &med,
					  PTL_PRIORITY_LIST, NULL, &me2) ==
	       PTL_OK, "me_append 2");
	rc = spin_batch_submit(b, &failed);
	KCHECK(self, rc != PTL_OK && failed == 3, "bad entry: %d at %d", rc,
	       failed);
	spin_batch_free(b);
	if (!check)
		return 0;
	KCHECK(self, me == PTL_INVALID_HANDLE && me2 == PTL_INVALID_HANDLE,
	       "entry handles written");
	KCHECK(self, PtlCTGet(ct, &ev) == PTL_ARG_INVALID, "CT still there");
	KCHECK(self, PtlMDRelease(md) == PTL_ARG_INVALID, "MD still there");
	return 0;
}

static int
t_fail(struct kid *self, struct kid_ni *n, uint8_t *src, uint8_t *dst)
{
	uint64_t heap = shim_heap_used(), rt;
	ptl_handle_ct_t ct;
	int i;

	rt = spin_ctrl_round_trips();
	if (fail_once(self, n, src, dst, true) != 0)
		return 1;
	KCHECK(self, spin_ctrl_round_trips() - rt == 1, "rollback by spinnic "
	       "took %llu round trips",
	       (unsigned long long)(spin_ctrl_round_trips() - rt));
	KCHECK(self, shim_heap_used() == heap, "region heap %llu, was %llu",
	       (unsigned long long)shim_heap_used(),
	       (unsigned long long)heap);
	/* past every limit: a leaked CT, MD or entry would fail record 0-2 */
	for (i = 0; i < n->lim.max_cts + 8; i++)
		if (fail_once(self, n, src, dst, false) != 0)
			return 1;
	KCHECK(self, shim_heap_used() == heap, "region heap grew");
	KCHECK(self, PtlCTAlloc(n->ni, &ct) == PTL_OK && PtlCTFree(ct) ==
	       PTL_OK, "a CT after the failures");
	kid_say(self, "info failing record: %d batches undone, nothing left",
		n->lim.max_cts + 9);
	return 0;
}

/* more records than one request: one round trip per 256, a record
 * naming a counter of an earlier request; a failure in the second chunk
 * undoes the first */
static int
t_chunks(struct kid *self, struct kid_ni *n, uint8_t *src, uint8_t *dst)
{
	enum { N = 600 };
	static ptl_handle_ct_t cts[N];
	ptl_handle_me_t me = PTL_INVALID_HANDLE;
	ptl_handle_md_t md;
	ptl_me_t med;
	ptl_md_t mdd;
	spin_batch_t *b;
	uint64_t rt, heap = shim_heap_used();
	ptl_ct_event_t ev;
	int failed, rc, i;

	KCHECK(self, n->lim.max_cts > N, "max_cts %d", n->lim.max_cts);
	KCHECK(self, spin_batch_create(n->ni, &b) == PTL_OK, "create");
	for (i = 0; i < N; i++)
		KCHECK(self, spin_batch_ct_alloc(b, &cts[i]) == PTL_OK,
		       "ct_alloc %d", i);
	/* records 600 and 601 (the third request): an entry counting into
	 * the CT of record 0 (the first), an MD counting into record 300 */
	me_desc(&med, dst, cts[0]);
	KCHECK(self, spin_batch_me_append(b, n->pt, &med, PTL_PRIORITY_LIST,
					  NULL, &me) == PTL_OK, "me_append");
	md_desc(&mdd, src, cts[300]);
	KCHECK(self, spin_batch_md_bind(b, &mdd, &md) == PTL_OK, "md_bind");
	rt = spin_ctrl_round_trips();
	rc = spin_batch_submit(b, &failed);
	rt = spin_ctrl_round_trips() - rt;
	KCHECK(self, rc == PTL_OK, "submit %d: %d at %d", N, rc, failed);
	KCHECK(self, rt == (N + 2 + 255) / 256, "%d records in %llu round "
	       "trips", N + 2, (unsigned long long)rt);
	spin_batch_free(b);
	memset(src, 0x5a, LEN);
	if (put_self(self, n, md, cts[0], 1) != 0)
		return 1;
	KCHECK(self, kid_bytes_all(dst, LEN, 0x5a), "bytes");
	KCHECK(self, PtlCTWait(cts[300], 1, &ev) == PTL_OK, "MD's counter");
	KCHECK(self, PtlMEUnlink(me) == PTL_OK && PtlMDRelease(md) == PTL_OK,
	       "unlink, release");
	for (i = 0; i < N; i++)
		KCHECK(self, PtlCTFree(cts[i]) == PTL_OK, "free %d", i);
	/* 300 CTs, then an entry on a PT never allocated (record 300,
	 * chunk 2): all undone */
	KCHECK(self, spin_batch_create(n->ni, &b) == PTL_OK, "create");
	for (i = 0; i < 300; i++)
		KCHECK(self, spin_batch_ct_alloc(b, &cts[i]) == PTL_OK,
		       "ct_alloc %d", i);
	me_desc(&med, dst, cts[299]);
	KCHECK(self, spin_batch_me_append(b, n->pt + 1, &med,
					  PTL_PRIORITY_LIST, NULL, NULL) ==
	       PTL_OK, "me_append");
	rc = spin_batch_submit(b, &failed);
	KCHECK(self, rc != PTL_OK && failed == 300, "chunk 2: %d at %d", rc,
	       failed);
	spin_batch_free(b);
	for (i = 0; i < 300; i++)
		KCHECK(self, PtlCTGet(cts[i], &ev) == PTL_ARG_INVALID,
		       "CT %d of a failed batch still there", i);
	KCHECK(self, shim_heap_used() == heap, "region heap grew");
	/* every CT back on the NIC: as many again in one go */
	KCHECK(self, spin_batch_create(n->ni, &b) == PTL_OK, "create");
	for (i = 0; i < n->lim.max_cts && i < N; i++)
		KCHECK(self, spin_batch_ct_alloc(b, &cts[i]) == PTL_OK,
		       "ct_alloc %d", i);
	KCHECK(self, spin_batch_submit(b, &failed) == PTL_OK, "again: %d",
	       failed);
	spin_batch_free(b);
	for (i = 0; i < N; i++)
		KCHECK(self, PtlCTFree(cts[i]) == PTL_OK, "free %d", i);
	/* never submitted: everything given back */
	KCHECK(self, spin_batch_create(n->ni, &b) == PTL_OK, "create");
	for (i = 0; i < 10; i++)
		KCHECK(self, spin_batch_ct_alloc(b, &cts[i]) == PTL_OK,
		       "ct_alloc %d", i);
	spin_batch_free(b);
	KCHECK(self, PtlCTGet(cts[0], &ev) == PTL_ARG_INVALID,
	       "CT of a freed batch");
	KCHECK(self, shim_heap_used() == heap, "region heap grew");
	kid_say(self, "info chunks: %d records in %d round trips (one naming "
		"a counter of the first), a failure in chunk 2 undid chunk 1",
		N + 2, (N + 2 + 255) / 256);
	return 0;
}

/* ---- raw requests ---------------------------------------------------- */

static void
rec_ct(struct spinnic_ctrl_msg *r, uint32_t ni, const struct spinnic_ct *c)
{
	shim_ctrl_prep_ct(r, SPINNIC_CTRL_CT_ALLOC, ni, SPINNIC_HANDLE_NONE);
	r->version = SPINNIC_ABI_VERSION;
	r->u.ct.ct_off = shim_region_off(c);
}

/* One raw BATCH. @return shim_ctrl_call's; *failed_p the reply's */
static int
raw(uint64_t off, uint32_t count, uint32_t *failed_p)
{
	struct spinnic_ctrl_msg m;
	int rc;

	shim_ctrl_prep(&m, SPINNIC_CTRL_BATCH);
	m.u.batch.off = off;
	m.u.batch.count = count;
	rc = shim_ctrl_call(&m);
	*failed_p = m.u.batch.failed;
	return rc;
}

static int
t_hostile(struct kid *self, struct kid_ni *n, uint32_t nic_ni)
{
	struct spinnic_ctrl_msg *r;
	struct spinnic_ct *c;
	uint64_t off;
	uint32_t f;
	int rc;

	r = shim_heap_alloc(4 * sizeof(*r));
	c = shim_heap_alloc(4 * sizeof(*c));
	KCHECK(self, r != NULL && c != NULL, "heap");
	memset(c, 0, 4 * sizeof(*c));
	off = shim_region_off(r);
	for (int i = 0; i < 4; i++)
		rec_ct(&r[i], nic_ni, &c[i]);
	/* whole batches refused, no record touched */
	KCHECK(self, raw(off, 0, &f) == -EINVAL && f == SPINNIC_HANDLE_NONE,
	       "count 0");
	KCHECK(self, raw(off, SPINNIC_CTRL_BATCH_MAX + 1, &f) == -EINVAL,
	       "over the cap");
	KCHECK(self, raw(off, 0xffffffffu, &f) == -EINVAL, "count ~0");
	KCHECK(self, raw(shim_g.region.size, 1, &f) == -EINVAL, "past the "
	       "region");
	KCHECK(self, raw(shim_g.region.size - 128, 1, &f) == -EINVAL,
	       "across the end");
	KCHECK(self, raw(UINT64_MAX - 63, 2, &f) == -EINVAL, "wrapping");
	KCHECK(self, raw(off + 4, 1, &f) == -EINVAL, "misaligned");
	KCHECK(self, r[0].status == 0 && r[0].op == SPINNIC_CTRL_CT_ALLOC,
	       "record touched by a refused batch");
	/* records that may not be batched: the first stops it, the CT of
	 * record 0 undone */
	{
		static const uint16_t bad_ops[] = {
			SPINNIC_CTRL_BATCH, SPINNIC_CTRL_ATTACH,
			SPINNIC_CTRL_DETACH, SPINNIC_CTRL_CTX_INSTALL,
			SPINNIC_CTRL_NICMEM_ALLOC, SPINNIC_CTRL_NI_FINI,
			SPINNIC_CTRL_PT_FREE, SPINNIC_CTRL_AA_ASSOC, 0, 999,
		};

		for (unsigned k = 0; k < sizeof(bad_ops) / sizeof(bad_ops[0]);
		     k++) {
			rec_ct(&r[0], nic_ni, &c[0]);
			rec_ct(&r[1], nic_ni, &c[1]);
			r[1].op = bad_ops[k];
			if (bad_ops[k] == SPINNIC_CTRL_BATCH) {
				r[1].u.batch.off = off;
				r[1].u.batch.count = 2;
			}
			rc = raw(off, 2, &f);
			KCHECK(self, rc == -EINVAL && f == 1, "op %u: %d at %u",
			       bad_ops[k], rc, f);
			KCHECK(self, r[0].status == SPINNIC_PTL_ABORTED &&
			       r[1].status == SPINNIC_PTL_ARG_INVALID,
			       "op %u: statuses %d %d", bad_ops[k],
			       r[0].status, r[1].status);
		}
	}
	/* another ABI version */
	rec_ct(&r[0], nic_ni, &c[0]);
	r[0].version = SPINNIC_ABI_VERSION - 1;
	KCHECK(self, raw(off, 1, &f) == -EINVAL && f == 0, "version");
	/* references: forward, to itself, to another kind, out of range */
	{
		static const uint32_t refs[][2] = {
			{ 0, 2 }, { 0, 1 }, { 1, 1 }, { 0, 200 },
		};

		for (unsigned k = 0; k < 4; k++) {
			uint32_t from = refs[k][0], to = refs[k][1];

			rec_ct(&r[0], nic_ni, &c[0]);
			rec_ct(&r[2], nic_ni, &c[2]);
			shim_ctrl_prep_md(&r[1], SPINNIC_CTRL_MD_BIND, nic_ni,
					  SPINNIC_HANDLE_NONE);
			r[1].version = SPINNIC_ABI_VERSION;
			r[1].u.md.start = (uint64_t)(uintptr_t)c;
			r[1].u.md.length = 64;
			/* k = 2: the MD names record 1 (itself) */
			r[1].u.md.ct = SPINNIC_BATCH_REF(k == 2 ? 1 : to);
			if (k == 1) /* an ME counting into the MD: kind */
				r[1].u.md.ct = SPINNIC_BATCH_REF(0),
				r[2].op = SPINNIC_CTRL_ME_UNLINK,
				r[2].u.me.me = SPINNIC_BATCH_REF(1);
			rc = raw(off, 3, &f);
			if (k == 1) {
				/* MD into CT 0: fine; ME_UNLINK of the MD */
				KCHECK(self, rc == -EINVAL && f == 2 &&
				       r[0].status == SPINNIC_PTL_ABORTED &&
				       r[1].status == SPINNIC_PTL_ABORTED,
				       "reference of another kind: %d at %u",
				       rc, f);
				continue;
			}
			KCHECK(self, rc == -EINVAL && f == 1 &&
			       r[0].status == SPINNIC_PTL_ABORTED,
			       "reference %u -> %u: %d at %u (%d)", from, to,
			       rc, f, r[0].status);
		}
	}
	/* a good raw one: a CT, an MD into it, the MD released, the CT
	 * freed, by reference */
	rec_ct(&r[0], nic_ni, &c[0]);
	shim_ctrl_prep_md(&r[1], SPINNIC_CTRL_MD_BIND, nic_ni,
			  SPINNIC_HANDLE_NONE);
	r[1].version = SPINNIC_ABI_VERSION;
	r[1].u.md.start = (uint64_t)(uintptr_t)c;
	r[1].u.md.length = 64;
	r[1].u.md.ct = SPINNIC_BATCH_REF(0);
	shim_ctrl_prep_md(&r[2], SPINNIC_CTRL_MD_RELEASE, nic_ni,
			  SPINNIC_BATCH_REF(1));
	r[2].version = SPINNIC_ABI_VERSION;
	shim_ctrl_prep_ct(&r[3], SPINNIC_CTRL_CT_FREE, nic_ni,
			  SPINNIC_BATCH_REF(0));
	r[3].version = SPINNIC_ABI_VERSION;
	rc = raw(off, 4, &f);
	KCHECK(self, rc == 0 && f == SPINNIC_HANDLE_NONE, "create and free "
	       "by reference: %d at %u", rc, f);
	KCHECK(self, r[0].status == 0 && r[3].status == 0 &&
	       r[1].u.md.ct == r[0].u.ct.ct, "replies");
	shim_heap_free(r);
	shim_heap_free(c);
	(void)n;
	kid_say(self, "info hostile: refused as a whole or at the record, "
		"earlier records undone");
	return 0;
}

/* ---- the records rewritten while spinnic reads them -------------------- */

struct flip {
	struct spinnic_ctrl_msg *r;
	unsigned n;
	volatile bool stop;
};

static void *
flipper(void *arg)
{
	struct flip *f = arg;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	while (!f->stop) {
		unsigned i;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = (unsigned)(x % f->n);
		switch ((x >> 8) % 6) {
		case 0:
			f->r[i].op = SPINNIC_CTRL_BATCH;
			break;
		case 1:
			f->r[i].op = SPINNIC_CTRL_ATTACH;
			break;
		case 2:
			f->r[i].u.ct.ct_off = x;
			break;
		case 3:
			f->r[i].u.md.ct = SPINNIC_BATCH_REF(x >> 40);
			break;
		case 4:
			((uint8_t *)&f->r[i])[(x >> 16) % 256] = (uint8_t)x;
			break;
		default:
			f->r[i].op = SPINNIC_CTRL_CT_ALLOC;
			f->r[i].version = SPINNIC_ABI_VERSION;
			break;
		}
	}
	return NULL;
}

static int
t_race(struct kid *self, uint32_t nic_ni)
{
	enum { NR = 16 };
	struct flip f = { .n = NR };
	struct spinnic_ct *c;
	pthread_t th;
	unsigned ok = 0, refused = 0;
	uint32_t failed;

	f.r = shim_heap_alloc(NR * sizeof(*f.r));
	c = shim_heap_alloc(NR * sizeof(*c));
	KCHECK(self, f.r != NULL && c != NULL, "heap");
	memset(c, 0, NR * sizeof(*c));
	KCHECK(self, pthread_create(&th, NULL, flipper, &f) == 0, "thread");
	for (int k = 0; k < 400; k++) {
		int rc;

		for (unsigned i = 0; i < NR; i++)
			rec_ct(&f.r[i], nic_ni, &c[i]);
		rc = raw(shim_region_off(f.r), NR, &failed);
		KCHECK(self, rc != -EIO, "spinnic gone at batch %d", k);
		if (rc == 0)
			ok++;
		else
			refused++;
		/* what a successful one created stays until exit */
	}
	f.stop = true;
	pthread_join(th, NULL);
	kid_say(self, "info race: 400 batches rewritten while read: %u "
		"applied, %u stopped, spinnic serving", ok, refused);
	/* left in place: the region is this process's to scribble on */
	return 0;
}

/* ---- the clients ------------------------------------------------------ */

/* The other client: a counted entry; its handles go to the test, which
 * hands them to the first; afterwards its entry and counter must work. */
static int
kid_other(struct kid *self, void *arg)
{
	static uint8_t src[LEN], dst[LEN];
	struct kid_ni n;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_handle_me_t me;
	ptl_me_t med;
	ptl_md_t mdd;
	char line[64];

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, PtlCTAlloc(n.ni, &ct) == PTL_OK, "CTAlloc");
	me_desc(&med, dst, ct);
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &med, PTL_PRIORITY_LIST, NULL,
				 &me) == PTL_OK, "MEAppend");
	md_desc(&mdd, src, PTL_CT_NONE);
	KCHECK(self, PtlMDBind(n.ni, &mdd, &md) == PTL_OK, "MDBind");
	kid_say(self, "handles %u %u %u", shim_to_ct(ct, NULL)->nic_id,
		(unsigned)(me & 0xffffffffu), shim_to_md(md, NULL)->nic_id);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strcmp(line, "check") == 0, "no check");
	memset(src, 0x3c, LEN);
	if (put_self(self, &n, md, ct, 1) != 0)
		return 1;
	KCHECK(self, kid_bytes_all(dst, LEN, 0x3c), "bytes");
	PtlMDRelease(md);
	PtlMEUnlink(me);
	PtlCTFree(ct);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* Free, by batch, the other client's handles (its NIC numbers): only
 * this client's tables are searched */
static int
t_other(struct kid *self, uint32_t nic_ni, const char *handles)
{
	struct spinnic_ctrl_msg *r = shim_heap_alloc(3 * sizeof(*r));
	unsigned ct, me, md;
	uint32_t f;

	KCHECK(self, r != NULL && sscanf(handles, "%u %u %u", &ct, &me,
					 &md) == 3, "handles %s", handles);
	shim_ctrl_prep_me(&r[0], SPINNIC_CTRL_ME_UNLINK, nic_ni, me);
	shim_ctrl_prep_md(&r[1], SPINNIC_CTRL_MD_RELEASE, nic_ni, md);
	shim_ctrl_prep_ct(&r[2], SPINNIC_CTRL_CT_FREE, nic_ni, ct);
	for (int i = 0; i < 3; i++) {
		r[i].version = SPINNIC_ABI_VERSION;
		/* one at a time: each must fail or touch only our own */
		(void)raw(shim_region_off(&r[i]), 1, &f);
	}
	shim_heap_free(r);
	return 0;
}

static int
kid_main(struct kid *self, void *arg)
{
	static uint8_t src[LEN], dst[LEN];
	struct kid_ni n;
	uint32_t nic_ni;
	char line[128];

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	nic_ni = shim_to_ni(n.ni, NULL)->nic_ni;
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strncmp(line, "other ", 6) == 0, "no other");
	if (t_other(self, nic_ni, line + 6) != 0)
		return 1;
	kid_say(self, "other done");
	if (t_success(self, &n, src, dst) != 0 ||
	    t_fail(self, &n, src, dst) != 0 ||
	    t_chunks(self, &n, src, dst) != 0 ||
	    t_hostile(self, &n, nic_ni) != 0 ||
	    t_success(self, &n, src, dst) != 0 ||
	    t_race(self, nic_ni) != 0)
		return 1;
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	char line[256], msg[300];
	struct kid k, o;
	long long v;

	itest_init("itest_batch", 170);
	itest_spinnic_start(NULL);
	kid_start(&o, "other", 0, false, kid_other, NULL);
	kid_expect(&o, "handles ", line, sizeof(line));
	kid_start(&k, "batcher", 0, false, kid_main, NULL);
	snprintf(msg, sizeof(msg), "other %s", line + 8);
	kid_tell(&k, msg);
	kid_expect(&k, "other done", line, sizeof(line));
	kid_tell(&o, "check");
	kid_expect(&o, "ok", line, sizeof(line));
	kid_end(&o);
	printf("itest_batch: another client's handles named in batches: its "
	       "counter and entry still work\n");
	for (;;) {
		kid_expect(&k, "", line, sizeof(line));
		if (strcmp(line, "ok") == 0)
			break;
		ITEST_CHECK(strncmp(line, "info ", 5) == 0, "batcher: %s",
			    line);
		printf("itest_batch: %s\n", line + 5);
	}
	kid_end(&k);
	itest_spinnic_finish();
	v = itest_counter(0, "batches");
	ITEST_CHECK(v > 1000, "batches %lld", v);
	v = itest_counter(0, "batch_refused");
	ITEST_CHECK(v >= 20, "batch_refused %lld", v);
	v = itest_counter(0, "batch_rollbacks");
	ITEST_CHECK(v > 1000, "batch_rollbacks %lld", v);
	v = itest_counter(0, "batch_undo_failed");
	ITEST_CHECK(v == 0, "batch_undo_failed %lld", v);
	itest_expect_no_leaks();
	printf("itest_batch: ok\n");
	return 0;
}
