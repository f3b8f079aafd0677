/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench-mpi: the `mpich` variant of `spinnic-bench overlap`,
 * `group` and `stencil` (bench_overlap.c, bench_group.c,
 * bench_stencil.c), run by them as `mpiexec -n P spinnic-bench-mpi COLL
 * BYTES REPS WARMUP BUSY [WORK_US]`: MPI_Ibcast (root 0), MPI_Ibarrier,
 * MPI_Iallreduce (uint64 SUM) or MPI_Ialltoall (BYTES per pair), or
 * `stencil`: a 3D halo exchange of a BYTES³-double cube a rank on the
 * grid MPI_Dims_create makes (periodic where an extent is >= 2, as
 * bench_stencil.c), the <= 6 faces by MPI_Isend and the <= 6 halos by
 * MPI_Irecv between contiguous buffers, then MPI_Waitall (the data is not
 * checked); measured exactly as the other variants: t_pure
 * (start..MPI_Wait), t_work := t_pure (or WORK_US where given), t_total
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

/* the stencil's neighbours: nb[f] on side f (0: -x, 1: +x, .. 5: +z) or
 * MPI_PROC_NULL, as bench_stencil.c's (rank = (x * py + y) * pz + z) */
static void
stencil_neighbours(int rank, int P, int nb[6])
{
	int d[3] = { 0, 0, 0 }, c[3], q[3];

	MPI_Dims_create(P, 3, d);
	c[0] = rank / (d[1] * d[2]);
	c[1] = rank / d[2] % d[1];
	c[2] = rank % d[2];
	for (int f = 0; f < 6; f++) {
		int ax = f / 2;

		nb[f] = MPI_PROC_NULL;
		if (d[ax] < 2)
			continue;
		memcpy(q, c, sizeof(q));
		q[ax] = (q[ax] + (f % 2 ? 1 : d[ax] - 1)) % d[ax];
		nb[f] = (q[0] * d[1] + q[1]) * d[2] + q[2];
	}
}

int
main(int argc, char **argv)
{
	int rank, P, reps, warmup, busy, nb[6], nrq = 1;
	long bytes;
	double lpu, work = 0, pure = 0, total = 0, given = -1, *t;
	uint8_t *a, *b;
	const char *coll;
	size_t cap, face = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	if (argc != 6 && argc != 7) {
		if (rank == 0)
			fprintf(stderr, "usage: %s COLL BYTES REPS WARMUP "
				"BUSY [WORK_US]\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	coll = argv[1];
	bytes = atol(argv[2]);
	reps = atoi(argv[3]);
	warmup = atoi(argv[4]);
	busy = atoi(argv[5]);
	busy = busy < 0 ? -1 : busy % P; /* -1: every rank computes */
	if (argc == 7)
		given = atof(argv[6]);
	if (bytes < 0 || bytes > (1 << 24) || reps < 1 || reps > 1000000 ||
	    warmup < 0 || warmup > 1000 || (argc == 7 && !(given >= 0 &&
							   given < 1e8)))
		MPI_Abort(MPI_COMM_WORLD, 2);
	cap = (size_t)(bytes > 8 ? bytes : 8) * (size_t)P;
	if (strcmp(coll, "stencil") == 0) {
		/* BYTES is the cube's edge n: six faces of n² doubles */
		if (bytes < 2 || bytes > 256)
			MPI_Abort(MPI_COMM_WORLD, 2);
		stencil_neighbours(rank, P, nb);
		face = (size_t)bytes * (size_t)bytes;
		cap = 6 * face * sizeof(double);
	}
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
			MPI_Request rq[12];
			/* not MPI_STATUSES_IGNORE: gcc 12 takes it for an
			 * array of size 0 (-Wstringop-overflow) */
			MPI_Status sts[12];
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
			if (strcmp(coll, "bcast") == 0) {
				MPI_Ibcast(a, (int)bytes, MPI_BYTE, 0,
					   MPI_COMM_WORLD, rq);
			} else if (strcmp(coll, "barrier") == 0) {
				MPI_Ibarrier(MPI_COMM_WORLD, rq);
			} else if (strcmp(coll, "allreduce") == 0) {
				MPI_Iallreduce(a, b, bytes / 8 ? (int)(bytes /
					       8) : 1, MPI_UINT64_T, MPI_SUM,
					       MPI_COMM_WORLD, rq);
			} else if (strcmp(coll, "stencil") == 0) {
				/* halo f from nb[f] (its face f ^ 1, tag
				 * f ^ 1); face f to nb[f] (tag f) */
				nrq = 0;
				for (int f = 0; f < 6; f++) {
					double *h = (double *)(void *)b + f *
						    face;
					double *s = (double *)(void *)a + f *
						    face;

					if (nb[f] == MPI_PROC_NULL)
						continue;
					MPI_Irecv(h, (int)face, MPI_DOUBLE,
						  nb[f], f ^ 1, MPI_COMM_WORLD,
						  &rq[nrq++]);
					MPI_Isend(s, (int)face, MPI_DOUBLE,
						  nb[f], f, MPI_COMM_WORLD,
						  &rq[nrq++]);
				}
			} else {
				MPI_Ialltoall(a, (int)bytes, MPI_BYTE, b,
					      (int)bytes, MPI_BYTE,
					      MPI_COMM_WORLD, rq);
			}
			if (ph == 1) {
				if (busy < 0 || rank == busy)
					work_loops((uint64_t)(work * lpu));
				else
					sleep_us(work);
			}
			MPI_Waitall(nrq, rq, sts);
			my = (MPI_Wtime() - t0) * 1e6;
			MPI_Allreduce(&my, &mx, 1, MPI_DOUBLE, MPI_MAX,
				      MPI_COMM_WORLD);
			if (i >= 0)
				t[i] = mx;
		}
		if (ph == 0) {
			pure = median(t, reps);
			work = given >= 0 ? given : pure;
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
