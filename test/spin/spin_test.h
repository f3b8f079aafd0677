/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the lib/spin tests: EAL start, a fake host (a buffer with
 * guard bytes around the window, reached through the host ops), packets
 * as heap copies that must be released exactly once.
 */
#ifndef SPIN_TEST_H
#define SPIN_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_common.h>
#include <rte_eal.h>

#include "spin_rt.h"

#define TEST_GUARD 64
#define TEST_ADDR 0x7f0000100000ull /* client address of the window */

struct test_host {
	uint8_t *mem;        /* guard + window + guard */
	uint64_t len;        /* window bytes */
	int use_direct;      /* give the direct fast path */
	uint64_t writes, reads;
};

struct test_pkt {
	uint32_t magic;
	uint32_t released;
	uint8_t data[];
};
#define TEST_PKT_MAGIC 0x504b5430u

static uint64_t __attribute__((unused)) test_pkts_live;
static uint64_t __attribute__((unused)) test_done_calls;

static inline uint8_t *
test_host_win(struct test_host *h)
{
	return h->mem + TEST_GUARD;
}

static inline void
test_host_init(struct test_host *h, uint64_t len, int use_direct)
{
	memset(h, 0, sizeof(*h));
	h->len = len;
	h->use_direct = use_direct;
	h->mem = calloc(1, len + 2 * TEST_GUARD);
	assert_non_null(h->mem);
	memset(h->mem, 0xee, TEST_GUARD);
	memset(h->mem + TEST_GUARD + len, 0xee, TEST_GUARD);
}

static inline void
test_host_check_guards(struct test_host *h)
{
	uint64_t i;

	for (i = 0; i < TEST_GUARD; i++) {
		assert_int_equal(h->mem[i], 0xee);
		assert_int_equal(h->mem[TEST_GUARD + h->len + i], 0xee);
	}
}

static inline void
test_host_fini(struct test_host *h)
{
	test_host_check_guards(h);
	free(h->mem);
}

/* the app's translation: the runtime already checked the ME window */
static inline uint8_t *
test_host_xlate(struct test_host *h, uint64_t addr, size_t len)
{
	assert_true(addr >= TEST_ADDR);
	assert_true(addr - TEST_ADDR <= h->len);
	assert_true(len <= h->len - (addr - TEST_ADDR));
	return test_host_win(h) + (addr - TEST_ADDR);
}

static inline void *
test_direct(void *host, uint64_t addr, size_t len)
{
	struct test_host *h = host;

	return h->use_direct ? test_host_xlate(h, addr, len) : NULL;
}

static inline int
test_dma_write(void *host, uint64_t addr, const void *src, size_t len)
{
	struct test_host *h = host;

	memcpy(test_host_xlate(h, addr, len), src, len);
	__atomic_fetch_add(&h->writes, 1, __ATOMIC_RELAXED);
	return 0;
}

static inline int
test_dma_read(void *host, uint64_t addr, void *dst, size_t len)
{
	struct test_host *h = host;

	memcpy(dst, test_host_xlate(h, addr, len), len);
	__atomic_fetch_add(&h->reads, 1, __ATOMIC_RELAXED);
	return 0;
}

static inline void
test_pkt_release(void *cookie)
{
	struct test_pkt *p = cookie;

	assert_int_equal(p->magic, TEST_PKT_MAGIC);
	assert_int_equal(__atomic_exchange_n(&p->released, 1,
					     __ATOMIC_ACQ_REL), 0);
	__atomic_fetch_sub(&test_pkts_live, 1, __ATOMIC_RELAXED);
	p->magic = 0;
	free(p);
}

/* a packet copy of @p len bytes of @p src */
static inline struct test_pkt *
test_pkt_new(const void *src, uint32_t len)
{
	struct test_pkt *p = malloc(sizeof(*p) + len + 1);

	assert_non_null(p);
	p->magic = TEST_PKT_MAGIC;
	p->released = 0;
	if (len != 0)
		memcpy(p->data, src, len);
	__atomic_fetch_add(&test_pkts_live, 1, __ATOMIC_RELAXED);
	return p;
}

/* deliver packet [off, off+len) of @p msgdata; retries while no HER */
static inline void
test_deliver(struct spin_rt *rt, struct spin_msg *m, const uint8_t *msgdata,
	     uint64_t off, uint32_t len)
{
	struct test_pkt *p = test_pkt_new(msgdata + off, len);
	int rc;

	while ((rc = spin_msg_packet(m, p->data, len, off, p)) == -ENOBUFS)
		spin_hpu_poll(rt, 0, 16);
	assert_int_equal(rc, 0);
}

static inline void
test_shuffle(uint32_t *a, uint32_t n, unsigned *seed)
{
	uint32_t i;

	for (i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(rand_r(seed) % i), t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

static inline void
test_eal_init(const char *prog)
{
	char *argv[] = {
		(char *)(uintptr_t)prog, "--no-huge", "--no-shconf", "--no-pci",
		"-l", "0", "-m", "128", "--log-level=4", "--no-telemetry",
		NULL,
	};

	if (rte_eal_init(10, argv) < 0) {
		fprintf(stderr, "EAL init failed: skipping\n");
		exit(77);
	}
}

#endif
