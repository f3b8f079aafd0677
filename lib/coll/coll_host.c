/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SPIN_SCHED_HOST (spin_coll.h): a compiled schedule progressed by the
 * host only, inside start, test and wait: paper 002's cDAG over MPI, the
 * baseline of `spinnic-bench overlap`. The schedule is compiled as for
 * the NIC (the same counters, entries and list of triggered operations,
 * struct trig); nothing of the list is posted. Instead each progress
 * call reads every counter (PtlCTGet: shared memory, no round trip) and
 * issues, in list order, each operation whose counter reached its
 * threshold for the next instance it has not been issued for (TW_FIRST
 * ones for the first instance only, TW_LATER ones from the second on):
 *   TP_PUT       PtlPut
 *   TP_ATOMIC    PtlAtomic
 *   TP_MEAPPEND  PtlMEAppend (a use-once entry, as the triggered append)
 *   TP_CTINC     counted host-side only (add[]), never sent to the NIC:
 *                a dependency edge is the library's bookkeeping
 * and repeats until a pass issues nothing. A counter's value is its
 * success count plus the host's increments. A command ring that is full
 * (PTL_NO_SPACE) leaves the operation for the next call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

struct coll_host {
	unsigned nt, ncts;
	uint64_t *fired;            /* per operation: instances issued */
	unsigned *trig_ix;          /* per operation: its counter */
	unsigned *ct_ix;            /* TP_CTINC: the counter it counts */
	const ptl_handle_ct_t *cts; /* the schedule's (not owned) */
	ptl_size_t *add;            /* per counter: host increments */
	ptl_size_t *val;            /* per counter: this pass's value */
};

static int
ct_index(const struct coll_host *h, ptl_handle_ct_t ct, unsigned *ix)
{
	unsigned k;

	for (k = 0; k < h->ncts; k++)
		if (h->cts[k] == ct) {
			*ix = k;
			return 0;
		}
	return -EINVAL;
}

void
coll_host_free(struct coll_host *h)
{
	if (h == NULL)
		return;
	free(h->fired);
	free(h->trig_ix);
	free(h->ct_ix);
	free(h->add);
	free(h->val);
	free(h);
}

int
coll_host_prepare(struct coll_host **h_p, const struct trig *t, unsigned nt,
		  const ptl_handle_ct_t *cts, unsigned ncts)
{
	struct coll_host *h = calloc(1, sizeof(*h));
	unsigned i;

	*h_p = NULL;
	if (h == NULL)
		return -ENOMEM;
	h->nt = nt;
	h->ncts = ncts;
	h->cts = cts;
	h->fired = calloc(nt ? nt : 1, sizeof(*h->fired));
	h->trig_ix = calloc(nt ? nt : 1, sizeof(*h->trig_ix));
	h->ct_ix = calloc(nt ? nt : 1, sizeof(*h->ct_ix));
	h->add = calloc(ncts ? ncts : 1, sizeof(*h->add));
	h->val = calloc(ncts ? ncts : 1, sizeof(*h->val));
	if (h->fired == NULL || h->trig_ix == NULL || h->ct_ix == NULL ||
	    h->add == NULL || h->val == NULL) {
		coll_host_free(h);
		return -ENOMEM;
	}
	for (i = 0; i < nt; i++) {
		/* an operation of the later instances only counts the
		 * first as issued (instance i at thr + i * per) */
		h->fired[i] = t[i].when == TW_LATER;
		if (ct_index(h, t[i].trig, &h->trig_ix[i]) != 0 ||
		    (t[i].kind == TP_CTINC &&
		     ct_index(h, t[i].ct, &h->ct_ix[i]) != 0)) {
			coll_host_free(h);
			return -EINVAL;
		}
	}
	*h_p = h;
	return 0;
}

int
coll_host_inc(struct coll_host *h, ptl_handle_ct_t ct)
{
	unsigned k;

	if (ct_index(h, ct, &k) != 0)
		return -EINVAL;
	h->add[k]++;
	return 0;
}

ptl_size_t
coll_host_value(struct coll_host *h, ptl_handle_ct_t ct)
{
	ptl_ct_event_t ev = { 0, 0 };
	unsigned k;

	if (ct_index(h, ct, &k) != 0 || PtlCTGet(ct, &ev) != PTL_OK)
		return 0;
	return ev.success + h->add[k];
}

/* @return 1 issued, 0 not now (ring full), < 0 an error */
static int
issue(struct coll_host *h, spin_sched_t *s, const struct trig *t,
      unsigned i)
{
	spin_coll_comm_t *c = coll_sched_comm(s);
	ptl_process_t to = { .rank = t->rank };
	int rc = PTL_OK;

	switch (t->kind) {
	case TP_PUT:
		rc = PtlPut(t->md, t->loff, t->len, t->ack, to, c->pt, t->bits,
			    t->roff, NULL, 0);
		break;
	case TP_ATOMIC:
		rc = PtlAtomic(t->md, t->loff, t->len, t->ack, to, c->pt,
			       t->bits, t->roff, NULL, 0, t->op, t->type);
		break;
	case TP_CTINC:
		h->add[h->ct_ix[i]]++;
		h->val[h->ct_ix[i]]++;
		return 1;
	case TP_MEAPPEND: {
		ptl_handle_me_t me_h;
		ptl_me_t me;

		coll_sched_me(s, t, &me);
		rc = PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL,
				 &me_h);
		if (rc == PTL_OK && coll_sched_keep_me(s, me_h) != 0) {
			PtlMEUnlink(me_h);
			return -ENOMEM;
		}
		break;
	}
	default:
		return -EINVAL;
	}
	if (rc == PTL_NO_SPACE)
		return 0;
	if (rc != PTL_OK) {
		fprintf(stderr, "spin_coll: host-progressed operation %u "
			"(kind %u): Portals error %d\n", i, t->kind, rc);
		return -EIO;
	}
	return 1;
}

int
coll_host_progress(struct coll_host *h, spin_sched_t *s,
		   const struct trig *t, uint64_t inst)
{
	unsigned i, k;
	bool more = true, full = false;
	int rc;

	while (more && !full) {
		more = false;
		for (k = 0; k < h->ncts; k++) {
			ptl_ct_event_t ev;

			/* a failed message never reaches its threshold:
			 * the instance ends with the error (as the
			 * offloaded wait's failure count does) */
			if (PtlCTGet(h->cts[k], &ev) != PTL_OK ||
			    ev.failure != 0)
				return -EIO;
			h->val[k] = ev.success + h->add[k];
		}
		for (i = 0; i < h->nt && !full; i++)
			while (h->fired[i] < (t[i].when == TW_FIRST ?
					      (inst > 0) : inst) &&
			       h->val[h->trig_ix[i]] >=
			       t[i].thr + h->fired[i] * t[i].per) {
				rc = issue(h, s, &t[i], i);
				if (rc < 0)
					return rc;
				if (rc == 0) {
					full = true;
					break;
				}
				h->fired[i]++;
				more = true;
			}
	}
	return 0;
}

int
spin_coll_comm_set_sched_flags(spin_coll_comm_t *comm, unsigned flags)
{
	if (comm == NULL ||
	    (flags & ~(SPIN_SCHED_HOST | SPIN_SCHED_DYNAMIC)) != 0)
		return -EINVAL;
	comm->sched_flags = flags;
	return 0;
}
