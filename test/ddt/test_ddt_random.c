/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random nested datatypes against the brute-force typemap reference:
 * whole pack/unpack, flattening, block counts, print/parse, blob round trip,
 * segments over byte ranges in random order (as out-of-order packets), the
 * same starting from checkpoints at several intervals, and the compiled
 * form's ranges (shuffled, lost, bounded, corrupted).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddt.h"
#include "ddt_gen.h"
#include "ddt_internal.h" /* the form's layout, to forge reciprocals */

#define NTYPES 3000

struct fixture {
	struct ddt_type *t;
	int64_t count, total, n, lo, hi;
	struct ddt_iov *map;
	uint8_t *typed;     /* random contents, span [lo, hi) */
	uint8_t *packed;    /* reference pack */
	uint8_t *expect;    /* reference unpack into zeros */
	uint8_t *got;
	uint64_t seed;
};

/* origin of a buffer holding span [lo, hi) */
#define ORG(f, buf) ((buf) - (f)->lo)

/* the fixture of type @p t (NULL: a random one of @p seed) */
static int setup_type(struct fixture *f, uint64_t seed, struct ddt_type *t,
		      int64_t count)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	int64_t span;

	memset(f, 0, sizeof(*f));
	f->seed = seed;
	f->t = t != NULL ? t : ddt_gen_random(&s, 1 + (int)(seed % 6),
					      64 + (int64_t)(seed % 8) * 512);
	assert_non_null(f->t);
	assert_int_equal(ddt_commit(f->t), 0);
	f->count = count > 0 ? count : 1 + (int64_t)(ddt_gen_rand(&s) % 3);
	f->total = f->count * ddt_size(f->t);
	f->n = ddt_ref_typemap(f->t, f->count, &f->map);
	assert_true(f->n >= 0);
	ddt_ref_span(f->map, f->n, &f->lo, &f->hi);
	span = f->hi - f->lo + 1;
	f->typed = malloc((size_t)span);
	f->packed = malloc((size_t)f->total + 1);
	f->expect = calloc(1, (size_t)span);
	f->got = calloc(1, (size_t)span);
	assert_true(f->typed && f->packed && f->expect && f->got);
	for (int64_t i = 0; i < span; i++)
		f->typed[i] = (uint8_t)ddt_gen_rand(&s);
	ddt_ref_pack(f->map, f->n, ORG(f, f->typed), f->packed);
	ddt_ref_unpack(f->map, f->n, f->packed, ORG(f, f->expect));
	return (int)(f->hi - f->lo);
}

static int setup(struct fixture *f, uint64_t seed)
{
	return setup_type(f, seed, NULL, 0);
}

static void teardown(struct fixture *f)
{
	ddt_free(f->t);
	free(f->map);
	free(f->typed);
	free(f->packed);
	free(f->expect);
	free(f->got);
}

static void describe(const struct fixture *f)
{
	char buf[4096];

	ddt_print(f->t, buf, sizeof(buf));
	print_message("seed %lu count %ld: %s\n", (unsigned long)f->seed,
		      (long)f->count, buf);
}

static void check_got(struct fixture *f)
{
	if (memcmp(f->got, f->expect, (size_t)(f->hi - f->lo)) != 0)
		describe(f);
	assert_memory_equal(f->got, f->expect, (size_t)(f->hi - f->lo));
}

static void test_whole(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		struct fixture f;
		int64_t total = 0, nb;
		uint8_t *p;

		setup(&f, seed);
		for (int64_t i = 0; i < f.n; i++)
			total += f.map[i].len;
		assert_int_equal(total, f.total);
		/* typemap does not overlap (the generator's promise) */
		p = calloc(1, (size_t)(f.hi - f.lo + 1));
		for (int64_t i = 0; i < f.n; i++)
			for (int64_t b = 0; b < f.map[i].len; b++)
				assert_int_equal(p[f.map[i].off - f.lo + b]++, 0);
		free(p);

		p = malloc((size_t)f.total + 1);
		assert_int_equal(ddt_pack(f.t, f.count, ORG(&f, f.typed), p), 0);
		if (memcmp(p, f.packed, (size_t)f.total))
			describe(&f);
		assert_memory_equal(p, f.packed, (size_t)f.total);
		free(p);
		assert_int_equal(ddt_unpack(f.t, f.count, f.packed,
					    ORG(&f, f.got)), 0);
		check_got(&f);

		/* flatten == merged reference */
		nb = ddt_ref_merge(f.map, f.n);
		assert_int_equal(ddt_count_blocks(f.t, f.count), nb);
		{
			struct ddt_iov *iov = malloc((size_t)(nb + 1) *
						     sizeof(*iov));

			assert_int_equal(ddt_flatten(f.t, f.count, iov, nb), nb);
			if (nb > 0)
				assert_memory_equal(iov, f.map,
						    (size_t)nb * sizeof(*iov));
			free(iov);
		}
		teardown(&f);
	}
}

static void test_bounds(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		struct ddt_iov *map;
		struct fixture f;
		int64_t n, lo, hi;

		setup(&f, seed);
		n = ddt_ref_typemap(f.t, 1, &map);
		ddt_ref_span(map, n, &lo, &hi);
		assert_int_equal(ddt_data_lb(f.t), lo);
		assert_int_equal(ddt_data_extent(f.t), hi - lo);
		/* MPICH's true bounds hold the data, and may reach past it */
		if (ddt_size(f.t) > 0) {
			assert_true(ddt_true_lb(f.t) <= lo);
			assert_true(ddt_true_lb(f.t) + ddt_true_extent(f.t) >=
				    hi);
		}
		n = ddt_ref_merge(map, n);
		assert_int_equal(ddt_num_blocks(f.t), n);
		free(map);
		teardown(&f);
	}
}

static void test_print_parse_blob(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		const struct ddt_blob *view;
		struct ddt_type *p, *b;
		struct ddt_segment *s;
		struct fixture f;
		const char *err;
		char *buf;
		void *blob;
		ssize_t bl;
		int len;

		setup(&f, seed);
		len = ddt_print(f.t, NULL, 0);
		assert_true(len > 0);
		buf = malloc((size_t)len + 1);
		assert_int_equal(ddt_print(f.t, buf, (size_t)len + 1), len);
		p = ddt_parse(buf, &err);
		if (p == NULL)
			print_message("%s: %s\n", buf, err);
		assert_non_null(p);
		assert_int_equal(ddt_equal(p, f.t), 1);
		ddt_free(p);
		free(buf);

		bl = ddt_serialize(f.t, NULL, 0);
		assert_true(bl > 0);
		blob = aligned_alloc(8, ((size_t)bl + 7) & ~(size_t)7);
		assert_int_equal(ddt_serialize(f.t, blob, (size_t)bl - 1),
				 -ENOSPC);
		assert_int_equal(ddt_serialize(f.t, blob, (size_t)bl), bl);
		assert_int_equal(ddt_blob_load(blob, (size_t)bl, &view), 0);
		assert_int_equal(ddt_blob_size(view), ddt_size(f.t));
		assert_int_equal(ddt_blob_extent(view), ddt_extent(f.t));
		b = ddt_blob_to_type(view);
		assert_non_null(b);
		assert_int_equal(ddt_equal(b, f.t), 1);
		ddt_free(b);
		/* a segment over the loaded blob unpacks the same */
		s = ddt_segment_create_blob(view, f.count);
		assert_non_null(s);
		assert_int_equal(ddt_segment_unpack(s, 0, f.total, f.packed,
						    ORG(&f, f.got)), 0);
		check_got(&f);
		ddt_segment_free(s);
		free(blob);
		teardown(&f);
	}
}

/* Split [0,total) into random pieces, shuffled. */
static int64_t pieces(uint64_t *s, int64_t total, int64_t maxlen,
		      int64_t **cuts_p)
{
	int64_t n = 0, pos = 0, *c = malloc((size_t)(total + 2) * 2 *
					    sizeof(*c));

	while (pos < total) {
		int64_t len = 1 + (int64_t)(ddt_gen_rand(s) % (uint64_t)maxlen);

		if (len > total - pos)
			len = total - pos;
		c[2 * n] = pos;
		c[2 * n + 1] = pos + len;
		pos += len;
		n++;
	}
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)(ddt_gen_rand(s) % (uint64_t)(i + 1));
		int64_t a = c[2 * i], b = c[2 * i + 1];

		c[2 * i] = c[2 * j];
		c[2 * i + 1] = c[2 * j + 1];
		c[2 * j] = a;
		c[2 * j + 1] = b;
	}
	*cuts_p = c;
	return n;
}

struct blk {
	struct fixture *f;
	int64_t expect_stream;
	int64_t calls, stop_after;
};

static int blk_cb(void *arg, int64_t off, int64_t len, int64_t stream_off)
{
	struct blk *b = arg;

	/* each block lands where the packed bytes say */
	assert_int_equal(stream_off, b->expect_stream);
	assert_memory_equal(ORG(b->f, b->f->typed) + off,
			    b->f->packed + stream_off, (size_t)len);
	b->expect_stream += len;
	return ++b->calls == b->stop_after;
}

/* ddt_segment_blocks_strided: every block of the run where the packed
 * bytes say, nb > 1 and stride != 0 worth a strided call */
static int blk_scb(void *arg, int64_t off, int64_t bl, int64_t stride,
		   int64_t nb, int64_t stream_off)
{
	struct blk *b = arg;

	assert_true(nb >= 1);
	assert_true(bl >= 1);
	assert_int_equal(stream_off, b->expect_stream);
	for (int64_t k = 0; k < nb; k++)
		assert_memory_equal(ORG(b->f, b->f->typed) + off + k * stride,
				    b->f->packed + stream_off + k * bl,
				    (size_t)bl);
	b->expect_stream += nb * bl;
	return ++b->calls == b->stop_after;
}

static void test_segments(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		uint64_t s = seed;
		struct ddt_segment *sg, *s2;
		struct fixture f;
		int64_t n, *cuts, maxlen;
		uint8_t *packed;
		struct blk b;
		void *st;

		setup(&f, seed);
		sg = ddt_segment_create(f.t, f.count);
		assert_non_null(sg);
		maxlen = 1 + (int64_t)(ddt_gen_rand(&s) % 97);
		n = pieces(&s, f.total, maxlen, &cuts);
		for (int walk = 0; walk < 2; walk++) {
			ddt_segment_set_walk(sg, walk);
			memset(f.got, 0, (size_t)(f.hi - f.lo));
			for (int64_t i = 0; i < n; i++) {
				int64_t a = cuts[2 * i], z = cuts[2 * i + 1];

				assert_int_equal(ddt_segment_unpack(sg, a, z,
						f.packed + a, ORG(&f, f.got)), 0);
				assert_int_equal(ddt_segment_pos(sg), z);
			}
			check_got(&f);
		}
		/* pack by ranges */
		packed = calloc(1, (size_t)f.total + 1);
		for (int64_t i = 0; i < n; i++) {
			int64_t a = cuts[2 * i], z = cuts[2 * i + 1];

			assert_int_equal(ddt_segment_pack(sg, a, z,
					ORG(&f, f.typed), packed + a), 0);
		}
		assert_memory_equal(packed, f.packed, (size_t)f.total);
		free(packed);
		/* blocks, stopping and resuming */
		b = (struct blk){ &f, 0, 0, 3 };
		ddt_segment_reset(sg);
		while (ddt_segment_blocks(sg, ddt_segment_pos(sg), f.total,
					  blk_cb, &b) == 1)
			b.stop_after = b.calls + 1 + (b.calls % 5);
		assert_int_equal(b.expect_stream, f.total);
		/* strided blocks, stopping and resuming, then by ranges */
		b = (struct blk){ &f, 0, 0, 2 };
		ddt_segment_reset(sg);
		while (ddt_segment_blocks_strided(sg, ddt_segment_pos(sg),
						  f.total, blk_cb, blk_scb,
						  &b) == 1)
			b.stop_after = b.calls + 1 + (b.calls % 3);
		assert_int_equal(b.expect_stream, f.total);
		b = (struct blk){ &f, 0, 0, -1 };
		for (int64_t i = 0; i < n; i++) {
			b.expect_stream = cuts[2 * i];
			assert_int_equal(ddt_segment_blocks_strided(sg,
					cuts[2 * i], cuts[2 * i + 1], blk_cb,
					blk_scb, &b), 0);
			assert_int_equal(b.expect_stream, cuts[2 * i + 1]);
		}
		assert_int_equal(ddt_segment_blocks_strided(sg, 0, f.total,
					blk_cb, NULL, &b), -EINVAL);
		/* bad ranges */
		assert_int_equal(ddt_segment_unpack(sg, 0, f.total + 1,
						    f.packed, f.got), -EINVAL);
		assert_int_equal(ddt_segment_unpack(sg, 1, 0, f.packed, f.got),
				 -EINVAL);
		/* save mid-stream, restore into another segment */
		if (f.total > 2) {
			int64_t mid = f.total / 2;

			memset(f.got, 0, (size_t)(f.hi - f.lo));
			ddt_segment_unpack(sg, 0, mid, f.packed, ORG(&f, f.got));
			st = malloc(ddt_segment_state_size(sg));
			assert_int_equal(ddt_segment_save(sg, st,
					ddt_segment_state_size(sg)), 0);
			s2 = ddt_segment_create(f.t, f.count);
			assert_int_equal(ddt_segment_restore(s2, st,
					ddt_segment_state_size(sg)), 0);
			assert_int_equal(ddt_segment_pos(s2), mid);
			assert_int_equal(ddt_segment_unpack(s2, mid, f.total,
					f.packed + mid, ORG(&f, f.got)), 0);
			check_got(&f);
			/* a tampered state is refused: flip the position
			 * (bytes 24..31) and then the first frame's block */
			((uint8_t *)st)[24] ^= 1;
			assert_int_equal(ddt_segment_restore(s2, st,
					ddt_segment_state_size(sg)), -EINVAL);
			((uint8_t *)st)[24] ^= 1;
			((uint8_t *)st)[48] ^= 1;
			assert_int_equal(ddt_segment_restore(s2, st,
					ddt_segment_state_size(sg)), -EINVAL);
			ddt_segment_free(s2);
			free(st);
		}
		free(cuts);
		ddt_segment_free(sg);
		teardown(&f);
	}
}

/*
 * ddt_segment_unpack_bounded: with the exact span as bounds it is
 * ddt_segment_unpack, range by range; with bounds that cut into the span,
 * every block that is written lies inside them, -ERANGE comes exactly
 * when a block of the range crosses them, and nothing outside is touched.
 */
static void test_segments_bounded(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		uint64_t s = seed ^ 0x5bd1e995u;
		struct ddt_segment *sg;
		struct fixture f;
		int64_t n, *cuts, maxlen, span, cut_lo, cut_hi;

		setup(&f, seed);
		span = f.hi - f.lo;
		sg = ddt_segment_create(f.t, f.count);
		assert_non_null(sg);
		maxlen = 1 + (int64_t)(ddt_gen_rand(&s) % 97);
		n = pieces(&s, f.total, maxlen, &cuts);
		for (int64_t i = 0; i < n; i++)
			assert_int_equal(ddt_segment_unpack_bounded(sg,
					cuts[2 * i], cuts[2 * i + 1],
					f.packed + cuts[2 * i], ORG(&f, f.got),
					f.lo, f.hi), 0);
		check_got(&f);
		assert_int_equal(ddt_segment_unpack_bounded(sg, 0, f.total,
				f.packed, ORG(&f, f.got), 1, 0), -EINVAL);
		if (span < 2) {
			free(cuts);
			ddt_segment_free(sg);
			teardown(&f);
			continue;
		}
		/* bounds one byte short at either end, or in the middle */
		cut_lo = f.lo + (int64_t)(ddt_gen_rand(&s) % 2);
		cut_hi = f.hi - (cut_lo == f.lo ? 1 : 0);
		if (ddt_gen_rand(&s) % 3 == 0)
			cut_hi = cut_lo + (span - 1) / 2;
		memset(f.got, 0, (size_t)span);
		for (int64_t i = 0; i < n; i++) {
			int64_t a = cuts[2 * i], z = cuts[2 * i + 1];
			bool out = false;
			int rc;

			/* the reference: does a byte of [a, z) map outside? */
			for (int64_t k = 0, pos = 0; k < f.n && pos < z; k++) {
				int64_t b0 = pos > a ? pos : a;
				int64_t b1 = pos + f.map[k].len < z ?
					pos + f.map[k].len : z;

				if (b0 < b1 &&
				    (f.map[k].off + (b0 - pos) < cut_lo ||
				     f.map[k].off + (b1 - pos) > cut_hi))
					out = true;
				pos += f.map[k].len;
			}
			rc = ddt_segment_unpack_bounded(sg, a, z, f.packed + a,
							ORG(&f, f.got), cut_lo,
							cut_hi);
			if (rc != (out ? -ERANGE : 0))
				describe(&f);
			assert_int_equal(rc, out ? -ERANGE : 0);
		}
		for (int64_t k = f.lo; k < f.hi; k++)
			if (k < cut_lo || k >= cut_hi)
				assert_int_equal(f.got[k - f.lo], 0);
		free(cuts);
		ddt_segment_free(sg);
		teardown(&f);
	}
}

/* The type's serialized blob and compiled form, checked; 0 when it has
 * no compiled form. */
static int prog_of(const struct fixture *f, uint64_t **blob_p,
		   uint64_t **prog_p, size_t *plen_p)
{
	ssize_t blen = ddt_serialize(f->t, NULL, 0);
	ssize_t plen = ddt_prog_serialize(f->t, NULL, 0);
	const struct ddt_blob *b;

	if (plen == -ENOENT)
		return 0;
	assert_true(blen > 0 && plen > 0);
	*blob_p = malloc((size_t)blen);
	*prog_p = malloc((size_t)plen);
	assert_true(*blob_p && *prog_p);
	assert_int_equal(ddt_serialize(f->t, *blob_p, (size_t)blen), blen);
	assert_int_equal(ddt_prog_serialize(f->t, *prog_p, (size_t)plen),
			 plen);
	assert_int_equal(ddt_blob_load(*blob_p, (size_t)blen, &b), 0);
	assert_int_equal(ddt_prog_check(*prog_p, (size_t)plen, b), 0);
	*plen_p = (size_t)plen;
	return 1;
}

/* Packets through the compiled form as ddt_general places them: shuffled,
 * some lost (exactly the delivered ones placed, as the segment engine
 * places them), and bounded (nothing outside the bounds, a range that
 * maps outside never completes). */
static void prog_packets(struct fixture *f, const uint64_t *prog,
			 uint64_t *s)
{
	int64_t span = f->hi - f->lo, n, *cuts, cut_lo, cut_hi, r;
	struct ddt_segment *sg = ddt_segment_create(f->t, f->count);
	uint8_t *want = calloc(1, (size_t)span + 1);

	assert_true(sg && want);
	n = pieces(s, f->total, 1 + (int64_t)(ddt_gen_rand(s) % 300), &cuts);
	for (int64_t i = 0; i < n; i++)
		assert_int_equal(ddt_prog_unpack_bounded(prog, cuts[2 * i],
				cuts[2 * i + 1], f->packed + cuts[2 * i],
				ORG(f, f->got), f->lo, f->hi), cuts[2 * i + 1]);
	check_got(f);
	memset(f->got, 0, (size_t)span);
	for (int64_t i = 0; i < n; i++) {
		int64_t a = cuts[2 * i], z = cuts[2 * i + 1];

		if (ddt_gen_rand(s) % 4 == 0)
			continue; /* lost */
		assert_int_equal(ddt_segment_unpack(sg, a, z, f->packed + a,
						    ORG(f, want)), 0);
		assert_int_equal(ddt_prog_unpack_bounded(prog, a, z,
				f->packed + a, ORG(f, f->got), f->lo, f->hi), z);
	}
	assert_memory_equal(f->got, want, (size_t)span);
	cut_lo = f->lo + (int64_t)(ddt_gen_rand(s) % 2);
	cut_hi = f->hi - (int64_t)(ddt_gen_rand(s) % 2);
	memset(f->got, 0, (size_t)span);
	for (int64_t i = 0; i < n; i++) {
		int64_t a = cuts[2 * i], z = cuts[2 * i + 1];
		bool out = false;

		for (int64_t k = 0, pos = 0; k < f->n && pos < z; k++) {
			int64_t b0 = pos > a ? pos : a;
			int64_t b1 = pos + f->map[k].len < z ?
				pos + f->map[k].len : z;

			if (b0 < b1 && (f->map[k].off + (b0 - pos) < cut_lo ||
					f->map[k].off + (b1 - pos) > cut_hi))
				out = true;
			pos += f->map[k].len;
		}
		r = ddt_prog_unpack_bounded(prog, a, z, f->packed + a,
					    ORG(f, f->got), cut_lo, cut_hi);
		assert_true(r >= a && r <= z);
		if (out)
			assert_true(r < z);
	}
	for (int64_t k = 0; k < span; k++) {
		if (k + f->lo < cut_lo || k + f->lo >= cut_hi)
			assert_int_equal(f->got[k], 0);
		else if (f->got[k] != 0)
			assert_int_equal(f->got[k], f->expect[k]);
	}
	free(cuts);
	free(want);
	ddt_segment_free(sg);
}

/* A corrupted compiled form is refused, or writes nothing outside the
 * bounds it is given. */
static void prog_corrupt(struct fixture *f, uint64_t *prog, size_t plen,
			 const uint64_t *blob, uint64_t *s)
{
	int64_t span = f->hi - f->lo;
	const struct ddt_blob *b;
	uint8_t *guard = malloc((size_t)span + 128);

	assert_non_null(guard);
	assert_int_equal(ddt_blob_load(blob, ddt_serialize(f->t, NULL, 0),
				       &b), 0);
	for (int k = 0; k < 20; k++) {
		size_t at = (size_t)(ddt_gen_rand(s) % plen);
		uint8_t bit = (uint8_t)(1u << (ddt_gen_rand(s) % 8));

		((uint8_t *)prog)[at] ^= bit;
		if (ddt_prog_check(prog, plen, b) == 0) {
			memset(guard, 0x5a, (size_t)span + 128);
			ddt_prog_unpack_bounded(prog, 0, f->total, f->packed,
						guard + 64 - f->lo, f->lo,
						f->hi);
			for (int64_t i = 0; i < 64; i++) {
				assert_int_equal(guard[i], 0x5a);
				assert_int_equal(guard[64 + span + i], 0x5a);
			}
		}
		((uint8_t *)prog)[at] ^= bit;
	}
	free(guard);
}

/* A form whose reciprocals are not those of its divisors is refused:
 * each one changed by one, or all cleared. */
static void prog_recip_forged(uint64_t *prog, size_t plen,
			      const uint64_t *blob)
{
	struct ddt_prog_hdr *h = (struct ddt_prog_hdr *)prog;
	struct ddt_op *ops = (struct ddt_op *)(h + 1);
	const struct ddt_blob *b;

	assert_int_equal(ddt_blob_load(blob, (size_t)((const struct ddt_blob *)
			 blob)->h.len, &b), 0);
	h->m_size ^= 1;
	assert_int_equal(ddt_prog_check(prog, plen, b), -EINVAL);
	h->m_size ^= 1;
	for (int64_t i = 0; i < h->nops; i++) {
		ops[i].m_bl ^= 1;
		assert_int_equal(ddt_prog_check(prog, plen, b), -EINVAL);
		ops[i].m_bl ^= 1;
		ops[i].m_rs ^= 1;
		assert_int_equal(ddt_prog_check(prog, plen, b), -EINVAL);
		ops[i].m_rs ^= 1;
	}
	assert_int_equal(ddt_prog_check(prog, plen, b), 0);
}

static void test_prog(void **state)
{
	int with = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		uint64_t s = seed ^ 0x27d4eb2fu, *blob, *prog;
		struct fixture f;
		size_t plen;

		setup(&f, seed);
		if (f.total > 0 && prog_of(&f, &blob, &prog, &plen)) {
			prog_packets(&f, prog, &s);
			if (seed % 10 == 0)
				prog_corrupt(&f, prog, plen, blob, &s);
			if (seed % 10 == 1)
				prog_recip_forged(prog, plen, blob);
			free(blob);
			free(prog);
			with++;
		}
		teardown(&f);
	}
	/* nearly every random type compiles */
	assert_true(with > NTYPES * 9 / 10);
}

/*
 * ddt_prog_unpack_pieces (a burst of packets that follow each other): the
 * stream cut in order into pieces of @p plen bytes (0: random lengths to
 * 3000), runs of 1 to 16 pieces each placed in one call. Unbounded, every
 * run reaches its end and the buffer is the reference; bounded by a
 * random [cut_lo, cut_hi), each run stops where ddt_prog_unpack_bounded
 * over the same contiguous bytes stops, having written the same bytes.
 */
static void prog_pieces(struct fixture *f, const uint64_t *prog,
			int64_t plen, uint64_t *s)
{
	int64_t span = f->hi - f->lo, cut_lo, cut_hi;
	uint8_t *got2 = calloc(1, (size_t)span + 1);

	assert_non_null(got2);
	cut_lo = f->lo + (int64_t)(ddt_gen_rand(s) % (uint64_t)(span / 4 + 1));
	cut_hi = f->hi - (int64_t)(ddt_gen_rand(s) % (uint64_t)(span / 4 + 1));
	for (int bounded = 0; bounded < 2; bounded++) {
		int64_t lo = bounded ? cut_lo : f->lo;
		int64_t hi = bounded ? cut_hi : f->hi;
		int64_t pos = 0;

		memset(f->got, 0, (size_t)span);
		memset(got2, 0, (size_t)span);
		while (pos < f->total) {
			struct ddt_piece pc[16];
			unsigned n = 1 + (unsigned)(ddt_gen_rand(s) % 16), k;
			int64_t end = pos, r1, r2;

			for (k = 0; k < n && end < f->total; k++) {
				int64_t len = plen > 0 ? plen :
					1 + (int64_t)(ddt_gen_rand(s) % 3000);

				if (len > f->total - end)
					len = f->total - end;
				pc[k] = (struct ddt_piece){ f->packed + end,
							    len };
				end += len;
			}
			r1 = ddt_prog_unpack_pieces(prog, pos, pc, k,
						    ORG(f, f->got), lo, hi);
			r2 = ddt_prog_unpack_bounded(prog, pos, end,
						     f->packed + pos,
						     ORG(f, got2), lo, hi);
			if (r1 != r2)
				describe(f);
			assert_int_equal(r1, r2);
			if (!bounded)
				assert_int_equal(r1, end);
			pos = end;
		}
		if (!bounded)
			check_got(f);
		assert_memory_equal(f->got, got2, (size_t)span);
	}
	free(got2);
}

static void test_prog_pieces(void **state)
{
	/* transposes (FFT2D's columns, smaller blocks, two elements,
	 * negative strides), then random types */
	static const struct { const char *e; int64_t count, plen; } tr[] = {
		{ "contig(128)[resized(0,16)[vector(128,1,1024)"
		  "[double_complex]]]", 1, 2048 },
		{ "contig(128)[resized(0,16)[vector(128,1,1024)"
		  "[double_complex]]]", 1, 0 },
		{ "contig(64)[resized(0,8)[vector(100,1,300)[double]]]", 2,
		  800 },
		{ "contig(40)[resized(0,4)[hvector(50,1,-2048)[int32]]]", 1,
		  200 },
		{ "contig(33)[resized(0,24)[hvector(20,1,4096)"
		  "[contig(3)[double]]]]", 2, 0 },
		{ "contig(16)[resized(0,32)[vector(64,1,64)[contig(2)"
		  "[double_complex]]]]", 1, 2048 },
	};
	int with = 0;

	(void)state;
	for (unsigned i = 0; i < sizeof(tr) / sizeof(tr[0]); i++) {
		uint64_t s = 0x9ec35 + i, *blob, *prog;
		struct ddt_type *t = ddt_parse(tr[i].e, NULL);
		struct fixture f;
		size_t plen;

		assert_non_null(t);
		setup_type(&f, i, t, tr[i].count);
		assert_int_equal(prog_of(&f, &blob, &prog, &plen), 1);
		for (int rep = 0; rep < 3; rep++)
			prog_pieces(&f, prog, tr[i].plen, &s);
		free(blob);
		free(prog);
		teardown(&f);
	}
	for (uint64_t seed = 1; seed <= NTYPES / 3; seed++) {
		uint64_t s = seed ^ 0x51ece5u, *blob, *prog;
		struct fixture f;
		size_t plen;

		setup(&f, seed);
		if (f.total > 0 && prog_of(&f, &blob, &prog, &plen)) {
			prog_pieces(&f, prog, (int64_t)(seed % 3) * 1024, &s);
			free(blob);
			free(prog);
			with++;
		}
		teardown(&f);
	}
	print_message("  %d of %d random types with a compiled form\n", with, NTYPES / 3);
	assert_true(with > NTYPES / 3 * 8 / 10); /* some have no data */
}

/* ddt_copy_strided against a block-by-block memcpy, every block size to
 * 130 B (each fixed kernel, the inline ones, memcpy), both directions of
 * stride, nothing else touched. */
static void test_copy_strided(void **state)
{
	uint8_t src[9 * 200], got[9 * 400 + 64], want[9 * 400 + 64];
	uint64_t s = 0xc0ffee;

	(void)state;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)ddt_gen_rand(&s);
	for (int64_t bl = 1; bl <= 200; bl += bl < 130 ? 1 : 70) {
		for (int64_t n = 1; n <= 9; n++) {
			int64_t stride = bl + (int64_t)(ddt_gen_rand(&s) % 40);
			int64_t at = 32;

			if (ddt_gen_rand(&s) % 2) {
				stride = -stride;
				at = 32 + (n - 1) * -stride;
			}
			memset(got, 0, sizeof(got));
			memset(want, 0, sizeof(want));
			for (int64_t k = 0; k < n; k++)
				memcpy(want + at + k * stride, src + k * bl,
				       (size_t)bl);
			ddt_copy_strided(got + at, src, bl, stride, n);
			assert_memory_equal(got, want, sizeof(got));
		}
	}
}

static void test_checkpoints(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= NTYPES; seed++) {
		uint64_t s = seed + 7;
		struct fixture f;
		int64_t n, *cuts;

		setup(&f, seed);
		n = pieces(&s, f.total, 64, &cuts);
		for (int k = 0; k < 4; k++) {
			static const int64_t ivs[] = { 1, 7, 64, 1000 };
			struct ddt_ckpt_set *c;
			struct ddt_segment *sg;
			int64_t iv = k == 3 ? f.total / 3 + 1 : ivs[k];

			c = ddt_ckpt_create(f.t, f.count, iv);
			assert_non_null(c);
			assert_int_equal(ddt_ckpt_interval(c), iv);
			assert_int_equal(ddt_ckpt_count(c),
					 f.total ? (f.total - 1) / iv + 1 : 1);
			sg = ddt_segment_create(f.t, f.count);
			assert_int_equal(ddt_ckpt_size(c),
					 ddt_segment_state_size(sg));
			memset(f.got, 0, (size_t)(f.hi - f.lo));
			for (int64_t i = 0; i < n; i++) {
				int64_t a = cuts[2 * i], z = cuts[2 * i + 1];
				int64_t idx = ddt_ckpt_find(c, a);

				assert_true(idx >= 0 && idx * iv <= a);
				assert_true(idx == ddt_ckpt_count(c) - 1 ||
					    (idx + 1) * iv > a);
				assert_int_equal(ddt_ckpt_restore(c, idx, sg), 0);
				assert_int_equal(ddt_segment_pos(sg), idx * iv);
				assert_int_equal(ddt_segment_unpack(sg, a, z,
						f.packed + a, ORG(&f, f.got)), 0);
			}
			check_got(&f);
			ddt_segment_free(sg);
			ddt_ckpt_free(c);
		}
		free(cuts);
		teardown(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_print_parse_blob),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_segments_bounded),
		cmocka_unit_test(test_prog),
		cmocka_unit_test(test_prog_pieces),
		cmocka_unit_test(test_copy_strided),
		cmocka_unit_test(test_checkpoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
