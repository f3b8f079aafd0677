/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the inbound message table (app/spinnic/msgtab.c): lookup,
 * bounded capacity (live entries never evicted, tombstones recycled
 * oldest first), touch order for timeouts, removal, and a random workload
 * checked against a simple model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"

struct ent {
	struct spinnic_msg_link link;
	uint64_t payload;
};

static struct spinnic_msg_key
key(uint64_t id)
{
	struct spinnic_msg_key k = { (uint32_t)(id % 3), (uint32_t)(id % 7), id };

	return k;
}

static void
test_create_bad(void **state)
{
	(void)state;
	assert_null(spinnic_msgtab_create(0, sizeof(struct ent)));
	assert_null(spinnic_msgtab_create(4, 8));
}

static void
test_insert_lookup(void **state)
{
	struct spinnic_msgtab *t = spinnic_msgtab_create(16, sizeof(struct ent));
	struct spinnic_msg_key k1 = key(1), k2 = key(2);
	struct ent *e;

	(void)state;
	assert_non_null(t);
	assert_null(spinnic_msgtab_lookup(t, &k1));
	e = spinnic_msgtab_insert(t, &k1, 10);
	assert_non_null(e);
	e->payload = 42;
	assert_int_equal(e->link.state, SPINNIC_MSG_LIVE);
	assert_ptr_equal(spinnic_msgtab_lookup(t, &k1), e);
	assert_null(spinnic_msgtab_lookup(t, &k2));
	/* same id from another source is another message */
	k2.id = 1;
	assert_null(spinnic_msgtab_lookup(t, &k2));
	spinnic_msgtab_finish(t, e);
	e = spinnic_msgtab_lookup(t, &k1);
	assert_non_null(e);
	assert_int_equal(e->link.state, SPINNIC_MSG_DONE);
	assert_int_equal(e->payload, 42);
	spinnic_msgtab_remove(t, e);
	assert_null(spinnic_msgtab_lookup(t, &k1));
	spinnic_msgtab_free(t);
}

static void
test_capacity(void **state)
{
	struct spinnic_msgtab *t = spinnic_msgtab_create(4, sizeof(struct ent));
	struct spinnic_msgtab_stats st;
	struct spinnic_msg_key k;
	struct ent *e[4];
	unsigned i;

	(void)state;
	for (i = 0; i < 4; i++) {
		k = key(i);
		e[i] = spinnic_msgtab_insert(t, &k, i);
		assert_non_null(e[i]);
	}
	/* all live: the fifth is refused, nothing evicted */
	k = key(4);
	assert_null(spinnic_msgtab_insert(t, &k, 4));
	for (i = 0; i < 4; i++) {
		k = key(i);
		assert_ptr_equal(spinnic_msgtab_lookup(t, &k), e[i]);
	}
	/* finish 2 then 0: tombstones recycled oldest finished first */
	spinnic_msgtab_finish(t, e[2]);
	spinnic_msgtab_finish(t, e[0]);
	k = key(5);
	assert_non_null(spinnic_msgtab_insert(t, &k, 5));
	k = key(2);
	assert_null(spinnic_msgtab_lookup(t, &k));
	k = key(0);
	assert_non_null(spinnic_msgtab_lookup(t, &k));
	k = key(6);
	assert_non_null(spinnic_msgtab_insert(t, &k, 6));
	k = key(0);
	assert_null(spinnic_msgtab_lookup(t, &k));
	spinnic_msgtab_stats(t, &st);
	assert_int_equal(st.full, 1);
	assert_int_equal(st.recycled, 2);
	assert_int_equal(st.live, 4);
	assert_int_equal(st.done, 0);
	spinnic_msgtab_free(t);
}

struct visit {
	uint64_t ids[8];
	unsigned n;
	struct spinnic_msgtab *t;
};

static void
visit_fn(void *p, void *arg)
{
	struct ent *e = p;
	struct visit *v = arg;

	v->ids[v->n++] = e->link.key.id;
	/* the callback may finish the entry it is given */
	spinnic_msgtab_finish(v->t, e);
}

static void
test_touch_order(void **state)
{
	struct spinnic_msgtab *t = spinnic_msgtab_create(8, sizeof(struct ent));
	struct visit v = { .t = t };
	struct spinnic_msg_key k;
	struct ent *e[4];
	unsigned i;

	(void)state;
	for (i = 0; i < 4; i++) {
		k = key(i);
		e[i] = spinnic_msgtab_insert(t, &k, 100 + i);
	}
	/* message 0 gets a packet late: it is the youngest now */
	spinnic_msgtab_touch(t, e[0], 200);
	assert_int_equal(spinnic_msgtab_foreach_live(t, 150, visit_fn, &v), 3);
	assert_int_equal(v.ids[0], 1);
	assert_int_equal(v.ids[1], 2);
	assert_int_equal(v.ids[2], 3);
	v.n = 0;
	assert_int_equal(spinnic_msgtab_foreach_live(t, UINT64_MAX, visit_fn,
						     &v), 1);
	assert_int_equal(v.ids[0], 0);
	spinnic_msgtab_free(t);
}

/* Random inserts, finishes and removes against a model. */
static void
test_random(void **state)
{
	enum { CAP = 64, IDS = 400 };
	struct spinnic_msgtab *t = spinnic_msgtab_create(CAP, sizeof(struct ent));
	unsigned char model[IDS]; /* 0 absent, 1 live, 2 done */
	unsigned live = 0, i, step;

	(void)state;
	memset(model, 0, sizeof(model));
	srand(7);
	for (step = 0; step < 20000; step++) {
		unsigned id = (unsigned)rand() % IDS;
		struct spinnic_msg_key k = key(id);
		struct ent *e = spinnic_msgtab_lookup(t, &k);

		if (model[id] == 1) {
			assert_non_null(e);
			assert_int_equal(e->link.state, SPINNIC_MSG_LIVE);
			assert_int_equal(e->payload, id * 3);
		}
		if (model[id] == 0)
			assert_null(e);
		if (e == NULL) {
			e = spinnic_msgtab_insert(t, &k, step);
			if (live == CAP) {
				assert_null(e);
				continue;
			}
			assert_non_null(e);
			e->payload = id * 3;
			/* a recycled tombstone vanished from the model */
			for (i = 0; i < IDS; i++) {
				struct spinnic_msg_key ki = key(i);

				if (model[i] == 2 &&
				    spinnic_msgtab_lookup(t, &ki) == NULL)
					model[i] = 0;
			}
			model[id] = 1;
			live++;
		} else if (e->link.state == SPINNIC_MSG_LIVE) {
			if (rand() % 4 == 0) {
				spinnic_msgtab_remove(t, e);
				model[id] = 0;
			} else {
				spinnic_msgtab_finish(t, e);
				model[id] = 2;
			}
			live--;
		} else {
			spinnic_msgtab_remove(t, e);
			model[id] = 0;
		}
	}
	spinnic_msgtab_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_bad),
		cmocka_unit_test(test_insert_lookup),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_touch_order),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
