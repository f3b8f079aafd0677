/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The outside reference of test/coll: the system MPI (MPICH) runs every
 * case of coll_cases.c with the same inputs, and rank 0 writes one line
 * per (case, instance, rank): "CASE INST RANK DIGEST" (hex), for the
 * instances COLL_DIGEST_INST names.
 *   mpiexec -n P coll_mpi_ref OUTFILE
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_cases.h"

#define MAXCASES 256

int
main(int argc, char **argv)
{
	static struct coll_case cases[MAXCASES];
	int rank, P;
	unsigned n, ci;
	FILE *f = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	if (argc != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: coll_mpi_ref OUTFILE\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0 && (f = fopen(argv[1], "w")) == NULL) {
		perror(argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	n = coll_cases((unsigned)P, cases, MAXCASES);
	if (n > MAXCASES)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (ci = 0; ci < n; ci++) {
		const struct coll_case *c = &cases[ci];
		size_t sl = coll_send_len(c, (unsigned)P);
		size_t rl = coll_recv_len(c, (unsigned)P);
		uint8_t *sb = calloc(1, sl + 1), *rb = calloc(1, rl + 1);
		uint64_t inst, d, *all = calloc((size_t)P, 8);
		int r;

		for (inst = 0; inst < c->instances; inst++) {
			if (!COLL_DIGEST_INST(c, inst))
				continue;
			coll_input(c, ci, (unsigned)rank, inst, sb, sl);
			switch (c->kind) {
			case CK_BCAST:
				memcpy(rb, sb, sl);
				MPI_Bcast(rb, (int)c->size, MPI_BYTE,
					  (int)c->root, MPI_COMM_WORLD);
				break;
			case CK_BARRIER:
				MPI_Barrier(MPI_COMM_WORLD);
				break;
			case CK_ALLREDUCE:
				if (c->algo == 0 || c->algo == 3)
					MPI_Allreduce(sb, rb, (int)c->size,
						      MPI_UINT8_T, MPI_SUM,
						      MPI_COMM_WORLD);
				else
					MPI_Allreduce(sb, rb,
						      (int)(c->size / 8),
						      c->algo == 2 ?
						      MPI_INT64_T :
						      MPI_UINT64_T,
						      c->algo == 2 ? MPI_MAX :
						      MPI_SUM, MPI_COMM_WORLD);
				break;
			case CK_ALLTOALL:
				MPI_Alltoall(sb, (int)c->size, MPI_BYTE, rb,
					     (int)c->size, MPI_BYTE,
					     MPI_COMM_WORLD);
				break;
			case CK_ALLGATHER:
				MPI_Allgather(sb, (int)c->size, MPI_BYTE, rb,
					      (int)c->size, MPI_BYTE,
					      MPI_COMM_WORLD);
				break;
			}
			d = coll_digest(rb, rl);
			MPI_Gather(&d, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T,
				   0, MPI_COMM_WORLD);
			if (rank == 0)
				for (r = 0; r < P; r++)
					fprintf(f, "%u %llu %d %016llx\n", ci,
						(unsigned long long)inst, r,
						(unsigned long long)all[r]);
		}
		free(sb);
		free(rb);
		free(all);
	}
	if (f != NULL && fclose(f) != 0) {
		perror(argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Finalize();
	return 0;
}
