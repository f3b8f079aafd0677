/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pre-matching of a schedule's messages (spin_coll.h "Wildcards";
 * doc/NOTES.md "lib/coll: wildcard receives").
 *
 * Without wildcards both ends number locally: the k-th send to (dst, tag)
 * meets the k-th receive from (src, tag). A wildcard receive
 * (SPIN_SCHED_ANY_TAG, SPIN_SCHED_ANY_SOURCE) cannot be numbered
 * locally, so every pre-matched compile writes this rank's send table
 * (per destination, in creation order: tag, length, kind, seq) into the
 * communicator's table buffer, which one persistent entry exposes to
 * PtlGet; a rank with wildcards reads the tables of the sources they may
 * match and resolves its receives from them deterministically, taking
 * the sender's seq: the sender needs nothing back and its match bits do
 * not change.
 *
 * The table is rewritten in place by each compile, stamped with the
 * compile's number (every rank counts compiles alike). A reader of
 * compile k retries until the stamp says k; the writer rewrites only at
 * compile k+1, after compile k's closing barrier, which no rank enters
 * before it finished reading. Records are written before the slots that
 * point at them, so a slot stamped k finds its records written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spin.h>

#include "coll_internal.h"

#define XCHG_TIMEOUT_MS 30000u
#define XREC_MAGIC 0xa5u
#define XSLOT_MAGIC 0x5e7dab1eu
/* a peer's table may list at most this many sends to one rank */
#define XREC_MAX (1u << 20)

/* One slot per destination, at 16 * dst. The compile's number at both
 * ends, written after the rest: a read that copies in either direction
 * and sees both is of a complete slot. */
struct xslot {
	uint32_t gen;      /* the compile */
	uint32_t off;      /* its first record */
	uint32_t cnt;
	uint32_t chk;      /* gen ^ XSLOT_MAGIC (a zeroed slot: no compile) */
};
_Static_assert(sizeof(struct xslot) == 16, "xslot is read from peers");

/* One send of the table, 32 bytes, from 16 * P. */
struct xrec {
	uint64_t len;
	uint32_t tag;
	uint32_t dst;
	uint32_t idx;      /* its place among the sends to dst */
	uint32_t gen;
	uint16_t seq;
	uint8_t acc;
	uint8_t magic;
	uint32_t pad;
};
_Static_assert(sizeof(struct xrec) == 32, "xrec is read from peers");

/* The communicator's table and its entry (coll_internal.h). */
struct coll_xtab {
	uint8_t *buf;
	size_t cap;
	ptl_handle_me_t me;
};

struct coll_xchg {
	spin_coll_comm_t *c;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md_slot, md_rec;
	struct xslot *slots;   /* one per rank */
	struct xrec *recs;
	size_t nrecs;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- local numbering ---------------------------------------------------- */

struct nkey {
	uint32_t tag;
	unsigned peer, i;
	bool send;
};

static int
by_key(const void *a, const void *b)
{
	const struct nkey *x = a, *y = b;

	if (x->send != y->send)
		return x->send ? -1 : 1;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->i < y->i ? -1 : 1;
}

int
coll_match_number(struct coll_msg *m, unsigned n)
{
	struct nkey *ix;
	unsigned i, k = 0, nix = 0;

	ix = malloc((n ? n : 1) * sizeof(*ix));
	if (ix == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!coll_msg_wild(&m[i]))
			ix[nix++] = (struct nkey){ .tag = m[i].tag,
				.peer = m[i].peer, .i = i, .send = m[i].send };
	qsort(ix, nix, sizeof(*ix), by_key);
	for (i = 0; i < nix; i++) {
		k = i > 0 && ix[i - 1].send == ix[i].send &&
		    ix[i - 1].peer == ix[i].peer &&
		    ix[i - 1].tag == ix[i].tag ? k + 1 : 0;
		m[ix[i].i].seq = k;
		if (k >= COLL_SEQ_MAX) {
			free(ix);
			return -E2BIG;
		}
	}
	free(ix);
	return 0;
}

/* ---- the exchange ------------------------------------------------------- */

static int
ptl_rc(int rc, const char *what)
{
	if (rc == PTL_OK)
		return 0;
	if (rc == PTL_NO_SPACE || rc == PTL_LIST_TOO_LONG)
		return -ENOSPC;
	fprintf(stderr, "spin_coll: %s (coll_match.c): Portals error %d\n",
		what, rc);
	return -EIO;
}

void
coll_match_comm_free(spin_coll_comm_t *c)
{
	struct coll_xtab *t = c->xtab;
	int k;

	if (t == NULL)
		return;
	if (t->me != PTL_INVALID_HANDLE)
		for (k = 0; k < 1000 && PtlMEUnlink(t->me) == PTL_IN_USE; k++)
			usleep(100);
	coll_mem_free(t->buf);
	free(t);
	c->xtab = NULL;
}

/* room for @p len bytes in the communicator's table, exposed by its
 * entry (re-appended only when the table grows) */
static int
xtab_room(spin_coll_comm_t *c, size_t len)
{
	struct coll_xtab *t = c->xtab;
	ptl_me_t me;
	size_t cap;
	int rc, k;

	if (t == NULL) {
		t = c->xtab = calloc(1, sizeof(*t));
		if (t == NULL)
			return -ENOMEM;
		t->me = PTL_INVALID_HANDLE;
	}
	if (t->buf != NULL && t->cap >= len)
		return 0;
	/* a reader that comes meanwhile finds no entry and reads again */
	if (t->me != PTL_INVALID_HANDLE)
		for (k = 0; k < 1000 && PtlMEUnlink(t->me) == PTL_IN_USE; k++)
			usleep(100);
	t->me = PTL_INVALID_HANDLE;
	coll_mem_free(t->buf);
	cap = t->cap * 2 > len ? t->cap * 2 : len + 64 * sizeof(struct xrec);
	t->buf = coll_mem_alloc(cap);
	t->cap = t->buf != NULL ? cap : 0;
	if (t->buf == NULL)
		return -ENOMEM;
	memset(&me, 0, sizeof(me));
	me.start = t->buf;
	me.length = t->cap;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.rank = PTL_RANK_ANY;
	me.match_bits = coll_bits(COLL_T_XCHG, 0, c->rank, 0, 0);
	me.options = PTL_ME_OP_GET | PTL_ME_EVENT_COMM_DISABLE |
		     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
	rc = ptl_rc(PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL,
				&t->me), "PtlMEAppend (send table)");
	if (rc != 0)
		t->me = PTL_INVALID_HANDLE;
	return rc;
}

/* this rank's table of compile @p gen */
static int
expose(spin_coll_comm_t *c, uint32_t gen, const struct coll_msg *m,
       unsigned n)
{
	unsigned P = c->size, i, d;
	struct xslot *slot;
	struct xrec *rec;
	uint32_t *fill;
	size_t nsend = 0;
	int rc;

	for (i = 0; i < n; i++)
		nsend += m[i].send;
	rc = xtab_room(c, (size_t)P * sizeof(*slot) + nsend * sizeof(*rec));
	if (rc != 0)
		return rc;
	fill = calloc(P + 1, sizeof(*fill));
	if (fill == NULL)
		return -ENOMEM;
	slot = (struct xslot *)c->xtab->buf;
	rec = (struct xrec *)(c->xtab->buf + (size_t)P * sizeof(*slot));
	/* fill[d + 1]: sends to d; then the prefix: d's first record */
	for (i = 0; i < n; i++)
		if (m[i].send)
			fill[m[i].peer + 1]++;
	for (d = 0; d < P; d++)
		fill[d + 1] += fill[d];
	for (i = 0; i < n; i++) {
		const struct coll_msg *v = &m[i];

		if (!v->send)
			continue;
		/* stable: creation order within a destination */
		rec[fill[v->peer]] = (struct xrec){ .len = v->len,
			.tag = v->tag, .dst = v->peer, .gen = gen,
			.seq = (uint16_t)v->seq, .acc = v->acc,
			.magic = XREC_MAGIC };
		fill[v->peer]++;
	}
	/* fill[d] is now d's end; idx and the slots from it */
	for (d = P; d-- > 0;) {
		uint32_t first = d ? fill[d - 1] : 0, k;

		for (k = first; k < fill[d]; k++)
			rec[k].idx = k - first;
		slot[d].off = first;
		slot[d].cnt = fill[d] - first;
		/* the stamps last: records and counts are there before */
		__atomic_store_n(&slot[d].gen, gen, __ATOMIC_RELEASE);
		__atomic_store_n(&slot[d].chk, gen ^ XSLOT_MAGIC,
				 __ATOMIC_RELEASE);
	}
	free(fill);
	return 0;
}

static int
bind(struct coll_xchg *x, void *buf, size_t len, ptl_handle_md_t *md_p)
{
	ptl_md_t md;

	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = len;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = x->ct;
	md.options = PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_SEND_DISABLE;
	return ptl_rc(PtlMDBind(x->c->ni, &md, md_p), "PtlMDBind");
}

/* wait until @p ct counted @p want replies (good or failed) */
static int
ct_reach(struct coll_xchg *x, ptl_size_t want, uint64_t t0)
{
	ptl_ct_event_t ev;
	unsigned which;
	int rc;

	for (;;) {
		rc = PtlCTPoll(&x->ct, &want, 1, 100, &ev, &which);
		if (rc == PTL_OK)
			return 0;
		if (rc != PTL_CT_NONE_REACHED)
			return ptl_rc(rc, "PtlCTPoll");
		if (now_ms() - t0 > XCHG_TIMEOUT_MS)
			return -ETIMEDOUT;
	}
}

static bool
slot_ready(const struct xslot *s, uint32_t gen)
{
	return s->gen == gen && s->chk == (gen ^ XSLOT_MAGIC);
}

/*
 * Read this rank's slot of every peer in @p need until it is stamped
 * @p gen (a get that finds no entry fails; an older stamp: the peer has
 * not reached this compile yet), then each one's records for this rank
 * into x->recs, peer by peer: @p first receives each peer's first record
 * there, @p cnt its count.
 */
static int
pull(struct coll_xchg *x, uint32_t gen, const bool *need, size_t *first,
     size_t *cnt)
{
	spin_coll_comm_t *c = x->c;
	unsigned P = c->size, me = c->rank, r, left;
	uint64_t t0 = now_ms();
	ptl_size_t issued = 0, fail0;
	ptl_ct_event_t ev;
	size_t total = 0;
	int rc;

	rc = ptl_rc(PtlCTAlloc(c->ni, &x->ct), "PtlCTAlloc");
	if (rc != 0) {
		x->ct = PTL_CT_NONE;
		return rc;
	}
	x->slots = coll_mem_alloc((size_t)P * sizeof(*x->slots));
	if (x->slots == NULL)
		return -ENOMEM;
	rc = bind(x, x->slots, (size_t)P * sizeof(*x->slots), &x->md_slot);
	if (rc != 0) {
		x->md_slot = PTL_INVALID_HANDLE;
		return rc;
	}
	for (;;) {
		left = 0;
		for (r = 0; r < P; r++) {
			if (!need[r] || r == me ||
			    slot_ready(&x->slots[r], gen))
				continue;
			rc = ptl_rc(PtlGet(x->md_slot,
					   (ptl_size_t)r * sizeof(*x->slots),
					   sizeof(*x->slots),
					   (ptl_process_t){ .rank = r }, c->pt,
					   coll_bits(COLL_T_XCHG, 0, r, 0, 0),
					   (ptl_size_t)me * sizeof(*x->slots),
					   NULL), "PtlGet (send table)");
			if (rc != 0)
				return rc;
			issued++;
			left++;
		}
		if (left == 0)
			break;
		rc = ct_reach(x, issued, t0);
		if (rc != 0)
			return rc;
		for (r = 0, left = 0; r < P; r++)
			left += need[r] && r != me &&
				!slot_ready(&x->slots[r], gen);
		if (left == 0)
			break;
		/* a peer that has not reached this compile yet */
		if (now_ms() - t0 > XCHG_TIMEOUT_MS)
			return -ETIMEDOUT;
		usleep(1000);
	}
	for (r = 0; r < P; r++) {
		first[r] = total;
		cnt[r] = 0;
		if (!need[r] || r == me)
			continue;
		if (x->slots[r].cnt > XREC_MAX) {
			fprintf(stderr, "spin_coll: rank %u: rank %u's send "
				"table lists %u sends to it (at most %u)\n", me,
				r, x->slots[r].cnt, XREC_MAX);
			return -EPROTO;
		}
		cnt[r] = x->slots[r].cnt;
		total += cnt[r];
	}
	x->nrecs = total;
	x->recs = coll_mem_alloc(total * sizeof(*x->recs));
	if (x->recs == NULL)
		return -ENOMEM;
	if (total == 0)
		return 0;
	rc = bind(x, x->recs, total * sizeof(*x->recs), &x->md_rec);
	if (rc != 0) {
		x->md_rec = PTL_INVALID_HANDLE;
		return rc;
	}
	rc = ptl_rc(PtlCTGet(x->ct, &ev), "PtlCTGet");
	if (rc != 0)
		return rc;
	fail0 = ev.failure;
	for (r = 0; r < P; r++) {
		if (cnt[r] == 0)
			continue;
		rc = ptl_rc(PtlGet(x->md_rec, first[r] * sizeof(*x->recs),
				   cnt[r] * sizeof(*x->recs),
				   (ptl_process_t){ .rank = r }, c->pt,
				   coll_bits(COLL_T_XCHG, 0, r, 0, 0),
				   (ptl_size_t)P * sizeof(*x->slots) +
				   (ptl_size_t)x->slots[r].off *
				   sizeof(*x->recs), NULL),
			    "PtlGet (send records)");
		if (rc != 0)
			return rc;
		issued++;
	}
	rc = ct_reach(x, issued, t0);
	if (rc == 0)
		rc = ptl_rc(PtlCTGet(x->ct, &ev), "PtlCTGet");
	/* the failures before were entries not there yet; these reads are
	 * of entries read once already, which stay until the barrier */
	if (rc == 0 && ev.failure != fail0)
		rc = -EIO;
	return rc;
}

/* peer @p r's records for this rank are well-formed (a short read
 * leaves zeros: no marker) */
static int
check_recs(const struct coll_xchg *x, unsigned r, const struct xrec *rec,
	   size_t n, uint32_t gen)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (rec[k].magic != XREC_MAGIC || rec[k].dst != x->c->rank ||
		    rec[k].idx != k || rec[k].gen != gen ||
		    rec[k].seq >= COLL_SEQ_MAX ||
		    rec[k].tag >= SPIN_COLL_TAG_MAX || rec[k].acc > 1) {
			fprintf(stderr, "spin_coll: rank %u: rank %u's send "
				"table: record %zu malformed (or short)\n",
				x->c->rank, r, k);
			return -EPROTO;
		}
	return 0;
}

static bool
fits(const struct xrec *r, const struct coll_msg *v)
{
	return r->len == v->len && r->acc == v->acc &&
	       (v->tag == SPIN_SCHED_ANY_TAG || r->tag == v->tag);
}

static void
say_unmatched(const spin_coll_comm_t *c, const struct coll_msg *v)
{
	char src[16], tag[16];

	snprintf(src, sizeof(src), "%u", v->peer);
	snprintf(tag, sizeof(tag), "%u", v->tag);
	fprintf(stderr, "spin_coll: rank %u: %sreceive (vertex %u) of %llu "
		"bytes from %s with tag %s matches no send\n", c->rank,
		v->acc ? "accumulating " : "", v->vid,
		(unsigned long long)v->len,
		v->peer == SPIN_SCHED_ANY_SOURCE ? "any rank" : src,
		v->tag == SPIN_SCHED_ANY_TAG ? "any" : tag);
}

int
coll_match_exchange(spin_coll_comm_t *c, uint32_t gen, struct coll_msg *m,
		    unsigned n, struct coll_xchg **x_p)
{
	unsigned P = c->size, me = c->rank, i, r, pass;
	struct coll_xchg *x;
	const struct xslot *myslot;
	const struct xrec *own;
	size_t *first = NULL, *cnt = NULL, ownn;
	bool *need = NULL, any = false;
	uint8_t *used = NULL;
	int rc;

	*x_p = NULL;
	rc = expose(c, gen, m, n);
	if (rc != 0)
		return rc;
	for (i = 0; i < n && !any; i++)
		any = coll_msg_wild(&m[i]);
	if (!any)	/* nothing to read: the table alone */
		return 0;
	*x_p = x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->c = c;
	x->ct = PTL_CT_NONE;
	x->md_slot = x->md_rec = PTL_INVALID_HANDLE;
	need = calloc(P, sizeof(*need));
	first = calloc(P, sizeof(*first));
	cnt = calloc(P, sizeof(*cnt));
	if (need == NULL || first == NULL || cnt == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!coll_msg_wild(&m[i]))
			continue;
		if (m[i].peer == SPIN_SCHED_ANY_SOURCE)
			memset(need, 1, P * sizeof(*need));
		else
			need[m[i].peer] = true;
	}
	rc = pull(x, gen, need, first, cnt);
	for (r = 0; r < P && rc == 0; r++)
		rc = check_recs(x, r, x->recs + first[r], cnt[r], gen);
	if (rc != 0)
		goto out;
	/* this rank's own sends to itself: straight from its table */
	myslot = (const struct xslot *)c->xtab->buf + me;
	own = (const struct xrec *)(c->xtab->buf +
				    (size_t)P * sizeof(struct xslot)) +
	      myslot->off;
	ownn = myslot->cnt;
	used = calloc(x->nrecs + ownn + 1, 1);
	if (used == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* pass 0: specific receives from a source read; 1: wildcards */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			struct coll_msg *v = &m[i];
			unsigned lo, hi;
			bool found = false;

			if (v->send || coll_msg_wild(v) != (pass == 1) ||
			    (pass == 0 && !need[v->peer]))
				continue;
			lo = v->peer == SPIN_SCHED_ANY_SOURCE ? 0 : v->peer;
			hi = v->peer == SPIN_SCHED_ANY_SOURCE ? P : v->peer + 1;
			for (r = lo; r < hi && !found; r++) {
				const struct xrec *rec = r == me ? own :
							 x->recs + first[r];
				uint8_t *u = used + (r == me ? x->nrecs :
						      first[r]);
				size_t k, nr = r == me ? ownn : cnt[r];

				for (k = 0; k < nr; k++) {
					if (u[k] || !fits(&rec[k], v))
						continue;
					u[k] = 1;
					v->peer = r;
					v->tag = rec[k].tag;
					v->seq = rec[k].seq;
					found = true;
					break;
				}
			}
			if (!found) {
				say_unmatched(c, v);
				rc = -ENOMSG;
				goto out;
			}
		}
out:
	free(used);
	free(need);
	free(first);
	free(cnt);
	return rc;
}

void
coll_match_end(struct coll_xchg *x)
{
	if (x == NULL)
		return;
	if (x->md_slot != PTL_INVALID_HANDLE)
		PtlMDRelease(x->md_slot);
	if (x->md_rec != PTL_INVALID_HANDLE)
		PtlMDRelease(x->md_rec);
	if (x->ct != PTL_CT_NONE)
		PtlCTFree(x->ct);
	coll_mem_free(x->slots);
	coll_mem_free(x->recs);
	free(x);
}
