/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libspinnic-heap.so (lib/heap): this program is linked with it, so its
 * malloc and friends are the heap's, as under LD_PRELOAD. No spinnic runs.
 *   test_heap [all]   every case below (SPINNIC_REGION_SIZE=16M)
 *   test_heap off     SPINNIC_HEAP=0: libc serves everything
 * Cases: each entry point served from the region, contents, alignment,
 * usable sizes; realloc across sizes and allocators; libc pointers freed
 * through the heap; hostile frees; the region full (libc takes over, the
 * region serves again once freed); 8 threads of random traffic, every byte
 * checked; fork(): the child has its own copy of the region as it was at
 * the fork, while the parent churns at once, and can allocate in it.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spin.h>
#include <spin_heap.h>

/* the hostile cases free what the compiler can see is no allocation */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Walloc-size-larger-than="
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

extern void *__libc_malloc(size_t size);

static int failures;

#define CHECK(c, ...) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #c); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

static int
in_region(const void *p, size_t n)
{
	return spin_host_contains(p, n ? n : 1);
}

static struct spin_heap_stats
stats(void)
{
	struct spin_heap_stats st;

	spin_heap_stats(&st);
	return st;
}

static void
fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

static int
same(const uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 31 + seed))
			return 0;
	return 1;
}

static void
test_entry_points(void)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 17, 32, 33, 100, 128,
		129, 1000, 4096, 8191, 8192, 8193, 65536, 1 << 20 };
	struct spin_heap_stats a = stats(), b;
	void *p = NULL, *q;
	uint8_t *c;

	CHECK(a.enabled == 1, "enabled %u", a.enabled);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		uint8_t *m = malloc(n);

		CHECK(m != NULL && in_region(m, n), "malloc(%zu) = %p", n,
		      (void *)m);
		CHECK((uintptr_t)m % 16 == 0, "malloc(%zu) = %p", n, (void *)m);
		CHECK(malloc_usable_size(m) >= n, "usable %zu < %zu",
		      malloc_usable_size(m), n);
		fill(m, n, (unsigned)i);
		c = calloc(1, n);
		CHECK(c != NULL && in_region(c, n), "calloc(%zu)", n);
		for (size_t k = 0; k < n; k++)
			if (c[k] != 0) {
				CHECK(0, "calloc(%zu)[%zu] = %u", n, k, c[k]);
				break;
			}
		CHECK(same(m, n, (unsigned)i), "malloc(%zu) contents", n);
		free(c);
		free(m);
	}
	/* recycled memory is zeroed by calloc too */
	c = malloc(200);
	memset(c, 0xee, 200);
	free(c);
	c = calloc(25, 8);
	for (size_t k = 0; k < 200; k++)
		if (c[k] != 0) {
			CHECK(0, "recycled calloc byte %zu = %u", k, c[k]);
			break;
		}
	free(c);
	volatile size_t huge = SIZE_MAX / 2;

	CHECK(calloc(huge, 3) == NULL && errno == ENOMEM,
	      "calloc overflow");

	/* alignments */
	for (size_t al = 8; al <= 65536; al *= 2) {
		CHECK(posix_memalign(&p, al, 100) == 0 && p != NULL &&
		      (uintptr_t)p % al == 0 && in_region(p, 100),
		      "posix_memalign(%zu)", al);
		memset(p, 1, 100);
		free(p);
		q = aligned_alloc(al, 3 * al);
		CHECK(q != NULL && (uintptr_t)q % al == 0 &&
		      in_region(q, 3 * al) && malloc_usable_size(q) >= 3 * al,
		      "aligned_alloc(%zu)", al);
		memset(q, 2, 3 * al);
		free(q);
		q = memalign(al, 10);
		CHECK(q != NULL && (uintptr_t)q % al == 0, "memalign(%zu)", al);
		free(q);
	}
	CHECK(posix_memalign(&p, 24, 10) == EINVAL, "posix_memalign(24)");
	CHECK(posix_memalign(&p, 4, 10) == EINVAL, "posix_memalign(4)");
	CHECK(aligned_alloc(24, 48) == NULL && errno == EINVAL,
	      "aligned_alloc(24)");
	q = memalign(24, 10);    /* glibc: rounded up to 32 */
	CHECK(q != NULL && (uintptr_t)q % 32 == 0, "memalign(24)");
	free(q);
	p = valloc(10);
	CHECK(p != NULL && (uintptr_t)p % 4096 == 0 && in_region(p, 10),
	      "valloc");
	free(p);
	p = pvalloc(10);
	CHECK(p != NULL && (uintptr_t)p % 4096 == 0 &&
	      malloc_usable_size(p) >= 4096, "pvalloc");
	free(p);
	free(NULL);
	b = stats();
	CHECK(b.region_allocs > a.region_allocs + 60, "region allocs %llu",
	      (unsigned long long)(b.region_allocs - a.region_allocs));
	CHECK(b.libc_allocs == a.libc_allocs, "libc allocs %llu",
	      (unsigned long long)(b.libc_allocs - a.libc_allocs));
	CHECK(b.region_bytes == a.region_bytes, "bytes live %llu -> %llu",
	      (unsigned long long)a.region_bytes,
	      (unsigned long long)b.region_bytes);
}

static void
test_realloc(void)
{
	static const size_t steps[] = { 1, 24, 100, 3000, 9000, 200000, 50,
		8, 70000, 16 };
	uint8_t *p = NULL, *l;
	size_t have = 0;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t n = steps[i], keep = have < n ? have : n;

		p = realloc(p, n);
		CHECK(p != NULL && in_region(p, n), "realloc to %zu", n);
		CHECK(same(p, keep, 7), "realloc to %zu kept %zu bytes", n,
		      keep);
		fill(p, n, 7);
		have = n;
	}
	CHECK(realloc(p, 0) == NULL, "realloc(p, 0)");

	/* libc's pointers: freed and realloc'd through the heap */
	l = __libc_malloc(100);
	CHECK(l != NULL && !in_region(l, 1), "__libc_malloc");
	fill(l, 100, 3);
	CHECK(malloc_usable_size(l) >= 100, "libc usable size");
	l = realloc(l, 5000);
	CHECK(l != NULL && !in_region(l, 1) && same(l, 100, 3),
	      "realloc of a libc pointer");
	free(l);
}

static void
test_hostile_frees(void)
{
	struct spin_heap_stats a = stats(), b;
	/* volatile: the compiler must not reason about these frees */
	uint8_t *volatile p = malloc(64), *volatile big = malloc(100000);
	uint8_t *q;

	free(p + 16);          /* inside an object */
	free(p + 3);           /* misaligned */
	free(p);
	free(p);               /* twice */
	free(big);
	free(big);
	CHECK(realloc(p, 10) == NULL, "realloc of a freed pointer");
	b = stats();
	CHECK(b.bad_frees == a.bad_frees + 5, "bad frees %llu",
	      (unsigned long long)(b.bad_frees - a.bad_frees));
	/* the allocator still works, and hands p out once */
	q = malloc(64);
	CHECK(q == p, "the freed object comes back (%p, %p)", (void *)q,
	      (void *)p);
	CHECK(malloc(64) != p, "and only once");
	free(q);
	/* a freed object overwritten (its header): the list is dropped */
	p = malloc(48);
	free(p);
	memset(p - 16, 0x5a, 16);
	q = malloc(48);
	CHECK(q != NULL && q != p, "corrupt free object not handed out");
	free(q);
}

static void
test_region_full(void)
{
	enum { N = 64 };
	void *blk[N];
	unsigned in = 0, out = 0, i;
	struct spin_heap_stats a = stats(), b;
	void *p;

	/* the region is 16 MiB: 1 MiB blocks run out */
	for (i = 0; i < N; i++) {
		blk[i] = malloc(1 << 20);
		CHECK(blk[i] != NULL, "malloc %u", i);
		memset(blk[i], (int)i, 1 << 20);
		if (in_region(blk[i], 1 << 20))
			in++;
		else
			out++;
	}
	CHECK(in >= 1 && in < 16 && out >= 1 && out == N - in, "in %u out %u", in, out);
	/* small requests still work (from spans, or libc) */
	p = malloc(100);
	CHECK(p != NULL, "small malloc with the region full");
	free(p);
	b = stats();
	CHECK(b.fallback_full > a.fallback_full, "fallback_full");
	CHECK(b.libc_allocs >= a.libc_allocs + out, "libc allocs");
	for (i = 0; i < N; i++) {
		uint8_t *q = blk[i];

		CHECK(q[0] == (uint8_t)i && q[(1 << 20) - 1] == (uint8_t)i,
		      "block %u", i);
		free(q);
	}
	/* once freed, the region serves again */
	p = malloc(1 << 20);
	CHECK(in_region(p, 1 << 20), "region after the frees");
	free(p);
}

#define NTHREAD 8
#define NSLOT 256
#define NOPS 20000

static void *
thread_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg, bad = 0;
	uint8_t *slot[NSLOT] = { 0 };
	size_t len[NSLOT] = { 0 };
	unsigned tag[NSLOT] = { 0 };

	for (unsigned op = 0; op < NOPS; op++) {
		unsigned s = (unsigned)rand_r(&seed) % NSLOT;
		unsigned r = (unsigned)rand_r(&seed);
		size_t n = r % 16 == 0 ? r % 70000 : r % 600;

		if (slot[s] != NULL) {
			if (!same(slot[s], len[s], tag[s]))
				bad++;
			if (r % 3 == 0) {
				slot[s] = realloc(slot[s], n + 1);
				if (slot[s] == NULL ||
				    !same(slot[s], len[s] < n + 1 ? len[s] :
					  n + 1, tag[s]))
					bad++;
				len[s] = n + 1;
				fill(slot[s], len[s], tag[s]);
				continue;
			}
			free(slot[s]);
			slot[s] = NULL;
			continue;
		}
		tag[s] = r;
		len[s] = n;
		slot[s] = r % 5 == 0 ? calloc(1, n) : malloc(n);
		if (slot[s] == NULL) {
			bad++;
			continue;
		}
		fill(slot[s], n, tag[s]);
	}
	for (unsigned s = 0; s < NSLOT; s++) {
		if (slot[s] != NULL && !same(slot[s], len[s], tag[s]))
			bad++;
		free(slot[s]);
	}
	return (void *)(uintptr_t)bad;
}

static void
test_threads(void)
{
	pthread_t t[NTHREAD];
	struct spin_heap_stats a = stats(), b;

	for (uintptr_t i = 0; i < NTHREAD; i++)
		CHECK(pthread_create(&t[i], NULL, thread_main,
				     (void *)(i + 1)) == 0, "thread");
	for (unsigned i = 0; i < NTHREAD; i++) {
		void *bad;

		pthread_join(t[i], &bad);
		CHECK(bad == NULL, "thread %u: %zu bad objects", i,
		      (size_t)(uintptr_t)bad);
	}
	b = stats();
	CHECK(b.bad_frees == a.bad_frees, "bad frees in the threads");
	CHECK(b.region_allocs > a.region_allocs, "threads used the region");
}

static void
test_fork(void)
{
	enum { N = 2000 };
	uint8_t *obj[N], *shared;
	int pfd[2], st;
	pid_t pid;
	char c;

	for (unsigned i = 0; i < N; i++) {
		obj[i] = malloc(8 + i % 300);
		fill(obj[i], 8 + i % 300, i);
	}
	for (unsigned i = 0; i < N; i += 2) {
		free(obj[i]);
		obj[i] = NULL;
	}
	shared = malloc(4096);
	fill(shared, 4096, 99);
	CHECK(pipe(pfd) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		unsigned bad = 0;
		uint8_t *mine[N];

		close(pfd[1]);
		/* wait until the parent has churned and rewritten */
		(void)!read(pfd[0], &c, 1);
		if (!same(shared, 4096, 99))
			bad |= 1;
		for (unsigned i = 1; i < N; i += 2)
			if (!same(obj[i], 8 + i % 300, i))
				bad |= 2;
		/* allocating in the child: no overlap with what it has */
		for (unsigned i = 0; i < N; i++) {
			mine[i] = malloc(8 + i % 300);
			if (mine[i] == NULL)
				bad |= 4;
			else
				fill(mine[i], 8 + i % 300, i + 7);
		}
		for (unsigned i = 1; i < N; i += 2)
			if (!same(obj[i], 8 + i % 300, i))
				bad |= 8;
		for (unsigned i = 0; i < N; i++)
			if (mine[i] != NULL && !same(mine[i], 8 + i % 300, i + 7))
				bad |= 16;
		_exit((int)bad);
	}
	CHECK(pid > 0, "fork");
	close(pfd[0]);
	/* the parent changes its heap at once: the child must not see it */
	fill(shared, 4096, 5);
	for (unsigned i = 0; i < N; i += 2)
		obj[i] = malloc(8 + i % 300);
	for (unsigned i = 0; i < N; i += 2)
		fill(obj[i], 8 + i % 300, 1000 + i);
	for (unsigned i = 1; i < N; i += 2) {
		free(obj[i]);
		obj[i] = malloc(8 + i % 300);
		fill(obj[i], 8 + i % 300, 2000 + i);
	}
	CHECK(write(pfd[1], "x", 1) == 1, "pipe write");
	close(pfd[1]);
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "child status 0x%x (1: saw the parent's write, 2/8: its "
	      "objects changed, 16: its new objects overlap)", st);
	CHECK(same(shared, 4096, 5), "the child wrote into the parent");
	for (unsigned i = 0; i < N; i++) {
		CHECK(same(obj[i], 8 + i % 300, i % 2 ? 2000 + i : 1000 + i),
		      "parent object %u", i);
		free(obj[i]);
	}
	free(shared);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "off") == 0) {
		void *p = malloc(100);

		CHECK(stats().enabled == 0, "SPINNIC_HEAP=0 still enabled");
		CHECK(p != NULL && !in_region(p, 1), "malloc in the region");
		free(p);
		CHECK(stats().region_allocs == 0, "region allocs");
	} else {
		test_entry_points();
		test_realloc();
		test_hostile_frees();
		test_threads();
		test_fork();
		test_region_full();
	}
	if (failures != 0) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
