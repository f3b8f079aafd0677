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
	shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_NI_FINI, ni->nic_ni);
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
		shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_NI_FINI, ni->nic_ni);
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

	SHIM_ENTER();
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
