/* SPDX-License-Identifier: BSD-3-Clause */
/* Piece map of a streaming put (sput_map.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sput_map.h"

void
sput_map_init(struct sput_map *m, uint64_t total)
{
	memset(m, 0, sizeof(*m));
	m->total = total;
}

void
sput_map_fini(struct sput_map *m)
{
	free(m->ext);
	m->ext = NULL;
	m->n = m->cap = 0;
}

int
sput_map_add(struct sput_map *m, uint64_t addr, uint64_t len, bool eom)
{
	struct sput_ext *e;

	if (len > m->total - m->avail || (eom && m->avail + len != m->total))
		return -ERANGE;
	if (addr + len < addr)
		return -EOVERFLOW;
	if (len == 0)
		return 0;
	e = m->n > 0 ? &m->ext[m->n - 1] : NULL;
	if (e != NULL && e->addr + e->len == addr) {
		e->len += len;
		m->avail += len;
		return 0;
	}
	if (m->n == m->cap) {
		uint32_t cap = m->cap == 0 ? 8 : m->cap * 2;
		struct sput_ext *x;

		if (cap < m->cap)
			return -ENOMEM;
		x = realloc(m->ext, (size_t)cap * sizeof(*x));
		if (x == NULL)
			return -ENOMEM;
		m->ext = x;
		m->cap = cap;
	}
	m->ext[m->n].msg_off = m->avail;
	m->ext[m->n].addr = addr;
	m->ext[m->n].len = len;
	m->n++;
	m->avail += len;
	return 0;
}

int
sput_map_walk(const struct sput_map *m, uint64_t off, uint64_t len,
	      sput_map_fn fn, void *arg)
{
	uint32_t lo = 0, hi = m->n, i;
	uint64_t done = 0;

	if (off > m->avail || len > m->avail - off)
		return -ERANGE;
	if (len == 0)
		return 0;
	/* the extent holding off: the last one starting at or before it */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->ext[mid].msg_off <= off)
			lo = mid;
		else
			hi = mid;
	}
	for (i = lo; done < len; i++) {
		const struct sput_ext *e = &m->ext[i];
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
