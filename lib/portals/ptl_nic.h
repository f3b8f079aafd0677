/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ptl_nic.h
 * NIC-side Portals 4 state (DESIGN §1, §4): clients and their host
 * regions, NIs, portal tables, ME lists and matching, MDs, EQ and CT
 * writers, the command-ring consumer, the initiator operation table and
 * host-memory access. libc + pthreads only.
 *
 * Threads: one control thread (ptl_client_attach/detach, ptl_nic_ctrl) and
 * any number of data-path lcores (match, events, host access, commands,
 * ops) may use one struct ptl_nic at the same time. ptl_cmd_poll() on one
 * client must be called by one thread at a time (single consumer).
 *
 * Handles (NI, EQ, CT, MD, ME) are opaque 32-bit values that encode the NI,
 * the object type, a generation and an index; SPINNIC_HANDLE_NONE is none.
 * Return convention: int functions return 0 or -errno unless documented;
 * control replies carry SPINNIC_PTL_* codes.
 */
#ifndef PTL_NIC_H
#define PTL_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spinnic_abi.h"
#include "wire.h"

struct ptl_nic;
struct ptl_client;

/* ---------------------------------------------------------------------- */
/* NIC                                                                     */
/* ---------------------------------------------------------------------- */

/** Configuration of one NIC (one node). */
struct ptl_nic_conf {
	uint32_t nid;            /**< node id */
	uint32_t max_clients;    /**< physical pids 0..max_clients-1 */
	uint32_t max_ops;        /**< outstanding initiator operations */
	uint32_t payload_size;   /**< packet payload bytes (reported) */
	uint64_t nic_mem_total;  /**< reported at attach */
	/** Active Access marking page (--aa-page-size): marks are aligned
	 *  to it; a power of two, SPINNIC_AA_PAGE .. SPINNIC_AA_PAGE_MAX */
	uint64_t aa_page;
	/** Active Access IOTLB model (--aa-iotlb; doc/NOTES.md "Active
	 *  Access", IOTLB): entries (0: off, else a power of two up to
	 *  65536), ways (a power of two dividing entries; 0: fully
	 *  associative) and policy (0 LRU, 1 random) */
	uint32_t aa_iotlb_entries;
	uint32_t aa_iotlb_ways;
	uint32_t aa_iotlb_policy;
	/** Upper bounds and defaults of NI limits: a desired value of -1/0
	 *  gets this one; larger values are clamped to it. */
	struct spinnic_limits limits;
};

/** Log levels of lib/portals (the order of syslog and rte_log). */
enum ptl_log_level {
	PTL_LOG_ERR = 1, PTL_LOG_WARNING, PTL_LOG_NOTICE, PTL_LOG_INFO,
	PTL_LOG_DEBUG,
};

/** Where lib/portals' messages go: @p level is an enum ptl_log_level,
 *  @p msg one line without a newline. */
typedef void (*ptl_log_fn)(int level, const char *msg);

/**
 * Route lib/portals' log messages (libc-only library: the application owns
 * the log system; spinnic sends them to its `spinnic.portals` log type).
 * Without a sink, messages up to NOTICE go to stderr.
 * @param fn the sink, or NULL for stderr
 * @param max_level messages above this level are not even formatted
 */
void ptl_set_log(ptl_log_fn fn, int max_level);

/** Counters of one NIC; snapshot with ptl_nic_stats_get(). */
struct ptl_nic_stats {
	/* matching */
	uint64_t match_priority;   /**< header matched a priority-list ME */
	uint64_t match_overflow;   /**< header matched an overflow-list ME */
	uint64_t drop_no_target;   /**< no client at pid or NI not initialized */
	uint64_t drop_bad_pt;      /**< pt_index out of range / not allocated */
	uint64_t drop_pt_disabled; /**< PT disabled (or flow control hit) */
	uint64_t drop_no_match;    /**< no ME matched in either list */
	uint64_t drop_perm;        /**< uid (access control) violation */
	uint64_t drop_op;          /**< ME does not allow the operation */
	uint64_t drop_uh_full;     /**< unexpected-header list full */
	uint64_t flowctrl;         /**< PTs disabled by flow control */
	uint64_t truncated;        /**< matched with mlength < rlength */
	uint64_t auto_unlink;      /**< MEs unlinked by use-once / min_free */
	uint64_t uh_stored;        /**< unexpected headers kept */
	uint64_t uh_claimed;       /**< ... claimed by a priority append */
	uint64_t uh_searched;      /**< ... found by PtlMESearch */
	/* events and counters */
	uint64_t eq_posted;
	uint64_t eq_dropped;       /**< events lost to a full EQ */
	uint64_t eq_bad;           /**< post to a freed / invalid EQ */
	uint64_t ct_updates;
	uint64_t ct_bad;           /**< update of a freed / invalid CT */
	uint64_t futex_wakes;
	/* host memory */
	uint64_t fast_bytes;       /**< copied inside the region */
	uint64_t slow_path_bytes;  /**< moved with process_vm_readv/writev */
	uint64_t slow_path_calls;
	uint64_t host_fault;       /**< range overflow or process_vm failure */
	uint64_t dead_client;      /**< access refused: client detached */
	/* control and commands */
	uint64_t ctrl_ok;
	uint64_t bad_ctrl;         /**< control requests rejected */
	uint64_t cmds;             /**< commands consumed */
	uint64_t bad_cmd;          /**< commands rejected */
	uint64_t cmd_ring_corrupt; /**< head - tail > entries */
	/* initiator operations */
	uint64_t ops_started;
	uint64_t ops_full;         /**< ptl_op_start refused: table full */
	uint64_t ops_unknown;      /**< ack/reply for an unknown msg id */
	uint64_t reply_oob;        /**< reply data past the get's length */
	/* clients */
	uint64_t attached;
	uint64_t detached;
	uint64_t bad_region;       /**< attach refused: bad region header */
	uint64_t inflight_dropped; /**< messages/ops dropped by a detach */
	/* gauges (now, not totals): leak checks at exit, all zero once
	 * every client detached and every reference went */
	uint64_t clients_live;     /**< client objects not yet freed */
	uint64_t regions_live;     /**< their regions (release not run) */
	uint64_t region_bytes;     /**< ... bytes of those regions */
	uint64_t mes_live;         /**< ME/LE slots in use, all clients */
	uint64_t drop_too_long;    /**< message over the target NI's
				        max_msg_size */
	/* triggered operations */
	uint64_t trig_armed;       /**< waiting on their CT */
	uint64_t trig_fired;       /**< threshold reached (at arm or later) */
	uint64_t trig_cancelled;   /**< cancelled, CT freed, NI or client gone */
	uint64_t trig_refused;     /**< arm refused: bad CT or command, full */
	uint64_t trig_retried;     /**< a fired one waited (busy lock, no room) */
	uint64_t trig_me_gone;     /**< ME_APPEND/ME_UNLINK found no such
				        entry (unlinked, consumed, NI gone) */
	/* Active Access (doc/NOTES.md "Active Access") */
	uint64_t aa_records;       /**< records written to access logs */
	uint64_t aa_lost;          /**< records lost: log full or stopped */
	uint64_t aa_blocked;       /**< page pieces refused (W=0 / R=0) */
	uint64_t aa_redirected;    /**< write pieces sent to a log only */
	uint64_t aa_log_err;       /**< logs stopped by an invalid cons */
	uint64_t aa_logs_live;     /**< gauge: access logs of live clients */
	uint64_t aa_flushes;       /**< active flushes answered */
	uint64_t aa_backpressure;  /**< put packets refused for a full log */
	uint64_t aa_handled;       /**< records consumed by access handlers */
	uint64_t aa_timer_wakes;   /**< log wakes after notify_us */
	/* persistent triggered operations (spin_trig_set_period) */
	uint64_t trig_rearmed;     /**< re-armed at threshold + period */
	uint64_t trig_rearm_ended; /**< not re-armed: threshold + period
				        past 2^64 - 1: it ended there
				        as a one-shot one would */
	uint64_t trig_deferred;    /**< firing or running waited: fired
				        FIFO full, or a run's budget spent
				        (persistent ones feeding themselves) */
	uint64_t trig_me_full;     /**< a persistent append's copy not
				        linked: no ME slot or list full */
	uint64_t flowctrl_owed;    /**< flow control hit for a full EQ that
				        only the events owed to messages
				        matched but not yet completed fill */
	/* Active Access back-pressure beyond put packets */
	uint64_t aa_atomic_waits;  /**< atomics parked for a full log
				        (not acknowledged, resent) */
	uint64_t aa_dma_waits;     /**< handler DMA records held on the NIC
				        for room in a back-pressuring log */
	uint64_t aa_dma_wait_lost; /**< handler DMA records lost: the
				        client's held bytes at their bound */
	uint64_t aa_get_waits;     /**< get requests parked: a refused get's
				        GET_BLOCKED records lacked room */
	/* Active Access fault logs (E = 0 pages) */
	uint64_t aa_faults;        /**< records put in clients' fault logs */
	uint64_t aa_faults_lost;   /**< ... lost: that fault log was full */
	uint64_t aa_faults_read;   /**< ... taken by their clients */
	/* Active Access IOTLB model (--aa-iotlb) */
	uint64_t aa_iotlb_hits;    /**< page translations found */
	uint64_t aa_iotlb_misses;  /**< ... missed: a page-table walk */
	uint64_t aa_iotlb_walk_reads; /**< the walks' table reads (levels
					   per miss: 4 below 2 MiB pages,
					   3 below 1 GiB, 2 at 1 GiB) */
	uint64_t aa_iotlb_inval;   /**< entries dropped by invalidations
				        (marks changed, client gone) */
};

/**
 * Fill a configuration with defaults for node nid (64 clients, 65536 ops,
 * 2 KiB payload, limits: 16384 entries, 4096 unexpected headers, 1024
 * MDs/CTs/EQs, pt index 63, max message 1 GiB).
 * @param conf_p filled
 * @param nid    node id
 */
void ptl_nic_conf_default(struct ptl_nic_conf *conf_p, uint32_t nid);

/**
 * Create the Portals state of one NIC.
 * @param conf  configuration (copied)
 * @param nic_p the NIC
 * @return 0, -EINVAL (zero max_clients/max_ops, limits negative),
 *         -ENOMEM
 */
int ptl_nic_create(const struct ptl_nic_conf *conf, struct ptl_nic **nic_p);

/**
 * Destroy a NIC: detaches every client first. No other thread may use it,
 * and every match, operation and client reference taken from it must have
 * been released.
 * @param nic the NIC (NULL is ignored)
 */
void ptl_nic_destroy(struct ptl_nic *nic);

/**
 * Node id of a NIC.
 * @param nic the NIC
 * @return its nid
 */
uint32_t ptl_nic_nid(const struct ptl_nic *nic);

/**
 * Snapshot the counters (relaxed reads).
 * @param nic     the NIC
 * @param stats_p filled
 */
void ptl_nic_stats_get(const struct ptl_nic *nic,
		       struct ptl_nic_stats *stats_p);

/**
 * Name of each field of struct ptl_nic_stats, in order, for printing
 * (the struct is an array of uint64_t).
 * @param i field index
 * @return its name, or NULL past the last field
 */
const char *ptl_nic_stats_name(unsigned i);

/**
 * Map a negative errno of this library to a Portals return code for a
 * control reply (-EINVAL -> PTL_ARG_INVALID, -ENOSPC/-ENOMEM ->
 * PTL_NO_SPACE, -EADDRINUSE -> PTL_PID_IN_USE, -EBUSY -> PTL_IN_USE, ...).
 * @param err 0 or -errno
 * @return SPINNIC_PTL_*
 */
int ptl_errno_to_status(int err);

/* ---------------------------------------------------------------------- */
/* Clients                                                                 */
/* ---------------------------------------------------------------------- */

/**
 * Attach a client: validate its region header (magic, version, hdr_size,
 * size equal to region_size, command ring offset/alignment/entries inside
 * the region, heap inside the region) and grant a physical pid.
 * The region must stay mapped until the release callback (see
 * ptl_client_set_release) has run.
 * @param nic         the NIC
 * @param region      the client's region, mapped shared by the caller
 * @param region_size its size (the fstat size)
 * @param base_va     where the client mapped it (its address space)
 * @param os_pid      the client's OS pid (process_vm_*)
 * @param uid         the client's uid (initiator uid on the wire)
 * @param want_pid    a Portals pid, or SPINNIC_PTL_PID_ANY for any free one
 * @param c_p         the client (one reference, dropped by detach)
 * @return 0, -EINVAL (NULL region, size too small, base_va range wraps),
 *         -EBADMSG (bad region header), -ERANGE (want_pid >= max_clients),
 *         -EADDRINUSE (want_pid taken), -ENOSPC (no free pid), -ENOMEM
 */
int ptl_client_attach(struct ptl_nic *nic, void *region, size_t region_size,
		      uint64_t base_va, pid_t os_pid, uid_t uid,
		      uint32_t want_pid, struct ptl_client **c_p);

/**
 * Set the callback run when the last reference to a detached client goes
 * (in-flight matches and operations hold references): the region can be
 * unmapped there. Runs on whichever thread drops the last reference.
 * @param c   the client
 * @param fn  callback (NULL: none)
 * @param arg its first argument
 */
void ptl_client_set_release(struct ptl_client *c,
			    void (*fn)(void *arg, void *region, size_t size),
			    void *arg);

/**
 * Detach a client: unlink every ME, free every object, cancel its
 * initiator operations (counted in inflight_dropped), free its pid. Data
 * path users holding a reference see the client as dead: their host
 * writes, events and CT updates are refused (-ESHUTDOWN) and counted.
 * Drops the attach reference: call once per attach.
 * @param nic the NIC
 * @param c   the client
 */
void ptl_client_detach(struct ptl_nic *nic, struct ptl_client *c);

/**
 * Take a reference on a client.
 * @param c the client
 */
void ptl_client_get(struct ptl_client *c);

/**
 * Drop a reference; the last one of a detached client frees it and runs
 * the release callback.
 * @param c the client (NULL is ignored)
 */
void ptl_client_put(struct ptl_client *c);

/**
 * Find a client by physical pid and take a reference on it.
 * @param nic the NIC
 * @param pid Portals pid
 * @return the client (release with ptl_client_put), or NULL
 */
struct ptl_client *ptl_client_lookup(struct ptl_nic *nic, uint32_t pid);

/**
 * @param c the client
 * @return its Portals physical id (nid, pid)
 */
struct spinnic_pid ptl_client_id(const struct ptl_client *c);

/**
 * @param c the client
 * @return its uid as given at attach
 */
uint32_t ptl_client_uid(const struct ptl_client *c);

/**
 * @param c the client
 * @return false once the client is detached
 */
bool ptl_client_alive(const struct ptl_client *c);

/**
 * Pointer to a region offset range, for records the client placed in its
 * region (handler arguments, NIC-memory sources).
 * @param c   the client
 * @param off region offset
 * @param len bytes
 * @return the pointer, or NULL when [off, off+len) is not inside the region
 */
void *ptl_client_region_ptr(struct ptl_client *c, uint64_t off, uint64_t len);

/* ---------------------------------------------------------------------- */
/* Control messages                                                        */
/* ---------------------------------------------------------------------- */

/**
 * Validate and apply one control request of a client: NI_INIT/FINI,
 * PT_ALLOC/FREE/ENABLE/DISABLE, EQ_ALLOC/FREE, CT_ALLOC/FREE,
 * MD_BIND/RELEASE, ME_APPEND/UNLINK/SEARCH. The reply is the request with
 * the reply fields and status filled (SPINNIC_PTL_*). For ME_APPEND the
 * ctx field is stored as is (the caller checks it first).
 * @param nic the NIC
 * @param c   the requesting client
 * @param req the request (already copied out of the socket)
 * @param rep the reply (may equal req)
 * @return 0 when handled (see rep->status), -EOPNOTSUPP for ATTACH,
 *         DETACH, CTX_*, NICMEM_* and BATCH (ptl_nic_ctrl_batch) (not
 *         handled here, rep untouched)
 */
int ptl_nic_ctrl(struct ptl_nic *nic, struct ptl_client *c,
		 const struct spinnic_ctrl_msg *req,
		 struct spinnic_ctrl_msg *rep);

/** Counters of ptl_nic_ctrl_batch(), added to. */
struct ptl_batch_stats {
	uint64_t recs;        /**< records read */
	uint64_t refused;     /**< the batch as a whole (offset, count) or a
				   record (version, op, reference) refused */
	uint64_t rollbacks;   /**< batches stopped by a failing record */
	uint64_t undo_failed; /**< rollback frees that failed */
};

/** Applies one record of a batch as ptl_nic_ctrl() would (the caller
 *  adds its own checks); @p rep starts as a copy of @p req. */
typedef void (*ptl_batch_run_fn)(void *arg,
				 const struct spinnic_ctrl_msg *req,
				 struct spinnic_ctrl_msg *rep);

/**
 * SPINNIC_CTRL_BATCH (spinnic_abi.h struct spinnic_ctrl_batch): the
 * records in the client's region, each copied out once, checked
 * (version, a batchable op, references to earlier records resolved from
 * this call's own results) and applied through @p run in order, its
 * reply written back over it; the first failing record stops the batch
 * and what the records before it created is destroyed again (through @p
 * run), last first.
 * @param c   the client (its region holds the records)
 * @param req the BATCH request
 * @param rep the reply: status, u.batch.failed, u.batch.done
 * @param run applies one record
 * @param arg its argument
 * @param st  counters, added to
 */
void ptl_nic_ctrl_batch(struct ptl_client *c,
			const struct spinnic_ctrl_msg *req,
			struct spinnic_ctrl_msg *rep, ptl_batch_run_fn run,
			void *arg, struct ptl_batch_stats *st);

/**
 * Whether any linked ME of the client names an execution context (for
 * lib/spin's CTX_FREE: PTL_IN_USE).
 * @param nic the NIC
 * @param c   the client
 * @param ctx context handle
 * @return true when in use
 */
bool ptl_nic_ctx_in_use(struct ptl_nic *nic, struct ptl_client *c,
			uint32_t ctx);

/* ---------------------------------------------------------------------- */
/* Matching (target side)                                                  */
/* ---------------------------------------------------------------------- */

/** Which list matched (struct ptl_match.list). */
#define PTL_MATCH_PRIORITY SPINNIC_PTL_PRIORITY_LIST
#define PTL_MATCH_OVERFLOW SPINNIC_PTL_OVERFLOW_LIST

/**
 * Result of matching a message header. Self-contained: the ME may be
 * unlinked or freed meanwhile. Holds a client reference until
 * ptl_match_complete() or ptl_match_release().
 */
struct ptl_match {
	struct ptl_client *c;    /**< target client (referenced) */
	uint32_t ni;             /**< NI handle */
	uint32_t me;             /**< ME handle (may be stale later) */
	uint32_t pt_index;
	uint32_t list;           /**< PTL_MATCH_PRIORITY / _OVERFLOW */
	uint32_t eq;             /**< the PT's EQ handle or NONE */
	uint32_t ct;             /**< the ME's CT handle or NONE */
	uint32_t ctx;            /**< the ME's execution context or NONE */
	uint32_t options;        /**< the ME's options */
	uint64_t user_ptr;       /**< the ME's user_ptr */
	uint64_t me_start;       /**< ME window, client address (an iovec
				      ME: its array's address) */
	struct ptl_iovs *iov;    /**< an iovec ME's entries (referenced
				      until complete/release), or NULL:
				      the window is [start, start+length) */
	uint64_t me_length;
	uint64_t local_offset;   /**< where the message lands in the ME */
	uint64_t start;          /**< me_start + local_offset */
	uint64_t length;         /**< me_length - local_offset (0 if past) */
	uint64_t rlength;        /**< requested bytes (msg_len) */
	uint64_t mlength;        /**< bytes delivered: min(rlength, length) */
	/* header copy for the target event */
	struct spinnic_pid initiator;
	uint32_t uid;
	uint64_t match_bits;
	uint64_t hdr_data;
	uint64_t remote_offset;
	uint64_t msg_id;
	uint8_t op;              /**< enum spinnic_wire_op */
	uint8_t ack_req;         /**< effective: NO_ACK_REQ when the ME has
				      ACK_DISABLE or the op is not a put */
	uint8_t unlinked;        /**< this message auto-unlinked the ME */
	uint8_t ni_fail;         /**< why a drop (ptl_nic_match < 0) */
	uint8_t atomic_op;       /**< atomics: for the target event */
	uint8_t atomic_type;
	uint8_t eq_owed;         /**< internal: EQ slots reserved for its
				      events (flow-controlled PT) */
	uint32_t me_slot;        /**< internal */
	uint32_t uh;             /**< internal: unexpected header slot + 1 */
	uint64_t t0_ns;          /**< internal: CLOCK_MONOTONIC at the match
				      (the first packet); the target event's
				      nic_ns counts from it */
	uint32_t nic_ns;         /**< set by ptl_match_complete: the NIC's
				      time for the message, as the event's
				      nic_ns (0: not timed) */
};

/**
 * Match a message header (DATA with HEADER flag, or GET request) against
 * the target's lists: target client by dst pid, NI by pkt->ni kind; PT
 * allocated and enabled; priority list then overflow list; match bits
 * under ignore bits, match_id, NO_TRUNCATE; then op permission and uid.
 * Use-once and min_free unlink; an overflow match keeps an unexpected
 * header; flow control disables the PT and posts PT_DISABLED.
 * @param nic the NIC
 * @param hdr the first packet of the message to arrive (any DATA packet or
 *   a GET request: every packet carries the header fields)
 * @param m_p filled; on failure only m_p->ni_fail is meaningful
 * @return 0 (matched; release with ptl_match_complete/ptl_match_release),
 *         -ESRCH (no such pid / NI: fail UNDELIVERABLE), -EINVAL (bad pt
 *         index / PT not allocated: fail DROPPED), -EAGAIN (PT disabled:
 *         fail PT_DISABLED), -ENOENT (no match: fail DROPPED),
 *         -EACCES (uid: PERM_VIOLATION), -EPERM (op: OP_VIOLATION),
 *         -ENOSPC (unexpected list full: DROPPED / PT_DISABLED),
 *         -EMSGSIZE (msg_len over the NI's max_msg_size: DROPPED)
 */
int ptl_nic_match(struct ptl_nic *nic, const struct spinnic_pkt *hdr,
		  struct ptl_match *m_p);

/**
 * The message of a match is finished (all data placed, or failed): post
 * the target event (PUT/GET/ATOMIC... to the PT's EQ unless disabled by
 * the ME options), update the ME's CT (EVENT_CT_COMM, CT_BYTES), post
 * AUTO_UNLINK after it when this message unlinked the ME, complete or
 * deliver the unexpected header, AUTO_FREE when the ME's last user goes,
 * and drop the client reference. Nothing is posted for a detached client
 * (counted in inflight_dropped).
 * @param nic     the NIC
 * @param mt       the match (its client reference is dropped; mt->c NULL)
 * @param ni_fail SPINNIC_PTL_NI_OK or a failure
 */
void ptl_match_complete(struct ptl_nic *nic, struct ptl_match *mt,
			uint8_t ni_fail);

/**
 * Read or write [off, off + len) of a match's data, off from the start of
 * the message in the ME (mt->start): through the entries of an iovec ME
 * (ptl_iov_access at local_offset + off), else at mt->start + off.
 * @param mt    the match (holds the client and the entries)
 * @param off   offset in the message
 * @param buf   NIC-side bytes
 * @param len   bytes
 * @param write true: buf to client memory
 * @return 0, or as ptl_iov_access / ptl_host_read / ptl_host_write
 */
int ptl_match_access(const struct ptl_match *mt, uint64_t off, void *buf,
		     uint64_t len, bool write);

/* ---- Active Access (aa_host.c; doc/NOTES.md "Active Access") ---- */

/** Who makes a remote access, for its log records. */
struct ptl_aa_src {
	uint32_t nid, pid;  /**< initiator (~0 for a handler's DMA) */
	uint64_t msg_id;
	uint64_t msg_off;   /**< ptl_host_access_remote: offset of addr in
				 the message */
	uint64_t hdr_data;
	bool handler;       /**< an sPIN handler's DMA */
	bool may_block;     /**< internal: a put packet, refused whole when a
				 back-pressuring log lacks room */
	bool fetch;         /**< internal: a fetching atomic */
	bool defer;         /**< a handler's DMA (ptl_host_access_remote):
				 records a full back-pressuring log cannot
				 take are held on the NIC until it can */
};

/**
 * ptl_match_access for an access on behalf of the remote initiator (a put
 * packet's payload, a get reply's first read): the target client's page
 * marks apply and accesses to logged pages are recorded. A client with no
 * marks: exactly ptl_match_access. Call it once per packet, after
 * duplicates were dropped (a retransmission re-reads with
 * ptl_host_read, not this).
 * @return 0; -EPERM a page piece was refused (memory untouched there, the
 *   rest done: PTL_NI_PERM_VIOLATION); -ENOSPC a redirected piece was
 *   lost to a full log (PTL_NI_DROPPED); -EAGAIN a log without
 *   SPINNIC_AA_LOG_DROP lacks room for the records (of every entry, in an
 *   iovec ME): nothing was done, the packet must come again (a put) or be
 *   read again later (a reply); as ptl_match_access
 */
int ptl_match_access_remote(const struct ptl_match *mt, uint64_t off,
			    void *buf, uint64_t len, bool write);

/**
 * Check the first len bytes of a match before a get's reply or an
 * atomic: refused page pieces are recorded (GET_BLOCKED / PUT_BLOCKED)
 * and, for atomics (write true), logged pages get an ATOMIC record;
 * an atomic to a redirecting page (W=0, WLD=1) is refused.
 * @param write true for an atomic, false for a get
 * @param fetch a fetching atomic (it reads as well)
 * @return 0, -EPERM (refused: nothing may happen); -EAGAIN a log without
 *   SPINNIC_AA_LOG_DROP lacks room for the records (ATOMIC, or BLOCKED of
 *   a refused access): nothing was recorded, the request must come
 *   again; -EFAULT a wrapping range
 */
int ptl_match_check_remote(const struct ptl_match *mt, uint64_t len,
			   bool write, bool fetch);

/**
 * ptl_host_write/read for a remote access not tied to a match (an sPIN
 * handler's DMA): marks apply as in ptl_match_access_remote; it is never
 * refused for room. With s->defer, the records that a full
 * back-pressuring log cannot take (or that would pass records it already
 * holds) are held on the NIC, in order, and appended as the consumer
 * makes room (ptl_aa_poll, and every later access of the client); past
 * PTL_AA_BACKLOG_MAX bytes held per client they are lost and counted
 * (aa_dma_wait_lost). Meanwhile ptl_aa_backlogged() is true and the
 * client's later put packets, atomics and gets with records for such a
 * log are refused (-EAGAIN), so the senders are slowed. With
 * s->may_block instead (an access that can come again), the access is
 * refused whole (-EAGAIN) when the records do not fit.
 * @return as ptl_match_access_remote
 */
int ptl_host_access_remote(struct ptl_client *c, uint64_t addr, void *buf,
			   uint64_t len, bool write,
			   const struct ptl_aa_src *s);

/**
 * A get's active flush (SPINNIC_AA_FLUSH): when the first len bytes of the
 * match hold a flushing page, note its log and the log's write position
 * now (every earlier packet of the initiator has arrived: in-order
 * matching), to answer once the consumer got there.
 * @param log_p, mark_p filled when it does
 * @return true when the get is a flush
 */
bool ptl_match_flush_mark(const struct ptl_match *mt, uint64_t len,
			  uint32_t *log_p, uint64_t *mark_p);

/**
 * @param mark_p as ptl_match_flush_mark filled it; when the log held
 *   handler records then, it names the last of them, and becomes the
 *   ring position once that one is appended
 * @return true when the log's consumer reached the mark (or the log is
 *   gone or stopped: nothing more will come); counted in aa_flushes then
 */
bool ptl_aa_flush_done(struct ptl_client *c, uint32_t log, uint64_t *mark_p);

/**
 * @return true while handler records wait on the NIC for room in one of
 *   the client's logs: the receiver refuses the client's sPIN packets
 *   (not acknowledged, so resent) until they are in (read without lock)
 */
bool ptl_aa_backlogged(const struct ptl_client *c);

/**
 * @return a count that grows each time a log's held handler records go
 *   to none (appended or dropped): a caller waiting for some client's
 *   ptl_aa_backlogged() to turn false need look again only when it moved
 */
uint64_t ptl_aa_unheld(const struct ptl_nic *nic);

/**
 * Run one Active Access record on the NIC: the access handler of context
 * @p ctx of client @p c over window [win_addr, +win_len). @p rec was
 * copied out of the ring and checked; @p data holds rec->len bytes.
 * @return the handler's SPIN_* code, or a negative errno (context gone)
 */
typedef int (*ptl_aa_access_fn)(void *arg, struct ptl_client *c,
				uint32_t ctx, uint64_t win_addr,
				uint64_t win_len,
				const struct spinnic_aa_rec *rec,
				const void *data);

/**
 * The NIC's own service of access logs, called by the HPU threads each
 * round: wakes the sleepers of logs whose notify_us passed since their
 * first record not woken for, and consumes up to @p budget records of
 * logs bound to an execution context, in log order, calling @p fn for
 * each (the consumer index advances once it returned), then appends the
 * held handler records the rings have room for. Callers run at once: a
 * log is consumed by one of them at a time (the others pass it by), so
 * each log's records run in order and several logs in parallel; no
 * client with such logs: one load.
 * @param nic the NIC
 * @param fn  runs a record (NULL: only the timers)
 * @param arg passed to fn
 * @param budget most records consumed
 * @return records consumed plus wakes done
 */
unsigned ptl_aa_poll(struct ptl_nic *nic, ptl_aa_access_fn fn, void *arg,
		     unsigned budget);

/**
 * Whether @p c has Active Access marks at all: its remote accesses then
 * go through ptl_match_access_remote one by one, never a shortcut that
 * writes or reads its memory otherwise (batched writes, a kept self-get).
 */
bool ptl_aa_active(const struct ptl_client *c);

/**
 * @return true when [addr, addr + len) holds a marked page (direct
 *   pointers must not be handed out over it)
 */
bool ptl_host_marked(struct ptl_client *c, uint64_t addr, uint64_t len);

/**
 * ptl_host_atomic on a match's data: on an iovec ME entry by entry, every
 * element within one entry (one that straddles two is refused before
 * anything is applied).
 * @return 0, -EINVAL (an element straddles entries; pair, len), -ERANGE
 *         (past the entries), or as ptl_host_atomic
 */
int ptl_match_atomic(const struct ptl_match *mt, unsigned op, unsigned type,
		     const void *operand, const void *compare, uint64_t len,
		     void *fetch_out);

/**
 * Abandon a match without any event (message dropped midway, e.g. timed
 * out); counted in inflight_dropped. Drops the references.
 * @param nic the NIC
 * @param mt   the match
 */
void ptl_match_release(struct ptl_nic *nic, struct ptl_match *mt);

/* ---------------------------------------------------------------------- */
/* Events and counters in the region                                       */
/* ---------------------------------------------------------------------- */

/**
 * Post an event to a client's EQ. Several threads may post to one EQ.
 * A full EQ drops the event and bumps the EQ's dropped counter (the
 * client reports PTL_EQ_DROPPED); nothing else is touched. Wakes waiters
 * (FUTEX_WAKE, shared).
 * @param c  the client
 * @param eq EQ handle (SPINNIC_HANDLE_NONE: nothing, returns 0)
 * @param ev the event; its seq field is set here
 * @return 0, -ENOBUFS (EQ full: dropped), -EBADF (invalid/freed handle),
 *         -ESHUTDOWN (client detached)
 */
int ptl_eq_post(struct ptl_client *c, uint32_t eq,
		const struct spinnic_event *ev);

/**
 * Add to a client's counting event (atomically) and wake waiters.
 * @param c       the client
 * @param ct      CT handle (SPINNIC_HANDLE_NONE: nothing, returns 0)
 * @param success added to success
 * @param failure added to failure
 * @return 0, -EBADF, -ESHUTDOWN
 */
int ptl_ct_inc(struct ptl_client *c, uint32_t ct, uint64_t success,
	       uint64_t failure);

/**
 * Set a client's counting event and wake waiters.
 * @return 0, -EBADF, -ESHUTDOWN (as ptl_ct_inc)
 */
int ptl_ct_set(struct ptl_client *c, uint32_t ct, uint64_t success,
	       uint64_t failure);

/* ---------------------------------------------------------------------- */
/* Host memory (the NIC's IOMMU, DESIGN §4)                                */
/* ---------------------------------------------------------------------- */

/** One piece of a batched host access. */
struct ptl_host_iov {
	uint64_t addr;  /**< client address */
	void *buf;      /**< NIC-side buffer (source of a write, destination
			     of a read) */
	size_t len;
};

/**
 * Write into client memory: inside the region by memcpy, elsewhere with
 * process_vm_writev on the client's pid (slow path, counted).
 * @param c    the client
 * @param addr client address
 * @param src  bytes
 * @param len  count
 * @return 0, -EFAULT (range wraps, or the kernel refused / wrote less),
 *         -ESHUTDOWN (client detached)
 */
int ptl_host_write(struct ptl_client *c, uint64_t addr, const void *src,
		   size_t len);

/**
 * Apply an atomic operation to client memory, element by element
 * (lib/portals/atomic.c): in the client's region on the memory itself,
 * atomic against every concurrent Portals atomic and, for aligned
 * integers, float and double, against the host's own atomics; elsewhere
 * (malloc'd memory) read, applied and written back under one process-wide
 * lock: atomic against every other Portals atomic, not against the host
 * process's own accesses meanwhile (doc/NOTES.md "NIC atomics").
 * @param op, type  SPINNIC_PTL_* operation and datatype, a valid pair
 * @param operand   the initiator's values (len bytes)
 * @param compare   CSWAP*: the compare value, MSWAP: the mask (one
 *                  element), else NULL
 * @param fetch_out receives the old values (len bytes), or NULL
 * @return 0, -EINVAL (pair, len; outside the region: more than one
 *         packet's payload), -EFAULT / -ESHUTDOWN as ptl_host_write
 */
int ptl_host_atomic(struct ptl_client *c, uint64_t addr, unsigned op,
		    unsigned type, const void *operand, const void *compare,
		    size_t len, void *fetch_out);
/** Bytes of one element of datatype @p type (0: not a datatype). */
size_t ptl_atomic_type_size(unsigned int type);

/**
 * Read client memory (see ptl_host_write).
 * @return 0, -EFAULT, -ESHUTDOWN
 */
int ptl_host_read(struct ptl_client *c, uint64_t addr, void *dst, size_t len);

/**
 * Batched write: region pieces copied, the others moved with as few
 * process_vm_writev calls as possible.
 * @param c   the client
 * @param iov pieces
 * @param n   count
 * @return 0, -EFAULT, -ESHUTDOWN
 */
int ptl_host_writev(struct ptl_client *c, const struct ptl_host_iov *iov,
		    unsigned n);

/**
 * Batched read (see ptl_host_writev).
 * @return 0, -EFAULT, -ESHUTDOWN
 */
int ptl_host_readv(struct ptl_client *c, const struct ptl_host_iov *iov,
		   unsigned n);

/** One entry of an iovec MD or ME, as the NIC keeps it. */
struct ptl_iov_ent {
	uint64_t addr;  /**< client address (any: checked at each access) */
	uint64_t len;
};

/**
 * The entries of an iovec MD or ME, copied out of client memory once at
 * bind/append (later changes to the client's array do not matter).
 * Reference counted: the MD or ME holds one, each access in flight one.
 */
struct ptl_iovs {
	uint32_t refs;          /**< atomic */
	uint32_t n;
	uint64_t total;         /**< summed length: the MD's/ME's length */
	struct ptl_iov_ent ent[];
};

/** Most entries of an iovec MD or ME (the limits' max_iovecs). */
#define PTL_MAX_IOVECS 256

/**
 * Copy an iovec array (@p count ptl_iovec_t of {addr, len}, 16 bytes each)
 * out of client memory at @p addr and check every entry: no wrap, the sum
 * within INT64_MAX. Entries are not checked against the client's memory
 * here: an unreachable one fails when it is used (PTL_NI_SEGV).
 * @param c      the client
 * @param addr   client address of the array
 * @param count  entries
 * @param max    the NI's max_iovecs
 * @param iovs_p the new set (one reference), release with ptl_iovs_put
 * @return 0, -EINVAL (count 0 or over max, an entry wraps, sum too big),
 *         -EFAULT / -ESHUTDOWN (the array cannot be read), -ENOMEM
 */
int ptl_iovs_load(struct ptl_client *c, uint64_t addr, uint64_t count,
		  uint32_t max, struct ptl_iovs **iovs_p);

/** Take a reference on @p v (NULL: nothing). */
void ptl_iovs_get(struct ptl_iovs *v);

/** Drop a reference on @p v, freeing it with the last (NULL: nothing). */
void ptl_iovs_put(struct ptl_iovs *v);

/**
 * Read or write [off, off + len) of the logical byte space of an iovec MD
 * or ME: translated into (addr, len) pieces of the entries (zero-length
 * entries skipped) and moved with ptl_host_readv/writev. The one
 * translation of every iovec data path.
 * @param c     the client
 * @param iov   entries
 * @param n     count
 * @param off   logical offset
 * @param buf   NIC-side bytes (source of a write, destination of a read)
 * @param len   bytes
 * @param write true: buf to client memory
 * @return 0, -ERANGE (past the end of the entries), -EFAULT / -ESHUTDOWN
 *         as ptl_host_read/write
 */
int ptl_iov_access(struct ptl_client *c, const struct ptl_iov_ent *iov,
		   unsigned n, uint64_t off, void *buf, uint64_t len,
		   bool write);

/**
 * Access [off, off + len) of the logical bytes of iovec MD @p md (a
 * handle of client @p c) through ptl_iov_access on its entries, a
 * reference held for the access (takes nic->lock: the caller must not
 * hold it). An MD without PTL_IOVEC is the caller's: start + off.
 * @return 0, -EBADF (the MD was released meanwhile, or is not an iovec
 *         MD), or as ptl_iov_access
 */
int ptl_md_access(struct ptl_client *c, uint32_t md, uint64_t off,
		  void *buf, uint64_t len, bool write);

/**
 * Direct pointer to client memory when [addr, addr+len) lies inside the
 * region (fast path for handlers); no counting.
 * @param c    the client
 * @param addr client address
 * @param len  bytes
 * @return the NIC-side pointer, or NULL (outside the region, wraps, or
 *         the client is detached)
 */
void *ptl_host_ptr(struct ptl_client *c, uint64_t addr, size_t len);

/* ---------------------------------------------------------------------- */
/* Command ring (initiator side)                                           */
/* ---------------------------------------------------------------------- */

/** A validated PUT or GET command, resolved for the outbound engine. */
struct ptl_cmd {
	uint16_t op;            /**< SPINNIC_CMD_PUT / SPINNIC_CMD_GET */
	uint8_t ack_req;        /**< PUT: SPINNIC_PTL_*_ACK_REQ */
	uint8_t ni_kind;        /**< SPINNIC_WIRE_NI_* bits of the NI */
	uint32_t ni;            /**< NI handle */
	uint32_t md;            /**< MD handle */
	uint32_t md_options;
	uint32_t eq, ct;        /**< the MD's EQ and CT (or NONE) */
	uint64_t local_addr;    /**< client address: MD start + local_offset
				     (an iovec MD: its array's address;
				     data through ptl_md_access at
				     local_offset) */
	uint64_t local_offset;
	uint64_t length;
	struct spinnic_pid target;
	uint32_t pt_index;
	uint32_t uid;           /**< the client's uid */
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t user_ptr;
	uint64_t hdr_data;
	/* SPUT_START / SPUT_STREAM / PROCESS_PUT (see spinnic_cmd) */
	uint16_t flags;         /**< SPINNIC_CMD_F_EOM */
	uint32_t stream;
	uint64_t msg_length;    /**< SPUT_START: declared message length */
	uint32_t blob, blob_len;
	uint64_t count;
	uint64_t md_start;      /**< the MD's client address and bytes */
	uint64_t md_length;
	/* ATOMIC / FETCH_ATOMIC / SWAP */
	uint8_t atomic_op;      /**< SPINNIC_PTL_MIN .. SPINNIC_PTL_MSWAP */
	uint8_t atomic_type;    /**< SPINNIC_PTL_INT8_T .. */
	uint8_t operand_len;    /**< SWAP: bytes of operand sent first (the
				     CSWAP* compare value, MSWAP's mask) */
	uint8_t operand[SPINNIC_ATOMIC_OPERAND]; /**< ... and an inline
						      PUT's payload */
	/* FETCH_ATOMIC / SWAP: where the old values go, and its events */
	uint32_t get_md;
	uint32_t get_md_options;
	uint32_t get_eq, get_ct;
	uint64_t get_addr;      /**< client address: get MD start + offset
				     (an iovec get MD: as local_addr) */
	uint64_t get_offset;
};

/** Whether a command is a streamed or processed put's (SPUT_START,
 *  SPUT_STREAM, PROCESS_PUT). */
static inline bool
ptl_cmd_sput(uint16_t op)
{
	return op == SPINNIC_CMD_SPUT_START || op == SPINNIC_CMD_SPUT_STREAM ||
	       op == SPINNIC_CMD_PROCESS_PUT;
}

/** Whether a command is an atomic (ATOMIC, FETCH_ATOMIC or SWAP). */
static inline bool
ptl_cmd_atomic(uint16_t op)
{
	return op == SPINNIC_CMD_ATOMIC || op == SPINNIC_CMD_FETCH_ATOMIC ||
	       op == SPINNIC_CMD_SWAP;
}

/** Whether a command's old values come back (FETCH_ATOMIC, SWAP). */
static inline bool
ptl_cmd_fetches(uint16_t op)
{
	return op == SPINNIC_CMD_FETCH_ATOMIC || op == SPINNIC_CMD_SWAP;
}

/**
 * Consume up to n commands from a client's ring: each is copied out of
 * the ring before it is checked (op, NI and MD handles, local_offset +
 * length within the MD, target, pt_index, ack_req, length). PUT/GET come
 * back resolved; CT_SET/CT_INC are applied here (and fire what the new
 * value releases); NOP is skipped. An
 * invalid command is counted (bad_cmd) and, when its MD is valid and has
 * an EQ, becomes a failure event there: SEND for a put, REPLY for a get,
 * ni_fail_type SEGV (offset/length outside the MD or over max_msg_size)
 * or OP_VIOLATION (anything else). The tail is advanced with a release
 * store. Single consumer per client.
 *
 * SPUT_START, SPUT_STREAM and PROCESS_PUT come back resolved like a PUT
 * (their failure event is SEND): a stream piece [local_offset, +length)
 * must lie in its MD, SPUT_START's declared msg_length must hold its first
 * piece and respect max_msg_size, stream < SPINNIC_SPUT_MAX, flags only
 * SPINNIC_CMD_F_EOM on SPUT_STREAM; PROCESS_PUT needs local_offset within
 * the MD, 0 < blob_len <= SPINNIC_PROC_BLOB_MAX and length <= max_msg_size
 * (the type itself is checked by the outbound engine, which loads it).
 *
 * TRIG takes two slots (the second: the operation, NOP if the client
 * published only the first) and arms a triggered operation (trig.c):
 * refused (trig_refused, counted in the ring's trig_done) when the CT is
 * not valid, the operation may not wait (NOP, streams, TRIG, CT_CHECK,
 * CT_CANCEL_TRIG), names another NI, or max_triggered_ops are pending.
 * CT_CHECK fires what a CT the client changed itself releases;
 * CT_CANCEL_TRIG destroys the CT's pending operations. What fired and
 * waited is run first (ptl_trig_run).
 * @param c   the client
 * @param out room for n commands
 * @param n   count
 * @return number of commands written to out
 */
unsigned ptl_cmd_poll(struct ptl_client *c, struct ptl_cmd *out, unsigned n);

/* ---------------------------------------------------------------------- */
/* Triggered operations (trig.c; doc/NOTES.md "Triggered operations")      */
/* ---------------------------------------------------------------------- */

/**
 * Where a fired triggered data operation goes: the application starts it
 * as an operation of the NIC's own (spinnic: eng_submit). Called from any
 * thread that updates a counter (data-path lcores, HPUs, the control
 * thread), never with a lib/portals lock held by the call chain of the
 * trigger itself; must be MP-safe and must not block.
 * @param arg the argument given to ptl_nic_set_originate()
 * @param c   the client (the callee takes its own reference)
 * @param cmd the operation, resolved against the MD as it is now
 * @return 0, -ENOBUFS (no room now: the NIC offers it again later), or
 *   another negative errno (it fails: SEND or REPLY event with
 *   PTL_NI_UNDELIVERABLE)
 */
typedef int (*ptl_originate_fn)(void *arg, struct ptl_client *c,
				const struct ptl_cmd *cmd);

/**
 * Set the NIC's originate hook, before any data-path thread runs (or NULL,
 * after they stopped). Without one, a fired data operation fails.
 * @param nic the NIC
 * @param fn  the hook, or NULL
 * @param arg its argument
 */
void ptl_nic_set_originate(struct ptl_nic *nic, ptl_originate_fn fn,
			   void *arg);

/**
 * Run what has fired for client @p c and is still waiting (a busy lock or
 * a full submit queue made it wait). ptl_cmd_poll() calls it; any thread.
 * @param c the client
 */
void ptl_trig_run(struct ptl_client *c);

/* ---------------------------------------------------------------------- */
/* Initiator operations: acks, replies, SEND/ACK/REPLY events              */
/* ---------------------------------------------------------------------- */

/**
 * Record an operation about to be sent and give it a message id, unique
 * on this node. Takes a client reference until the operation ends.
 * @param c        the initiating client
 * @param cmd      the validated command
 * @param msg_id_p its message id
 * @return 0, -ENOSPC (table full: retry later), -ESHUTDOWN
 */
int ptl_op_start(struct ptl_client *c, const struct ptl_cmd *cmd,
		 uint64_t *msg_id_p);

/**
 * The last packet of an operation left (or sending failed): PUT posts
 * SEND (+CT with MD_EVENT_CT_SEND) and ends unless an ack is awaited; an
 * ack that came first is delivered after the SEND. GET: nothing posted
 * on success; a failure ends it with a REPLY event carrying ni_fail.
 * @param nic     the NIC
 * @param msg_id  the operation
 * @param ni_fail SPINNIC_PTL_NI_OK or why sending failed
 * @return 0, -ENOENT (unknown id)
 */
int ptl_op_sent(struct ptl_nic *nic, uint64_t msg_id, uint8_t ni_fail);

/**
 * A peer is given up (reliable delivery timed out): every operation whose
 * target is @p nid ends with @p ni_fail — SEND for a put not yet sent, ACK
 * for one awaiting its ack, REPLY for a get.
 * @return operations failed
 */
unsigned ptl_op_fail_target(struct ptl_nic *nic, uint32_t nid,
			    uint8_t ni_fail);

/**
 * The distinct target nids of the operations outstanding now.
 * @param nids room for @p max
 * @return nids written (at most @p max)
 */
unsigned ptl_op_targets(struct ptl_nic *nic, uint32_t *nids, unsigned max);

/**
 * An ACK (or NACK) for a put or atomic arrived: post ACK (+CT with
 * MD_EVENT_CT_ACK) and end the operation.
 * @param nic     the NIC
 * @param msg_id  the put's id
 * @param ni_fail from the ack
 * @param mlength bytes the target took
 * @param list    SPINNIC_PTL_PRIORITY_LIST / _OVERFLOW_LIST: where the
 *                put landed (the ACK event's ptl_list)
 * @return 0, -ENOENT (unknown id, or not a put awaiting an ack)
 */
int ptl_op_ack(struct ptl_nic *nic, uint64_t msg_id, uint8_t ni_fail,
	       uint64_t mlength, uint8_t list);

/**
 * Where reply data of a get goes: checks [offset, offset+len) against the
 * get's length and returns the client address to write, with a client
 * reference (ptl_client_put it after writing).
 * @param nic    the NIC
 * @param msg_id the get's id
 * @param offset offset in the reply
 * @param len    bytes
 * @param c_p    the initiating client (referenced)
 * @param addr_p client address for ptl_host_write
 * @return 0, -ENOENT (unknown id / not a get), -ERANGE (past the get)
 */
int ptl_op_reply(struct ptl_nic *nic, uint64_t msg_id, uint64_t offset,
		 uint64_t len, struct ptl_client **c_p, uint64_t *addr_p);

/**
 * Place reply data of a get into its MD (the get MD of a fetching
 * atomic): ptl_op_reply, then the write, through the MD's entries when it
 * is an iovec MD (ptl_md_access).
 * @param nic    the NIC
 * @param msg_id the get's id
 * @param offset offset in the reply
 * @param src    the bytes
 * @param len    count
 * @return 0, -ENOENT, -ERANGE (as ptl_op_reply), -EFAULT / -ESHUTDOWN /
 *         -EBADF (the write: ptl_host_write, ptl_md_access)
 */
int ptl_op_reply_write(struct ptl_nic *nic, uint64_t msg_id, uint64_t offset,
		       const void *src, uint64_t len);

/**
 * All reply data of a get arrived (or it failed): post REPLY (+CT with
 * MD_EVENT_CT_REPLY) and end the operation.
 * @param nic     the NIC
 * @param msg_id  the get's id
 * @param ni_fail result
 * @param mlength bytes received
 * @return 0, -ENOENT
 */
int ptl_op_reply_done(struct ptl_nic *nic, uint64_t msg_id, uint8_t ni_fail,
		      uint64_t mlength);

/** What the engines may need to (re)send an operation. */
struct ptl_op_info {
	uint16_t op;            /**< SPINNIC_CMD_PUT / GET */
	uint8_t ack_req;
	uint8_t ni_kind;
	struct spinnic_pid initiator;
	struct spinnic_pid target;
	uint32_t pt_index;
	uint32_t uid;
	uint64_t local_addr;
	uint64_t length;
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t hdr_data;
};

/**
 * Look up an outstanding operation (e.g. to retransmit from host memory).
 * @param nic    the NIC
 * @param msg_id its id
 * @param info_p filled
 * @param c_p    if not NULL: the initiating client, referenced
 * @return 0, -ENOENT
 */
int ptl_op_lookup(struct ptl_nic *nic, uint64_t msg_id,
		  struct ptl_op_info *info_p, struct ptl_client **c_p);

/* ---------------------------------------------------------------------- */
/* Monitoring (dump.c): read-only copies, under the NIC lock                */
/* ---------------------------------------------------------------------- */

/** Summary of one attached client (ptl_client_info_get). */
struct ptl_client_info {
	uint32_t pid;              /**< Portals physical pid */
	int32_t os_pid;            /**< OS pid given at attach */
	uint32_t uid;
	uint32_t nis;              /**< NIs initialized */
	uint32_t ni_mask;          /**< bit per SPINNIC_WIRE_NI_* kind */
	uint32_t pts;              /**< portal table entries allocated */
	uint32_t mes;              /**< linked MEs/LEs, both lists */
	uint32_t mes_priority, mes_overflow;
	uint32_t uhs;              /**< unexpected headers kept */
	uint32_t eqs, cts, mds;    /**< allocated objects */
	uint64_t region_size;
	/** status registers (PtlNIStatus), summed over the NIs */
	uint64_t drop_count, perm_violations, op_violations;
};

/**
 * Summarize the client at physical pid @p pid: its NIs and how many
 * objects each holds. Takes the NIC lock; the scan is bounded by the NI
 * limits (PTs, EQs, CTs, MDs).
 * @param nic    the NIC
 * @param pid    Portals pid
 * @param info_p filled
 * @return 0, -ERANGE (pid >= max_clients), -ENOENT (no client there)
 */
int ptl_client_info_get(struct ptl_nic *nic, uint32_t pid,
			struct ptl_client_info *info_p);

/** Active Access state of one client (ptl_client_aa_dump). */
struct ptl_aa_client_info {
	uint32_t ranges;           /**< marked ranges in its page table */
	uint64_t marked_bytes;     /**< bytes those ranges cover */
	uint32_t logs;             /**< live access logs */
	uint64_t faults;           /**< fault log records logged (E = 0) */
	uint64_t fault_lost;       /**< ... lost (fault log full) */
	uint32_t fault_held;       /**< ... held, not yet read */
};

/** One access log of a client (ptl_client_aa_dump). */
struct ptl_aa_log_info {
	uint32_t handle;           /**< the log's handle */
	bool drop;                 /**< SPINNIC_AA_LOG_DROP: full drops */
	bool served;               /**< consumed on the NIC (access handler) */
	bool err;                  /**< stopped: invalid cons or ring */
	bool cons_ok;              /**< cons read was consistent with prod */
	uint32_t ctx;              /**< served: the execution context */
	uint32_t notify_every;
	uint64_t notify_us;
	uint64_t size;             /**< ring bytes */
	uint64_t prod;             /**< bytes written (records and PADs) */
	uint64_t cons;             /**< the consumer's index, as read */
	uint64_t records;          /**< records written */
	uint64_t lost;             /**< records lost (full, stopped) */
	uint64_t held;             /**< handler records held on the NIC for
					room (not in the ring yet) */
};

/**
 * The Active Access state of the client at physical pid @p pid: its page
 * table's size and its live logs (the consumer index read once from the
 * ring, as the NIC reads it). Takes the NIC lock, then the client's AA
 * lock.
 * @param ci_p   filled
 * @param out    up to @p max logs, in slot order
 * @param n_p    the logs written to out
 * @return 0, -ERANGE (pid >= max_clients), -ENOENT (no client there)
 */
int ptl_client_aa_dump(struct ptl_nic *nic, uint32_t pid,
		       struct ptl_aa_client_info *ci_p,
		       struct ptl_aa_log_info *out, unsigned max,
		       unsigned *n_p);

/** One linked ME or LE (ptl_client_me_dump). */
struct ptl_me_info {
	uint32_t handle;           /**< ME handle */
	uint32_t ni_kind;          /**< SPINNIC_WIRE_NI_* bits of its NI */
	uint32_t pt_index;
	uint32_t list;             /**< PTL_MATCH_PRIORITY / _OVERFLOW */
	uint32_t options;          /**< SPINNIC_PTL_ME_* */
	uint32_t ctx;              /**< execution context or NONE */
	uint32_t ct;               /**< CT handle or NONE */
	uint32_t uid;              /**< allowed uid (SPINNIC_PTL_UID_ANY) */
	struct spinnic_pid match_id;
	uint64_t match_bits, ignore_bits;
	uint64_t start, length;    /**< client address and bytes */
	uint64_t offset;           /**< locally managed offset */
	uint64_t min_free;
	uint32_t inflight;         /**< messages being delivered into it */
};

/**
 * Copy the linked MEs/LEs of the client at pid @p pid, NI by NI, PT by
 * PT, priority list then overflow list, each in list order; skip the
 * first @p first of them and copy at most @p max. Takes the NIC lock.
 * @param nic     the NIC
 * @param pid     Portals pid
 * @param first   entries to skip (paging)
 * @param out     room for @p max entries
 * @param max     room
 * @param total_p if not NULL: how many are linked in all
 * @return entries copied (>= 0), -ERANGE (pid >= max_clients), -ENOENT
 *   (no client there)
 */
int ptl_client_me_dump(struct ptl_nic *nic, uint32_t pid, unsigned first,
		       struct ptl_me_info *out, unsigned max,
		       unsigned *total_p);

#endif
