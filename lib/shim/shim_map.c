/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logical maps (rank <-> physical id) and process ids.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_internal.h"

/* reverse map entry of a logical NI, sorted by (nid, pid) */
struct rmap {
	uint32_t nid, pid, rank;
};

/* ---- ids and logical maps ---------------------------------------------- */

static int
rmap_cmp(const void *a, const void *b)
{
	const struct rmap *x = a, *y = b;

	if (x->nid != y->nid)
		return x->nid < y->nid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* rank of a physical id on a logical NI (caller holds shim_g.lock) */
static bool
rmap_find(const struct shim_ni *ni, uint32_t nid, uint32_t pid,
	  ptl_rank_t *rank_p)
{
	const struct rmap *r = (const struct rmap *)(ni->map + ni->map_size);
	size_t lo = 0, hi = ni->map_size;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].nid < nid || (r[mid].nid == nid && r[mid].pid < pid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ni->map_size && r[lo].nid == nid && r[lo].pid == pid) {
		*rank_p = r[lo].rank;
		return true;
	}
	return false;
}

int
PtlSetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
	  const ptl_process_t *mapping)
{
	struct shim_ni *ni;
	ptl_process_t *map;
	struct rmap *r;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || (ni->options & PTL_NI_LOGICAL) == 0 ||
	    map_size == 0 || mapping == NULL || map_size > UINT32_MAX)
		return PTL_ARG_INVALID;
	/* one allocation: the map, then its reverse sorted by (nid, pid) */
	map = malloc(map_size * (sizeof(*map) + sizeof(*r)));
	if (map == NULL)
		return PTL_NO_SPACE;
	memcpy(map, mapping, map_size * sizeof(*map));
	r = (struct rmap *)(map + map_size);
	for (ptl_size_t i = 0; i < map_size; i++) {
		r[i].nid = map[i].phys.nid;
		r[i].pid = map[i].phys.pid;
		r[i].rank = (uint32_t)i;
	}
	qsort(r, map_size, sizeof(*r), rmap_cmp);
	pthread_mutex_lock(&shim_g.lock);
	free(ni->map);
	ni->map = map;
	ni->map_size = map_size;
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
}

int
PtlGetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
	  ptl_process_t *mapping, ptl_size_t *actual_map_size)
{
	struct shim_ni *ni;
	ptl_size_t n;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || (ni->options & PTL_NI_LOGICAL) == 0 ||
	    actual_map_size == NULL || (map_size > 0 && mapping == NULL))
		return PTL_ARG_INVALID;
	pthread_mutex_lock(&shim_g.lock);
	if (ni->map == NULL) {
		pthread_mutex_unlock(&shim_g.lock);
		return PTL_ARG_INVALID;
	}
	n = map_size < ni->map_size ? map_size : ni->map_size;
	memcpy(mapping, ni->map, n * sizeof(*mapping));
	*actual_map_size = ni->map_size;
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
}

int
shim_target(const struct shim_ni *ni, ptl_process_t in,
	    struct spinnic_pid *out, int wildcard_ok)
{
	if ((ni->options & PTL_NI_LOGICAL) != 0) {
		if (in.rank == PTL_RANK_ANY) {
			if (!wildcard_ok)
				return -EINVAL;
			out->nid = PTL_NID_ANY;
			out->pid = PTL_PID_ANY;
			return 0;
		}
		pthread_mutex_lock(&shim_g.lock);
		if (ni->map == NULL || in.rank >= ni->map_size) {
			pthread_mutex_unlock(&shim_g.lock);
			SHIM_DBG("rank %u not in the map", in.rank);
			return -EINVAL;
		}
		out->nid = ni->map[in.rank].phys.nid;
		out->pid = ni->map[in.rank].phys.pid;
		pthread_mutex_unlock(&shim_g.lock);
		return 0;
	}
	if (!wildcard_ok &&
	    (in.phys.nid == PTL_NID_ANY || in.phys.pid == PTL_PID_ANY))
		return -EINVAL;
	out->nid = in.phys.nid;
	out->pid = in.phys.pid;
	return 0;
}

ptl_process_t
shim_initiator(const struct shim_ni *ni, struct spinnic_pid p)
{
	ptl_process_t id;

	if ((ni->options & PTL_NI_LOGICAL) == 0) {
		id.phys.nid = p.nid;
		id.phys.pid = p.pid;
		return id;
	}
	id.rank = PTL_RANK_ANY;
	pthread_mutex_lock(&shim_g.lock);
	if (ni->map != NULL)
		(void)rmap_find(ni, p.nid, p.pid, &id.rank);
	pthread_mutex_unlock(&shim_g.lock);
	return id;
}

int
PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid)
{
	SHIM_ENTER();
	if (shim_to_ni(ni_handle, NULL) == NULL || uid == NULL)
		return PTL_ARG_INVALID;
	*uid = (ptl_uid_t)getuid();
	return PTL_OK;
}

int
PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid)
{
	SHIM_ENTER();
	if (shim_to_ni(ni_handle, NULL) == NULL || jid == NULL)
		return PTL_ARG_INVALID;
	*jid = PTL_JID_NONE;
	return PTL_OK;
}

int
PtlGetPhysId(ptl_handle_ni_t ni_handle, ptl_process_t *id)
{
	SHIM_ENTER();
	if (shim_to_ni(ni_handle, NULL) == NULL || id == NULL)
		return PTL_ARG_INVALID;
	id->phys.nid = shim_g.id.nid;
	id->phys.pid = shim_g.id.pid;
	return PTL_OK;
}

int
PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_t *id)
{
	struct shim_ni *ni;
	bool found = false;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || id == NULL)
		return PTL_ARG_INVALID;
	if ((ni->options & PTL_NI_LOGICAL) == 0)
		return PtlGetPhysId(ni_handle, id);
	pthread_mutex_lock(&shim_g.lock);
	if (ni->map != NULL)
		found = rmap_find(ni, shim_g.id.nid, shim_g.id.pid, &id->rank);
	pthread_mutex_unlock(&shim_g.lock);
	return found ? PTL_OK : PTL_ARG_INVALID;
}
