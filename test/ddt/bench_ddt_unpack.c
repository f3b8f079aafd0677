/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quick timing of host unpack for vector layouts (not a test: timings are
 * never checked). Prints, side by side in one run, memcpy of the same bytes
 * (the limit), ddt_unpack (fast path, with and without non-temporal
 * stores), and the general segment engine.
 *
 *   bench_ddt_unpack [message_bytes]    (default 8 MiB)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddt.h"
#include "ddt_internal.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* best of `reps` runs, in seconds */
#define TIME(reps, stmt)                                              \
	({                                                            \
		double best = 1e30;                                   \
		for (int r_ = 0; r_ < (reps); r_++) {                 \
			double t0_ = now();                           \
			stmt;                                         \
			double t1_ = now() - t0_;                     \
			if (t1_ < best)                               \
				best = t1_;                           \
		}                                                     \
		best;                                                 \
	})

int main(int argc, char **argv)
{
	int64_t msg = argc > 1 ? atoll(argv[1]) : 8 << 20;
	uint8_t *src = malloc((size_t)msg), *dst = malloc((size_t)msg * 2);
	int reps = msg >= (8 << 20) ? 5 : 20;

	memset(src, 1, (size_t)msg);
	memset(dst, 0, (size_t)msg * 2);
	printf("message %ld bytes, vector stride = 2 x block, GB/s of packed "
	       "bytes (best of %d)\n", (long)msg, reps);
	printf("%8s %9s %9s %9s %9s %9s %7s\n", "block", "memcpy", "unpack",
	       "unpack-nt", "no-nt", "segment", "ratio");
	for (int64_t bl = 64; bl <= 16384; bl *= 2) {
		int64_t n = msg / bl;
		struct ddt_type *t = ddt_hvector(n, bl, 2 * bl,
						 ddt_base(DDT_BYTE));
		struct ddt_segment *s;
		double tm, tu, tnt, tno, tseg;
		int64_t save = ddt_nt_min_total;

		ddt_commit(t);
		s = ddt_segment_create(t, 1);
		tm = TIME(reps, memcpy(dst, src, (size_t)msg));
		tu = TIME(reps, ddt_unpack(t, 1, src, dst));
		ddt_nt_min_total = 0;
		tnt = TIME(reps, ddt_unpack(t, 1, src, dst));
		ddt_nt_min_total = INT64_MAX;
		tno = TIME(reps, ddt_unpack(t, 1, src, dst));
		ddt_nt_min_total = save;
		/* general engine: in 2 KiB packets, as a handler would */
		tseg = TIME(reps, {
			ddt_segment_reset(s);
			for (int64_t p = 0; p < msg; p += 2048)
				ddt_segment_unpack(s, p, p + 2048 < msg ? p + 2048
								       : msg,
						   src + p, dst);
		});
		printf("%8ld %9.2f %9.2f %9.2f %9.2f %9.2f %7.2f\n", (long)bl,
		       msg / tm / 1e9, msg / tu / 1e9, msg / tnt / 1e9,
		       msg / tno / 1e9, msg / tseg / 1e9, tm / tu);
		ddt_segment_free(s);
		ddt_free(t);
	}
	/* small blocks: fixed-size copies */
	printf("\n%8s %9s %9s %9s\n", "block", "memcpy", "unpack", "ratio");
	for (int64_t bl = 1; bl <= 32; bl *= 2) {
		int64_t n = msg / bl;
		struct ddt_type *t = ddt_hvector(n, bl, 2 * bl,
						 ddt_base(DDT_BYTE));
		double tm, tu;

		ddt_commit(t);
		tm = TIME(reps, memcpy(dst, src, (size_t)msg));
		tu = TIME(reps, ddt_unpack(t, 1, src, dst));
		printf("%8ld %9.2f %9.2f %9.2f\n", (long)bl, msg / tm / 1e9,
		       msg / tu / 1e9, tm / tu);
		ddt_free(t);
	}
	free(src);
	free(dst);
	return 0;
}
