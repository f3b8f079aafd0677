/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_rt.h
 * The sPIN runtime of one NIC (DESIGN §6), as the emulator uses it: NIC
 * memory, execution contexts, messages and their Handler Execution
 * Requests (HERs), HPU scheduling (default and blocked-RR with vHPUs).
 *
 * Threads (none of these calls blocks; locks are short spinlocks):
 *  - control path (one thread): spin_ctx_install/create/free,
 *    spin_nicmem_*, spin_owner_detach;
 *  - inbound engine: spin_msg_start, spin_msg_packet, spin_msg_abort; one
 *    thread per message (the one that started it);
 *  - HPUs: spin_hpu_poll(rt, hpu, ...) from any thread, several HPU ids
 *    concurrently, but one id from one thread at a time. Handlers and the
 *    host ops they reach (dma_*, direct, ct_inc, put_*), pkt_release and
 *    msg_done run on these threads only, inside spin_hpu_poll() (never
 *    inside spin_msg_start/packet/abort; spin_rt_destroy releases queued
 *    packets on its caller's thread);
 *  - spin_ctx_get/put: any thread;
 *  - outbound engine: spin_out_submit, spin_out_submit_burst,
 *    spin_out_done_burst, one thread (the submitter drains). The jobs
 *    run on the HPUs, inside spin_hpu_poll().
 *
 * Message life cycle. The inbound engine matches the first packet of a
 * message to arrive (any packet: every packet carries the header fields),
 * then calls spin_msg_start() with the ME's host window and the context
 * handle, and spin_msg_packet() for that packet and every later one, in
 * any order. The runtime runs the header handler first, then payload
 * handlers (in parallel or per blocked-RR), then, once exactly
 * info->length payload bytes were delivered, every payload handler
 * returned and every DMA finished, the completion handler, then calls
 * ops->msg_done(app_msg, result) on an HPU thread. After msg_done the
 * message is gone: the runtime never touches app_msg, host or the window
 * again. The caller must not use the struct spin_msg pointer after it
 * delivered the last byte or called spin_msg_abort(); msg_done may run
 * (on an HPU thread) before spin_msg_packet() returns.
 *
 * Return codes of handlers (spin_handler.h) as the runtime applies them:
 * a header SPIN_DROP skips every payload and the completion handler
 * (result SPIN_DROP, SPIN_MSG_F_DROPPED); a header SPIN_PROCEED sends
 * every packet through the non-processing path (payload copied to the
 * window at its message offset; SPIN_MSG_F_PROCEED, no completion
 * handler); a family without payload handler does the same per packet.
 * Any SPIN_ERROR, rejected or failed DMA makes the result SPIN_ERROR; the
 * message still completes (the app posts the event with a failure type).
 *
 * Blocked-RR: packet index = offset / pkt_payload (info->pkt_payload or
 * the runtime's), sequence = index / delta_p, vHPU = sequence mod nv,
 * nv = nvhpu, or min(sequences, max_vhpus) when nvhpu is 0. A vHPU runs
 * its packets in arrival order on one HPU at a time and yields when it
 * has none.
 *
 * Detach of a client: the app aborts the client's in-flight messages
 * (spin_msg_abort), calls spin_owner_detach() (contexts and NIC memory of
 * the owner are freed once no ME or message uses them), and keeps the
 * client's region mapped until msg_done was called for each of them.
 *
 * Outbound jobs (sender-side handlers, paper 000 §3.1): the outbound
 * engine submits one job per packet it sends (spin_out_submit_burst):
 * the context whose family's outbound handler builds the payload, the
 * packet's message offset and length, the payload buffer, and the host
 * window the handler may read (the initiator's memory descriptor:
 * client address and length; every read is bounds-checked against it and
 * goes through ops->direct / ops->dma_read as the inbound DMAs do). A job
 * holds a context reference from submit until it ran. HPUs take jobs in
 * spin_hpu_poll() after the inbound HERs, within the same budget, and
 * put each finished job, with its status, on a ring the submitter drains
 * (spin_out_done_burst). A job whose client detached meanwhile fails when
 * ops->direct / ops->dma_read refuse (the host's check, as for inbound
 * DMAs); the app keeps the client's memory mapped while a job of it is
 * out, and the job structures are the app's: valid from submit until
 * spin_out_done_burst() returned them.
 */
#ifndef SPIN_RT_H
#define SPIN_RT_H

#include <stdint.h>
#include <stdio.h>

#include "spin_handler.h"
#include "spinnic_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct spin_rt;
struct spin_msg;

/** Result of a message, given to ops->msg_done. */
struct spin_msg_result {
	int32_t status;        /**< SPIN_SUCCESS, SPIN_DROP (header handler
				    dropped it), SPIN_ERROR (any handler
				    error or rejected DMA) */
	uint32_t flags;        /**< SPIN_MSG_F_* */
	uint64_t bytes;        /**< payload bytes delivered */
	uint32_t npkts;        /**< packets delivered */
	uint32_t handler_errors; /**< handlers that returned SPIN_ERROR */
	uint32_t dma_rejects;  /**< DMAs rejected: out of the window */
	uint32_t dma_failures; /**< DMAs the host op failed */
	uint32_t dropped_pkts; /**< payload handlers that returned SPIN_DROP */
	uint32_t proceed_pkts; /**< packets that took the non-processing path */
	uint32_t dma_events;   /**< DMAs issued without SPIN_DMA_NO_EVENT */
	uint32_t pad;
	uint64_t dma_bytes;    /**< bytes written to the host */
};

/** The message was aborted (spin_msg_abort): handlers skipped after it. */
#define SPIN_MSG_F_ABORTED 0x1u
/** The header handler returned SPIN_PROCEED: non-processing path. */
#define SPIN_MSG_F_PROCEED 0x2u
/** The header handler returned SPIN_DROP. */
#define SPIN_MSG_F_DROPPED 0x4u

/**
 * Operations the app gives the runtime. @p host is the opaque client
 * handle given to spin_msg_start(); @p app_msg the app's message.
 * Addresses are client addresses, already checked against the ME window
 * by the runtime.
 */
struct spin_host_ops {
	/** Fast path: a pointer to [addr, addr+len) of the client, or NULL
	 *  (then dma_write/dma_read are used). May be NULL. */
	void *(*direct)(void *host, uint64_t addr, size_t len);
	/** Copy to the client. Mandatory. @return 0 or a negative errno */
	int (*dma_write)(void *host, uint64_t addr, const void *src,
			 size_t len);
	/** Copy from the client. Mandatory. @return 0 or a negative errno */
	int (*dma_read)(void *host, uint64_t addr, void *dst, size_t len);
	/** Optional: dma_write/dma_read of a message's handler, told which
	 *  message (Active Access logs the access with its initiator); used
	 *  instead of them when set. @return 0 or a negative errno */
	int (*dma_write_msg)(void *host, void *app_msg, uint64_t addr,
			     const void *src, size_t len);
	int (*dma_read_msg)(void *host, void *app_msg, uint64_t addr,
			    void *dst, size_t len);
	/** Optional (NULL: spin_host_* return -ENOTSUP): an 8-byte atomic
	 *  on the client word at @p addr (8-aligned), for a message's
	 *  handler (@p app_msg) or an access handler (@p app_msg NULL).
	 *  @p op: SPIN_HOST_ATOMIC_*; @p cmp for CAS. *old_p receives the
	 *  value before. @return 0 or a negative errno (-EACCES refused) */
	int (*atomic64)(void *host, void *app_msg, uint64_t addr, unsigned op,
			uint64_t v, uint64_t cmp, uint64_t *old_p);
	/** Increment the ME's counter. May be NULL (-ENOTSUP). */
	int (*ct_inc)(void *host, void *app_msg, uint64_t n);
	/** Handler put of NIC bytes. May be NULL (-ENOTSUP). */
	int (*put_from_nic)(void *host, void *app_msg,
			    const struct spin_put_req *req, const void *src,
			    size_t len);
	/** Handler put of client bytes at @p addr. May be NULL (-ENOTSUP). */
	int (*put_from_host)(void *host, void *app_msg,
			     const struct spin_put_req *req, uint64_t addr,
			     size_t len);
	/** The message is finished (see file comment). Mandatory. */
	void (*msg_done)(void *app_msg, const struct spin_msg_result *r);
	/** The packet given to spin_msg_packet() is no longer referenced.
	 *  Mandatory. */
	void (*pkt_release)(void *pkt_cookie);
	/** Optional: release @p n packets at once (HPUs batch releases);
	 *  NULL: pkt_release for each. */
	void (*pkt_release_burst)(void *const *pkt_cookies, unsigned n);
};

/** Operations of spin_host_ops.atomic64. */
enum spin_host_atomic_op {
	SPIN_HOST_ATOMIC_FADD = 0,
	SPIN_HOST_ATOMIC_SWAP,
	SPIN_HOST_ATOMIC_CAS,
};

/** Configuration of a runtime; zero fields take the defaults. */
struct spin_rt_conf {
	uint64_t nic_mem;          /**< NIC memory bytes (default 16 MiB) */
	uint64_t nic_mem_per_owner;/**< per-owner cap, 0: none */
	unsigned nhpu;             /**< HPUs (default 1, max SPIN_RT_HPUS_MAX) */
	unsigned max_msgs;         /**< messages in flight (default 256) */
	unsigned max_hers;         /**< payload HERs in flight (default 8192) */
	unsigned max_ctxs;         /**< execution contexts (default 1024) */
	unsigned max_blobs;        /**< NIC memory blobs (default 1024) */
	unsigned max_owners;       /**< owners with NIC memory (default 64) */
	unsigned max_vhpus;        /**< vHPUs per message (default 64) */
	uint32_t pkt_payload;      /**< payload bytes per packet (default 2048) */
	int socket_id;             /**< NUMA socket, SOCKET_ID_ANY default */
	const struct spin_host_ops *ops;  /**< mandatory, kept by pointer */
	/** NULL-terminated family table, usually spin_handler_families */
	const struct spin_handler_family *const *families;
	unsigned max_out_jobs;     /**< outbound jobs out at once (default
					1024, max 2^20) */
	/** Handler budget: an invocation longer than this is counted
	 *  (over_budget) and logged, at most one line per family per
	 *  second; 0: no budget. Every timed invocation is checked. With
	 *  payload timing sampled (handler_time_every > 1) an untimed
	 *  payload invocation is checked by its HPU's burst instead: one
	 *  rte_rdtsc() per burst of up to SPIN_BURST HERs (no call inside a
	 *  burst can take longer than the burst); a burst longer than the
	 *  budget makes the HPU time its next SPIN_BUDGET_RECHECK payload
	 *  invocations (budget_rechecks), so a handler that keeps running
	 *  over is counted and logged from its next invocation on; an
	 *  untimed invocation over the budget is not itself counted. */
	uint64_t handler_budget_ns;
	/** Trace ring of each context: its last handler_trace invocations
	 *  (spin_rt_ctx_trace()); 0: no trace, at most SPIN_TRACE_MAX */
	unsigned handler_trace;
	/** Payload handler timing: each HPU times about one payload
	 *  invocation in handler_time_every (rounded up to a power of two,
	 *  picked at random so that no packet position of a message is
	 *  favoured); the others are counted but not timed (no rte_rdtsc()).
	 *  0 or 1: every invocation. Header, completion and outbound
	 *  handlers are always timed, and so is every invocation for a
	 *  context with a trace; a budget checks the untimed ones by bursts
	 *  (handler_budget_ns). At most 2^20. */
	uint32_t handler_time_every;
};

/** Payload invocations an HPU times after a burst longer than the handler
 *  budget (spin_rt_conf.handler_budget_ns). */
#define SPIN_BUDGET_RECHECK 1024u

/** Most entries of a context's trace ring (spin_rt_conf.handler_trace). */
#define SPIN_TRACE_MAX 4096u

#define SPIN_RT_HPUS_MAX 64

/**
 * Check one handler family as spin_rt_create() checks every family of its
 * table (and spinnic --handlers every family of a plugin, before it): a
 * name of 1 to SPIN_HANDLER_NAME_MAX - 1 printable ASCII characters
 * without spaces, and at least one of the header, payload, completion
 * and outbound handlers. Uniqueness is the table's to check.
 *
 * @param f the family (may be NULL: refused)
 * @param why_p if not NULL, receives the reason when refused (a static
 *   string, e.g. "no handler (header, payload, completion and outbound
 *   all NULL)")
 * @return 0; -EINVAL refused.
 */
int spin_family_check(const struct spin_handler_family *f,
		      const char **why_p);

/**
 * Create a runtime. Checks every family of conf->families
 * (spin_family_check(), and unique names).
 *
 * @return the runtime, or NULL with errno: EINVAL (bad conf, ops or
 *   family), ENOMEM.
 */
struct spin_rt *spin_rt_create(const struct spin_rt_conf *conf);

/**
 * Free a runtime. No HPU may be polling; messages still in flight are
 * dropped without msg_done; their packets are released.
 */
void spin_rt_destroy(struct spin_rt *rt);

/* ---- NIC memory --------------------------------------------------------- */

/**
 * Allocate a NIC memory blob of @p size zeroed bytes for @p owner
 * (SPINNIC_CTRL_NICMEM_ALLOC).
 *
 * @param handle_p receives the blob handle
 * @return 0; -EINVAL size 0; -ENOMEM no NIC memory (PTL_NO_SPACE);
 *   -ENOSPC blob table or owner table full (PTL_NO_SPACE).
 */
int spin_rt_nicmem_alloc(struct spin_rt *rt, uint32_t owner, uint64_t size,
		      uint32_t *handle_p);

/**
 * Copy @p len bytes from @p src into blob @p handle at @p off
 * (SPINNIC_CTRL_NICMEM_WRITE; the app copies them out of the region).
 *
 * @return 0; -ENOENT no such blob; -EPERM another owner's; -ERANGE
 *   off+len past the blob.
 */
int spin_rt_nicmem_write(struct spin_rt *rt, uint32_t owner, uint32_t handle,
		      uint64_t off, const void *src, uint64_t len);

/**
 * Copy @p len bytes of blob @p handle at @p off into @p dst.
 *
 * @return 0; -ENOENT no such blob; -EPERM another owner's; -ERANGE
 *   off+len past the blob.
 */
int spin_rt_nicmem_read(struct spin_rt *rt, uint32_t owner, uint32_t handle,
		     uint64_t off, void *dst, uint64_t len);

/**
 * Free blob @p handle (SPINNIC_CTRL_NICMEM_FREE); its memory returns once
 * no running handler maps it.
 *
 * @return 0; -ENOENT; -EPERM.
 */
int spin_rt_nicmem_free(struct spin_rt *rt, uint32_t owner, uint32_t handle);

/**
 * @return NIC memory bytes charged to @p owner (contexts and blobs,
 *   rounded to 64 B), 0 for an unknown owner.
 */
uint64_t spin_rt_nicmem_owner_usage(struct spin_rt *rt, uint32_t owner);

/**
 * NIC memory for the staged copy of an outbound put (SPIN_MD_STAGE, the
 * outbound role): @p size bytes charged to @p owner as blobs are, not
 * zeroed (the copy overwrites them), not a blob (no handle, never mapped
 * by a handler).
 * @return the bytes, or NULL (errno ENOMEM: no room or over the owner's
 *   cap; ENOSPC: owner table full)
 */
void *spin_rt_stage_alloc(struct spin_rt *rt, uint32_t owner, uint64_t size);
/** Free what spin_rt_stage_alloc() returned (@p size as allocated). */
void spin_rt_stage_free(struct spin_rt *rt, uint32_t owner, void *p,
			uint64_t size);

/** NIC memory totals. */
struct spin_nicmem_stats {
	uint64_t capacity;
	uint64_t used;
	uint64_t largest_free;   /**< largest allocatable block */
	uint64_t allocs, frees, failures;
};
void spin_rt_nicmem_stats(struct spin_rt *rt, struct spin_nicmem_stats *s_p);

/* ---- execution contexts ------------------------------------------------ */

/** An execution context to create (library form of the ABI request). */
struct spin_ctx_conf {
	const char *family;        /**< family name in the table */
	const void *args;          /**< copied into NIC memory */
	uint32_t args_len;
	uint32_t state_len;        /**< zeroed state bytes */
	uint32_t policy;           /**< enum spinnic_sched_policy */
	uint32_t delta_p;          /**< blocked-RR: packets per sequence (>0) */
	uint32_t nvhpu;            /**< blocked-RR: vHPUs, 0: one per sequence
					(capped at conf max_vhpus, sequences
					then assigned round-robin) */
};

/**
 * Create an execution context owned by @p owner: find the family, run its
 * init, allocate args_len + state_len bytes of NIC memory (args copied,
 * state zeroed). The context holds one "installed" reference.
 *
 * @param handle_p receives the handle (never SPINNIC_HANDLE_NONE)
 * @return 0; -ENOENT unknown family; -EINVAL bad policy, args rejected by
 *   the family (PTL_ARG_INVALID); -ENOMEM no NIC memory; -ENOSPC context
 *   or owner table full (PTL_NO_SPACE).
 */
int spin_rt_ctx_create(struct spin_rt *rt, uint32_t owner,
		    const struct spin_ctx_conf *conf, uint32_t *handle_p);

/**
 * spin_rt_ctx_create() from a control request (SPINNIC_CTRL_CTX_INSTALL).
 * @p req was copied out of the socket; @p args are the req->args_len bytes
 * the app copied from the client region at req->args_off. Does not write
 * req->ctx.
 *
 * @return as spin_rt_ctx_create(); -EINVAL also for an unterminated name
 *   or non-zero req->flags (none defined).
 */
int spin_rt_ctx_install(struct spin_rt *rt, uint32_t owner,
		     const struct spinnic_ctrl_ctx *req, const void *args,
		     uint32_t *handle_p);

/**
 * Drop the installed reference of a context (SPINNIC_CTRL_CTX_FREE): no
 * new ME or message may use it; freed when the last reference goes.
 *
 * @return 0; -ENOENT no such (live) context; -EPERM another owner's.
 */
int spin_rt_ctx_free(struct spin_rt *rt, uint32_t owner, uint32_t handle);

/**
 * Take a reference on a live context of @p owner (an ME attached to it).
 *
 * @return 0; -ENOENT no such live context; -EPERM another owner's.
 */
int spin_rt_ctx_get(struct spin_rt *rt, uint32_t owner, uint32_t handle);

/** Drop a reference taken by spin_rt_ctx_get(). */
void spin_rt_ctx_put(struct spin_rt *rt, uint32_t handle);

/**
 * Whether @p handle is a live context of @p owner whose family has an
 * `access` handler (an Active Access log may be bound to it).
 *
 * @return 0; -ENOENT no such live context; -EPERM another owner's;
 *   -ENOTSUP its family has no access handler.
 */
int spin_rt_ctx_access_ok(struct spin_rt *rt, uint32_t owner,
			  uint32_t handle);

/**
 * Run the `access` handler of context @p handle (of @p owner) on HPU
 * @p hpu_id for one Active Access record, over window [win_addr,
 * +win_len) of @p host, and wait for it. Called by the HPU's own thread
 * between spin_hpu_poll() calls (never concurrently for one hpu_id).
 * Counted in the HPU's handler counts (spin_hpu_stats: hers, rc[]).
 *
 * @return the handler's SPIN_* code (any other value: SPIN_ERROR; a
 *   failed or rejected DMA makes SPIN_SUCCESS SPIN_ERROR); -ENOENT the
 *   context is gone or another owner's; -ENOTSUP no access handler;
 *   -EINVAL hpu_id out of range.
 */
int spin_rt_access_run(struct spin_rt *rt, unsigned hpu_id, uint32_t owner,
		       uint32_t handle, void *host, uint64_t win_addr,
		       uint64_t win_len, const struct spin_access *a);

/**
 * Free every context and blob of @p owner (drops their installed
 * references; memory returns when MEs and messages let go).
 *
 * @return the number of contexts and blobs freed.
 */
unsigned spin_owner_detach(struct spin_rt *rt, uint32_t owner);

/* ---- messages ------------------------------------------------------------ */

/**
 * Start a message matched to an ME with context @p ctx. Queues the header
 * HER (if the family has a header handler). The message holds a context
 * reference until msg_done.
 *
 * @param info header fields (copied); info->length payload bytes expected
 * @param host opaque client handle for the host ops
 * @param win_addr client address of the ME window (start + offset)
 * @param win_len window bytes
 * @param app_msg returned in msg_done and to ct_inc/put ops
 * @return the message, or NULL with errno: ENOENT no such context (a
 *   context freed by its client still runs while an ME holds it);
 *   ENOBUFS max_msgs messages in flight (drop the packet, count).
 */
struct spin_msg *spin_msg_start(struct spin_rt *rt, uint32_t ctx,
				const struct spin_msg_info *info, void *host,
				uint64_t win_addr, uint64_t win_len,
				void *app_msg);

/**
 * Deliver one packet: queues a payload HER referencing @p payload in place
 * (ops->pkt_release(pkt_cookie) once no handler uses it). Every byte range
 * must be delivered once (duplicates are the caller's to drop). A message
 * of length 0 takes exactly one packet, of length 0 (its payload handler
 * runs with len 0).
 *
 * @param offset byte offset of the payload in the message
 * @return 0 (the packet is the runtime's now); -EINVAL offset+len past
 *   info->length, len 0 in a non-empty message, the message already
 *   has all its bytes, or 2^31 - 1 packets; -ENOBUFS no HER free now (packet not taken: drop
 *   it, the sender retransmits). On error the caller keeps the packet.
 */
int spin_msg_packet(struct spin_msg *sm, const void *payload, uint32_t len,
		    uint64_t offset, void *pkt_cookie);

/** One packet for spin_msg_packet_burst(). */
struct spin_pkt_in {
	const void *payload;
	void *cookie;            /**< given to pkt_release */
	uint64_t offset;         /**< byte offset of the payload in the message */
	uint32_t len;
	uint32_t pad;
};

/**
 * Deliver a burst of packets of one message: as spin_msg_packet() for
 * each, in order, with one HER pool access, one `pending` update and one
 * queue operation per up to 32 packets instead of one each.
 *
 * @param err_p receives 0 when every packet was taken, else why
 *   pkts[return value] was refused: -EINVAL (as spin_msg_packet()),
 *   -ENOBUFS (no HER free now); may be NULL
 * @return packets taken, from the first (the runtime's now); the caller
 *   keeps the others
 */
unsigned spin_msg_packet_burst(struct spin_msg *sm,
			       const struct spin_pkt_in *pkts, unsigned n,
			       int *err_p);

/**
 * Abort a message (client detached, message timed out): no handler of it
 * starts afterwards, queued packets are released, msg_done is called with
 * SPIN_MSG_F_ABORTED once handlers already running returned.
 */
void spin_msg_abort(struct spin_msg *sm);

/* ---- outbound jobs ------------------------------------------------------- */

/**
 * One sender-side packet to build (see the file comment). The submitter
 * fills the fields up to cookie; the runtime writes status and hpu. The
 * structure is the app's, and must stay valid (and unchanged) from submit
 * until spin_out_done_burst() hands it back.
 */
struct spin_out_job {
	uint32_t ctx;            /**< execution context (live, its family has
				      an outbound handler) */
	uint32_t len;            /**< payload bytes to build */
	uint64_t offset;         /**< their byte offset in the message */
	uint8_t *dst;            /**< payload buffer, len bytes */
	void *host;              /**< opaque client handle for the host ops */
	uint64_t win_addr;       /**< client address of the readable window */
	uint64_t win_len;        /**< its bytes */
	const struct spin_msg_info *info; /**< optional (NULL), kept valid by
					       the app while the job is out */
	void *cookie;            /**< the app's */
	int32_t status;          /**< out: 0, or the first failure: -ERANGE
				      a read outside the window (rejected);
				      -EPERM the handler tried to write the
				      host; -EIO the host read failed
				      (client memory gone, client
				      detached); -EPROTO the handler
				      returned other than SPIN_SUCCESS */
	uint32_t hpu;            /**< out: the HPU that ran it */
	void *rt_priv;           /**< runtime private */
};

/**
 * Submit outbound jobs, in order, to the HPUs of @p rt.
 *
 * @param jobs the jobs (see struct spin_out_job)
 * @param n how many
 * @param err_p receives 0 when every job was taken, else why
 *   jobs[return value] was refused: -ENOBUFS max_out_jobs jobs are out
 *   (retry once some came back); -ENOENT no such live context, or
 *   the context was freed; -ENOTSUP its family has
 *   no outbound handler; -EINVAL len > 0 with dst NULL. May be NULL.
 * @return jobs taken, from the first (the runtime's until they come back
 *   from spin_out_done_burst()); the caller keeps the others
 */
unsigned spin_out_submit_burst(struct spin_rt *rt,
			       struct spin_out_job *const *jobs, unsigned n,
			       int *err_p);

/**
 * Submit one outbound job: spin_out_submit_burst() of one.
 * @return 0, or the error spin_out_submit_burst() gives in *err_p
 */
int spin_out_submit(struct spin_rt *rt, struct spin_out_job *job);

/**
 * Take back up to @p n finished outbound jobs (any order), each with its
 * status and hpu written.
 * @param jobs_p receives the jobs
 * @return jobs returned (0: none finished)
 */
unsigned spin_out_done_burst(struct spin_rt *rt, struct spin_out_job **jobs_p,
			     unsigned n);

/* ---- HPUs ---------------------------------------------------------------- */

/**
 * Run up to @p budget HERs and outbound jobs (after the HERs) on HPU
 * @p hpu. Never blocks.
 *
 * @return HERs and jobs run (0: nothing to do).
 */
unsigned spin_hpu_poll(struct spin_rt *rt, unsigned hpu, unsigned budget);

/** @return the number of HPUs. */
unsigned spin_rt_nhpu(const struct spin_rt *rt);

/* ---- counters ------------------------------------------------------------ */

/** Counters of one HPU (written by the thread polling it). */
struct spin_hpu_stats {
	uint64_t hers;            /**< HERs run (header+payload+completion) */
	uint64_t hdr, pay, cmpl;  /**< by kind */
	uint64_t rc[4];           /**< handler returns by enum spin_rc */
	uint64_t skipped;         /**< HERs not run: aborted/dropped message */
	uint64_t dma_bytes_to;    /**< bytes written to host */
	uint64_t dma_bytes_from;  /**< bytes read from host */
	uint64_t dma_ops;
	uint64_t dma_rejects;     /**< out of window */
	uint64_t dma_failures;    /**< host op failed */
	uint64_t vhpu_runs;       /**< vHPU scheduled on this HPU */
	uint64_t vhpu_yields;     /**< vHPU gave the HPU up, no packet */
	uint64_t polls, idle_polls;
	uint64_t out_jobs;        /**< outbound jobs run (sender handlers) */
	uint64_t out_failures;    /**< of them, failed (status != 0) */
	uint64_t out_bytes;       /**< payload bytes they built */
	/** Bursts of this HPU's work longer than the handler budget while
	 *  payload invocations are sampled: each made the HPU time its next
	 *  SPIN_BUDGET_RECHECK payload invocations (spin_rt_conf
	 *  handler_budget_ns) */
	uint64_t budget_rechecks;
	/** payload_burst calls (2 or more packets of one message each;
	 *  their packets count in @c pay as one by one) */
	uint64_t bursts;
};

/** Counters of one context (all HPUs, relaxed atomics). */
struct spin_ctx_stats {
	uint64_t msgs;
	uint64_t hers;
	uint64_t rc[4];
	uint64_t dma_bytes;
	uint64_t dma_rejects;
	uint32_t refs;            /**< references now (installed + MEs +
				       messages) */
	uint32_t owner;
	uint64_t mem_bytes;       /**< NIC memory of the context */
	uint32_t family;          /**< index of its family in the table */
	uint32_t live;            /**< 1: installed, 0: freed by its client,
				       still referenced */
};

/** Runtime totals. */
struct spin_rt_stats {
	uint64_t msgs_started, msgs_done, msgs_aborted;
	uint64_t msg_full;        /**< spin_msg_start refused: no slot */
	uint64_t her_full;        /**< spin_msg_packet refused: no HER */
	uint64_t pkt_rejects;     /**< spin_msg_packet refused: bad range */
	uint32_t msgs_live, hers_live;
	uint32_t ctxs_live, blobs_live;
	uint64_t out_submitted;   /**< outbound jobs taken by submit */
	uint64_t out_full;        /**< submits refused: max_out_jobs out */
	uint64_t out_rejects;     /**< submits refused: bad job */
	uint32_t out_live;        /**< jobs out now (submitted, not drained) */
	uint32_t pad;
};

/** @return 0; -EINVAL @p hpu out of range. */
int spin_hpu_stats(const struct spin_rt *rt, unsigned hpu,
		   struct spin_hpu_stats *s_p);
/** @return 0; -ENOENT no such context (freed contexts are gone). */
int spin_rt_ctx_stats(struct spin_rt *rt, uint32_t handle,
		   struct spin_ctx_stats *s_p);
void spin_rt_stats(struct spin_rt *rt, struct spin_rt_stats *s_p);
/** Print every counter, indented, one per line. */
void spin_rt_stats_print(struct spin_rt *rt, FILE *f);

/* ---- handler statistics and trace ---------------------------------------- */

/*
 * Every handler invocation is timed (rte_rdtsc() before and after the
 * callback: wall time on the HPU, DMAs the handler issued included;
 * payload handlers possibly one in conf.handler_time_every) and
 * counted per family (by position in conf.families) and per context,
 * by kind and outcome. Per family: counters of each HPU, written by it
 * alone, summed on read. Per context: the HPU adds its counts with
 * relaxed atomics when it leaves the message (or outbound burst) or ends
 * its poll; msg_done of a message (spin_out_done_burst of a job) comes
 * after its counts are in. A context's counts go with it; its family's
 * stay.
 */

/** Kinds of handler invocation. */
enum spin_hkind {
	SPIN_HK_HEADER = 0,
	SPIN_HK_PAYLOAD,
	SPIN_HK_COMPLETION,
	SPIN_HK_OUTBOUND,
	SPIN_HK_COUNT,
};

/** Buckets of the duration histogram: bucket i counts invocations of
 *  [2^i, 2^(i+1)) TSC cycles (bucket 0 also 0), the last one all longer. */
#define SPIN_HSTAT_BUCKETS 40u

/** Invocations of one kind of handler. */
struct spin_hkind_stats {
	uint64_t calls;           /**< invocations: sum of rc[] */
	/** by outcome (enum spin_rc); a SPIN_SUCCESS with a DMA rejected or
	 *  failed counts as SPIN_ERROR, any other return value too */
	uint64_t rc[4];
	/** invocations timed: sum of hist[]; calls unless payload timing
	 *  is sampled (spin_rt_conf.handler_time_every) */
	uint64_t timed;
	uint64_t cycles;          /**< TSC cycles in the timed invocations */
	uint64_t max_cycles;      /**< the longest timed invocation */
	uint64_t over_budget;     /**< longer than conf.handler_budget_ns */
	uint64_t hist[SPIN_HSTAT_BUCKETS]; /**< invocations by log2 cycles */
};

/** Handler statistics of a family or a context. */
struct spin_handler_stats {
	struct spin_hkind_stats kind[SPIN_HK_COUNT];
	uint64_t calls;           /**< all kinds */
	uint64_t errors;          /**< outcome SPIN_ERROR, all kinds */
	uint64_t over_budget;     /**< all kinds */
	uint64_t dma_bytes_to;    /**< bytes handlers wrote to the host
				       (not the non-processing path's) */
	uint64_t dma_bytes_from;  /**< bytes handlers read from the host */
	uint64_t dma_rejects;     /**< DMAs and puts refused: out of the
				       window, or a write from an outbound
				       handler */
	uint64_t dma_failures;    /**< host copies that failed */
	uint64_t put_errors;      /**< handler puts the NIC refused */
};

/** @return "header", "payload", "completion", "outbound" or "?". */
const char *spin_hkind_name(unsigned kind);

/**
 * Estimate a quantile of the durations from the histogram: linear within
 * the bucket it falls in, at most max_cycles.
 *
 * @param q quantile in (0, 1], e.g. 0.99
 * @return cycles, 0 when there was no invocation
 */
uint64_t spin_hkind_quantile(const struct spin_hkind_stats *k, double q);

/** @return @p cycles of the TSC in nanoseconds (rte_get_tsc_hz()). */
uint64_t spin_cycles_to_ns(uint64_t cycles);

/** @return the number of families of the runtime (conf.families). */
unsigned spin_rt_nfamilies(const struct spin_rt *rt);

/** @return the family at position @p fam of conf.families, or NULL. */
const struct spin_handler_family *
spin_rt_family(const struct spin_rt *rt, unsigned fam);

/**
 * Handler statistics of family @p fam (position in conf.families), since
 * the runtime was created, all HPUs and contexts.
 *
 * @return 0; -EINVAL @p fam out of range.
 */
int spin_rt_family_stats(const struct spin_rt *rt, unsigned fam,
			 struct spin_handler_stats *s_p);

/**
 * Handler statistics of context @p handle since it was created.
 *
 * @return 0; -ENOENT no such context (freed contexts are gone).
 */
int spin_rt_ctx_handler_stats(struct spin_rt *rt, uint32_t handle,
			      struct spin_handler_stats *s_p);

/**
 * Iterate over the contexts that exist (installed, or freed by their
 * client but still referenced): start with *pos_p = 0.
 *
 * @param pos_p in: where to go on from; out: where to go on next time
 * @param handle_p receives the next context's handle
 * @return 0; -ENOENT no more.
 */
int spin_rt_ctx_next(struct spin_rt *rt, uint32_t *pos_p,
		     uint32_t *handle_p);

/** One invocation in a context's trace ring. */
struct spin_trace_entry {
	uint64_t seq;             /**< invocation number in the context,
				       from 1, in the order they started to
				       be recorded */
	uint64_t tsc;             /**< rte_rdtsc() when the handler started */
	uint64_t cycles;          /**< its duration */
	uint64_t msg_id;          /**< message id (0: an outbound job
				       without message) */
	uint64_t offset;          /**< packet offset in the message (payload,
				       outbound), 0 (header, completion) */
	uint32_t len;             /**< packet bytes (payload, outbound), or
				       the message's (header, completion) */
	uint32_t src_nid;         /**< the message's initiator */
	uint8_t kind;             /**< enum spin_hkind */
	uint8_t rc;               /**< outcome (enum spin_rc), as counted */
	uint16_t hpu;             /**< HPU that ran it */
	uint32_t vhpu;            /**< vHPU or SPIN_VHPU_NONE */
};

/**
 * Read the trace ring of context @p handle (conf.handler_trace entries):
 * the entries still in the ring with seq >= @p from (0: the last @p n),
 * oldest first, at most @p n. HPUs write the ring concurrently: each
 * entry is claimed, written whole, then its seq published (release); the
 * reader copies an entry and keeps it only when its seq was the expected
 * one before and after the copy, so an entry being written (or lost to
 * a writer that lapped the ring) is left out, never torn. Entries of
 * different HPUs are ordered by when they were recorded (after the
 * handler returned), not by tsc.
 *
 * @param head_p receives the seq of the newest entry (invocations
 *   traced so far); may be NULL
 * @return entries copied; -ENOENT no such context; -ENODATA no trace
 *   (conf.handler_trace 0, or the ring could not be allocated).
 */
int spin_rt_ctx_trace(struct spin_rt *rt, uint32_t handle, uint64_t from,
		      struct spin_trace_entry *ents, unsigned n,
		      uint64_t *head_p);

/**
 * Print the handler statistics of every family with at least one
 * invocation ("handlers: NAME" then one line per kind and one of DMA),
 * indented, durations in ns.
 */
void spin_rt_handler_stats_print(struct spin_rt *rt, FILE *f);

#ifdef __cplusplus
}
#endif

#endif
