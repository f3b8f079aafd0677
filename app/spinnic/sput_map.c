/* SPDX-License-Identifier: BSD-3-Clause */
/* Piece map of a streaming put (sput_map.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sput_map.h"

void
sput_map_init(struct sput_map *map, uint64_t total)
{
	memset(map, 0, sizeof(*map));
	map->total = total;
}

void
sput_map_fini(struct sput_map *map)
{
	free(map->ext);
	map->ext = NULL;
	map->n = map->cap = 0;
}

int
sput_map_add(struct sput_map *map, uint64_t addr, uint64_t len, bool eom)
{
	struct sput_ext *e;

	if (len > map->total - map->avail ||
	    (eom && map->avail + len != map->total))
		return -ERANGE;
	if (addr + len < addr)
		return -EOVERFLOW;
	if (len == 0)
		return 0;
	e = map->n > 0 ? &map->ext[map->n - 1] : NULL;
	if (e != NULL && e->addr + e->len == addr) {
		e->len += len;
		map->avail += len;
		return 0;
	}
	if (map->n == map->cap) {
		uint32_t cap = map->cap == 0 ? 8 : map->cap * 2;
		struct sput_ext *x;

		if (cap < map->cap)
			return -ENOMEM;
		x = realloc(map->ext, (size_t)cap * sizeof(*x));
		if (x == NULL)
			return -ENOMEM;
		map->ext = x;
		map->cap = cap;
	}
	map->ext[map->n].msg_off = map->avail;
	map->ext[map->n].addr = addr;
	map->ext[map->n].len = len;
	map->n++;
	map->avail += len;
	return 0;
}

int
sput_map_walk(const struct sput_map *map, uint64_t off, uint64_t len,
	      sput_map_fn fn, void *arg)
{
	uint32_t lo = 0, hi = map->n, i;
	uint64_t done = 0;

	if (off > map->avail || len > map->avail - off)
		return -ERANGE;
	if (len == 0)
		return 0;
	/* the extent holding off: the last one starting at or before it */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (map->ext[mid].msg_off <= off)
			lo = mid;
		else
			hi = mid;
	}
	for (i = lo; done < len; i++) {
		const struct sput_ext *e = &map->ext[i];
		uint64_t skip = off + done - e->msg_off;
		uint64_t take = e->len - skip;
		int rc;

		if (take > len - done)
			take = len - done;
		rc = fn(arg, e->addr + skip, take, done);
		if (rc != 0)
			return rc;
		done += take;
	}
	return 0;
}
