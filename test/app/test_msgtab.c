/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the inbound message table (app/spinnic/msgtab.c): lookup,
 * bounded capacity (live entries never evicted, tombstones recycled
 * oldest first), touch order for timeouts, removal, and a random workload
 * checked against a simple model. Then what a header flood may take (the
 * engine's limits, engine.h): packet bitmaps that grow with what arrived,
 * within a byte budget, and the shares of unsequenced sources and of one
 * source nid.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h" /* ENG_MSGS*: the engine's limits */
#include "msgtab.h"

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
	e = spinnic_msgtab_insert(t, &k1, 1, 0, 10);
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
		e[i] = spinnic_msgtab_insert(t, &k, 1, 0, i);
		assert_non_null(e[i]);
	}
	/* all live: the fifth is refused, nothing evicted */
	k = key(4);
	assert_null(spinnic_msgtab_insert(t, &k, 1, 0, 4));
	for (i = 0; i < 4; i++) {
		k = key(i);
		assert_ptr_equal(spinnic_msgtab_lookup(t, &k), e[i]);
	}
	/* finish 2 then 0: tombstones recycled oldest finished first */
	spinnic_msgtab_finish(t, e[2]);
	spinnic_msgtab_finish(t, e[0]);
	k = key(5);
	assert_non_null(spinnic_msgtab_insert(t, &k, 1, 0, 5));
	k = key(2);
	assert_null(spinnic_msgtab_lookup(t, &k));
	k = key(0);
	assert_non_null(spinnic_msgtab_lookup(t, &k));
	k = key(6);
	assert_non_null(spinnic_msgtab_insert(t, &k, 1, 0, 6));
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
		e[i] = spinnic_msgtab_insert(t, &k, 1, 0, 100 + i);
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
			e = spinnic_msgtab_insert(t, &k, 1, 0, step);
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

/* ---- header floods ---------------------------------------------------------- */

#define PAYLOAD 2048u                           /* spinnic's default */
#define GIB_PKTS ((1u << 30) / PAYLOAD)         /* packets of 1 GiB */

/* A table like the engine's eng->msgs (outbound.c spinnic_engine_init). */
static struct spinnic_msgtab *
engine_table(void)
{
	struct spinnic_msgtab_limits l = {
		.unseq_live = ENG_MSGS_UNSEQ_MAX,
		.nid_live = ENG_MSGS_NID_MAX,
		.seen_bytes = ENG_MSGS_SEEN_BYTES,
		.unseq_seen_bytes = ENG_MSGS_SEEN_BYTES_UNSEQ,
	};
	struct spinnic_msgtab *t = spinnic_msgtab_create(ENG_MSGS,
							 sizeof(struct ent));

	assert_non_null(t);
	assert_int_equal(spinnic_msgtab_set_limits(t, &l), 0);
	return t;
}

/* What inbound.c does with a packet of index i: reserve, test, set.
 * @return 1 new, 0 duplicate, -ENOMEM not trackable */
static int
pkt_arrive(struct spinnic_msgtab *t, struct ent *e, uint32_t i)
{
	int rc = spinnic_msgtab_seen_reserve(t, e, i);

	if (rc != 0)
		return rc;
	if (spinnic_seen_test(&e->link.seen, i))
		return 0;
	spinnic_seen_set(&e->link.seen, i);
	return 1;
}

static uint64_t
heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static uint64_t
seen_bytes(struct spinnic_msgtab *t)
{
	struct spinnic_msgtab_stats st;

	spinnic_msgtab_stats(t, &st);
	return st.seen_bytes;
}

/*
 * The finding: 9,000 header-only messages that each claim 1 GiB (one
 * packet of 2 KiB each: a seen bitmap of 64 KiB per message was allocated
 * up front, 370 MB in all). Now the headers cost nothing past the entry,
 * sequenced or not, and even a packet at the far end of each message
 * grows the bitmaps only up to the table's budget.
 */
static void
test_flood_memory(void **state)
{
	struct spinnic_msgtab *t;
	struct spinnic_msgtab_stats st;
	uint64_t heap0, admitted = 0, far = 0, id;

	(void)state;
	t = engine_table();
	heap0 = heap_used();
	for (id = 0; id < 9000; id++) {
		/* sequenced sources: 8 nids, so the nid share is no limit */
		struct spinnic_msg_key k = { (uint32_t)(id % 8), 1, id };
		struct ent *e = spinnic_msgtab_insert(t, &k, GIB_PKTS, 0, id);

		if (e == NULL)
			continue;
		admitted++;
		assert_int_equal(pkt_arrive(t, e, 0), 1);
		assert_int_equal(pkt_arrive(t, e, 0), 0);
	}
	assert_int_equal(admitted, ENG_MSGS);
	/* headers only: no bitmap memory at all */
	assert_int_equal(seen_bytes(t), 0);
	assert_true(heap_used() - heap0 < (1u << 20));

	/* now packets far into each (a chunk each): bounded by the budget */
	for (id = 0; id < ENG_MSGS; id++) {
		struct spinnic_msg_key k = { (uint32_t)(id % 8), 1, id };
		struct ent *e = spinnic_msgtab_lookup(t, &k);
		uint32_t j;

		assert_non_null(e);
		for (j = 1; j <= 3; j++) {
			uint32_t i = GIB_PKTS / 3 * j - 1;
			int rc = pkt_arrive(t, e, i);

			assert_true(rc == 1 || rc == -ENOMEM);
			far += rc == 1;
			/* refused: not marked, so never a false completion */
			if (rc != 1)
				assert_false(spinnic_seen_test(&e->link.seen,
							       i));
		}
	}
	spinnic_msgtab_stats(t, &st);
	assert_true(far > 0 && far < 3 * ENG_MSGS);
	assert_true(st.seen_bytes <= ENG_MSGS_SEEN_BYTES);
	assert_true(st.seen_bytes > ENG_MSGS_SEEN_BYTES - 2048);
	assert_int_equal(st.seen_refused, 3 * ENG_MSGS - far);
	assert_true(heap_used() - heap0 < 2 * ENG_MSGS_SEEN_BYTES);

	/* finishing the messages gives every byte back */
	for (id = 0; id < ENG_MSGS; id++) {
		struct spinnic_msg_key k = { (uint32_t)(id % 8), 1, id };

		spinnic_msgtab_finish(t, spinnic_msgtab_lookup(t, &k));
	}
	assert_int_equal(seen_bytes(t), 0);
	spinnic_msgtab_free(t);
}

/* Unsequenced messages reach only their part of the bitmap budget. */
static void
test_flood_memory_unseq(void **state)
{
	struct spinnic_msgtab *t = engine_table();
	struct spinnic_msgtab_stats st;
	struct spinnic_msg_key k;
	struct ent *e;
	uint32_t id, i;

	(void)state;
	for (id = 0; id < ENG_MSGS_UNSEQ_MAX; id++) {
		k = (struct spinnic_msg_key){ 100 + id, 1, id };
		e = spinnic_msgtab_insert(t, &k, GIB_PKTS,
					  SPINNIC_MSGTAB_F_UNSEQ, id);
		assert_non_null(e);
		/* packets spread over the message: a chunk each */
		for (i = 1; i <= 8; i++)
			(void)pkt_arrive(t, e, GIB_PKTS / 8 * i - 1);
	}
	spinnic_msgtab_stats(t, &st);
	assert_true(st.seen_bytes <= ENG_MSGS_SEEN_BYTES_UNSEQ);
	assert_true(st.seen_refused > 0);
	/* a sequenced message still grows its bitmap */
	k = (struct spinnic_msg_key){ 1, 1, 1u << 20 };
	e = spinnic_msgtab_insert(t, &k, GIB_PKTS, 0, 0);
	assert_non_null(e);
	for (i = 0; i < GIB_PKTS; i += SPINNIC_SEEN_CHUNK)
		assert_int_equal(pkt_arrive(t, e, i), 1);
	spinnic_msgtab_free(t);
}

/*
 * An unsequenced flood (forged source nids, as a blind attacker on the LAN
 * sends them) fills its share, and only that: a sequenced source's new
 * message still gets an entry. Then one sequenced nid floods: held at its
 * share, others still get entries.
 */
static void
test_flood_share(void **state)
{
	struct spinnic_msgtab *t = engine_table();
	struct spinnic_msgtab_stats st;
	struct spinnic_msg_key k;
	uint32_t id, admitted = 0;

	(void)state;
	for (id = 0; id < 9000; id++) {
		k = (struct spinnic_msg_key){ id * 7919u, id, id };
		if (spinnic_msgtab_insert(t, &k, GIB_PKTS,
					  SPINNIC_MSGTAB_F_UNSEQ, id) != NULL)
			admitted++;
		else
			assert_int_equal(errno, EDQUOT);
	}
	assert_int_equal(admitted, ENG_MSGS_UNSEQ_MAX);
	spinnic_msgtab_stats(t, &st);
	assert_int_equal(st.share, 9000 - ENG_MSGS_UNSEQ_MAX);
	assert_int_equal(st.unseq_live, ENG_MSGS_UNSEQ_MAX);
	assert_int_equal(st.full, 0);

	/* a sequenced peer: its new message is admitted */
	k = (struct spinnic_msg_key){ 1, 1, 1u << 20 };
	assert_non_null(spinnic_msgtab_insert(t, &k, 1, 0, 0));

	/* sequenced nid 2 floods: held at ENG_MSGS_NID_MAX */
	admitted = 0;
	for (id = 0; id < ENG_MSGS; id++) {
		k = (struct spinnic_msg_key){ 2, id % 5, 2u << 20 | id };
		if (spinnic_msgtab_insert(t, &k, 1, 0, 0) != NULL)
			admitted++;
		else
			assert_int_equal(errno, EDQUOT);
	}
	assert_int_equal(admitted, ENG_MSGS_NID_MAX);
	k = (struct spinnic_msg_key){ 3, 1, 3u << 20 };
	assert_non_null(spinnic_msgtab_insert(t, &k, 1, 0, 0));

	/* a finished message gives its share back */
	k = (struct spinnic_msg_key){ 2, 0, 2u << 20 };
	spinnic_msgtab_finish(t, spinnic_msgtab_lookup(t, &k));
	k = (struct spinnic_msg_key){ 2, 0, 4u << 20 };
	assert_non_null(spinnic_msgtab_insert(t, &k, 1, 0, 0));
	assert_null(spinnic_msgtab_insert(t, &(struct spinnic_msg_key){
		2, 0, 5u << 20 }, 1, 0, 0));
	/* the table itself full: ENOSPC, not a share */
	for (id = 0; id < ENG_MSGS; id++) {
		k = (struct spinnic_msg_key){ 10 + id % 8, 1, 6u << 20 | id };
		(void)spinnic_msgtab_insert(t, &k, 1, 0, 0);
	}
	spinnic_msgtab_stats(t, &st);
	assert_int_equal(st.live, ENG_MSGS);
	k = (struct spinnic_msg_key){ 20, 1, 7u << 20 };
	assert_null(spinnic_msgtab_insert(t, &k, 1, 0, 0));
	assert_int_equal(errno, ENOSPC);
	spinnic_msgtab_free(t);
}

/* Bits across the inline part and chunks, in random order, and ranges. */
static void
test_seen_bits(void **state)
{
	enum { N = SPINNIC_SEEN_INLINE + 3 * SPINNIC_SEEN_CHUNK + 5 };
	struct spinnic_msgtab *t = spinnic_msgtab_create(4, sizeof(struct ent));
	struct spinnic_msg_key k = key(1);
	static uint32_t order[N];
	struct ent *e;
	uint32_t i;

	(void)state;
	e = spinnic_msgtab_insert(t, &k, N, 0, 0);
	assert_non_null(e);
	assert_int_equal(spinnic_msgtab_seen_reserve(t, e, N), -ERANGE);
	for (i = 0; i < N; i++)
		order[i] = i;
	srand(3);
	for (i = N - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % (i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (i = 0; i < N; i++) {
		assert_int_equal(pkt_arrive(t, e, order[i]), 1);
		assert_true(spinnic_seen_test(&e->link.seen, order[i]));
		if (i % 97 == 0)
			assert_int_equal(pkt_arrive(t, e, order[i / 2]), 0);
	}
	/* 4 chunks and their 4 slots */
	assert_int_equal(seen_bytes(t), 4 * SPINNIC_SEEN_CHUNK / 8 + 4 * 8);
	spinnic_msgtab_remove(t, e);
	assert_int_equal(seen_bytes(t), 0);
	/* a short message past the inline part: -ERANGE, no memory */
	e = spinnic_msgtab_insert(t, &k, 3, 0, 0);
	assert_int_equal(spinnic_msgtab_seen_reserve(t, e, 3), -ERANGE);
	assert_int_equal(spinnic_msgtab_seen_reserve(t, e, 600), -ERANGE);
	assert_int_equal(seen_bytes(t), 0);
	/* freed with live entries holding chunks: no leak (ASan, valgrind) */
	e = spinnic_msgtab_insert(t, &(struct spinnic_msg_key){ 9, 9, 9 },
				  GIB_PKTS, 0, 0);
	assert_int_equal(pkt_arrive(t, e, GIB_PKTS - 1), 1);
	spinnic_msgtab_free(t);
}

/* Shares under random inserts and releases, against a model. */
static void
test_share_random(void **state)
{
	enum { CAP = 64, NIDS = 9, IDS = 300 };
	struct spinnic_msgtab_limits l = { .unseq_live = 8, .nid_live = 12 };
	struct spinnic_msgtab *t = spinnic_msgtab_create(CAP, sizeof(struct ent));
	unsigned char live[IDS];
	unsigned nid_live[NIDS], unseq_live = 0, n = 0, step;

	(void)state;
	assert_int_equal(spinnic_msgtab_set_limits(t, &l), 0);
	memset(live, 0, sizeof(live));
	memset(nid_live, 0, sizeof(nid_live));
	srand(11);
	for (step = 0; step < 30000; step++) {
		unsigned id = (unsigned)rand() % IDS, nid = id % NIDS;
		/* nids far apart and colliding in the nid hash alike */
		struct spinnic_msg_key k = { nid * 0x10001u, 0, id };
		bool unseq = id % 3 == 0;
		struct ent *e = spinnic_msgtab_lookup(t, &k);

		if (live[id]) {
			assert_non_null(e);
			if (rand() % 2)
				spinnic_msgtab_finish(t, e);
			else
				spinnic_msgtab_remove(t, e);
			live[id] = 0;
			n--;
			nid_live[nid]--;
			unseq_live -= unseq;
			continue;
		}
		if (e != NULL)
			spinnic_msgtab_remove(t, e);
		e = spinnic_msgtab_insert(t, &k, 1,
					  unseq ? SPINNIC_MSGTAB_F_UNSEQ : 0,
					  step);
		if ((unseq && unseq_live == 8) || nid_live[nid] == 12) {
			assert_null(e);
			assert_int_equal(errno, EDQUOT);
		} else if (n == CAP) {
			assert_null(e);
			assert_int_equal(errno, ENOSPC);
		} else {
			assert_non_null(e);
			live[id] = 1;
			n++;
			nid_live[nid]++;
			unseq_live += unseq;
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
		cmocka_unit_test(test_flood_memory),
		cmocka_unit_test(test_flood_memory_unseq),
		cmocka_unit_test(test_flood_share),
		cmocka_unit_test(test_seen_bits),
		cmocka_unit_test(test_share_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
