/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication, every byte checked, on any number of ranks >= 2:
 * windows over malloc'd memory (MPI_Win_create) and MPI_Win_allocate;
 * fence epochs with Put and Get (1 B to 1 MiB + 5) and Accumulate (SUM,
 * MAX, REPLACE, int and double); lock/unlock, exclusive and shared, and
 * lock_all + flush; Fetch_and_op (every ticket handed out once) and
 * Compare_and_swap (a counter incremented only by successful swaps);
 * derived datatypes on both sides of Put, Get and Accumulate.
 */
#include "mpi_check.h"

#define WSIZE ((size_t)(2u << 20))

static const size_t sizes[] = { 1, 8, 100, 4096, 65536 + 3, 1048576 + 5 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void
test_fence_put_get(MPI_Win win, uint8_t *base, const char *kind)
{
	int to = (mt_rank + 1) % mt_size, from = (mt_rank - 1 + mt_size) % mt_size;
	uint8_t *src = malloc(WSIZE), *got = malloc(WSIZE);

	CHECK(src && got, "malloc");
	for (size_t k = 0; k < NSIZES; k++) {
		size_t n = sizes[k], off = (k * 4099) % (WSIZE - n);
		int tag = 100 + (int)k;

		memset(base, 0x11, WSIZE);
		pat_fill(src, n, mt_rank, to, tag);
		MPI_OK(MPI_Win_fence(0, win));
		MPI_OK(MPI_Put(src, (int)n, MPI_BYTE, to, (MPI_Aint)off, (int)n,
			       MPI_BYTE, win));
		MPI_OK(MPI_Win_fence(0, win));
		size_t at = pat_diff(base + off, n, from, mt_rank, tag);
		CHECK(at == n, "%s put %zu B from %d: byte %zu", kind, n, from, at);
		CHECK((off == 0 || base[off - 1] == 0x11) &&
		      (off + n == WSIZE || base[off + n] == 0x11),
		      "%s put %zu B wrote outside", kind, n);
		/* get back what the previous rank put into `to`... no: get from
		 * `from` what its own predecessor put there */
		memset(got, 0, n);
		MPI_OK(MPI_Get(got, (int)n, MPI_BYTE, from, (MPI_Aint)off, (int)n,
			       MPI_BYTE, win));
		MPI_OK(MPI_Win_fence(0, win));
		int ffrom = (from - 1 + mt_size) % mt_size;
		at = pat_diff(got, n, ffrom, from, tag);
		CHECK(at == n, "%s get %zu B from %d: byte %zu", kind, n, from, at);
	}
	free(src);
	free(got);
}

static void
test_fence_accumulate(MPI_Win win, uint8_t *base)
{
	enum { N = 1000 };
	int32_t *wi = (int32_t *)base;
	double *wd = (double *)(base + 8 * N);
	int32_t *wm = (int32_t *)(base + 16 * N);
	int32_t *wr = (int32_t *)(base + 20 * N);
	int32_t vi[N], vm[N], vr[N];
	double vd[N];

	/* displacements in bytes (disp_unit 1) */
	memset(base, 0, 24 * N);
	for (int i = 0; i < N; i++) {
		vi[i] = mt_rank * 1000 + i;
		vd[i] = 0.5 * (mt_rank + 1) + i;
		vm[i] = (i * 7 + mt_rank * 13) % 101;
		vr[i] = mt_rank;
	}
	MPI_OK(MPI_Win_fence(0, win));
	/* everyone to rank 0 and to itself */
	for (int t = 0; t < 2; t++) {
		int target = t == 0 ? 0 : mt_rank;
		if (t == 1 && mt_rank == 0)
			break;
		MPI_OK(MPI_Accumulate(vi, N, MPI_INT32_T, target, 0, N,
				      MPI_INT32_T, MPI_SUM, win));
		MPI_OK(MPI_Accumulate(vd, N, MPI_DOUBLE, target, 8 * N, N,
				      MPI_DOUBLE, MPI_SUM, win));
		MPI_OK(MPI_Accumulate(vm, N, MPI_INT32_T, target, 16 * N, N,
				      MPI_INT32_T, MPI_MAX, win));
	}
	MPI_OK(MPI_Win_fence(0, win));
	for (int i = 0; i < N; i++) {
		if (mt_rank == 0) {
			int32_t s = 0, m = 0;
			double d = 0;
			for (int r = 0; r < mt_size; r++) {
				s += r * 1000 + i;
				d += 0.5 * (r + 1) + i;
				int32_t v = (i * 7 + r * 13) % 101;
				m = v > m ? v : m;
			}
			CHECK(wi[i] == s && wd[i] == d && wm[i] == m,
			      "acc [%d]: %d/%d %g/%g %d/%d", i, wi[i], s, wd[i], d,
			      wm[i], m);
		} else {
			CHECK(wi[i] == mt_rank * 1000 + i &&
			      wd[i] == 0.5 * (mt_rank + 1) + i &&
			      wm[i] == (i * 7 + mt_rank * 13) % 101,
			      "self acc [%d]", i);
		}
	}
	/* REPLACE from one rank at a time (fence between) */
	for (int r = 0; r < mt_size; r++) {
		if (mt_rank == r)
			for (int t = 0; t < mt_size; t++)
				MPI_OK(MPI_Accumulate(vr, N, MPI_INT32_T, t,
						      20 * N, N, MPI_INT32_T,
						      MPI_REPLACE, win));
		MPI_OK(MPI_Win_fence(0, win));
		for (int i = 0; i < N; i++)
			CHECK(wr[i] == r, "replace [%d] = %d, want %d", i, wr[i], r);
		/* the next round's writes belong to the next epoch */
		MPI_OK(MPI_Win_fence(0, win));
	}
}

static void
test_lock(MPI_Win win, uint8_t *base)
{
	int to = (mt_rank + 1) % mt_size, from = (mt_rank - 1 + mt_size) % mt_size;
	size_t n = 300000;
	uint8_t *src = malloc(n), *got = malloc(n);
	int64_t one = 1;

	CHECK(src && got, "malloc");
	memset(base, 0, WSIZE);
	MPI_Barrier(MPI_COMM_WORLD);
	/* exclusive: a put and a get in one epoch */
	pat_fill(src, n, mt_rank, to, 7);
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win));
	MPI_OK(MPI_Put(src, (int)n, MPI_BYTE, to, 64, (int)n, MPI_BYTE, win));
	MPI_OK(MPI_Win_unlock(to, win));
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win));
	MPI_OK(MPI_Get(got, (int)n, MPI_BYTE, to, 64, (int)n, MPI_BYTE, win));
	MPI_OK(MPI_Win_unlock(to, win));
	size_t at = pat_diff(got, n, mt_rank, to, 7);
	CHECK(at == n, "lock put+get back: byte %zu", at);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
	at = pat_diff(base + 64, n, from, mt_rank, 7);
	MPI_OK(MPI_Win_unlock(mt_rank, win));
	CHECK(at == n, "lock put from %d: byte %zu", from, at);
	/* shared: everyone adds to every rank's counter, 50 times */
	int64_t *ctr = (int64_t *)(base + WSIZE - 8);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int t = 0; t < mt_size; t++) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
		for (int i = 0; i < 50; i++)
			MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t,
					      (MPI_Aint)(WSIZE - 8), 1,
					      MPI_INT64_T, MPI_SUM, win));
		MPI_OK(MPI_Win_unlock(t, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
	CHECK(*ctr == 50 * mt_size, "shared counter %" PRId64 ", want %d", *ctr,
	      50 * mt_size);
	MPI_OK(MPI_Win_unlock(mt_rank, win));
	/* lock_all + flush: put, flush, get sees it */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_lock_all(0, win));
	pat_fill(src, 5000, mt_rank, to, 8);
	MPI_OK(MPI_Put(src, 5000, MPI_BYTE, to, 1 << 20, 5000, MPI_BYTE, win));
	MPI_OK(MPI_Win_flush(to, win));
	memset(got, 0, 5000);
	MPI_OK(MPI_Get(got, 5000, MPI_BYTE, to, 1 << 20, 5000, MPI_BYTE, win));
	MPI_OK(MPI_Win_flush_all(win));
	MPI_OK(MPI_Win_unlock_all(win));
	at = pat_diff(got, 5000, mt_rank, to, 8);
	CHECK(at == 5000, "lock_all put/flush/get: byte %zu", at);
	free(src);
	free(got);
	MPI_Barrier(MPI_COMM_WORLD);
}

static void
test_atomics(MPI_Win win, uint8_t *base)
{
	enum { K = 40 };
	int64_t *tick = (int64_t *)base, *cas = (int64_t *)(base + 8);
	int64_t one = 1, mine[K], *all = NULL;

	memset(base, 0, 64);
	MPI_Barrier(MPI_COMM_WORLD);
	/* Fetch_and_op: K tickets each from rank 0's counter */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	for (int i = 0; i < K; i++) {
		MPI_OK(MPI_Fetch_and_op(&one, &mine[i], MPI_INT64_T, 0, 0,
					MPI_SUM, win));
		MPI_OK(MPI_Win_flush(0, win));
	}
	MPI_OK(MPI_Win_unlock(0, win));
	if (mt_rank == 0)
		all = calloc((size_t)K * (size_t)mt_size, sizeof(*all));
	MPI_Gather(mine, K, MPI_INT64_T, all, K, MPI_INT64_T, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (mt_rank == 0) {
		int total = K * mt_size;
		char *seen = calloc((size_t)total, 1);
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		CHECK(*tick == total, "counter %" PRId64 ", want %d", *tick, total);
		MPI_OK(MPI_Win_unlock(0, win));
		for (int i = 0; i < total; i++) {
			CHECK(all[i] >= 0 && all[i] < total && !seen[all[i]],
			      "ticket %" PRId64 " twice or out of range", all[i]);
			seen[all[i]] = 1;
		}
		free(seen);
		free(all);
	}
	/* fetch with NO_OP and REPLACE */
	MPI_Barrier(MPI_COMM_WORLD);
	int64_t v = -1, old = -2;
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
	MPI_OK(MPI_Fetch_and_op(NULL, &old, MPI_INT64_T, 0, 0, MPI_NO_OP, win));
	MPI_OK(MPI_Win_flush(0, win));
	v = 1000 + mt_rank;
	int64_t old2 = -3;
	MPI_OK(MPI_Fetch_and_op(&v, &old2, MPI_INT64_T, 0, 0, MPI_REPLACE, win));
	MPI_OK(MPI_Win_unlock(0, win));
	CHECK(old == old2 && (old == K * mt_size || (old >= 1000 && old < 1000 + mt_size)),
	      "no_op %" PRId64 " replace %" PRId64, old, old2);
	MPI_Barrier(MPI_COMM_WORLD);
	/* Compare_and_swap: each rank makes K successful increments of rank
	 * 0's second word, reading it and swapping v -> v + 1 */
	int wins = 0, fails = 0;
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	while (wins < K) {
		int64_t cur, next, res;
		MPI_OK(MPI_Fetch_and_op(NULL, &cur, MPI_INT64_T, 0, 8, MPI_NO_OP,
					win));
		MPI_OK(MPI_Win_flush(0, win));
		next = cur + 1;
		MPI_OK(MPI_Compare_and_swap(&next, &cur, &res, MPI_INT64_T, 0, 8,
					    win));
		MPI_OK(MPI_Win_flush(0, win));
		CHECK(res >= cur, "CAS returned %" PRId64 " < %" PRId64, res, cur);
		if (res == cur)
			wins++;
		else
			fails++;
		CHECK(fails < 100000, "CAS never succeeds");
	}
	/* a swap that must fail returns the current value, changes nothing */
	int64_t bogus = -5, nv = 77, res = 0;
	MPI_OK(MPI_Compare_and_swap(&nv, &bogus, &res, MPI_INT64_T, 0, 8, win));
	MPI_OK(MPI_Win_unlock(0, win));
	CHECK(res >= wins && res != bogus, "failed CAS returned %" PRId64, res);
	MPI_Barrier(MPI_COMM_WORLD);
	if (mt_rank == 0)
		CHECK(*cas == (int64_t)K * mt_size, "CAS counter %" PRId64
		      ", want %d", *cas, K * mt_size);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Put/Get/Accumulate with derived types on the origin and the target */
static void
test_osc_datatypes(MPI_Win win, uint8_t *base)
{
	MPI_Datatype ovec, tidx, dvec;
	int bl[] = { 3, 1, 10, 2 }, disp[] = { 0, 7, 9, 40 }; /* 16 ints */
	int to = (mt_rank + 1) % mt_size, from = (mt_rank - 1 + mt_size) % mt_size;
	int32_t origin[200], expect[400], got[200];
	double dsrc[64];

	MPI_Type_vector(16, 1, 3, MPI_INT32_T, &ovec);       /* 16 of 48 */
	MPI_Type_indexed(4, bl, disp, MPI_INT32_T, &tidx);   /* extent 42 */
	MPI_Type_vector(8, 2, 4, MPI_DOUBLE, &dvec);         /* 16 of 30 */
	MPI_Type_commit(&ovec);
	MPI_Type_commit(&tidx);
	MPI_Type_commit(&dvec);
	for (int i = 0; i < 200; i++)
		origin[i] = mt_rank * 100000 + i;
	memset(base, 0xCD, 4096);
	MPI_OK(MPI_Win_fence(0, win));
	/* 3 origin vectors into 3 target indexed blocks at 42-int steps */
	MPI_OK(MPI_Put(origin, 3, ovec, to, 0, 3, tidx, win));
	MPI_OK(MPI_Win_fence(0, win));
	/* expected: from's origin elements 0,3,6,... (48 of them, vector
	 * extent 46 ints: vector(16,1,3) spans 46) in index order */
	memset(expect, 0xCD, sizeof(expect));
	{
		int k = 0;
		for (int c = 0; c < 3; c++)
			for (int b = 0; b < 4; b++)
				for (int j = 0; j < bl[b]; j++) {
					int src_el = c * 46 + (k % 16) * 3;
					expect[c * 42 + disp[b] + j] =
						from * 100000 + src_el;
					k++;
				}
	}
	CHECK(memcmp(base, expect, 3 * 42 * 4) == 0, "put vector->indexed");
	/* get it back through the same pair of types, reversed */
	memset(got, 0, sizeof(got));
	MPI_OK(MPI_Get(got, 3, ovec, to, 0, 3, tidx, win));
	MPI_OK(MPI_Win_fence(0, win));
	for (int c = 0; c < 3; c++)
		for (int e = 0; e < 16; e++)
			CHECK(got[c * 46 + e * 3] == origin[c * 46 + e * 3],
			      "get indexed->vector [%d]", c * 46 + e * 3);
	{
		char in[200] = { 0 };
		for (int c = 0; c < 3; c++)
			for (int e = 0; e < 16; e++)
				in[c * 46 + e * 3] = 1;
		for (int i = 0; i < 200; i++)
			if (!in[i])
				CHECK(got[i] == 0, "get wrote a hole at %d", i);
	}
	/* accumulate SUM on strided doubles from everyone to rank 0 */
	double *wd = (double *)(base + 1024);
	for (int i = 0; i < 64; i++)
		dsrc[i] = mt_rank + 1 + i * 0.25;
	memset(wd, 0, 64 * sizeof(double));
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Accumulate(dsrc, 16, MPI_DOUBLE, 0, 1024 / 4, 1, dvec,
			      MPI_SUM, win));
	MPI_OK(MPI_Win_fence(0, win));
	if (mt_rank == 0) {
		int k = 0;
		for (int i = 0; i < 30; i++) {
			bool in = i % 4 < 2;
			double want = 0;
			if (in) {
				for (int r = 0; r < mt_size; r++)
					want += r + 1 + k * 0.25;
				k++;
			}
			CHECK(wd[i] == want, "acc dvec [%d] = %g, want %g", i,
			      wd[i], want);
		}
	}
	MPI_Type_free(&ovec);
	MPI_Type_free(&tidx);
	MPI_Type_free(&dvec);
	MPI_Barrier(MPI_COMM_WORLD);
}

int
main(int argc, char **argv)
{
	MPI_Win win;
	uint8_t *mem, *abase;

	mt_init(&argc, &argv);
	CHECK(mt_size >= 2, "needs 2 ranks or more");

	/* a window over malloc'd memory */
	mem = malloc(WSIZE);
	CHECK(mem != NULL, "malloc");
	MPI_OK(MPI_Win_create(mem, WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	test_fence_put_get(win, mem, "create");
	test_fence_accumulate(win, mem);
	test_lock(win, mem);
	test_atomics(win, mem);
	MPI_OK(MPI_Win_free(&win));
	free(mem);

	/* MPI_Win_allocate */
	MPI_OK(MPI_Win_allocate(WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &abase,
				&win));
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	test_fence_put_get(win, abase, "allocate");
	test_atomics(win, abase);
	MPI_OK(MPI_Win_free(&win));
	/* displacement unit 4: the datatype test's displacements are ints */
	MPI_OK(MPI_Win_allocate(8192, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &abase,
				&win));
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	test_osc_datatypes(win, abase);
	MPI_OK(MPI_Win_free(&win));
	return mt_done("mpi_osc");
}
