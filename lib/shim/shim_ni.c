/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Library and NI life cycle: PtlInit/PtlFini, PtlNIInit/PtlNIFini,
 * NI status and handles, bundles.
 */
#include <limits.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_consts.h"
#include "shim_ddt.h"
#include "shim_internal.h"

#define TABLE_CAP_MAX 65536u
#define TABLE_CAP_DEFAULT 1024u

struct shim_state shim_g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.ctrl_lock = PTHREAD_MUTEX_INITIALIZER,
	.cmd_lock = PTHREAD_MUTEX_INITIALIZER,
	.region_once = PTHREAD_ONCE_INIT,
	.region = { .memfd = -1, .heap_lock = PTHREAD_MUTEX_INITIALIZER },
};
int shim_log_debug;

#define SHIM_PTL_NAME(n, e) [PTL_##n] = "PTL_" #n,
static const char *const ptl_names[] = {
	SHIM_PTL_RETURN_CODES(SHIM_PTL_NAME)
};
static_assert(sizeof(ptl_names) / sizeof(ptl_names[0]) == PTL_STATUS_LAST,
	      "a name per return code");

const char *
spin_strerror(int rc)
{
	if (rc < 0 || rc >= PTL_STATUS_LAST)
		return "PTL_UNKNOWN";
	return ptl_names[rc];
}

int
shim_ptl(int err)
{
#define SHIM_PTL_CASE(n, e) case -(e): return PTL_##n;
	switch (err) {
	SHIM_PTL_RETURN_CODES(SHIM_PTL_CASE)
	default:
		return PTL_FAIL;
	}
#undef SHIM_PTL_CASE
}

int
shim_errno(int ptl_rc)
{
#define SHIM_PTL_CASE(n, e) case PTL_##n: return -(e);
	switch (ptl_rc) {
	SHIM_PTL_RETURN_CODES(SHIM_PTL_CASE)
	default:
		return -EIO;
	}
#undef SHIM_PTL_CASE
}

static uint32_t
table_cap(int limit)
{
	if (limit <= 0)
		return TABLE_CAP_DEFAULT;
	return (uint32_t)limit < TABLE_CAP_MAX ? (uint32_t)limit : TABLE_CAP_MAX;
}

/* ---- library ------------------------------------------------------------ */

int
PtlInit(void)
{
	const char *log = getenv("SPINNIC_LOG");
	const char *slice = getenv("SPINNIC_WAIT_SLICE_MS");
	const char *polls = getenv("SPINNIC_WAIT_POLLS");
	long v = slice != NULL ? strtol(slice, NULL, 10) : 0;
	long p = SHIM_WAIT_SPINS;

	pthread_mutex_lock(&shim_g.lock);
	shim_log_debug = log != NULL && strcmp(log, "debug") == 0;
	/* a missed wake-up costs one slice; tests lengthen it to prove the
	 * wake-ups work */
	shim_g.slice_ms = v > 0 && v <= 60000 ? (int)v : 10;
	/* the first PtlInit only: a later one keeps spin_set_wait_polls */
	if (shim_g.init_refs == 0) {
		char *end;

		if (polls != NULL) {
			p = strtol(polls, &end, 10);
			if (end == polls || *end != '\0' || p < 0 ||
			    p > (long)SHIM_WAIT_POLLS_MAX) {
				SHIM_ERR("SPINNIC_WAIT_POLLS=%s: expected "
					 "0..%u; using %u", polls,
					 SHIM_WAIT_POLLS_MAX, SHIM_WAIT_SPINS);
				p = SHIM_WAIT_SPINS;
			}
		}
		__atomic_store_n(&shim_g.wait_polls, (unsigned)p,
				 __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&shim_g.init_refs, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
}

static void ni_release(unsigned slot);

void
PtlFini(void)
{
	pthread_mutex_lock(&shim_g.lock);
	if (shim_g.init_refs <= 0) {
		pthread_mutex_unlock(&shim_g.lock);
		return;
	}
	if (shim_g.init_refs == 1) {
		for (unsigned i = 0; i < SHIM_NI_MAX; i++) {
			if (shim_g.ni[i].refs > 0)
				ni_release(i);
		}
		shim_ctrl_detach();
	}
	__atomic_sub_fetch(&shim_g.init_refs, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&shim_g.lock);
}

/* ---- network interfaces ------------------------------------------------- */

static void
limits_to_abi(const ptl_ni_limits_t *in, struct spinnic_limits *out)
{
	if (in == NULL) {
		memset(out, 0, sizeof(*out));
		out->max_entries = out->max_unexpected_headers = -1;
		out->max_mds = out->max_cts = out->max_eqs = -1;
		out->max_pt_index = out->max_iovecs = out->max_list_size = -1;
		out->max_triggered_ops = -1;
		return;
	}
	out->max_entries = in->max_entries;
	out->max_unexpected_headers = in->max_unexpected_headers;
	out->max_mds = in->max_mds;
	out->max_cts = in->max_cts;
	out->max_eqs = in->max_eqs;
	out->max_pt_index = in->max_pt_index;
	out->max_iovecs = in->max_iovecs;
	out->max_list_size = in->max_list_size;
	out->max_triggered_ops = in->max_triggered_ops;
	out->features = in->features;
	out->max_msg_size = in->max_msg_size;
	out->max_atomic_size = in->max_atomic_size;
	out->max_fetch_atomic_size = in->max_fetch_atomic_size;
	out->max_waw_ordered_size = in->max_waw_ordered_size;
	out->max_war_ordered_size = in->max_war_ordered_size;
	out->max_volatile_size = in->max_volatile_size;
}

static void
limits_from_abi(const struct spinnic_limits *in, ptl_ni_limits_t *out)
{
	out->max_entries = in->max_entries;
	out->max_unexpected_headers = in->max_unexpected_headers;
	out->max_mds = in->max_mds;
	out->max_cts = in->max_cts;
	out->max_eqs = in->max_eqs;
	out->max_pt_index = in->max_pt_index;
	out->max_iovecs = in->max_iovecs;
	out->max_list_size = in->max_list_size;
	out->max_triggered_ops = in->max_triggered_ops;
	out->features = in->features;
	out->max_msg_size = in->max_msg_size;
	out->max_atomic_size = in->max_atomic_size;
	out->max_fetch_atomic_size = in->max_fetch_atomic_size;
	out->max_waw_ordered_size = in->max_waw_ordered_size;
	out->max_war_ordered_size = in->max_war_ordered_size;
	out->max_volatile_size = in->max_volatile_size;
}

static int
ni_tables_alloc(struct shim_ni *ni)
{
	static const unsigned kinds[] = {
		SHIM_KIND_EQ, SHIM_KIND_CT, SHIM_KIND_MD, SHIM_KIND_CTX,
		SHIM_KIND_NICMEM,
	};

	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct shim_table *t = &ni->tab[kinds[k]];
		int limit = kinds[k] == SHIM_KIND_EQ ? ni->limits.max_eqs :
			kinds[k] == SHIM_KIND_CT ? ni->limits.max_cts :
			kinds[k] == SHIM_KIND_MD ? ni->limits.max_mds : 0;

		t->cap = table_cap(limit);
		t->hint = 0;
		t->objs = calloc(t->cap, sizeof(*t->objs));
		if (t->objs == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Free the local side of an NI (the NIC already forgot it). */
static void
ni_tables_free(struct shim_ni *ni)
{
	for (unsigned k = 0; k < SHIM_KIND_MAX; k++) {
		struct shim_table *t = &ni->tab[k];

		for (uint32_t i = 0; t->objs != NULL && i < t->cap; i++) {
			struct shim_obj *o = &t->objs[i];

			if (!o->used)
				continue;
			if (k == SHIM_KIND_EQ) {
				shim_obj_drain(o, &o->u.eq.ring->futex);
				pthread_mutex_destroy(&o->u.eq.lock);
				shim_heap_free(o->u.eq.ring);
			} else if (k == SHIM_KIND_CT) {
				shim_obj_drain(o, &o->u.ct.rec->futex);
				shim_heap_free(o->u.ct.rec);
			}
			shim_obj_release(o);
		}
		free(t->objs);
		t->objs = NULL;
		t->cap = 0;
	}
	free(ni->map);
	ni->map = NULL;
	ni->map_size = 0;
}

/* Last reference of an NI gone (caller holds shim_g.lock). */
static void
ni_release(unsigned slot)
{
	struct shim_ni *ni = &shim_g.ni[slot];
	struct spinnic_ctrl_msg msg;
	int rc;

	__atomic_store_n(&ni->refs, 0, __ATOMIC_RELEASE);
	shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_NI_FINI, ni->nic_ni);
	rc = shim_ctrl_call(&msg);
	if (rc != 0)
		SHIM_DBG("NI_FINI: %s", spin_strerror(shim_ptl(rc)));
	ni_tables_free(ni);
}

int
PtlNIInit(ptl_interface_t iface, unsigned int options, ptl_pid_t pid,
	  const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual,
	  ptl_handle_ni_t *ni_handle)
{
	struct spinnic_ctrl_msg msg;
	unsigned match = options & (PTL_NI_MATCHING | PTL_NI_NO_MATCHING);
	unsigned addr = options & (PTL_NI_LOGICAL | PTL_NI_PHYSICAL);
	unsigned slot;
	struct shim_ni *ni;
	int rc;

	SHIM_ENTER();
	if ((iface != 0 && iface != PTL_IFACE_DEFAULT) || ni_handle == NULL ||
	    (options & ~PTL_NI_INIT_OPTIONS_MASK) != 0 ||
	    (match != PTL_NI_MATCHING && match != PTL_NI_NO_MATCHING) ||
	    (addr != PTL_NI_LOGICAL && addr != PTL_NI_PHYSICAL)) {
		SHIM_DBG("bad iface %u or options %#x", iface, options);
		return PTL_ARG_INVALID;
	}
	slot = (match == PTL_NI_NO_MATCHING ? 1u : 0u) |
		(addr == PTL_NI_LOGICAL ? 2u : 0u);
	ni = &shim_g.ni[slot];

	pthread_mutex_lock(&shim_g.lock);
	if (shim_g.fd >= 0 && pid != PTL_PID_ANY && pid != shim_g.id.pid) {
		pthread_mutex_unlock(&shim_g.lock);
		SHIM_DBG("pid %u differs from this process's pid %u", pid,
			 shim_g.id.pid);
		return PTL_ARG_INVALID;
	}
	if (ni->refs > 0) {
		ni->refs++;
		goto done;
	}
	rc = shim_ctrl_attach(pid);
	if (rc != 0)
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_NI_INIT;
	msg.u.ni.options = options;
	limits_to_abi(desired, &msg.u.ni.desired);
	rc = shim_ctrl_call(&msg);
	if (rc != 0)
		goto fail;
	memset(ni, 0, sizeof(*ni));
	ni->options = options;
	ni->nic_ni = msg.u.ni.ni;
	limits_from_abi(&msg.u.ni.actual, &ni->limits);
	rc = ni_tables_alloc(ni);
	if (rc < 0) {
		ni_tables_free(ni);
		shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_NI_FINI, ni->nic_ni);
		(void)shim_ctrl_call(&msg);
		goto fail;
	}
	__atomic_store_n(&ni->refs, 1, __ATOMIC_RELEASE);
done:
	if (actual != NULL)
		*actual = ni->limits;
	*ni_handle = shim_handle_make(SHIM_KIND_NI, slot, 0, 0);
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
fail:
	pthread_mutex_unlock(&shim_g.lock);
	return shim_ptl(rc);
}

int
PtlNIFini(ptl_handle_ni_t ni_handle)
{
	struct shim_ni *ni;
	unsigned slot;
	bool last;

	SHIM_ENTER();
	pthread_mutex_lock(&shim_g.lock);
	ni = shim_to_ni(ni_handle, &slot);
	last = ni != NULL && ni->refs == 1;
	pthread_mutex_unlock(&shim_g.lock);
	/* the last reference: the layout cache's entries of the NI go
	 * first (they may wait for a preparation; not under the lock) */
	if (last)
		shim_lc_flush(ni_handle);
	pthread_mutex_lock(&shim_g.lock);
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL) {
		pthread_mutex_unlock(&shim_g.lock);
		return PTL_ARG_INVALID;
	}
	if (ni->refs == 1)
		ni_release(slot);
	else
		ni->refs--;
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
}

int
PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t status_register,
	    ptl_sr_value_t *status)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || status == NULL ||
	    (unsigned)status_register >= PTL_SR_LAST)
		return PTL_ARG_INVALID;
	shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_NI_STATUS, ni->nic_ni);
	msg.u.status.reg = (uint32_t)status_register;
	rc = shim_ctrl_call(&msg);
	if (rc != 0)
		return shim_ptl(rc);
	/* ptl_sr_value_t is an int: saturate rather than wrap */
	*status = msg.u.status.value > INT_MAX ? INT_MAX :
		  (ptl_sr_value_t)msg.u.status.value;
	return PTL_OK;
}

int
PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle)
{
	unsigned kind = shim_handle_kind(handle);
	bool ok;

	SHIM_ENTER();
	switch (kind) {
	case SHIM_KIND_NI:
		ok = shim_to_ni(handle, NULL) != NULL;
		break;
	case SHIM_KIND_ME:
	case SHIM_KIND_LE:
		ok = shim_to_entry_ni(handle, kind) != NULL;
		break;
	case SHIM_KIND_EQ:
	case SHIM_KIND_CT:
	case SHIM_KIND_MD:
	case SHIM_KIND_CTX:
	case SHIM_KIND_NICMEM:
		ok = shim_obj_get(handle, kind, NULL) != NULL;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok || ni_handle == NULL)
		return PTL_ARG_INVALID;
	*ni_handle = shim_handle_make(SHIM_KIND_NI, shim_handle_ni(handle), 0,
				      0);
	return PTL_OK;
}

int
PtlHandleIsEqual(ptl_handle_any_t handle1, ptl_handle_any_t handle2)
{
	return handle1 == handle2;
}

int
PtlStartBundle(ptl_handle_ni_t ni_handle)
{
	SHIM_ENTER();
	return shim_to_ni(ni_handle, NULL) != NULL ? PTL_OK : PTL_ARG_INVALID;
}

int
PtlEndBundle(ptl_handle_ni_t ni_handle)
{
	return PtlStartBundle(ni_handle);
}
