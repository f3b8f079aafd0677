/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The compute of the overlap benchmarks (notes-002_003 §5.6): a calibrated
 * loop for the busy rank, a sleep for the others. Shared by
 * bench_overlap.c and the MPICH helper coll_mpi.c (built apart, by mpicc:
 * so static inline, no libspinnic).
 */
#ifndef SPINNIC_BENCH_OVERLAP_WORK_H
#define SPINNIC_BENCH_OVERLAP_WORK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static volatile uint64_t overlap_sink;

/* @p n steps of an LCG the compiler cannot drop */
static inline void
work_loops(uint64_t n)
{
	uint64_t x = overlap_sink + 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	overlap_sink = x;
}

static inline double
work_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* loops per µs, the best of 5 runs of 2 ms or more */
static inline double
work_calibrate(void)
{
	double best = 0;

	for (int k = 0; k < 5; k++) {
		uint64_t n = 200000;
		double t;

		for (;;) {
			double t0 = work_now();

			work_loops(n);
			t = (work_now() - t0) * 1e6;
			if (t >= 2000)
				break;
			n *= 2;
		}
		if ((double)n / t > best)
			best = (double)n / t;
	}
	return best;
}

static inline void
sleep_us(double us)
{
	struct timespec ts = { (time_t)(us / 1e6),
			       (long)((us - (double)(time_t)(us / 1e6) * 1e6) *
				      1e3) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

#endif
