/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin.h
 * sPIN additions to the Portals 4 API (DESIGN §6, §8): host-region memory,
 * execution contexts (packet handlers attached to an ME), NIC memory
 * blobs for handlers, NIC information, and typed receives (datatype
 * offload with host fallback). Part of libspinnic; every
 * function returns a PTL_* code of portals4.h unless stated otherwise.
 */
#ifndef SPIN_H
#define SPIN_H

#include <stddef.h>
#include <stdint.h>

#include <portals4.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Handle of an installed execution context (a ptl_handle_any_t). */
typedef ptl_handle_any_t spin_handle_ctx_t;
/** Handle of a NIC memory blob (a ptl_handle_any_t). */
typedef ptl_handle_any_t spin_handle_nicmem_t;

/** "No execution context": spin_me_append() then acts as PtlMEAppend(). */
#define SPIN_CTX_NONE ((spin_handle_ctx_t)0x7fffffff)

/** Bytes of a handler family name, including the terminating NUL. */
#define SPIN_HANDLER_NAME_MAX 48

/** Scheduling of a context's payload handlers on the HPUs. */
enum spin_sched_policy {
	SPIN_SCHED_DEFAULT = 0,    /**< any idle HPU, in parallel */
	SPIN_SCHED_BLOCKED_RR = 1, /**< delta_p consecutive packets form a
					sequence owned by one virtual HPU */
};

/** What spin_ctx_install() installs. */
struct spin_ctx_desc {
	/** Handler family in handlers/ (e.g. "checksum", "vector"), shorter
	 *  than SPIN_HANDLER_NAME_MAX. */
	const char *family;
	/** Handler arguments, copied into the context's NIC memory at
	 *  install (may be NULL when args_len is 0). */
	const void *args;
	size_t args_len;
	/** Extra zeroed NIC memory for handler state. */
	size_t state_len;
	enum spin_sched_policy policy;
	/** SPIN_SCHED_BLOCKED_RR: packets per sequence (>= 1). */
	uint32_t delta_p;
	/** SPIN_SCHED_BLOCKED_RR: virtual HPUs (0: one per sequence). */
	uint32_t nvhpu;
	/** Reserved, 0. */
	uint32_t flags;
};

/** What spin_nic_info() reports. */
struct spin_nic_info {
	ptl_process_t id;       /**< physical id of this process */
	uint32_t payload_size;  /**< NIC packet payload bytes */
	uint64_t nic_mem_total; /**< NIC memory capacity of the node */
	uint64_t region_size;   /**< bytes of the host region */
	uint64_t heap_size;     /**< bytes of its allocator arena */
	uint32_t nhpu;          /**< HPUs of the node (spinnic --hpus) */
};

/**
 * Allocate memory in the host region shared with the NIC (the fast path
 * for MD and ME buffers). 64-byte aligned; thread-safe. The region is
 * created on first use (size from SPINNIC_REGION_SIZE, default 64 MiB,
 * rounded up to 2 MiB; hugepages when available), so this works before
 * PtlNIInit().
 * @param size bytes (> 0).
 * @return the memory, or NULL with errno ENOMEM (region full) or EINVAL
 *   (size 0) or the errno of the region's creation.
 */
void *spin_host_alloc(size_t size);

/**
 * Free memory from spin_host_alloc(). NULL is ignored; a pointer that is
 * not an allocation of the region is reported on stderr and ignored.
 * @param p the memory.
 */
void spin_host_free(void *p);

/**
 * Whether [p, p + len) lies in the host region's heap.
 * @param p start.
 * @param len bytes.
 * @return 1 if it does, else 0.
 */
int spin_host_contains(const void *p, size_t len);

/**
 * Install an execution context on the NIC.
 * @param ni_handle the NI.
 * @param d what to install (copied; args copied into NIC memory).
 * @param ctx_p receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (unknown family, bad
 *   policy); PTL_NO_SPACE (NIC memory short: fall back to host
 *   processing); PTL_FAIL.
 */
int spin_ctx_install(ptl_handle_ni_t ni_handle, const struct spin_ctx_desc *d,
		     spin_handle_ctx_t *ctx_p);

/**
 * Free an execution context (MEs using it must be unlinked first).
 * @param ctx the context.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_IN_USE; PTL_FAIL.
 */
int spin_ctx_free(spin_handle_ctx_t ctx);

/**
 * PtlMEAppend() with an execution context: messages matching the entry
 * run the context's handlers.
 * @param ni_handle a PTL_NI_MATCHING NI.
 * @param pt_index the PT.
 * @param me the entry (copied).
 * @param list PTL_PRIORITY_LIST or PTL_OVERFLOW_LIST.
 * @param ctx the context, or SPIN_CTX_NONE.
 * @param user_ptr returned in the entry's events.
 * @param me_p receives the handle (unlink with PtlMEUnlink()).
 * @return as PtlMEAppend().
 */
int spin_me_append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		   const ptl_me_t *me, ptl_list_t list, spin_handle_ctx_t ctx,
		   void *user_ptr, ptl_handle_me_t *me_p);

/**
 * Allocate a blob of NIC memory that handlers can read (e.g. an iovec
 * list or a serialized datatype).
 * @param ni_handle the NI.
 * @param size bytes (> 0).
 * @param mem_p receives the handle.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE (NIC memory
 *   short); PTL_FAIL.
 */
int spin_nicmem_alloc(ptl_handle_ni_t ni_handle, size_t size,
		      spin_handle_nicmem_t *mem_p);

/**
 * Copy bytes of host memory into a NIC memory blob.
 * @param mem the blob.
 * @param offset where in the blob.
 * @param src bytes to copy (any memory of the process).
 * @param len bytes; offset + len must not exceed the blob.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE (no region
 *   memory for staging); PTL_FAIL.
 */
int spin_nicmem_write(spin_handle_nicmem_t mem, size_t offset,
		      const void *src, size_t len);

/**
 * Free a NIC memory blob.
 * @param mem the blob.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_FAIL.
 */
int spin_nicmem_free(spin_handle_nicmem_t mem);

/**
 * The id the NIC knows a blob by, to pass in handler arguments.
 * @param mem the blob.
 * @param id_p receives the NIC's id.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int spin_nicmem_id(spin_handle_nicmem_t mem, uint32_t *id_p);

/**
 * Information about the NIC this process is attached to.
 * @param ni_handle an NI (proves the attachment).
 * @param info_p receives it.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID.
 */
int spin_nic_info(ptl_handle_ni_t ni_handle, struct spin_nic_info *info_p);

/* ---- triggered list changes (paper 002 §IV-C) ------------------------- */

/**
 * Append an ME when a counter reaches a threshold, with no host action
 * then (the reference implementation's name and argument order; not in
 * the Portals specification). The entry is checked and copied now, as
 * PtlMEAppend() would, and holds its NIC slot and its place in the list
 * (max_list_size) from now on; when the counter's success + failure
 * reaches @p threshold the NIC links it exactly as PtlMEAppend() does
 * (a priority entry first claims matching unexpected headers:
 * PUT_OVERFLOW...; then LINK unless disabled), in order with the other
 * triggered operations of that counter and threshold. Counts toward
 * max_triggered_ops until it fired or was cancelled.
 *
 * The handle exists from the call on (unlike the reference
 * implementation, which writes it when the append fires). Before the
 * append fired, PtlMEUnlink() on it returns PTL_OK and cancels the
 * append (which then does nothing when it fires), and so does a
 * PtlTriggeredMEUnlink() that fires first. PtlCTCancelTriggered() and
 * PtlCTFree() of @p trig_ct_handle release the entry of an append that
 * has not fired; the handle is then invalid. PtlPTFree() returns
 * PTL_PT_IN_USE while an entry waits for its append.
 *
 * @param ni_handle a PTL_NI_MATCHING NI.
 * @param pt_index the PT.
 * @param me the entry (copied).
 * @param ptl_list PTL_PRIORITY_LIST or PTL_OVERFLOW_LIST.
 * @param user_ptr returned in the entry's events.
 * @param me_handle receives the handle at once.
 * @param trig_ct_handle the trigger counter (same NI).
 * @param threshold success + failure that fires the append.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as PtlMEAppend(), or a
 * bad trigger counter); PTL_NO_SPACE (no entry, or max_triggered_ops
 * pending); PTL_LIST_TOO_LONG; PTL_FAIL.
 */
int PtlTriggeredMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			 const ptl_me_t *me, ptl_list_t ptl_list,
			 void *user_ptr, ptl_handle_me_t *me_handle,
			 ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/**
 * Unlink an ME when a counter reaches a threshold (the reference
 * implementation's name and argument order). When it fires the entry
 * leaves its list at once (no new matches); messages in flight into it
 * complete and keep its slot until they end. No AUTO_UNLINK event. An
 * entry already gone when it fires (consumed as use-once, unlinked by
 * PtlMEUnlink() or by an earlier triggered unlink) makes it do nothing:
 * the NIC counts it (statistic trig_me_gone), the caller sees nothing.
 * An entry still waiting for its triggered append is released and the
 * append cancelled. Counts toward max_triggered_ops until it fired.
 *
 * @param me_handle the entry.
 * @param trig_ct_handle the trigger counter (the entry's NI).
 * @param threshold success + failure that fires the unlink.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad handle or counter);
 * PTL_NO_SPACE (max_triggered_ops pending); PTL_FAIL.
 */
int PtlTriggeredMEUnlink(ptl_handle_me_t me_handle,
			 ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold);

/* ---- persistent (re-arming) triggered operations (paper 002 §5.4.2) --- */

/**
 * Make the calling thread's later triggered posts on an NI persistent
 * (re-arming), so that a schedule of triggered operations runs again and
 * again without being posted again. Applies to PtlTriggeredPut(),
 * PtlTriggeredGet(), PtlTriggeredAtomic(), PtlTriggeredFetchAtomic(),
 * PtlTriggeredSwap(), PtlTriggeredCTInc(), PtlTriggeredCTSet() and
 * PtlTriggeredMEAppend() posted
 * by this thread on @p ni_handle after the call; other threads and other
 * NIs keep their own setting (thread-local; it outlives PtlNIFini() of
 * the NI in this thread, so set 0 again before reusing the slot).
 *
 * A persistent operation posted with threshold t fires when the trigger
 * counter's success + failure reaches t, then again at t + period,
 * t + 2 * period, ...: once per threshold crossed, even when one counter
 * change crosses several (in order; each re-armed instance counts as
 * armed when the previous one fired, so among operations of the same
 * counter and threshold it comes after those already waiting there).
 * Each firing reads its MD / operand at fire time, as a one-shot
 * triggered operation does. It stays until PtlCTCancelTriggered() or
 * PtlCTFree() of its trigger counter (and goes at PtlNIFini() or when
 * the process ends); instances that fired before the cancel still run.
 * It counts once toward max_triggered_ops for its whole life. When
 * t + k * period would pass 2^64 - 1 it stops re-arming there (NIC
 * statistic trig_rearm_ended) and is released as a one-shot one is.
 * Operations that keep feeding their own trigger (a re-armed increment
 * of its own counter) run until cancelled, a bounded number per NIC poll.
 *
 * A persistent PtlTriggeredMEAppend() links a fresh copy of the entry
 * (checked and copied at the call, as always) at every firing, so a
 * use-once entry appears again for each instance; a copy that finds no
 * NIC slot or a full list is not linked (NIC statistic trig_me_full).
 * Its handle names the reserved original (the template), never a copy:
 * PtlMEUnlink() on it returns PTL_OK, releases the template, unlinks
 * every copy still linked (messages in flight into one complete) and
 * stops the appends (later firings do nothing: statistic trig_me_gone;
 * the triggered entry itself stays armed until PtlCTCancelTriggered() or
 * PtlCTFree(), which also release the template and its linked copies).
 * Events of a copy carry the call's user_ptr. A persistent
 * PtlTriggeredMEUnlink() is not supported: with a period set it returns
 * PTL_ARG_INVALID.
 *
 * @param ni_handle the NI.
 * @param period the distance between thresholds; 0 (the default):
 * ordinary one-shot triggered operations.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad NI handle).
 */
int spin_trig_set_period(ptl_handle_ni_t ni_handle, ptl_size_t period);

/**
 * How long a blocking wait (PtlCTWait, PtlCTPoll, PtlEQWait, PtlEQPoll)
 * polls before it sleeps in the kernel until the NIC wakes it: @p polls
 * polls, each followed by a pause and sched_yield() (a rank that shares
 * its CPU lets the others run). 0: sleep at once (a host that blocks,
 * as paper 002's Fig. 3 "sleeping host"). For the whole process; the
 * environment variable SPINNIC_WAIT_POLLS sets it at the first
 * PtlInit() (a bad value: the default, with a message), so call this
 * after PtlInit().
 *
 * @param polls 0 to 1000000 (default 2000).
 * @return the previous value; -EINVAL (out of range, nothing changed).
 */
int spin_set_wait_polls(unsigned polls);

/**
 * Triggered operations of this process on an NI's kind that the NIC still
 * holds: armed, fired but not yet run, or persistent (each counts once
 * toward max_triggered_ops). Every command posted before the call is
 * acted on first, so a PtlCTCancelTriggered() or PtlCTFree() made before
 * counts; an operation that already fired may still be running, so a
 * caller checking for leaks polls until 0. A library that frees its
 * objects (a lib/coll schedule) leaves 0 behind.
 *
 * @param ni_handle the NI.
 * @param pending_p its count.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad NI handle, NULL);
 *   PTL_FAIL (spinnic gone).
 */
int spin_trig_pending(ptl_handle_ni_t ni_handle, uint64_t *pending_p);

/* ---- batched setup (notes-002_003 §5.4.3; SPINNIC_CTRL_BATCH) --------- */

/**
 * A batch of object creations sent to spinnic in one control round trip
 * (per SPINNIC_CTRL_BATCH_MAX = 256 records) instead of one each: build
 * it with spin_batch_ct_alloc(), spin_batch_md_bind(),
 * spin_batch_me_append() and spin_batch_me_reserve(), then
 * spin_batch_submit(). spinnic applies the records in order; a CT or MD
 * handle a builder call gives back may be named by the later calls of the
 * same batch (an MD or ME counting into a CT created in the batch), and
 * becomes usable everywhere once the submit succeeded (before: every
 * other call refuses it with PTL_ARG_INVALID). ME handles are written at
 * the submit. When a record fails, the submit destroys everything the
 * batch created (spinnic undoes its chunk, the shim the earlier chunks)
 * and invalidates every handle it gave out: all or nothing. One thread
 * builds a batch; it is not a lock (other threads keep calling).
 */
typedef struct spin_batch spin_batch_t;

/**
 * Start a batch on an NI.
 * @param ni_handle the NI every record uses.
 * @param b_p receives the batch.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad NI, NULL);
 * PTL_NO_SPACE.
 */
int spin_batch_create(ptl_handle_ni_t ni_handle, spin_batch_t **b_p);

/**
 * Add a PtlCTAlloc().
 * @param b the batch (not submitted).
 * @param ct_p receives the counter's handle at once (see spin_batch_t).
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE (no table
 * slot or region memory, as PtlCTAlloc()).
 */
int spin_batch_ct_alloc(spin_batch_t *b, ptl_handle_ct_t *ct_p);

/**
 * Add a PtlMDBind(); md->ct_handle may be a counter of this batch.
 * @param b the batch (not submitted).
 * @param md the descriptor (copied).
 * @param md_p receives the MD's handle at once.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as PtlMDBind());
 * PTL_NO_SPACE.
 */
int spin_batch_md_bind(spin_batch_t *b, const ptl_md_t *md,
		       ptl_handle_md_t *md_p);

/**
 * Add a PtlMEAppend(); me->ct_handle may be a counter of this batch.
 * @param b the batch (not submitted).
 * @param pt_index, me, ptl_list, user_ptr as PtlMEAppend().
 * @param me_p NULL, or where the handle is written when the submit
 * succeeds (it must stay valid until then); spin_batch_handle() has it
 * too.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (as PtlMEAppend());
 * PTL_NO_SPACE.
 */
int spin_batch_me_append(spin_batch_t *b, ptl_pt_index_t pt_index,
			 const ptl_me_t *me, ptl_list_t ptl_list,
			 void *user_ptr, ptl_handle_me_t *me_p);

/**
 * Add the reservation of a PtlTriggeredMEAppend()'s entry: checked and
 * counted as an append, not linked; after the submit
 * spin_triggered_me_link() posts its triggered append (or PtlMEUnlink()
 * gives it back). Arguments as spin_batch_me_append().
 */
int spin_batch_me_reserve(spin_batch_t *b, ptl_pt_index_t pt_index,
			  const ptl_me_t *me, ptl_list_t ptl_list,
			  void *user_ptr, ptl_handle_me_t *me_p);

/**
 * Create everything the batch holds, in the order added: one control
 * round trip per SPINNIC_CTRL_BATCH_MAX records.
 * @param b the batch (not submitted; submitted afterwards whatever the
 * outcome).
 * @param failed_p NULL, or receives the index (in the order added) of the
 * record that failed; -1 when none did or the batch failed as a whole.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (submitted already, empty);
 * the failing record's code (PTL_NO_SPACE, PTL_LIST_TOO_LONG, ...),
 * everything the batch created then destroyed; PTL_FAIL (spinnic
 * unreachable).
 */
int spin_batch_submit(spin_batch_t *b, int *failed_p);

/**
 * Records added so far.
 * @param b the batch.
 * @return the count (0 for NULL).
 */
unsigned spin_batch_count(const spin_batch_t *b);

/**
 * Handle record @p i created (after a successful submit; for CTs and MDs
 * also before).
 * @param b the batch.
 * @param i the record, in the order added.
 * @return the handle; PTL_INVALID_HANDLE when there is none.
 */
ptl_handle_any_t spin_batch_handle(const spin_batch_t *b, unsigned i);

/**
 * Free the builder. Objects a successful submit created stay (the caller
 * frees them as usual); those of a batch never submitted are released.
 * @param b the batch, or NULL.
 */
void spin_batch_free(spin_batch_t *b);

/**
 * Post the triggered append of an entry spin_batch_me_reserve() reserved:
 * what PtlTriggeredMEAppend() does after its reservation (the period of
 * spin_trig_set_period() applies). On failure the entry stays reserved.
 * @param me_handle the reserved entry.
 * @param trig_ct_handle the trigger counter (same NI).
 * @param threshold success + failure that fires the append.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID; PTL_NO_SPACE
 * (max_triggered_ops pending).
 */
int spin_triggered_me_link(ptl_handle_me_t me_handle,
			   ptl_handle_ct_t trig_ct_handle,
			   ptl_size_t threshold);

/**
 * Control round trips (requests to spinnic over the control socket,
 * answered or not) this process made since it started: what a batch
 * saves, for tests and benchmarks.
 * @return the count.
 */
uint64_t spin_ctrl_round_trips(void);

/* ---- staged sends (paper 003 Fig. 4, the BluesMPI baseline) ----------- */

/**
 * ptl_md_t option, a spinnic extension: a put from this MD (PtlPut,
 * triggered or not; not gets, atomics or streaming puts) is first copied
 * whole, [local_offset, +length), from host memory into NIC memory
 * charged to this process (its --nic-mem-per-client share), then sent
 * from there: one extra copy and a first packet that leaves only after
 * the last byte was read, as a DPU that stages through its own memory.
 * For benchmarks of what staging costs; a put that finds no NIC memory
 * for its copy fails (PTL_NI_DROPPED in its SEND and ACK). Bit 30 of
 * ptl_md_t options (PTL_IOVEC is bit 31); PtlMDBind() refuses it from a
 * spinnic that predates it.
 */
#define SPIN_MD_STAGE (1u << 30)

/* ---- streaming and processed puts (paper 000 §3.1) -------------------- */

/** Handle of an open streaming put (a ptl_handle_any_t). */
typedef ptl_handle_any_t spin_handle_sput_t;

/** Streaming puts a process may have open at once. */
#define SPIN_SPUT_MAX 64

/**
 * Start a streaming put: one message of @p total_length bytes whose data
 * is handed in pieces, this call's piece first, then PtlSPutStream()
 * calls. The target sees one ordinary put (one match, one PUT event, one
 * ACK); the initiator gets one SEND (and ACK) for the whole message on
 * the EQ/CT of this call's MD.
 *
 * Semantics:
 * - Pieces are any size, including 0 and sizes that do not fill a packet:
 *   the NIC builds a packet once the pieces cover it (a full payload, or
 *   the message's last bytes), so packets leave while later pieces are
 *   still being found; piece boundaries never show on the wire.
 * - The message ends when the pieces reach @p total_length (a piece that
 *   does so ends it, EOM or not). A piece that would pass it, or EOM on a
 *   piece that leaves it short, is refused with PTL_ARG_INVALID and
 *   changes nothing: the stream stays open for a correct piece.
 * - The bytes of every piece must stay unchanged until SEND (they are
 *   read when their packet is built, and again to retransmit).
 * - If the process exits (or crashes) mid-stream, the NIC forgets the
 *   stream; the target drops the partial message when it times out, and
 *   nothing is leaked on either side.
 * - A stream whose message already failed on the NIC (its SEND carries
 *   the ni_fail) takes its remaining pieces and discards them.
 * @param md_handle MD holding this piece (its EQ/CT get the events).
 * @param local_offset piece offset in the MD.
 * @param length piece bytes (may be 0; at most @p total_length).
 * @param total_length bytes of the message (<= max_msg_size).
 * @param ack_req, target_id, pt_index, match_bits, remote_offset,
 *   user_ptr, hdr_data as PtlPut().
 * @param sput_p receives the stream handle (already finished when
 *   @p length == @p total_length).
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad MD or range, lengths,
 *   target, PT, ack_req, NULL sput_p); PTL_NO_SPACE (SPIN_SPUT_MAX
 *   streams open); PTL_FAIL (NIC gone).
 */
int PtlSPutStart(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		 ptl_size_t length, ptl_size_t total_length,
		 ptl_ack_req_t ack_req, ptl_process_t target_id,
		 ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		 ptl_size_t remote_offset, void *user_ptr,
		 ptl_hdr_data_t hdr_data, spin_handle_sput_t *sput_p);

/**
 * Hand the next piece of a streaming put (see PtlSPutStart()).
 * @param sput the stream.
 * @param md_handle MD holding the piece (any MD of the same NI).
 * @param local_offset piece offset in the MD.
 * @param length piece bytes (may be 0).
 * @param eom non-zero: this piece ends the message (it must bring the
 *   bytes handed to exactly the declared length).
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (unknown or finished
 *   stream, bad MD or range, piece past the declared length, EOM short of
 *   it; nothing is sent); PTL_FAIL (NIC gone).
 */
int PtlSPutStream(spin_handle_sput_t sput, ptl_handle_md_t md_handle,
		  ptl_size_t local_offset, ptl_size_t length, int eom);

/**
 * Outbound sPIN put: send @p count elements of a datatype from the
 * non-contiguous buffer at @p local_offset of the MD (MPI's buf origin)
 * as one contiguous (packed) message of @p length bytes, without packing
 * on the host: the NIC packs each packet's bytes by the type from host
 * memory as it builds the packet (paper 000 §3.1.2). The target sees an
 * ordinary put of the packed bytes, exactly what ddt_pack() + PtlPut()
 * would send.
 * @param md_handle MD covering every byte the @p count elements touch.
 * @param local_offset the buffer origin in the MD.
 * @param type NIC memory blob holding the type serialized by
 *   ddt_serialize() (spin_nicmem_alloc() + spin_nicmem_write(); the whole
 *   blob is the type); it may be freed once SEND arrived.
 * @param count elements.
 * @param length the packed bytes: ddt_size() * count.
 * @param ack_req, target_id, pt_index, match_bits, remote_offset,
 *   user_ptr, hdr_data as PtlPut().
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad MD, offset, blob,
 *   target, PT, ack_req; length over max_msg_size); PTL_FAIL (NIC gone).
 *   What only the NIC can check comes as a SEND event with ni_fail_type
 *   PTL_NI_OP_VIOLATION (the blob is not a valid type of this process, or
 *   @p length is not its size times @p count) or PTL_NI_SEGV (the
 *   elements reach outside the MD), and nothing is sent.
 */
int PtlProcessPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		  spin_handle_nicmem_t type, ptl_size_t count,
		  ptl_size_t length, ptl_ack_req_t ack_req,
		  ptl_process_t target_id, ptl_pt_index_t pt_index,
		  ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		  void *user_ptr, ptl_hdr_data_t hdr_data);

/**
 * Name of a PTL_* return code ("PTL_OK", "PTL_ARG_INVALID", ...).
 * @param rc a return code.
 * @return a static string ("PTL_UNKNOWN" for values out of range).
 */
const char *spin_strerror(int rc);

/* ---------------------------------------------------------------------- */
/* Typed receives: datatype offload (DESIGN §7, paper 000 §3.2.6)          */
/* ---------------------------------------------------------------------- */

struct ddt_type;

/**
 * How a typed message is received. SPIN_TYPE_AUTO chooses by layout
 * (ddt_classify() of count elements): contiguous -> SPIN_TYPE_CONTIG (a
 * plain ME on the data, no handler); vector/hvector or indexed-block ->
 * SPIN_TYPE_SPECIALIZED ("ddt_vector", "ddt_iblock"); anything else ->
 * SPIN_TYPE_RW_CP ("ddt_general", blocked-RR, Δr from paper 000's model
 * via ddt_ckpt_select_interval()). The environment variable
 * SPINNIC_DDT_STRATEGY=host|iovec|specialized|hpu-local|ro-cp|rw-cp
 * replaces SPIN_TYPE_AUTO (benchmarks); an explicit strategy wins over it.
 */
enum spin_type_strategy {
	SPIN_TYPE_AUTO = 0,     /**< by layout, or SPINNIC_DDT_STRATEGY */
	SPIN_TYPE_HOST,         /**< contiguous staging receive, unpacked on
				     the host by spin_typed_recv_complete() */
	SPIN_TYPE_IOVEC,        /**< "ddt_iovec": the NIC scatters by the
				     flattened block list (NIC memory blob) */
	SPIN_TYPE_SPECIALIZED,  /**< "ddt_vector" or "ddt_iblock" */
	SPIN_TYPE_HPU_LOCAL,    /**< "ddt_general", one segment per vHPU */
	SPIN_TYPE_RO_CP,        /**< "ddt_general", read-only checkpoints */
	SPIN_TYPE_RW_CP,        /**< "ddt_general", read-write checkpoints */
	SPIN_TYPE_CONTIG,       /**< the data is contiguous: plain ME */
	SPIN_TYPE_COUNT,
};

/** A type prepared for offload on one NI (count elements of it). */
struct spin_type_offload;
/** A posted typed receive. */
struct spin_typed_recv;

/** Counters of the typed receives of this process (all NIs). */
struct spin_type_stats {
	uint64_t offloaded;     /**< receives posted with a NIC strategy
				     (or SPIN_TYPE_CONTIG) */
	uint64_t host;          /**< receives posted as SPIN_TYPE_HOST by
				     choice */
	uint64_t fallbacks;     /**< receives that wanted the NIC and were
				     posted host-based: NIC memory short
				     even after evictions */
	uint64_t evictions;     /**< offloaded types whose NIC memory was
				     released for another (LRU) */
	uint64_t uploads;       /**< NIC uploads (contexts installed) */
	uint64_t unexpected;    /**< messages unpacked on the host from an
				     overflow buffer */
	uint64_t host_unpacks;  /**< host-based receives unpacked */
	uint64_t errors;        /**< completions that reported a failure */
	uint64_t nic_bytes;     /**< NIC memory held by offloaded types now
				     (arguments and blobs) */
};

/**
 * Prepare @p count elements of a committed type for typed receives on an
 * NI: classify it, choose the strategy and build what the NIC will need
 * (handler arguments, checkpoints, iovec list) in host memory. NIC memory
 * is taken at the first spin_me_append_typed() and kept for the next
 * ones until spin_type_offload_free(), or until another type needs the
 * room and no posted receive uses this one (least recently used first).
 * Why count is fixed here: every handler's arguments depend on it.
 * The type is referenced (ddt_ref()), the caller may free its own. Free
 * the prepared type before PtlNIFini() of its NI.
 * @param ni_handle a PTL_NI_MATCHING NI.
 * @param t committed type.
 * @param count elements (>= 0).
 * @param strategy SPIN_TYPE_AUTO or one to force (not SPIN_TYPE_COUNT).
 * @param off_p receives the prepared type.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad NI, type not
 *   committed, count < 0, the forced strategy cannot express the layout
 *   — SPIN_TYPE_SPECIALIZED for a general one, SPIN_TYPE_CONTIG for a
 *   non-contiguous one —, a bad SPINNIC_DDT_STRATEGY value, the type too
 *   large); PTL_NO_SPACE (host memory).
 */
int spin_type_offload(ptl_handle_ni_t ni_handle, const struct ddt_type *t,
		      int64_t count, enum spin_type_strategy strategy,
		      struct spin_type_offload **off_p);

/**
 * Release a prepared type and its NIC memory.
 * @param off the type (NULL is ignored: PTL_OK).
 * @return PTL_OK; PTL_IN_USE (posted receives still use it: nothing
 *   freed).
 */
int spin_type_offload_free(struct spin_type_offload *off);

/**
 * The strategy a prepared type uses (never SPIN_TYPE_AUTO).
 * @param off the type.
 * @return the strategy.
 */
enum spin_type_strategy
spin_type_offload_strategy(const struct spin_type_offload *off);

/**
 * Name of a strategy ("auto", "host", "iovec", "specialized",
 * "hpu-local", "ro-cp", "rw-cp", "contig"; "unknown").
 * @param s a strategy.
 * @return a static string.
 */
const char *spin_type_strategy_name(enum spin_type_strategy s);

/**
 * Post a typed receive: the message's packed stream lands unpacked at
 * @p buf (the MPI buffer origin). The entry is @p me with start and
 * length replaced (by the window of the type at @p buf, or a staging
 * buffer), PTL_ME_OP_PUT, PTL_ME_USE_ONCE, PTL_ME_EVENT_LINK_DISABLE and
 * PTL_ME_EVENT_UNLINK_DISABLE added (no event follows the completion).
 * A NIC strategy uploads the type's handler arguments and blobs
 * if needed; when NIC memory is short, least recently used prepared
 * types that no posted receive uses are released and the upload retried;
 * if it still fails the receive falls back to the host: a contiguous
 * staging buffer, unpacked by spin_typed_recv_complete() (counted in
 * fallbacks). Every event of the entry carries the receive as user_ptr:
 * pass its PTL_EVENT_PUT or PTL_EVENT_PUT_OVERFLOW event to
 * spin_typed_recv_complete().
 * @param ni_handle the NI of @p off.
 * @param pt_index the PT.
 * @param me match bits, ignore bits, match id, uid, ct_handle and
 *   options (not PTL_ME_OP_GET, PTL_ME_MANAGE_LOCAL, PTL_IOVEC,
 *   PTL_ME_EVENT_COMM_DISABLE, PTL_ME_EVENT_SUCCESS_DISABLE,
 *   PTL_ME_EVENT_OVER_DISABLE, PTL_ME_LOCAL_INC_UH_RLENGTH: the
 *   completion needs the event); start and length are ignored.
 * @param off the prepared type.
 * @param buf MPI buffer origin (any memory of the process).
 * @param user_ptr the caller's, returned by spin_typed_recv_complete().
 * @param r_p receives the posted receive.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad arguments or options,
 *   another NI); PTL_NO_SPACE (host memory, or the NIC's entry table);
 *   or another error of spin_me_append() / spin_ctx_install().
 */
int spin_me_append_typed(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			 const ptl_me_t *me, struct spin_type_offload *off,
			 void *buf, void *user_ptr,
			 struct spin_typed_recv **r_p);

/**
 * Post a typed receive without a prepared type: the library's layout
 * cache finds or creates the entry of (NI, type, count) — an equal type
 * created anew finds the same one — and chooses the strategy of this
 * receive (layout-aware, paper 001). SPINNIC_DDT_CHOOSER=aware (default:
 * a cost table; without one, paper 001's rule below) | threshold (paper
 * 001's Algorithm 1: the NIC only for an average block above 2 KiB, once
 * prepared) | static (the class rule of SPIN_TYPE_AUTO, prepared and
 * uploaded at the post as spin_me_append_typed() does). A layout's first
 * receives, and every one while its NIC form is being prepared, are
 * posted as SPIN_TYPE_HOST at once; a thread of the library prepares it
 * in the background (SPINNIC_DDT_PREP_THREAD=0: the next post does),
 * with aware from its second use (SPINNIC_DDT_GATE=second | eager: the
 * first | rent: once its uses repay the preparation). Receive times
 * refine aware's choice per layout, timed from the data's arrival by
 * spinnic's NIC time (spin_event_nic_time(); SPINNIC_DDT_NICTIME=off:
 * from the post, for comparison). SPINNIC_DDT_STRATEGY forces a strategy
 * as for spin_type_offload().
 * Otherwise the contract of spin_me_append_typed(); complete with
 * spin_typed_recv_complete(). The NI's entries are released by
 * spin_type_cache_flush(), or by PtlNIFini() of its last reference.
 * @param ni_handle a PTL_NI_MATCHING NI.
 * @param pt_index the PT.
 * @param me as for spin_me_append_typed().
 * @param t committed type (referenced by the cache).
 * @param count elements (>= 0).
 * @param buf MPI buffer origin (any memory of the process).
 * @param user_ptr the caller's, returned by spin_typed_recv_complete().
 * @param r_p receives the posted receive.
 * @return PTL_OK; PTL_NO_INIT; PTL_ARG_INVALID (bad arguments or options,
 *   type not committed, a bad SPINNIC_DDT_CHOOSER, SPINNIC_DDT_GATE,
 *   SPINNIC_DDT_NICTIME or SPINNIC_DDT_STRATEGY value, the type too
 *   large); PTL_NO_SPACE (host memory, or the NIC's entry table); or
 *   another error of spin_me_append() / spin_ctx_install().
 */
int spin_me_append_ddt(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		       const ptl_me_t *me, const struct ddt_type *t,
		       int64_t count, void *buf, void *user_ptr,
		       struct spin_typed_recv **r_p);

/**
 * Release the layout cache's entries of an NI (their prepared types and
 * NIC memory), after waiting for preparations in progress.
 * @param ni_handle the NI.
 * @return PTL_OK; PTL_ARG_INVALID (bad NI); PTL_IN_USE (posted receives
 *   still use some entries: those stay, the others are released).
 */
int spin_type_cache_flush(ptl_handle_ni_t ni_handle);

/**
 * Finish a typed receive on its PTL_EVENT_PUT (data delivered in place,
 * or in the staging buffer: unpacked now) or PTL_EVENT_PUT_OVERFLOW
 * event (the message was unexpected: unpacked on the host from where it
 * landed, ev->start). A short message unpacks the first ev->mlength
 * bytes of the stream. The receive is freed (do not use @p r again),
 * whatever the result.
 * @param r the receive (the event's user_ptr).
 * @param ev its event.
 * @param user_ptr_p if not NULL, receives the caller's user_ptr.
 * @return PTL_OK; PTL_ARG_INVALID (NULL, an event of another kind or
 *   receive: nothing freed); PTL_FAIL (the event reports a failure, or
 *   more bytes than the type holds: data not placed, counted in errors).
 */
int spin_typed_recv_complete(struct spin_typed_recv *r, const ptl_event_t *ev,
			     void **user_ptr_p);

/**
 * The NIC's own time for the message of an event: from its first
 * packet's match to its completion (last DMA done, completion handler
 * run), as spinnic reports it in its event record (not in ptl_event_t).
 * Known for the last event this thread took from an EQ (PtlEQGet(),
 * PtlEQWait(), PtlEQPoll()) when it was posted at a message's completion
 * (a target PUT, GET, ATOMIC, ...); spin_typed_recv_complete() uses it
 * for the layout-aware chooser's samples.
 * @param ev the event, as the last take on this thread filled it.
 * @param ns_p receives the time, ns (>= 1; UINT32_MAX or more saturates).
 * @return PTL_OK; PTL_FAIL (no time: another event since, an event
 *   without one, a spinnic that does not report it); NULL: PTL_FAIL.
 */
int spin_event_nic_time(const ptl_event_t *ev, uint64_t *ns_p);

/**
 * Unlink a typed receive that has not matched a message, and free it.
 * @param r the receive.
 * @return PTL_OK; PTL_ARG_INVALID (NULL); PTL_IN_USE (it matched: its
 *   event will come, complete it then); another PtlMEUnlink() error.
 */
int spin_typed_recv_cancel(struct spin_typed_recv *r);

/**
 * The strategy a posted receive took (SPIN_TYPE_HOST after a fallback).
 * @param r the receive.
 * @return the strategy.
 */
enum spin_type_strategy
spin_typed_recv_strategy(const struct spin_typed_recv *r);

/**
 * Unpack a packed stream found elsewhere (an unexpected message that
 * PtlMESearch() found in an overflow buffer) into @p buf on the host.
 * Counted in unexpected.
 * @param off the prepared type.
 * @param src the first @p len bytes of the packed stream.
 * @param len bytes (<= the type's packed size).
 * @param buf MPI buffer origin.
 * @return PTL_OK; PTL_ARG_INVALID (NULL, len too large).
 */
int spin_type_unpack(const struct spin_type_offload *off, const void *src,
		     size_t len, void *buf);

/**
 * Counters of the typed receives of this process.
 * @param s_p receives them.
 */
void spin_type_stats(struct spin_type_stats *s_p);

/** Counters of the layout cache behind spin_me_append_ddt() (all NIs of
 *  this process, since its first typed receive). */
struct spin_type_cache_stats {
	uint64_t hits;          /**< posts that found their layout's entry
				     (an equal type created anew included) */
	uint64_t misses;        /**< posts that created an entry */
	uint64_t evictions;     /**< idle entries dropped over the bounds
				     (least recently used first) */
	uint64_t entries;       /**< entries now */
	uint64_t bytes;         /**< host bytes of the entries' prepared NIC
				     arguments now */
	uint64_t prep_queued;   /**< preparations handed to the background
				     (a reload after the NIC took the memory
				     back included) */
	uint64_t prep_done;     /**< preparations that made a layout ready */
	uint64_t prep_failed;   /**< preparations that failed (the layout
				     stays on the host, retried later) */
	uint64_t host_choices;  /**< posts by the host path (a contiguous
				     layout's plain entry included) */
	uint64_t nic_choices;   /**< posts by a prepared NIC strategy */
	uint64_t host_while_preparing; /**< host posts of a layout whose
				     preparation was queued or running */
	uint64_t explorations;  /**< posts sent to the path not chosen, to
				     measure it again */
	uint64_t samples;       /**< receive times taken into the layouts'
				     estimates */
	uint64_t nic_timed;     /**< ... of them timed from the data's
				     arrival by spinnic's NIC time
				     (spin_event_nic_time()), not from the
				     post */
};

/**
 * Counters of the layout cache (spin_me_append_ddt()). The posts of
 * SPINNIC_DDT_CHOOSER=static and of a forced SPINNIC_DDT_STRATEGY (their
 * object built at the entry's creation, uploaded at the post) count in
 * hits and misses only.
 * @param s_p receives them (not NULL).
 */
void spin_type_cache_stats(struct spin_type_cache_stats *s_p);

#ifdef __cplusplus
}
#endif

#endif
