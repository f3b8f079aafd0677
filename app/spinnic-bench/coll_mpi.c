/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench-mpi: the `mpich` variant of `spinnic-bench overlap`
 * (bench_coll.c), run by it as `mpiexec -n P spinnic-bench-mpi COLL BYTES
 * REPS WARMUP BUSY`: MPI_Ibcast (root 0), MPI_Ibarrier, MPI_Iallreduce
 * (uint64 SUM) or MPI_Ialltoall (BYTES per pair) measured exactly as the
 * other variants: t_pure (start..MPI_Wait), t_work := t_pure, t_total
 * (start, compute, MPI_Wait) with rank BUSY computing in a calibrated loop
 * and the others sleeping without MPI calls; max over ranks per iteration
 * (MPI_Allreduce, untimed); iterations start at an instant rank 0 sets
 * after a barrier (MPI_Bcast, untimed), medians.
 * Rank 0 prints "mpich T_PURE_US T_TOTAL_US".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include <mpi.h>

#include "overlap_work.h"

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	int rank, P, reps, warmup, busy;
	long bytes;
	double lpu, work = 0, pure = 0, total = 0, *t;
	uint8_t *a, *b;
	const char *coll;
	size_t cap;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	if (argc != 6) {
		if (rank == 0)
			fprintf(stderr, "usage: %s COLL BYTES REPS WARMUP "
				"BUSY\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	coll = argv[1];
	bytes = atol(argv[2]);
	reps = atoi(argv[3]);
	warmup = atoi(argv[4]);
	busy = atoi(argv[5]);
	busy = busy < 0 ? -1 : busy % P; /* -1: every rank computes */
	if (bytes < 0 || bytes > (1 << 24) || reps < 1 || reps > 1000000 ||
	    warmup < 0 || warmup > 1000)
		MPI_Abort(MPI_COMM_WORLD, 2);
	cap = (size_t)(bytes > 8 ? bytes : 8) * (size_t)P;
	a = calloc(cap, 1);
	b = calloc(cap, 1);
	t = calloc((size_t)reps, sizeof(*t));
	if (a == NULL || b == NULL || t == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(a, rank + 1, cap);
	/* sleeping ranks wake at t_work, not a 50 us timer slack later */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	lpu = work_calibrate();
	for (int ph = 0; ph < 2; ph++) {
		for (int i = -warmup; i < reps; i++) {
			MPI_Request rq;
			struct timespec ts;
			double t0, my, mx, at;

			/* the same instant on every rank (one clock on this
			 * machine), as bench_overlap.c's ranks: not a
			 * barrier's exit, which ranks sharing a CPU leave a
			 * scheduling slice apart */
			MPI_Barrier(MPI_COMM_WORLD);
			at = work_now() + 2e-3 + 0.5e-3 * P;
			MPI_Bcast(&at, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
			ts.tv_sec = (time_t)at;
			ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					       &ts, NULL) == EINTR)
				;
			t0 = MPI_Wtime();
			if (strcmp(coll, "bcast") == 0)
				MPI_Ibcast(a, (int)bytes, MPI_BYTE, 0,
					   MPI_COMM_WORLD, &rq);
			else if (strcmp(coll, "barrier") == 0)
				MPI_Ibarrier(MPI_COMM_WORLD, &rq);
			else if (strcmp(coll, "allreduce") == 0)
				MPI_Iallreduce(a, b, bytes / 8 ? (int)(bytes /
					       8) : 1, MPI_UINT64_T, MPI_SUM,
					       MPI_COMM_WORLD, &rq);
			else
				MPI_Ialltoall(a, (int)bytes, MPI_BYTE, b,
					      (int)bytes, MPI_BYTE,
					      MPI_COMM_WORLD, &rq);
			if (ph == 1) {
				if (busy < 0 || rank == busy)
					work_loops((uint64_t)(work * lpu));
				else
					sleep_us(work);
			}
			MPI_Wait(&rq, MPI_STATUS_IGNORE);
			my = (MPI_Wtime() - t0) * 1e6;
			MPI_Allreduce(&my, &mx, 1, MPI_DOUBLE, MPI_MAX,
				      MPI_COMM_WORLD);
			if (i >= 0)
				t[i] = mx;
		}
		if (ph == 0) {
			pure = median(t, reps);
			work = pure;
		} else {
			total = median(t, reps);
		}
	}
	if (rank == 0)
		printf("mpich %.3f %.3f\n", pure, total);
	free(a);
	free(b);
	free(t);
	MPI_Finalize();
	return 0;
}
