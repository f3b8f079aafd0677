/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Read-only views of the NIC state for monitoring (spinnic's telemetry):
 * a summary of one client and a copy of its linked MEs. Both take the NIC
 * lock, like every control operation, so they see a consistent state; they
 * copy and never hand out pointers into it. The work under the lock is
 * bounded: object tables are scanned once, MEs copied up to the caller's
 * room.
 */
#include "ptl_internal.h"

static void
ni_count(const struct ptl_ni *ni, struct ptl_client_info *info)
{
	uint32_t i;

	for (i = 0; i < ni->n_pt; i++) {
		const struct ptl_pt *pt = &ni->pts[i];

		if (!pt->used)
			continue;
		info->pts++;
		info->mes_priority += pt->list_len[SPINNIC_PTL_PRIORITY_LIST];
		info->mes_overflow += pt->list_len[SPINNIC_PTL_OVERFLOW_LIST];
	}
	/* EQ and CT slots change under their own locks too: a flag read */
	for (i = 0; i < ni->n_eq; i++)
		info->eqs += __atomic_load_n(&ni->eqs[i].used,
					     __ATOMIC_RELAXED);
	for (i = 0; i < ni->n_ct; i++)
		info->cts += __atomic_load_n(&ni->cts[i].used,
					     __ATOMIC_RELAXED);
	for (i = 0; i < ni->n_md; i++)
		info->mds += ni->mds[i].used;
	info->uhs += ni->uh_used;
	info->drop_count += ni->sr[SPINNIC_PTL_SR_DROP_COUNT];
	info->perm_violations += ni->sr[SPINNIC_PTL_SR_PERMISSION_VIOLATIONS];
	info->op_violations += ni->sr[SPINNIC_PTL_SR_OPERATION_VIOLATIONS];
}

int
ptl_client_info_get(struct ptl_nic *nic, uint32_t pid,
		    struct ptl_client_info *info_p)
{
	const struct ptl_client *c;
	unsigned k;

	if (pid >= nic->conf.max_clients)
		return -ERANGE;
	memset(info_p, 0, sizeof(*info_p));
	ptl_lock(&nic->lock);
	c = nic->clients[pid];
	if (c == NULL) {
		ptl_unlock(&nic->lock);
		return -ENOENT;
	}
	info_p->pid = c->pid;
	info_p->os_pid = (int32_t)c->os_pid;
	info_p->uid = c->uid;
	info_p->region_size = c->size;
	for (k = 0; k < SPINNIC_WIRE_NI_KINDS; k++) {
		const struct ptl_ni *ni = &c->ni[k];

		if (!ni->active || !ni->allocated)
			continue;
		info_p->nis++;
		info_p->ni_mask |= 1u << k;
		ni_count(ni, info_p);
	}
	ptl_unlock(&nic->lock);
	info_p->mes = info_p->mes_priority + info_p->mes_overflow;
	return 0;
}

int
ptl_client_me_dump(struct ptl_nic *nic, uint32_t pid, unsigned first,
		   struct ptl_me_info *out, unsigned max, unsigned *total_p)
{
	const struct ptl_client *c;
	unsigned k, n = 0, seen = 0;

	if (pid >= nic->conf.max_clients)
		return -ERANGE;
	ptl_lock(&nic->lock);
	c = nic->clients[pid];
	if (c == NULL) {
		ptl_unlock(&nic->lock);
		return -ENOENT;
	}
	for (k = 0; k < SPINNIC_WIRE_NI_KINDS; k++) {
		const struct ptl_ni *ni = &c->ni[k];
		uint32_t i;

		if (!ni->active || !ni->allocated)
			continue;
		for (i = 0; i < ni->n_pt; i++) {
			const struct ptl_pt *pt = &ni->pts[i];
			unsigned l;

			if (!pt->used)
				continue;
			for (l = 0; l < 2; l++) {
				unsigned idx = seen;
				uint32_t s;

				seen += pt->list_len[l];
				/* before the first wanted or past the room:
				 * only the count is wanted */
				if (seen <= first || n == max)
					continue;
				for (s = pt->list_head[l];
				     s != PTL_NIL && n < max;
				     s = ni->mes[s].next, idx++) {
					const struct ptl_me *me = &ni->mes[s];
					struct ptl_me_info *o;

					if (idx < first)
						continue;
					o = &out[n++];
					memset(o, 0, sizeof(*o));
					o->handle = ptl_handle(k, PTL_HT_ME,
							       me->gen, s);
					o->ni_kind = k;
					o->pt_index = i;
					o->list = me->list;
					o->options = me->options;
					o->ctx = me->ctx;
					o->ct = me->ct;
					o->uid = me->uid;
					o->match_id = me->match_id;
					o->match_bits = me->match_bits;
					o->ignore_bits = me->ignore_bits;
					o->start = me->start;
					o->length = me->length;
					o->offset = me->offset;
					o->min_free = me->min_free;
					o->inflight = me->inflight;
				}
			}
		}
	}
	ptl_unlock(&nic->lock);
	if (total_p != NULL)
		*total_p = seen;
	return (int)n;
}
