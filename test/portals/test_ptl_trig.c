/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations in lib/portals (trig.c) against the specification's
 * text (Portals 4.1 §3.15, doc/NOTES.md "Triggered operations"): release
 * at threshold, in threshold order and equal ones in arm order, at arm
 * time when already met, failures counting, Set down and up, cancel and CT
 * free, max_triggered_ops, chains of 100 TriggeredCTInc, resolution at
 * fire time, a busy originate hook, a fire under the NIC lock (control
 * path), an atomic behind a TRIG, two threads incrementing at once, and
 * triggered ME appends and unlinks (reserved entries, claims, entries
 * gone, cancel, free, the limit); persistent (re-arming) ones: once per
 * crossed threshold in order, cancel with fired instances queued, CT free,
 * chains, threshold + period overflow, the limit counted once, a FIFO
 * full of instances, ME ops refused.
 */
#include <pthread.h>

#include "ptl_test.h"

#define T_TRIG_MAX 8u
#define T_MD_EQ_OFF (32u * 1024)

/* what the originate hook saw, in order */
static struct {
	pthread_mutex_t lock;
	unsigned n;
	uint64_t user_ptr[2048];
	uint16_t op[2048];
	uint64_t total;      /* all it started (n stops at 2048) */
	int rc;              /* what it answers */
} hook = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int
t_originate(void *arg, struct ptl_client *c, const struct ptl_cmd *cmd)
{
	int rc;

	(void)arg;
	(void)c;
	pthread_mutex_lock(&hook.lock);
	rc = hook.rc;
	if (rc == 0 && hook.n < 2048) {
		hook.op[hook.n] = cmd->op;
		hook.user_ptr[hook.n++] = cmd->user_ptr;
	}
	if (rc == 0)
		hook.total++;
	pthread_mutex_unlock(&hook.lock);
	return rc;
}

static void
env(struct t_env *e)
{
	struct ptl_nic_conf cf;

	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_triggered_ops = T_TRIG_MAX;
	t_env_setup_opts(e, 64, 0, &cf);
	ptl_nic_set_originate(e->nic, t_originate, NULL);
	memset(hook.user_ptr, 0, sizeof(hook.user_ptr));
	hook.n = 0;
	hook.total = 0;
	hook.rc = 0;
}

static struct spinnic_cmd_ring *
ring(struct t_env *e)
{
	return (struct spinnic_cmd_ring *)(e->region + T_CMD_OFF);
}

static struct spinnic_ct *
rec(struct t_env *e, unsigned i)
{
	return (struct spinnic_ct *)(e->region + T_CT_OFF + 64u * i);
}

static uint32_t
ct_alloc(struct t_env *e, unsigned i)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e->ni;
	m.u.ct.ct_off = T_CT_OFF + 64u * i;
	assert_int_equal(t_ctrl(e, e->c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	return m.u.ct.ct;
}

static uint32_t
md_bind(struct t_env *e, uint32_t eq)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.md.ni = e->ni;
	m.u.md.start = t_addr(e, T_BUF_OFF);
	m.u.md.length = 4096;
	m.u.md.eq = eq;
	m.u.md.ct = SPINNIC_HANDLE_NONE;
	assert_int_equal(t_ctrl(e, e->c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_OK);
	return m.u.md.md;
}

/* Post commands as the shim does (all published at once), then let the
 * NIC consume them. @return data commands it returned */
static unsigned
post(struct t_env *e, const struct spinnic_cmd *cmds, unsigned n)
{
	struct spinnic_cmd_ring *r = ring(e);
	struct ptl_cmd out[T_CMD_ENTRIES];
	unsigned i;

	for (i = 0; i < n; i++)
		r->slots[(r->head + i) & (T_CMD_ENTRIES - 1)] = cmds[i];
	__atomic_store_n(&r->head, r->head + n, __ATOMIC_RELEASE);
	return ptl_cmd_poll(e->c, out, T_CMD_ENTRIES);
}

static void
put_op(struct t_env *e, struct spinnic_cmd *op, uint32_t md, uint64_t tag)
{
	memset(op, 0, sizeof(*op));
	op->op = SPINNIC_CMD_PUT;
	op->ni = e->ni;
	op->md = md;
	op->length = 64;
	op->target.nid = 2;
	op->target.pid = 3;
	op->user_ptr = tag;
}

static void
ct_op(struct t_env *e, struct spinnic_cmd *op, uint16_t kind, uint32_t ct,
      uint64_t s, uint64_t f)
{
	memset(op, 0, sizeof(*op));
	op->op = kind;
	op->ni = e->ni;
	op->md = ct;
	op->ct_success = s;
	op->ct_failure = f;
}

/* TRIG(trig_ct, threshold) + op */
static void
arm(struct t_env *e, uint32_t trig_ct, uint64_t threshold,
    const struct spinnic_cmd *op)
{
	struct spinnic_cmd c[2];

	memset(&c[0], 0, sizeof(c[0]));
	c[0].op = SPINNIC_CMD_TRIG;
	c[0].ni = e->ni;
	c[0].md = trig_ct;
	c[0].length = threshold;
	c[1] = *op;
	assert_int_equal(post(e, c, 2), 0);
}

static void
arm_put(struct t_env *e, uint32_t trig_ct, uint64_t threshold, uint32_t md,
	uint64_t tag)
{
	struct spinnic_cmd op;

	put_op(e, &op, md, tag);
	arm(e, trig_ct, threshold, &op);
}

static uint64_t
done(struct t_env *e)
{
	return __atomic_load_n(&ring(e)->trig_done[0], __ATOMIC_ACQUIRE);
}

static void
expect(const uint64_t *tags, unsigned n)
{
	unsigned i;

	assert_int_equal(hook.n, n);
	for (i = 0; i < n; i++)
		assert_int_equal(hook.user_ptr[i], tags[i]);
}

static void
test_threshold_order(void **state)
{
	static const uint64_t first[] = { 10 };
	static const uint64_t all[] = { 10, 20, 21, 22, 30 };
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put(&e, ct, 3, md, 30);
	arm_put(&e, ct, 2, md, 20);
	arm_put(&e, ct, 1, md, 10);
	arm_put(&e, ct, 2, md, 21);
	arm_put(&e, ct, 2, md, 22);
	assert_int_equal(hook.n, 0);
	/* == fires, > does not */
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	expect(first, 1);
	/* a jump past several: threshold order, equal ones as armed; a
	 * failure counts like a success */
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 3), 0);
	expect(all, 5);
	assert_int_equal(done(&e), 5);
	t_env_teardown(&e);
}

static void
test_fires_at_arm(void **state)
{
	static const uint64_t tags[] = { 1, 2 };
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	assert_int_equal(ptl_ct_set(e.c, ct, 2, 1), 0);
	arm_put(&e, ct, 3, md, 1);   /* met already */
	arm_put(&e, ct, 0, md, 2);   /* threshold 0 */
	arm_put(&e, ct, 4, md, 3);
	expect(tags, 2);
	/* a Set down fires nothing, a Set up does */
	assert_int_equal(ptl_ct_set(e.c, ct, 0, 0), 0);
	assert_int_equal(hook.n, 2);
	assert_int_equal(ptl_ct_set(e.c, ct, 0, 4), 0);
	assert_int_equal(hook.n, 3);
	t_env_teardown(&e);
}

/* The client changed the counter itself (PtlCTInc in the shim) and posts
 * CT_CHECK: only that fires anything */
static void
test_ct_check(void **state)
{
	struct t_env e;
	struct spinnic_cmd op;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put(&e, ct, 2, md, 7);
	__atomic_fetch_add(&rec(&e, 0)->success, 2, __ATOMIC_RELEASE);
	assert_int_equal(hook.n, 0);
	ct_op(&e, &op, SPINNIC_CMD_CT_CHECK, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	assert_int_equal(hook.n, 1);
	assert_int_equal(rec(&e, 0)->success, 2);
	t_env_teardown(&e);
}

static void
test_cancel_and_free(void **state)
{
	struct t_env e;
	struct spinnic_cmd op;
	struct spinnic_ctrl_msg m;
	struct ptl_nic_stats st;
	uint32_t ct, ct2, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	ct2 = ct_alloc(&e, 1);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put(&e, ct, 1, md, 1);
	arm_put(&e, ct, 2, md, 2);
	arm_put(&e, ct2, 1, md, 3);
	assert_int_equal(ptl_ct_set(e.c, ct, 5, 1), 0);
	expect((const uint64_t[]){ 1, 2 }, 2);
	arm_put(&e, ct, 9, md, 4);
	arm_put(&e, ct, 10, md, 5);
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	/* destroyed, and nothing else touched */
	assert_int_equal(rec(&e, 0)->success, 5);
	assert_int_equal(rec(&e, 0)->failure, 1);
	assert_int_equal(done(&e), 4);
	assert_int_equal(ptl_ct_inc(e.c, ct, 10, 0), 0);
	assert_int_equal(hook.n, 2);
	/* the CT stays usable */
	arm_put(&e, ct, 16, md, 6);
	assert_int_equal(hook.n, 3);
	/* PtlCTFree drops what waits on it */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct = ct2;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(done(&e), 6);
	ct2 = ct_alloc(&e, 1);
	assert_int_equal(ptl_ct_inc(e.c, ct2, 1, 0), 0);
	assert_int_equal(hook.n, 3);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_cancelled, 3);
	assert_int_equal(st.trig_armed, 6);
	t_env_teardown(&e);
}

static void
test_limit(void **state)
{
	struct t_env e;
	struct ptl_nic_stats st;
	struct spinnic_cmd op;
	uint32_t ct, md;
	unsigned i;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	for (i = 0; i < T_TRIG_MAX; i++)
		arm_put(&e, ct, 100, md, i);
	arm_put(&e, ct, 100, md, 99);   /* one too many */
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_refused, 1);
	assert_int_equal(done(&e), 1);
	/* a bad trigger CT, an op that may not wait, another NI: refused */
	arm_put(&e, md, 1, md, 98);
	put_op(&e, &op, md, 97);
	op.op = SPINNIC_CMD_SPUT_START;
	arm(&e, ct, 0, &op);
	put_op(&e, &op, md, 96);
	op.op = SPINNIC_CMD_TRIG;
	arm(&e, ct, 0, &op);
	assert_int_equal(done(&e), 4);
	assert_int_equal(ptl_ct_inc(e.c, ct, 100, 0), 0);
	assert_int_equal(hook.n, T_TRIG_MAX);
	assert_int_equal(done(&e), 4 + T_TRIG_MAX);
	/* room again */
	arm_put(&e, ct, 0, md, 1);
	assert_int_equal(hook.n, T_TRIG_MAX + 1);
	t_env_teardown(&e);
}

/* 100 counters, each one's TriggeredCTInc bumps the next: the worklist,
 * not the stack, carries the chain; then 100 on one counter, each
 * releasing the next. */
static void
test_chain_100(void **state)
{
	struct ptl_nic_conf cf;
	struct spinnic_cmd op;
	struct t_env e;
	uint32_t ct[101];
	unsigned i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_triggered_ops = 256;
	t_env_setup_opts(&e, 64, 0, &cf);
	for (i = 0; i <= 100; i++)
		ct[i] = ct_alloc(&e, i);
	for (i = 0; i < 100; i++) {
		ct_op(&e, &op, SPINNIC_CMD_CT_INC, ct[i + 1], 1, 0);
		arm(&e, ct[i], 1, &op);
	}
	assert_int_equal(ptl_ct_inc(e.c, ct[0], 1, 0), 0);
	for (i = 0; i <= 100; i++)
		assert_int_equal(rec(&e, i)->success, 1);
	for (i = 1; i <= 100; i++) {
		ct_op(&e, &op, SPINNIC_CMD_CT_INC, ct[0], 1, 0);
		arm(&e, ct[0], 1 + i, &op);
	}
	assert_int_equal(rec(&e, 0)->success, 1);
	/* a Set in the chain: the last one puts it back to 7 */
	ct_op(&e, &op, SPINNIC_CMD_CT_SET, ct[0], 7, 0);
	arm(&e, ct[0], 101, &op);
	assert_int_equal(ptl_ct_inc(e.c, ct[0], 1, 0), 0);
	assert_int_equal(rec(&e, 0)->success, 7);
	assert_int_equal(done(&e), 201);
	t_env_teardown(&e);
}

/* The MD is looked at when the operation fires: released by then, the
 * put is refused there (no MD, so no EQ to tell) */
static void
test_resolved_at_fire(void **state)
{
	struct spinnic_ctrl_msg m;
	struct ptl_nic_stats st;
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, e.eq);
	arm_put(&e, ct, 1, md, 5);
	memset(&m, 0, sizeof(m));
	m.u.md.ni = e.ni;
	m.u.md.md = md;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_RELEASE, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(hook.n, 0);
	assert_int_equal(done(&e), 1);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.bad_cmd, 1);
	assert_int_equal(st.trig_fired, 1);
	t_env_teardown(&e);
}

/* No room in the engine: the fired ones wait, in order, and the next
 * ptl_cmd_poll starts them */
static void
test_busy_hook(void **state)
{
	static const uint64_t tags[] = { 1, 2, 3 };
	struct ptl_cmd out[4];
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put(&e, ct, 1, md, 1);
	arm_put(&e, ct, 2, md, 2);
	hook.rc = -ENOBUFS;
	assert_int_equal(ptl_ct_inc(e.c, ct, 2, 0), 0);
	assert_int_equal(done(&e), 0);
	arm_put(&e, ct, 2, md, 3);
	assert_int_equal(hook.n, 0);
	hook.rc = 0;
	assert_int_equal(ptl_cmd_poll(e.c, out, 4), 0);
	expect(tags, 3);
	assert_int_equal(done(&e), 3);
	t_env_teardown(&e);
}

/* A priority append claims an unexpected header and counts it into a CT
 * while the control path holds the NIC lock: what fires must not take
 * that lock again (it would hang), it waits for the next ptl_cmd_poll */
static void
test_fire_under_nic_lock(void **state)
{
	static const uint64_t tags[] = { 8 };
	struct ptl_cmd out[4];
	struct spinnic_pkt h;
	struct ptl_match mt;
	struct t_me over, prio;
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put(&e, ct, 1, md, 8);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.match_bits = 5;
	over.off = T_BUF_OFF + 8192;
	t_me_append(&e, &over);
	t_hdr(&e, &h, 5, 100);
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
	ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
	t_me_default(&prio);
	prio.match_bits = 5;
	prio.ct = ct;
	prio.options |= SPINNIC_PTL_ME_EVENT_CT_OVERFLOW;
	t_me_append(&e, &prio);
	assert_int_equal(rec(&e, 0)->success, 1);
	assert_int_equal(hook.n, 0);
	assert_int_equal(ptl_cmd_poll(e.c, out, 4), 0);
	expect(tags, 1);
	t_env_teardown(&e);
}

/* Any command rides behind a TRIG: an atomic fires as an atomic, checked
 * at fire time like one from the ring */
static void
test_atomic_behind_trig(void **state)
{
	struct spinnic_cmd op;
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	put_op(&e, &op, md, 41);
	op.op = SPINNIC_CMD_ATOMIC;
	op.length = 8;
	op.atomic_op = SPINNIC_PTL_SUM;
	op.atomic_type = SPINNIC_PTL_INT64_T;
	arm(&e, ct, 1, &op);
	op.user_ptr = 42;
	op.atomic_op = SPINNIC_PTL_BAND;   /* not on a double */
	op.atomic_type = SPINNIC_PTL_DOUBLE;
	arm(&e, ct, 1, &op);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(hook.n, 1);
	assert_int_equal(hook.op[0], SPINNIC_CMD_ATOMIC);
	assert_int_equal(hook.user_ptr[0], 41);
	assert_int_equal(done(&e), 2);
	t_env_teardown(&e);
}

struct incr {
	struct t_env *e;
	uint32_t ct;
	unsigned n;
};

static void *
incr_main(void *arg)
{
	struct incr *in = arg;
	unsigned i;

	for (i = 0; i < in->n; i++)
		assert_int_equal(ptl_ct_inc(in->e->c, in->ct, 1, 0), 0);
	return NULL;
}

/* Two threads increment at once (inbound lcore and HPU): every operation
 * fires once, in threshold order */
static void
test_two_threads(void **state)
{
	struct ptl_nic_conf cf;
	struct t_env e;
	pthread_t t[2];
	struct incr in;
	uint32_t ct, md;
	unsigned i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_triggered_ops = 2048;
	t_env_setup_opts(&e, 64, 0, &cf);
	ptl_nic_set_originate(e.nic, t_originate, NULL);
	hook.n = 0;
	hook.rc = 0;
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	for (i = 1; i <= 2000; i++)
		arm_put(&e, ct, i, md, i);
	in = (struct incr){ .e = &e, .ct = ct, .n = 1000 };
	assert_int_equal(pthread_create(&t[0], NULL, incr_main, &in), 0);
	assert_int_equal(pthread_create(&t[1], NULL, incr_main, &in), 0);
	assert_int_equal(pthread_join(t[0], NULL), 0);
	assert_int_equal(pthread_join(t[1], NULL), 0);
	assert_int_equal(hook.n, 2000);
	for (i = 0; i < 2000; i++)
		assert_int_equal(hook.user_ptr[i], i + 1);
	t_env_teardown(&e);
}

/* ---- triggered ME append and unlink (spin.h) ---------------------------- */

/* The control half of PtlTriggeredMEAppend: a reserved entry's handle */
static uint32_t
me_reserve(struct t_env *e, const struct t_me *me)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.flags = SPINNIC_CTRL_F_ME_RESERVE;
	m.u.me.ni = e->ni;
	m.u.me.pt_index = e->pt;
	m.u.me.list = me->list;
	m.u.me.start = t_addr(e, me->off);
	m.u.me.length = me->length;
	m.u.me.options = me->options;
	m.u.me.ct = me->ct;
	m.u.me.uid = me->uid;
	m.u.me.ctx = me->ctx;
	m.u.me.match_id = me->match_id;
	m.u.me.match_bits = me->match_bits;
	m.u.me.ignore_bits = me->ignore_bits;
	m.u.me.user_ptr = me->user_ptr;
	assert_int_equal(t_ctrl(e, e->c, SPINNIC_CTRL_ME_APPEND, &m),
			 SPINNIC_PTL_OK);
	return m.u.me.me;
}

/* TRIG(trig_ct, threshold) + ME_APPEND or ME_UNLINK of entry @p h */
static void
arm_me(struct t_env *e, uint32_t trig_ct, uint64_t threshold, uint16_t op,
       uint32_t h)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.ni = e->ni;
	c.md = h;
	arm(e, trig_ct, threshold, &c);
}

static int
me_unlink_ctrl(struct t_env *e, uint32_t h)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.me.me = h;
	return t_ctrl(e, e->c, SPINNIC_CTRL_ME_UNLINK, &m);
}

static uint64_t
stat_me_gone(struct t_env *e)
{
	struct ptl_nic_stats st;

	ptl_nic_stats_get(e->nic, &st);
	return st.trig_me_gone;
}

static uint64_t
stat_mes_live(struct t_env *e)
{
	struct ptl_nic_stats st;

	ptl_nic_stats_get(e->nic, &st);
	return st.mes_live;
}

/* An unexpected put of bits @p bits, complete, kept on the overflow list */
static void
unexpected_put(struct t_env *e, uint64_t bits)
{
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me over;

	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL |
			SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	over.off = T_BUF_OFF + 8192;
	over.ignore_bits = ~0ull;
	t_me_append(e, &over);
	t_hdr(e, &h, bits, 32);
	assert_int_equal(ptl_nic_match(e->nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
	ptl_match_complete(e->nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(e, T_EQ_OFF, &ev), -1);
}

/* Linked when the counter reaches the threshold, not before: LINK, then
 * it matches; a priority one claims an unexpected header already there
 * (PUT_OVERFLOW), counting on its own CT, which fires the next append */
static void
test_me_append_fires(void **state)
{
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_env e;
	struct t_me me;
	uint32_t ct, ct2, h1, h2, h3;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	ct2 = ct_alloc(&e, 1);
	t_me_default(&me);
	me.match_bits = 5;
	me.user_ptr = 0x55;
	h1 = me_reserve(&e, &me);
	arm_me(&e, ct, 2, SPINNIC_CMD_ME_APPEND, h1);
	t_hdr(&e, &h, 5, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);
	assert_int_equal(ev.user_ptr, 0x55);
	assert_int_equal(done(&e), 1);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_PRIORITY);
	assert_int_equal(m.user_ptr, 0x55);
	ptl_match_release(e.nic, &m);

	/* the claim: PUT_OVERFLOW at fire, counted on ct2, which fires h3 */
	t_ev_drain(&e, T_EQ_OFF);
	unexpected_put(&e, 7);
	t_me_default(&me);
	me.match_bits = 7;
	me.user_ptr = 0x77;
	me.ct = ct2;
	me.options |= SPINNIC_PTL_ME_USE_ONCE | SPINNIC_PTL_ME_EVENT_CT_OVERFLOW;
	h2 = me_reserve(&e, &me);
	me.ct = SPINNIC_HANDLE_NONE;
	me.match_bits = 8;
	me.user_ptr = 0x88;
	me.options = SPINNIC_PTL_ME_OP_PUT;
	h3 = me_reserve(&e, &me);
	arm_me(&e, ct2, 1, SPINNIC_CMD_ME_APPEND, h3);
	arm_me(&e, ct, 3, SPINNIC_CMD_ME_APPEND, h2);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.user_ptr, 0x77);
	assert_int_equal(ev.match_bits, 7);
	assert_int_equal(ev.mlength, 32);
	assert_int_equal(rec(&e, 1)->success, 1);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);
	assert_int_equal(ev.user_ptr, 0x88);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	/* use-once and consumed: its handle is gone, as after PtlMEAppend */
	assert_int_equal(me_unlink_ctrl(&e, h2), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(done(&e), 3);
	t_env_teardown(&e);
}

/* A threshold met at post links at once */
static void
test_me_append_at_arm(void **state)
{
	struct spinnic_event ev;
	struct t_env e;
	struct t_me me;
	uint32_t ct;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	assert_int_equal(ptl_ct_inc(e.c, ct, 0, 1), 0);
	t_me_default(&me);
	me.user_ptr = 0x11;
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_APPEND, me_reserve(&e, &me));
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);
	assert_int_equal(ev.user_ptr, 0x11);
	assert_int_equal(done(&e), 1);
	t_env_teardown(&e);
}

/* A triggered unlink takes the entry off at once, even with a message in
 * flight (the slot stays until it ends, no AUTO_UNLINK) */
static void
test_me_unlink_fires(void **state)
{
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match m, m2;
	struct t_env e;
	struct t_me me;
	uint32_t ct, hme;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	t_me_default(&me);
	me.match_bits = 3;
	hme = t_me_append(&e, &me);
	t_ev_drain(&e, T_EQ_OFF);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_UNLINK, hme);
	t_hdr(&e, &h, 3, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m2), -ENOENT);
	assert_int_equal(stat_mes_live(&e), 1);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(stat_me_gone(&e), 0);
	assert_int_equal(done(&e), 1);
	t_env_teardown(&e);
}

/* An unlink whose entry is gone when it fires (consumed by a use-once
 * match, unlinked by the host) does nothing and is counted; PtlMEUnlink
 * of an entry still waiting for its append cancels the append, which
 * then finds nothing (no LINK) */
static void
test_me_gone(void **state)
{
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_env e;
	struct t_me me;
	uint32_t ct, h1, h2, h3;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	t_me_default(&me);
	me.match_bits = 4;
	me.options |= SPINNIC_PTL_ME_USE_ONCE | SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	h1 = t_me_append(&e, &me);
	me.match_bits = 6;
	h2 = t_me_append(&e, &me);
	h3 = me_reserve(&e, &me);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_UNLINK, h1);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_UNLINK, h2);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_APPEND, h3);
	t_hdr(&e, &h, 4, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	t_ev_drain(&e, T_EQ_OFF);
	assert_int_equal(me_unlink_ctrl(&e, h2), SPINNIC_PTL_OK);
	assert_int_equal(me_unlink_ctrl(&e, h3), SPINNIC_PTL_OK);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(stat_me_gone(&e), 3);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(done(&e), 3);
	t_env_teardown(&e);
}

/* PtlCTCancelTriggered and PtlCTFree drop pending appends and release
 * their entries (and their places in the list; PtlPTFree waits for
 * them: PT_IN_USE); a triggered unlink that fires first cancels the
 * append too */
static void
test_me_cancel_free(void **state)
{
	struct spinnic_ctrl_msg m;
	struct spinnic_cmd cmd;
	struct spinnic_event ev;
	struct t_env e;
	struct t_me me;
	uint32_t ct, h;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	t_me_default(&me);
	h = me_reserve(&e, &me);
	arm_me(&e, ct, 5, SPINNIC_CMD_ME_APPEND, h);
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = e.ni;
	m.u.pt.pt_index = e.pt;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_FREE, &m),
			 SPINNIC_PTL_PT_IN_USE);
	ct_op(&e, &cmd, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &cmd, 1), 0);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(me_unlink_ctrl(&e, h), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(done(&e), 1);

	h = me_reserve(&e, &me);
	arm_me(&e, ct, 5, SPINNIC_CMD_ME_APPEND, h);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct = ct;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(done(&e), 2);
	/* a TRIG still in the ring then finds the CT gone: refused, and the
	 * entry it would have linked is released */
	h = me_reserve(&e, &me);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_APPEND, h);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(done(&e), 3);

	ct = ct_alloc(&e, 0);
	h = me_reserve(&e, &me);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_UNLINK, h);
	assert_int_equal(stat_mes_live(&e), 1);
	arm_me(&e, ct, 1, SPINNIC_CMD_ME_APPEND, h);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(stat_mes_live(&e), 0);
	assert_int_equal(stat_me_gone(&e), 1);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = e.ni;
	m.u.pt.pt_index = e.pt;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_FREE, &m),
			 SPINNIC_PTL_OK);
	t_env_teardown(&e);
}

/* max_triggered_ops counts them: the one past it is refused and its
 * entry released; a reserved entry holds its place in the list */
static void
test_me_limit(void **state)
{
	struct ptl_nic_conf cf;
	struct ptl_nic_stats st;
	struct spinnic_event ev;
	struct t_env e;
	struct t_me me;
	uint32_t ct, h[T_TRIG_MAX + 1];
	unsigned i;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	t_me_default(&me);
	for (i = 0; i <= T_TRIG_MAX; i++) {
		h[i] = me_reserve(&e, &me);
		arm_me(&e, ct, 1, SPINNIC_CMD_ME_APPEND, h[i]);
	}
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_refused, 1);
	assert_int_equal(st.mes_live, T_TRIG_MAX);
	assert_int_equal(me_unlink_ctrl(&e, h[T_TRIG_MAX]),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(done(&e), T_TRIG_MAX + 1);
	for (i = 0; i < T_TRIG_MAX; i++)
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_LINK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	t_env_teardown(&e);

	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_list_size = 2;
	t_env_setup_opts(&e, 64, 0, &cf);
	t_me_default(&me);
	t_me_append(&e, &me);
	me_reserve(&e, &me);
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
			 SPINNIC_PTL_LIST_TOO_LONG);
	t_env_teardown(&e);
}

/* ---- persistent (re-arming) triggered operations ------------------------ */

/* TRIG(trig_ct, threshold, period) + op */
static void
arm_p(struct t_env *e, uint32_t trig_ct, uint64_t threshold, uint64_t period,
      const struct spinnic_cmd *op)
{
	struct spinnic_cmd c[2];

	memset(&c[0], 0, sizeof(c[0]));
	c[0].op = SPINNIC_CMD_TRIG;
	c[0].ni = e->ni;
	c[0].md = trig_ct;
	c[0].length = threshold;
	c[0].local_offset = period;
	c[1] = *op;
	assert_int_equal(post(e, c, 2), 0);
}

static void
arm_put_p(struct t_env *e, uint32_t trig_ct, uint64_t threshold,
	  uint64_t period, uint32_t md, uint64_t tag)
{
	struct spinnic_cmd op;

	put_op(e, &op, md, tag);
	arm_p(e, trig_ct, threshold, period, &op);
}

/* 2, 5, 8, ...: once per crossed threshold, also several at one jump;
 * a one-shot entry waiting at a threshold comes before the re-armed
 * instance there (that one counts as armed when it fired) */
static void
test_rearm_thresholds(void **state)
{
	struct ptl_nic_stats st;
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put_p(&e, ct, 2, 3, md, 1);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(hook.n, 0);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);      /* 2 */
	assert_int_equal(hook.n, 1);
	assert_int_equal(ptl_ct_inc(e.c, ct, 2, 0), 0);      /* 4 */
	assert_int_equal(hook.n, 1);
	assert_int_equal(ptl_ct_inc(e.c, ct, 0, 1), 0);      /* 5 */
	assert_int_equal(hook.n, 2);
	assert_int_equal(ptl_ct_inc(e.c, ct, 7, 0), 0);      /* 12: 8, 11 */
	assert_int_equal(hook.n, 4);
	/* pending until cancelled */
	assert_int_equal(done(&e), 0);
	/* tag 1 next at 14 (armed there when it fired at 11); one-shots at
	 * 14 and 15 and a period-1 one from 13 armed now, a jump to 15:
	 * 13: 4; 14: 1, 2, 4 (re-armed after 2); 15: 3, 4 */
	arm_put(&e, ct, 14, md, 2);
	arm_put(&e, ct, 15, md, 3);
	arm_put_p(&e, ct, 13, 1, md, 4);   /* 13, 14, 15, ... */
	assert_int_equal(ptl_ct_inc(e.c, ct, 3, 0), 0);
	expect((const uint64_t[]){ 1, 1, 1, 1, 4, 1, 2, 4, 3, 4 }, 10);
	assert_int_equal(done(&e), 2);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_fired, 10);
	assert_int_equal(st.trig_rearmed, 8);
	/* a Set down and up crosses the thresholds again from where the
	 * entry is now (tag 1: 17; tag 4: 16, then 17 after tag 1) */
	assert_int_equal(ptl_ct_set(e.c, ct, 0, 0), 0);
	assert_int_equal(hook.n, 10);
	assert_int_equal(ptl_ct_set(e.c, ct, 17, 0), 0);
	expect((const uint64_t[]){ 1, 1, 1, 1, 4, 1, 2, 4, 3, 4, 4, 1, 4 },
	       13);
	t_env_teardown(&e);
}

/* Cancel stops the re-arming; instances that fired and wait for room
 * still run, and only then is the entry given back (done) */
static void
test_rearm_cancel(void **state)
{
	struct ptl_cmd out[4];
	struct ptl_nic_stats st;
	struct spinnic_cmd op;
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put_p(&e, ct, 1, 1, md, 7);
	hook.rc = -ENOBUFS;
	assert_int_equal(ptl_ct_inc(e.c, ct, 3, 0), 0);
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	assert_int_equal(done(&e), 0);
	hook.rc = 0;
	assert_int_equal(ptl_cmd_poll(e.c, out, 4), 0);
	expect((const uint64_t[]){ 7, 7, 7 }, 3);
	assert_int_equal(done(&e), 1);
	assert_int_equal(ptl_ct_inc(e.c, ct, 10, 0), 0);
	assert_int_equal(hook.n, 3);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_cancelled, 1);
	/* PtlCTFree: the same */
	arm_put_p(&e, ct, 14, 2, md, 8);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(hook.n, 4);
	{
		struct spinnic_ctrl_msg m;

		memset(&m, 0, sizeof(m));
		m.u.ct.ni = e.ni;
		m.u.ct.ct = ct;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m),
				 SPINNIC_PTL_OK);
	}
	assert_int_equal(done(&e), 2);
	t_env_teardown(&e);
}

/* 1000 instances of a 3-hop chain of re-armed CTIncs ending in a re-armed
 * put: each instance moves every counter by one and the put once */
static void
test_rearm_chain(void **state)
{
	struct spinnic_cmd op;
	struct t_env e;
	uint32_t ct[4], md;
	unsigned i, k;

	(void)state;
	env(&e);
	for (k = 0; k < 4; k++)
		ct[k] = ct_alloc(&e, k);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	for (k = 0; k < 3; k++) {
		ct_op(&e, &op, SPINNIC_CMD_CT_INC, ct[k + 1], 1, 0);
		arm_p(&e, ct[k], 1, 1, &op);
	}
	arm_put_p(&e, ct[3], 1, 1, md, 5);
	for (i = 1; i <= 1000; i++) {
		assert_int_equal(ptl_ct_inc(e.c, ct[0], 1, 0), 0);
		for (k = 0; k < 4; k++)
			assert_int_equal(rec(&e, k)->success, i);
		assert_int_equal(hook.n, i);
	}
	assert_int_equal(done(&e), 0);
	/* four entries, whatever the instances: the limit (8) has room */
	arm_put(&e, ct[3], 2000, md, 6);
	for (k = 0; k < 4; k++) {
		ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct[k], 0, 0);
		assert_int_equal(post(&e, &op, 1), 0);
	}
	assert_int_equal(done(&e), 5);
	t_env_teardown(&e);
}

/* threshold + period past 2^64 - 1: no wrap to an early fire, the entry
 * ends there and is given back */
static void
test_rearm_overflow(void **state)
{
	struct ptl_nic_stats st;
	struct t_env e;
	uint32_t ct, md;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	/* fires at arm (0), re-armed at 2^64 - 1 exactly */
	arm_put_p(&e, ct, 0, UINT64_MAX, md, 1);
	arm_put_p(&e, ct, UINT64_MAX - 4, 3, md, 2);
	assert_int_equal(hook.n, 1);
	assert_int_equal(done(&e), 0);
	assert_int_equal(ptl_ct_set(e.c, ct, UINT64_MAX - 1, 0), 0);
	expect((const uint64_t[]){ 1, 2, 2 }, 3);  /* -4, -1; then ends */
	assert_int_equal(done(&e), 1);
	assert_int_equal(ptl_ct_set(e.c, ct, UINT64_MAX, 0), 0);
	expect((const uint64_t[]){ 1, 2, 2, 1 }, 4);  /* then ends */
	assert_int_equal(done(&e), 2);
	assert_int_equal(ptl_ct_set(e.c, ct, 0, 0), 0);
	assert_int_equal(ptl_ct_set(e.c, ct, 5, 0), 0);
	assert_int_equal(hook.n, 4);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_rearm_ended, 2);
	t_env_teardown(&e);
}

/* max_triggered_ops counts a persistent entry once; ME ops may not be
 * persistent */
static void
test_rearm_limit(void **state)
{
	struct ptl_nic_stats st;
	struct spinnic_cmd op;
	struct t_env e;
	uint32_t ct, md;
	unsigned i;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	for (i = 0; i < T_TRIG_MAX; i++)
		arm_put_p(&e, ct, 1, 1, md, i);
	assert_int_equal(ptl_ct_inc(e.c, ct, 5, 0), 0);
	assert_int_equal(hook.n, 5 * T_TRIG_MAX);
	arm_put(&e, ct, 100, md, 99);   /* full */
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_refused, 1);
	memset(&op, 0, sizeof(op));
	op.op = SPINNIC_CMD_ME_UNLINK;
	op.ni = e.ni;
	arm_p(&e, ct, 100, 1, &op);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_refused, 2);
	assert_int_equal(done(&e), 2);
	/* cancel gives all back; refilled entries that fire at arm (the
	 * counter is at 5) and a CT free, again */
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	assert_int_equal(done(&e), 2 + T_TRIG_MAX);
	for (i = 0; i < T_TRIG_MAX; i++)
		arm_put_p(&e, ct, 1, 1, md, i);
	assert_int_equal(hook.n, 10 * T_TRIG_MAX);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_refused, 2);
	t_env_teardown(&e);
}

/* Many entries, many instances each (the FIFO grows), cancel, refill */
static void
test_rearm_grow(void **state)
{
	struct ptl_nic_conf cf;
	struct ptl_nic_stats st;
	struct spinnic_cmd op;
	struct t_env e;
	uint32_t ct, dst;
	unsigned i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_triggered_ops = 1024;
	t_env_setup_opts(&e, 64, 0, &cf);
	ct = ct_alloc(&e, 0);
	dst = ct_alloc(&e, 1);
	ct_op(&e, &op, SPINNIC_CMD_CT_INC, dst, 1, 0);
	for (i = 0; i < 1020; i++)
		arm_p(&e, ct, 1, 1, &op);
	assert_int_equal(ptl_ct_inc(e.c, ct, 3, 0), 0);
	assert_int_equal(rec(&e, 1)->success, 3 * 1020);
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	assert_int_equal(done(&e), 1020);
	ct_op(&e, &op, SPINNIC_CMD_CT_INC, dst, 1, 0);
	for (i = 0; i < 1020; i++)
		arm_p(&e, ct, 1, 1, &op);
	assert_int_equal(rec(&e, 1)->success, 6 * 1020);
	ptl_nic_stats_get(e.nic, &st);
	assert_int_equal(st.trig_refused, 0);
	t_env_teardown(&e);
}

/* A re-armed increment of its own trigger counter feeds itself for ever:
 * each run stops after a budget (the caller gets control back), every
 * poll goes on, the cancel ends it */
static void
test_rearm_self_feeding(void **state)
{
	struct ptl_cmd out[4];
	struct spinnic_cmd op;
	struct t_env e;
	uint64_t v1, v2, v3;
	uint32_t ct;
	unsigned i;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	ct_op(&e, &op, SPINNIC_CMD_CT_INC, ct, 1, 0);
	arm_p(&e, ct, 1, 1, &op);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	v1 = rec(&e, 0)->success;
	assert_true(v1 > 1 && v1 < 1000000);
	(void)ptl_cmd_poll(e.c, out, 4);
	v2 = rec(&e, 0)->success;
	assert_true(v2 > v1);
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	for (i = 0; i < 4; i++)
		(void)ptl_cmd_poll(e.c, out, 4);
	v3 = rec(&e, 0)->success;
	(void)ptl_cmd_poll(e.c, out, 4);
	assert_int_equal(rec(&e, 0)->success, v3);
	assert_int_equal(done(&e), 1);
	t_env_teardown(&e);
}

/* A persistent append of a use-once entry: a fresh copy linked at each
 * firing (two at a jump over two thresholds), each consumed by one
 * message; PtlMEUnlink of the handle unlinks the copies still linked and
 * ends the appends (later firings: trig_me_gone); a cancel does the same */
static void
test_rearm_me_append(void **state)
{
	struct spinnic_event ev;
	struct spinnic_cmd op;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_env e;
	struct t_me me;
	uint64_t live0, gone0;
	uint32_t ct, tmpl;
	unsigned i;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	live0 = stat_mes_live(&e);
	t_me_default(&me);
	me.match_bits = 5;
	me.user_ptr = 0x55;
	me.options |= SPINNIC_PTL_ME_USE_ONCE;
	tmpl = me_reserve(&e, &me);
	memset(&op, 0, sizeof(op));
	op.op = SPINNIC_CMD_ME_APPEND;
	op.ni = e.ni;
	op.md = tmpl;
	arm_p(&e, ct, 1, 1, &op);
	t_hdr(&e, &h, 5, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_LINK);
		assert_int_equal(ev.user_ptr, 0x55);
		assert_int_equal(stat_mes_live(&e), live0 + 2);
		assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
		assert_int_equal(m.list, PTL_MATCH_PRIORITY);
		assert_int_equal(m.user_ptr, 0x55);
		ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
		/* use-once: this instance's copy is gone, the template not */
		assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
		assert_int_equal(stat_mes_live(&e), live0 + 1);
		t_ev_drain(&e, T_EQ_OFF);
	}
	/* a jump over two thresholds: two copies */
	assert_int_equal(ptl_ct_inc(e.c, ct, 2, 0), 0);
	assert_int_equal(stat_mes_live(&e), live0 + 3);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(stat_mes_live(&e), live0 + 2);
	/* PtlMEUnlink on the handle: template and the copy still linked */
	assert_int_equal(me_unlink_ctrl(&e, tmpl), SPINNIC_PTL_OK);
	assert_int_equal(stat_mes_live(&e), live0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	gone0 = stat_me_gone(&e);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(stat_me_gone(&e), gone0 + 1);
	assert_int_equal(stat_mes_live(&e), live0);
	assert_int_equal(done(&e), 0);
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	assert_int_equal(done(&e), 1);

	/* cancel: the template and its copies go, the handle is invalid */
	tmpl = me_reserve(&e, &me);
	memset(&op, 0, sizeof(op));
	op.op = SPINNIC_CMD_ME_APPEND;
	op.ni = e.ni;
	op.md = tmpl;
	arm_p(&e, ct, 7, 1, &op);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);   /* 6 -> 7 */
	assert_int_equal(stat_mes_live(&e), live0 + 2);
	ct_op(&e, &op, SPINNIC_CMD_CT_CANCEL_TRIG, ct, 0, 0);
	assert_int_equal(post(&e, &op, 1), 0);
	assert_int_equal(stat_mes_live(&e), live0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	assert_int_equal(me_unlink_ctrl(&e, tmpl), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(done(&e), 2);
	t_env_teardown(&e);
}

/* One Set crossing 100 000 thresholds of a period-1 entry: the fired
 * FIFO takes what it can (65 536), the rest waits in order and later
 * polls start it; nothing lost, nothing twice */
static void
test_rearm_fifo_full(void **state)
{
	struct ptl_cmd out[4];
	struct ptl_nic_stats st;
	struct t_env e;
	uint32_t ct, md;
	unsigned polls = 0;

	(void)state;
	env(&e);
	ct = ct_alloc(&e, 0);
	md = md_bind(&e, SPINNIC_HANDLE_NONE);
	arm_put_p(&e, ct, 1, 1, md, 3);
	assert_int_equal(ptl_ct_set(e.c, ct, 100000, 0), 0);
	while (hook.total < 100000 && polls++ < 100)
		(void)ptl_cmd_poll(e.c, out, 4);
	assert_int_equal(hook.total, 100000);
	(void)ptl_cmd_poll(e.c, out, 4);
	assert_int_equal(hook.total, 100000);
	ptl_nic_stats_get(e.nic, &st);
	assert_true(st.trig_deferred >= 1);
	assert_int_equal(st.trig_fired, 100000);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), 0);
	assert_int_equal(hook.total, 100001);
	assert_int_equal(done(&e), 0);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_order),
		cmocka_unit_test(test_fires_at_arm),
		cmocka_unit_test(test_ct_check),
		cmocka_unit_test(test_cancel_and_free),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_chain_100),
		cmocka_unit_test(test_resolved_at_fire),
		cmocka_unit_test(test_busy_hook),
		cmocka_unit_test(test_fire_under_nic_lock),
		cmocka_unit_test(test_atomic_behind_trig),
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_me_append_fires),
		cmocka_unit_test(test_me_append_at_arm),
		cmocka_unit_test(test_me_unlink_fires),
		cmocka_unit_test(test_me_gone),
		cmocka_unit_test(test_me_cancel_free),
		cmocka_unit_test(test_me_limit),
		cmocka_unit_test(test_rearm_thresholds),
		cmocka_unit_test(test_rearm_cancel),
		cmocka_unit_test(test_rearm_chain),
		cmocka_unit_test(test_rearm_overflow),
		cmocka_unit_test(test_rearm_limit),
		cmocka_unit_test(test_rearm_fifo_full),
		cmocka_unit_test(test_rearm_grow),
		cmocka_unit_test(test_rearm_self_feeding),
		cmocka_unit_test(test_rearm_me_append),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
