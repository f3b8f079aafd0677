/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spinnic_abi.h
 * The host–NIC interface (DESIGN §4): control-socket messages, the host
 * region layout, the command ring and the records the NIC writes into the
 * region (events, counters). Shared by lib/shim (client side) and
 * lib/portals + app/spinnic (NIC side). libc only; no pointers: everything
 * in the region is an offset from the region base, everything a client
 * names (buffers) is a 64-bit address in the client's address space that
 * the NIC translates and checks.
 *
 * Byte order: host (both sides run on the same machine).
 */
#ifndef SPINNIC_ABI_H
#define SPINNIC_ABI_H

#include <assert.h>
#include <stdint.h>

#define SPINNIC_ABI_VERSION 8u
/** Region cookie: "SPINREG1". */
#define SPINNIC_REGION_MAGIC 0x314745524e495053ull

/* ---------------------------------------------------------------------- */
/* Control socket: AF_UNIX SOCK_SEQPACKET, one fixed-size message each way */
/* per request, same struct for request and reply.                         */
/* ---------------------------------------------------------------------- */

enum spinnic_ctrl_op {
	SPINNIC_CTRL_ATTACH = 1,  /* SCM_RIGHTS: exactly one fd, the region memfd */
	SPINNIC_CTRL_DETACH,
	SPINNIC_CTRL_NI_INIT,
	SPINNIC_CTRL_NI_FINI,
	SPINNIC_CTRL_PT_ALLOC,
	SPINNIC_CTRL_PT_FREE,
	SPINNIC_CTRL_PT_ENABLE,
	SPINNIC_CTRL_PT_DISABLE,
	SPINNIC_CTRL_EQ_ALLOC,
	SPINNIC_CTRL_EQ_FREE,
	SPINNIC_CTRL_CT_ALLOC,
	SPINNIC_CTRL_CT_FREE,
	SPINNIC_CTRL_MD_BIND,
	SPINNIC_CTRL_MD_RELEASE,
	SPINNIC_CTRL_ME_APPEND,
	SPINNIC_CTRL_ME_UNLINK,
	SPINNIC_CTRL_ME_SEARCH,
	SPINNIC_CTRL_CTX_INSTALL,   /* sPIN execution context */
	SPINNIC_CTRL_CTX_FREE,
	SPINNIC_CTRL_NICMEM_ALLOC,  /* NIC memory blob, filled from the region */
	SPINNIC_CTRL_NICMEM_WRITE,
	SPINNIC_CTRL_NICMEM_FREE,
	SPINNIC_CTRL_NI_STATUS,     /* read a status register (PtlNIStatus) */
	SPINNIC_CTRL_AA_LOG_CREATE, /* Active Access: an access log ring */
	SPINNIC_CTRL_AA_LOG_FREE,
	SPINNIC_CTRL_AA_ASSOC,      /* Active Access: mark pages */
	SPINNIC_CTRL_BATCH,         /* ABI 7: records in the region, applied
				       in order (struct spinnic_ctrl_batch) */
	SPINNIC_CTRL_AA_FAULT_READ, /* Active Access: take the caller's
				       fault records (E = 0 pages) */
	SPINNIC_CTRL_OP_MAX,
};

/**
 * Reply flag (spinnic_ctrl_msg.flags) of a refused ATTACH: the peer's uid
 * (SO_PEERCRED) may not use this spinnic (`spinnic --allow-uid`); the
 * status is PTL_FAIL and spinnic closes the connection after the reply.
 */
#define SPINNIC_CTRL_F_UID_DENIED (1u << 15)
/**
 * Request flag of ME_APPEND: reserve the entry, checked as an append and
 * counted against its list's length, but not linked; the handle comes
 * back and a ring ME_APPEND links it (PtlTriggeredMEAppend).
 */
#define SPINNIC_CTRL_F_ME_RESERVE (1u << 0)

/**
 * BATCH (ABI 7): the request names @c count records (struct
 * spinnic_ctrl_msg each, SPINNIC_CTRL_MSG_SIZE bytes, contiguous, the
 * first at region offset @c off, 8-aligned), at most
 * SPINNIC_CTRL_BATCH_MAX. spinnic copies each record before it checks it
 * and applies them in order as if each came alone on the socket, writing
 * each record's reply (status, handle) back over it. Batchable: EQ_ALLOC,
 * EQ_FREE, CT_ALLOC, CT_FREE, MD_BIND, MD_RELEASE, ME_APPEND (with or
 * without SPINNIC_CTRL_F_ME_RESERVE), ME_UNLINK; anything else (ATTACH,
 * DETACH, BATCH, the sPIN and Active Access ops, NI and PT ops) fails
 * its record with PTL_ARG_INVALID. A handle field of a record may be
 * SPINNIC_BATCH_REF(i): the handle record i < this one created (of the
 * kind the field names: MD_BIND eq/ct, ME_APPEND ct, CT_FREE ct,
 * EQ_FREE eq, MD_RELEASE md, ME_UNLINK me); any other use fails the
 * record. The first failing record stops the batch: the reply's status
 * is its status, @c failed its index, and what records 0..failed-1
 * created is destroyed again, last first (their status then reads
 * PTL_ABORTED; frees stay done). A batch refused as a whole (offset,
 * count, alignment) has status PTL_ARG_INVALID and failed
 * SPINNIC_HANDLE_NONE, and touches no record. Success: status PTL_OK,
 * done == count, failed SPINNIC_HANDLE_NONE.
 */
struct spinnic_ctrl_batch {
	uint64_t off;       /**< region offset of record 0, 8-aligned */
	uint32_t count;     /**< records, 1..SPINNIC_CTRL_BATCH_MAX */
	uint32_t failed;    /**< reply: index of the failing record, or
				 SPINNIC_HANDLE_NONE */
	uint32_t done;      /**< reply: records applied and kept */
	uint32_t pad;
};
/** Most records of one BATCH. */
#define SPINNIC_CTRL_BATCH_MAX 256u
/** A handle field of a batch record naming record @p i's new handle. */
#define SPINNIC_BATCH_REF_TAG 0xfff00000u
#define SPINNIC_BATCH_REF(i) (SPINNIC_BATCH_REF_TAG | (uint32_t)(i))
/** Whether handle @p h is a batch reference (never a real handle: type
 *  7 is no Portals handle type, and context handles are small). */
#define SPINNIC_BATCH_IS_REF(h) \
	((uint32_t)(h) >= SPINNIC_BATCH_REF_TAG && \
	 (uint32_t)(h) < SPINNIC_BATCH_REF_TAG + SPINNIC_CTRL_BATCH_MAX)

/** Handle value meaning "none" (PTL_EQ_NONE, PTL_CT_NONE, no context). */
#define SPINNIC_HANDLE_NONE 0xffffffffu
/** Name length of a handler (family.function) in handlers/. */
#define SPINNIC_HANDLER_NAME 48
/** Bytes of a control message (request and reply). */
#define SPINNIC_CTRL_MSG_SIZE 256

/** Portals process id as the NIC sees it. */
struct spinnic_pid {
	uint32_t nid; /**< node id of the NIC (one per port) */
	uint32_t pid; /**< process id on that NIC */
};

/** Portals limits (ptl_ni_limits_t, fixed-width). */
struct spinnic_limits {
	int32_t max_entries, max_unexpected_headers, max_mds, max_cts, max_eqs,
		max_pt_index, max_iovecs, max_list_size, max_triggered_ops;
	uint32_t features;
	uint64_t max_msg_size, max_atomic_size, max_fetch_atomic_size,
		max_waw_ordered_size, max_war_ordered_size,
		max_volatile_size;
};

struct spinnic_ctrl_attach {
	uint64_t region_size;    /**< must equal the fstat size of the fd */
	uint64_t region_base_va; /**< where the client mapped the region */
	uint32_t want_pid;       /**< SPINNIC_HANDLE_NONE: any free pid */
	int32_t client_pid;      /**< getpid(), for process_vm_*; checked
				      against SO_PEERCRED */
	/* reply */
	struct spinnic_pid id;   /**< physical id granted */
	uint32_t payload_size;   /**< NIC packet payload bytes */
	uint32_t nhpu;           /**< HPUs of this node (ABI 5; was pad) */
	uint64_t nic_mem_total;  /**< NIC memory capacity of this node */
};

struct spinnic_ctrl_ni {
	uint32_t ni;        /**< reply of NI_INIT; argument of the others */
	uint32_t options;   /**< PTL_NI_MATCHING|NO_MATCHING, PHYSICAL|LOGICAL */
	struct spinnic_limits desired; /**< NI_INIT; -1/0 fields: defaults */
	struct spinnic_limits actual;  /**< reply */
};

struct spinnic_ctrl_pt {
	uint32_t ni;
	uint32_t options;   /**< PTL_PT_ONLY_USE_ONCE, FLOWCTRL, ... */
	uint32_t eq;        /**< EQ handle or NONE */
	uint32_t pt_index;  /**< requested (PTL_PT_ANY) / granted */
};

struct spinnic_ctrl_eq {
	uint32_t ni;
	uint32_t eq;        /**< reply of ALLOC; argument of FREE */
	uint64_t ring_off;  /**< region offset of struct spinnic_eq (the shim
				 allocates it in the region, header + entries) */
	uint32_t count;     /**< entries, power of two */
	uint32_t pad;
};

struct spinnic_ctrl_ct {
	uint32_t ni;
	uint32_t ct;        /**< reply of ALLOC; argument of FREE */
	uint64_t ct_off;    /**< region offset of struct spinnic_ct */
};

/** Memory descriptor / list entry memory: an address in the client. */
struct spinnic_ctrl_md {
	uint32_t ni;
	uint32_t md;        /**< reply of BIND; argument of RELEASE */
	uint64_t start;     /**< client address (region or its own memory) */
	uint64_t length;
	uint32_t options;   /**< PTL_MD_* */
	uint32_t eq, ct;
	uint32_t pad;
};

struct spinnic_ctrl_me {
	uint32_t ni;
	uint32_t pt_index;
	uint32_t list;      /**< PTL_PRIORITY_LIST, PTL_OVERFLOW_LIST,
				 PTL_SEARCH_ONLY, PTL_SEARCH_DELETE (SEARCH) */
	uint32_t me;        /**< reply of APPEND; argument of UNLINK */
	uint64_t start;     /**< client address */
	uint64_t length;
	uint32_t options;   /**< PTL_ME_* */
	uint32_t ct;        /**< CT handle or NONE */
	uint32_t uid;
	uint32_t ctx;       /**< sPIN execution context or NONE */
	struct spinnic_pid match_id; /**< PTL_NID_ANY/PTL_PID_ANY wildcards */
	uint64_t match_bits, ignore_bits;
	uint64_t min_free;
	uint64_t user_ptr;  /**< returned in events */
};

/** sPIN execution context (DESIGN §6). */
struct spinnic_ctrl_ctx {
	uint32_t ni;
	uint32_t ctx;       /**< reply of INSTALL; argument of FREE */
	char family[SPINNIC_HANDLER_NAME]; /**< handler family in handlers/ */
	uint64_t args_off;  /**< region offset of handler arguments, copied */
	uint32_t args_len;  /*   into the context's NIC memory at install */
	uint32_t state_len; /**< extra zeroed NIC memory for handler state */
	uint32_t policy;    /**< enum spinnic_sched_policy */
	uint32_t delta_p;   /**< blocked-RR: packets per sequence */
	uint32_t nvhpu;     /**< blocked-RR: virtual HPUs (0: one per sequence) */
	uint32_t flags;
};

enum spinnic_sched_policy {
	SPINNIC_SCHED_DEFAULT = 0,   /**< any idle HPU */
	SPINNIC_SCHED_BLOCKED_RR,    /**< Δp-packet sequences on vHPUs */
};

struct spinnic_ctrl_nicmem {
	uint32_t ni;
	uint32_t handle;    /**< reply of ALLOC */
	uint64_t size;      /**< ALLOC */
	uint64_t src_off;   /**< WRITE: region offset of source bytes */
	uint64_t dst_off;   /**< WRITE: offset in the blob */
	uint64_t len;       /**< WRITE */
};

/** PtlNIStatus: one status register of an NI. */
struct spinnic_ctrl_status {
	uint32_t ni;
	uint32_t reg;       /**< SPINNIC_PTL_SR_* */
	uint64_t value;     /**< reply */
};

/**
 * Active Access (doc/NOTES.md "Active Access"): AA_LOG_CREATE {ni,
 * ring_off, size, flags, notify_every, notify_us, ctx, addr, len} ->
 * log; AA_LOG_FREE {log}; AA_ASSOC {ni, addr, len, bits, log}: pages of the client's own address space, effective for
 * accesses that start after the reply. AA_ASSOC with log NONE and bits
 * that log metadata only (WL and/or RL; no WLD, RLD, FLUSH) marks the
 * pages E = 0: their records go to the client's fault log, kept in NIC
 * memory (SPINNIC_AA_FAULTS_MAX records; full: the new record is lost
 * and counted). AA_FAULT_READ {ni, ring_off: region offset of a
 * 64-aligned buffer, size: records it holds (1..SPINNIC_AA_FAULTS_MAX)}
 * moves the caller's oldest fault records there (struct spinnic_aa_rec,
 * len 0, seq 1 + the record's index among the client's fault records)
 * and replies size = records moved, addr = fault records logged so far,
 * len = fault records lost so far (both since the client attached).
 */
struct spinnic_ctrl_aa {
	uint32_t ni;
	uint32_t log;       /**< reply of LOG_CREATE; argument of the others
				 (SPINNIC_HANDLE_NONE: no log) */
	uint64_t ring_off;  /**< LOG_CREATE: region offset of struct
				 spinnic_aa_ring, 64-aligned */
	uint64_t size;      /**< LOG_CREATE: ring bytes after the header */
	uint32_t flags;     /**< LOG_CREATE: SPINNIC_AA_LOG_* */
	uint32_t bits;      /**< ASSOC: SPINNIC_AA_* page bits */
	uint64_t addr;      /**< ASSOC: client address, page-aligned */
	uint64_t len;       /**< ASSOC: bytes, a multiple of the page */
	uint32_t notify_every; /**< LOG_CREATE: wake futex sleepers after
				    this many records (0: 1) */
	uint32_t notify_us; /**< LOG_CREATE: ... or this many µs after the
				 first record not yet woken for (0: never;
				 at most SPINNIC_AA_NOTIFY_US_MAX) */
	uint32_t ctx;       /**< LOG_CREATE with SPINNIC_AA_LOG_HANDLER:
				 an execution context of the client whose
				 family's access handler consumes the log
				 on the NIC, over the window [addr, addr +
				 len) */
	uint32_t page_shift; /**< reply of every AA op: log2 of the NIC's
				  marking page (--aa-page-size); 0 from a NIC
				  that predates it (4096). An ASSOC with addr,
				  len and bits 0 and no log marks nothing: a
				  query of it */
};

struct spinnic_ctrl_msg {
	uint32_t version;   /**< SPINNIC_ABI_VERSION */
	uint16_t op;        /**< enum spinnic_ctrl_op */
	uint16_t flags;
	uint32_t seq;       /**< echoed in the reply */
	int32_t status;     /**< reply: PTL_OK (0) or a PTL_* return code */
	union {
		struct spinnic_ctrl_attach attach;
		struct spinnic_ctrl_ni ni;
		struct spinnic_ctrl_pt pt;
		struct spinnic_ctrl_eq eq;
		struct spinnic_ctrl_ct ct;
		struct spinnic_ctrl_md md;
		struct spinnic_ctrl_me me;
		struct spinnic_ctrl_ctx ctx;
		struct spinnic_ctrl_nicmem nicmem;
		struct spinnic_ctrl_status status;
		struct spinnic_ctrl_aa aa;
		struct spinnic_ctrl_batch batch;
		uint8_t raw[SPINNIC_CTRL_MSG_SIZE - 16];
	} u;
};
static_assert(sizeof(struct spinnic_ctrl_msg) == SPINNIC_CTRL_MSG_SIZE,
	      "control message is fixed-size");

/* ---------------------------------------------------------------------- */
/* Active Access logs (doc/NOTES.md "Active Access": the byte layout).     */
/* ---------------------------------------------------------------------- */

/** Emulated IOMMU page: marks cover whole pages of this size. */
#define SPINNIC_AA_PAGE 4096u
/** Largest marking page (spinnic --aa-page-size); records still cover at
 *  most SPINNIC_AA_PAGE bytes (an access is cut at 4 KiB boundaries). */
#define SPINNIC_AA_PAGE_MAX (1ull << 30)
/** Page bits (the paper's PTE bits). Unmarked pages are W|R. */
#define SPINNIC_AA_W   0x01u /**< writes reach memory */
#define SPINNIC_AA_R   0x02u /**< reads return memory */
#define SPINNIC_AA_WL  0x04u /**< log metadata of writes */
#define SPINNIC_AA_WLD 0x08u /**< log metadata and data of writes */
#define SPINNIC_AA_RL  0x10u /**< log metadata of reads */
#define SPINNIC_AA_RLD 0x20u /**< log metadata and data of reads */
#define SPINNIC_AA_FLUSH 0x80u /**< flushing page of its log: a get of it
				    is answered once the log is consumed
				    past the get's arrival */
#define SPINNIC_AA_BITS 0xbfu
/** Log flag: a full log loses the record and counts it. Without it a
 *  put packet whose records do not fit is refused unacknowledged, so
 *  reliable delivery resends it (back-pressure; other accesses drop). */
#define SPINNIC_AA_LOG_DROP 0x1u
/** Log flag: consumed on the NIC by the access handler of context `ctx`
 *  over the window [addr, addr + len) (without it ctx, addr, len are
 *  ignored). */
#define SPINNIC_AA_LOG_HANDLER 0x2u
/** Largest notify_us of a log (one second). */
#define SPINNIC_AA_NOTIFY_US_MAX 1000000u
/** Clients with logs the NIC serves itself (access handlers, notify_us). */
#define SPINNIC_AA_WATCH_MAX 64u
/** Access logs per client. */
#define SPINNIC_AA_LOGS_MAX 16u
/** Fault log (E = 0 pages) records held per client. */
#define SPINNIC_AA_FAULTS_MAX 256u
/** Marked ranges per client (a range: consecutive pages, same bits). */
#define SPINNIC_AA_RANGES_MAX 1024u
/** Ring bytes: a power of two in [MIN, MAX]. */
#define SPINNIC_AA_RING_MIN 16384ull /* a page record is at most half */
#define SPINNIC_AA_RING_MAX (64ull << 20)

/** Record kinds. */
enum spinnic_aa_kind {
	SPINNIC_AA_PUT_META = 1,    /**< a write, metadata only */
	SPINNIC_AA_PUT_DATA = 2,    /**< a write and its bytes */
	SPINNIC_AA_GET_META = 3,    /**< a read, metadata only */
	SPINNIC_AA_GET_DATA = 4,    /**< a read and the bytes returned */
	SPINNIC_AA_PUT_BLOCKED = 5, /**< a refused write (W=0, WL=1) */
	SPINNIC_AA_GET_BLOCKED = 6, /**< a refused read (R=0, RL=1) */
	SPINNIC_AA_ATOMIC = 7,      /**< a Portals atomic, metadata only */
	SPINNIC_AA_PAD = 15,        /**< filler up to the ring's end */
};
/** Record flags. */
#define SPINNIC_AA_F_REDIRECTED 0x1u /**< memory untouched, data here */
#define SPINNIC_AA_F_HANDLER    0x2u /**< an sPIN handler's DMA (msg_off:
					  the offset in the ME window) */

/** Ring header at ring_off; records follow at ring_off + 128. */
struct spinnic_aa_ring {
	uint64_t prod;     /**< 0, NIC: bytes written (monotonic) */
	uint64_t lost;     /**< 8, NIC: records not logged */
	uint32_t err;      /**< 16, NIC: 1 = cons was invalid, log stopped */
	uint32_t version;  /**< 20, NIC: 1 */
	uint64_t size;     /**< 24, NIC: ring bytes */
	uint32_t futex;    /**< 32, NIC: bumped at every wake */
	uint32_t waiters;  /**< 36, client: > 0 while a thread sleeps */
	uint8_t pad0[64 - 40];
	uint64_t cons;     /**< 64, client: bytes consumed (monotonic) */
	uint8_t pad1[128 - 72];
};
static_assert(sizeof(struct spinnic_aa_ring) == 128, "AA ring header");

/** One record: 64 bytes, then len data bytes padded to 64. */
struct spinnic_aa_rec {
	uint32_t seq;      /**< commit word, stored last: 1 + index (mod
			        2^32, 0 skipped) */
	uint16_t kind;     /**< enum spinnic_aa_kind */
	uint16_t flags;    /**< SPINNIC_AA_F_* */
	uint32_t len;      /**< data bytes (PAD: bytes after this header) */
	uint32_t mode;     /**< the page's bits at the access */
	uint64_t addr;     /**< client address of the piece's first byte */
	uint32_t src_nid, src_pid; /**< initiator */
	uint64_t msg_id;   /**< initiator's message id */
	uint64_t msg_off;  /**< the piece's offset in its message */
	uint64_t hdr_data; /**< the put's header data (0 for gets) */
	uint64_t ts_ns;    /**< CLOCK_MONOTONIC when logged */
};
static_assert(sizeof(struct spinnic_aa_rec) == 64, "AA record");

/* ---------------------------------------------------------------------- */
/* Host region: created by the client (memfd, sealed against shrinking).   */
/* ---------------------------------------------------------------------- */

/** At offset 0 of the region. The client fills it before ATTACH. */
struct spinnic_region_hdr {
	uint64_t magic;         /**< SPINNIC_REGION_MAGIC */
	uint32_t version;       /**< SPINNIC_ABI_VERSION */
	uint32_t hdr_size;      /**< sizeof(struct spinnic_region_hdr) */
	uint64_t size;          /**< region bytes */
	uint64_t cmd_off;       /**< struct spinnic_cmd_ring */
	uint32_t cmd_entries;   /**< power of two */
	uint32_t pad0;
	uint64_t heap_off;      /**< client allocator arena (user buffers,
				     EQs, CTs) */
	uint64_t heap_size;
	uint8_t pad1[64 - 56];
};
static_assert(sizeof(struct spinnic_region_hdr) == 64, "region header");

/* ---- command ring: single producer (client), single consumer (NIC) ---- */

enum spinnic_cmd_op {
	SPINNIC_CMD_NOP = 0,
	SPINNIC_CMD_PUT,
	SPINNIC_CMD_GET,
	SPINNIC_CMD_CT_SET,
	SPINNIC_CMD_CT_INC,
	SPINNIC_CMD_SPUT_START,  /**< streaming put: open, first piece */
	SPINNIC_CMD_SPUT_STREAM, /**< streaming put: next piece */
	SPINNIC_CMD_PROCESS_PUT, /**< outbound sPIN: packets packed by a type */
	SPINNIC_CMD_ATOMIC,      /**< PtlAtomic: a put whose bytes are applied */
	SPINNIC_CMD_FETCH_ATOMIC, /**< PtlFetchAtomic: old values come back */
	SPINNIC_CMD_SWAP,        /**< PtlSwap: as FETCH_ATOMIC, with operand */
	SPINNIC_CMD_TRIG,        /**< triggered operation: md = the trigger
				      CT, length = threshold, local_offset =
				      period (0: one-shot; else persistent:
				      fires at threshold + k * period until
				      cancelled, an ME_APPEND links a copy of
				      its reserved entry each time; not for
				      ME_UNLINK; since version 6); the next slot
				      holds the operation (any command but
				      the ones below and the streaming ones) */
	SPINNIC_CMD_CT_CHECK,    /**< md = a CT the client changed itself:
				      fire what its new value releases */
	SPINNIC_CMD_CT_CANCEL_TRIG, /**< md = a CT: destroy its pending
					 triggered operations */
	SPINNIC_CMD_ME_APPEND,   /**< md = an ME reserved by a control
				      ME_APPEND with SPINNIC_CTRL_F_ME_RESERVE:
				      link it as PtlMEAppend would */
	SPINNIC_CMD_ME_UNLINK,   /**< md = an ME: unlink it (a reserved one:
				      its append is cancelled) */
	SPINNIC_CMD_OP_MAX,
};

/** Streaming puts open at once per client (stream slots 0..MAX-1). */
#define SPINNIC_SPUT_MAX 64u
/** SPUT_STREAM flags: this piece ends the message (the pieces must then
 *  add up to the declared length). */
#define SPINNIC_CMD_F_EOM 1u
/** PUT, ATOMIC, FETCH_ATOMIC, SWAP flags: the bytes read from the MD
 *  (length bytes, after a SWAP's compare value: SPINNIC_ATOMIC_OPERAND in
 *  all; an iovec MD's gathered) travel in the command's operand, copied by the
 *  client when it posted: the NIC reads no host memory for them
 *  (doc/NOTES.md "Inline puts"). The MD range is checked all the same. */
#define SPINNIC_CMD_F_INLINE 2u
/** Largest serialized type a PROCESS_PUT may name (bytes). */
#define SPINNIC_PROC_BLOB_MAX (1u << 20)

/** One command; the NIC copies it out of the ring before checking it. */
struct spinnic_cmd {
	uint16_t op;            /**< enum spinnic_cmd_op */
	uint16_t flags;         /**< SPUT_STREAM: SPINNIC_CMD_F_EOM; PUT:
				     SPINNIC_CMD_F_INLINE; else 0 */
	uint32_t ni;
	uint32_t md;            /**< PUT/GET: local MD; CT_*: the CT;
				     ME_*: the ME */
	uint32_t ack_req;       /**< PUT: ptl_ack_req_t */
	uint64_t local_offset;  /**< in the MD */
	uint64_t length;
	struct spinnic_pid target;
	uint32_t pt_index;
	uint32_t get_md;        /**< FETCH_ATOMIC/SWAP: the MD the old values
				     go to (md: the operand values' MD) */
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t user_ptr;
	uint64_t hdr_data;
	union {
		uint64_t ct_success;    /**< CT_SET/CT_INC values */
		uint64_t get_offset;    /**< FETCH_ATOMIC/SWAP: in get_md */
	};
	union {
		uint64_t ct_failure;
		struct {
			uint8_t atomic_op;   /**< ATOMIC...: ptl_op_t */
			uint8_t atomic_type; /**< ATOMIC...: ptl_datatype_t */
			uint8_t pad3[6];
		};
	};
	union {
		/* streaming and processed puts (zero for the other ops) */
		struct {
			uint64_t msg_length; /**< SPUT_START: declared message
						  length (length is the first
						  piece) */
			uint32_t stream;     /**< SPUT_*: stream slot <
						  SPINNIC_SPUT_MAX */
			uint32_t blob;       /**< PROCESS_PUT: NIC memory blob
						  holding a serialized type
						  (ddt_serialize) */
			uint32_t blob_len;   /**< PROCESS_PUT: its bytes */
			uint32_t pad2;
			uint64_t count;      /**< PROCESS_PUT: elements of the
						  type; length is the packed
						  size (size * count) and
						  local_offset the buffer
						  origin in the MD */
		};
		/** SWAP with CSWAP*, MSWAP: the compare value or mask (one
		 *  element, at most SPINNIC_ATOMIC_OPERAND bytes); a PUT with
		 *  SPINNIC_CMD_F_INLINE: its payload */
		uint8_t operand[32];
	};
};
/** Largest atomic element (long double complex), the operand's room. */
#define SPINNIC_ATOMIC_OPERAND 32u
static_assert(sizeof(struct spinnic_cmd) == 128, "command size");

struct spinnic_cmd_ring {
	_Alignas(64) volatile uint32_t head; /**< producer: next slot to fill */
	_Alignas(64) volatile uint32_t tail; /**< consumer: next slot to read */
	_Alignas(64) uint32_t mask;          /**< entries - 1 */
	uint32_t pad;
	/** NIC: per NI kind, TRIG commands that left the NIC (fired,
	 *  cancelled, dropped or refused); the shim's count of those it
	 *  posted minus this is what is pending (max_triggered_ops) */
	volatile uint64_t trig_done[4];
	_Alignas(64) struct spinnic_cmd slots[];
};

/* ---- event queue: single producer (NIC), single consumer (client) ----- */

/** Event record as the NIC writes it (the shim converts to ptl_event_t). */
struct spinnic_event {
	uint64_t start;         /**< client address of the data */
	uint64_t user_ptr;
	uint64_t hdr_data;
	uint64_t match_bits;
	uint64_t rlength;
	uint64_t mlength;
	uint64_t remote_offset;
	struct spinnic_pid initiator;
	uint32_t uid;
	uint32_t pt_index;
	uint16_t type;          /**< ptl_event_kind_t */
	uint8_t ni_fail_type;   /**< ptl_ni_fail_t */
	uint8_t atomic_op;
	uint8_t atomic_type;
	uint8_t list;           /**< SPINNIC_PTL_PRIORITY_LIST / _OVERFLOW_LIST:
				     what the message matched (target events,
				     ACK) */
	uint8_t pad[2];
	/** ABI 8: the NIC's own time for the message of a target event
	 *  posted at its completion (PUT, GET, ATOMIC, ... on either list),
	 *  ns from its first packet's match to its completion (last DMA
	 *  done, completion handler run), at least 1, saturated at
	 *  UINT32_MAX; 0 for other events (a PUT_OVERFLOW posted at a later
	 *  append, initiator events, ...). Read by the shim's typed receives
	 *  (spin_event_nic_time()), not part of ptl_event_t. */
	uint32_t nic_ns;
	uint32_t seq;           /**< written last: slot valid when == index+1 */
};
static_assert(sizeof(struct spinnic_event) == 88, "event size");

struct spinnic_eq {
	_Alignas(64) volatile uint32_t head;    /**< NIC: events produced */
	volatile uint32_t dropped;              /**< NIC: events lost to overflow
						     (client reports
						     PTL_EQ_DROPPED once
						     per increase) */
	volatile uint32_t futex;                /**< bumped on every post */
	volatile uint32_t waiters;              /**< client: >0 when waiting */
	_Alignas(64) volatile uint32_t tail;    /**< client: events consumed */
	_Alignas(64) uint32_t mask;             /**< entries - 1 */
	uint32_t pad;
	_Alignas(64) struct spinnic_event slots[];
};

/* ---- counting event ---------------------------------------------------- */

struct spinnic_ct {
	volatile uint64_t success;
	volatile uint64_t failure;
	volatile uint32_t futex;   /**< bumped on every change */
	volatile uint32_t waiters;
	uint8_t pad[64 - 24];
};
static_assert(sizeof(struct spinnic_ct) == 64, "counter size");

/* ---------------------------------------------------------------------- */
/* Portals 4 numeric constants, shared by the shim's portals4.h (which     */
/* defines the PTL_* names from these) and the NIC, so the two never drift. */
/* Order of the Portals 4.1 enumerations.                                   */
/* ---------------------------------------------------------------------- */

/* Return codes (ptl_retvals), carried in spinnic_ctrl_msg.status. */
#define SPINNIC_PTL_OK              0
#define SPINNIC_PTL_ARG_INVALID     1
#define SPINNIC_PTL_CT_NONE_REACHED 2
#define SPINNIC_PTL_EQ_DROPPED      3
#define SPINNIC_PTL_EQ_EMPTY        4
#define SPINNIC_PTL_FAIL            5
#define SPINNIC_PTL_IN_USE          6
#define SPINNIC_PTL_INTERRUPTED     7
#define SPINNIC_PTL_LIST_TOO_LONG   8
#define SPINNIC_PTL_NO_INIT         9
#define SPINNIC_PTL_NO_SPACE        10
#define SPINNIC_PTL_PID_IN_USE      11
#define SPINNIC_PTL_PT_FULL         12
#define SPINNIC_PTL_PT_EQ_NEEDED    13
#define SPINNIC_PTL_PT_IN_USE       14
#define SPINNIC_PTL_ABORTED         15

/* Event kinds (ptl_event_kind_t), spinnic_event.type. */
#define SPINNIC_PTL_EVENT_GET                   0
#define SPINNIC_PTL_EVENT_GET_OVERFLOW          1
#define SPINNIC_PTL_EVENT_PUT                   2
#define SPINNIC_PTL_EVENT_PUT_OVERFLOW          3
#define SPINNIC_PTL_EVENT_ATOMIC                4
#define SPINNIC_PTL_EVENT_ATOMIC_OVERFLOW       5
#define SPINNIC_PTL_EVENT_FETCH_ATOMIC          6
#define SPINNIC_PTL_EVENT_FETCH_ATOMIC_OVERFLOW 7
#define SPINNIC_PTL_EVENT_REPLY                 8
#define SPINNIC_PTL_EVENT_SEND                  9
#define SPINNIC_PTL_EVENT_ACK                   10
#define SPINNIC_PTL_EVENT_PT_DISABLED           11
#define SPINNIC_PTL_EVENT_LINK                  12
#define SPINNIC_PTL_EVENT_AUTO_UNLINK           13
#define SPINNIC_PTL_EVENT_AUTO_FREE             14
#define SPINNIC_PTL_EVENT_SEARCH                15

/* ptl_ni_fail_t, spinnic_event.ni_fail_type. */
#define SPINNIC_PTL_NI_OK             0
#define SPINNIC_PTL_NI_UNDELIVERABLE  1
#define SPINNIC_PTL_NI_PT_DISABLED    2
#define SPINNIC_PTL_NI_DROPPED        3
#define SPINNIC_PTL_NI_PERM_VIOLATION 4
#define SPINNIC_PTL_NI_OP_VIOLATION   5
#define SPINNIC_PTL_NI_SEGV           6
#define SPINNIC_PTL_NI_NO_MATCH       7

/* PtlNIInit options (spinnic_ctrl_ni.options). */
#define SPINNIC_PTL_NI_MATCHING    (1u << 0)
#define SPINNIC_PTL_NI_NO_MATCHING (1u << 1)
#define SPINNIC_PTL_NI_LOGICAL     (1u << 2)
#define SPINNIC_PTL_NI_PHYSICAL    (1u << 3)

/* Wildcards (spinnic_pid fields, uid, pt_index). */
#define SPINNIC_PTL_NID_ANY 0xffffffffu
#define SPINNIC_PTL_PID_ANY 0xffffffffu
#define SPINNIC_PTL_UID_ANY 0xffffffffu
#define SPINNIC_PTL_PT_ANY  0xffffffffu

/* PtlPTAlloc options (spinnic_ctrl_pt.options). */
#define SPINNIC_PTL_PT_ONLY_USE_ONCE (1u << 0)
#define SPINNIC_PTL_PT_ONLY_TRUNCATE (1u << 1)
#define SPINNIC_PTL_PT_FLOWCTRL      (1u << 2)

/* Scatter/gather option bit (MD and ME): doc/NOTES.md "iovec MDs and
 * MEs". */
#define SPINNIC_PTL_IOVEC (1u << 31)
/* MD option, a spinnic extension (spin.h SPIN_MD_STAGE): a put from the
 * MD is first copied whole into NIC memory, then sent from there. */
#define SPINNIC_PTL_MD_STAGE (1u << 30)

/* PtlMDBind options (spinnic_ctrl_md.options). */
#define SPINNIC_PTL_MD_EVENT_SUCCESS_DISABLE (1u << 0)
#define SPINNIC_PTL_MD_EVENT_SEND_DISABLE    (1u << 1)
#define SPINNIC_PTL_MD_EVENT_CT_SEND         (1u << 2)
#define SPINNIC_PTL_MD_EVENT_CT_REPLY        (1u << 3)
#define SPINNIC_PTL_MD_EVENT_CT_ACK          (1u << 4)
#define SPINNIC_PTL_MD_EVENT_CT_BYTES        (1u << 5)
#define SPINNIC_PTL_MD_UNORDERED             (1u << 6)
#define SPINNIC_PTL_MD_VOLATILE              (1u << 7)

/* ME/LE options (spinnic_ctrl_me.options). */
#define SPINNIC_PTL_ME_OP_PUT                  (1u << 0)
#define SPINNIC_PTL_ME_OP_GET                  (1u << 1)
#define SPINNIC_PTL_ME_MANAGE_LOCAL            (1u << 2)
#define SPINNIC_PTL_ME_NO_TRUNCATE             (1u << 3)
#define SPINNIC_PTL_ME_USE_ONCE                (1u << 4)
#define SPINNIC_PTL_ME_MAY_ALIGN               (1u << 5)
#define SPINNIC_PTL_ME_ACK_DISABLE             (1u << 6)
#define SPINNIC_PTL_ME_UNEXPECTED_HDR_DISABLE  (1u << 7)
#define SPINNIC_PTL_ME_IS_ACCESSIBLE           (1u << 8)
#define SPINNIC_PTL_ME_EVENT_COMM_DISABLE      (1u << 9)
#define SPINNIC_PTL_ME_EVENT_FLOWCTRL_DISABLE  (1u << 10)
#define SPINNIC_PTL_ME_EVENT_SUCCESS_DISABLE   (1u << 11)
#define SPINNIC_PTL_ME_EVENT_OVER_DISABLE      (1u << 12)
#define SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE    (1u << 13)
#define SPINNIC_PTL_ME_EVENT_LINK_DISABLE      (1u << 14)
#define SPINNIC_PTL_ME_EVENT_CT_COMM           (1u << 15)
#define SPINNIC_PTL_ME_EVENT_CT_OVERFLOW       (1u << 16)
#define SPINNIC_PTL_ME_EVENT_CT_BYTES          (1u << 17)
#define SPINNIC_PTL_ME_AUTH_USE_JID            (1u << 18)
#define SPINNIC_PTL_ME_LOCAL_INC_UH_RLENGTH    (1u << 19)

/* ptl_list_t (spinnic_ctrl_me.list). */
#define SPINNIC_PTL_PRIORITY_LIST 0
#define SPINNIC_PTL_OVERFLOW_LIST 1
#define SPINNIC_PTL_SEARCH_ONLY   2
#define SPINNIC_PTL_SEARCH_DELETE 3

/* ptl_ack_req_t (spinnic_cmd.ack_req). */
#define SPINNIC_PTL_NO_ACK_REQ 0
#define SPINNIC_PTL_ACK_REQ    1
#define SPINNIC_PTL_CT_ACK_REQ 2
#define SPINNIC_PTL_OC_ACK_REQ 3

/* Status registers (ptl_sr_index_t), spinnic_ctrl_status.reg. */
#define SPINNIC_PTL_SR_DROP_COUNT            0
#define SPINNIC_PTL_SR_PERMISSION_VIOLATIONS 1
#define SPINNIC_PTL_SR_OPERATION_VIOLATIONS  2
#define SPINNIC_PTL_SR_LAST                  3

#endif
