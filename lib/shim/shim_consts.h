/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Portals constants the NIC shares with portals4.h, listed once.
 * portals4.h spells them PTL_x, spinnic_abi.h (wire.h for the atomic
 * operations and datatypes, which are wire bytes) SPINNIC_PTL_x: each list
 * generates the check that both spellings agree, and the return codes
 * also their names and the errno each stands for inside the shim.
 * Included by shim_ni.c only. Not installed.
 */
#ifndef SHIM_CONSTS_H
#define SHIM_CONSTS_H

#include <assert.h>
#include <errno.h>

#include "portals4.h"
#include "spinnic_abi.h"
#include "wire.h"

/* return codes the NIC sends too, in value order: X(name, errno inside
 * the shim) */
#define SHIM_PTL_NIC_CODES(X) \
	X(OK, 0) \
	X(ARG_INVALID, EINVAL) \
	X(CT_NONE_REACHED, ETIMEDOUT) \
	X(EQ_DROPPED, EOVERFLOW) \
	X(EQ_EMPTY, EAGAIN) \
	X(FAIL, EIO) \
	X(IN_USE, EBUSY) \
	X(INTERRUPTED, EINTR) \
	X(LIST_TOO_LONG, E2BIG) \
	X(NO_INIT, ENXIO) \
	X(NO_SPACE, ENOMEM) \
	X(PID_IN_USE, EADDRINUSE) \
	X(PT_FULL, ENOSPC) \
	X(PT_EQ_NEEDED, EDESTADDRREQ) \
	X(PT_IN_USE, EEXIST) \
	X(ABORTED, ECANCELED)

/* return codes of the shim alone, after those: PTL_IGNORED (PtlSetMap
 * never ignores a map; named so that spec code compiles) */
#define SHIM_PTL_OWN_CODES(X) \
	X(IGNORED, EALREADY)

/* every return code, in value order */
#define SHIM_PTL_RETURN_CODES(X) SHIM_PTL_NIC_CODES(X) SHIM_PTL_OWN_CODES(X)

/* every other shared constant: event kinds, status registers, NI fail
 * types, NI/PT/MD/ME options, wildcards, lists and acks */
#define SHIM_PTL_SHARED(X) \
	X(EVENT_GET) X(EVENT_GET_OVERFLOW) X(EVENT_PUT) \
	X(EVENT_PUT_OVERFLOW) X(EVENT_ATOMIC) X(EVENT_ATOMIC_OVERFLOW) \
	X(EVENT_FETCH_ATOMIC) X(EVENT_FETCH_ATOMIC_OVERFLOW) \
	X(EVENT_REPLY) X(EVENT_SEND) X(EVENT_ACK) X(EVENT_PT_DISABLED) \
	X(EVENT_LINK) X(EVENT_AUTO_UNLINK) X(EVENT_AUTO_FREE) \
	X(EVENT_SEARCH) \
	X(SR_DROP_COUNT) X(SR_PERMISSION_VIOLATIONS) \
	X(SR_OPERATION_VIOLATIONS) X(SR_LAST) \
	X(NI_OK) X(NI_UNDELIVERABLE) X(NI_PT_DISABLED) X(NI_DROPPED) \
	X(NI_PERM_VIOLATION) X(NI_OP_VIOLATION) X(NI_SEGV) X(NI_NO_MATCH) \
	X(NI_MATCHING) X(NI_NO_MATCHING) X(NI_LOGICAL) X(NI_PHYSICAL) \
	X(NID_ANY) X(PID_ANY) X(UID_ANY) X(PT_ANY) \
	X(PT_ONLY_USE_ONCE) X(PT_ONLY_TRUNCATE) X(PT_FLOWCTRL) X(IOVEC) \
	X(MD_EVENT_SUCCESS_DISABLE) X(MD_EVENT_SEND_DISABLE) \
	X(MD_EVENT_CT_SEND) X(MD_EVENT_CT_REPLY) X(MD_EVENT_CT_ACK) \
	X(MD_EVENT_CT_BYTES) X(MD_UNORDERED) X(MD_VOLATILE) \
	X(ME_OP_PUT) X(ME_OP_GET) X(ME_MANAGE_LOCAL) X(ME_NO_TRUNCATE) \
	X(ME_USE_ONCE) X(ME_MAY_ALIGN) X(ME_ACK_DISABLE) \
	X(ME_UNEXPECTED_HDR_DISABLE) X(ME_IS_ACCESSIBLE) \
	X(ME_EVENT_COMM_DISABLE) X(ME_EVENT_FLOWCTRL_DISABLE) \
	X(ME_EVENT_SUCCESS_DISABLE) X(ME_EVENT_OVER_DISABLE) \
	X(ME_EVENT_UNLINK_DISABLE) X(ME_EVENT_LINK_DISABLE) \
	X(ME_EVENT_CT_COMM) X(ME_EVENT_CT_OVERFLOW) X(ME_EVENT_CT_BYTES) \
	X(ME_AUTH_USE_JID) X(ME_LOCAL_INC_UH_RLENGTH) \
	X(PRIORITY_LIST) X(OVERFLOW_LIST) X(SEARCH_ONLY) X(SEARCH_DELETE) \
	X(NO_ACK_REQ) X(ACK_REQ) X(CT_ACK_REQ) X(OC_ACK_REQ) \
	SHIM_PTL_ATOMICS(X)

/* atomic operations and datatypes (wire.h) */
#define SHIM_PTL_ATOMICS(X) \
	X(MIN) X(MAX) X(SUM) X(PROD) X(LOR) X(LAND) X(BOR) X(BAND) \
	X(LXOR) X(BXOR) X(SWAP) X(CSWAP) X(CSWAP_NE) X(CSWAP_LE) \
	X(CSWAP_LT) X(CSWAP_GE) X(CSWAP_GT) X(MSWAP) X(OP_LAST) \
	X(INT8_T) X(UINT8_T) X(INT16_T) X(UINT16_T) X(INT32_T) \
	X(UINT32_T) X(INT64_T) X(UINT64_T) X(FLOAT) X(FLOAT_COMPLEX) \
	X(DOUBLE) X(DOUBLE_COMPLEX) X(LONG_DOUBLE) \
	X(LONG_DOUBLE_COMPLEX) X(DATATYPE_LAST)

#define SHIM_PTL_SAME(n, ...) \
	static_assert(PTL_##n == SPINNIC_PTL_##n, "PTL_" #n);
SHIM_PTL_NIC_CODES(SHIM_PTL_SAME)
SHIM_PTL_SHARED(SHIM_PTL_SAME)
#undef SHIM_PTL_SAME
/* the shim's own codes follow the NIC's: no status of the NIC means one */
static_assert(PTL_IGNORED == SPINNIC_PTL_ABORTED + 1, "PTL_IGNORED");
/* a wildcard pid is the NIC's "no handle" */
static_assert(PTL_PID_ANY == SPINNIC_HANDLE_NONE, "PTL_PID_ANY");

#endif
