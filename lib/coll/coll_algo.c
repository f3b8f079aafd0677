/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives as schedules (spin_coll.h; paper 002 Table I): each builds
 * a cDAG with spin_sched_* and compiles it, any communicator size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

#define TRY(x) do { \
	int r_ = (x); \
	if (r_ < 0) { \
		rc = r_; \
		goto fail; \
	} \
} while (0)

/* a vertex id, or jump to fail */
#define V(var, x) do { \
	int r_ = (x); \
	if (r_ < 0) { \
		rc = r_; \
		goto fail; \
	} \
	(var) = r_; \
} while (0)

static int
finish(spin_sched_t *s, spin_sched_t **s_p, int rc)
{
	if (rc == 0)
		rc = spin_sched_compile(s, 0);
	if (rc != 0) {
		spin_sched_free(s);
		*s_p = NULL;
		return rc;
	}
	*s_p = s;
	return 0;
}

/* one tree (or chain) over @p len bytes at @p buf with tag @p tag */
static int
bcast_tree(spin_sched_t *s, spin_coll_comm_t *comm, uint8_t *buf,
	   size_t len, unsigned root, unsigned algo, unsigned radix,
	   uint32_t tag)
{
	unsigned P = comm->size, vr, mask, k, j;
	int rc = 0, recv = -1, id;

	vr = (comm->rank + P - root) % P;
	k = algo == SPIN_COLL_BCAST_BINOMIAL ? 2 : radix;
	if (algo == SPIN_COLL_BCAST_RING) {
		if (vr > 0)
			V(recv, spin_sched_recv(s, buf, len,
						(comm->rank + P - 1) % P, tag));
		if (vr + 1 < P) {
			V(id, spin_sched_send(s, buf, len,
					      (comm->rank + 1) % P, tag));
			if (recv >= 0)
				TRY(spin_sched_dep(s, recv, id));
		}
		return 0;
	}
	/* k-nomial (binomial: k = 2): the parent is vr with its lowest
	 * non-zero base-k digit cleared */
	for (mask = 1; mask < P; mask *= k)
		if (vr % (k * mask) != 0) {
			unsigned parent = vr - vr % (k * mask);

			V(recv, spin_sched_recv(s, buf, len,
						(parent + root) % P, tag));
			break;
		}
	for (mask /= k; mask > 0; mask /= k)
		for (j = 1; j < k; j++) {
			unsigned child = vr + j * mask;

			if (child >= P)
				break;
			V(id, spin_sched_send(s, buf, len, (child + root) % P,
					      tag));
			if (recv >= 0)
				TRY(spin_sched_dep(s, recv, id));
		}
	return 0;
fail:
	return rc;
}

int
spin_coll_bcast_pipelined(spin_coll_comm_t *comm, void *buf, size_t len,
			  unsigned root, unsigned algo, unsigned radix,
			  size_t segment, spin_sched_t **s_p)
{
	size_t off = 0;
	uint32_t tag = 0;
	spin_sched_t *s;
	int rc;

	if (comm == NULL || s_p == NULL || root >= comm->size ||
	    (buf == NULL && len > 0) || algo > SPIN_COLL_BCAST_RING ||
	    (algo == SPIN_COLL_BCAST_KNOMIAL && radix < 2) ||
	    (segment > 0 && (len + segment - 1) / segment > 65536))
		return -EINVAL;
	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	do {
		size_t n = segment == 0 || len - off < segment ? len - off :
			   segment;

		rc = bcast_tree(s, comm, (uint8_t *)buf + off, n, root, algo,
				radix, tag++);
		off += n;
	} while (rc == 0 && off < len);
	return finish(s, s_p, rc);
}

int
spin_coll_bcast(spin_coll_comm_t *comm, void *buf, size_t len,
		unsigned root, unsigned algo, unsigned radix,
		spin_sched_t **s_p)
{
	return spin_coll_bcast_pipelined(comm, buf, len, root, algo, radix, 0,
					 s_p);
}

int
spin_coll_barrier(spin_coll_comm_t *comm, spin_sched_t **s_p)
{
	unsigned P, dist, round;
	spin_sched_t *s;
	int rc, prev = -1, snd, rcv;

	if (comm == NULL || s_p == NULL)
		return -EINVAL;
	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	P = comm->size;
	for (round = 0, dist = 1; dist < P; round++, dist <<= 1) {
		V(snd, spin_sched_send(s, NULL, 0, (comm->rank + dist) % P,
				       round));
		V(rcv, spin_sched_recv(s, NULL, 0, (comm->rank + P - dist) % P,
				       round));
		if (prev >= 0)
			TRY(spin_sched_dep(s, prev, snd));
		prev = rcv;
	}
	return finish(s, s_p, 0);
fail:
	return finish(s, s_p, rc);
}

static int
allreduce_rd(spin_coll_comm_t *comm, const void *sendbuf, void *recvbuf,
	     size_t count, ptl_op_t op, ptl_datatype_t type,
	     spin_sched_t **s_p)
{
	size_t esz = spin_coll_type_size(type), len;
	unsigned P, r, pof2, rem, mask, step;
	int rc, last = -1, id, snd, rcv, newrank;
	uint8_t *tmp;
	spin_sched_t *s;

	if (comm == NULL || s_p == NULL || esz == 0 ||
	    count > SIZE_MAX / esz || (count > 0 && recvbuf == NULL) ||
	    (count > 0 && sendbuf == NULL))
		return -EINVAL;
	len = count * esz;
	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	P = comm->size;
	r = comm->rank;
	for (pof2 = 1; pof2 * 2 <= P; pof2 *= 2)
		;
	rem = P - pof2;
	if (sendbuf != recvbuf && len > 0)
		V(last, spin_sched_copy(s, recvbuf, sendbuf, len));
	/* a temporary per step (and one for the fold), so that a receive
	 * never waits for the reduction before it */
	tmp = coll_sched_alloc(s, (len ? len : 1) * 34);
	if (tmp == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	newrank = -1;
	if (r < 2 * rem) {
		if (r % 2 == 0) {
			/* folded in: give my data to r+1, get the result */
			V(snd, spin_sched_send(s, recvbuf, len, r + 1, 0));
			if (last >= 0)
				TRY(spin_sched_dep(s, last, snd));
			V(rcv, spin_sched_recv(s, recvbuf, len, r + 1, 1));
			TRY(spin_sched_dep(s, snd, rcv));
			return finish(s, s_p, 0);
		}
		V(rcv, spin_sched_recv(s, tmp, len, r - 1, 0));
		V(id, spin_sched_reduce(s, recvbuf, tmp, count, op, type));
		TRY(spin_sched_dep(s, rcv, id));
		if (last >= 0)
			TRY(spin_sched_dep(s, last, id));
		last = id;
		newrank = (int)(r / 2);
	} else {
		newrank = (int)(r - rem);
	}
	for (mask = 1, step = 1; mask < pof2; mask <<= 1, step++) {
		unsigned nd = (unsigned)newrank ^ mask;
		unsigned dst = nd < rem ? nd * 2 + 1 : nd + rem;
		uint8_t *t = tmp + (size_t)step * (len ? len : 1);

		V(snd, spin_sched_send(s, recvbuf, len, dst, 1 + step));
		V(rcv, spin_sched_recv(s, t, len, dst, 1 + step));
		V(id, spin_sched_reduce(s, recvbuf, t, count, op, type));
		TRY(spin_sched_dep(s, snd, id));
		TRY(spin_sched_dep(s, rcv, id));
		if (last >= 0) {
			TRY(spin_sched_dep(s, last, snd));
			TRY(spin_sched_dep(s, last, id));
		}
		last = id;
	}
	if (r < 2 * rem) {
		V(snd, spin_sched_send(s, recvbuf, len, r - 1, 1));
		if (last >= 0)
			TRY(spin_sched_dep(s, last, snd));
	}
	return finish(s, s_p, 0);
fail:
	return finish(s, s_p, rc);
}

/* binomial reduce to rank 0: each child's recvbuf is added into its
 * parent's by atomics once the parent's recvbuf holds its own input;
 * then a binomial bcast of the result back over recvbuf */
static int
allreduce_tree(spin_coll_comm_t *comm, const void *sendbuf, void *recvbuf,
	       size_t count, ptl_op_t op, ptl_datatype_t type,
	       spin_sched_t **s_p)
{
	size_t esz = spin_coll_type_size(type), len = count * esz;
	unsigned P = comm->size, r = comm->rank, mask;
	int rc, copy = -1, up = -1, down = -1, id, kids[32], nk = 0, i;
	spin_sched_t *s;

	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	if (sendbuf != recvbuf && len > 0)
		V(copy, spin_sched_copy(s, recvbuf, sendbuf, len));
	for (mask = 1; mask < P; mask <<= 1) {
		if (r & mask) {
			V(up, spin_sched_send_reduce(s, recvbuf, count, op,
						     type, r - mask, 1));
			break;
		}
		if (r + mask < P) {
			V(id, spin_sched_recv_reduce(s, recvbuf, count, op,
						     type, r + mask, 1));
			if (copy >= 0)
				TRY(spin_sched_dep(s, copy, id));
			kids[nk++] = id;
		}
	}
	if (up >= 0) {
		if (copy >= 0)
			TRY(spin_sched_dep(s, copy, up));
		for (i = 0; i < nk; i++)
			TRY(spin_sched_dep(s, kids[i], up));
		/* the result comes down into the buffer just sent up */
		V(down, spin_sched_recv(s, recvbuf, len, r - mask, 2));
		TRY(spin_sched_dep(s, up, down));
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (r + mask >= P)
			continue;
		V(id, spin_sched_send(s, recvbuf, len, r + mask, 2));
		if (down >= 0)
			TRY(spin_sched_dep(s, down, id));
		if (copy >= 0)
			TRY(spin_sched_dep(s, copy, id));
		for (i = 0; i < nk; i++)
			TRY(spin_sched_dep(s, kids[i], id));
	}
	return finish(s, s_p, 0);
fail:
	return finish(s, s_p, rc);
}

int
spin_coll_allreduce_algo(spin_coll_comm_t *comm, const void *sendbuf,
			 void *recvbuf, size_t count, ptl_op_t op,
			 ptl_datatype_t type, unsigned algo,
			 spin_sched_t **s_p)
{
	size_t esz = spin_coll_type_size(type);

	/* checked here, not by the vertices: some ranks (folded in, or
	 * leaves) have no reduction, and every rank must refuse alike */
	if (comm == NULL || s_p == NULL || esz == 0 ||
	    !coll_atomic_ok(op, type) ||
	    count > SIZE_MAX / esz || (count > 0 && recvbuf == NULL) ||
	    (count > 0 && sendbuf == NULL) ||
	    algo > SPIN_COLL_ALLREDUCE_REDUCE_BCAST)
		return -EINVAL;
	if (algo == SPIN_COLL_ALLREDUCE_RD)
		return allreduce_rd(comm, sendbuf, recvbuf, count, op, type,
				    s_p);
	return allreduce_tree(comm, sendbuf, recvbuf, count, op, type, s_p);
}

int
spin_coll_allreduce(spin_coll_comm_t *comm, const void *sendbuf,
		    void *recvbuf, size_t count, ptl_op_t op,
		    ptl_datatype_t type, spin_sched_t **s_p)
{
	return spin_coll_allreduce_algo(comm, sendbuf, recvbuf, count, op,
					type, SPIN_COLL_ALLREDUCE_RD, s_p);
}

int
spin_coll_alltoall(spin_coll_comm_t *comm, const void *sendbuf,
		   void *recvbuf, size_t blk, unsigned algo,
		   spin_sched_t **s_p)
{
	const uint8_t *sb = sendbuf;
	uint8_t *rb = recvbuf;
	unsigned P, r, i;
	int rc, snd, rcv, psnd = -1, prcv = -1, id;
	spin_sched_t *s;

	if (comm == NULL || s_p == NULL ||
	    algo > SPIN_COLL_ALLTOALL_SCATTER ||
	    (blk > 0 && (sendbuf == NULL || recvbuf == NULL)))
		return -EINVAL;
	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	P = comm->size;
	r = comm->rank;
	if (blk > 0)
		V(id, spin_sched_copy(s, rb + (size_t)r * blk,
				      sb + (size_t)r * blk, blk));
	for (i = 1; i < P; i++) {
		unsigned dst = (r + i) % P, src = (r + P - i) % P;

		V(snd, spin_sched_send(s, blk ? sb + (size_t)dst * blk : NULL,
				       blk, dst, 0));
		V(rcv, spin_sched_recv(s, blk ? rb + (size_t)src * blk : NULL,
				       blk, src, 0));
		if (algo == SPIN_COLL_ALLTOALL_PAIRWISE && psnd >= 0) {
			TRY(spin_sched_dep(s, psnd, snd));
			TRY(spin_sched_dep(s, prcv, snd));
			TRY(spin_sched_dep(s, psnd, rcv));
			TRY(spin_sched_dep(s, prcv, rcv));
		}
		psnd = snd;
		prcv = rcv;
	}
	(void)id;
	return finish(s, s_p, 0);
fail:
	return finish(s, s_p, rc);
}

/* The blocks first .. first + cnt - 1 (mod P) of @p P as at most two
 * contiguous runs of block indices: [*a0, *a0 + *n0) and [0, *n1). */
static void
block_runs(unsigned first, unsigned cnt, unsigned P, unsigned *a0,
	   unsigned *n0, unsigned *n1)
{
	*a0 = first;
	*n0 = first + cnt <= P ? cnt : P - first;
	*n1 = cnt - *n0;
}

/*
 * Dissemination (Bruck) allgather, any P: in round k (d = 2^k) rank r
 * sends the min(d, P - d) blocks it holds, r .. r + d - 1 (mod P), to
 * r - d and receives r + d .. from r + d; ceil(log2 P) rounds. The blocks
 * stay at their own place in @p recvbuf (no rotation at the end): a run
 * that wraps past block P - 1 is two messages, split alike on both sides
 * (the same block indices). A round's sends follow every earlier receive
 * (they forward what those brought) and, from round 1, the copy of the
 * rank's own block.
 */
static int
allgather_bruck(spin_coll_comm_t *comm, const void *sendbuf, uint8_t *rb,
		size_t blk, spin_sched_t *s)
{
	unsigned P = comm->size, r = comm->rank, d, k, i, j;
	int rc = 0, copy = -1, id, nrecv = 0, recvs[2 * 32], sends[2];

	if (blk > 0)
		V(copy, spin_sched_copy(s, rb + (size_t)r * blk, sendbuf, blk));
	for (d = 1, k = 0; d < P; d *= 2, k++) {
		unsigned cnt = d < P - d ? d : P - d, to = (r + P - d) % P,
			 from = (r + d) % P, a0, n0, n1, ns = 0;
		int nr0 = nrecv;

		if (blk == 0) {
			/* one empty message a round: the same synchronisation */
			V(sends[ns++], spin_sched_send(s, NULL, 0, to, k));
			V(recvs[nrecv++], spin_sched_recv(s, NULL, 0, from, k));
		} else if (k == 0) {
			V(sends[ns++], spin_sched_send(s, sendbuf, blk, to, k));
			V(recvs[nrecv++], spin_sched_recv(s,
				rb + (size_t)from * blk, blk, from, k));
		} else {
			block_runs(r, cnt, P, &a0, &n0, &n1);
			V(sends[ns++], spin_sched_send(s, rb + (size_t)a0 * blk,
						       (size_t)n0 * blk, to, k));
			if (n1 > 0)
				V(sends[ns++], spin_sched_send(s, rb,
					(size_t)n1 * blk, to, k));
			block_runs(from, cnt, P, &a0, &n0, &n1);
			V(recvs[nrecv++], spin_sched_recv(s,
				rb + (size_t)a0 * blk, (size_t)n0 * blk, from,
				k));
			if (n1 > 0)
				V(recvs[nrecv++], spin_sched_recv(s, rb,
					(size_t)n1 * blk, from, k));
		}
		for (i = 0; i < ns; i++) {
			for (j = 0; j < (unsigned)nr0; j++)
				TRY(spin_sched_dep(s, recvs[j], sends[i]));
			if (k > 0 && copy >= 0)
				TRY(spin_sched_dep(s, copy, sends[i]));
		}
	}
	(void)id;
	return 0;
fail:
	return rc;
}

int
spin_coll_allgather_algo(spin_coll_comm_t *comm, const void *sendbuf,
			 void *recvbuf, size_t blk, unsigned algo,
			 spin_sched_t **s_p)
{
	spin_sched_t *s;
	int rc;

	if (algo == SPIN_COLL_ALLGATHER_RING)
		return spin_coll_allgather(comm, sendbuf, recvbuf, blk, s_p);
	if (comm == NULL || s_p == NULL || algo != SPIN_COLL_ALLGATHER_BRUCK ||
	    (blk > 0 && (sendbuf == NULL || recvbuf == NULL)))
		return -EINVAL;
	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	rc = allgather_bruck(comm, sendbuf, recvbuf, blk, s);
	return finish(s, s_p, rc);
}

int
spin_coll_allgather(spin_coll_comm_t *comm, const void *sendbuf,
		    void *recvbuf, size_t blk, spin_sched_t **s_p)
{
	uint8_t *rb = recvbuf;
	unsigned P, r, i, right, left;
	int rc, snd, rcv, prcv = -1, id;
	spin_sched_t *s;

	if (comm == NULL || s_p == NULL ||
	    (blk > 0 && (sendbuf == NULL || recvbuf == NULL)))
		return -EINVAL;
	rc = spin_sched_create(comm, &s);
	if (rc != 0)
		return rc;
	P = comm->size;
	r = comm->rank;
	right = (r + 1) % P;
	left = (r + P - 1) % P;
	if (blk > 0)
		V(id, spin_sched_copy(s, rb + (size_t)r * blk, sendbuf, blk));
	for (i = 0; i + 1 < P; i++) {
		unsigned sblk = (r + P - i) % P, rblk = (r + 2 * P - i - 1) % P;
		const void *from = i == 0 ? sendbuf :
				   (const void *)(rb + (size_t)sblk * blk);

		V(snd, spin_sched_send(s, blk ? from : NULL, blk, right, 0));
		V(rcv, spin_sched_recv(s, blk ? rb + (size_t)rblk * blk : NULL,
				       blk, left, 0));
		if (prcv >= 0)
			TRY(spin_sched_dep(s, prcv, snd));
		prcv = rcv;
	}
	(void)id;
	return finish(s, s_p, 0);
fail:
	return finish(s, s_p, rc);
}
