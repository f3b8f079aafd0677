/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the MPI test programs (test/mpi): a failed check prints the
 * rank, the line and what differed, then aborts the job (mpirun exits
 * non-zero). Data are patterns of (rank, peer, tag, index) so that every
 * byte received is checked against what its sender must have written.
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int mt_rank, mt_size;
static long mt_checks;

#define CHECK(cond, ...) \
	do { \
		mt_checks++; \
		if (!(cond)) { \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", \
				mt_rank, __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			fflush(stderr); \
			MPI_Abort(MPI_COMM_WORLD, 1); \
		} \
	} while (0)

#define MPI_OK(call) \
	do { \
		int mt_rc_ = (call); \
		CHECK(mt_rc_ == MPI_SUCCESS, "%s returned %d", #call, mt_rc_); \
	} while (0)

/** Byte i of the message tagged tag from src to dst. */
static inline uint8_t
pat(int src, int dst, int tag, size_t i)
{
	uint64_t x = ((uint64_t)src * 0x9E3779B1u) ^ ((uint64_t)dst << 17) ^
		     ((uint64_t)tag * 0x85EBCA77u) ^ (i * 0xC2B2AE3Du);

	x ^= x >> 15;
	return (uint8_t)(x ^ (x >> 8) ^ (i >> 13));
}

static inline void
pat_fill(uint8_t *b, size_t n, int src, int dst, int tag)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, dst, tag, i);
}

/** First index where b differs from the pattern, or n. */
static inline size_t
pat_diff(const uint8_t *b, size_t n, int src, int dst, int tag)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(src, dst, tag, i))
			return i;
	return n;
}

static inline void
mt_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/** Print the totals on rank 0 and finalize; @return main's exit code. */
static inline int
mt_done(const char *name)
{
	long total = 0;

	const char *drain = getenv("MPI_TEST_DRAIN_MS");

	MPI_Reduce(&mt_checks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (mt_rank == 0)
		printf("%s: %d ranks, %ld checks passed\n", name, mt_size, total);
	fflush(stdout);
	/* btl/portals4 calls the pml back from MPI_Finalize after the pml
	 * is gone when a Portals ACK/SEND event is still due then (Open MPI
	 * 4.1.4, doc/NOTES.md "Open MPI over spinnic"): progress a while
	 * first so the events due arrive while the pml is there */
	if (drain != NULL && atoi(drain) > 0) {
		double end = MPI_Wtime() + atoi(drain) / 1000.0;
		int flag;

		MPI_Barrier(MPI_COMM_WORLD);
		while (MPI_Wtime() < end)
			MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
				   &flag, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	return 0;
}

#endif
