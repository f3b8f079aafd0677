/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Execution contexts and NIC memory blobs: reference-counted slots in two
 * tables, named by handle = generation << 16 | index, owner-checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "spin_internal.h"

static uint32_t
obj_handle(const struct spin_obj *o, uint32_t idx)
{
	return (uint32_t)o->gen << 16 | idx;
}

/* Take a reference if the slot holds a live-or-dying object of @p gen. */
int
spin_obj_tryget(struct spin_obj *o, uint16_t gen)
{
	uint32_t r = __atomic_load_n(&o->refs, __ATOMIC_ACQUIRE);

	do {
		if (r == 0)
			return -ENOENT;
	} while (!__atomic_compare_exchange_n(&o->refs, &r, r + 1, true,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	if (o->gen != gen)
		return -EAGAIN; /* caller drops the reference it took */
	return 0;
}

/* @return true when that was the last reference */
static bool
obj_unref(struct spin_obj *o)
{
	return __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0;
}

static void
obj_release(struct spin_rt *rt, struct spin_obj *o, uint32_t idx,
	    uint32_t *free_head)
{
	if (o->mem_len != 0)
		spin_arena_free(&rt->arena, o->owner, o->mem_off, o->mem_len);
	rte_spinlock_lock(&rt->obj_lock);
	o->gen++;
	o->live = 0;
	o->mem_len = 0;
	o->next_free = *free_head;
	*free_head = idx;
	rte_spinlock_unlock(&rt->obj_lock);
}

static uint32_t
obj_take(struct spin_obj *base, size_t stride, uint32_t *free_head)
{
	uint32_t idx = *free_head;
	struct spin_obj *o;

	if (idx == SPIN_IDX_NONE)
		return idx;
	o = (struct spin_obj *)((uint8_t *)base + idx * stride);
	*free_head = o->next_free;
	return idx;
}

int
spin_objs_init(struct spin_rt *rt)
{
	unsigned i;

	rte_spinlock_init(&rt->obj_lock);
	rt->ctxs = rte_zmalloc_socket("spin_ctxs",
			rt->conf.max_ctxs * sizeof(*rt->ctxs),
			RTE_CACHE_LINE_SIZE, rt->conf.socket_id);
	rt->blobs = rte_zmalloc_socket("spin_blobs",
			rt->conf.max_blobs * sizeof(*rt->blobs),
			RTE_CACHE_LINE_SIZE, rt->conf.socket_id);
	if (rt->ctxs == NULL || rt->blobs == NULL) {
		spin_objs_fini(rt);
		return -ENOMEM;
	}
	for (i = 0; i < rt->conf.max_ctxs; i++) {
		rt->ctxs[i].o.gen = 1;
		rt->ctxs[i].o.next_free = i + 1 < rt->conf.max_ctxs ?
			i + 1 : SPIN_IDX_NONE;
	}
	for (i = 0; i < rt->conf.max_blobs; i++) {
		rt->blobs[i].o.gen = 1;
		rt->blobs[i].o.next_free = i + 1 < rt->conf.max_blobs ?
			i + 1 : SPIN_IDX_NONE;
	}
	rt->ctx_free = 0;
	rt->blob_free = 0;
	return 0;
}

void
spin_objs_fini(struct spin_rt *rt)
{
	unsigned i;

	/* trace rings of contexts still referenced at destroy */
	for (i = 0; rt->ctxs != NULL && i < rt->conf.max_ctxs; i++) {
		free(rt->ctxs[i].trace);
		rt->ctxs[i].trace = NULL;
	}
	rte_free(rt->ctxs);
	rte_free(rt->blobs);
	rt->ctxs = NULL;
	rt->blobs = NULL;
}

/* ---- contexts ------------------------------------------------------------ */

/* the handler SDK's limit is the wire's */
static_assert(SPIN_HANDLER_NAME_MAX == SPINNIC_HANDLER_NAME,
	      "family name lengths differ");

int
spin_family_check(const struct spin_handler_family *f, const char **why_p)
{
	const char *why = NULL;
	size_t i, len;

	if (f == NULL) {
		why = "NULL family";
		goto out;
	}
	if (f->name == NULL || f->name[0] == '\0') {
		why = "no name";
		goto out;
	}
	len = strnlen(f->name, SPIN_HANDLER_NAME_MAX);
	if (len >= SPIN_HANDLER_NAME_MAX) {
		why = "name of 48 bytes or more (SPIN_HANDLER_NAME_MAX)";
		goto out;
	}
	/* names reach logs and clients' error messages */
	for (i = 0; i < len; i++)
		if (f->name[i] <= ' ' || f->name[i] > '~') {
			why = "name not printable ASCII without spaces";
			goto out;
		}
	if (f->header == NULL && f->payload == NULL &&
	    f->completion == NULL && f->outbound == NULL && f->access == NULL)
		why = "no handler (header, payload, completion, outbound and access all NULL)";
	else if (f->payload_burst != NULL && f->payload == NULL)
		why = "payload_burst without payload";
out:
	if (why != NULL && why_p != NULL)
		*why_p = why;
	return why != NULL ? -EINVAL : 0;
}

/* @return the position of family @p name in the table, or -1 */
static int
family_find(const struct spin_rt *rt, const char *name)
{
	const struct spin_handler_family *const *f;

	for (f = rt->conf.families; *f != NULL; f++)
		if (strcmp((*f)->name, name) == 0)
			return (int)(f - rt->conf.families);
	return -1;
}

static struct spin_ctx *
ctx_slot(struct spin_rt *rt, uint32_t handle)
{
	uint32_t idx = SPIN_H_IDX(handle);

	if (handle == SPINNIC_HANDLE_NONE || idx >= rt->conf.max_ctxs)
		return NULL;
	return &rt->ctxs[idx];
}

void
spin_ctx_unref(struct spin_rt *rt, struct spin_ctx *c)
{
	if (obj_unref(&c->o)) {
		/* nobody holds it: no HPU writes the trace, no reader */
		free(c->trace);
		c->trace = NULL;
		obj_release(rt, &c->o, (uint32_t)(c - rt->ctxs),
			    &rt->ctx_free);
	}
}

/* A trace ring of conf.handler_trace empty entries, or NULL (tracing
 * off, or no memory: the context then runs untraced). */
static struct spin_trace_slot *
trace_new(struct spin_rt *rt, uint32_t owner)
{
	size_t sz = (size_t)rt->conf.handler_trace *
		sizeof(struct spin_trace_slot);
	void *p = NULL;

	if (sz == 0)
		return NULL;
	if (posix_memalign(&p, RTE_CACHE_LINE_SIZE, sz) != 0) {
		SPIN_LOG(WARNING, "owner %u: no memory for a handler trace of %u entries: context not traced",
			 owner, rt->conf.handler_trace);
		return NULL;
	}
	memset(p, 0, sz);
	return p;
}

/* a reference on any not yet released context of that handle */
struct spin_ctx *
spin_ctx_ref(struct spin_rt *rt, uint32_t handle)
{
	struct spin_ctx *c = ctx_slot(rt, handle);
	int rc;

	if (c == NULL)
		return NULL;
	rc = spin_obj_tryget(&c->o, (uint16_t)SPIN_H_GEN(handle));
	if (rc == -EAGAIN)
		spin_ctx_unref(rt, c);
	return rc == 0 ? c : NULL;
}

int
spin_rt_ctx_create(struct spin_rt *rt, uint32_t owner,
		const struct spin_ctx_conf *conf, uint32_t *handle_p)
{
	const struct spin_handler_family *fam;
	uint32_t state_len = conf->state_len;
	uint64_t args_room, total, off = 0;
	struct spin_ctx *c;
	uint32_t idx;
	int rc, fam_idx;

	if (conf->family == NULL || (conf->args == NULL && conf->args_len))
		return -EINVAL;
	fam_idx = family_find(rt, conf->family);
	fam = fam_idx >= 0 ? rt->conf.families[fam_idx] : NULL;
	if (fam == NULL) {
		SPIN_LOG(INFO, "owner %u: no handler family '%s'", owner,
			 conf->family);
		return -ENOENT;
	}
	switch (conf->policy) {
	case SPINNIC_SCHED_DEFAULT:
		break;
	case SPINNIC_SCHED_BLOCKED_RR:
		if (conf->delta_p == 0 || conf->nvhpu > rt->conf.max_vhpus) {
			SPIN_LOG(INFO, "owner %u: blocked-RR delta_p %u nvhpu %u"
				 " (max %u)", owner, conf->delta_p,
				 conf->nvhpu, rt->conf.max_vhpus);
			return -EINVAL;
		}
		break;
	default:
		SPIN_LOG(INFO, "owner %u: policy %u", owner, conf->policy);
		return -EINVAL;
	}
	if (fam->init != NULL) {
		uint32_t want = state_len;

		rc = fam->init(conf->args, conf->args_len, &want);
		if (rc != 0) {
			SPIN_LOG(INFO, "owner %u: %s rejected its arguments",
				 owner, fam->name);
			return rc < 0 ? rc : -EINVAL;
		}
		if (want > state_len)
			state_len = want;
	}
	args_room = spin_round(conf->args_len);
	total = args_room + state_len;
	if (total != 0) {
		rc = spin_arena_alloc(&rt->arena, owner, total, &off);
		if (rc != 0)
			return rc;
	}
	rte_spinlock_lock(&rt->obj_lock);
	idx = obj_take(&rt->ctxs[0].o, sizeof(*c), &rt->ctx_free);
	rte_spinlock_unlock(&rt->obj_lock);
	if (idx == SPIN_IDX_NONE) {
		if (total != 0)
			spin_arena_free(&rt->arena, owner, off, total);
		return -ENOSPC;
	}
	c = &rt->ctxs[idx];
	c->fam = fam;
	c->fam_idx = (uint32_t)fam_idx;
	c->o.owner = owner;
	c->o.mem_off = off;
	c->o.mem_len = total;
	c->o.live = 1;
	c->args_len = conf->args_len;
	c->state_len = state_len;
	c->policy = conf->policy;
	c->delta_p = conf->delta_p;
	c->nvhpu = conf->nvhpu;
	c->msgs = c->dma_bytes = c->dma_rejects = 0;
	c->h_dma_to = c->h_dma_from = c->h_dma_failures = 0;
	c->h_put_errors = 0;
	memset(c->hk, 0, sizeof(c->hk));
	c->trace_head = 0;
	c->trace_n = rt->conf.handler_trace;
	c->trace = trace_new(rt, owner);
	if (conf->args_len != 0)
		memcpy(rt->arena.base + off, conf->args, conf->args_len);
	__atomic_store_n(&c->o.refs, 1, __ATOMIC_RELEASE);
	*handle_p = obj_handle(&c->o, idx);
	return 0;
}

int
spin_rt_ctx_install(struct spin_rt *rt, uint32_t owner,
		 const struct spinnic_ctrl_ctx *req, const void *args,
		 uint32_t *handle_p)
{
	struct spin_ctx_conf conf;
	char name[SPINNIC_HANDLER_NAME];

	if (memchr(req->family, '\0', sizeof(req->family)) == NULL ||
	    req->flags != 0)
		return -EINVAL;
	memcpy(name, req->family, sizeof(name));
	conf = (struct spin_ctx_conf){
		.family = name,
		.args = args,
		.args_len = req->args_len,
		.state_len = req->state_len,
		.policy = req->policy,
		.delta_p = req->delta_p,
		.nvhpu = req->nvhpu,
	};
	return spin_rt_ctx_create(rt, owner, &conf, handle_p);
}

/* drop the installed reference if owner and handle agree */
static int
ctx_kill(struct spin_rt *rt, struct spin_ctx *c, uint32_t owner,
	 uint32_t handle, bool check_handle)
{
	int rc = 0;

	rte_spinlock_lock(&rt->obj_lock);
	if (__atomic_load_n(&c->o.refs, __ATOMIC_ACQUIRE) == 0 || !c->o.live ||
	    (check_handle && c->o.gen != SPIN_H_GEN(handle)))
		rc = -ENOENT;
	else if (c->o.owner != owner)
		rc = -EPERM;
	else
		c->o.live = 0;
	rte_spinlock_unlock(&rt->obj_lock);
	if (rc == 0)
		spin_ctx_unref(rt, c);
	return rc;
}

int
spin_rt_ctx_free(struct spin_rt *rt, uint32_t owner, uint32_t handle)
{
	struct spin_ctx *c = ctx_slot(rt, handle);

	if (c == NULL)
		return -ENOENT;
	return ctx_kill(rt, c, owner, handle, true);
}

int
spin_rt_ctx_get(struct spin_rt *rt, uint32_t owner, uint32_t handle)
{
	struct spin_ctx *c = spin_ctx_ref(rt, handle);
	int rc = 0;

	if (c == NULL)
		return -ENOENT;
	if (!__atomic_load_n(&c->o.live, __ATOMIC_ACQUIRE))
		rc = -ENOENT;
	else if (c->o.owner != owner)
		rc = -EPERM;
	if (rc != 0)
		spin_ctx_unref(rt, c);
	return rc;
}

int
spin_rt_ctx_access_ok(struct spin_rt *rt, uint32_t owner, uint32_t handle)
{
	struct spin_ctx *c;
	int rc = spin_rt_ctx_get(rt, owner, handle);

	if (rc != 0)
		return rc;
	c = ctx_slot(rt, handle);
	if (c->fam->access == NULL)
		rc = -ENOTSUP;
	spin_ctx_unref(rt, c);
	return rc;
}

void
spin_rt_ctx_put(struct spin_rt *rt, uint32_t handle)
{
	struct spin_ctx *c = ctx_slot(rt, handle);

	if (c != NULL)
		spin_ctx_unref(rt, c);
}

int
spin_rt_ctx_stats(struct spin_rt *rt, uint32_t handle,
	       struct spin_ctx_stats *s_p)
{
	struct spin_ctx *c = spin_ctx_ref(rt, handle);
	unsigned i, k;

	if (c == NULL)
		return -ENOENT;
	memset(s_p, 0, sizeof(*s_p));
	s_p->msgs = SPIN_LOAD(&c->msgs);
	/* every handler invocation, by outcome: the sums of the kinds' */
	for (k = 0; k < SPIN_HK_COUNT; k++)
		for (i = 0; i < 4; i++)
			s_p->rc[i] += SPIN_LOAD(&c->hk[k].rc[i]);
	for (i = 0; i < 4; i++)
		s_p->hers += s_p->rc[i];
	s_p->dma_bytes = SPIN_LOAD(&c->dma_bytes);
	s_p->dma_rejects = SPIN_LOAD(&c->dma_rejects);
	s_p->refs = SPIN_LOAD(&c->o.refs) - 1; /* not ours */
	s_p->owner = c->o.owner;
	s_p->mem_bytes = c->o.mem_len;
	s_p->family = c->fam_idx;
	s_p->live = SPIN_LOAD(&c->o.live);
	spin_ctx_unref(rt, c);
	return 0;
}

int
spin_rt_ctx_next(struct spin_rt *rt, uint32_t *pos_p, uint32_t *handle_p)
{
	uint32_t i;

	for (i = *pos_p; i < rt->conf.max_ctxs; i++) {
		struct spin_ctx *c = &rt->ctxs[i];
		uint32_t h;

		/* a slot in use; the handle may be stale by the time the
		 * caller uses it (then -ENOENT there) */
		h = SPIN_LOAD(&c->o.refs) != 0 ?
			(uint32_t)SPIN_LOAD(&c->o.gen) << 16 | i :
			SPINNIC_HANDLE_NONE;
		if (h != SPINNIC_HANDLE_NONE) {
			*handle_p = h;
			*pos_p = i + 1;
			return 0;
		}
	}
	*pos_p = i;
	return -ENOENT;
}

/* ---- blobs ----------------------------------------------------------------- */

static struct spin_blob *
blob_slot(struct spin_rt *rt, uint32_t handle)
{
	uint32_t idx = SPIN_H_IDX(handle);

	if (handle == SPINNIC_HANDLE_NONE || idx >= rt->conf.max_blobs)
		return NULL;
	return &rt->blobs[idx];
}

void
spin_blob_unref(struct spin_rt *rt, struct spin_blob *b)
{
	if (obj_unref(&b->o))
		obj_release(rt, &b->o, (uint32_t)(b - rt->blobs),
			    &rt->blob_free);
}

/* a reference on a live blob of @p owner */
int
spin_blob_ref(struct spin_rt *rt, uint32_t owner, uint32_t handle,
	      struct spin_blob **b_p)
{
	struct spin_blob *b = blob_slot(rt, handle);
	int rc;

	if (b == NULL)
		return -ENOENT;
	rc = spin_obj_tryget(&b->o, (uint16_t)SPIN_H_GEN(handle));
	if (rc == -ENOENT)
		return rc;
	if (rc == 0 && !__atomic_load_n(&b->o.live, __ATOMIC_ACQUIRE))
		rc = -ENOENT;
	else if (rc == 0 && b->o.owner != owner)
		rc = -EPERM;
	if (rc != 0) {
		spin_blob_unref(rt, b);
		return rc == -EAGAIN ? -ENOENT : rc;
	}
	*b_p = b;
	return 0;
}

int
spin_rt_nicmem_alloc(struct spin_rt *rt, uint32_t owner, uint64_t size,
		  uint32_t *handle_p)
{
	struct spin_blob *b;
	uint64_t off;
	uint32_t idx;
	int rc;

	if (size == 0)
		return -EINVAL;
	rc = spin_arena_alloc(&rt->arena, owner, size, &off);
	if (rc != 0)
		return rc;
	rte_spinlock_lock(&rt->obj_lock);
	idx = obj_take(&rt->blobs[0].o, sizeof(*b), &rt->blob_free);
	rte_spinlock_unlock(&rt->obj_lock);
	if (idx == SPIN_IDX_NONE) {
		spin_arena_free(&rt->arena, owner, off, size);
		return -ENOSPC;
	}
	b = &rt->blobs[idx];
	b->o.owner = owner;
	b->o.mem_off = off;
	b->o.mem_len = size;
	b->o.live = 1;
	__atomic_store_n(&b->o.refs, 1, __ATOMIC_RELEASE);
	*handle_p = obj_handle(&b->o, idx);
	return 0;
}

int
spin_rt_nicmem_write(struct spin_rt *rt, uint32_t owner, uint32_t handle,
		  uint64_t off, const void *src, uint64_t len)
{
	struct spin_blob *b;
	int rc = spin_blob_ref(rt, owner, handle, &b);

	if (rc != 0)
		return rc;
	if (off > b->o.mem_len || len > b->o.mem_len - off)
		rc = -ERANGE;
	else if (len != 0)
		memcpy(rt->arena.base + b->o.mem_off + off, src, len);
	spin_blob_unref(rt, b);
	return rc;
}

int
spin_rt_nicmem_read(struct spin_rt *rt, uint32_t owner, uint32_t handle,
		 uint64_t off, void *dst, uint64_t len)
{
	struct spin_blob *b;
	int rc = spin_blob_ref(rt, owner, handle, &b);

	if (rc != 0)
		return rc;
	if (off > b->o.mem_len || len > b->o.mem_len - off)
		rc = -ERANGE;
	else if (len != 0)
		memcpy(dst, rt->arena.base + b->o.mem_off + off, len);
	spin_blob_unref(rt, b);
	return rc;
}

int
spin_rt_nicmem_free(struct spin_rt *rt, uint32_t owner, uint32_t handle)
{
	struct spin_blob *b = blob_slot(rt, handle);
	int rc = 0;

	if (b == NULL)
		return -ENOENT;
	rte_spinlock_lock(&rt->obj_lock);
	if (__atomic_load_n(&b->o.refs, __ATOMIC_ACQUIRE) == 0 ||
	    !b->o.live || b->o.gen != SPIN_H_GEN(handle))
		rc = -ENOENT;
	else if (b->o.owner != owner)
		rc = -EPERM;
	else
		b->o.live = 0;
	rte_spinlock_unlock(&rt->obj_lock);
	if (rc == 0)
		spin_blob_unref(rt, b);
	return rc;
}

unsigned
spin_owner_detach(struct spin_rt *rt, uint32_t owner)
{
	unsigned i, n = 0;

	for (i = 0; i < rt->conf.max_ctxs; i++)
		if (ctx_kill(rt, &rt->ctxs[i], owner, 0, false) == 0)
			n++;
	for (i = 0; i < rt->conf.max_blobs; i++) {
		struct spin_blob *b = &rt->blobs[i];

		if (spin_rt_nicmem_free(rt, owner, obj_handle(&b->o, i)) == 0)
			n++;
	}
	if (n != 0)
		SPIN_LOG(DEBUG, "owner %u detached: %u objects freed", owner, n);
	return n;
}
