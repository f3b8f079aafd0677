/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client's access-log consumer (lib/shim/shim_aa.c) against the fake
 * NIC: records written here into the ring as the NIC writes them
 * (doc/NOTES.md "Active Access" layout); spin_aa_log_poll over data
 * records, PADs, an uncommitted record (a hole: it stops there), max,
 * a callback that stops (record not consumed); then hostile rings — a
 * stopped log, prod beyond the ring, unknown kinds, records longer than
 * the ring, and 20000 random mutations of header and records: PTL_FAIL
 * or records inside the ring, never a crash or a read outside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_nic.h"
#include "shim_internal.h"
#include "spin_aa.h"

#define SIZE 16384u

struct fx {
	struct fake_nic f;
	ptl_handle_ni_t ni;
	spin_handle_aalog_t log;
	struct spinnic_aa_ring *ring;   /* the NIC's view */
	uint64_t prod;
	uint32_t seq;
};

static int
setup(void **state)
{
	struct spin_aa_log_desc d = { .size = SIZE };
	struct fx *x = calloc(1, sizeof(*x));

	if (x == NULL || fake_nic_start(&x->f, FAKE_ANSWER) != 0)
		return -1;
	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, NULL, &x->ni) != PTL_OK ||
	    spin_aa_log_create(x->ni, &d, &x->log) != PTL_OK)
		return -1;
	x->ring = (struct spinnic_aa_ring *)
		(x->f.region + x->f.last[SPINNIC_CTRL_AA_LOG_CREATE].u.aa.ring_off);
	x->ring->version = 1;
	x->ring->size = SIZE;
	*state = x;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *x = *state;
	int bad;

	while (shim_g.init_refs > 0)
		PtlFini();
	fake_nic_stop(&x->f);
	bad = x->f.bad_msgs;
	free(x);
	return bad == 0 ? 0 : -1;
}

static uint8_t *
slot(struct fx *x, uint64_t pos)
{
	return (uint8_t *)(x->ring + 1) + pos % SIZE;
}

/* Write a record as the NIC does; commit it (seq) unless @p hole. */
static void
rec_put(struct fx *x, uint16_t kind, uint32_t len, uint64_t addr,
	bool hole)
{
	struct spinnic_aa_rec h = { 0 };
	uint64_t need = 64 + (len + 63) / 64 * 64;

	if (SIZE - x->prod % SIZE < need) {
		struct spinnic_aa_rec p = { 0 };

		p.kind = SPINNIC_AA_PAD;
		p.len = (uint32_t)(SIZE - x->prod % SIZE - 64);
		p.seq = ++x->seq;
		memcpy(slot(x, x->prod), &p, sizeof(p));
		x->prod += SIZE - x->prod % SIZE;
	}
	h.kind = kind;
	h.len = len;
	h.addr = addr;
	memset(slot(x, x->prod) + 64, (int)(addr & 0xff), len);
	h.seq = hole ? 0 : ++x->seq;
	memcpy(slot(x, x->prod), &h, sizeof(h));
	x->prod += need;
	__atomic_store_n(&x->ring->prod, x->prod, __ATOMIC_RELEASE);
}

struct seen {
	unsigned n, stop_at;
	uint64_t addr[64];
	bool data_ok;
};

static int
on_rec(void *arg, const struct spin_aa_rec *r)
{
	struct seen *s = arg;
	uint32_t k;

	if (s->n == s->stop_at)
		return 1;
	for (k = 0; k < r->len; k++)
		if (((const uint8_t *)r->data)[k] !=
		    (uint8_t)((uintptr_t)r->addr & 0xff))
			s->data_ok = false;
	if (s->n < 64)
		s->addr[s->n] = (uint64_t)(uintptr_t)r->addr;
	s->n++;
	return 0;
}

static void
test_poll(void **state)
{
	struct fx *x = *state;
	struct seen s = { .stop_at = 1000, .data_ok = true };
	struct spin_aa_log_status st;
	unsigned n, i;

	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 8, &n),
			 PTL_EQ_EMPTY);
	/* three records, one with data */
	rec_put(x, SPINNIC_AA_PUT_META, 0, 0x1000, false);
	rec_put(x, SPINNIC_AA_PUT_DATA, 100, 0x2001, false);
	rec_put(x, SPINNIC_AA_GET_META, 0, 0x3000, false);
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 2, &n), PTL_OK);
	assert_int_equal(n, 2);
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 8, &n), PTL_OK);
	assert_int_equal(n, 1);
	assert_true(s.data_ok && s.addr[1] == 0x2001 && s.addr[2] == 0x3000);
	/* a callback that stops: not consumed, delivered again */
	rec_put(x, SPINNIC_AA_PUT_META, 0, 0x4000, false);
	s.stop_at = 3;
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 8, &n),
			 PTL_EQ_EMPTY);
	s.stop_at = 1000;
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 8, &n), PTL_OK);
	assert_int_equal(n, 1);
	assert_true(s.addr[3] == 0x4000);
	/* across the wrap: PADs skipped; then a hole stops the consumer */
	s.n = 0;
	for (i = 0; i < 40; i++) {
		rec_put(x, SPINNIC_AA_PUT_DATA, 1000, 0x5000 + i, false);
		/* consumed every 10 (1088 bytes each): the ring never
		 * overflows, and wraps four times */
		if (i % 10 == 9)
			assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s,
							  64, &n), PTL_OK);
	}
	rec_put(x, SPINNIC_AA_PUT_META, 0, 0x6000, true);
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 64, &n),
			 PTL_EQ_EMPTY);
	assert_int_equal(s.n, 40);
	assert_true(s.data_ok);
	assert_int_equal(spin_aa_log_status(x->log, &st), PTL_OK);
	assert_true(st.cons + 64 == st.prod && st.cons == x->ring->cons);
	/* the hole's record committed: delivered */
	((struct spinnic_aa_rec *)slot(x, x->prod - 64))->seq = ++x->seq;
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 64, &n), PTL_OK);
	assert_int_equal(n, 1);
}

static void
test_hostile(void **state)
{
	struct spin_aa_log_desc d = { .size = SIZE };
	struct fx *x = *state;
	struct seen s = { .stop_at = 1000, .data_ok = true };
	static uint8_t save[128 + SIZE];
	unsigned n, i, fails = 0, oks = 0;
	int rc;

	/* a template: three records, one across nothing, a PAD-free ring */
	rec_put(x, SPINNIC_AA_PUT_DATA, 64, 0x100, false);
	rec_put(x, SPINNIC_AA_GET_META, 0, 0x200, false);
	rec_put(x, SPINNIC_AA_PUT_DATA, 200, 0x300, false);
	memcpy(save, x->ring, sizeof(save));
	assert_int_equal(spin_aa_log_free(x->log), PTL_OK);
	/* 5000 fresh logs, each ring a mutation of the template (header
	 * and records): never a crash (run under ASan for reads outside
	 * the ring), only records, nothing, or PTL_FAIL */
	srand(17);
	for (i = 0; i < 5000; i++) {
		uint8_t *b;
		unsigned k, nmut = 1 + (unsigned)rand() % 8;

		assert_int_equal(spin_aa_log_create(x->ni, &d, &x->log),
				 PTL_OK);
		x->ring = (struct spinnic_aa_ring *)(x->f.region +
			x->f.last[SPINNIC_CTRL_AA_LOG_CREATE].u.aa.ring_off);
		b = (uint8_t *)x->ring;
		memcpy(b, save, sizeof(save));
		for (k = 0; k < nmut; k++) {
			unsigned at = (unsigned)rand() % 16 == 0 ?
				(unsigned)rand() % 64 :
				128 + (unsigned)rand() % 512;

			b[at] = (uint8_t)rand();
		}
		if (i % 4 == 0)
			x->ring->prod = (uint64_t)rand() << (rand() % 24);
		do {
			rc = spin_aa_log_poll(x->log, on_rec, &s, 2, &n);
		} while (rc == PTL_OK);
		assert_true(rc == PTL_EQ_EMPTY || rc == PTL_FAIL);
		fails += rc == PTL_FAIL;
		oks += rc == PTL_EQ_EMPTY;
		if (rc == PTL_FAIL) /* a stopped consumer stays stopped */
			assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s,
							  2, &n), PTL_FAIL);
		assert_int_equal(spin_aa_log_free(x->log), PTL_OK);
	}
	assert_true(fails > 0 && oks > 0);
	assert_int_equal(spin_aa_log_create(x->ni, &d, &x->log), PTL_OK);
}

static void
test_err(void **state)
{
	struct fx *x = *state;
	struct seen s = { .stop_at = 1000, .data_ok = true };
	unsigned n;

	x->ring->err = 1; /* the NIC stopped the log */
	assert_int_equal(spin_aa_log_poll(x->log, on_rec, &s, 64, &n),
			 PTL_FAIL);
	assert_int_equal(spin_aa_log_wait(x->log, 10), PTL_FAIL);
	assert_int_equal(spin_aa_log_poll(x->log, NULL, &s, 64, &n),
			 PTL_ARG_INVALID);
	assert_int_equal(spin_aa_log_poll(SPIN_AA_LOG_NONE, on_rec, &s, 64,
					  &n), PTL_ARG_INVALID);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
