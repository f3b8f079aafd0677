/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batched setup (spin.h spin_batch_*; spinnic_abi.h SPINNIC_CTRL_BATCH):
 * CT, MD and ME creations collected here and sent as records in the
 * region, SPINNIC_CTRL_BATCH_MAX per control round trip.
 *
 * Each CT and MD gets its table slot (and a CT its region record) when
 * it is added, marked closing so that every other call refuses it until
 * the submit fills in the NIC's handle; a later record naming it carries
 * the index of its record, which the submit turns into
 * SPINNIC_BATCH_REF() (same chunk) or the NIC handle (earlier chunk). A
 * failing chunk is undone by spinnic; the earlier chunks' objects the
 * shim frees itself, one request each (the failure path only), and every
 * slot and record goes back. doc/NOTES.md "Batched setup".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

struct batch_ent {
	struct spinnic_ctrl_msg msg;  /* the record, references unresolved */
	int ref;                      /* record whose CT goes into the ct
					 field (md.ct, me.ct), or -1 */
	struct shim_obj *o;           /* CT, MD: the slot */
	ptl_handle_any_t h;           /* CT, MD: at once; ME: at submit */
	ptl_handle_me_t *me_p;        /* ME: where the handle goes */
	struct spinnic_ct *rec;       /* CT: its record in the region */
	uint64_t md_bytes;            /* MD: as PtlMDBind keeps them */
	uint32_t nic;                 /* the NIC's handle, once created */
	bool created;
};

struct spin_batch {
	ptl_handle_ni_t ni_h;
	struct shim_ni *ni;
	unsigned slot;
	bool submitted;
	struct batch_ent *e;
	unsigned n, cap;
};

int
spin_batch_create(ptl_handle_ni_t ni_handle, spin_batch_t **b_p)
{
	struct spin_batch *b;
	struct shim_ni *ni;
	unsigned slot;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || b_p == NULL)
		return PTL_ARG_INVALID;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return PTL_NO_SPACE;
	b->ni_h = ni_handle;
	b->ni = ni;
	b->slot = slot;
	*b_p = b;
	return PTL_OK;
}

/* A fresh record. @return it, or NULL (-ENOMEM) */
static struct batch_ent *
ent_new(struct spin_batch *b, uint16_t op)
{
	struct batch_ent *e;

	if (b->n == b->cap) {
		unsigned cap = b->cap ? b->cap * 2 : 32;
		void *p = realloc(b->e, (size_t)cap * sizeof(*b->e));

		if (p == NULL)
			return NULL;
		b->e = p;
		b->cap = cap;
	}
	e = &b->e[b->n];
	memset(e, 0, sizeof(*e));
	shim_ctrl_prep_ni(&e->msg, op, b->ni->nic_ni);
	e->msg.version = SPINNIC_ABI_VERSION;
	e->ref = -1;
	e->h = PTL_INVALID_HANDLE;
	e->nic = SPINNIC_HANDLE_NONE;
	return e;
}

/* Record of a CT of this batch named by @p h, or -1 (not one of ours) */
static int
ent_of_ct(const struct spin_batch *b, ptl_handle_ct_t h)
{
	for (unsigned i = b->n; i-- > 0;)
		if (b->e[i].msg.op == SPINNIC_CTRL_CT_ALLOC && b->e[i].h == h)
			return (int)i;
	return -1;
}

/* A counter field: one of this batch's (*ref), or an ordinary one
 * (*nic). @return 0 or -EINVAL */
static int
ct_arg(const struct spin_batch *b, ptl_handle_ct_t h, int *ref,
       uint32_t *nic)
{
	int64_t v;

	*ref = ent_of_ct(b, h);
	if (*ref >= 0) {
		*nic = SPINNIC_HANDLE_NONE;
		return 0;
	}
	v = shim_opt_handle(h, SHIM_KIND_CT, b->slot);
	if (v < 0)
		return -EINVAL;
	*nic = (uint32_t)v;
	return 0;
}

static bool
builder_ok(const struct spin_batch *b)
{
	return b != NULL && !b->submitted &&
	       shim_to_ni(b->ni_h, NULL) == b->ni;
}

int
spin_batch_ct_alloc(spin_batch_t *b, ptl_handle_ct_t *ct_p)
{
	struct batch_ent *e;

	SHIM_ENTER();
	if (!builder_ok(b) || ct_p == NULL)
		return PTL_ARG_INVALID;
	e = ent_new(b, SPINNIC_CTRL_CT_ALLOC);
	if (e == NULL)
		return PTL_NO_SPACE;
	e->rec = shim_heap_alloc(sizeof(*e->rec));
	if (e->rec == NULL)
		return PTL_NO_SPACE;
	memset(e->rec, 0, sizeof(*e->rec));
	pthread_mutex_lock(&shim_g.lock);
	e->o = shim_obj_alloc(b->ni, b->slot, SHIM_KIND_CT, &e->h);
	if (e->o != NULL)
		e->o->closing = 1; /* until the submit */
	pthread_mutex_unlock(&shim_g.lock);
	if (e->o == NULL) {
		shim_heap_free(e->rec);
		return PTL_NO_SPACE;
	}
	e->msg.u.ct.ct = SPINNIC_HANDLE_NONE;
	e->msg.u.ct.ct_off = shim_region_off(e->rec);
	b->n++;
	*ct_p = e->h;
	return PTL_OK;
}

int
spin_batch_md_bind(spin_batch_t *b, const ptl_md_t *md, ptl_handle_md_t *md_p)
{
	struct batch_ent *e;
	int64_t eq;
	uint64_t bytes;
	uint32_t ct;
	int ref;

	SHIM_ENTER();
	if (!builder_ok(b) || md == NULL || md_p == NULL ||
	    (md->options & ~(PTL_MD_OPTIONS_MASK | SPIN_MD_STAGE)) != 0)
		return PTL_ARG_INVALID;
	eq = shim_opt_handle(md->eq_handle, SHIM_KIND_EQ, b->slot);
	if (eq < 0 || ct_arg(b, md->ct_handle, &ref, &ct) != 0 ||
	    shim_mem_bytes(b->ni, md->start, md->length, md->options,
			   &bytes) != 0)
		return PTL_ARG_INVALID;
	e = ent_new(b, SPINNIC_CTRL_MD_BIND);
	if (e == NULL)
		return PTL_NO_SPACE;
	pthread_mutex_lock(&shim_g.lock);
	e->o = shim_obj_alloc(b->ni, b->slot, SHIM_KIND_MD, &e->h);
	if (e->o != NULL)
		e->o->closing = 1;
	pthread_mutex_unlock(&shim_g.lock);
	if (e->o == NULL)
		return PTL_NO_SPACE;
	e->msg.u.md.md = SPINNIC_HANDLE_NONE;
	e->msg.u.md.start = (uint64_t)(uintptr_t)md->start;
	e->msg.u.md.length = md->length;
	e->msg.u.md.options = md->options;
	e->msg.u.md.eq = (uint32_t)eq;
	e->msg.u.md.ct = ct;
	e->ref = ref;
	e->md_bytes = bytes;
	b->n++;
	*md_p = e->h;
	return PTL_OK;
}

static int
me_add(spin_batch_t *b, ptl_pt_index_t pt_index, const ptl_me_t *me,
       ptl_list_t list, void *user_ptr, ptl_handle_me_t *me_p, uint16_t flags)
{
	struct batch_ent *e;
	ptl_me_t copy;
	uint32_t ct;
	int ref, rc;

	SHIM_ENTER();
	if (!builder_ok(b) || me == NULL ||
	    (list != PTL_PRIORITY_LIST && list != PTL_OVERFLOW_LIST) ||
	    (b->ni->options & PTL_NI_NO_MATCHING) != 0 ||
	    ct_arg(b, me->ct_handle, &ref, &ct) != 0)
		return PTL_ARG_INVALID;
	e = ent_new(b, SPINNIC_CTRL_ME_APPEND);
	if (e == NULL)
		return PTL_NO_SPACE;
	/* the checks of PtlMEAppend, the counter set apart */
	copy = *me;
	copy.ct_handle = PTL_CT_NONE;
	rc = shim_entry_fill(b->ni, b->slot, pt_index, &copy, 0, SPIN_CTX_NONE,
			     user_ptr, &e->msg.u.me);
	if (rc != 0)
		return shim_ptl(rc);
	e->msg.u.me.list = list;
	e->msg.u.me.ct = ct;
	e->msg.flags = flags;
	e->ref = ref;
	e->me_p = me_p;
	b->n++;
	return PTL_OK;
}

int
spin_batch_me_append(spin_batch_t *b, ptl_pt_index_t pt_index,
		     const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr,
		     ptl_handle_me_t *me_p)
{
	return me_add(b, pt_index, me, ptl_list, user_ptr, me_p, 0);
}

int
spin_batch_me_reserve(spin_batch_t *b, ptl_pt_index_t pt_index,
		      const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr,
		      ptl_handle_me_t *me_p)
{
	return me_add(b, pt_index, me, ptl_list, user_ptr, me_p,
		      SPINNIC_CTRL_F_ME_RESERVE);
}

unsigned
spin_batch_count(const spin_batch_t *b)
{
	return b != NULL ? b->n : 0;
}

ptl_handle_any_t
spin_batch_handle(const spin_batch_t *b, unsigned i)
{
	if (b == NULL || i >= b->n)
		return PTL_INVALID_HANDLE;
	return b->e[i].h;
}

/* Give back what record @p e holds on this side (and its handle). */
static void
ent_release(struct batch_ent *e)
{
	unsigned kind = e->msg.op == SPINNIC_CTRL_CT_ALLOC ? SHIM_KIND_CT :
			SHIM_KIND_MD;

	/* still the slot we took (PtlNIFini meanwhile releases it) */
	if (e->o != NULL && shim_obj_get(e->h, kind, NULL) == e->o)
		shim_obj_release(e->o);
	e->o = NULL;
	if (e->rec != NULL) {
		shim_heap_free(e->rec);
		e->rec = NULL;
	}
	e->h = PTL_INVALID_HANDLE;
}

/* Destroy on the NIC what record @p e created (an earlier chunk of a
 * failed submit). */
static void
ent_destroy(const struct spin_batch *b, const struct batch_ent *e)
{
	struct spinnic_ctrl_msg m;

	switch (e->msg.op) {
	case SPINNIC_CTRL_CT_ALLOC:
		shim_ctrl_prep_ct(&m, SPINNIC_CTRL_CT_FREE, b->ni->nic_ni,
				  e->nic);
		break;
	case SPINNIC_CTRL_MD_BIND:
		shim_ctrl_prep_md(&m, SPINNIC_CTRL_MD_RELEASE, b->ni->nic_ni,
				  e->nic);
		break;
	default:
		shim_ctrl_prep_me(&m, SPINNIC_CTRL_ME_UNLINK, b->ni->nic_ni,
				  e->nic);
		break;
	}
	if (shim_ctrl_call(&m) != 0)
		SHIM_DBG("batch rollback: control op %u of handle %#x failed",
			 (unsigned)m.op, e->nic);
}

/* The handle field a record's reply carries. */
static uint32_t
rec_handle(const struct spinnic_ctrl_msg *r)
{
	switch (r->op) {
	case SPINNIC_CTRL_CT_ALLOC:
		return r->u.ct.ct;
	case SPINNIC_CTRL_MD_BIND:
		return r->u.md.md;
	default:
		return r->u.me.me;
	}
}

/* One chunk, records [lo, hi). @return 0, or a negative errno with
 * *failed_p the failing record (or -1) */
static int
chunk_submit(struct spin_batch *b, struct spinnic_ctrl_msg *recs,
	     unsigned lo, unsigned hi, int *failed_p)
{
	struct spinnic_ctrl_msg msg;
	unsigned i;
	int rc;

	for (i = lo; i < hi; i++) {
		struct batch_ent *e = &b->e[i];
		struct spinnic_ctrl_msg *r = &recs[i - lo];
		uint32_t ref = SPINNIC_HANDLE_NONE;

		*r = e->msg;
		if (e->ref >= 0)
			ref = (unsigned)e->ref >= lo ?
			      SPINNIC_BATCH_REF((unsigned)e->ref - lo) :
			      b->e[e->ref].nic;
		if (e->ref >= 0 && r->op == SPINNIC_CTRL_MD_BIND)
			r->u.md.ct = ref;
		else if (e->ref >= 0)
			r->u.me.ct = ref;
	}
	shim_ctrl_prep(&msg, SPINNIC_CTRL_BATCH);
	msg.u.batch.off = shim_region_off(recs);
	msg.u.batch.count = hi - lo;
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		*failed_p = rc != -EIO && msg.u.batch.failed < hi - lo ?
			    (int)(lo + msg.u.batch.failed) : -1;
		return rc;
	}
	for (i = lo; i < hi; i++) {
		/* the NIC wrote the replies; a copy, read once */
		struct spinnic_ctrl_msg r = recs[i - lo];

		b->e[i].nic = rec_handle(&r);
		b->e[i].created = true;
	}
	return 0;
}

/* Every record created: the objects open for use. */
static void
batch_finish(struct spin_batch *b)
{
	for (unsigned i = 0; i < b->n; i++) {
		struct batch_ent *e = &b->e[i];

		switch (e->msg.op) {
		case SPINNIC_CTRL_CT_ALLOC:
			e->o->nic_id = e->nic;
			e->o->u.ct.rec = e->rec;
			e->rec = NULL;
			break;
		case SPINNIC_CTRL_MD_BIND:
			e->o->nic_id = e->nic;
			e->o->u.md.start = e->msg.u.md.start;
			e->o->u.md.length = e->md_bytes;
			e->o->u.md.entries =
				(e->msg.u.md.options & PTL_IOVEC) ?
				e->msg.u.md.length : 0;
			e->o->u.md.options = e->msg.u.md.options;
			e->o->u.md.has_eq = e->msg.u.md.eq !=
					    SPINNIC_HANDLE_NONE;
			e->o->u.md.has_ct = e->msg.u.md.ct !=
					    SPINNIC_HANDLE_NONE || e->ref >= 0;
			break;
		default:
			e->h = shim_handle_make(SHIM_KIND_ME, b->slot, 0,
						e->nic);
			if (e->me_p != NULL)
				*e->me_p = e->h;
			break;
		}
		if (e->o != NULL) {
			__atomic_store_n(&e->o->closing, 0,
					 __ATOMIC_RELEASE);
			e->o = NULL; /* the caller's now */
		}
	}
}

int
spin_batch_submit(spin_batch_t *b, int *failed_p)
{
	struct spinnic_ctrl_msg *recs;
	unsigned lo, per;
	int failed = -1, rc = 0;

	SHIM_ENTER();
	if (failed_p != NULL)
		*failed_p = -1;
	if (!builder_ok(b) || b->n == 0)
		return PTL_ARG_INVALID;
	b->submitted = true;
	per = b->n < SPINNIC_CTRL_BATCH_MAX ? b->n : SPINNIC_CTRL_BATCH_MAX;
	recs = shim_heap_alloc((size_t)per * sizeof(*recs));
	if (recs == NULL)
		rc = -ENOMEM;
	for (lo = 0; lo < b->n && rc == 0; lo += per) {
		unsigned hi = b->n - lo < per ? b->n : lo + per;

		rc = chunk_submit(b, recs, lo, hi, &failed);
	}
	if (recs != NULL)
		shim_heap_free(recs);
	if (rc == 0) {
		batch_finish(b);
		return PTL_OK;
	}
	/* all or nothing: the earlier chunks' objects go too, last first
	 * (spinnic undid the failing chunk) */
	for (unsigned i = b->n; i-- > 0;) {
		if (b->e[i].created && !shim_g.dead)
			ent_destroy(b, &b->e[i]);
		b->e[i].created = false;
		ent_release(&b->e[i]);
	}
	if (failed_p != NULL)
		*failed_p = failed;
	return shim_ptl(rc);
}

void
spin_batch_free(spin_batch_t *b)
{
	if (b == NULL)
		return;
	/* never submitted: the slots and records go back */
	if (!b->submitted)
		for (unsigned i = 0; i < b->n; i++)
			ent_release(&b->e[i]);
	free(b->e);
	free(b);
}
