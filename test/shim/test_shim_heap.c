/* SPDX-License-Identifier: BSD-3-Clause */
/* The host-region allocator: spin_host_alloc/spin_host_free. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shim_internal.h"

static void
test_alloc_basic(void **state)
{
	uint8_t *a, *b, *c;

	(void)state;
	errno = 0;
	assert_null(spin_host_alloc(0));
	assert_int_equal(errno, EINVAL);

	a = spin_host_alloc(1);
	b = spin_host_alloc(100);
	c = spin_host_alloc(4096);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal((uintptr_t)a % 64, 0);
	assert_int_equal((uintptr_t)b % 64, 0);
	assert_int_equal((uintptr_t)c % 64, 0);
	/* disjoint and writable */
	memset(a, 0xa1, 1);
	memset(b, 0xb2, 100);
	memset(c, 0xc3, 4096);
	assert_int_equal(a[0], 0xa1);
	assert_int_equal(b[99], 0xb2);
	assert_int_equal(c[0], 0xc3);
	assert_true(b >= a + 1 || b + 100 <= a);
	assert_true(spin_host_contains(c, 4096));
	assert_false(spin_host_contains(&errno, 4));
	/* the region header describes the heap */
	assert_int_equal(shim_g.region.hdr->magic, SPINNIC_REGION_MAGIC);
	assert_int_equal(shim_g.region.hdr->size, 4u << 20);
	assert_ptr_equal(shim_g.region.base + shim_g.region.hdr->heap_off,
			 shim_g.region.heap);
	assert_true(shim_g.region.hdr->heap_off + shim_g.region.hdr->heap_size <=
		    shim_g.region.hdr->size);
	assert_true(shim_g.region.hdr->cmd_off + sizeof(struct spinnic_cmd_ring) +
		    (uint64_t)shim_g.region.hdr->cmd_entries *
		    sizeof(struct spinnic_cmd) <= shim_g.region.hdr->heap_off);
	assert_int_equal(shim_heap_check(), 0);
	spin_host_free(b);
	spin_host_free(a);
	spin_host_free(c);
	assert_int_equal(shim_heap_used(), 0);
	assert_int_equal(shim_heap_check(), 0);
}

static void
test_coalesce(void **state)
{
	uint64_t whole = shim_g.region.heap_size - 64;
	void *p[8], *big;

	(void)state;
	/* fragment the heap, free in an order that needs both-side merges */
	for (int i = 0; i < 8; i++) {
		p[i] = spin_host_alloc(whole / 10);
		assert_non_null(p[i]);
	}
	assert_null(spin_host_alloc(whole / 2));
	spin_host_free(p[1]);
	spin_host_free(p[3]);
	spin_host_free(p[2]); /* merges with both neighbours */
	assert_int_equal(shim_heap_check(), 0);
	big = spin_host_alloc(3 * (whole / 10));
	assert_non_null(big);
	assert_ptr_equal(big, p[1]);
	spin_host_free(big);
	for (int i = 0; i < 8; i++) {
		if (i < 1 || i > 3)
			spin_host_free(p[i]);
	}
	assert_int_equal(shim_heap_used(), 0);
	assert_int_equal(shim_heap_check(), 0);
	/* everything merged back: the whole arena is one block again */
	big = spin_host_alloc(whole);
	assert_non_null(big);
	spin_host_free(big);
	assert_int_equal(shim_heap_check(), 0);
}

static void
test_exhaustion(void **state)
{
	void **ps = calloc(100000, sizeof(*ps));
	int n = 0;

	(void)state;
	assert_non_null(ps);
	errno = 0;
	assert_null(spin_host_alloc(shim_g.region.heap_size));
	assert_int_equal(errno, ENOMEM);
	while (n < 100000 && (ps[n] = spin_host_alloc(1000)) != NULL)
		n++;
	assert_true(n > 100 && n < 100000);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(shim_heap_check(), 0);
	/* free every other one: 1000-byte holes, no 3000-byte hole */
	for (int i = 0; i < n; i += 2)
		spin_host_free(ps[i]);
	assert_null(spin_host_alloc(3000));
	assert_non_null(ps[0] = spin_host_alloc(1000));
	spin_host_free(ps[0]);
	for (int i = 1; i < n; i += 2)
		spin_host_free(ps[i]);
	assert_int_equal(shim_heap_used(), 0);
	assert_int_equal(shim_heap_check(), 0);
	free(ps);
}

static void
test_bad_free(void **state)
{
	char local[128];
	uint8_t *p = malloc(64);
	uint8_t *q = spin_host_alloc(256);

	(void)state;
	assert_non_null(q);
	spin_host_free(NULL);
	spin_host_free(p);      /* not in the region: reported, ignored */
	spin_host_free(local);
	spin_host_free(q + 64); /* inside an allocation */
	spin_host_free(q + 1);  /* misaligned */
	assert_int_equal(shim_heap_check(), 0);
	spin_host_free(q);
	spin_host_free(q);      /* twice */
	assert_int_equal(shim_heap_check(), 0);
	assert_int_equal(shim_heap_used(), 0);
	free(p);
}

#define THREADS 3
#define ROUNDS 3000
#define SLOTS 32

static void *
churn(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	uint8_t *slot[SLOTS] = { 0 };
	size_t len[SLOTS] = { 0 };
	long bad = 0;

	for (int r = 0; r < ROUNDS; r++) {
		int i = rand_r(&seed) % SLOTS;

		if (slot[i] != NULL) {
			uint8_t tag = (uint8_t)(i + 1 + (uintptr_t)arg * 37);

			for (size_t k = 0; k < len[i]; k++)
				bad += slot[i][k] != tag;
			spin_host_free(slot[i]);
			slot[i] = NULL;
		} else {
			len[i] = 1 + (size_t)(rand_r(&seed) % 5000);
			slot[i] = spin_host_alloc(len[i]);
			if (slot[i] != NULL)
				memset(slot[i], (uint8_t)(i + 1 +
				       (uintptr_t)arg * 37), len[i]);
		}
	}
	for (int i = 0; i < SLOTS; i++)
		spin_host_free(slot[i]);
	return (void *)bad;
}

static void
test_threads(void **state)
{
	pthread_t t[THREADS];

	(void)state;
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn,
						(void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *bad;

		pthread_join(t[i], &bad);
		assert_int_equal((long)bad, 0);
	}
	assert_int_equal(shim_heap_used(), 0);
	assert_int_equal(shim_heap_check(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_basic),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_bad_free),
		cmocka_unit_test(test_threads),
	};

	/* small region, ordinary pages: fast and deterministic */
	setenv("SPINNIC_REGION_SIZE", "3M", 1);
	setenv("SPINNIC_HUGEPAGES", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
