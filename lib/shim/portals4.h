/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file portals4.h
 * The Portals 4 API (Portals 4.1 specification: names, types, constants and
 * semantics) as provided by libspinnic, the spinnic client library. Existing
 * Portals code compiles unchanged against it; link with `pkg-config spinnic`.
 *
 * Numeric values. The specification fixes names, not numbers; this header
 * fixes the numbers spinnic uses on both sides of the host–NIC interface
 * (lib/portals and app/spinnic include this header for them). They are part
 * of the ABI: changes are additive only.
 *
 *   return codes (enum ptl_retvals): PTL_OK = 0, then the specification's
 *     order: ARG_INVALID 1, CT_NONE_REACHED 2, EQ_DROPPED 3, EQ_EMPTY 4,
 *     FAIL 5, IN_USE 6, INTERRUPTED 7, LIST_TOO_LONG 8, NO_INIT 9,
 *     NO_SPACE 10, PID_IN_USE 11, PT_FULL 12, PT_EQ_NEEDED 13,
 *     PT_IN_USE 14, ABORTED 15, then IGNORED 16 (added later: the
 *     reference implementation has it between FAIL and IN_USE)
 *   event kinds (ptl_event_kind_t): GET 0, GET_OVERFLOW 1, PUT 2,
 *     PUT_OVERFLOW 3, ATOMIC 4, ATOMIC_OVERFLOW 5, FETCH_ATOMIC 6,
 *     FETCH_ATOMIC_OVERFLOW 7, REPLY 8, SEND 9, ACK 10, PT_DISABLED 11,
 *     LINK 12, AUTO_UNLINK 13, AUTO_FREE 14, SEARCH 15
 *   ni fail types (ptl_ni_fail_t): OK 0, UNDELIVERABLE 1, PT_DISABLED 2,
 *     DROPPED 3, PERM_VIOLATION 4, OP_VIOLATION 5, SEGV 6, NO_MATCH 7
 *   lists: PTL_PRIORITY_LIST 0, PTL_OVERFLOW_LIST 1, PTL_SEARCH_ONLY 2,
 *     PTL_SEARCH_DELETE 3 (distinct, so one field can carry either)
 *   ack requests: PTL_NO_ACK_REQ 0, PTL_ACK_REQ 1, PTL_CT_ACK_REQ 2,
 *     PTL_OC_ACK_REQ 3
 *   wildcards: PTL_NID_ANY, PTL_PID_ANY, PTL_RANK_ANY, PTL_UID_ANY,
 *     PTL_JID_ANY, PTL_PT_ANY, PTL_TIME_FOREVER, PTL_IFACE_DEFAULT are all
 *     0xffffffff (PTL_PID_ANY equals SPINNIC_HANDLE_NONE of the ABI).
 *   option bits: as defined below; PTL_IOVEC is bit 31 of both MD and
 *     ME/LE options. PTL_*_OPTIONS_MASK covers every bit defined.
 *   atomic operations (ptl_op_t): MIN 0, MAX 1, SUM 2, PROD 3, LOR 4,
 *     LAND 5, BOR 6, BAND 7, LXOR 8, BXOR 9, SWAP 10, CSWAP 11,
 *     CSWAP_NE 12, CSWAP_LE 13, CSWAP_LT 14, CSWAP_GE 15, CSWAP_GT 16,
 *     MSWAP 17 (the reference implementation's numbers)
 *   atomic datatypes (ptl_datatype_t): INT8_T 0, UINT8_T 1, INT16_T 2,
 *     UINT16_T 3, INT32_T 4, UINT32_T 5, INT64_T 6, UINT64_T 7, FLOAT 8,
 *     FLOAT_COMPLEX 9, DOUBLE 10, DOUBLE_COMPLEX 11, LONG_DOUBLE 12,
 *     LONG_DOUBLE_COMPLEX 13 (spinnic's own: the reference implementation
 *     orders FLOAT, INT64_T, UINT64_T, DOUBLE, FLOAT_COMPLEX differently;
 *     source compatible, binaries are not)
 * The same values are spelled SPINNIC_PTL_* in spinnic_abi.h (the NIC's
 * view); libspinnic checks at compile time that the two agree.
 *
 * Handles are 64-bit opaque values; PtlHandleIsEqual() compares them. A
 * handle of the wrong kind passed to a call is PTL_ARG_INVALID.
 *
 * Threads: every call is thread-safe. Waits (PtlEQWait, PtlEQPoll,
 * PtlCTWait, PtlCTPoll) spin briefly, then sleep on a futex.
 *
 * Availability: spinnic must be running; PtlNIInit() connects to it through
 * the control socket named by the environment variable SPINNIC_SOCKET,
 * else $XDG_RUNTIME_DIR/spinnic/node0.sock, else /run/spinnic/node0.sock.
 * When it is not reachable PtlNIInit() returns PTL_FAIL promptly and prints
 * one line on stderr. If spinnic stops later, every call that needs it
 * returns PTL_FAIL (waits return PTL_INTERRUPTED).
 *
 * Environment (read by PtlInit/PtlNIInit and the first spin_host_alloc):
 *   SPINNIC_SOCKET          control socket of the spinnic node to use
 *   SPINNIC_REGION_SIZE     host region bytes (k/M/G suffixes), default
 *                           64M, rounded up to 2 MiB
 *   SPINNIC_HUGEPAGES=0     do not try hugepages for the region
 *   SPINNIC_CTRL_TIMEOUT_MS longest wait for a control reply (60000; a
 *                           notice on stderr after 5000)
 *   SPINNIC_WAIT_SLICE_MS   longest single futex sleep of a wait (10)
 *   SPINNIC_LOG=debug       say on stderr why a call returned an error
 *
 * Every name of the Portals 4.x specification is declared, so code written
 * to it compiles. Atomics are applied by the target NIC, one packet each
 * (max_atomic_size: doc/NOTES.md "NIC atomics"); triggered operations run
 * on the NIC (doc/NOTES.md "Triggered operations"). iovec MDs and MEs
 * (PTL_IOVEC): doc/NOTES.md "iovec MDs and MEs". What is not supported
 * yet (bundles' deferral) is listed in doc/NOTES.md.
 */
#ifndef PORTALS4_H
#define PORTALS4_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Return codes                                                            */
/* ---------------------------------------------------------------------- */

/** Every Portals function returns one of these (see the table above). */
enum ptl_retvals {
	PTL_OK = 0,          /**< success */
	PTL_ARG_INVALID,     /**< an argument is invalid */
	PTL_CT_NONE_REACHED, /**< timeout before any counter reached its test */
	PTL_EQ_DROPPED,      /**< event returned, but at least one was lost */
	PTL_EQ_EMPTY,        /**< no event available */
	PTL_FAIL,            /**< non-specific error (e.g. spinnic unreachable) */
	PTL_IN_USE,          /**< the resource is in use */
	PTL_INTERRUPTED,     /**< a wait was interrupted (object freed, NIC gone) */
	PTL_LIST_TOO_LONG,   /**< the list would exceed max_list_size */
	PTL_NO_INIT,         /**< PtlInit() has not been called */
	PTL_NO_SPACE,        /**< not enough memory (host or NIC) */
	PTL_PID_IN_USE,      /**< the requested pid is taken */
	PTL_PT_FULL,         /**< no free portal table entry */
	PTL_PT_EQ_NEEDED,    /**< flow control needs an EQ on the PT */
	PTL_PT_IN_USE,       /**< the portal table entry is in use */
	PTL_ABORTED,         /**< the operation was aborted */
	PTL_IGNORED,         /**< PtlSetMap: a runtime's map was kept (spinnic
				  never returns it) */
};
/** One past the last return code. */
#define PTL_STATUS_LAST (PTL_IGNORED + 1)

/* ---------------------------------------------------------------------- */
/* Base types                                                              */
/* ---------------------------------------------------------------------- */

typedef uint64_t ptl_size_t;       /**< sizes, offsets, counter values */
typedef uint32_t ptl_pt_index_t;   /**< portal table index */
typedef uint64_t ptl_match_bits_t; /**< match and ignore bits */
typedef uint64_t ptl_hdr_data_t;   /**< 64 bits of out-of-band user data */
typedef unsigned int ptl_time_t;   /**< timeout in milliseconds */
typedef unsigned int ptl_interface_t; /**< network interface number */
typedef uint32_t ptl_nid_t;        /**< node id (one per spinnic port) */
typedef uint32_t ptl_pid_t;        /**< process id on a node */
typedef uint32_t ptl_rank_t;       /**< logical rank (PTL_NI_LOGICAL) */
typedef uint32_t ptl_uid_t;        /**< user id */
typedef uint32_t ptl_jid_t;        /**< job id */
typedef unsigned char ptl_ni_fail_t; /**< failure kind in an event */
typedef int ptl_sr_value_t;        /**< status register value */

/** Largest ptl_size_t: an MD length "to the end of memory". */
#define PTL_SIZE_MAX ((ptl_size_t)UINT64_MAX)

/** Status registers read with PtlNIStatus(). */
typedef enum {
	PTL_SR_DROP_COUNT = 0,        /**< messages dropped on this NI */
	PTL_SR_PERMISSION_VIOLATIONS, /**< access-control failures */
	PTL_SR_OPERATION_VIOLATIONS,  /**< op not allowed by the ME/LE */
} ptl_sr_index_t;
/** Spelling of the 4.0 reference implementation. */
#define PTL_SR_PERMISSIONS_VIOLATIONS PTL_SR_PERMISSION_VIOLATIONS
#define PTL_SR_LAST (PTL_SR_OPERATION_VIOLATIONS + 1)

/* Handles: opaque, 64 bits. */
typedef uint64_t ptl_handle_any_t; /**< any handle */
typedef ptl_handle_any_t ptl_handle_ni_t; /**< network interface */
typedef ptl_handle_any_t ptl_handle_eq_t; /**< event queue */
typedef ptl_handle_any_t ptl_handle_ct_t; /**< counting event */
typedef ptl_handle_any_t ptl_handle_md_t; /**< memory descriptor */
typedef ptl_handle_any_t ptl_handle_le_t; /**< list entry */
typedef ptl_handle_any_t ptl_handle_me_t; /**< matching list entry */

/** A process: physical (nid, pid) or logical (rank), per the NI. */
typedef union {
	ptl_rank_t rank; /**< logical: index into the map (PtlSetMap) */
	struct {
		ptl_nid_t nid; /**< node */
		ptl_pid_t pid; /**< process on that node */
	} phys;          /**< physical */
} ptl_process_t;

/** Scatter/gather element (options PTL_IOVEC). */
typedef struct {
	void *iov_base;     /**< start */
	ptl_size_t iov_len; /**< bytes */
} ptl_iovec_t;

/* ---------------------------------------------------------------------- */
/* Constants                                                               */
/* ---------------------------------------------------------------------- */

/** start/length describe an array of ptl_iovec_t (MD and ME/LE option):
 *  at most max_iovecs entries, copied by the NIC at PtlMDBind/PtlMEAppend
 *  (later changes to the array do not count); the length is their sum.
 *  Not with an execution context, nor for a streamed or processed put. */
#define PTL_IOVEC (1u << 31)

#define PTL_EQ_NONE ((ptl_handle_eq_t)0x3fffffff)        /**< no EQ */
#define PTL_CT_NONE ((ptl_handle_ct_t)0x5fffffff)        /**< no counter */
#define PTL_INVALID_HANDLE ((ptl_handle_any_t)UINT64_MAX) /**< never valid */
#define PTL_IFACE_DEFAULT ((ptl_interface_t)0xffffffff)  /**< interface 0 */
#define PTL_NID_ANY ((ptl_nid_t)0xffffffff)   /**< match any node */
#define PTL_PID_ANY ((ptl_pid_t)0xffffffff)   /**< any/let spinnic pick */
#define PTL_RANK_ANY ((ptl_rank_t)0xffffffff) /**< match any rank */
#define PTL_UID_ANY ((ptl_uid_t)0xffffffff)   /**< any user */
#define PTL_JID_ANY ((ptl_jid_t)0xffffffff)   /**< any job */
#define PTL_JID_NONE ((ptl_jid_t)0)           /**< no job id */
#define PTL_PT_ANY ((ptl_pt_index_t)0xffffffff) /**< PtlPTAlloc: any free */
#define PTL_TIME_FOREVER ((ptl_time_t)0xffffffff) /**< infinite timeout */

/* ---------------------------------------------------------------------- */
/* Network interfaces                                                      */
/* ---------------------------------------------------------------------- */

#define PTL_NI_MATCHING (1u << 0)    /**< matching list entries (ME) */
#define PTL_NI_NO_MATCHING (1u << 1) /**< list entries (LE) */
#define PTL_NI_LOGICAL (1u << 2)     /**< ranks, mapped by PtlSetMap */
#define PTL_NI_PHYSICAL (1u << 3)    /**< (nid, pid) */
#define PTL_NI_INIT_OPTIONS_MASK ((1u << 4) - 1)

#define PTL_NI_OK ((ptl_ni_fail_t)0)            /**< success */
#define PTL_NI_UNDELIVERABLE ((ptl_ni_fail_t)1) /**< target unreachable */
#define PTL_NI_PT_DISABLED ((ptl_ni_fail_t)2)   /**< target PT disabled */
#define PTL_NI_DROPPED ((ptl_ni_fail_t)3)       /**< dropped at the target */
#define PTL_NI_PERM_VIOLATION ((ptl_ni_fail_t)4) /**< uid check failed */
#define PTL_NI_OP_VIOLATION ((ptl_ni_fail_t)5)  /**< op not allowed by entry */
#define PTL_NI_SEGV ((ptl_ni_fail_t)6)          /**< bad local/remote memory */
#define PTL_NI_NO_MATCH ((ptl_ni_fail_t)7)      /**< search found nothing */

/* ptl_ni_limits_t.features */
#define PTL_TARGET_BIND_INACCESSIBLE (1u << 0) /**< ME/LE may bind any memory */
#define PTL_TOTAL_DATA_ORDERING (1u << 1)      /**< ordering of all bytes */
#define PTL_COHERENT_ATOMICS (1u << 2)         /**< atomics coherent w/ host */

/** Limits of an NI (desired and actual in PtlNIInit). */
typedef struct {
	int max_entries;            /**< MEs/LEs at once */
	int max_unexpected_headers; /**< overflow headers kept */
	int max_mds;                /**< MDs at once */
	int max_cts;                /**< counters at once */
	int max_eqs;                /**< EQs at once */
	int max_pt_index;           /**< largest PT index (>= 63) */
	int max_iovecs;             /**< ptl_iovec_t per MD/ME (256) */
	int max_list_size;          /**< entries on one PT list */
	int max_triggered_ops;      /**< triggered operations pending */
	ptl_size_t max_msg_size;    /**< bytes of a put/get/reply */
	ptl_size_t max_atomic_size; /**< bytes of an atomic */
	ptl_size_t max_fetch_atomic_size; /**< bytes of a fetching atomic */
	ptl_size_t max_waw_ordered_size;  /**< write-after-write ordered */
	ptl_size_t max_war_ordered_size;  /**< write-after-read ordered */
	ptl_size_t max_volatile_size;     /**< PTL_MD_VOLATILE put bytes */
	unsigned int features;      /**< PTL_TARGET_BIND_INACCESSIBLE, ... */
} ptl_ni_limits_t;

/* ---------------------------------------------------------------------- */
/* Portal table                                                            */
/* ---------------------------------------------------------------------- */

#define PTL_PT_ONLY_USE_ONCE (1u << 0) /**< every entry is USE_ONCE (hint) */
#define PTL_PT_ONLY_TRUNCATE (1u << 1) /**< no entry has NO_TRUNCATE (hint) */
#define PTL_PT_FLOWCTRL (1u << 2)      /**< disable the PT on exhaustion */
/** Every PtlPTAlloc() option bit. */
#define PTL_PT_ALLOC_OPTIONS_MASK ((PTL_PT_FLOWCTRL << 1) - 1)

/* ---------------------------------------------------------------------- */
/* Memory descriptors                                                      */
/* ---------------------------------------------------------------------- */

#define PTL_MD_EVENT_SUCCESS_DISABLE (1u << 0) /**< no successful events */
#define PTL_MD_EVENT_SEND_DISABLE (1u << 1)    /**< no PTL_EVENT_SEND */
#define PTL_MD_EVENT_CT_SEND (1u << 2)  /**< count SEND events */
#define PTL_MD_EVENT_CT_REPLY (1u << 3) /**< count REPLY events */
#define PTL_MD_EVENT_CT_ACK (1u << 4)   /**< count ACK events */
#define PTL_MD_EVENT_CT_BYTES (1u << 5) /**< count bytes, not events */
#define PTL_MD_UNORDERED (1u << 6)      /**< may arrive out of order */
#define PTL_MD_VOLATILE (1u << 7)       /**< buffer reusable on return */
/** Every ptl_md_t option bit. */
#define PTL_MD_OPTIONS_MASK (((PTL_MD_VOLATILE << 1) - 1) | PTL_IOVEC)

/** Initiator-side memory (PtlMDBind). */
typedef struct {
	void *start;               /**< first byte (or ptl_iovec_t array) */
	ptl_size_t length;         /**< bytes (or iovec count) */
	unsigned int options;      /**< PTL_MD_*, PTL_IOVEC */
	ptl_handle_eq_t eq_handle; /**< events, or PTL_EQ_NONE */
	ptl_handle_ct_t ct_handle; /**< counter, or PTL_CT_NONE */
} ptl_md_t;

/* ---------------------------------------------------------------------- */
/* List entries (LE, non-matching NI) and matching list entries (ME)       */
/* ---------------------------------------------------------------------- */

#define PTL_ME_OP_PUT (1u << 0)        /**< accepts puts */
#define PTL_ME_OP_GET (1u << 1)        /**< accepts gets */
#define PTL_ME_MANAGE_LOCAL (1u << 2)  /**< offset managed locally */
#define PTL_ME_NO_TRUNCATE (1u << 3)   /**< reject messages that do not fit */
#define PTL_ME_USE_ONCE (1u << 4)      /**< unlink after one match */
#define PTL_ME_MAY_ALIGN (1u << 5)     /**< may align locally managed off */
#define PTL_ME_ACK_DISABLE (1u << 6)   /**< never send acknowledgements */
#define PTL_ME_UNEXPECTED_HDR_DISABLE (1u << 7) /**< no unexpected hdrs */
#define PTL_ME_IS_ACCESSIBLE (1u << 8) /**< memory accessible (bind hint) */
#define PTL_ME_EVENT_COMM_DISABLE (1u << 9)      /**< no PUT/GET/... */
#define PTL_ME_EVENT_FLOWCTRL_DISABLE (1u << 10) /**< no PT_DISABLED */
#define PTL_ME_EVENT_SUCCESS_DISABLE (1u << 11)  /**< no success events */
#define PTL_ME_EVENT_OVER_DISABLE (1u << 12)     /**< no *_OVERFLOW */
#define PTL_ME_EVENT_UNLINK_DISABLE (1u << 13)   /**< no AUTO_UNLINK */
#define PTL_ME_EVENT_LINK_DISABLE (1u << 14)     /**< no LINK */
#define PTL_ME_EVENT_CT_COMM (1u << 15)     /**< count communication */
#define PTL_ME_EVENT_CT_OVERFLOW (1u << 16) /**< count overflow matches */
#define PTL_ME_EVENT_CT_BYTES (1u << 17)    /**< count bytes, not events */
#define PTL_ME_AUTH_USE_JID (1u << 18)      /**< uid field is a job id */
/** A locally managed priority entry advances its local offset by the
 *  rlength of each unexpected header it claims when appended (without it:
 *  not at all); capped at its length, unlinked below min_free. */
#define PTL_ME_LOCAL_INC_UH_RLENGTH (1u << 19)
/** Extensions of BXI's Portals (overflow entries only for puts at or
 *  above its hardware rendezvous size, or below it; a locally managed
 *  entry stopped by an unexpected header), which code written for BXI
 *  passes: defined 0, as BXI's own compatibility header does for other
 *  Portals implementations: spinnic has no hardware rendezvous, so they
 *  ask for nothing (doc/NOTES.md "Portals 4 conformance"). */
#define PTL_ME_OV_RDV_PUT_ONLY 0u
#define PTL_ME_OV_RDV_PUT_DISABLE 0u
#define PTL_ME_MANAGE_LOCAL_STOP_IF_UH 0u
/** Every ptl_me_t option bit. */
#define PTL_ME_OPTIONS_MASK (((PTL_ME_LOCAL_INC_UH_RLENGTH << 1) - 1) | \
			     PTL_IOVEC)

#define PTL_LE_OP_PUT PTL_ME_OP_PUT
#define PTL_LE_OP_GET PTL_ME_OP_GET
#define PTL_LE_USE_ONCE PTL_ME_USE_ONCE
#define PTL_LE_ACK_DISABLE PTL_ME_ACK_DISABLE
#define PTL_LE_UNEXPECTED_HDR_DISABLE PTL_ME_UNEXPECTED_HDR_DISABLE
#define PTL_LE_IS_ACCESSIBLE PTL_ME_IS_ACCESSIBLE
#define PTL_LE_EVENT_COMM_DISABLE PTL_ME_EVENT_COMM_DISABLE
#define PTL_LE_EVENT_FLOWCTRL_DISABLE PTL_ME_EVENT_FLOWCTRL_DISABLE
#define PTL_LE_EVENT_SUCCESS_DISABLE PTL_ME_EVENT_SUCCESS_DISABLE
#define PTL_LE_EVENT_OVER_DISABLE PTL_ME_EVENT_OVER_DISABLE
#define PTL_LE_EVENT_UNLINK_DISABLE PTL_ME_EVENT_UNLINK_DISABLE
#define PTL_LE_EVENT_LINK_DISABLE PTL_ME_EVENT_LINK_DISABLE
#define PTL_LE_EVENT_CT_COMM PTL_ME_EVENT_CT_COMM
#define PTL_LE_EVENT_CT_OVERFLOW PTL_ME_EVENT_CT_OVERFLOW
#define PTL_LE_EVENT_CT_BYTES PTL_ME_EVENT_CT_BYTES
#define PTL_LE_AUTH_USE_JID PTL_ME_AUTH_USE_JID
/** Every ptl_le_t option bit (the ME bits without matching's offset
 *  management and truncation). */
#define PTL_LE_OPTIONS_MASK (PTL_LE_OP_PUT | PTL_LE_OP_GET | \
	PTL_LE_USE_ONCE | PTL_LE_ACK_DISABLE | \
	PTL_LE_UNEXPECTED_HDR_DISABLE | PTL_LE_IS_ACCESSIBLE | \
	PTL_LE_EVENT_COMM_DISABLE | PTL_LE_EVENT_FLOWCTRL_DISABLE | \
	PTL_LE_EVENT_SUCCESS_DISABLE | PTL_LE_EVENT_OVER_DISABLE | \
	PTL_LE_EVENT_UNLINK_DISABLE | PTL_LE_EVENT_LINK_DISABLE | \
	PTL_LE_EVENT_CT_COMM | PTL_LE_EVENT_CT_OVERFLOW | \
	PTL_LE_EVENT_CT_BYTES | PTL_LE_AUTH_USE_JID | PTL_IOVEC)

/** Which list of a portal table entry. */
typedef enum {
	PTL_PRIORITY_LIST = 0, /**< searched first */
	PTL_OVERFLOW_LIST = 1, /**< searched when the priority list misses */
} ptl_list_t;

/** PtlMESearch()/PtlLESearch() operation. */
typedef enum {
	PTL_SEARCH_ONLY = 2,   /**< report a match (PTL_EVENT_SEARCH) */
	PTL_SEARCH_DELETE = 3, /**< report and remove the unexpected header */
} ptl_search_op_t;

/** Target memory of a non-matching NI (PtlLEAppend). */
typedef struct {
	void *start;               /**< first byte (or ptl_iovec_t array) */
	ptl_size_t length;         /**< bytes (or iovec count) */
	ptl_handle_ct_t ct_handle; /**< counter, or PTL_CT_NONE */
	ptl_uid_t uid;             /**< allowed initiator user, PTL_UID_ANY */
	unsigned int options;      /**< PTL_LE_*, PTL_IOVEC */
} ptl_le_t;

/** Target memory of a matching NI (PtlMEAppend). */
typedef struct {
	void *start;               /**< first byte (or ptl_iovec_t array) */
	ptl_size_t length;         /**< bytes (or iovec count) */
	ptl_handle_ct_t ct_handle; /**< counter, or PTL_CT_NONE */
	ptl_uid_t uid;             /**< allowed initiator user, PTL_UID_ANY */
	unsigned int options;      /**< PTL_ME_*, PTL_IOVEC */
	ptl_process_t match_id;    /**< initiator, wildcards allowed */
	ptl_match_bits_t match_bits;  /**< bits to match */
	ptl_match_bits_t ignore_bits; /**< bits not compared */
	ptl_size_t min_free;       /**< MANAGE_LOCAL: unlink below this free */
} ptl_me_t;

/* ---------------------------------------------------------------------- */
/* Data movement                                                           */
/* ---------------------------------------------------------------------- */

/** Acknowledgement requested by PtlPut(). */
typedef enum {
	PTL_NO_ACK_REQ = 0, /**< none */
	PTL_ACK_REQ = 1,    /**< full PTL_EVENT_ACK */
	PTL_CT_ACK_REQ = 2, /**< counter only */
	PTL_OC_ACK_REQ = 3, /**< operation completed (counter) */
} ptl_ack_req_t;

/**
 * Atomic operations (numbers: see top). Target t, initiator's value v,
 * PtlSwap's operand o: MIN/MAX/SUM/PROD t = f(t, v); LOR/LAND/LXOR
 * logical, BOR/BAND/BXOR bitwise (integers only); SWAP t = v; CSWAP,
 * CSWAP_NE/LE/LT/GE/GT t = v if o ==, !=, <=, <, >=, > t; MSWAP
 * t = (v & o) | (t & ~o) (integers only). MIN, MAX and the ordered CSWAPs
 * take no complex type. MIN..BXOR are PtlAtomic/PtlFetchAtomic's,
 * SWAP..MSWAP PtlSwap's.
 */
typedef enum {
	PTL_MIN = 0, PTL_MAX, PTL_SUM, PTL_PROD, PTL_LOR, PTL_LAND, PTL_BOR,
	PTL_BAND, PTL_LXOR, PTL_BXOR, PTL_SWAP, PTL_CSWAP, PTL_CSWAP_NE,
	PTL_CSWAP_LE, PTL_CSWAP_LT, PTL_CSWAP_GE, PTL_CSWAP_GT, PTL_MSWAP,
	PTL_OP_LAST,
} ptl_op_t;

/** Atomic operand types (numbers: see top; C types int8_t ... uint64_t,
 *  float, float _Complex, double, double _Complex, long double, long
 *  double _Complex). */
typedef enum {
	PTL_INT8_T = 0, PTL_UINT8_T, PTL_INT16_T, PTL_UINT16_T, PTL_INT32_T,
	PTL_UINT32_T, PTL_INT64_T, PTL_UINT64_T, PTL_FLOAT,
	PTL_FLOAT_COMPLEX, PTL_DOUBLE, PTL_DOUBLE_COMPLEX, PTL_LONG_DOUBLE,
	PTL_LONG_DOUBLE_COMPLEX, PTL_DATATYPE_LAST,
} ptl_datatype_t;

/* ---------------------------------------------------------------------- */
/* Events                                                                  */
/* ---------------------------------------------------------------------- */

/** Kinds of full events. */
typedef enum {
	PTL_EVENT_GET = 0,           /**< target: a get was served */
	PTL_EVENT_GET_OVERFLOW,      /**< target: get matched overflow list */
	PTL_EVENT_PUT,               /**< target: a put was delivered */
	PTL_EVENT_PUT_OVERFLOW,      /**< target: put matched overflow list */
	PTL_EVENT_ATOMIC,            /**< target: atomic */
	PTL_EVENT_ATOMIC_OVERFLOW,   /**< target: atomic, overflow list */
	PTL_EVENT_FETCH_ATOMIC,      /**< target: fetching atomic */
	PTL_EVENT_FETCH_ATOMIC_OVERFLOW, /**< target: same, overflow list */
	PTL_EVENT_REPLY,             /**< initiator: get data arrived */
	PTL_EVENT_SEND,              /**< initiator: the MD may be reused */
	PTL_EVENT_ACK,               /**< initiator: put acknowledged */
	PTL_EVENT_PT_DISABLED,       /**< target: flow control disabled PT */
	PTL_EVENT_LINK,              /**< target: entry linked */
	PTL_EVENT_AUTO_UNLINK,       /**< target: entry unlinked itself */
	PTL_EVENT_AUTO_FREE,         /**< target: entry memory released */
	PTL_EVENT_SEARCH,            /**< target: PtlMESearch result */
} ptl_event_kind_t;

/** A full event (PtlEQGet/Wait/Poll). */
typedef struct {
	void *start;               /**< where the data went / came from */
	void *user_ptr;            /**< of the ME/LE (target) or op (init.) */
	ptl_hdr_data_t hdr_data;   /**< sender's out-of-band data */
	ptl_match_bits_t match_bits; /**< of the message */
	ptl_size_t rlength;        /**< requested length */
	ptl_size_t mlength;        /**< manipulated length */
	ptl_size_t remote_offset;  /**< offset requested by the initiator */
	ptl_uid_t uid;             /**< initiator's user */
	ptl_process_t initiator;   /**< rank on a logical NI */
	ptl_event_kind_t type;     /**< kind */
	ptl_list_t ptl_list;       /**< list matched (overflow events) */
	ptl_pt_index_t pt_index;   /**< portal table entry */
	ptl_ni_fail_t ni_fail_type; /**< PTL_NI_OK or why it failed */
	ptl_op_t atomic_operation; /**< atomic events */
	ptl_datatype_t atomic_type; /**< atomic events */
} ptl_event_t;

/** A counting event's value. */
typedef struct {
	ptl_size_t success; /**< successful events (or bytes) */
	ptl_size_t failure; /**< failed events */
} ptl_ct_event_t;

/** What a counting event counts (Portals 4.0 drafts passed it to
 *  PtlCTAlloc; in 4.1 the options of the MD or ME decide). Names only. */
typedef enum {
	PTL_CT_OPERATION = 0, /**< events */
	PTL_CT_BYTE,          /**< bytes */
} ptl_ct_type_t;

/* ---------------------------------------------------------------------- */
/* Functions                                                               */
/* ---------------------------------------------------------------------- */

/**
 * Initialize the library (reference counted; spinnic is not contacted).
 * @return PTL_OK; PTL_FAIL if the library could not set itself up.
 */
int PtlInit(void);

/**
 * Drop one PtlInit() reference; the last one detaches from spinnic and
 * releases every NI still open.
 */
void PtlFini(void);

/**
 * Open a network interface (reference counted per options combination).
 * The first call of the process connects to spinnic and attaches the host
 * region.
 * @param iface 0 or PTL_IFACE_DEFAULT.
 * @param options exactly one of PTL_NI_MATCHING/PTL_NI_NO_MATCHING and
 *   one of PTL_NI_LOGICAL/PTL_NI_PHYSICAL.
 * @param pid requested process id or PTL_PID_ANY; every NI of a process has
 *   the same pid.
 * @param desired limits wished for, or NULL.
 * @param actual receives the limits granted, or NULL.
 * @param ni_handle receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (options, iface, or pid
 *   differing from the process's pid); PTL_PID_IN_USE; PTL_NO_SPACE;
 *   PTL_FAIL when spinnic is not reachable (one line on stderr says why).
 */
int PtlNIInit(ptl_interface_t iface, unsigned int options, ptl_pid_t pid,
	      const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual,
	      ptl_handle_ni_t *ni_handle);

/**
 * Drop one PtlNIInit() reference; the last one releases every object of
 * the NI (PTs, MDs, MEs/LEs, EQs, CTs, execution contexts).
 * @param ni_handle the NI.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlNIFini(ptl_handle_ni_t ni_handle);

/**
 * Read a status register of an NI: PTL_SR_DROP_COUNT (messages that reached
 * this NI and were dropped: no PT, PT disabled, no match, violations, full
 * unexpected list), PTL_SR_PERMISSION_VIOLATIONS (uid mismatch) and
 * PTL_SR_OPERATION_VIOLATIONS (operation the ME/LE does not allow). Values
 * saturate at INT_MAX.
 * @param ni_handle the NI.
 * @param status_register PTL_SR_*.
 * @param status receives the value.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad handle or register);
 *   PTL_FAIL (spinnic unreachable).
 */
int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t status_register,
		ptl_sr_value_t *status);

/**
 * The NI a handle belongs to (an NI handle gives itself).
 * @param handle any valid handle.
 * @param ni_handle receives the NI.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle);

/**
 * Set the rank → (nid, pid) map of a logical NI (kept by the library; a
 * later call replaces it).
 * @param ni_handle a PTL_NI_LOGICAL NI.
 * @param map_size entries in mapping (> 0).
 * @param mapping entry r is the physical id of rank r.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE.
 */
int PtlSetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
	      const ptl_process_t *mapping);

/**
 * Read the map of a logical NI.
 * @param ni_handle a PTL_NI_LOGICAL NI.
 * @param map_size entries mapping can hold.
 * @param mapping receives up to map_size entries.
 * @param actual_map_size receives the size of the whole map.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (also when no map is set).
 */
int PtlGetMap(ptl_handle_ni_t ni_handle, ptl_size_t map_size,
	      ptl_process_t *mapping, ptl_size_t *actual_map_size);

/**
 * The user id of the calling process (its real uid).
 * @param ni_handle an NI.
 * @param uid receives it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid);

/**
 * The job id (spinnic has no jobs: PTL_JID_NONE).
 * @param ni_handle an NI.
 * @param jid receives it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid);

/**
 * The id of the calling process on an NI: (nid, pid), or its rank on a
 * logical NI (PTL_ARG_INVALID if no map holds it).
 * @param ni_handle an NI.
 * @param id receives it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_t *id);

/**
 * The physical (nid, pid) of the calling process.
 * @param ni_handle an NI.
 * @param id receives it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlGetPhysId(ptl_handle_ni_t ni_handle, ptl_process_t *id);

/**
 * Allocate a portal table entry.
 * @param ni_handle the NI.
 * @param options PTL_PT_*.
 * @param eq_handle EQ for the entry's events, or PTL_EQ_NONE.
 * @param pt_index_req wanted index or PTL_PT_ANY.
 * @param pt_index receives the index.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_PT_FULL;
 *   PTL_PT_IN_USE; PTL_PT_EQ_NEEDED; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlPTAlloc(ptl_handle_ni_t ni_handle, unsigned int options,
	       ptl_handle_eq_t eq_handle, ptl_pt_index_t pt_index_req,
	       ptl_pt_index_t *pt_index);

/**
 * Free a portal table entry (its lists must be empty).
 * @param ni_handle the NI.
 * @param pt_index the entry.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_PT_IN_USE; PTL_FAIL.
 */
int PtlPTFree(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);

/**
 * Disable a portal table entry (incoming messages are dropped).
 * @param ni_handle the NI.
 * @param pt_index the entry.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlPTDisable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);

/**
 * Re-enable a portal table entry.
 * @param ni_handle the NI.
 * @param pt_index the entry.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlPTEnable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);

/**
 * Create a memory descriptor for initiating operations. Memory from
 * spin_host_alloc() is the fast path; any other memory of the process is
 * valid too (the NIC reaches it with process_vm_*).
 * @param ni_handle the NI.
 * @param md the descriptor (copied).
 * @param md_handle receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlMDBind(ptl_handle_ni_t ni_handle, const ptl_md_t *md,
	      ptl_handle_md_t *md_handle);

/**
 * Release a memory descriptor.
 * @param md_handle the MD.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_IN_USE; PTL_FAIL.
 */
int PtlMDRelease(ptl_handle_md_t md_handle);

/**
 * Append a list entry to a PT of a non-matching NI.
 * @param ni_handle a PTL_NI_NO_MATCHING NI.
 * @param pt_index the PT.
 * @param le the entry (copied).
 * @param ptl_list PTL_PRIORITY_LIST or PTL_OVERFLOW_LIST.
 * @param user_ptr returned in the entry's events.
 * @param le_handle receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE;
 *   PTL_LIST_TOO_LONG; PTL_FAIL.
 */
int PtlLEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		const ptl_le_t *le, ptl_list_t ptl_list, void *user_ptr,
		ptl_handle_le_t *le_handle);

/**
 * Unlink a list entry.
 * @param le_handle the entry.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_IN_USE; PTL_FAIL.
 */
int PtlLEUnlink(ptl_handle_le_t le_handle);

/**
 * Search the unexpected headers of a PT with an LE (result as a
 * PTL_EVENT_SEARCH event on the PT's EQ).
 * @param ni_handle a PTL_NI_NO_MATCHING NI.
 * @param pt_index the PT.
 * @param le what to search with (copied).
 * @param ptl_search_op PTL_SEARCH_ONLY or PTL_SEARCH_DELETE.
 * @param user_ptr returned in the event.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlLESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		const ptl_le_t *le, ptl_search_op_t ptl_search_op,
		void *user_ptr);

/**
 * Append a matching list entry to a PT of a matching NI.
 * @param ni_handle a PTL_NI_MATCHING NI.
 * @param pt_index the PT.
 * @param me the entry (copied); match_id is a rank on a logical NI.
 * @param ptl_list PTL_PRIORITY_LIST or PTL_OVERFLOW_LIST.
 * @param user_ptr returned in the entry's events.
 * @param me_handle receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE;
 *   PTL_LIST_TOO_LONG; PTL_FAIL.
 */
int PtlMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr,
		ptl_handle_me_t *me_handle);

/**
 * Unlink a matching list entry.
 * @param me_handle the entry.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_IN_USE; PTL_FAIL.
 */
int PtlMEUnlink(ptl_handle_me_t me_handle);

/**
 * Search the unexpected headers of a PT with an ME (result as a
 * PTL_EVENT_SEARCH event on the PT's EQ).
 * @param ni_handle a PTL_NI_MATCHING NI.
 * @param pt_index the PT.
 * @param me what to search with (copied).
 * @param ptl_search_op PTL_SEARCH_ONLY or PTL_SEARCH_DELETE.
 * @param user_ptr returned in the event.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlMESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		const ptl_me_t *me, ptl_search_op_t ptl_search_op,
		void *user_ptr);

/**
 * Allocate a counting event (zero).
 * @param ni_handle the NI.
 * @param ct_handle receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlCTAlloc(ptl_handle_ni_t ni_handle, ptl_handle_ct_t *ct_handle);

/**
 * Free a counting event (waiters return PTL_INTERRUPTED).
 * @param ct_handle the counter.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlCTFree(ptl_handle_ct_t ct_handle);

/**
 * Read a counting event without waiting.
 * @param ct_handle the counter.
 * @param event receives its value.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlCTGet(ptl_handle_ct_t ct_handle, ptl_ct_event_t *event);

/**
 * Wait until success + failure >= test.
 * @param ct_handle the counter.
 * @param test the threshold.
 * @param event receives the value that satisfied the test.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_INTERRUPTED.
 */
int PtlCTWait(ptl_handle_ct_t ct_handle, ptl_size_t test,
	      ptl_ct_event_t *event);

/**
 * Wait until one of several counters reaches its test, or the timeout.
 * @param ct_handles counters.
 * @param tests thresholds, one per counter.
 * @param size entries (> 0).
 * @param timeout milliseconds, 0 to test once, PTL_TIME_FOREVER.
 * @param event receives the value of the counter that was reached.
 * @param which receives its index.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_CT_NONE_REACHED;
 *   PTL_INTERRUPTED.
 */
int PtlCTPoll(const ptl_handle_ct_t *ct_handles, const ptl_size_t *tests,
	      unsigned int size, ptl_time_t timeout, ptl_ct_event_t *event,
	      unsigned int *which);

/**
 * Set a counter: this process's next PtlCTGet()/PtlCTWait() sees the new
 * value; the NIC then releases the triggered operations it reaches
 * (ordered with the process's puts, gets and triggered operations).
 * @param ct_handle the counter.
 * @param new_ct the new value.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct);

/**
 * Add to a counter, visible at once as PtlCTSet() is.
 * @param ct_handle the counter.
 * @param increment added to success or failure (only one of them may be
 *        non-zero: PTL_ARG_INVALID otherwise).
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment);

/**
 * Start a put of [local_offset, local_offset + length) of an MD.
 * @param md_handle the MD.
 * @param local_offset offset in the MD.
 * @param length bytes.
 * @param ack_req PTL_ACK_REQ, PTL_NO_ACK_REQ, PTL_CT_ACK_REQ, PTL_OC_ACK_REQ.
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	   ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	   ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	   ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data);

/**
 * Start a get into [local_offset, local_offset + length) of an MD.
 * @param md_handle the MD.
 * @param local_offset offset in the MD.
 * @param length bytes.
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	   ptl_size_t length, ptl_process_t target_id,
	   ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	   ptl_size_t remote_offset, void *user_ptr);

/**
 * Atomic operation on the target's memory: element-wise
 * target = operation(target, [local_offset, +length) of the MD), applied
 * by the target NIC in one packet; PTL_EVENT_ATOMIC at the target, SEND
 * (and ACK as asked) here.
 * @param md_handle the MD holding the operands.
 * @param local_offset offset in the MD.
 * @param length bytes, a multiple of the datatype's size, at most
 *   max_atomic_size.
 * @param ack_req as for PtlPut().
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param operation PTL_MIN .. PTL_BXOR.
 * @param datatype a ptl_datatype_t the operation accepts.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (a handle, a range, an
 *   operation the datatype or this call does not take, part of an element,
 *   more than the NI's limit); PTL_FAIL (spinnic gone).
 */
int PtlAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	      ptl_size_t length, ptl_ack_req_t ack_req,
	      ptl_process_t target_id, ptl_pt_index_t pt_index,
	      ptl_match_bits_t match_bits, ptl_size_t remote_offset,
	      void *user_ptr, ptl_hdr_data_t hdr_data, ptl_op_t operation,
	      ptl_datatype_t datatype);

/**
 * Atomic operation that also returns the target's previous values into
 * the get MD (SEND, then REPLY here; PTL_EVENT_FETCH_ATOMIC there).
 * @param get_md_handle receives the old values (PTL_EVENT_REPLY).
 * @param local_get_offset offset in the get MD.
 * @param put_md_handle holds the operands.
 * @param local_put_offset offset in the put MD.
 * @param length bytes, a multiple of the datatype's size, at most
 *   max_fetch_atomic_size.
 * @param target_id target process.
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param operation PTL_MIN .. PTL_BXOR.
 * @param datatype a ptl_datatype_t the operation accepts.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (a handle, a range, an
 *   operation the datatype or this call does not take, part of an element,
 *   more than the NI's limit); PTL_FAIL (spinnic gone).
 */
int PtlFetchAtomic(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
		   ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset,
		   ptl_size_t length, ptl_process_t target_id,
		   ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		   ptl_size_t remote_offset, void *user_ptr,
		   ptl_hdr_data_t hdr_data, ptl_op_t operation,
		   ptl_datatype_t datatype);

/**
 * Swap family: PTL_SWAP, the conditional swaps (operand compared with the
 * target) and PTL_MSWAP (operand is the mask); the old values go to the
 * get MD.
 * @param get_md_handle receives the old values.
 * @param local_get_offset offset in the get MD.
 * @param put_md_handle holds the new values.
 * @param local_put_offset offset in the put MD.
 * @param length bytes; one element for CSWAP* and MSWAP.
 * @param target_id target process.
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param operand compare value or mask (one element), unused by PTL_SWAP.
 * @param operation PTL_SWAP .. PTL_MSWAP.
 * @param datatype a ptl_datatype_t the operation accepts.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (a handle, a range, an
 *   operation the datatype or this call does not take, part of an element,
 *   more than the NI's limit); PTL_FAIL (spinnic gone).
 */
int PtlSwap(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
	    ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset,
	    ptl_size_t length, ptl_process_t target_id,
	    ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	    ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	    const void *operand, ptl_op_t operation, ptl_datatype_t datatype);

/**
 * Make the NIC's atomics visible to the host's own accesses. spinnic
 * keeps no atomic result in the NIC: nothing to wait for.
 * @return PTL_OK; PTL_NO_INIT.
 */
int PtlAtomicSync(void);

/**
 * PtlPut() deferred until the counter trig_ct_handle reaches
 * threshold (success + failure; at once if it has). The MD's bytes are
 * read when it fires; everything else is taken now. Operations of one
 * counter start in threshold order, equal thresholds in posting order.
 * @param md_handle the MD.
 * @param local_offset offset in the MD.
 * @param length bytes.
 * @param ack_req as for PtlPut().
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param trig_ct_handle the counter that triggers it (same NI).
 * @param threshold the count (success + failure) that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as PtlPut(), or the
 *   counter); PTL_NO_SPACE (max_triggered_ops pending on the NI); PTL_FAIL.
 */
int PtlTriggeredPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		    ptl_size_t length, ptl_ack_req_t ack_req,
		    ptl_process_t target_id, ptl_pt_index_t pt_index,
		    ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		    void *user_ptr, ptl_hdr_data_t hdr_data,
		    ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/**
 * PtlGet() deferred until a counter reaches a threshold, as
 * PtlTriggeredPut().
 * @param md_handle the MD.
 * @param local_offset offset in the MD.
 * @param length bytes.
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param trig_ct_handle the counter that triggers it (same NI).
 * @param threshold the count (success + failure) that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlTriggeredGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		    ptl_size_t length, ptl_process_t target_id,
		    ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		    ptl_size_t remote_offset, void *user_ptr,
		    ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/**
 * PtlAtomic() deferred until a counter reaches a threshold (checked as
 * PtlAtomic() checks it, when posted).
 * @param md_handle the MD.
 * @param local_offset offset in the MD.
 * @param length bytes.
 * @param ack_req as for PtlPut().
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param operation a ptl_op_t, as for the untriggered call.
 * @param datatype a ptl_datatype_t the operation accepts.
 * @param trig_ct_handle the counter that triggers it.
 * @param threshold the count (success + failure) that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as the untriggered call,
 *   or the counter); PTL_NO_SPACE (max_triggered_ops pending);
 *   PTL_FAIL (spinnic gone).
 */
int PtlTriggeredAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		       ptl_size_t length, ptl_ack_req_t ack_req,
		       ptl_process_t target_id, ptl_pt_index_t pt_index,
		       ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		       void *user_ptr, ptl_hdr_data_t hdr_data,
		       ptl_op_t operation, ptl_datatype_t datatype,
		       ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/**
 * PtlFetchAtomic() deferred until a counter reaches a threshold (checked
 * as PtlFetchAtomic() checks it, when posted).
 * @param get_md_handle receives the old values.
 * @param local_get_offset offset in the get MD.
 * @param put_md_handle holds the operands.
 * @param local_put_offset offset in the put MD.
 * @param length bytes.
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param operation a ptl_op_t, as for the untriggered call.
 * @param datatype a ptl_datatype_t the operation accepts.
 * @param trig_ct_handle the counter that triggers it.
 * @param threshold the count (success + failure) that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as the untriggered call,
 *   or the counter); PTL_NO_SPACE (max_triggered_ops pending);
 *   PTL_FAIL (spinnic gone).
 */
int PtlTriggeredFetchAtomic(ptl_handle_md_t get_md_handle,
			    ptl_size_t local_get_offset,
			    ptl_handle_md_t put_md_handle,
			    ptl_size_t local_put_offset, ptl_size_t length,
			    ptl_process_t target_id, ptl_pt_index_t pt_index,
			    ptl_match_bits_t match_bits,
			    ptl_size_t remote_offset, void *user_ptr,
			    ptl_hdr_data_t hdr_data, ptl_op_t operation,
			    ptl_datatype_t datatype,
			    ptl_handle_ct_t trig_ct_handle,
			    ptl_size_t threshold);

/**
 * PtlSwap() deferred until a counter reaches a threshold (checked as
 * PtlSwap() checks it, when posted).
 * @param get_md_handle receives the old values.
 * @param local_get_offset offset in the get MD.
 * @param put_md_handle holds the operands.
 * @param local_put_offset offset in the put MD.
 * @param length bytes.
 * @param target_id target process (a rank on a logical NI).
 * @param pt_index target PT.
 * @param match_bits matched against the target's MEs.
 * @param remote_offset offset in the target entry.
 * @param user_ptr returned in the initiator's events.
 * @param hdr_data delivered in the target's event.
 * @param operand compare value or mask (PtlSwap()).
 * @param operation a ptl_op_t, as for the untriggered call.
 * @param datatype a ptl_datatype_t the operation accepts.
 * @param trig_ct_handle the counter that triggers it.
 * @param threshold the count (success + failure) that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as the untriggered call,
 *   or the counter); PTL_NO_SPACE (max_triggered_ops pending);
 *   PTL_FAIL (spinnic gone).
 */
int PtlTriggeredSwap(ptl_handle_md_t get_md_handle,
		     ptl_size_t local_get_offset,
		     ptl_handle_md_t put_md_handle,
		     ptl_size_t local_put_offset, ptl_size_t length,
		     ptl_process_t target_id, ptl_pt_index_t pt_index,
		     ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		     void *user_ptr, ptl_hdr_data_t hdr_data,
		     const void *operand, ptl_op_t operation,
		     ptl_datatype_t datatype, ptl_handle_ct_t trig_ct_handle,
		     ptl_size_t threshold);

/**
 * PtlCTInc() deferred until a counter (this one or another) reaches a
 * threshold; applied by the NIC, so chains run without the process.
 * @param ct_handle the counter to increment.
 * @param increment added when triggered.
 * @param trig_ct_handle the counter that triggers it (same NI).
 * @param threshold the count that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlTriggeredCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment,
		      ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/**
 * PtlCTSet() deferred until a counter reaches a threshold (applied by
 * the NIC, as PtlTriggeredCTInc()).
 * @param ct_handle the counter to set.
 * @param new_ct its value when triggered.
 * @param trig_ct_handle the counter that triggers it (same NI).
 * @param threshold the count that triggers it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlTriggeredCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct,
		      ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/**
 * Destroy every triggered operation waiting on a counter (those posted
 * before this call included): when it returns none of them will run. The
 * counter itself, and operations that fired already, are left as they
 * are. PtlCTFree() drops them too.
 * @param ct_handle the counter.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlCTCancelTriggered(ptl_handle_ct_t ct_handle);

/**
 * Bundling hint (no effect in spinnic: commands are posted at once).
 * @param ni_handle the NI.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlStartBundle(ptl_handle_ni_t ni_handle);

/**
 * End of a bundle (see PtlStartBundle).
 * @param ni_handle the NI.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlEndBundle(ptl_handle_ni_t ni_handle);

/**
 * Allocate an event queue in the host region.
 * @param ni_handle the NI.
 * @param count events it holds (rounded up to a power of two).
 * @param eq_handle receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE; PTL_FAIL.
 */
int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
	       ptl_handle_eq_t *eq_handle);

/**
 * Free an event queue (waiters return PTL_INTERRUPTED).
 * @param eq_handle the EQ.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int PtlEQFree(ptl_handle_eq_t eq_handle);

/**
 * Take the next event without waiting.
 * @param eq_handle the EQ.
 * @param event receives the event.
 * @return PTL_OK; PTL_EQ_EMPTY; PTL_EQ_DROPPED (event valid, but events
 *   were lost since the last call); PTL_NO_INIT; PTL_ARG_INVALID.
 */
int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event);

/**
 * Wait for the next event.
 * @param eq_handle the EQ.
 * @param event receives the event.
 * @return PTL_OK; PTL_EQ_DROPPED; PTL_NO_INIT; PTL_ARG_INVALID;
 *   PTL_INTERRUPTED.
 */
int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event);

/**
 * Wait for an event on any of several EQs, or the timeout.
 * @param eq_handles EQs.
 * @param size entries (> 0).
 * @param timeout milliseconds, 0 to test once, PTL_TIME_FOREVER.
 * @param event receives the event.
 * @param which receives the index of its EQ.
 * @return PTL_OK; PTL_EQ_DROPPED; PTL_EQ_EMPTY (timeout); PTL_NO_INIT;
 *   PTL_ARG_INVALID; PTL_INTERRUPTED.
 */
int PtlEQPoll(const ptl_handle_eq_t *eq_handles, unsigned int size,
	      ptl_time_t timeout, ptl_event_t *event, unsigned int *which);

/**
 * Compare two handles.
 * @param handle1 a handle.
 * @param handle2 another.
 * @return non-zero if they name the same object, else 0.
 */
int PtlHandleIsEqual(ptl_handle_any_t handle1, ptl_handle_any_t handle2);

#ifdef __cplusplus
}
#endif

#endif
