/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collective cases of test/coll, shared by the spinnic test
 * (itest_coll.c) and the MPI reference (coll_mpi_ref.c): the same list,
 * the same seeded inputs, the same digest of each rank's result.
 */
#ifndef COLL_CASES_H
#define COLL_CASES_H

#include <stddef.h>
#include <stdint.h>

enum coll_kind {
	CK_BCAST,       /* algo: 0 binomial, 1 k-nomial (k = 3), 2 ring,
			   3 binomial in 4 KiB segments (pipelined) */
	CK_BARRIER,
	CK_ALLREDUCE,   /* algo: 0 uint8 SUM (size = count), 1 uint64 SUM
			   (size = bytes), 2 int64 MAX (size = bytes), by
			   recursive doubling; 3, 4: as 0, 1 by reduce (atomics
			   up a binomial tree) then bcast */
	CK_ALLTOALL,    /* algo: 0 pairwise, 1 scatter; size = per pair */
	CK_ALLGATHER,   /* algo: 0 ring, 1 dissemination (Bruck);
			   size = per rank */
};

struct coll_case {
	enum coll_kind kind;
	unsigned algo;
	size_t size;
	unsigned root;
	unsigned instances;   /* run this many re-armed instances */
};

/* The cases for @p P ranks into @p out (at most @p max). @return count */
unsigned coll_cases(unsigned P, struct coll_case *out, unsigned max);
/* "bcast/0 size 4097 root 2" */
void coll_case_name(const struct coll_case *c, char *buf, size_t len);
/* Bytes of each rank's send and result buffers for @p P ranks. */
size_t coll_send_len(const struct coll_case *c, unsigned P);
size_t coll_recv_len(const struct coll_case *c, unsigned P);
/* Fill @p buf with rank @p rank's input of instance @p inst of case @p ci
 * (bcast: only the root's matters). */
void coll_input(const struct coll_case *c, unsigned ci, unsigned rank,
		uint64_t inst, void *buf, size_t len);
/* 64-bit FNV-1a of @p len bytes. */
uint64_t coll_digest(const void *p, size_t len);
/* The instances whose digests are compared with MPI: 0 and the last. */
#define COLL_DIGEST_INST(c, i) ((i) == 0 || (i) + 1 == (c)->instances)



/* The expected result of rank @p rank (coll_recv_len bytes into @p out),
 * computed directly from every rank's input; @p scratch holds
 * coll_send_len bytes. */
void coll_expect(const struct coll_case *c, unsigned ci, unsigned rank,
		 unsigned P, uint64_t inst, void *out, void *scratch);
#endif
