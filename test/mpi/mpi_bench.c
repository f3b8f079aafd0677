/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI measurements of tools/mpi-bench.sh, on 2 ranks or more (ranks 0
 * and 1 for point-to-point; everyone for collectives). One line per
 * figure, "name value unit", from rank 0:
 *   lat_B      ping-pong half round trip, B bytes (us, median of 7 runs)
 *   bw_B       ping-pong bandwidth at B bytes (MB/s, best of 5 runs)
 *   rate_8     8-byte messages per second, a window of 64 Isends
 *   allreduce_8  MPI_Allreduce of one double (us, median of 7)
 *   overlap    Iallreduce (8 B) with computation: the share of the
 *              collective's time hidden behind the computation, 0..1
 * Every message is checked (the first and last byte) so a broken path
 * cannot look fast.
 */
#include <time.h>

#include "mpi_check.h"

static double
now(void)
{
	return MPI_Wtime();
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

static double
pingpong(uint8_t *b, size_t n, int iters)
{
	double t0;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now();
	for (int i = 0; i < iters; i++) {
		if (mt_rank == 0) {
			b[0] = (uint8_t)i;
			if (n > 1)
				b[n - 1] = (uint8_t)~i;
			MPI_Send(b, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(b, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			CHECK(n == 0 || (b[0] == (uint8_t)(i + 1) &&
			      (n == 1 || b[n - 1] == (uint8_t)~(i + 1))),
			      "pingpong %zu B reply %d", n, i);
		} else if (mt_rank == 1) {
			MPI_Recv(b, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			CHECK(n == 0 || b[0] == (uint8_t)i, "pingpong %zu B %d", n, i);
			b[0] = (uint8_t)(i + 1);
			if (n > 1)
				b[n - 1] = (uint8_t)~(i + 1);
			MPI_Send(b, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (now() - t0) / iters / 2;
}

/* spin for about us microseconds without calling MPI */
static volatile double sink;
static void
compute(double us)
{
	double t0 = now(), x = 1.0;

	while ((now() - t0) * 1e6 < us)
		for (int i = 0; i < 100; i++)
			x = x * 1.0000001 + 1e-9;
	sink = x;
}

int
main(int argc, char **argv)
{
	static const size_t lat_sizes[] = { 8, 1024 };
	static const size_t bw_sizes[] = { 65536, 1048576 };
	double v[7];
	uint8_t *b;
	int scale = argc > 1 ? atoi(argv[1]) : 1;

	if (scale < 1)
		scale = 1;
	mt_init(&argc, &argv);
	CHECK(mt_size >= 2, "needs 2 ranks or more");
	b = calloc(1, 1 << 20);
	CHECK(b != NULL, "malloc");
	for (size_t k = 0; k < 2; k++) {
		pingpong(b, lat_sizes[k], 50);
		for (int r = 0; r < 7; r++)
			v[r] = pingpong(b, lat_sizes[k], 200 * scale);
		if (mt_rank == 0)
			printf("lat_%zu %.2f us\n", lat_sizes[k], median(v, 7) * 1e6);
	}
	for (size_t k = 0; k < 2; k++) {
		double best = 1e9;
		pingpong(b, bw_sizes[k], 4);
		for (int r = 0; r < 5; r++) {
			double t = pingpong(b, bw_sizes[k], 20 * scale);
			best = t < best ? t : best;
		}
		if (mt_rank == 0)
			printf("bw_%zu %.1f MB/s\n", bw_sizes[k],
			       bw_sizes[k] / best / 1e6);
	}
	/* message rate: 0 sends windows of 64, 1 receives, acks each window */
	{
		enum { W = 64 };
		MPI_Request rq[W];
		uint8_t m[W][8];
		int windows = 100 * scale;
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = now();
		for (int w = 0; w < windows; w++) {
			if (mt_rank == 0) {
				for (int i = 0; i < W; i++) {
					m[i][0] = (uint8_t)(w + i);
					MPI_Isend(m[i], 8, MPI_BYTE, 1, 2,
						  MPI_COMM_WORLD, &rq[i]);
				}
				MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
				MPI_Recv(m[0], 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
			} else if (mt_rank == 1) {
				for (int i = 0; i < W; i++)
					MPI_Irecv(m[i], 8, MPI_BYTE, 0, 2,
						  MPI_COMM_WORLD, &rq[i]);
				MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
				for (int i = 0; i < W; i++)
					CHECK(m[i][0] == (uint8_t)(w + i),
					      "rate message %d.%d", w, i);
				MPI_Send(m[0], 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
			}
		}
		double t = now() - t0;
		if (mt_rank == 0)
			printf("rate_8 %.0f msg/s\n", windows * W / t);
	}
	/* allreduce latency */
	{
		double in, out;
		int iters = 200 * scale;
		for (int r = 0; r < 7; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = now();
			for (int i = 0; i < iters; i++) {
				in = mt_rank + i;
				MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM,
					      MPI_COMM_WORLD);
				CHECK(out == (double)mt_size * (mt_size - 1) / 2 +
				      (double)i * mt_size, "allreduce %d", i);
			}
			v[r] = (now() - t0) / iters;
		}
		if (mt_rank == 0)
			printf("allreduce_8 %.2f us\n", median(v, 7) * 1e6);
	}
	/* overlap: t_pure (Iallreduce + Wait), then the same with computing
	 * t_pure first: overlap = 1 - (t_both - t_comp) / t_pure */
	{
		double in = mt_rank, out, t_pure, t_both, t_comp;
		int iters = 50 * scale;
		MPI_Request rq;
		for (int r = 0; r < 7; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = now();
			for (int i = 0; i < iters; i++) {
				MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM,
					       MPI_COMM_WORLD, &rq);
				MPI_Wait(&rq, MPI_STATUS_IGNORE);
			}
			v[r] = (now() - t0) / iters;
		}
		t_pure = median(v, 7);
		MPI_Bcast(&t_pure, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		double comp_us = t_pure * 1e6 * 1.5;
		for (int r = 0; r < 7; r++) {
			double t0 = now();
			for (int i = 0; i < 10; i++)
				compute(comp_us);
			v[r] = (now() - t0) / 10;
		}
		t_comp = median(v, 7);
		for (int r = 0; r < 7; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = now();
			for (int i = 0; i < iters; i++) {
				MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM,
					       MPI_COMM_WORLD, &rq);
				compute(comp_us);
				MPI_Wait(&rq, MPI_STATUS_IGNORE);
				CHECK(out == (double)mt_size * (mt_size - 1) / 2,
				      "iallreduce %d", i);
			}
			v[r] = (now() - t0) / iters;
		}
		t_both = median(v, 7);
		double ov = 1.0 - (t_both - t_comp) / t_pure;
		ov = ov < 0 ? 0 : ov > 1 ? 1 : ov;
		if (mt_rank == 0)
			printf("overlap %.2f (iallreduce %.1f us, compute %.1f us, "
			       "both %.1f us)\n", ov, t_pure * 1e6, t_comp * 1e6,
			       t_both * 1e6);
	}
	free(b);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
