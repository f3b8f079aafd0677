/* SPDX-License-Identifier: BSD-3-Clause */
/* NIs, portal table entries and MDs: control ops and handle resolution. */
#include <stdlib.h>

#include "ptl_internal.h"
#include "trig.h"

#define NI_OPTS (SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_NO_MATCHING | \
		 SPINNIC_PTL_NI_LOGICAL | SPINNIC_PTL_NI_PHYSICAL)
#define PT_OPTS (SPINNIC_PTL_PT_ONLY_USE_ONCE | SPINNIC_PTL_PT_ONLY_TRUNCATE | \
		 SPINNIC_PTL_PT_FLOWCTRL)
#define MD_OPTS (((1u << 8) - 1) | SPINNIC_PTL_IOVEC | SPINNIC_PTL_MD_STAGE)

struct ptl_ni *
ptl_ni_get(struct ptl_client *c, uint32_t h)
{
	unsigned kind = ptl_handle_ni(h);

	if (h == PTL_NONE || ptl_handle_type(h) != PTL_HT_NI ||
	    ptl_handle_gen(h) != 0 || ptl_handle_idx(h) != 0 ||
	    !c->ni[kind].active)
		return NULL;
	return &c->ni[kind];
}

struct ptl_md *
ptl_md_get(struct ptl_client *c, uint32_t h, struct ptl_ni **ni_p)
{
	struct ptl_ni *ni = &c->ni[ptl_handle_ni(h)];
	uint32_t i = ptl_handle_idx(h);
	struct ptl_md *md;

	if (h == PTL_NONE || ptl_handle_type(h) != PTL_HT_MD || !ni->active ||
	    i >= ni->n_md)
		return NULL;
	md = &ni->mds[i];
	if (!md->used || (md->gen & PTL_H_GEN_MASK) != ptl_handle_gen(h))
		return NULL;
	if (ni_p != NULL)
		*ni_p = ni;
	return md;
}

struct ptl_me *
ptl_me_get(struct ptl_client *c, uint32_t h, struct ptl_ni **ni_p)
{
	struct ptl_ni *ni = &c->ni[ptl_handle_ni(h)];
	uint32_t i = ptl_handle_idx(h);
	struct ptl_me *me;

	if (h == PTL_NONE || ptl_handle_type(h) != PTL_HT_ME || !ni->active ||
	    i >= ni->n_me)
		return NULL;
	me = &ni->mes[i];
	if (!me->used || (me->gen & PTL_H_GEN_MASK) != ptl_handle_gen(h))
		return NULL;
	if (ni_p != NULL)
		*ni_p = ni;
	return me;
}

bool
ptl_eq_valid(struct ptl_ni *ni, unsigned kind, uint32_t h)
{
	uint32_t i = ptl_handle_idx(h);

	return ptl_handle_type(h) == PTL_HT_EQ && ptl_handle_ni(h) == kind &&
	       i < ni->n_eq && ni->eqs[i].used &&
	       (ni->eqs[i].gen & PTL_H_GEN_MASK) == ptl_handle_gen(h);
}

bool
ptl_ct_valid(struct ptl_ni *ni, unsigned kind, uint32_t h)
{
	uint32_t i = ptl_handle_idx(h);

	return ptl_handle_type(h) == PTL_HT_CT && ptl_handle_ni(h) == kind &&
	       i < ni->n_ct && ni->cts[i].used &&
	       (ni->cts[i].gen & PTL_H_GEN_MASK) == ptl_handle_gen(h);
}

void
ptl_ni_free_arrays(struct ptl_ni *ni)
{
	uint32_t i;

	if (!ni->allocated)
		return;
	free(ni->pts);
	free(ni->eqs);
	free(ni->cts);
	for (i = 0; ni->mds != NULL && i < ni->n_md; i++)
		ptl_iovs_put(ni->mds[i].iov);
	for (i = 0; ni->mes != NULL && i < ni->n_me; i++)
		ptl_iovs_put(ni->mes[i].iov);
	free(ni->mds);
	free(ni->mes);
	free(ni->uhs);
	free(ni->trig.ents);
	free(ni->trig.fq);
	memset(&ni->trig, 0, sizeof(ni->trig));
	ni->allocated = false;
}

/* nic->lock held: free everything of one NI (no events: it is going). */
void
ptl_ni_teardown(struct ptl_client *c, unsigned kind)
{
	struct ptl_ni *ni = &c->ni[kind];
	uint32_t i;

	for (i = 0; i < ni->n_pt; i++) {
		struct ptl_pt *pt = &ni->pts[i];
		int l;

		if (!pt->used)
			continue;
		while (pt->uh_head != PTL_NIL)
			ptl_uh_remove(c, kind, pt, pt->uh_head);
		for (l = 0; l < 2; l++) {
			while (pt->list_head[l] != PTL_NIL) {
				uint32_t s = pt->list_head[l];

				ptl_me_list_remove(ni, pt, s);
				ni->mes[s].linked = false;
				if (ni->mes[s].refs == 0) {
					PTL_STAT_ADD(c->nic, mes_live, -1ull);
					ni->mes[s].used = false;
					ni->mes[s].gen++;
					ptl_iovs_put(ni->mes[s].iov);
					ni->mes[s].iov = NULL;
				}
			}
		}
		pt->used = false;
	}
	ptl_me_unreserve_all(c, kind);
	ptl_eq_release_all(ni);
	ptl_ct_release_all(c, kind);
	ptl_trig_drop_fired(c, kind);
	for (i = 0; i < ni->n_md; i++) {
		if (ni->mds[i].used) {
			ni->mds[i].used = false;
			ni->mds[i].gen++;
			ptl_iovs_put(ni->mds[i].iov);
			ni->mds[i].iov = NULL;
		}
	}
	ni->active = false;
	ni->refs = 0;
}

static int32_t
lim32(int32_t want, int32_t max)
{
	return want <= 0 || want > max ? max : want;
}

static uint64_t
lim64(uint64_t want, uint64_t max)
{
	return want == 0 || want > max ? max : want;
}

static int
ni_alloc_arrays(struct ptl_ni *ni)
{
	const struct spinnic_limits *l = &ni->lim;
	uint32_t i;

	ni->n_pt = (uint32_t)l->max_pt_index + 1;
	ni->n_eq = (uint32_t)l->max_eqs;
	ni->n_ct = (uint32_t)l->max_cts;
	ni->n_md = (uint32_t)l->max_mds;
	ni->n_me = (uint32_t)l->max_entries;
	ni->n_uh = (uint32_t)l->max_unexpected_headers;
	ni->pts = calloc(ni->n_pt, sizeof(*ni->pts));
	ni->eqs = calloc(ni->n_eq, sizeof(*ni->eqs));
	ni->cts = calloc(ni->n_ct, sizeof(*ni->cts));
	ni->mds = calloc(ni->n_md, sizeof(*ni->mds));
	ni->mes = calloc(ni->n_me, sizeof(*ni->mes));
	ni->uhs = calloc(ni->n_uh ? ni->n_uh : 1, sizeof(*ni->uhs));
	if (!ni->pts || !ni->eqs || !ni->cts || !ni->mds || !ni->mes ||
	    !ni->uhs) {
		free(ni->pts);
		free(ni->eqs);
		free(ni->cts);
		free(ni->mds);
		free(ni->mes);
		free(ni->uhs);
		return -ENOMEM;
	}
	ni->allocated = true;
	for (i = 0; i < ni->n_pt; i++) {
		struct ptl_pt *pt = &ni->pts[i];

		pt->list_head[0] = pt->list_head[1] = PTL_NIL;
		pt->list_tail[0] = pt->list_tail[1] = PTL_NIL;
		pt->uh_head = pt->uh_tail = PTL_NIL;
	}
	return 0;
}

/* PtlNIStatus: read one status register (caller holds the NIC lock). */
int
ptl_ctrl_status(struct ptl_client *c, struct spinnic_ctrl_status *r)
{
	struct ptl_ni *ni = ptl_ni_get(c, r->ni);

	if (ni == NULL || r->reg >= SPINNIC_PTL_SR_LAST)
		return SPINNIC_PTL_ARG_INVALID;
	r->value = ni->sr[r->reg];
	return SPINNIC_PTL_OK;
}

int
ptl_ctrl_ni(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    struct spinnic_ctrl_ni *r)
{
	const struct spinnic_limits *max = &nic->conf.limits;
	struct ptl_ni *ni;
	unsigned kind;
	int rc;

	if (op == SPINNIC_CTRL_NI_FINI) {
		ni = ptl_ni_get(c, r->ni);
		if (ni == NULL)
			return SPINNIC_PTL_ARG_INVALID;
		if (--ni->refs == 0)
			ptl_ni_teardown(c, ptl_handle_ni(r->ni));
		return SPINNIC_PTL_OK;
	}
	/* NI_INIT */
	if ((r->options & ~NI_OPTS) ||
	    !(r->options & SPINNIC_PTL_NI_MATCHING) ==
	    !(r->options & SPINNIC_PTL_NI_NO_MATCHING) ||
	    !(r->options & SPINNIC_PTL_NI_LOGICAL) ==
	    !(r->options & SPINNIC_PTL_NI_PHYSICAL))
		return SPINNIC_PTL_ARG_INVALID;
	kind = ((r->options & SPINNIC_PTL_NI_NO_MATCHING) ?
		SPINNIC_WIRE_NI_NO_MATCHING : 0) |
	       ((r->options & SPINNIC_PTL_NI_LOGICAL) ?
		SPINNIC_WIRE_NI_LOGICAL : 0);
	ni = &c->ni[kind];
	if (!ni->active) {
		if (!ni->allocated) {
			struct spinnic_limits *l = &ni->lim;
			const struct spinnic_limits *d = &r->desired;

			memset(l, 0, sizeof(*l));
			l->max_entries = lim32(d->max_entries,
					       max->max_entries);
			l->max_unexpected_headers =
				lim32(d->max_unexpected_headers,
				      max->max_unexpected_headers);
			l->max_mds = lim32(d->max_mds, max->max_mds);
			l->max_cts = lim32(d->max_cts, max->max_cts);
			l->max_eqs = lim32(d->max_eqs, max->max_eqs);
			l->max_pt_index = lim32(d->max_pt_index,
						max->max_pt_index);
			l->max_iovecs = lim32(d->max_iovecs, max->max_iovecs);
			l->max_list_size = lim32(d->max_list_size,
						 max->max_list_size);
			l->max_triggered_ops = lim32(d->max_triggered_ops,
						     max->max_triggered_ops);
			l->features = 0;
			l->max_msg_size = lim64(d->max_msg_size,
						max->max_msg_size);
			l->max_atomic_size = max->max_atomic_size;
			l->max_fetch_atomic_size = max->max_fetch_atomic_size;
			l->max_waw_ordered_size = max->max_waw_ordered_size;
			l->max_war_ordered_size = max->max_war_ordered_size;
			l->max_volatile_size = max->max_volatile_size;
			rc = ni_alloc_arrays(ni);
			if (rc < 0)
				return SPINNIC_PTL_NO_SPACE;
		}
		ni->active = true;
		ni->refs = 0;
		ni->options = r->options;
	}
	ni->refs++;
	r->ni = ptl_handle(kind, PTL_HT_NI, 0, 0);
	r->actual = ni->lim;
	return SPINNIC_PTL_OK;
}

int
ptl_ctrl_pt(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    struct spinnic_ctrl_pt *r)
{
	struct ptl_ni *ni = ptl_ni_get(c, r->ni);
	unsigned kind = ptl_handle_ni(r->ni);
	struct ptl_pt *pt;
	uint32_t i;

	if (ni == NULL)
		return SPINNIC_PTL_ARG_INVALID;
	if (op == SPINNIC_CTRL_PT_ALLOC) {
		if (r->options & ~PT_OPTS)
			return SPINNIC_PTL_ARG_INVALID;
		if ((r->options & SPINNIC_PTL_PT_FLOWCTRL) && r->eq == PTL_NONE)
			return SPINNIC_PTL_PT_EQ_NEEDED;
		if (r->eq != PTL_NONE && !ptl_eq_valid(ni, kind, r->eq))
			return SPINNIC_PTL_ARG_INVALID;
		if (r->pt_index == SPINNIC_PTL_PT_ANY) {
			for (i = 0; i < ni->n_pt; i++)
				if (!ni->pts[i].used)
					break;
			if (i == ni->n_pt)
				return SPINNIC_PTL_PT_FULL;
		} else {
			i = r->pt_index;
			if (i >= ni->n_pt)
				return SPINNIC_PTL_ARG_INVALID;
			if (ni->pts[i].used)
				return SPINNIC_PTL_PT_IN_USE;
		}
		pt = &ni->pts[i];
		pt->used = true;
		pt->enabled = true;
		pt->options = r->options;
		pt->eq = r->eq;
		pt->list_head[0] = pt->list_head[1] = PTL_NIL;
		pt->list_tail[0] = pt->list_tail[1] = PTL_NIL;
		pt->list_len[0] = pt->list_len[1] = 0;
		pt->uh_head = pt->uh_tail = PTL_NIL;
		r->pt_index = i;
		return SPINNIC_PTL_OK;
	}
	if (r->pt_index >= ni->n_pt || !ni->pts[r->pt_index].used)
		return SPINNIC_PTL_ARG_INVALID;
	pt = &ni->pts[r->pt_index];
	switch (op) {
	case SPINNIC_CTRL_PT_FREE:
		/* an entry reserved for a triggered append is one too */
		if (pt->list_head[0] != PTL_NIL || pt->list_head[1] != PTL_NIL ||
		    pt->reserved[0] != 0 || pt->reserved[1] != 0)
			return SPINNIC_PTL_PT_IN_USE;
		while (pt->uh_head != PTL_NIL)
			ptl_uh_remove(c, kind, pt, pt->uh_head);
		pt->used = false;
		pt->enabled = false;
		return SPINNIC_PTL_OK;
	case SPINNIC_CTRL_PT_ENABLE:
		pt->enabled = true;
		return SPINNIC_PTL_OK;
	case SPINNIC_CTRL_PT_DISABLE:
		pt->enabled = false;
		return SPINNIC_PTL_OK;
	default:
		return SPINNIC_PTL_ARG_INVALID;
	}
}

int
ptl_ctrl_md(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    struct spinnic_ctrl_md *r)
{
	struct ptl_iovs *iov = NULL;
	struct ptl_ni *ni;
	struct ptl_md *md;
	unsigned kind;
	uint32_t i;
	int rc;

	if (op == SPINNIC_CTRL_MD_RELEASE) {
		md = ptl_md_get(c, r->md, NULL);
		if (md == NULL)
			return SPINNIC_PTL_ARG_INVALID;
		md->used = false;
		md->gen++;
		/* an access in flight keeps its own reference */
		ptl_iovs_put(md->iov);
		md->iov = NULL;
		return SPINNIC_PTL_OK;
	}
	ni = ptl_ni_get(c, r->ni);
	kind = ptl_handle_ni(r->ni);
	if (ni == NULL || (r->options & ~MD_OPTS) ||
	    r->start + r->length < r->start)
		return SPINNIC_PTL_ARG_INVALID;
	if (r->eq != PTL_NONE && !ptl_eq_valid(ni, kind, r->eq))
		return SPINNIC_PTL_ARG_INVALID;
	if (r->ct != PTL_NONE && !ptl_ct_valid(ni, kind, r->ct))
		return SPINNIC_PTL_ARG_INVALID;
	for (i = 0; i < ni->n_md; i++)
		if (!ni->mds[i].used)
			break;
	if (i == ni->n_md)
		return SPINNIC_PTL_NO_SPACE;
	if (r->options & SPINNIC_PTL_IOVEC) {
		/* start/length name the client's ptl_iovec_t array: copied
		 * once, each entry checked; the MD's length is their sum */
		rc = ptl_iovs_load(c, r->start, r->length,
				   (uint32_t)ni->lim.max_iovecs, &iov);
		if (rc < 0) {
			PTL_DBG("MD bind: iovec array refused (%d)", rc);
			return SPINNIC_PTL_ARG_INVALID;
		}
	}
	md = &ni->mds[i];
	md->used = true;
	md->start = r->start;
	md->length = iov != NULL ? iov->total : r->length;
	md->iov = iov;
	md->options = r->options;
	md->eq = r->eq;
	md->ct = r->ct;
	r->md = ptl_handle(kind, PTL_HT_MD, md->gen, i);
	return SPINNIC_PTL_OK;
}
