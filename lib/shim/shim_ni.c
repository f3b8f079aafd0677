/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Library and NI life cycle, handles and object tables, logical maps,
 * portal table entries, MDs, MEs/LEs, and the allocation of EQs and CTs.
 */
#include <limits.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_internal.h"

/* portals4.h spells the values the NIC uses (spinnic_abi.h): keep equal */
static_assert(PTL_OK == SPINNIC_PTL_OK && PTL_ARG_INVALID ==
	      SPINNIC_PTL_ARG_INVALID && PTL_CT_NONE_REACHED ==
	      SPINNIC_PTL_CT_NONE_REACHED && PTL_EQ_DROPPED ==
	      SPINNIC_PTL_EQ_DROPPED && PTL_EQ_EMPTY == SPINNIC_PTL_EQ_EMPTY &&
	      PTL_FAIL == SPINNIC_PTL_FAIL && PTL_IN_USE == SPINNIC_PTL_IN_USE &&
	      PTL_INTERRUPTED == SPINNIC_PTL_INTERRUPTED &&
	      PTL_LIST_TOO_LONG == SPINNIC_PTL_LIST_TOO_LONG &&
	      PTL_NO_INIT == SPINNIC_PTL_NO_INIT &&
	      PTL_NO_SPACE == SPINNIC_PTL_NO_SPACE &&
	      PTL_PID_IN_USE == SPINNIC_PTL_PID_IN_USE &&
	      PTL_PT_FULL == SPINNIC_PTL_PT_FULL &&
	      PTL_PT_EQ_NEEDED == SPINNIC_PTL_PT_EQ_NEEDED &&
	      PTL_PT_IN_USE == SPINNIC_PTL_PT_IN_USE &&
	      PTL_ABORTED == SPINNIC_PTL_ABORTED, "return codes");
static_assert(PTL_EVENT_GET == SPINNIC_PTL_EVENT_GET &&
	      PTL_EVENT_GET_OVERFLOW == SPINNIC_PTL_EVENT_GET_OVERFLOW &&
	      PTL_EVENT_PUT == SPINNIC_PTL_EVENT_PUT &&
	      PTL_EVENT_PUT_OVERFLOW == SPINNIC_PTL_EVENT_PUT_OVERFLOW &&
	      PTL_EVENT_ATOMIC == SPINNIC_PTL_EVENT_ATOMIC &&
	      PTL_EVENT_ATOMIC_OVERFLOW == SPINNIC_PTL_EVENT_ATOMIC_OVERFLOW &&
	      PTL_EVENT_FETCH_ATOMIC == SPINNIC_PTL_EVENT_FETCH_ATOMIC &&
	      PTL_EVENT_FETCH_ATOMIC_OVERFLOW ==
	      SPINNIC_PTL_EVENT_FETCH_ATOMIC_OVERFLOW &&
	      PTL_EVENT_REPLY == SPINNIC_PTL_EVENT_REPLY &&
	      PTL_EVENT_SEND == SPINNIC_PTL_EVENT_SEND &&
	      PTL_EVENT_ACK == SPINNIC_PTL_EVENT_ACK &&
	      PTL_EVENT_PT_DISABLED == SPINNIC_PTL_EVENT_PT_DISABLED &&
	      PTL_EVENT_LINK == SPINNIC_PTL_EVENT_LINK &&
	      PTL_EVENT_AUTO_UNLINK == SPINNIC_PTL_EVENT_AUTO_UNLINK &&
	      PTL_EVENT_AUTO_FREE == SPINNIC_PTL_EVENT_AUTO_FREE &&
	      PTL_EVENT_SEARCH == SPINNIC_PTL_EVENT_SEARCH, "event kinds");
static_assert(PTL_SR_DROP_COUNT == SPINNIC_PTL_SR_DROP_COUNT &&
	      PTL_SR_PERMISSION_VIOLATIONS ==
	      SPINNIC_PTL_SR_PERMISSION_VIOLATIONS &&
	      PTL_SR_OPERATION_VIOLATIONS ==
	      SPINNIC_PTL_SR_OPERATION_VIOLATIONS &&
	      PTL_SR_LAST == SPINNIC_PTL_SR_LAST, "status registers");
static_assert(PTL_NI_OK == SPINNIC_PTL_NI_OK &&
	      PTL_NI_UNDELIVERABLE == SPINNIC_PTL_NI_UNDELIVERABLE &&
	      PTL_NI_PT_DISABLED == SPINNIC_PTL_NI_PT_DISABLED &&
	      PTL_NI_DROPPED == SPINNIC_PTL_NI_DROPPED &&
	      PTL_NI_PERM_VIOLATION == SPINNIC_PTL_NI_PERM_VIOLATION &&
	      PTL_NI_OP_VIOLATION == SPINNIC_PTL_NI_OP_VIOLATION &&
	      PTL_NI_SEGV == SPINNIC_PTL_NI_SEGV &&
	      PTL_NI_NO_MATCH == SPINNIC_PTL_NI_NO_MATCH, "ni fail types");
static_assert(PTL_NI_MATCHING == SPINNIC_PTL_NI_MATCHING &&
	      PTL_NI_NO_MATCHING == SPINNIC_PTL_NI_NO_MATCHING &&
	      PTL_NI_LOGICAL == SPINNIC_PTL_NI_LOGICAL &&
	      PTL_NI_PHYSICAL == SPINNIC_PTL_NI_PHYSICAL &&
	      PTL_NID_ANY == SPINNIC_PTL_NID_ANY &&
	      PTL_PID_ANY == SPINNIC_PTL_PID_ANY &&
	      PTL_UID_ANY == SPINNIC_PTL_UID_ANY &&
	      PTL_PT_ANY == SPINNIC_PTL_PT_ANY &&
	      PTL_PID_ANY == SPINNIC_HANDLE_NONE, "NI options, wildcards");
static_assert(PTL_PT_ONLY_USE_ONCE == SPINNIC_PTL_PT_ONLY_USE_ONCE &&
	      PTL_PT_ONLY_TRUNCATE == SPINNIC_PTL_PT_ONLY_TRUNCATE &&
	      PTL_PT_FLOWCTRL == SPINNIC_PTL_PT_FLOWCTRL &&
	      PTL_IOVEC == SPINNIC_PTL_IOVEC, "PT options");
static_assert(PTL_MD_EVENT_SUCCESS_DISABLE ==
	      SPINNIC_PTL_MD_EVENT_SUCCESS_DISABLE &&
	      PTL_MD_EVENT_SEND_DISABLE == SPINNIC_PTL_MD_EVENT_SEND_DISABLE &&
	      PTL_MD_EVENT_CT_SEND == SPINNIC_PTL_MD_EVENT_CT_SEND &&
	      PTL_MD_EVENT_CT_REPLY == SPINNIC_PTL_MD_EVENT_CT_REPLY &&
	      PTL_MD_EVENT_CT_ACK == SPINNIC_PTL_MD_EVENT_CT_ACK &&
	      PTL_MD_EVENT_CT_BYTES == SPINNIC_PTL_MD_EVENT_CT_BYTES &&
	      PTL_MD_UNORDERED == SPINNIC_PTL_MD_UNORDERED &&
	      PTL_MD_VOLATILE == SPINNIC_PTL_MD_VOLATILE, "MD options");
static_assert(PTL_ME_OP_PUT == SPINNIC_PTL_ME_OP_PUT &&
	      PTL_ME_OP_GET == SPINNIC_PTL_ME_OP_GET &&
	      PTL_ME_MANAGE_LOCAL == SPINNIC_PTL_ME_MANAGE_LOCAL &&
	      PTL_ME_NO_TRUNCATE == SPINNIC_PTL_ME_NO_TRUNCATE &&
	      PTL_ME_USE_ONCE == SPINNIC_PTL_ME_USE_ONCE &&
	      PTL_ME_MAY_ALIGN == SPINNIC_PTL_ME_MAY_ALIGN &&
	      PTL_ME_ACK_DISABLE == SPINNIC_PTL_ME_ACK_DISABLE &&
	      PTL_ME_UNEXPECTED_HDR_DISABLE ==
	      SPINNIC_PTL_ME_UNEXPECTED_HDR_DISABLE &&
	      PTL_ME_IS_ACCESSIBLE == SPINNIC_PTL_ME_IS_ACCESSIBLE &&
	      PTL_ME_EVENT_COMM_DISABLE == SPINNIC_PTL_ME_EVENT_COMM_DISABLE &&
	      PTL_ME_EVENT_FLOWCTRL_DISABLE ==
	      SPINNIC_PTL_ME_EVENT_FLOWCTRL_DISABLE &&
	      PTL_ME_EVENT_SUCCESS_DISABLE ==
	      SPINNIC_PTL_ME_EVENT_SUCCESS_DISABLE &&
	      PTL_ME_EVENT_OVER_DISABLE == SPINNIC_PTL_ME_EVENT_OVER_DISABLE &&
	      PTL_ME_EVENT_UNLINK_DISABLE ==
	      SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE &&
	      PTL_ME_EVENT_LINK_DISABLE == SPINNIC_PTL_ME_EVENT_LINK_DISABLE &&
	      PTL_ME_EVENT_CT_COMM == SPINNIC_PTL_ME_EVENT_CT_COMM &&
	      PTL_ME_EVENT_CT_OVERFLOW == SPINNIC_PTL_ME_EVENT_CT_OVERFLOW &&
	      PTL_ME_EVENT_CT_BYTES == SPINNIC_PTL_ME_EVENT_CT_BYTES &&
	      PTL_ME_AUTH_USE_JID == SPINNIC_PTL_ME_AUTH_USE_JID, "ME options");
static_assert(PTL_PRIORITY_LIST == SPINNIC_PTL_PRIORITY_LIST &&
	      PTL_OVERFLOW_LIST == SPINNIC_PTL_OVERFLOW_LIST &&
	      PTL_SEARCH_ONLY == SPINNIC_PTL_SEARCH_ONLY &&
	      PTL_SEARCH_DELETE == SPINNIC_PTL_SEARCH_DELETE &&
	      PTL_NO_ACK_REQ == SPINNIC_PTL_NO_ACK_REQ &&
	      PTL_ACK_REQ == SPINNIC_PTL_ACK_REQ &&
	      PTL_CT_ACK_REQ == SPINNIC_PTL_CT_ACK_REQ &&
	      PTL_OC_ACK_REQ == SPINNIC_PTL_OC_ACK_REQ, "lists, acks");

#define MD_OPTIONS (PTL_MD_EVENT_SUCCESS_DISABLE | PTL_MD_EVENT_SEND_DISABLE | \
	PTL_MD_EVENT_CT_SEND | PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_CT_ACK | \
	PTL_MD_EVENT_CT_BYTES | PTL_MD_UNORDERED | PTL_MD_VOLATILE | PTL_IOVEC)
#define ME_OPTIONS (((PTL_ME_AUTH_USE_JID << 1) - 1) | PTL_IOVEC)
#define LE_OPTIONS (PTL_LE_OP_PUT | PTL_LE_OP_GET | PTL_LE_USE_ONCE | \
	PTL_LE_ACK_DISABLE | PTL_LE_UNEXPECTED_HDR_DISABLE | \
	PTL_LE_IS_ACCESSIBLE | PTL_LE_EVENT_COMM_DISABLE | \
	PTL_LE_EVENT_FLOWCTRL_DISABLE | PTL_LE_EVENT_SUCCESS_DISABLE | \
	PTL_LE_EVENT_OVER_DISABLE | PTL_LE_EVENT_UNLINK_DISABLE | \
	PTL_LE_EVENT_LINK_DISABLE | PTL_LE_EVENT_CT_COMM | \
	PTL_LE_EVENT_CT_OVERFLOW | PTL_LE_EVENT_CT_BYTES | \
	PTL_LE_AUTH_USE_JID | PTL_IOVEC)
#define PT_OPTIONS (PTL_PT_ONLY_USE_ONCE | PTL_PT_ONLY_TRUNCATE | \
	PTL_PT_FLOWCTRL)
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

/* reverse map entry of a logical NI, sorted by (nid, pid) */
struct rmap {
	uint32_t nid, pid, rank;
};

static const char *const ptl_names[] = {
	"PTL_OK", "PTL_ARG_INVALID", "PTL_CT_NONE_REACHED", "PTL_EQ_DROPPED",
	"PTL_EQ_EMPTY", "PTL_FAIL", "PTL_IN_USE", "PTL_INTERRUPTED",
	"PTL_LIST_TOO_LONG", "PTL_NO_INIT", "PTL_NO_SPACE", "PTL_PID_IN_USE",
	"PTL_PT_FULL", "PTL_PT_EQ_NEEDED", "PTL_PT_IN_USE", "PTL_ABORTED",
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
shim_ready(void)
{
	if (__atomic_load_n(&shim_g.init_refs, __ATOMIC_ACQUIRE) <= 0)
		return PTL_NO_INIT;
	return PTL_OK;
}

/* ---- handles and tables ------------------------------------------------ */

struct shim_ni *
shim_ni_get(ptl_handle_ni_t h, unsigned *slot_p)
{
	unsigned slot = shim_handle_ni(h);

	if (shim_handle_kind(h) != SHIM_KIND_NI || slot >= SHIM_NI_MAX ||
	    (h & 0xffffffffffffull) != 0 ||
	    __atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
		return NULL;
	if (slot_p != NULL)
		*slot_p = slot;
	return &shim_g.ni[slot];
}

struct shim_obj *
shim_obj_get(ptl_handle_any_t h, unsigned kind, struct shim_ni **ni_p)
{
	unsigned slot = shim_handle_ni(h);
	uint32_t idx = shim_handle_idx(h);
	struct shim_table *t;
	struct shim_obj *o;

	if (shim_handle_kind(h) != kind || slot >= SHIM_NI_MAX ||
	    __atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
		return NULL;
	t = &shim_g.ni[slot].tab[kind];
	if (idx >= t->cap)
		return NULL;
	o = &t->objs[idx];
	if (!__atomic_load_n(&o->used, __ATOMIC_ACQUIRE) ||
	    o->gen != shim_handle_gen(h))
		return NULL;
	if (ni_p != NULL)
		*ni_p = &shim_g.ni[slot];
	return o;
}

struct shim_obj *
shim_obj_alloc(struct shim_ni *ni, unsigned slot, unsigned kind,
	       ptl_handle_any_t *h_p)
{
	struct shim_table *t = &ni->tab[kind];

	for (uint32_t k = 0; k < t->cap; k++) {
		uint32_t i = (t->hint + k) % t->cap;
		struct shim_obj *o = &t->objs[i];

		if (o->used)
			continue;
		memset(&o->u, 0, sizeof(o->u));
		o->gen++;
		o->closing = 0;
		o->waiters = 0;
		o->nic_id = SPINNIC_HANDLE_NONE;
		__atomic_store_n(&o->used, 1, __ATOMIC_RELEASE);
		t->hint = i + 1;
		*h_p = shim_handle_make(kind, slot, o->gen, i);
		return o;
	}
	return NULL;
}

void
shim_obj_release(struct shim_obj *o)
{
	__atomic_store_n(&o->used, 0, __ATOMIC_RELEASE);
}

int64_t
shim_opt_handle(ptl_handle_any_t h, unsigned kind, unsigned slot)
{
	struct shim_obj *o;

	if ((kind == SHIM_KIND_EQ && h == PTL_EQ_NONE) ||
	    (kind == SHIM_KIND_CT && h == PTL_CT_NONE) ||
	    (kind == SHIM_KIND_CTX && h == SPIN_CTX_NONE))
		return SPINNIC_HANDLE_NONE;
	o = shim_obj_get(h, kind, NULL);
	if (o == NULL || shim_handle_ni(h) != slot || o->closing)
		return -1;
	return o->nic_id;
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
	long v = slice != NULL ? strtol(slice, NULL, 10) : 0;

	pthread_mutex_lock(&shim_g.lock);
	shim_log_debug = log != NULL && strcmp(log, "debug") == 0;
	/* a missed wake-up costs one slice; tests lengthen it to prove the
	 * wake-ups work */
	shim_g.slice_ms = v > 0 && v <= 60000 ? (int)v : 10;
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
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_NI_FINI;
	msg.u.ni.ni = ni->nic_ni;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK)
		SHIM_DBG("NI_FINI: %s", spin_strerror(rc));
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

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
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
	if (rc != PTL_OK)
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_NI_INIT;
	msg.u.ni.options = options;
	limits_to_abi(desired, &msg.u.ni.desired);
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK)
		goto fail;
	memset(ni, 0, sizeof(*ni));
	ni->options = options;
	ni->nic_ni = msg.u.ni.ni;
	limits_from_abi(&msg.u.ni.actual, &ni->limits);
	if (ni_tables_alloc(ni) < 0) {
		ni_tables_free(ni);
		memset(&msg, 0, sizeof(msg));
		msg.op = SPINNIC_CTRL_NI_FINI;
		msg.u.ni.ni = ni->nic_ni;
		(void)shim_ctrl_call(&msg);
		rc = PTL_NO_SPACE;
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
	return rc;
}

int
PtlNIFini(ptl_handle_ni_t ni_handle)
{
	struct shim_ni *ni;
	unsigned slot;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	pthread_mutex_lock(&shim_g.lock);
	ni = shim_ni_get(ni_handle, &slot);
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

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, NULL);
	if (ni == NULL || status == NULL ||
	    (unsigned)status_register >= PTL_SR_LAST)
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_NI_STATUS;
	msg.u.status.ni = ni->nic_ni;
	msg.u.status.reg = (uint32_t)status_register;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK)
		return rc;
	/* ptl_sr_value_t is an int: saturate rather than wrap */
	*status = msg.u.status.value > INT_MAX ? INT_MAX :
		  (ptl_sr_value_t)msg.u.status.value;
	return PTL_OK;
}

int
PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle)
{
	unsigned kind = shim_handle_kind(handle);
	unsigned slot = shim_handle_ni(handle);

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (ni_handle == NULL || slot >= SHIM_NI_MAX)
		return PTL_ARG_INVALID;
	switch (kind) {
	case SHIM_KIND_NI:
		if (shim_ni_get(handle, NULL) == NULL)
			return PTL_ARG_INVALID;
		break;
	case SHIM_KIND_ME:
	case SHIM_KIND_LE:
		if (__atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
			return PTL_ARG_INVALID;
		break;
	case SHIM_KIND_EQ:
	case SHIM_KIND_CT:
	case SHIM_KIND_MD:
	case SHIM_KIND_CTX:
	case SHIM_KIND_NICMEM:
		if (shim_obj_get(handle, kind, NULL) == NULL)
			return PTL_ARG_INVALID;
		break;
	default:
		return PTL_ARG_INVALID;
	}
	*ni_handle = shim_handle_make(SHIM_KIND_NI, slot, 0, 0);
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
	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	return shim_ni_get(ni_handle, NULL) != NULL ? PTL_OK : PTL_ARG_INVALID;
}

int
PtlEndBundle(ptl_handle_ni_t ni_handle)
{
	return PtlStartBundle(ni_handle);
}

/* ---- ids and logical maps ---------------------------------------------- */

static int
rmap_cmp(const void *a, const void *b)
{
	const struct rmap *x = a, *y = b;

	if (x->nid != y->nid)
		return x->nid < y->nid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* rank of a physical id on a logical NI (caller holds shim_g.lock) */
static int
rmap_find(const struct shim_ni *ni, uint32_t nid, uint32_t pid,
	  ptl_rank_t *rank_p)
{
	const struct rmap *r = (const struct rmap *)(ni->map + ni->map_size);
	size_t lo = 0, hi = ni->map_size;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].nid < nid || (r[mid].nid == nid && r[mid].pid < pid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ni->map_size && r[lo].nid == nid && r[lo].pid == pid) {
		*rank_p = r[lo].rank;
		return 1;
	}
	return 0;
}

int
PtlSetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
	  const ptl_process_t *mapping)
{
	struct shim_ni *ni;
	ptl_process_t *map;
	struct rmap *r;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, NULL);
	if (ni == NULL || (ni->options & PTL_NI_LOGICAL) == 0 ||
	    map_size == 0 || mapping == NULL || map_size > UINT32_MAX)
		return PTL_ARG_INVALID;
	/* one allocation: the map, then its reverse sorted by (nid, pid) */
	map = malloc(map_size * (sizeof(*map) + sizeof(*r)));
	if (map == NULL)
		return PTL_NO_SPACE;
	memcpy(map, mapping, map_size * sizeof(*map));
	r = (struct rmap *)(map + map_size);
	for (ptl_size_t i = 0; i < map_size; i++) {
		r[i].nid = map[i].phys.nid;
		r[i].pid = map[i].phys.pid;
		r[i].rank = (uint32_t)i;
	}
	qsort(r, map_size, sizeof(*r), rmap_cmp);
	pthread_mutex_lock(&shim_g.lock);
	free(ni->map);
	ni->map = map;
	ni->map_size = map_size;
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
}

int
PtlGetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
	  ptl_process_t *mapping, ptl_size_t *actual_map_size)
{
	struct shim_ni *ni;
	ptl_size_t n;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, NULL);
	if (ni == NULL || (ni->options & PTL_NI_LOGICAL) == 0 ||
	    actual_map_size == NULL || (map_size > 0 && mapping == NULL))
		return PTL_ARG_INVALID;
	pthread_mutex_lock(&shim_g.lock);
	if (ni->map == NULL) {
		pthread_mutex_unlock(&shim_g.lock);
		return PTL_ARG_INVALID;
	}
	n = map_size < ni->map_size ? map_size : ni->map_size;
	memcpy(mapping, ni->map, n * sizeof(*mapping));
	*actual_map_size = ni->map_size;
	pthread_mutex_unlock(&shim_g.lock);
	return PTL_OK;
}

int
shim_target(const struct shim_ni *ni, ptl_process_t in,
	    struct spinnic_pid *out, int wildcard_ok)
{
	if ((ni->options & PTL_NI_LOGICAL) != 0) {
		if (in.rank == PTL_RANK_ANY) {
			if (!wildcard_ok)
				return PTL_ARG_INVALID;
			out->nid = PTL_NID_ANY;
			out->pid = PTL_PID_ANY;
			return PTL_OK;
		}
		pthread_mutex_lock(&shim_g.lock);
		if (ni->map == NULL || in.rank >= ni->map_size) {
			pthread_mutex_unlock(&shim_g.lock);
			SHIM_DBG("rank %u not in the map", in.rank);
			return PTL_ARG_INVALID;
		}
		out->nid = ni->map[in.rank].phys.nid;
		out->pid = ni->map[in.rank].phys.pid;
		pthread_mutex_unlock(&shim_g.lock);
		return PTL_OK;
	}
	if (!wildcard_ok &&
	    (in.phys.nid == PTL_NID_ANY || in.phys.pid == PTL_PID_ANY))
		return PTL_ARG_INVALID;
	out->nid = in.phys.nid;
	out->pid = in.phys.pid;
	return PTL_OK;
}

ptl_process_t
shim_initiator(const struct shim_ni *ni, struct spinnic_pid p)
{
	ptl_process_t id;

	if ((ni->options & PTL_NI_LOGICAL) == 0) {
		id.phys.nid = p.nid;
		id.phys.pid = p.pid;
		return id;
	}
	id.rank = PTL_RANK_ANY;
	pthread_mutex_lock(&shim_g.lock);
	if (ni->map != NULL)
		(void)rmap_find(ni, p.nid, p.pid, &id.rank);
	pthread_mutex_unlock(&shim_g.lock);
	return id;
}

int
PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid)
{
	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (shim_ni_get(ni_handle, NULL) == NULL || uid == NULL)
		return PTL_ARG_INVALID;
	*uid = (ptl_uid_t)getuid();
	return PTL_OK;
}

int
PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid)
{
	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (shim_ni_get(ni_handle, NULL) == NULL || jid == NULL)
		return PTL_ARG_INVALID;
	*jid = PTL_JID_NONE;
	return PTL_OK;
}

int
PtlGetPhysId(ptl_handle_ni_t ni_handle, ptl_process_t *id)
{
	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (shim_ni_get(ni_handle, NULL) == NULL || id == NULL)
		return PTL_ARG_INVALID;
	id->phys.nid = shim_g.id.nid;
	id->phys.pid = shim_g.id.pid;
	return PTL_OK;
}

int
PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_t *id)
{
	struct shim_ni *ni;
	int found = 0;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, NULL);
	if (ni == NULL || id == NULL)
		return PTL_ARG_INVALID;
	if ((ni->options & PTL_NI_LOGICAL) == 0)
		return PtlGetPhysId(ni_handle, id);
	pthread_mutex_lock(&shim_g.lock);
	if (ni->map != NULL)
		found = rmap_find(ni, shim_g.id.nid, shim_g.id.pid, &id->rank);
	pthread_mutex_unlock(&shim_g.lock);
	return found ? PTL_OK : PTL_ARG_INVALID;
}

/* ---- portal table ------------------------------------------------------- */

static int
pt_index_ok(const struct shim_ni *ni, ptl_pt_index_t i)
{
	return ni->limits.max_pt_index < 0 ||
		i <= (ptl_pt_index_t)ni->limits.max_pt_index;
}

int
PtlPTAlloc(ptl_handle_ni_t ni_handle, unsigned int options,
	   ptl_handle_eq_t eq_handle, ptl_pt_index_t pt_index_req,
	   ptl_pt_index_t *pt_index)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int64_t eq;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, &slot);
	if (ni == NULL || pt_index == NULL || (options & ~PT_OPTIONS) != 0 ||
	    (pt_index_req != PTL_PT_ANY && !pt_index_ok(ni, pt_index_req)))
		return PTL_ARG_INVALID;
	eq = shim_opt_handle(eq_handle, SHIM_KIND_EQ, slot);
	if (eq < 0)
		return PTL_ARG_INVALID;
	if ((options & PTL_PT_FLOWCTRL) != 0 && eq == SPINNIC_HANDLE_NONE)
		return PTL_PT_EQ_NEEDED;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_PT_ALLOC;
	msg.u.pt.ni = ni->nic_ni;
	msg.u.pt.options = options;
	msg.u.pt.eq = (uint32_t)eq;
	msg.u.pt.pt_index = pt_index_req;
	rc = shim_ctrl_call(&msg);
	if (rc == PTL_OK)
		*pt_index = msg.u.pt.pt_index;
	return rc;
}

static int
pt_op(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, uint16_t op)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, NULL);
	if (ni == NULL || pt_index == PTL_PT_ANY || !pt_index_ok(ni, pt_index))
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = op;
	msg.u.pt.ni = ni->nic_ni;
	msg.u.pt.eq = SPINNIC_HANDLE_NONE;
	msg.u.pt.pt_index = pt_index;
	return shim_ctrl_call(&msg);
}

int
PtlPTFree(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	return pt_op(ni_handle, pt_index, SPINNIC_CTRL_PT_FREE);
}

int
PtlPTDisable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	return pt_op(ni_handle, pt_index, SPINNIC_CTRL_PT_DISABLE);
}

int
PtlPTEnable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	return pt_op(ni_handle, pt_index, SPINNIC_CTRL_PT_ENABLE);
}

/* ---- memory descriptors ------------------------------------------------- */

/* Bytes described by start/length/options; -1 if invalid. */
static int64_t
mem_bytes(const struct shim_ni *ni, const void *start, ptl_size_t length,
	  unsigned int options)
{
	const ptl_iovec_t *iov = start;
	uint64_t sum = 0;

	if ((options & PTL_IOVEC) == 0) {
		if ((start == NULL && length > 0) || length > INT64_MAX)
			return -1;
		return (int64_t)length;
	}
	if (start == NULL || length == 0 || (ni->limits.max_iovecs > 0 &&
	    length > (ptl_size_t)ni->limits.max_iovecs))
		return -1;
	for (ptl_size_t i = 0; i < length; i++) {
		if ((iov[i].iov_base == NULL && iov[i].iov_len > 0) ||
		    iov[i].iov_len > INT64_MAX - sum)
			return -1;
		sum += iov[i].iov_len;
	}
	return (int64_t)sum;
}

int
PtlMDBind(ptl_handle_ni_t ni_handle, const ptl_md_t *md,
	  ptl_handle_md_t *md_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	int64_t eq, ct, bytes;
	ptl_handle_any_t h;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, &slot);
	if (ni == NULL || md == NULL || md_handle == NULL ||
	    (md->options & ~MD_OPTIONS) != 0)
		return PTL_ARG_INVALID;
	bytes = mem_bytes(ni, md->start, md->length, md->options);
	eq = shim_opt_handle(md->eq_handle, SHIM_KIND_EQ, slot);
	ct = shim_opt_handle(md->ct_handle, SHIM_KIND_CT, slot);
	if (bytes < 0 || eq < 0 || ct < 0)
		return PTL_ARG_INVALID;

	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_MD, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL)
		return PTL_NO_SPACE;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_MD_BIND;
	msg.u.md.ni = ni->nic_ni;
	msg.u.md.start = (uint64_t)(uintptr_t)md->start;
	msg.u.md.length = md->length;
	msg.u.md.options = md->options;
	msg.u.md.eq = (uint32_t)eq;
	msg.u.md.ct = (uint32_t)ct;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK) {
		shim_obj_release(o);
		return rc;
	}
	o->nic_id = msg.u.md.md;
	o->u.md.start = (uint64_t)(uintptr_t)md->start;
	o->u.md.length = (uint64_t)bytes;
	o->u.md.options = md->options;
	*md_handle = h;
	return PTL_OK;
}

int
PtlMDRelease(ptl_handle_md_t md_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(md_handle, SHIM_KIND_MD, &ni);
	if (o == NULL)
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_MD_RELEASE;
	msg.u.md.ni = ni->nic_ni;
	msg.u.md.md = o->nic_id;
	msg.u.md.eq = msg.u.md.ct = SPINNIC_HANDLE_NONE;
	rc = shim_ctrl_call(&msg);
	if (rc == PTL_OK || rc == PTL_FAIL)
		shim_obj_release(o);
	return rc;
}

/* ---- list entries ------------------------------------------------------- */

static int
entry_fill(struct shim_ni *ni, unsigned slot, ptl_pt_index_t pt_index,
	   const ptl_me_t *me, int is_le, ptl_handle_any_t ctx_h, void *user_ptr,
	   struct spinnic_ctrl_me *m)
{
	unsigned int mask = is_le ? LE_OPTIONS : ME_OPTIONS;
	int64_t ct, ctx;
	int rc;

	if ((me->options & ~mask) != 0 || pt_index == PTL_PT_ANY ||
	    !pt_index_ok(ni, pt_index) ||
	    mem_bytes(ni, me->start, me->length, me->options) < 0)
		return PTL_ARG_INVALID;
	ct = shim_opt_handle(me->ct_handle, SHIM_KIND_CT, slot);
	ctx = shim_opt_handle(ctx_h, SHIM_KIND_CTX, slot);
	if (ct < 0 || ctx < 0)
		return PTL_ARG_INVALID;
	m->ni = ni->nic_ni;
	m->pt_index = pt_index;
	m->me = SPINNIC_HANDLE_NONE;
	m->start = (uint64_t)(uintptr_t)me->start;
	m->length = me->length;
	m->options = me->options;
	m->ct = (uint32_t)ct;
	m->uid = me->uid;
	m->ctx = (uint32_t)ctx;
	m->user_ptr = (uint64_t)(uintptr_t)user_ptr;
	if (is_le) {
		m->match_id.nid = PTL_NID_ANY;
		m->match_id.pid = PTL_PID_ANY;
		return PTL_OK;
	}
	rc = shim_target(ni, me->match_id, &m->match_id, 1);
	if (rc != PTL_OK)
		return rc;
	m->match_bits = me->match_bits;
	m->ignore_bits = me->ignore_bits;
	m->min_free = me->min_free;
	return PTL_OK;
}

int
shim_entry_append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		  const ptl_me_t *me, int is_le, ptl_list_t list,
		  ptl_handle_any_t ctx_h, void *user_ptr,
		  ptl_handle_any_t *h_p)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, &slot);
	if (ni == NULL || me == NULL || h_p == NULL ||
	    (list != PTL_PRIORITY_LIST && list != PTL_OVERFLOW_LIST) ||
	    ((ni->options & PTL_NI_NO_MATCHING) != 0) != (is_le != 0))
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_ME_APPEND;
	rc = entry_fill(ni, slot, pt_index, me, is_le, ctx_h, user_ptr,
			&msg.u.me);
	if (rc != PTL_OK)
		return rc;
	msg.u.me.list = list;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK)
		return rc;
	*h_p = shim_handle_make(is_le ? SHIM_KIND_LE : SHIM_KIND_ME, slot, 0,
				msg.u.me.me);
	return PTL_OK;
}

static int
entry_unlink(ptl_handle_any_t h, unsigned kind)
{
	struct spinnic_ctrl_msg msg;
	unsigned slot = shim_handle_ni(h);

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	if (shim_handle_kind(h) != kind || slot >= SHIM_NI_MAX ||
	    __atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_ME_UNLINK;
	msg.u.me.ni = shim_g.ni[slot].nic_ni;
	msg.u.me.me = shim_handle_idx(h);
	msg.u.me.ct = msg.u.me.ctx = SPINNIC_HANDLE_NONE;
	return shim_ctrl_call(&msg);
}

static int
entry_search(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	     const ptl_me_t *me, int is_le, ptl_search_op_t op,
	     void *user_ptr)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, &slot);
	if (ni == NULL || me == NULL ||
	    (op != PTL_SEARCH_ONLY && op != PTL_SEARCH_DELETE) ||
	    ((ni->options & PTL_NI_NO_MATCHING) != 0) != (is_le != 0))
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_ME_SEARCH;
	rc = entry_fill(ni, slot, pt_index, me, is_le, SPIN_CTX_NONE, user_ptr,
			&msg.u.me);
	if (rc != PTL_OK)
		return rc;
	msg.u.me.list = op;
	return shim_ctrl_call(&msg);
}

/* ptl_le_t as a ptl_me_t without matching */
static ptl_me_t
le_to_me(const ptl_le_t *le)
{
	ptl_me_t me = {
		.start = le->start, .length = le->length,
		.ct_handle = le->ct_handle, .uid = le->uid,
		.options = le->options,
	};

	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	return me;
}

int
PtlMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr,
	    ptl_handle_me_t *me_handle)
{
	return shim_entry_append(ni_handle, pt_index, me, 0, ptl_list,
				 SPIN_CTX_NONE, user_ptr, me_handle);
}

int
PtlMEUnlink(ptl_handle_me_t me_handle)
{
	return entry_unlink(me_handle, SHIM_KIND_ME);
}

int
PtlMESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_me_t *me, ptl_search_op_t ptl_search_op, void *user_ptr)
{
	return entry_search(ni_handle, pt_index, me, 0, ptl_search_op,
			    user_ptr);
}

int
PtlLEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_le_t *le, ptl_list_t ptl_list, void *user_ptr,
	    ptl_handle_le_t *le_handle)
{
	ptl_me_t me;

	if (le == NULL)
		return shim_ready() != PTL_OK ? PTL_NO_INIT : PTL_ARG_INVALID;
	me = le_to_me(le);
	return shim_entry_append(ni_handle, pt_index, &me, 1, ptl_list,
				 SPIN_CTX_NONE, user_ptr, le_handle);
}

int
PtlLEUnlink(ptl_handle_le_t le_handle)
{
	return entry_unlink(le_handle, SHIM_KIND_LE);
}

int
PtlLESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_le_t *le, ptl_search_op_t ptl_search_op, void *user_ptr)
{
	ptl_me_t me;

	if (le == NULL)
		return shim_ready() != PTL_OK ? PTL_NO_INIT : PTL_ARG_INVALID;
	me = le_to_me(le);
	return entry_search(ni_handle, pt_index, &me, 1, ptl_search_op,
			    user_ptr);
}

/* ---- event queues and counters: allocation ------------------------------ */

int
PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
	   ptl_handle_eq_t *eq_handle)
{
	struct spinnic_ctrl_msg msg;
	struct spinnic_eq *ring;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	ptl_handle_any_t h;
	uint32_t n = 1;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, &slot);
	if (ni == NULL || eq_handle == NULL || count == 0 ||
	    count > (1u << 24))
		return PTL_ARG_INVALID;
	while (n < count)
		n <<= 1;
	ring = shim_heap_alloc(sizeof(*ring) +
			       (size_t)n * sizeof(struct spinnic_event));
	if (ring == NULL)
		return PTL_NO_SPACE;
	memset(ring, 0, sizeof(*ring) + (size_t)n * sizeof(ring->slots[0]));
	ring->mask = n - 1;

	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_EQ, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL) {
		shim_heap_free(ring);
		return PTL_NO_SPACE;
	}
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_EQ_ALLOC;
	msg.u.eq.ni = ni->nic_ni;
	msg.u.eq.eq = SPINNIC_HANDLE_NONE;
	msg.u.eq.ring_off = shim_region_off(ring);
	msg.u.eq.count = n;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK) {
		shim_obj_release(o);
		shim_heap_free(ring);
		return rc;
	}
	o->nic_id = msg.u.eq.eq;
	o->u.eq.ring = ring;
	o->u.eq.count = n;
	pthread_mutex_init(&o->u.eq.lock, NULL);
	*eq_handle = h;
	return PTL_OK;
}

int
PtlEQFree(ptl_handle_eq_t eq_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(eq_handle, SHIM_KIND_EQ, &ni);
	if (o == NULL || o->closing)
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_EQ_FREE;
	msg.u.eq.ni = ni->nic_ni;
	msg.u.eq.eq = o->nic_id;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK && rc != PTL_FAIL)
		return rc;
	/* the NIC no longer writes the ring (or is gone): release it */
	shim_obj_drain(o, &o->u.eq.ring->futex);
	pthread_mutex_destroy(&o->u.eq.lock);
	shim_heap_free(o->u.eq.ring);
	shim_obj_release(o);
	return rc;
}

int
PtlCTAlloc(ptl_handle_ni_t ni_handle, ptl_handle_ct_t *ct_handle)
{
	struct spinnic_ctrl_msg msg;
	struct spinnic_ct *rec;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	ptl_handle_any_t h;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	ni = shim_ni_get(ni_handle, &slot);
	if (ni == NULL || ct_handle == NULL)
		return PTL_ARG_INVALID;
	rec = shim_heap_alloc(sizeof(*rec));
	if (rec == NULL)
		return PTL_NO_SPACE;
	memset(rec, 0, sizeof(*rec));
	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_CT, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL) {
		shim_heap_free(rec);
		return PTL_NO_SPACE;
	}
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_CT_ALLOC;
	msg.u.ct.ni = ni->nic_ni;
	msg.u.ct.ct = SPINNIC_HANDLE_NONE;
	msg.u.ct.ct_off = shim_region_off(rec);
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK) {
		shim_obj_release(o);
		shim_heap_free(rec);
		return rc;
	}
	o->nic_id = msg.u.ct.ct;
	o->u.ct.rec = rec;
	*ct_handle = h;
	return PTL_OK;
}

int
PtlCTFree(ptl_handle_ct_t ct_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(ct_handle, SHIM_KIND_CT, &ni);
	if (o == NULL || o->closing)
		return PTL_ARG_INVALID;
	memset(&msg, 0, sizeof(msg));
	msg.op = SPINNIC_CTRL_CT_FREE;
	msg.u.ct.ni = ni->nic_ni;
	msg.u.ct.ct = o->nic_id;
	rc = shim_ctrl_call(&msg);
	if (rc != PTL_OK && rc != PTL_FAIL)
		return rc;
	shim_obj_drain(o, &o->u.ct.rec->futex);
	shim_heap_free(o->u.ct.rec);
	shim_obj_release(o);
	return rc;
}
