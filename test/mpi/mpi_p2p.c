/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point, every byte checked, on any number of ranks >= 2:
 * blocking Send/Recv/Sendrecv/Ssend from 0 B to 1 MiB + 3 between every
 * pair, non-blocking Isend/Irecv to and from everyone at once, wildcards
 * (MPI_ANY_SOURCE/MPI_ANY_TAG with status and count), Probe/Iprobe of
 * unexpected messages, ordering of equal envelopes, and derived datatypes
 * (vector, indexed, struct with padding, resized) sent and received both
 * typed and as bytes, holes of the receive layout left untouched.
 */
#include "mpi_check.h"

static const size_t sizes[] = {
	0, 1, 7, 64, 1000, 4096, 8192 + 1, 65536, 262144, 1048576 + 3,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void
test_pairs(void)
{
	size_t max = sizes[NSIZES - 1];
	uint8_t *s = malloc(max), *r = malloc(max);

	CHECK(s != NULL && r != NULL, "malloc");
	for (size_t k = 0; k < NSIZES; k++) {
		size_t n = sizes[k];

		for (int d = 1; d < mt_size; d++) {
			int to = (mt_rank + d) % mt_size;
			int from = (mt_rank - d + mt_size) % mt_size;
			int tag = (int)k * 16 + d;
			MPI_Status st;
			int cnt;

			pat_fill(s, n, mt_rank, to, tag);
			memset(r, 0xEE, n);
			MPI_OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, tag, r, (int)n,
					    MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			CHECK(cnt == (int)n && st.MPI_SOURCE == from &&
			      st.MPI_TAG == tag, "count %d src %d tag %d", cnt,
			      st.MPI_SOURCE, st.MPI_TAG);
			size_t at = pat_diff(r, n, from, mt_rank, tag);
			CHECK(at == n, "sendrecv %zu B from %d: byte %zu", n, from, at);
		}
		/* blocking Send/Recv and Ssend: rank 0 with every other */
		for (int p = 1; p < mt_size; p++) {
			int tag = 1000 + (int)k;

			if (mt_rank == 0) {
				pat_fill(s, n, 0, p, tag);
				if (k % 2)
					MPI_OK(MPI_Ssend(s, (int)n, MPI_BYTE, p, tag,
							 MPI_COMM_WORLD));
				else
					MPI_OK(MPI_Send(s, (int)n, MPI_BYTE, p, tag,
							MPI_COMM_WORLD));
				MPI_OK(MPI_Recv(r, (int)n, MPI_BYTE, p, tag,
						MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				size_t at = pat_diff(r, n, p, 0, tag);
				CHECK(at == n, "recv %zu B from %d: byte %zu", n, p, at);
			} else if (mt_rank == p) {
				memset(r, 0, n);
				MPI_OK(MPI_Recv(r, (int)n, MPI_BYTE, 0, tag,
						MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				size_t at = pat_diff(r, n, 0, p, tag);
				CHECK(at == n, "recv %zu B from 0: byte %zu", n, at);
				pat_fill(s, n, p, 0, tag);
				MPI_OK(MPI_Send(s, (int)n, MPI_BYTE, 0, tag,
						MPI_COMM_WORLD));
			}
		}
	}
	free(s);
	free(r);
}

/* everyone to everyone at once, every size, receives posted after the
 * sends (half of them arrive unexpected) */
static void
test_nonblocking(void)
{
	int n = mt_size;
	size_t total = 0;
	uint8_t *sb, *rb;
	MPI_Request *rq = malloc(sizeof(*rq) * 2 * NSIZES * (size_t)n);
	size_t *off = malloc(sizeof(*off) * NSIZES * (size_t)n);
	int nr = 0;

	for (size_t k = 0; k < NSIZES; k++)
		total += sizes[k] * (size_t)n;
	sb = malloc(total);
	rb = malloc(total);
	CHECK(sb && rb && rq && off, "malloc");
	memset(rb, 0xA5, total);
	size_t o = 0;
	for (size_t k = 0; k < NSIZES; k++)
		for (int p = 0; p < n; p++) {
			off[k * (size_t)n + (size_t)p] = o;
			pat_fill(sb + o, sizes[k], mt_rank, p, 2000 + (int)k);
			MPI_OK(MPI_Isend(sb + o, (int)sizes[k], MPI_BYTE, p,
					 2000 + (int)k, MPI_COMM_WORLD, &rq[nr++]));
			o += sizes[k];
		}
	/* reverse order of posting: matching is by envelope */
	for (size_t k = NSIZES; k-- > 0;)
		for (int p = n; p-- > 0;)
			MPI_OK(MPI_Irecv(rb + off[k * (size_t)n + (size_t)p],
					 (int)sizes[k], MPI_BYTE, p, 2000 + (int)k,
					 MPI_COMM_WORLD, &rq[nr++]));
	MPI_OK(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
	for (size_t k = 0; k < NSIZES; k++)
		for (int p = 0; p < n; p++) {
			size_t at = pat_diff(rb + off[k * (size_t)n + (size_t)p],
					     sizes[k], p, mt_rank, 2000 + (int)k);
			CHECK(at == sizes[k], "isend %zu B from %d: byte %zu",
			      sizes[k], p, at);
		}
	free(sb);
	free(rb);
	free(rq);
	free(off);
}

/* wildcards, Probe/Iprobe of unexpected messages, ordering */
static void
test_wildcards(void)
{
	enum { M = 64 };
	uint8_t buf[70000];

	if (mt_rank != 0) {
		/* M ordered messages, sizes vary, same tag */
		for (int i = 0; i < M; i++) {
			size_t n = (size_t)(i * 997 % 70000);
			pat_fill(buf, n, mt_rank, 0, 3000 + i);
			buf[0] = (uint8_t)i;
			MPI_OK(MPI_Send(buf, (int)n + 1, MPI_BYTE, 0, 77,
					MPI_COMM_WORLD));
		}
		MPI_OK(MPI_Send(buf, 3, MPI_BYTE, 0, 100 + mt_rank, MPI_COMM_WORLD));
		MPI_Barrier(MPI_COMM_WORLD);
		return;
	}
	int next[64] = { 0 };
	for (int got = 0; got < M * (mt_size - 1); got++) {
		MPI_Status st;
		int cnt, flag = 0;

		if (got % 2) {
			MPI_OK(MPI_Probe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &st));
		} else {
			/* (not MPI_ANY_TAG: a source done with its tag-77
			 * messages has its tail message first in line) */
			do
				MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 77,
						  MPI_COMM_WORLD, &flag, &st));
			while (!flag);
		}
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		int src = st.MPI_SOURCE;
		CHECK(src > 0 && src < mt_size, "source %d", src);
		MPI_Status st2;
		MPI_OK(MPI_Recv(buf, cnt, MPI_BYTE, src, MPI_ANY_TAG,
				MPI_COMM_WORLD, &st2));
		int i = buf[0];
		size_t n = (size_t)(i * 997 % 70000);
		CHECK(st2.MPI_TAG == 77 && i == next[src] && (size_t)cnt == n + 1,
		      "from %d: message %d (expected %d), %d B", src, i,
		      next[src], cnt);
		next[src]++;
		buf[0] = pat(src, 0, 3000 + i, 0);
		size_t at = pat_diff(buf, n, src, 0, 3000 + i);
		CHECK(at == n, "ordered message %d from %d: byte %zu", i, src, at);
	}
	for (int p = 1; p < mt_size; p++) {
		MPI_Status st;
		int cnt;

		MPI_OK(MPI_Recv(buf, sizeof(buf), MPI_BYTE, MPI_ANY_SOURCE,
				MPI_ANY_TAG, MPI_COMM_WORLD, &st));
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		CHECK(cnt == 3 && st.MPI_TAG == 100 + st.MPI_SOURCE,
		      "tail message %d B tag %d from %d", cnt, st.MPI_TAG,
		      st.MPI_SOURCE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

struct rec {
	int i;
	double d;
	char c[3];
};

/* derived datatypes: a typed send received as bytes is the packed
 * layout; a typed receive fills exactly the type's blocks */
static void
test_datatypes(void)
{
	enum { NT = 4 };
	MPI_Datatype t[NT];
	const char *name[NT] = { "vector", "indexed", "struct", "hvector-resized" };
	int disp[] = { 0, 5, 11, 40, 41 }, bl[] = { 2, 3, 1, 1, 7 };
	int sbl[3] = { 1, 1, 3 };
	MPI_Aint sdisp[3] = { offsetof(struct rec, i), offsetof(struct rec, d),
			      offsetof(struct rec, c) };
	MPI_Datatype stypes[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, tmp;

	MPI_Type_vector(37, 3, 7, MPI_DOUBLE, &t[0]);
	MPI_Type_indexed(5, bl, disp, MPI_INT, &t[1]);
	MPI_Type_create_struct(3, sbl, sdisp, stypes, &tmp);
	MPI_Type_create_resized(tmp, 0, sizeof(struct rec), &t[2]);
	MPI_Type_free(&tmp);
	MPI_Type_create_hvector(9, 5, 13, MPI_BYTE, &tmp);
	MPI_Type_create_resized(tmp, 0, 200, &t[3]);
	MPI_Type_free(&tmp);
	for (int k = 0; k < NT; k++)
		MPI_Type_commit(&t[k]);

	for (int k = 0; k < NT; k++) {
		for (int count = 1; count <= 300; count *= 17) {
			MPI_Aint lb, ext;
			int tsize;

			MPI_Type_get_extent(t[k], &lb, &ext);
			MPI_Type_size(t[k], &tsize);
			size_t span = (size_t)ext * (size_t)count;
			size_t packed = (size_t)tsize * (size_t)count;
			uint8_t *src = malloc(span), *dst = malloc(span);
			uint8_t *ref = malloc(packed), *bytes = malloc(packed);
			int pos = 0, to = (mt_rank + 1) % mt_size;
			int from = (mt_rank - 1 + mt_size) % mt_size;
			int tag = 4000 + k * 100 + count;

			CHECK(src && dst && ref && bytes, "malloc");
			pat_fill(src, span, mt_rank, to, tag);
			/* 1. typed -> bytes: the bytes are MPI_Pack's */
			MPI_OK(MPI_Sendrecv(src, count, t[k], to, tag, bytes,
					    (int)packed, MPI_BYTE, from, tag,
					    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			pat_fill(dst, span, from, mt_rank, tag);
			MPI_OK(MPI_Pack(dst, count, t[k], ref, (int)packed, &pos,
					MPI_COMM_WORLD));
			CHECK(memcmp(ref, bytes, packed) == 0,
			      "%s x%d typed->bytes differs", name[k], count);
			/* 2. bytes -> typed: blocks filled, holes untouched */
			memset(dst, 0x5A, span);
			MPI_OK(MPI_Sendrecv(ref, (int)packed, MPI_BYTE, from, tag + 1,
					    dst, count, t[k], to, tag + 1,
					    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			/* what to sent us is its own ref: rebuild it */
			uint8_t *exp = malloc(span), *tsrc = malloc(span);
			pat_fill(tsrc, span, mt_rank, to, tag);
			memset(exp, 0x5A, span);
			pos = 0;
			MPI_OK(MPI_Pack(tsrc, count, t[k], ref, (int)packed, &pos,
					MPI_COMM_WORLD));
			pos = 0;
			MPI_OK(MPI_Unpack(ref, (int)packed, &pos, exp, count, t[k],
					  MPI_COMM_WORLD));
			CHECK(memcmp(exp, dst, span) == 0,
			      "%s x%d bytes->typed differs", name[k], count);
			/* 3. typed -> typed */
			memset(dst, 0x5A, span);
			MPI_OK(MPI_Sendrecv(src, count, t[k], to, tag + 2, dst,
					    count, t[k], from, tag + 2,
					    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			pat_fill(tsrc, span, from, mt_rank, tag);
			memset(exp, 0x5A, span);
			pos = 0;
			MPI_OK(MPI_Pack(tsrc, count, t[k], ref, (int)packed, &pos,
					MPI_COMM_WORLD));
			pos = 0;
			MPI_OK(MPI_Unpack(ref, (int)packed, &pos, exp, count, t[k],
					  MPI_COMM_WORLD));
			CHECK(memcmp(exp, dst, span) == 0,
			      "%s x%d typed->typed differs", name[k], count);
			free(exp);
			free(tsrc);
			free(src);
			free(dst);
			free(ref);
			free(bytes);
		}
	}
	for (int k = 0; k < NT; k++)
		MPI_Type_free(&t[k]);
}

int
main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	CHECK(mt_size >= 2, "needs 2 ranks or more");
	test_pairs();
	test_nonblocking();
	test_wildcards();
	test_datatypes();
	return mt_done("mpi_p2p");
}
