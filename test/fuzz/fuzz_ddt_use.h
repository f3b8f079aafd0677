/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Use an accepted serialized type the way the NIC would (shared by
 * fuzz_ddt_parse and fuzz_ddt_blob): a segment in caller memory (NIC
 * memory), its block stream checked against the data span the blob header
 * declares (what a handler checks against the ME), then unpack and pack of
 * several stream ranges, out of order, over a buffer of exactly that span.
 * A hostile blob that passed ddt_blob_load must not make any of this read
 * or write outside the buffer (ASan) or emit a block outside the span.
 */
#ifndef FUZZ_DDT_USE_H
#define FUZZ_DDT_USE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "ddt_internal.h"
#include "fuzz_check.h"

#define FZ_DDT_MAX_SIZE (1 << 16)   /* packed bytes per element */
#define FZ_DDT_MAX_SPAN (1 << 20)   /* typed buffer bytes */
#define FZ_DDT_MAX_ORIGIN ((int64_t)1 << 30) /* |lb| of the typed span */

struct fz_span {
	int64_t lo, hi;   /* buffer offsets every block must lie in */
	int64_t pos;      /* next stream offset expected */
	int64_t bytes;
};

static int
fz_block_check(void *arg, int64_t off, int64_t len, int64_t so)
{
	struct fz_span *s = arg;

	FZ_CHECK(len > 0);
	FZ_CHECK(off >= s->lo && len <= s->hi - off);
	FZ_CHECK(so == s->pos);
	s->pos += len;
	s->bytes += len;
	return 0;
}

/* seed picks the ranges; returns 0 when the blob was used */
static int
fz_ddt_use_blob(const struct ddt_blob *b, uint64_t seed)
{
	static _Alignas(64) uint8_t segmem[1 << 16];
	const struct ddt_blob_hdr *h = &b->h;
	int64_t size = ddt_blob_size(b), extent = ddt_blob_extent(b);
	int64_t count = 1 + (int64_t)(seed & 1), span, lo, hi, cut[4];
	struct ddt_type *t;
	struct ddt_segment *s;
	struct fz_span sp;
	uint8_t *src, *buf, *back;
	size_t ms;
	int i;

	FZ_CHECK(size == h->size && extent == h->extent);
	FZ_CHECK(size >= 0);
	/* the rebuilt type agrees with the blob header */
	t = ddt_blob_to_type(b);
	if (t != NULL) {
		FZ_CHECK(ddt_size(t) == size);
		FZ_CHECK(ddt_extent(t) == extent);
		ddt_free(t);
	}
	if (size == 0 || size > FZ_DDT_MAX_SIZE)
		return -1;
	if (h->true_ub - h->true_lb > FZ_DDT_MAX_SPAN ||
	    extent > FZ_DDT_MAX_SPAN || extent < -FZ_DDT_MAX_SPAN)
		count = 1;
	/* data span of count elements, element i at i * extent */
	lo = h->true_lb + (extent < 0 ? (count - 1) * extent : 0);
	hi = h->true_ub + (extent > 0 ? (count - 1) * extent : 0);
	span = hi - lo;
	if (span <= 0 || span > FZ_DDT_MAX_SPAN)
		return -1;
	ms = ddt_segment_mem_size(b);
	if (ms == 0 || ms > sizeof(segmem))
		return -1;
	s = ddt_segment_init(segmem, ms, b, count);
	FZ_CHECK(s != NULL);

	/* the whole block stream, inside the declared span */
	memset(&sp, 0, sizeof(sp));
	sp.lo = lo;
	sp.hi = hi;
	FZ_CHECK(ddt_segment_blocks(s, 0, size * count, fz_block_check,
				    &sp) == 0);
	FZ_CHECK(sp.bytes == size * count);
	/* the buffer origin is buf - lo: keep it a plausible address */
	if (lo < -FZ_DDT_MAX_ORIGIN || lo > FZ_DDT_MAX_ORIGIN)
		return 0;

	src = malloc((size_t)(size * count));
	buf = malloc((size_t)span);
	back = malloc((size_t)(size * count));
	FZ_CHECK(src != NULL && buf != NULL && back != NULL);
	for (i = 0; i < size * count; i++)
		src[i] = (uint8_t)(i * 131 + 7);
	memset(buf, 0, (size_t)span);
	/* three ranges, the middle one first: resume, catch up, reset */
	cut[0] = 0;
	cut[1] = (int64_t)((seed >> 8) % (uint64_t)(size * count + 1));
	cut[2] = cut[1] + (int64_t)((seed >> 24) %
				   (uint64_t)(size * count - cut[1] + 1));
	cut[3] = size * count;
	FZ_CHECK(ddt_segment_unpack(s, cut[1], cut[2], src + cut[1],
				    buf - lo) == 0);
	FZ_CHECK(ddt_segment_unpack(s, cut[2], cut[3], src + cut[2],
				    buf - lo) == 0);
	FZ_CHECK(ddt_segment_unpack(s, cut[0], cut[1], src, buf - lo) == 0);
	/* bad ranges are refused */
	FZ_CHECK(ddt_segment_unpack(s, 0, size * count + 1, src,
				    buf - lo) < 0);
	FZ_CHECK(ddt_segment_unpack(s, 1, 0, src, buf - lo) < 0);
	/* pack it back (no equality check: a hostile type may overlap) */
	ddt_segment_reset(s);
	FZ_CHECK(ddt_segment_pack(s, 0, size * count, buf - lo, back) == 0);
	free(back);
	free(buf);
	free(src);
	return 0;
}

#endif
