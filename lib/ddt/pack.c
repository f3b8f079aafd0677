/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whole-message host pack/unpack: one contiguous block or a leaf vector
 * directly, any other type through its compiled form (prog.c), the
 * segment engine when it has none; and the block copy kernels both use.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ddt_internal.h"

/* Non-temporal stores pay off once the destination no longer fits in the
 * last-level cache and blocks are at least a cache line. Measured with
 * test/ddt/bench_ddt_unpack on the 32 MiB-L3 build machine: vector unpack
 * writing 8 MiB was faster with ordinary stores for blocks >= 1 KiB; from
 * 16 MiB on, streaming stores won by 1.2-2x for every block size >= 128 B. */
#define NT_MIN_BLOCK 64
int64_t ddt_nt_min_total = 16 << 20;

#ifdef __SSE2__
/* Copy with streaming stores to dst; caller issues the final sfence. */
static void copy_nt(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t head = (16 - ((uintptr_t)dst & 15)) & 15;

	if (head > n)
		head = n;
	memcpy(dst, src, head);
	dst += head;
	src += head;
	n -= head;
	while (n >= 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)src);
		__m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(src + 48));

		_mm_stream_si128((__m128i *)dst, a);
		_mm_stream_si128((__m128i *)(dst + 16), b);
		_mm_stream_si128((__m128i *)(dst + 32), c);
		_mm_stream_si128((__m128i *)(dst + 48), d);
		dst += 64;
		src += 64;
		n -= 64;
	}
	while (n >= 16) {
		_mm_stream_si128((__m128i *)dst,
				 _mm_loadu_si128((const __m128i *)src));
		dst += 16;
		src += 16;
		n -= 16;
	}
	memcpy(dst, src, n);
}
#endif

static bool use_nt(int64_t bl, int64_t n)
{
#ifdef __SSE2__
	return bl >= NT_MIN_BLOCK && bl * n >= ddt_nt_min_total;
#else
	(void)bl;
	(void)n;
	return false;
#endif
}

/* Fixed-size block loops: the compiler turns memcpy(.., K) into moves. */
#define SCATTER_K(K)                                                  \
	for (int64_t k = 0; k < n; k++)                               \
		memcpy(dst + k * stride, src + k * K, K)
#define GATHER_K(K)                                                   \
	for (int64_t k = 0; k < n; k++)                               \
		memcpy(dst + k * K, src + k * stride, K)

/* n blocks of bl bytes: contiguous src -> dst every stride bytes */
void ddt_copy_scatter(uint8_t *dst, const uint8_t *src, int64_t bl,
		      int64_t stride, int64_t n)
{
	switch (bl) {
	case 1: SCATTER_K(1); return;
	case 2: SCATTER_K(2); return;
	case 4: SCATTER_K(4); return;
	case 8: SCATTER_K(8); return;
	case 16: SCATTER_K(16); return;
	case 32: SCATTER_K(32); return;
	case 12: SCATTER_K(12); return;
	case 24: SCATTER_K(24); return;
	case 48: SCATTER_K(48); return;
	default:
		break;
	}
	if (bl == 64 && !use_nt(bl, n)) {
		SCATTER_K(64);
		return;
	}
#ifdef __SSE2__
	if (use_nt(bl, n)) {
		for (int64_t k = 0; k < n; k++)
			copy_nt(dst + k * stride, src + k * bl, (size_t)bl);
		_mm_sfence();
		return;
	}
#endif
	for (int64_t k = 0; k < n; k++)
		memcpy(dst + k * stride, src + k * bl, (size_t)bl);
}

/* n blocks of bl bytes: src every stride bytes -> contiguous dst */
void ddt_copy_gather(uint8_t *dst, const uint8_t *src, int64_t bl,
		     int64_t stride, int64_t n)
{
	switch (bl) {
	case 1: GATHER_K(1); return;
	case 2: GATHER_K(2); return;
	case 4: GATHER_K(4); return;
	case 8: GATHER_K(8); return;
	case 16: GATHER_K(16); return;
	case 32: GATHER_K(32); return;
	case 12: GATHER_K(12); return;
	case 24: GATHER_K(24); return;
	case 48: GATHER_K(48); return;
	default:
		break;
	}
	if (bl == 64 && !use_nt(bl, n)) {
		GATHER_K(64);
		return;
	}
#ifdef __SSE2__
	if (use_nt(bl, n)) {
		for (int64_t k = 0; k < n; k++)
			copy_nt(dst + k * bl, src + k * stride, (size_t)bl);
		_mm_sfence();
		return;
	}
#endif
	for (int64_t k = 0; k < n; k++)
		memcpy(dst + k * bl, src + k * stride, (size_t)bl);
}

static void copy_big(uint8_t *dst, const uint8_t *src, int64_t n)
{
#ifdef __SSE2__
	if (n >= ddt_nt_min_total) {
		copy_nt(dst, src, (size_t)n);
		_mm_sfence();
		return;
	}
#endif
	memcpy(dst, src, (size_t)n);
}

#define IDX_K(K, EXPR)                                                \
	for (int64_t k = 0; k < n; k++, p += K)                       \
		EXPR
/* indexed-block: blocks of bl bytes at base + displs[k] */
static void copy_idx(bool unpack, uint8_t *typed, uint8_t *p, int64_t bl,
		     const int64_t *displs, int64_t n)
{
#define CASE(K)                                                         \
	case K:                                                         \
		if (unpack)                                             \
			IDX_K(K, memcpy(typed + displs[k], p, K));      \
		else                                                    \
			IDX_K(K, memcpy(p, typed + displs[k], K));      \
		return;
	switch (bl) {
	CASE(1) CASE(2) CASE(4) CASE(8) CASE(16) CASE(32)
	default:
		break;
	}
#undef CASE
	for (int64_t k = 0; k < n; k++, p += bl) {
		if (unpack)
			memcpy(typed + displs[k], p, (size_t)bl);
		else
			memcpy(p, typed + displs[k], (size_t)bl);
	}
}

/* the segment engine on the stack: depth is at most DDT_MAX_DEPTH */
struct seg_buf {
	struct ddt_segment s;
	struct ddt_seg_frame f[DDT_MAX_DEPTH + 1];
};

static int whole(const struct ddt_type *t, int64_t count, const void *src,
		 void *dst, bool unpack)
{
	const struct ddt_prog *pg;
	const struct ddt_blob *b;
	const struct ddt_dl *l;
	uint8_t *typed, *packed;
	int64_t total, ext;
	int rc;

	if (t == NULL || count < 0 || (count > 0 && (src == NULL ||
						      dst == NULL)))
		return -EINVAL;
	if (!ddt_is_committed(t))
		return -DDT_E_NOTCOMMITTED;
	b = ddt_type_blob(t);
	rc = ddt_seg_total(b, count, &total);
	if (rc)
		return rc;
	if (total == 0)
		return 0;
	typed = unpack ? dst : (uint8_t *)src;
	packed = unpack ? (uint8_t *)src : dst;
	l = ddt_dl_at(b, 0);
	ext = b->h.extent;
	if (l->leaf && l->kind == DDT_DL_CONTIG) {
		/* one block per element */
		if (ext == l->blocklen || count == 1) {
			if (unpack)
				copy_big(typed + l->off, packed, total);
			else
				copy_big(packed, typed + l->off, total);
		} else if (unpack) {
			ddt_copy_scatter(typed + l->off, packed, l->blocklen,
					 ext, count);
		} else {
			ddt_copy_gather(packed, typed + l->off, l->blocklen,
					ext, count);
		}
		return 0;
	}
	if (l->leaf && l->kind == DDT_DL_VECTOR) {
		int64_t per = l->count, reps = count, step = ext;

		/* elements that continue the stride form one long vector */
		if (ext == l->count * l->stride) {
			per = l->count * count;
			reps = 1;
		}
		for (int64_t e = 0; e < reps; e++) {
			uint8_t *tp = typed + e * step + l->off;
			uint8_t *pp = packed + e * b->h.size;

			if (unpack)
				ddt_copy_scatter(tp, pp, l->blocklen, l->stride,
						 per);
			else
				ddt_copy_gather(pp, tp, l->blocklen, l->stride,
						per);
		}
		return 0;
	}
	pg = __atomic_load_n(&t->prog, __ATOMIC_ACQUIRE);
	if (pg != NULL) {
		ddt_prog_whole(pg, count, typed, packed, unpack);
		return 0;
	}
	if (l->leaf && l->kind == DDT_DL_BLOCKINDEXED) {
		const int64_t *displs = ddt_dl_arr(b, l->displs);

		for (int64_t e = 0; e < count; e++)
			copy_idx(unpack, typed + e * ext + l->off,
				 packed + e * b->h.size, l->blocklen, displs,
				 l->count);
		return 0;
	}
	if (l->leaf && l->kind == DDT_DL_INDEXED) {
		const int64_t *displs = ddt_dl_arr(b, l->displs);
		const int64_t *bls = ddt_dl_arr(b, l->blocklens);
		uint8_t *pp = packed;

		for (int64_t e = 0; e < count; e++) {
			uint8_t *tp = typed + e * ext + l->off;

			for (int64_t k = 0; k < l->count; k++) {
				size_t n = (size_t)bls[k];

				if (unpack)
					ddt_copy_small(tp + displs[k], pp, n);
				else
					ddt_copy_small(pp, tp + displs[k], n);
				pp += n;
			}
		}
		return 0;
	}
	{
		struct seg_buf sb;

		ddt_seg_init(&sb.s, b, count);
		ddt_seg_run(&sb.s, unpack ? DDT_MODE_UNPACK : DDT_MODE_PACK,
			    total, unpack ? packed : typed,
			    unpack ? typed : packed, 0, NULL, NULL);
	}
	return 0;
}

int ddt_pack(const struct ddt_type *t, int64_t count, const void *src,
	     void *dst)
{
	return whole(t, count, src, dst, false);
}

int ddt_unpack(const struct ddt_type *t, int64_t count, const void *src,
	       void *dst)
{
	return whole(t, count, src, dst, true);
}
