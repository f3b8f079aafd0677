/* SPDX-License-Identifier: BSD-3-Clause */
/* The typed-receive layout cache (shim_ddt_lc.c) with injected NIC
 * preparation and cost table: first uses on the host, the switch after
 * preparation, equal types, bounds, failures, and two threads posting one
 * layout while the preparation thread works on it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim_ddt.h"

#define NI ((ptl_handle_ni_t)7)

static int builds, loads, load_fail;
static unsigned load_sleep_us;

static int
fake_build(ptl_handle_ni_t ni, const struct ddt_type *t, int64_t count,
	   enum spin_type_strategy strat, struct spin_type_offload **off_p)
{
	struct spin_type_offload *o = calloc(1, sizeof(*o));

	(void)t;
	assert_non_null(o);
	o->ni = ni;
	o->count = count;
	/* static asks for AUTO: the class rule's answer for a vector */
	o->strat = strat == SPIN_TYPE_AUTO ? SPIN_TYPE_SPECIALIZED : strat;
	o->args_len = 1000;
	__atomic_fetch_add(&builds, 1, __ATOMIC_RELAXED);
	*off_p = o;
	return 0;
}

static int
fake_load(struct spin_type_offload *o)
{
	if (load_sleep_us > 0)
		usleep(load_sleep_us);
	__atomic_fetch_add(&loads, 1, __ATOMIC_RELAXED);
	if (load_fail)
		return -ENOMEM;
	pthread_mutex_lock(&shim_type_lock);
	o->loaded = true;
	o->ctx = (spin_handle_ctx_t)42;
	pthread_mutex_unlock(&shim_type_lock);
	return 0;
}

static void
fake_release(struct spin_type_offload *o)
{
	free(o);
}

static const struct shim_lc_ops fake_ops = {
	fake_build, fake_load, fake_release,
};

/* Host: 1000 ns + 0.5 ns/B. Specialized: 5000 ns + 0.1 ns/B + 1 ns/block
 * + 5000 ns per block outside the region. 1 MiB in 4 KiB blocks: NIC in
 * the region, host outside; 2 KiB: host. */
static const struct shim_ddt_costs table = {
	.nhpu = 2,
	.s = {
		[SPIN_TYPE_HOST] = {true, 1000, 0.5, 0, 0, 0},
		[SPIN_TYPE_SPECIALIZED] = {true, 5000, 0.1, 1, 0, 5000},
	},
};

static char buf[64];

/* buf stands for the host region; the cache with the fake preparation,
 * table tab, gate g and preparation cost prep_ns */
static void
configure_full(int chooser, bool inline_prep, unsigned max_entries,
	       const struct shim_ddt_costs *tab, int g, double prep_ns,
	       void (*trace)(const struct shim_lc_trace *, void *))
{
	struct shim_lc_config c = {
		.chooser = chooser, .forced = SPIN_TYPE_AUTO, .costs = tab,
		.max_entries = max_entries, .max_bytes = 1 << 20,
		.inline_prep = inline_prep, .ops = &fake_ops,
		.gate = g, .prep_msg_ns = prep_ns, .trace = trace,
	};

	shim_lc_configure(&c);
	builds = loads = load_fail = 0;
	load_sleep_us = 0;
	shim_g.payload_size = 4096;
	shim_g.region.base = (uint8_t *)buf;
	shim_g.region.size = sizeof(buf);
}

/* the first slices' gate: prepared from the first use */
static void
configure(int chooser, bool inline_prep, unsigned max_entries)
{
	configure_full(chooser, inline_prep, max_entries, &table,
		       SHIM_GATE_EAGER, 0.0, NULL);
}

static int
teardown(void **state)
{
	(void)state;
	shim_lc_configure(NULL);
	shim_g.region.base = NULL;
	shim_g.region.size = 0;
	return 0;
}

/* n blocks of bl bytes, stride 2 bl (a fresh object each call). */
static struct ddt_type *
vec(int64_t n, int64_t bl)
{
	struct ddt_type *t = ddt_vector(n, bl, 2 * bl, ddt_base(DDT_BYTE));

	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	return t;
}

/* One post and its completion: the strategy it took. */
static enum spin_type_strategy
post(const struct ddt_type *t, int64_t count)
{
	struct shim_lc_use u;

	assert_int_equal(shim_lc_acquire(NI, t, count, buf, &u), 0);
	assert_false(u.need_load);
	assert_int_equal(u.strat, u.off->strat);
	__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
	return u.strat;
}

static void
test_first_host_then_nic(void **state)
{
	struct ddt_type *big = vec(256, 4096), *small = vec(2, 1024);
	struct shim_lc_stats st;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_int_equal(post(big, 1), SPIN_TYPE_HOST);
	assert_int_equal(builds, 0); /* nothing on the post's path */
	/* the next post prepares first (inline mode), then decides */
	assert_int_equal(post(big, 1), SPIN_TYPE_SPECIALIZED);
	assert_int_equal(post(big, 1), SPIN_TYPE_SPECIALIZED);
	assert_int_equal(builds, 1);
	assert_int_equal(loads, 1);
	/* predicted slower on the NIC: never prepared */
	assert_int_equal(post(small, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(small, 1), SPIN_TYPE_HOST);
	assert_int_equal(builds, 1);
	shim_lc_stats_get(&st);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.hits, 3);
	assert_int_equal(st.prep_queued, 1);
	assert_int_equal(st.prep_done, 1);
	assert_int_equal(st.nic_choices, 2);
	assert_int_equal(st.host_choices, 3);
	ddt_free(big);
	ddt_free(small);
}

/* A buffer outside the region makes the specialized handler's per-block
 * cost count: the host stays, though the layout is prepared. */
static void
test_out_of_region(void **state)
{
	struct ddt_type *t = vec(256, 4096);
	struct shim_lc_use u;
	char *heap = malloc(16);

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_int_equal(post(t, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(t, 1), SPIN_TYPE_SPECIALIZED);
	assert_int_equal(shim_lc_acquire(NI, t, 1, heap, &u), 0);
	assert_int_equal(u.strat, SPIN_TYPE_HOST);
	__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
	free(heap);
	ddt_free(t);
}

static void
test_equal_types_one_entry(void **state)
{
	struct ddt_type *a = vec(256, 4096), *b = vec(256, 4096);
	struct ddt_type *c = vec(256, 2048);
	struct shim_lc_stats st;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_ptr_not_equal(a, b);
	assert_int_equal(post(a, 1), SPIN_TYPE_HOST);
	ddt_free(a); /* the cache keeps its own reference */
	assert_int_equal(post(b, 1), SPIN_TYPE_SPECIALIZED);
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.hits, 1);
	/* another count, another layout */
	post(b, 2);
	post(c, 1);
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.misses, 3);
	ddt_free(b);
	ddt_free(c);
}

/* The key reads no displacement of a general layout (O(1) per first
 * post, fifth slice): two layouts alike in size, extent, class and
 * serialized length share it, and ddt_equal() keeps them apart; an
 * equal one created anew still hits. */
static void
test_key_shared(void **state)
{
	int64_t bl[3] = {8, 100, 40}, d1[3] = {0, 200, 1000},
		d2[3] = {0, 300, 1000};
	struct ddt_type *a, *b, *a2;
	struct shim_lc_stats st;

	(void)state;
	a = ddt_hindexed(3, bl, d1, ddt_base(DDT_BYTE));
	b = ddt_hindexed(3, bl, d2, ddt_base(DDT_BYTE));
	a2 = ddt_hindexed(3, bl, d1, ddt_base(DDT_BYTE));
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(a2);
	assert_int_equal(ddt_commit(a), 0);
	assert_int_equal(ddt_commit(b), 0);
	assert_int_equal(ddt_commit(a2), 0);
	assert_int_equal(ddt_serialize(a, NULL, 0), ddt_serialize(b, NULL, 0));
	assert_int_equal(ddt_extent(a), ddt_extent(b));
	assert_int_equal(ddt_equal(a, b), 0);
	configure_full(SHIM_CHOOSER_AWARE, true, 16, &table, SHIM_GATE_SECOND,
		       0.0, NULL);
	post(a, 1);
	post(b, 1);
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.misses, 2);
	post(b, 1);
	post(a2, 1);
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.hits, 2);
	ddt_free(a);
	ddt_free(b);
	ddt_free(a2);
}

static void
test_eviction(void **state)
{
	struct ddt_type *t[3] = {vec(4, 64), vec(8, 64), vec(16, 64)};
	struct shim_lc_use u;
	struct shim_lc_stats st;
	int i;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 2);
	/* a posted receive keeps its entry */
	assert_int_equal(shim_lc_acquire(NI, t[0], 1, buf, &u), 0);
	post(t[1], 1);
	post(t[2], 1);
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.evicted, 1);
	post(t[0], 1); /* still there */
	shim_lc_stats_get(&st);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.hits, 1);
	__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
	post(t[1], 1); /* was dropped: a miss again */
	shim_lc_stats_get(&st);
	assert_int_equal(st.misses, 4);
	assert_int_equal(st.entries, 2);
	assert_int_equal(shim_lc_flush(NI), 0);
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 0);
	for (i = 0; i < 3; i++)
		ddt_free(t[i]);
}

/* Algorithm 1 on a scripted sequence: l <= T never switches, l > T
 * switches after its background preparation. */
static void
test_threshold_sequence(void **state)
{
	struct ddt_type *at = vec(64, 2048), *above = vec(64, 2056);
	struct shim_lc_stats st;

	(void)state;
	configure(SHIM_CHOOSER_THRESHOLD, true, 16);
	assert_int_equal(post(at, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(at, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(above, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(at, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(above, 1), SPIN_TYPE_SPECIALIZED);
	shim_lc_stats_get(&st);
	assert_int_equal(st.prep_queued, 1);
	ddt_free(at);
	ddt_free(above);
}

/* A failed preparation keeps the host and retries after 64 uses. */
static void
test_failed_retry(void **state)
{
	struct ddt_type *t = vec(256, 4096);
	int i;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	load_fail = 1;
	/* use 1 queues it, use 2 prepares it (inline): it fails at use 1 */
	for (i = 1; i <= 64; i++)
		assert_int_equal(post(t, 1), SPIN_TYPE_HOST);
	assert_int_equal(loads, 1);
	load_fail = 0;
	/* use 65 = 1 + 64 queues it again, use 66 prepares it */
	assert_int_equal(post(t, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(t, 1), SPIN_TYPE_SPECIALIZED);
	assert_int_equal(loads, 2);
	assert_int_equal(builds, 1); /* built once, loaded again */
	ddt_free(t);
}

/* static: the class rule, built at the first post, loaded by the
 * caller at the post; contiguous: a plain entry, nothing prepared. */
static void
test_static_and_contig(void **state)
{
	struct ddt_type *t = vec(4, 64);
	struct ddt_type *c = ddt_contiguous(100, ddt_base(DDT_BYTE));
	struct shim_lc_use u;

	(void)state;
	configure(SHIM_CHOOSER_STATIC, true, 16);
	assert_int_equal(shim_lc_acquire(NI, t, 1, buf, &u), 0);
	assert_true(u.need_load);
	assert_int_equal(u.strat, SPIN_TYPE_SPECIALIZED);
	assert_int_equal(builds, 1);
	__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_int_equal(ddt_commit(c), 0);
	assert_int_equal(post(c, 3), SPIN_TYPE_CONTIG);
	assert_int_equal(post(c, 3), SPIN_TYPE_CONTIG);
	assert_int_equal(builds, 0);
	ddt_free(t);
	ddt_free(c);
}

struct poster {
	const struct ddt_type *t;
	int host, nic;
};

static void *
poster_run(void *arg)
{
	struct poster *p = arg;
	struct shim_lc_use u;
	int i;

	for (i = 0; i < 2000; i++) {
		if (shim_lc_acquire(NI, p->t, 1, buf, &u) != 0)
			return NULL;
		if (u.strat == SPIN_TYPE_HOST)
			p->host++;
		else
			p->nic++;
		__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
		usleep(50);
	}
	return p;
}

/* Two threads post one layout while the thread prepares it (slowly):
 * nobody waits, both see the host first and the NIC once it is ready. */
static void
test_two_threads_while_preparing(void **state)
{
	struct ddt_type *a = vec(256, 4096), *b = vec(256, 4096);
	struct poster p[2] = {{.t = a}, {.t = b}};
	pthread_t th[2];
	struct shim_lc_stats st;
	void *ret;
	int i;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, false, 16);
	load_sleep_us = 20000;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, poster_run,
						&p[i]), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_ptr_equal(ret, &p[i]);
	}
	shim_lc_drain();
	shim_lc_stats_get(&st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.prep_done, 1);
	assert_int_equal(builds, 1);
	assert_int_equal(st.host_choices + st.nic_choices, 4000);
	assert_int_equal(st.host_choices, p[0].host + p[1].host);
	assert_true(st.host_while_preparing > 0);
	assert_true(p[0].host > 0 || p[1].host > 0);
	assert_true(p[0].nic > 0 && p[1].nic > 0);
	ddt_free(a);
	ddt_free(b);
}

/* One post and its completion; the entry it used. */
static enum spin_type_strategy
post_e(const struct ddt_type *t, struct shim_lc_entry **e_p)
{
	struct shim_lc_use u;

	assert_int_equal(shim_lc_acquire(NI, t, 1, buf, &u), 0);
	__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
	*e_p = u.e;
	return u.strat;
}

/* Samples timed by spinnic's NIC time (shim_lc_observe_times()): a halo
 * exchange's receives wait for their sender, the NIC's ones longer (300
 * us) than the host's (100 us); from the post the host looks 3x faster,
 * from the data's arrival the NIC is (6 us against 11 us) and is chosen.
 * With SPINNIC_DDT_NICTIME=off (no_nic_time) the same receives keep the
 * layout on the host. A receive of no entry (the calibration's) sets the
 * completion latency only. */
static void
run_nic_times(bool no_nic_time, enum spin_type_strategy want)
{
	struct ddt_type *big = vec(256, 4096);
	struct shim_lc_config c = {
		.chooser = SHIM_CHOOSER_AWARE, .forced = SPIN_TYPE_AUTO,
		.costs = &table, .max_entries = 16, .max_bytes = 1 << 20,
		.inline_prep = true, .ops = &fake_ops,
		.gate = SHIM_GATE_EAGER, .no_nic_time = no_nic_time,
	};
	struct shim_lc_entry *e;
	struct shim_lc_stats st;
	unsigned i;

	/* the fake preparation's state as configure_full() sets it */
	configure_full(SHIM_CHOOSER_AWARE, true, 16, &table, SHIM_GATE_EAGER,
		       0.0, NULL);
	shim_lc_configure(&c);
	assert_true(shim_lc_latency() < 0);
	/* the calibration's receive: a sender ready, 1 us outside the NIC */
	shim_lc_observe_times(NULL, true, 5000.0, 3000.0, 1000.0);
	assert_true(shim_lc_latency() == (no_nic_time ? -1.0 : 1000.0));
	shim_lc_stats_get(&st);
	assert_int_equal(st.observed, 0);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	for (i = 0; i < SHIM_DDT_OBS_MIN; i++) {
		shim_lc_observe_times(e, true, 300000.0, 5000.0, 0.0);
		shim_lc_observe_times(e, false, 100000.0, 2000.0, 8000.0);
	}
	/* the NIC's word beyond the client's time is not believed */
	shim_lc_observe_times(e, false, 100000.0, 200000.0, 0.0);
	for (i = 0; i < 4; i++)
		assert_int_equal(post_e(big, &e), want);
	shim_lc_stats_get(&st);
	assert_int_equal(st.observed, 2 * SHIM_DDT_OBS_MIN + 1);
	assert_int_equal(st.nic_timed, no_nic_time ? 0 : 2 * SHIM_DDT_OBS_MIN);
	if (!no_nic_time)
		assert_true(shim_lc_latency() == 1000.0);
	shim_lc_configure(NULL);
	ddt_free(big);
}

static void
test_nic_times(void **state)
{
	(void)state;
	run_nic_times(false, SPIN_TYPE_SPECIALIZED);
	run_nic_times(true, SPIN_TYPE_HOST);
}

/* Online refinement: measured host times below the table's NIC
 * prediction bring the host back after SHIM_DDT_OBS_MIN samples, measured
 * NIC times take it away again; a prepared entry explores the other path
 * once its estimate is 8 uses old, then at periods doubling to 128. */
static void
test_refine_and_explore(void **state)
{
	struct ddt_type *big = vec(256, 4096);
	struct shim_lc_entry *e;
	struct shim_lc_stats st;
	unsigned i, nic = 0, host = 0;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	for (i = 0; i < SHIM_DDT_OBS_MIN - 1; i++)
		shim_lc_observe(e, false, 100.0);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	shim_lc_observe(e, false, 100.0);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	for (i = 0; i < SHIM_DDT_OBS_MIN; i++)
		shim_lc_observe(e, true, 10.0);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	/* not times: ignored */
	shim_lc_observe(e, true, -5.0);
	shim_lc_observe(e, false, NAN);
	shim_lc_stats_get(&st);
	assert_int_equal(st.observed, 2 * SHIM_DDT_OBS_MIN);
	/* uses 6..133: the host, last posted at use 4, is explored once its
	 * estimate is 8 uses old (use 12), then at periods doubling: 28, 60
	 * and 124 */
	for (i = 0; i < 128; i++) {
		if (post_e(big, &e) == SPIN_TYPE_HOST) {
			assert_true(i + 6 == 12 || i + 6 == 28 ||
				    i + 6 == 60 || i + 6 == 124);
			host++;
		} else {
			nic++;
		}
	}
	shim_lc_stats_get(&st);
	assert_int_equal(st.explores, 4);
	assert_int_equal(host, 4);
	assert_int_equal(nic, 124);
	ddt_free(big);
}

/* The default gate: a layout's first use queues nothing (no build, no
 * load: a layout used once never pays), the second queues it, the third
 * finds it prepared (inline mode). Algorithm 1 still queues at the
 * first use. */
static void
test_gate_second(void **state)
{
	struct ddt_type *big = vec(256, 4096), *above = vec(64, 2056);
	struct shim_lc_stats st;

	(void)state;
	configure_full(SHIM_CHOOSER_AWARE, true, 16, &table,
		       SHIM_GATE_SECOND, 0.0, NULL);
	assert_int_equal(post(big, 1), SPIN_TYPE_HOST);
	shim_lc_drain();
	assert_int_equal(builds, 0);
	assert_int_equal(loads, 0);
	shim_lc_stats_get(&st);
	assert_int_equal(st.prep_queued, 0);
	assert_int_equal(post(big, 1), SPIN_TYPE_HOST);
	shim_lc_stats_get(&st);
	assert_int_equal(st.prep_queued, 1);
	assert_int_equal(post(big, 1), SPIN_TYPE_SPECIALIZED);
	assert_int_equal(builds, 1);
	configure_full(SHIM_CHOOSER_THRESHOLD, true, 16, &table,
		       SHIM_GATE_SECOND, 0.0, NULL);
	assert_int_equal(post(above, 1), SPIN_TYPE_HOST);
	shim_lc_stats_get(&st);
	assert_int_equal(st.prep_queued, 1);
	assert_int_equal(post(above, 1), SPIN_TYPE_SPECIALIZED);
	ddt_free(big);
	ddt_free(above);
}

/* SHIM_GATE_RENT: the table's gain for 1 MiB in 4 KiB blocks is
 * 525288 - 57557 = 467731 ns per message; a preparation of 2e6 ns is
 * paid back by 5 uses (4 x gain < 2e6 <= 5 x gain): queued at use 5,
 * used at 6. Measured times change the gain. */
static void
test_gate_rent(void **state)
{
	struct ddt_type *big = vec(256, 4096);
	struct shim_lc_entry *e;
	struct shim_lc_stats st;
	int i;

	(void)state;
	configure_full(SHIM_CHOOSER_AWARE, true, 16, &table, SHIM_GATE_RENT,
		       2e6, NULL);
	for (i = 1; i <= 5; i++)
		assert_int_equal(post(big, 1), SPIN_TYPE_HOST);
	shim_lc_stats_get(&st);
	assert_int_equal(st.prep_queued, 1);
	assert_int_equal(post(big, 1), SPIN_TYPE_SPECIALIZED);
	/* the host measured at 600000 ns: gain 542443, paid by use 4 */
	configure_full(SHIM_CHOOSER_AWARE, true, 16, &table, SHIM_GATE_RENT,
		       2e6, NULL);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	for (i = 0; i < SHIM_DDT_OBS_MIN; i++)
		shim_lc_observe(e, false, 600000.0);
	for (i = 2; i <= 4; i++)
		assert_int_equal(post(big, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(big, 1), SPIN_TYPE_SPECIALIZED);
	ddt_free(big);
}

static struct shim_lc_trace pc_last;

static void
pc_record(const struct shim_lc_trace *t, void *arg)
{
	(void)arg;
	pc_last = *t;
}

/* A preparation cost per layout and strategy (fifth slice): predicted
 * from the block count before any preparation of the strategy ran, the
 * entry's own once measured, the strategy's measured per-block cost for
 * the next layout; a close call is prepared only once the uses so far
 * times the most it may gain (the close band) repay it, so a layout whose
 * preparation cannot pay (Fig. 13's specfem3d_oc) is never prepared. */
static void
test_prep_cost(void **state)
{
	/* host and iovec predicted alike: a close call, 25% of the host's
	 * time the most a use may gain */
	static const struct shim_ddt_costs even = {
		.nhpu = 1,
		.s = {
			[SPIN_TYPE_HOST] = {true, 1000, 1.0, 0, 0, 0},
			[SPIN_TYPE_IOVEC] = {true, 1000, 1.0, 0, 0, 0},
		},
	};
	struct shim_lc_config c = {
		.chooser = SHIM_CHOOSER_AWARE, .forced = SPIN_TYPE_AUTO,
		.costs = &even, .max_entries = 16, .max_bytes = 1 << 20,
		.inline_prep = true, .ops = &fake_ops,
		.gate = SHIM_GATE_RENT, .prep_msg_ns = 10000.0,
		.prep_block_ns = 100.0, .trace = pc_record,
	};
	struct ddt_type *a = vec(1000, 8), *b = vec(2000, 8);
	double meas;
	int i;

	(void)state;
	configure_full(SHIM_CHOOSER_AWARE, true, 16, &even, SHIM_GATE_RENT,
		       0.0, NULL);
	shim_lc_configure(&c);
	/* a: 9000 ns either way, 2250 a use to gain; 10 us + 1000 blocks x
	 * 100 ns to prepare: queued at use 49 (49 x 2250 >= 110000) */
	for (i = 1; i <= 48; i++) {
		assert_int_equal(post(a, 1), SPIN_TYPE_HOST);
		assert_true(pc_last.choice.prepare);
		assert_false(pc_last.queued);
		assert_true(pc_last.prep_ns == 110000.0);
		assert_true(pc_last.choice.t_host == 9000.0);
	}
	assert_int_equal(builds, 0);
	assert_int_equal(post(a, 1), SPIN_TYPE_HOST);
	assert_true(pc_last.queued);
	/* prepared inline at the next post, slowly: its own cost now */
	load_sleep_us = 5000;
	assert_int_equal(post(a, 1), SPIN_TYPE_IOVEC);
	load_sleep_us = 0;
	meas = pc_last.prep_ns;
	assert_true(meas >= 5e6 && meas < 1e9);
	/* b (2000 blocks): iovec's measured cost per block beyond the fixed
	 * one, not the table's 100 ns */
	assert_int_equal(post(b, 1), SPIN_TYPE_HOST);
	assert_true(fabs(pc_last.prep_ns - (10000.0 + 2000.0 *
					    (meas - 10000.0) / 1000.0)) <
		    1.0);
	/* 4250 a use to gain against > 10 ms: never in 200 uses */
	for (i = 2; i <= 200; i++) {
		assert_int_equal(post(b, 1), SPIN_TYPE_HOST);
		assert_false(pc_last.queued);
	}
	assert_int_equal(builds, 1);
	/* the second gate measures a close call whatever it costs */
	c.gate = SHIM_GATE_SECOND;
	shim_lc_configure(&c);
	assert_int_equal(post(b, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(b, 1), SPIN_TYPE_HOST);
	assert_true(pc_last.queued);
	/* a new configuration (injected operations) forgets what it
	 * learned: the table's figure again */
	assert_true(pc_last.prep_ns == 10000.0 + 2000.0 * 100.0);
	ddt_free(a);
	ddt_free(b);
}

/* NIC-side timings: a prepared layout on the NIC goes back to the host
 * once SHIM_DDT_OBS_MIN whole-receive times of the NIC say it is slower
 * than the host (predicted 525288 ns), and to the NIC again when host
 * times say the host is slower still. */
static void
test_nic_samples_flip(void **state)
{
	struct ddt_type *big = vec(256, 4096);
	struct shim_lc_entry *e;
	int i;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	for (i = 0; i < SHIM_DDT_OBS_MIN - 1; i++) {
		shim_lc_observe(e, true, 900000.0);
		assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	}
	/* within the hysteresis of the host: still the host */
	shim_lc_observe(e, true, 900000.0);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	/* the host measured at 980000: 900000 x 1.1 is not below it */
	for (i = 0; i < SHIM_DDT_OBS_MIN; i++)
		shim_lc_observe(e, false, 980000.0);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	for (i = 0; i < 8; i++)
		shim_lc_observe(e, false, 2e6);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	ddt_free(big);
}

/* Post big once and give the path it took a sample: host_ns for the
 * host, nic_ns for the NIC. @return whether it went to the host */
static bool
post_sample(const struct ddt_type *big, double host_ns, double nic_ns,
	    struct shim_lc_entry **e_p)
{
	bool host = post_e(big, e_p) == SPIN_TYPE_HOST;

	shim_lc_observe(*e_p, !host, host ? host_ns : nic_ns);
	return host;
}

/* A stale estimate is measured again: the host path (90 us) beats the
 * NIC (100 us) until a load spike (four samples at 10x, clipped to 2x
 * each: 220 us, not even a close call) sends the layout to the NIC. The
 * host, now the path not taken, is explored once its estimate is
 * SHIM_DDT_EXPLORE_MIN uses old; its fresh 90 us, under half the stale
 * estimate, replaces it and the host is chosen again (the fifth slice
 * explored every 64th use outside a close call and moved the estimate by
 * the clipped EWMA: ~9 explorations, ~600 uses). One spike (112.5 us, a
 * close call) is forgotten by the EWMA at periods of at most 16 uses.
 * Then, with the NIC measured far slower, explorations come at periods
 * doubling from 8 to 128 uses. */
static void
test_stale_remeasure(void **state)
{
	struct ddt_type *big = vec(256, 4096);
	struct shim_lc_entry *e;
	struct shim_lc_stats st;
	unsigned i, nx = 0, back;
	uint64_t last = 0, gap = 0, x0;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 16);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_HOST);
	assert_int_equal(post_e(big, &e), SPIN_TYPE_SPECIALIZED);
	for (i = 0; i < SHIM_DDT_OBS_MIN; i++) {
		shim_lc_observe(e, false, 90000.0);
		shim_lc_observe(e, true, 100000.0);
	}
	/* measured: the host 10% faster than the NIC leaves it */
	assert_true(post_sample(big, 90000.0, 100000.0, &e));
	/* a load spike: four receives at 10x */
	for (i = 0; i < 4; i++)
		shim_lc_observe(e, false, 900000.0);
	assert_false(post_sample(big, 90000.0, 100000.0, &e));
	/* on the NIC; the host explored within the period, its fresh
	 * sample good: the host again */
	for (back = 0; back < 3 * SHIM_DDT_EXPLORE_MIN; back++)
		if (post_sample(big, 90000.0, 100000.0, &e))
			break;
	assert_true(back < SHIM_DDT_EXPLORE_MIN);
	/* that was the exploration; the next post decides host */
	assert_true(post_sample(big, 90000.0, 100000.0, &e));
	shim_lc_stats_get(&st);
	assert_int_equal(st.explores, 1);
	/* one spike (a preempted receive): 112.5 us, a close call; the
	 * exploration's samples bring it down by the EWMA, explored every
	 * 16 uses at most */
	shim_lc_observe(e, false, 900000.0);
	assert_false(post_sample(big, 90000.0, 100000.0, &e));
	for (back = 0; back < 400; back++) {
		bool host = post_e(big, &e) == SPIN_TYPE_HOST;

		shim_lc_observe(e, !host, host ? 90000.0 : 100000.0);
		/* explorations are single host posts; the switch back is
		 * the first of two host posts in a row */
		if (host && post_sample(big, 90000.0, 100000.0, &e))
			break;
	}
	assert_true(back < 12 * SHIM_DDT_EXPLORE_CLOSE);
	shim_lc_stats_get(&st);
	x0 = st.explores;
	assert_true(x0 >= 8 && x0 <= 16);
	/* the NIC measured far slower (300 us): the choice stays right and
	 * the NIC is explored ever less often */
	for (i = 0; i < 1000; i++) {
		if (post_sample(big, 90000.0, 300000.0, &e))
			continue;
		nx++;
		if (nx > 2) {
			/* the period doubles up to its bound */
			assert_true(i - last >= gap);
			gap = i - last;
			assert_true(gap <= SHIM_DDT_EXPLORE_MAX);
		}
		last = i;
	}
	shim_lc_stats_get(&st);
	assert_int_equal(st.explores - x0, nx);
	assert_int_equal(gap, SHIM_DDT_EXPLORE_MAX);
	/* 8 or 16, 16, 32, 64 then every 128 */
	assert_true(nx >= 9 && nx <= 13);
	print_message("stale re-measure: one spike forgotten in %u uses, %"
		      PRIu64 " explorations so far; then %u in 1000 uses\n",
		      back, x0, nx);
	ddt_free(big);
}

/* The cache's counters through the public API (spin.h,
 * spin_type_cache_stats()): hits and misses, entries and bytes now,
 * evictions, preparations done and failed, host and NIC posts,
 * explorations and samples. */
static void
test_public_stats(void **state)
{
	struct ddt_type *big = vec(256, 4096), *small = vec(16, 8);
	struct ddt_type *third = vec(4, 16), *big2 = vec(128, 4096);
	struct spin_type_cache_stats p;
	struct shim_lc_stats st;
	struct shim_lc_entry *e;

	(void)state;
	configure(SHIM_CHOOSER_AWARE, true, 2);
	spin_type_cache_stats(&p);
	assert_int_equal(p.hits + p.misses + p.entries, 0);
	spin_type_cache_stats(NULL); /* tolerated */
	assert_int_equal(post(big, 1), SPIN_TYPE_HOST);
	assert_int_equal(post(big, 1), SPIN_TYPE_SPECIALIZED);
	assert_int_equal(post(small, 1), SPIN_TYPE_HOST);
	spin_type_cache_stats(&p);
	assert_int_equal(p.misses, 2);
	assert_int_equal(p.hits, 1);
	assert_int_equal(p.entries, 2);
	assert_int_equal(p.bytes, 1000); /* big's arguments (fake build) */
	assert_int_equal(p.prep_queued, 1);
	assert_int_equal(p.prep_done, 1);
	assert_int_equal(p.host_choices, 2);
	assert_int_equal(p.nic_choices, 1);
	assert_int_equal(p.host_while_preparing, 1);
	assert_int_equal(p.evictions, 0);
	/* over 2 entries: the least recently used idle one (big) goes */
	assert_int_equal(post(third, 1), SPIN_TYPE_HOST);
	spin_type_cache_stats(&p);
	assert_int_equal(p.entries, 2);
	assert_int_equal(p.evictions, 1);
	assert_int_equal(p.bytes, 0);
	/* a preparation that fails (NIC memory short): counted, host */
	load_fail = 1;
	assert_int_equal(post_e(big2, &e), SPIN_TYPE_HOST);
	assert_int_equal(post_e(big2, &e), SPIN_TYPE_HOST);
	shim_lc_observe(e, false, 1000.0);
	shim_lc_observe(e, false, -1.0); /* not a time: not counted */
	spin_type_cache_stats(&p);
	assert_int_equal(p.prep_queued, 2);
	assert_int_equal(p.prep_done, 1);
	assert_int_equal(p.prep_failed, 1);
	assert_int_equal(p.misses, 4);
	assert_int_equal(p.hits, 2);
	assert_int_equal(p.evictions, 2);
	assert_int_equal(p.host_choices, 5);
	assert_int_equal(p.nic_choices, 1);
	assert_int_equal(p.samples, 1);
	assert_int_equal(p.explorations, 0);
	/* the same figures as the cache's own */
	shim_lc_stats_get(&st);
	assert_int_equal(p.hits, st.hits);
	assert_int_equal(p.misses, st.misses);
	assert_int_equal(p.evictions, st.evicted);
	assert_int_equal(p.entries, st.entries);
	assert_int_equal(p.bytes, st.bytes);
	assert_int_equal(p.prep_queued, st.prep_queued);
	assert_int_equal(p.prep_done, st.prep_done);
	assert_int_equal(p.prep_failed, st.prep_failed);
	assert_int_equal(p.host_choices, st.host_choices);
	assert_int_equal(p.nic_choices, st.nic_choices);
	assert_int_equal(p.host_while_preparing, st.host_while_preparing);
	assert_int_equal(p.explorations, st.explores);
	assert_int_equal(p.samples, st.observed);
	ddt_free(big);
	ddt_free(small);
	ddt_free(third);
	ddt_free(big2);
}

/* ---- replay oracle -------------------------------------------------------
 * The decisions of a scripted sequence of posts are recorded through the
 * trace hook and replayed here by rules written from the documents, not
 * from shim_ddt_choose.c: THRESHOLD is paper 001's Algorithm 1 as in
 * shared/papers/notes/notes-001_004.md §1.2 (a miss goes host and wakes
 * the registration thread when l > T; a hit goes HA when l > T and the
 * layout is registered); AWARE is the rule of doc/NOTES.md (cost model,
 * simplest candidate within 10% of the cheapest, measured times after 3
 * samples, 10% hysteresis both ways, gate, exploration of the path not
 * chosen once its last post or sample is 8 uses old, the period doubling
 * to 128 (at most 16 in a close call) and back to 8 when the side
 * flips, and a stale estimate over twice its fresh sample replaced by
 * it). The
 * preparation is inline: what a post queued is ready at the next post. */

#define ORC_STEPS 600
#define ORC_LAYOUTS 7

static struct shim_lc_trace orc_tr[ORC_STEPS];
static unsigned orc_n;

static void
orc_record(const struct shim_lc_trace *t, void *arg)
{
	(void)arg;
	assert_true(orc_n < ORC_STEPS);
	orc_tr[orc_n++] = *t;
}

/* Specialized and iovec nearly equal for large blocks (iovec a little
 * cheaper: the simplest within 10%, specialized, is the candidate). */
static const struct shim_ddt_costs orc_table = {
	.nhpu = 2,
	.s = {
		[SPIN_TYPE_HOST] = {true, 1000, 0.5, 0, 0, 0},
		[SPIN_TYPE_SPECIALIZED] = {true, 5000, 0.1, 1, 0, 5000},
		[SPIN_TYPE_IOVEC] = {true, 4000, 0.1, 2, 0, 5000},
	},
};

struct orc_layout {
	int64_t n, bl;              /* vector of n blocks of bl bytes */
	/* the oracle's own state */
	bool queued, ready, on_nic;
	enum spin_type_strategy cand; /* fixed once queued */
	uint64_t uses;
	double ew[2];               /* host, NIC */
	unsigned nw[2];
	uint64_t at[2];             /* use of the last sample or post
				       of each path */
	bool stale[2];              /* explored, no sample since */
	unsigned xn;                /* exploration period */
	struct shim_lc_entry *e;    /* to inject samples */
};

static uint64_t orc_rng = 0x9e3779b97f4a7c15ull;

static unsigned
orc_rand(unsigned n)
{
	orc_rng ^= orc_rng << 13;
	orc_rng ^= orc_rng >> 7;
	orc_rng ^= orc_rng << 17;
	return (unsigned)(orc_rng % n);
}

static double
orc_pred_byte(enum spin_type_strategy s, const struct orc_layout *L,
	      bool in_region, double byte_ns)
{
	const struct shim_ddt_cost *k = &orc_table.s[s];
	double size = (double)(L->n * L->bl), nb = (double)L->n;
	double npk = ceil(size / 4096.0), p = 1.0, w;

	w = byte_ns * size + k->block_ns * nb + k->pkt_ns * npk +
		(in_region ? 0.0 : k->out_block_ns * nb);
	if (s != SPIN_TYPE_HOST)
		p = npk < 2.0 ? npk : 2.0;
	return k->msg_ns + w / p;
}

static double
orc_pred(enum spin_type_strategy s, const struct orc_layout *L,
	 bool in_region)
{
	return orc_pred_byte(s, L, in_region, orc_table.s[s].byte_ns);
}

/* One post by the documented rule: the strategy, whether it queued the
 * preparation, whether it explored. */
static void
orc_decide(int chooser, int gate, double prep_ns, struct orc_layout *L,
	   bool in_region, enum spin_type_strategy *s_p, bool *q_p,
	   bool *x_p)
{
	static const enum spin_type_strategy order[] = {
		SPIN_TYPE_SPECIALIZED, SPIN_TYPE_IOVEC,
	};
	double l = (double)L->bl, th, tn = -1.0, best = -1.0, t[2];
	double byte = -1.0;
	enum spin_type_strategy cand = SPIN_TYPE_HOST;
	bool worth, close, stay, side;
	int i, other;

	*q_p = *x_p = false;
	L->uses++;
	if (chooser == SHIM_CHOOSER_THRESHOLD) {
		/* Algorithm 1: T = 2048, HA = the class rule (vector:
		 * specialized) */
		*s_p = l > 2048.0 && L->ready ? SPIN_TYPE_SPECIALIZED :
			SPIN_TYPE_HOST;
		if (L->uses == 1 && l > 2048.0)
			*q_p = true;
		return;
	}
	/* candidates compared with one per-byte cost, the least of the
	 * NIC strategies' (fifth slice) */
	for (i = 0; i < 2; i++)
		if (byte < 0.0 || orc_table.s[order[i]].byte_ns < byte)
			byte = orc_table.s[order[i]].byte_ns;
	for (i = 0; i < 2; i++) {
		t[i] = orc_pred_byte(order[i], L, in_region, byte);
		if (best < 0.0 || t[i] < best)
			best = t[i];
	}
	for (i = 0; i < 2; i++)
		if (t[i] <= best * 1.1) {
			cand = order[i];
			tn = orc_pred(cand, L, in_region);
			break;
		}
	/* queued or prepared: its object is the candidate */
	if (L->queued || L->ready) {
		cand = L->cand;
		tn = orc_pred(cand, L, in_region);
	}
	th = L->nw[0] >= 3 ? L->ew[0] : orc_pred(SPIN_TYPE_HOST, L, in_region);
	if (L->nw[1] >= 3)
		tn = L->ew[1];
	worth = tn * 1.1 < th;
	close = fabs(th - tn) < 0.25 * th;
	/* hysteresis both ways: on the NIC, leave for a host 10% faster */
	stay = L->on_nic && !(th * 1.1 < tn);
	/* a close call with no measure of the NIC: prepare it, measure it */
	if (!worth && !stay && close && L->nw[1] < 3)
		worth = stay = true;
	*s_p = L->ready && (worth || stay) ? cand : SPIN_TYPE_HOST;
	/* exploration by age: the path not chosen once its last sample or
	 * post is xn uses old (at most 16 in a close call); xn 8, doubled
	 * by each exploration up to 128, 8 again when the side flips */
	side = *s_p != SPIN_TYPE_HOST;
	if (side != L->on_nic || L->xn < 8)
		L->xn = 8;
	L->on_nic = side;
	other = side ? 0 : 1;
	if (L->ready && L->uses - L->at[other] >= (close && L->xn > 16 ?
						   16 : L->xn)) {
		*s_p = *s_p == SPIN_TYPE_HOST ? cand : SPIN_TYPE_HOST;
		*x_p = true;
		L->at[other] = L->uses;
		L->stale[other] = true;
		L->xn = L->xn * 2 > 128 ? 128 : L->xn * 2;
	}
	/* the path posted: its age starts again */
	L->at[*s_p == SPIN_TYPE_HOST ? 0 : 1] = L->uses;
	if (worth && !L->queued && !L->ready)
		*q_p = gate == SHIM_GATE_EAGER ? true :
			L->uses < 2 ? false :
			gate == SHIM_GATE_SECOND || prep_ns <= 0.0 ? true :
			(double)L->uses * (th - tn + (close ? 0.25 * th :
						      0.0)) >= prep_ns;
	if (*q_p)
		L->cand = cand;
}

static void
orc_sample(struct orc_layout *L, int nic, double ns)
{
	double *e = &L->ew[nic], x = ns;

	/* the least of the first 3, then an EWMA of samples clipped to
	 * [e / 2, 2 e] */
	if (L->nw[nic] == 0 || (L->nw[nic] < 3 && ns < *e))
		*e = ns;
	else if (L->nw[nic] >= 3)
		*e += 0.25 * (fmin(fmax(x, *e / 2.0), 2.0 * *e) - *e);
	/* the first sample after an exploration: an estimate over twice
	 * the sample is replaced */
	if (L->stale[nic] && L->nw[nic] >= 3 && ns * 2.0 < *e)
		*e = ns;
	L->stale[nic] = false;
	L->at[nic] = L->uses;
	L->nw[nic]++;
	shim_lc_observe(L->e, nic != 0, ns);
}

static void
orc_run(int chooser, int gate, double prep_ns)
{
	struct orc_layout L[ORC_LAYOUTS] = {
		{256, 4096}, {2, 1024}, {64, 2056}, {64, 2048}, {4096, 8},
		{16, 16384},
		/* a close call: host 4072 ns, iovec 4331 */
		{24, 256},
	};
	struct ddt_type *t[ORC_LAYOUTS];
	char *heap = malloc(16);
	struct shim_lc_use u;
	enum spin_type_strategy want;
	bool q, x, in_region;
	unsigned i, k, nq = 0, nx = 0, nnic = 0, nobs = 0;

	assert_non_null(heap);
	for (k = 0; k < ORC_LAYOUTS; k++)
		t[k] = vec(L[k].n, L[k].bl);
	configure_full(chooser, true, 16, &orc_table, gate, prep_ns,
		       orc_record);
	orc_n = 0;
	for (i = 0; i < ORC_STEPS; i++) {
		struct orc_layout *o = &L[k = orc_rand(ORC_LAYOUTS)];

		in_region = orc_rand(5) != 0;
		/* inline preparation: what was queued is ready now */
		for (unsigned j = 0; j < ORC_LAYOUTS; j++)
			if (L[j].queued) {
				L[j].queued = false;
				L[j].ready = true;
			}
		orc_decide(chooser, gate, prep_ns, o, in_region, &want, &q,
			   &x);
		assert_int_equal(shim_lc_acquire(NI, t[k], 1,
						 in_region ? buf : heap, &u),
				 0);
		__atomic_fetch_sub(&u.off->posted, 1, __ATOMIC_ACQ_REL);
		o->e = u.e;
		o->queued = o->queued || q;
		assert_int_equal(orc_n, i + 1);
		assert_int_equal(orc_tr[i].uses, o->uses);
		assert_int_equal(orc_tr[i].ready, o->ready);
		if (orc_tr[i].strat != want || orc_tr[i].queued != q ||
		    orc_tr[i].explored != x)
			fail_msg("step %u layout %u use %" PRIu64 ": cache %s "
				 "queued %d explored %d (host %.1f/%u nic "
				 "%.1f/%u on_nic %d), oracle %s %d %d (host "
				 "%.1f/%u nic %.1f/%u)", i, k, o->uses,
				 spin_type_strategy_name(orc_tr[i].strat),
				 orc_tr[i].queued, orc_tr[i].explored,
				 orc_tr[i].obs.host_ns, orc_tr[i].obs.n_host,
				 orc_tr[i].obs.nic_ns, orc_tr[i].obs.n_nic,
				 orc_tr[i].obs.on_nic,
				 spin_type_strategy_name(want), q, x,
				 o->ew[0], o->nw[0], o->ew[1], o->nw[1]);
		nq += q;
		nx += x;
		nnic += want != SPIN_TYPE_HOST;
		/* injected times now and then (aware reads them) */
		if (chooser == SHIM_CHOOSER_AWARE && orc_rand(8) == 0) {
			double base = orc_pred(SPIN_TYPE_HOST, o, true);

			/* 0.5 to 1.5 times the host's prediction, and now
			 * and then 10 times (a preempted receive) */
			orc_sample(o, (int)orc_rand(2),
				   base * (orc_rand(10) == 0 ? 10.0 : 0.5 +
					   (double)orc_rand(100) / 100.0));
			nobs++;
		}
	}
	/* the script reached what it is for */
	assert_true(nq >= 2);
	assert_true(nnic > 0);
	if (chooser == SHIM_CHOOSER_AWARE)
		assert_true(nx > 0 && nobs > 0);
	print_message("oracle chooser %d gate %d: %u posts, %u queued, %u by "
		      "the NIC, %u explored, %u samples\n", chooser, gate,
		      ORC_STEPS, nq, nnic, nx, nobs);
	for (k = 0; k < ORC_LAYOUTS; k++)
		ddt_free(t[k]);
	free(heap);
}

static void
test_oracle_threshold(void **state)
{
	(void)state;
	orc_run(SHIM_CHOOSER_THRESHOLD, SHIM_GATE_SECOND, 0.0);
}

static void
test_oracle_aware(void **state)
{
	(void)state;
	orc_run(SHIM_CHOOSER_AWARE, SHIM_GATE_SECOND, 0.0);
	orc_run(SHIM_CHOOSER_AWARE, SHIM_GATE_EAGER, 0.0);
	orc_run(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT, 3e6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_first_host_then_nic, teardown),
		cmocka_unit_test_teardown(test_out_of_region, teardown),
		cmocka_unit_test_teardown(test_equal_types_one_entry,
					  teardown),
		cmocka_unit_test_teardown(test_key_shared, teardown),
		cmocka_unit_test_teardown(test_eviction, teardown),
		cmocka_unit_test_teardown(test_threshold_sequence, teardown),
		cmocka_unit_test_teardown(test_failed_retry, teardown),
		cmocka_unit_test_teardown(test_static_and_contig, teardown),
		cmocka_unit_test_teardown(test_two_threads_while_preparing,
					  teardown),
		cmocka_unit_test_teardown(test_refine_and_explore, teardown),
		cmocka_unit_test_teardown(test_gate_second, teardown),
		cmocka_unit_test_teardown(test_gate_rent, teardown),
		cmocka_unit_test_teardown(test_prep_cost, teardown),
		cmocka_unit_test_teardown(test_nic_samples_flip, teardown),
		cmocka_unit_test_teardown(test_stale_remeasure, teardown),
		cmocka_unit_test_teardown(test_public_stats, teardown),
		cmocka_unit_test_teardown(test_nic_times, teardown),
		cmocka_unit_test_teardown(test_oracle_threshold, teardown),
		cmocka_unit_test_teardown(test_oracle_aware, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
