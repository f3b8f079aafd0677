/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives: NIC memory of prepared types. A type's handler
 * arguments (and iovec block list) are uploaded at its first receive and
 * kept; when NIC memory is short the least recently used types that no
 * posted receive uses are released and the upload retried. Called by
 * shim_ddt_recv.c (upload, LRU touch) and shim_ddt_type.c (free).
 */
#include <errno.h>
#include <string.h>

#include "shim_ddt.h"
#include "spin_handler_args.h"

/* Largest argument block spinnic installs (CTX_ARGS_MAX of
 * app/spinnic/ctrl.c): a larger one (huge indexed-block displacement
 * lists, checkpoints) cannot be offloaded at all. */

pthread_mutex_t shim_type_lock = PTHREAD_MUTEX_INITIALIZER;
struct spin_type_stats shim_type_st;
static struct spin_type_offload *lru_head;

void
shim_type_lru_add(struct spin_type_offload *o)
{
	o->prev = NULL;
	o->next = lru_head;
	if (lru_head != NULL)
		lru_head->prev = o;
	lru_head = o;
}

void
shim_type_lru_del(struct spin_type_offload *o)
{
	if (o->prev != NULL)
		o->prev->next = o->next;
	else
		lru_head = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
	o->prev = o->next = NULL;
}

void
shim_type_lru_touch(struct spin_type_offload *o)
{
	if (lru_head == o)
		return;
	shim_type_lru_del(o);
	shim_type_lru_add(o);
}

int
shim_type_unload(struct spin_type_offload *o)
{
	int rc;

	if (!o->loaded)
		return 0;
	rc = spin_ctx_free(o->ctx);
	if (rc == PTL_IN_USE)
		return -EBUSY;
	if (o->list_len > 0)
		spin_nicmem_free(o->blob);
	o->loaded = false;
	shim_type_st.nic_bytes -= o->nic_bytes;
	o->nic_bytes = 0;
	return 0;
}

/* The iovec block list of o as a NIC memory blob named in its arguments.
 * @return 0 or a negative errno */
static int
load_list(struct spin_type_offload *o)
{
	uint32_t id;
	int rc;

	rc = spin_nicmem_alloc(o->ni, o->list_len, &o->blob);
	if (rc != PTL_OK)
		return shim_errno(rc);
	rc = spin_nicmem_write(o->blob, 0, o->list, o->list_len);
	if (rc == PTL_OK)
		rc = spin_nicmem_id(o->blob, &id);
	if (rc != PTL_OK) {
		spin_nicmem_free(o->blob);
		return shim_errno(rc);
	}
	((struct spin_iovec_args *)o->args)->list = id;
	return 0;
}

/* Upload args (and list) of o once. @return 0 or a negative errno */
static int
load_once(struct spin_type_offload *o)
{
	struct spin_ctx_desc d;
	int rc;

	if (o->list_len > 0) {
		rc = load_list(o);
		if (rc != 0)
			return rc;
	}
	memset(&d, 0, sizeof(d));
	d.family = o->family;
	d.args = o->args;
	d.args_len = o->args_len;
	d.policy = o->sched.blocked_rr ? SPIN_SCHED_BLOCKED_RR :
		SPIN_SCHED_DEFAULT;
	d.delta_p = o->sched.delta_p;
	d.nvhpu = o->sched.nvhpu;
	rc = spin_ctx_install(o->ni, &d, &o->ctx);
	if (rc != PTL_OK) {
		if (o->list_len > 0)
			spin_nicmem_free(o->blob);
		return shim_errno(rc);
	}
	o->loaded = true;
	o->nic_bytes = o->args_len + o->list_len;
	shim_type_st.nic_bytes += o->nic_bytes;
	shim_type_st.uploads++;
	return 0;
}

/* Release the least recently used idle type of o's NI other than o.
 * @return whether one was released */
static bool
evict_one(const struct spin_type_offload *o)
{
	struct spin_type_offload *v;

	for (v = lru_head; v != NULL && v->next != NULL; v = v->next)
		;
	for (; v != NULL; v = v->prev)
		if (v != o && v->loaded && v->ni == o->ni &&
		    __atomic_load_n(&v->posted, __ATOMIC_ACQUIRE) == 0 &&
		    shim_type_unload(v) == 0)
			break;
	if (v == NULL)
		return false;
	shim_type_st.evictions++;
	SHIM_DBG("NIC memory short: released a %s type of %llu bytes",
		 spin_type_strategy_name(v->strat),
		 (unsigned long long)(v->args_len + v->list_len));
	return true;
}

int
shim_type_load(struct spin_type_offload *o)
{
	int rc;

	if (o->args_len > TYPE_ARGS_MAX)
		return -ENOMEM;
	for (;;) {
		rc = load_once(o);
		if (rc != -ENOMEM)
			return rc;
		/* more than the whole NIC memory: evicting cannot help */
		if (shim_g.nic_mem_total > 0 &&
		    o->args_len + o->list_len > shim_g.nic_mem_total)
			return -ENOMEM;
		if (!evict_one(o))
			return -ENOMEM;
	}
}
