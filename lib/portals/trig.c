/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations (Portals 4.1 §3.15): a pool of entries per NI
 * (max_triggered_ops), a pending list per CT sorted by (threshold, arm
 * order), and a fired FIFO per NI that one thread at a time runs: counter
 * operations inline, data operations through the NIC's originate hook.
 * Locks: (nic->lock,) ct->lock, then the pool's. doc/NOTES.md "Triggered
 * operations". A persistent entry (TRIG local_offset = period > 0) goes
 * back on its CT's list at threshold + period each time it fires, until
 * cancelled: doc/NOTES.md "Re-arming triggered operations".
 */
#include <stdlib.h>

#include "ptl_internal.h"
#include "trig.h"

void
ptl_nic_set_originate(struct ptl_nic *nic, ptl_originate_fn fn, void *arg)
{
	nic->originate_arg = arg;
	__atomic_store_n(&nic->originate, fn, __ATOMIC_RELEASE);
}

/* One TRIG command of NI @p kind left the NIC: the shim's limit count */
static void
trig_done(struct ptl_client *c, unsigned kind)
{
	__atomic_fetch_add(&c->ring->trig_done[kind], 1, __ATOMIC_RELEASE);
}

/* ---- the pool (pool->lock held) ----------------------------------------- */

/* The fired FIFO's most records: room for every entry, and for bursts of
 * persistent ones (a counter jump crossing many of their thresholds) */
#define PTL_TRIG_FQ_MAX (1u << 16)

static uint32_t
pow2_at_least(uint32_t n)
{
	uint32_t p = 64;

	while (p < n)
		p <<= 1;
	return p;
}

static uint32_t
ent_alloc(struct ptl_trig_pool *pool, uint32_t n)
{
	uint32_t i;

	if (pool->ents == NULL && n > 0) {
		pool->ents = calloc(n, sizeof(*pool->ents));
		pool->fq_cap = pow2_at_least(n);
		pool->fq = calloc(pool->fq_cap, sizeof(*pool->fq));
		if (pool->ents == NULL || pool->fq == NULL) {
			free(pool->ents);
			free(pool->fq);
			pool->ents = NULL;
			pool->fq = NULL;
			pool->fq_cap = 0;
		}
		pool->n = pool->ents == NULL ? 0 : n;
	}
	if (pool->nfree > 0) {
		i = pool->free_head;
		pool->free_head = pool->ents[i].next;
		pool->nfree--;
		return i;
	}
	return pool->used_top < pool->n ? pool->used_top++ : PTL_NIL;
}

static void
ent_free(struct ptl_trig_pool *pool, uint32_t i)
{
	pool->ents[i].next = pool->free_head;
	pool->free_head = i;
	pool->nfree++;
}

/* Drop one reference to entry @p i (its CT list's or one FIFO record's);
 * the last one frees it: one TRIG command left the NIC */
static void
ent_put(struct ptl_client *c, unsigned kind, struct ptl_trig_pool *pool,
	uint32_t i)
{
	if (--pool->ents[i].nref > 0)
		return;
	ent_free(pool, i);
	trig_done(c, kind);
}

/* Is there room for one more FIFO record (growing the ring up to
 * PTL_TRIG_FQ_MAX)? The head moves to slot 0 when it grows */
static bool
fq_room(struct ptl_trig_pool *pool)
{
	uint32_t cap = pool->fq_cap * 2, k, *fq;

	if (pool->nfired < pool->fq_cap)
		return true;
	if (pool->fq_cap == 0 || cap > PTL_TRIG_FQ_MAX ||
	    (fq = malloc(cap * sizeof(*fq))) == NULL)
		return false;
	for (k = 0; k < pool->nfired; k++)
		fq[k] = pool->fq[(pool->fq_head + k) & (pool->fq_cap - 1)];
	free(pool->fq);
	pool->fq = fq;
	pool->fq_cap = cap;
	pool->fq_head = 0;
	return true;
}

/* fq_room() said yes: entry @p i to the FIFO's tail (one more reference) */
static void
fired_push(struct ptl_trig_pool *pool, uint32_t i)
{
	pool->fq[(pool->fq_head + pool->nfired) & (pool->fq_cap - 1)] = i;
	pool->ents[i].nref++;
	__atomic_store_n(&pool->nfired, pool->nfired + 1, __ATOMIC_RELAXED);
}

/* ---- pending lists (ct->lock held) -------------------------------------- */

/* After every entry of a threshold <= the new one: equal ones in arm order
 * (a re-armed persistent entry counts as armed when it fired) */
static void
pending_insert(struct ptl_trig_pool *pool, struct ptl_ct *ct, uint32_t i)
{
	uint64_t thr = pool->ents[i].threshold;
	uint32_t prev = PTL_NIL, cur = ct->trig_head, k;

	for (k = 0; k < ct->trig_n && pool->ents[cur].threshold <= thr; k++) {
		prev = cur;
		cur = pool->ents[cur].next;
	}
	pool->ents[i].next = k < ct->trig_n ? cur : PTL_NIL;
	if (prev == PTL_NIL)
		ct->trig_head = i;
	else
		pool->ents[prev].next = i;
	ct->trig_n++;
	pool->ents[i].nref++;
}

/* The head of @p ct's list, unlinked (its reference passes to the caller) */
static uint32_t
pending_pop(struct ptl_trig_pool *pool, struct ptl_ct *ct)
{
	uint32_t i = ct->trig_head;

	ct->trig_head = pool->ents[i].next;
	ct->trig_n--;
	return i;
}

void
ptl_trig_fire_locked(struct ptl_client *c, unsigned kind, struct ptl_ct *ct)
{
	struct ptl_trig_pool *pool = &c->ni[kind].trig;
	struct ptl_trig *e;
	uint64_t sum;
	uint32_t i;

	if (ct->trig_n == 0)
		return;
	/* failures count toward the threshold (spec: "the sum") */
	sum = __atomic_load_n(&ct->rec->success, __ATOMIC_ACQUIRE) +
	      __atomic_load_n(&ct->rec->failure, __ATOMIC_ACQUIRE);
	ptl_lock(&pool->lock);
	while (ct->trig_n > 0 && pool->ents[ct->trig_head].threshold <= sum) {
		if (!fq_room(pool)) {
			/* the rest waits, in order: ptl_trig_run goes on */
			if (!pool->backlog)
				PTL_STAT(c->nic, trig_deferred);
			__atomic_store_n(&pool->backlog, true,
					 __ATOMIC_RELEASE);
			break;
		}
		i = pending_pop(pool, ct);
		e = &pool->ents[i];
		fired_push(pool, i);
		PTL_STAT(c->nic, trig_fired);
		if (e->period != 0 && e->threshold <= UINT64_MAX - e->period) {
			/* once per crossed threshold: seen again this loop
			 * when the sum is past the next one too */
			e->threshold += e->period;
			pending_insert(pool, ct, i);
			PTL_STAT(c->nic, trig_rearmed);
		} else if (e->period != 0) {
			/* a hostile or absurd period: never wrap around */
			PTL_STAT(c->nic, trig_rearm_ended);
		}
		ent_put(c, kind, pool, i); /* the CT list's reference */
	}
	ptl_unlock(&pool->lock);
}

void
ptl_trig_drop_locked(struct ptl_client *c, unsigned kind, struct ptl_ct *ct)
{
	struct ptl_trig_pool *pool = &c->ni[kind].trig;
	uint32_t i;

	if (ct->trig_n == 0)
		return;
	ptl_lock(&pool->lock);
	while (ct->trig_n > 0) {
		i = pending_pop(pool, ct);
		/* an append that will not run gives its entry back; a
		 * persistent one its template and the copies still linked
		 * (later fired instances find it gone) */
		if (pool->ents[i].cmd.op == SPINNIC_CMD_ME_APPEND)
			ptl_me_unreserve(c, pool->ents[i].cmd.md);
		/* a persistent one's fired records still run, then free it */
		ent_put(c, kind, pool, i);
		PTL_STAT(c->nic, trig_cancelled);
	}
	ptl_unlock(&pool->lock);
}

void
ptl_trig_drop_fired(struct ptl_client *c, unsigned kind)
{
	struct ptl_trig_pool *pool = &c->ni[kind].trig;
	uint32_t keep, k;

	ptl_lock(&pool->lock);
	/* a running thread pops its head itself */
	keep = pool->running && pool->nfired > 0 ? 1 : 0;
	for (k = keep; k < pool->nfired; k++) {
		ent_put(c, kind, pool,
			pool->fq[(pool->fq_head + k) & (pool->fq_cap - 1)]);
		PTL_STAT(c->nic, trig_cancelled);
	}
	__atomic_store_n(&pool->nfired, keep, __ATOMIC_RELAXED);
	__atomic_store_n(&pool->backlog, false, __ATOMIC_RELAXED);
	ptl_unlock(&pool->lock);
}

/* ---- arming ------------------------------------------------------------- */

/* May @p op wait on a counter? Not a second TRIG, nor a stream piece */
static bool
arm_op_ok(const struct spinnic_cmd *trig, const struct spinnic_cmd *op)
{
	switch (op->op) {
	case SPINNIC_CMD_NOP:
	case SPINNIC_CMD_SPUT_START:
	case SPINNIC_CMD_SPUT_STREAM:
	case SPINNIC_CMD_PROCESS_PUT:
	case SPINNIC_CMD_TRIG:
	case SPINNIC_CMD_CT_CHECK:
	case SPINNIC_CMD_CT_CANCEL_TRIG:
		return false;
	case SPINNIC_CMD_ME_UNLINK:
		/* not persistent (doc/NOTES.md "Re-arming triggered
		 * operations"); a persistent ME_APPEND links copies */
		return trig->local_offset == 0 && trig->flags == 0 &&
		       op->ni == trig->ni;
	default:
		return op->op < SPINNIC_CMD_OP_MAX && trig->flags == 0 &&
		       op->ni == trig->ni;
	}
}

/* The trigger CT of @p trig, still to be checked under its lock; NULL
 * when the NI or the CT is not valid now */
static struct ptl_ct *
arm_ct(struct ptl_client *c, const struct spinnic_cmd *trig)
{
	unsigned kind = ptl_handle_ni(trig->ni);
	struct ptl_ct *ct = NULL;
	struct ptl_ni *ni;

	ptl_lock(&c->nic->lock);
	ni = ptl_ni_get(c, trig->ni);
	if (ni != NULL && ptl_ct_valid(ni, kind, trig->md))
		ct = &ni->cts[ptl_handle_idx(trig->md)];
	ptl_unlock(&c->nic->lock);
	return ct;
}

/* Link entry @p i on @p ct, fire it when its threshold is met already.
 * @return 0, -EBADF (the CT went meanwhile) */
static int
arm_link(struct ptl_client *c, unsigned kind, struct ptl_ct *ct, uint32_t h,
	 uint32_t i)
{
	struct ptl_trig_pool *pool = &c->ni[kind].trig;

	ptl_lock(&ct->lock);
	if (!ct->used || (ct->gen & PTL_H_GEN_MASK) != ptl_handle_gen(h)) {
		ptl_unlock(&ct->lock);
		return -EBADF;
	}
	ptl_lock(&pool->lock);
	pending_insert(pool, ct, i);
	ptl_unlock(&pool->lock);
	PTL_STAT(c->nic, trig_armed);
	/* the same lock as every update: no increment slips between */
	ptl_trig_fire_locked(c, kind, ct);
	ptl_unlock(&ct->lock);
	return 0;
}

void
ptl_trig_arm(struct ptl_client *c, const struct spinnic_cmd *trig,
	     const struct spinnic_cmd *op)
{
	unsigned kind = ptl_handle_ni(trig->ni);
	struct ptl_trig_pool *pool = &c->ni[kind].trig;
	struct ptl_ct *ct = arm_op_ok(trig, op) ? arm_ct(c, trig) : NULL;
	uint32_t i = PTL_NIL;

	if (ct != NULL) {
		ptl_lock(&pool->lock);
		i = ent_alloc(pool,
			      (uint32_t)c->ni[kind].lim.max_triggered_ops);
		if (i != PTL_NIL) {
			pool->ents[i].cmd = *op;
			pool->ents[i].threshold = trig->length;
			pool->ents[i].period = trig->local_offset;
			pool->ents[i].ct = ptl_handle_idx(trig->md);
			pool->ents[i].nref = 0;
		}
		ptl_unlock(&pool->lock);
	}
	if (i != PTL_NIL && arm_link(c, kind, ct, trig->md, i) == 0) {
		ptl_trig_run(c);
		return;
	}
	if (i != PTL_NIL) {
		ptl_lock(&pool->lock);
		ent_free(pool, i);
		ptl_unlock(&pool->lock);
	}
	if (op->op == SPINNIC_CMD_ME_APPEND) {
		ptl_lock(&c->nic->lock);
		ptl_me_unreserve(c, op->md);
		ptl_unlock(&c->nic->lock);
	}
	PTL_DBG("client pid %u: triggered op %u on CT %#x refused", c->pid,
		op->op, trig->md);
	PTL_STAT(c->nic, trig_refused);
	PTL_STAT(c->nic, bad_cmd);
	trig_done(c, kind);
}

/* The CT of handle @p h, locked; NULL when it is not valid */
static struct ptl_ct *
ct_locked(struct ptl_client *c, uint32_t h)
{
	struct ptl_ni *ni = &c->ni[ptl_handle_ni(h)];
	uint32_t i = ptl_handle_idx(h);
	struct ptl_ct *ct;

	if (!ni->allocated || i >= ni->n_ct)
		return NULL;
	ct = &ni->cts[i];
	ptl_lock(&ct->lock);
	if (ct->used && (ct->gen & PTL_H_GEN_MASK) == ptl_handle_gen(h))
		return ct;
	ptl_unlock(&ct->lock);
	return NULL;
}

void
ptl_trig_check(struct ptl_client *c, uint32_t h)
{
	struct ptl_ct *ct = ct_locked(c, h);

	if (ct == NULL)
		return;
	ptl_trig_fire_locked(c, ptl_handle_ni(h), ct);
	ptl_unlock(&ct->lock);
	ptl_trig_run(c);
}

void
ptl_trig_cancel(struct ptl_client *c, uint32_t h)
{
	struct ptl_ct *ct;

	/* reserved entries of dropped appends are released under it */
	ptl_lock(&c->nic->lock);
	ct = ct_locked(c, h);
	if (ct != NULL) {
		ptl_trig_drop_locked(c, ptl_handle_ni(h), ct);
		ptl_unlock(&ct->lock);
	}
	ptl_unlock(&c->nic->lock);
}

/* ---- running what fired ------------------------------------------------- */

/* A fired data operation to the NIC's originate hook. @return 0 or
 * -EAGAIN (no room now) */
static int
trig_originate(struct ptl_client *c, const struct spinnic_cmd *cmd,
	       const struct ptl_cmd *out)
{
	struct ptl_nic *nic = c->nic;
	ptl_originate_fn fn = __atomic_load_n(&nic->originate,
					      __ATOMIC_ACQUIRE);
	int rc = fn == NULL ? -ENOTSUP : fn(nic->originate_arg, c, out);

	if (rc == -ENOBUFS)
		return -EAGAIN;
	if (rc != 0) {
		PTL_DBG("client pid %u: fired op %u not started: %d", c->pid,
			cmd->op, rc);
		ptl_cmd_fail(c, cmd, out->eq, SPINNIC_PTL_NI_UNDELIVERABLE);
	}
	return 0;
}

/* A persistent ME_APPEND fired: a fresh copy of its reserved entry (the
 * template stays for the next firing). @return 0 or -EAGAIN */
static int
trig_me_copy(struct ptl_client *c, const struct spinnic_cmd *cmd)
{
	struct ptl_nic *nic = c->nic;
	int rc = -EINVAL;

	if (!ptl_trig_lock(&nic->lock, false))
		return -EAGAIN;
	if (ptl_ni_get(c, cmd->ni) != NULL &&
	    ptl_handle_type(cmd->md) == PTL_HT_ME &&
	    ptl_handle_ni(cmd->md) == ptl_handle_ni(cmd->ni))
		rc = ptl_me_link_copy(c, cmd->md);
	ptl_unlock(&nic->lock);
	if (rc == -ENOENT)
		PTL_STAT(nic, trig_me_gone);
	else if (rc == -ENOSPC)
		PTL_STAT(nic, trig_me_full);
	else if (rc != 0)
		PTL_STAT(nic, bad_cmd);
	return 0;
}

/* One fired operation, as if it came from the ring now (its MD is read
 * as it is now); @p persistent: of a persistent entry. @return 0 or
 * -EAGAIN (again later) */
static int
trig_exec(struct ptl_client *c, const struct spinnic_cmd *cmd,
	  bool persistent)
{
	struct ptl_cmd out;
	int rc;

	if (persistent && cmd->op == SPINNIC_CMD_ME_APPEND)
		return trig_me_copy(c, cmd);
	rc = ptl_cmd_take(c, cmd, &out, false);
	return rc <= 0 ? rc : trig_originate(c, cmd, &out);
}

/* Fired operations one trig_run_ni runs at most: persistent entries can
 * feed themselves for ever (a re-armed CTInc on its own trigger counter,
 * a ring of them): the rest waits for the next ptl_trig_run (every
 * ptl_cmd_poll), so such a loop costs each poll this much, no more */
#define PTL_TRIG_RUN_MAX 4096u

/* Run NI @p kind's fired FIFO unless another thread runs it: a worklist,
 * so a chain of triggered counter operations never recurses. */
static void
trig_run_ni(struct ptl_client *c, unsigned kind)
{
	struct ptl_trig_pool *pool = &c->ni[kind].trig;
	struct spinnic_cmd cmd;
	unsigned budget = PTL_TRIG_RUN_MAX;
	bool persistent;
	uint32_t i;

	ptl_lock(&pool->lock);
	if (pool->running || pool->nfired == 0) {
		ptl_unlock(&pool->lock);
		return;
	}
	pool->running = true;
	while (pool->nfired > 0) {
		if (budget-- == 0) {
			PTL_STAT(c->nic, trig_deferred);
			break;
		}
		/* only the running thread pops: the head stays (a grown
		 * ring moved it, so it is read again after each unlock) */
		i = pool->fq[pool->fq_head];
		cmd = pool->ents[i].cmd;
		persistent = pool->ents[i].period != 0;
		ptl_unlock(&pool->lock);
		if (trig_exec(c, &cmd, persistent) != 0) {
			PTL_STAT(c->nic, trig_retried);
			ptl_lock(&pool->lock);
			break;
		}
		ptl_lock(&pool->lock);
		pool->fq_head = (pool->fq_head + 1) & (pool->fq_cap - 1);
		__atomic_store_n(&pool->nfired, pool->nfired - 1,
				 __ATOMIC_RELAXED);
		ent_put(c, kind, pool, i);
	}
	pool->running = false;
	ptl_unlock(&pool->lock);
}

/* The FIFO was full when entries of some CT of NI @p kind were due: fire
 * them now (bounded by the FIFO's room, as every firing is) */
static void
trig_resume(struct ptl_client *c, unsigned kind)
{
	struct ptl_ni *ni = &c->ni[kind];
	struct ptl_trig_pool *pool = &ni->trig;
	uint32_t i;

	ptl_lock(&pool->lock);
	if (!pool->backlog || pool->nfired >= pool->fq_cap) {
		ptl_unlock(&pool->lock);
		return;
	}
	__atomic_store_n(&pool->backlog, false, __ATOMIC_RELAXED);
	ptl_unlock(&pool->lock);
	/* as ct_locked: the CTs stay while the client is attached */
	for (i = 0; ni->allocated && i < ni->n_ct; i++) {
		struct ptl_ct *ct = &ni->cts[i];

		ptl_lock(&ct->lock);
		if (ct->used && ct->trig_n > 0)
			ptl_trig_fire_locked(c, kind, ct);
		ptl_unlock(&ct->lock);
	}
}

void
ptl_trig_run(struct ptl_client *c)
{
	unsigned kind;

	for (kind = 0; kind < SPINNIC_WIRE_NI_KINDS; kind++) {
		if (__atomic_load_n(&c->ni[kind].trig.nfired,
				    __ATOMIC_RELAXED) != 0)
			trig_run_ni(c, kind);
		/* one refill per call: a huge counter jump over a period-1
		 * entry costs each poll a FIFO's worth, no more */
		if (__atomic_load_n(&c->ni[kind].trig.backlog,
				    __ATOMIC_ACQUIRE)) {
			trig_resume(c, kind);
			trig_run_ni(c, kind);
		}
	}
}
