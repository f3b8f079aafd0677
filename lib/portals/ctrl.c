/* SPDX-License-Identifier: BSD-3-Clause */
/* Control-message dispatch: every request validated, status as PTL_*. */
#include <stddef.h>

#include "ptl_internal.h"

int
ptl_nic_ctrl(struct ptl_nic *nic, struct ptl_client *c,
	     const struct spinnic_ctrl_msg *req, struct spinnic_ctrl_msg *rep)
{
	struct spinnic_ctrl_msg m;
	int st;

	switch (req->op) {
	case SPINNIC_CTRL_ATTACH:
	case SPINNIC_CTRL_DETACH:
	case SPINNIC_CTRL_CTX_INSTALL:
	case SPINNIC_CTRL_CTX_FREE:
	case SPINNIC_CTRL_NICMEM_ALLOC:
	case SPINNIC_CTRL_NICMEM_WRITE:
	case SPINNIC_CTRL_NICMEM_FREE:
	case SPINNIC_CTRL_BATCH:    /* ptl_nic_ctrl_batch */
		return -EOPNOTSUPP;
	default:
		break;
	}
	/* work on a private copy; req and rep may alias */
	memcpy(&m, req, sizeof(m));
	if (m.version != SPINNIC_ABI_VERSION || c == NULL || c->nic != nic) {
		st = SPINNIC_PTL_ARG_INVALID;
		goto out;
	}
	ptl_lock(&nic->lock);
	if (!ptl_client_is_alive(c)) {
		st = SPINNIC_PTL_NO_INIT;
	} else {
		switch (m.op) {
		case SPINNIC_CTRL_NI_INIT:
		case SPINNIC_CTRL_NI_FINI:
			st = ptl_ctrl_ni(nic, c, m.op, &m.u.ni);
			break;
		case SPINNIC_CTRL_PT_ALLOC:
		case SPINNIC_CTRL_PT_FREE:
		case SPINNIC_CTRL_PT_ENABLE:
		case SPINNIC_CTRL_PT_DISABLE:
			st = ptl_ctrl_pt(nic, c, m.op, &m.u.pt);
			break;
		case SPINNIC_CTRL_EQ_ALLOC:
		case SPINNIC_CTRL_EQ_FREE:
			st = ptl_ctrl_eq(nic, c, m.op, &m.u.eq);
			break;
		case SPINNIC_CTRL_CT_ALLOC:
		case SPINNIC_CTRL_CT_FREE:
			st = ptl_ctrl_ct(nic, c, m.op, &m.u.ct);
			break;
		case SPINNIC_CTRL_MD_BIND:
		case SPINNIC_CTRL_MD_RELEASE:
			st = ptl_ctrl_md(nic, c, m.op, &m.u.md);
			break;
		case SPINNIC_CTRL_NI_STATUS:
			st = ptl_ctrl_status(c, &m.u.status);
			break;
		case SPINNIC_CTRL_AA_LOG_CREATE:
		case SPINNIC_CTRL_AA_LOG_FREE:
		case SPINNIC_CTRL_AA_ASSOC:
		case SPINNIC_CTRL_AA_FAULT_READ:
			st = ptl_ctrl_aa(nic, c, m.op, &m.u.aa);
			break;
		case SPINNIC_CTRL_ME_APPEND:
		case SPINNIC_CTRL_ME_UNLINK:
		case SPINNIC_CTRL_ME_SEARCH:
			st = ptl_ctrl_me(nic, c, m.op, m.flags, &m.u.me);
			break;
		default:
			st = SPINNIC_PTL_ARG_INVALID;
			break;
		}
	}
	ptl_unlock(&nic->lock);
out:
	if (st == SPINNIC_PTL_OK) {
		PTL_STAT(nic, ctrl_ok);
	} else {
		PTL_STAT(nic, bad_ctrl);
		PTL_DBG("client pid %u: control op %u refused: status %d",
			c ? c->pid : 0, m.op, st);
	}
	m.status = st;
	memcpy(rep, &m, sizeof(m));
	return 0;
}

/* ---- BATCH (spinnic_abi.h struct spinnic_ctrl_batch) ------------------- */

/* The kind of handle a batchable op creates (its op), or 0. */
static uint16_t
batch_creates(uint16_t op)
{
	switch (op) {
	case SPINNIC_CTRL_EQ_ALLOC:
	case SPINNIC_CTRL_CT_ALLOC:
	case SPINNIC_CTRL_MD_BIND:
	case SPINNIC_CTRL_ME_APPEND:
		return op;
	default:
		return 0;
	}
}

static bool
batch_op_ok(uint16_t op)
{
	return batch_creates(op) != 0 || op == SPINNIC_CTRL_EQ_FREE ||
	       op == SPINNIC_CTRL_CT_FREE || op == SPINNIC_CTRL_MD_RELEASE ||
	       op == SPINNIC_CTRL_ME_UNLINK;
}

/* What a record created: its creating op (0: nothing), NI and handle. */
struct batch_res {
	uint16_t op;
	uint32_t ni;
	uint32_t h;
};

/*
 * Replace a reference in handle field @p f by what record r < @p i of
 * kind @p want created. Ordinary handles pass unchanged (the op checks
 * them). @return 0, or -EINVAL: a reference forward, to itself, to a
 * record that created nothing or something else
 */
static int
batch_ref(uint32_t *f, uint16_t want, const struct batch_res *res,
	  uint32_t i)
{
	uint32_t r;

	if (!SPINNIC_BATCH_IS_REF(*f))
		return 0;
	r = *f - SPINNIC_BATCH_REF_TAG;
	if (r >= i || res[r].op != want)
		return -EINVAL;
	*f = res[r].h;
	return 0;
}

/* The handle field of a record that may hold a reference, and the kind
 * it names; NULL for none. */
static uint32_t *
batch_field(struct spinnic_ctrl_msg *m, unsigned k, uint16_t *want)
{
	switch (m->op * 2 + k) {
	case SPINNIC_CTRL_MD_BIND * 2:
		*want = SPINNIC_CTRL_EQ_ALLOC;
		return &m->u.md.eq;
	case SPINNIC_CTRL_MD_BIND * 2 + 1:
		*want = SPINNIC_CTRL_CT_ALLOC;
		return &m->u.md.ct;
	case SPINNIC_CTRL_ME_APPEND * 2:
		*want = SPINNIC_CTRL_CT_ALLOC;
		return &m->u.me.ct;
	case SPINNIC_CTRL_CT_FREE * 2:
		*want = SPINNIC_CTRL_CT_ALLOC;
		return &m->u.ct.ct;
	case SPINNIC_CTRL_EQ_FREE * 2:
		*want = SPINNIC_CTRL_EQ_ALLOC;
		return &m->u.eq.eq;
	case SPINNIC_CTRL_MD_RELEASE * 2:
		*want = SPINNIC_CTRL_MD_BIND;
		return &m->u.md.md;
	case SPINNIC_CTRL_ME_UNLINK * 2:
		*want = SPINNIC_CTRL_ME_APPEND;
		return &m->u.me.me;
	default:
		return NULL;
	}
}

/* Resolve the references of record @p i (its private copy @p m); a free
 * naming a record by reference gives that record in *freed. */
static int
batch_refs(struct spinnic_ctrl_msg *m, const struct batch_res *res,
	   uint32_t i, uint32_t *freed)
{
	*freed = UINT32_MAX;
	for (unsigned k = 0; k < 2; k++) {
		uint16_t want = 0;
		uint32_t *f = batch_field(m, k, &want);

		if (f == NULL)
			continue;
		if (batch_creates(m->op) == 0 && SPINNIC_BATCH_IS_REF(*f))
			*freed = *f - SPINNIC_BATCH_REF_TAG;
		if (batch_ref(f, want, res, i) != 0)
			return -EINVAL;
	}
	return 0;
}

/* The new handle in a successful reply of a creating op. */
static uint32_t
batch_handle(const struct spinnic_ctrl_msg *rep)
{
	switch (rep->op) {
	case SPINNIC_CTRL_EQ_ALLOC:
		return rep->u.eq.eq;
	case SPINNIC_CTRL_CT_ALLOC:
		return rep->u.ct.ct;
	case SPINNIC_CTRL_MD_BIND:
		return rep->u.md.md;
	default:
		return rep->u.me.me;
	}
}

/* Destroy what record @p r created (rollback). @return its status */
static int
batch_undo(const struct batch_res *r, ptl_batch_run_fn run, void *arg)
{
	struct spinnic_ctrl_msg m, rep;

	memset(&m, 0, sizeof(m));
	m.version = SPINNIC_ABI_VERSION;
	switch (r->op) {
	case SPINNIC_CTRL_EQ_ALLOC:
		m.op = SPINNIC_CTRL_EQ_FREE;
		m.u.eq.eq = r->h;
		break;
	case SPINNIC_CTRL_CT_ALLOC:
		m.op = SPINNIC_CTRL_CT_FREE;
		m.u.ct.ct = r->h;
		break;
	case SPINNIC_CTRL_MD_BIND:
		m.op = SPINNIC_CTRL_MD_RELEASE;
		m.u.md.md = r->h;
		break;
	default:
		m.op = SPINNIC_CTRL_ME_UNLINK;
		m.u.me.me = r->h;
		break;
	}
	m.u.ni.ni = r->ni; /* the first field of each */
	memcpy(&rep, &m, sizeof(rep));
	rep.status = SPINNIC_PTL_OK;
	run(arg, &m, &rep);
	return rep.status;
}

/*
 * The records are the client's memory, which it may change while we
 * read: each is copied once, checked and run from the copy; references
 * resolve from our own results (res), never from the region; the reply
 * goes back over the record. Only @p run touches objects, and it names
 * the client's own.
 */
void
ptl_nic_ctrl_batch(struct ptl_client *c, const struct spinnic_ctrl_msg *req,
		   struct spinnic_ctrl_msg *rep, ptl_batch_run_fn run,
		   void *arg, struct ptl_batch_stats *st)
{
	struct batch_res res[SPINNIC_CTRL_BATCH_MAX];
	const uint64_t off = req->u.batch.off;
	const uint32_t n = req->u.batch.count;
	uint32_t i, failed = SPINNIC_HANDLE_NONE;
	int status = SPINNIC_PTL_OK;

	rep->u.batch.failed = SPINNIC_HANDLE_NONE;
	rep->u.batch.done = 0;
	if (n == 0 || n > SPINNIC_CTRL_BATCH_MAX || (off & 7) != 0 ||
	    ptl_client_region_ptr(c, off, (uint64_t)n *
				  SPINNIC_CTRL_MSG_SIZE) == NULL) {
		st->refused++;
		rep->status = SPINNIC_PTL_ARG_INVALID;
		return;
	}
	for (i = 0; i < n; i++) {
		struct spinnic_ctrl_msg m, r;
		uint32_t freed = UINT32_MAX;
		uint8_t *p = ptl_client_region_ptr(c,
			off + (uint64_t)i * SPINNIC_CTRL_MSG_SIZE,
			SPINNIC_CTRL_MSG_SIZE);

		res[i].op = 0;
		if (p == NULL) { /* checked above; never trust it */
			status = SPINNIC_PTL_ARG_INVALID;
			failed = i;
			break;
		}
		memcpy(&m, p, sizeof(m));
		st->recs++;
		if (m.version != SPINNIC_ABI_VERSION || !batch_op_ok(m.op) ||
		    batch_refs(&m, res, i, &freed) != 0) {
			st->refused++;
			memcpy(&r, &m, sizeof(r));
			r.status = SPINNIC_PTL_ARG_INVALID;
		} else {
			memcpy(&r, &m, sizeof(r));
			r.status = SPINNIC_PTL_OK;
			run(arg, &m, &r);
		}
		r.version = SPINNIC_ABI_VERSION;
		memcpy(p, &r, sizeof(r));
		if (r.status != SPINNIC_PTL_OK) {
			status = r.status;
			failed = i;
			break;
		}
		if (freed < i) /* freed within the batch: nothing to undo */
			res[freed].op = 0;
		if (batch_creates(m.op) != 0) {
			res[i].op = m.op;
			res[i].ni = m.u.ni.ni;
			res[i].h = batch_handle(&r);
		}
	}
	if (failed == SPINNIC_HANDLE_NONE) {
		rep->u.batch.done = n;
		rep->status = SPINNIC_PTL_OK;
		return;
	}
	/* undo, last first: what an entry or MD counts into goes after it */
	st->rollbacks++;
	while (i-- > 0) {
		uint8_t *p = ptl_client_region_ptr(c,
			off + (uint64_t)i * SPINNIC_CTRL_MSG_SIZE,
			SPINNIC_CTRL_MSG_SIZE);
		int32_t aborted = SPINNIC_PTL_ABORTED;

		if (res[i].op == 0)
			continue;
		if (batch_undo(&res[i], run, arg) != SPINNIC_PTL_OK)
			st->undo_failed++;
		if (p != NULL)
			memcpy(p + offsetof(struct spinnic_ctrl_msg, status),
			       &aborted, sizeof(aborted));
	}
	rep->status = status;
	rep->u.batch.failed = failed;
}
