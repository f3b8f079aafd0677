/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_handler.h
 * The sPIN handler API (DESIGN §6): what a packet handler may use, built
 * into spinnic (handlers/) or loaded as a plugin (spinnic --handlers, see
 * "Plugins" below). Self-contained: it includes <stddef.h> and
 * <stdint.h> only, and handlers include nothing else from spinnic.
 * Installed in <includedir>/spinnic; `pkg-config --cflags
 * spinnic-handler` puts that folder on the include path (in a build tree:
 * PKG_CONFIG_PATH=build/meson-uninstalled), so write
 * #include <spin_handler.h>.
 *
 * A handler family is a name plus up to four callbacks run by the HPUs of
 * the NIC for every message that matches an ME carrying an execution
 * context of that family:
 *  - header(hdr, h): once per message, before any payload handler; runs on
 *    the header fields of the first packet to arrive (every packet carries
 *    them all, so any packet may be the first);
 *  - payload(pkt, h): once per packet, in parallel on any HPU (default
 *    policy) or serialized per Δp-packet sequence on a vHPU (blocked-RR);
 *    packets of a message may arrive and run in any order;
 *  - completion(done, h): once, after every payload handler returned and
 *    every DMA it issued finished;
 *  - outbound(pkt, h): the sender side (paper 000 §3.1): builds the
 *    payload of one outgoing packet of a message, per job the NIC's
 *    outbound engine submits (spin_out_submit(), spin_rt.h), in parallel
 *    on any HPU. Its host window is the initiator's memory descriptor,
 *    read-only: spin_dma_from_host() reads it, every call that would
 *    write the host or send is refused (-EPERM / -ENOTSUP).
 * (and access(rec, h), below: an Active Access log's records.)
 * Any callback may be NULL, but not all of them; without a payload handler
 * every packet takes the non-processing path (copied to the window at its
 * message offset).
 *
 * Return codes (modelled on sPIN; any other value counts as SPIN_ERROR):
 * SPIN_SUCCESS; SPIN_DROP (header: drop the message, no payload or
 * completion handler runs; payload: drop this packet); SPIN_PROCEED
 * (header: the whole message takes the non-processing path, payload
 * copied to the window at its offset, no completion handler; payload:
 * this packet takes the non-processing path); SPIN_ERROR (counted, the
 * message completes with an error status).
 *
 * Every invocation is timed and counted per family and context (spinnic
 * telemetry /spinnic/handlers; spin_rt.h "handler statistics"); one that
 * runs longer than spinnic's --handler-budget-us is counted and logged,
 * never stopped.
 *
 * Memory a handler sees:
 *  - the packet payload, in place in NIC packet memory, valid only while
 *    the payload handler runs;
 *  - the context's NIC memory: the arguments the client installed
 *    (read-only by convention) and a zeroed state area shared by every
 *    handler of the context, for every message that uses it;
 *  - the host window: the matched ME's buffer [0, win_len), reached only
 *    through the DMA calls below, each bounds-checked (out of window:
 *    rejected, counted, and the message completes with an error).
 *
 * Rules. A handler runs on an HPU, a polling lcore that also serves every
 * other message, context and client of the NIC; while it runs, nothing
 * else runs on that HPU. So:
 *  - It blocks on nothing. No system calls (no I/O, no sleeping, no
 *    malloc()/free(), which may take locks or call the kernel, no
 *    printing), no waiting for another handler, and no lock held across
 *    a return. The DMA calls below are the only waits, and they are
 *    bounded. It returns in a time proportional to its packet.
 *  - It touches only: the packet (pkt->payload, valid during that call),
 *    the context's arguments, state and NIC memory blobs
 *    (spin_hctx_args(), spin_hctx_state(), spin_nicmem_map()), its own
 *    stack, and its own read-only data. The host window only through the
 *    DMA calls. Pointers it was given die when the call returns: keep
 *    offsets, never pointers, in the state.
 *  - What runs concurrently: the payload handlers of one message, in
 *    parallel on several HPUs (one at a time per vHPU under blocked-RR);
 *    header, payload and completion handlers of other messages of the
 *    same context, and of other contexts; outbound handlers, in parallel
 *    with each other and with all of these. Ordered: a message's header
 *    handler before its payload handlers, its completion handler after
 *    all of them and their DMAs. The state area is shared by all of it:
 *    update it with spin_nic_fetch_add() / spin_nic_cas() or with C11
 *    atomics, never with plain read-modify-write (unless
 *    spin_hctx_nhpu() is 1).
 *  - Callbacks are reentrant: the same function runs on several HPUs at
 *    once, with a different struct spin_hctx each. Mutable globals or
 *    statics shared across calls are the handler's to synchronize
 *    (atomics only: no locks); it is simpler to keep everything in the
 *    context state. Call the spin_* functions only from inside a
 *    callback, with the struct spin_hctx that call was given.
 *  - It never ends the process, jumps out of a callback (longjmp, C++
 *    exceptions), changes signal dispositions or masks, or closes file
 *    descriptors it did not open.
 *  - init() runs on the control thread at install: it may not block
 *    either (every client's control requests wait for it).
 * A handler that breaks them does not corrupt a client's memory through
 * the API (every DMA is checked), but it can stall or crash the NIC: a
 * plugin runs inside spinnic, with spinnic's rights (doc/NOTES.md,
 * "Handler plugins: trust").
 *
 * Plugins. Families built outside spinnic live in a shared object that
 * defines them and lists them once with SPIN_HANDLER_PLUGIN():
 *
 *   cc -shared -fPIC $(pkg-config --cflags spinnic-handler) my.c -o my.so
 *   spinnic ... --handlers my.so
 *
 * (or --handlers DIR: the files of DIR named *.so, in name order).
 *
 * A plugin links nothing: its calls to the functions declared here are
 * resolved against the spinnic executable when it loads, which exports
 * exactly these (not spin_dma_window() and spin_dma_account(): a plugin
 * that calls them is refused at load). It may call libc functions that
 * keep the rules (memcpy(), memset(), string and math functions). Clients
 * select a plugin's family by name exactly like a built-in one. spinnic
 * refuses a plugin, with one line naming the file and the reason, whose
 * SPIN_HANDLER_ABI_VERSION differs from its own, that lists no family or
 * more than SPIN_HANDLER_PLUGIN_FAMILIES_MAX, one failing the rules of
 * struct spin_handler_family, or one whose name is taken (built in or an
 * earlier plugin's). It also refuses a file that someone other than root
 * or spinnic's user owns or may write (see doc/NOTES.md).
 */
#ifndef SPIN_HANDLER_H
#define SPIN_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Handler return codes. */
enum spin_rc {
	SPIN_SUCCESS = 0, /**< done */
	SPIN_DROP = 1,    /**< drop the message (header) or the packet */
	SPIN_PROCEED = 2, /**< hand to the non-processing path */
	SPIN_ERROR = 3,   /**< failed: counted, message status error */
};

/** vHPU id of a handler not running under blocked-RR. */
#define SPIN_VHPU_NONE UINT32_MAX

/** DMA flag: no host event for this transfer (sPIN NO_EVENT). */
#define SPIN_DMA_NO_EVENT 0x1u

/**
 * Header fields of a message; every packet carries them, the runtime keeps
 * the copy taken from the first packet to arrive.
 */
struct spin_msg_info {
	uint32_t src_nid;        /**< initiator node id */
	uint32_t src_pid;        /**< initiator process id */
	uint32_t uid;            /**< initiator user id */
	uint32_t pt_index;       /**< target portal index */
	uint64_t match_bits;
	uint64_t hdr_data;
	uint64_t length;         /**< message payload bytes (all packets) */
	uint64_t remote_offset;  /**< Portals remote offset */
	uint64_t msg_id;         /**< message id (unique per source node) */
	uint32_t op;             /**< wire operation (put, ...) */
	uint32_t pkt_payload;    /**< payload bytes per packet, all but the
				      last; 0: the runtime's default */
};

/** Argument of a header handler. */
struct spin_hdr {
	const struct spin_msg_info *info;
};

/** Argument of a payload handler: one packet. */
struct spin_pkt {
	const uint8_t *payload;  /**< in NIC packet memory */
	uint32_t len;            /**< payload bytes */
	uint32_t index;          /**< packet index: offset / pkt_payload */
	uint64_t offset;         /**< byte offset of the payload in the
				      message (packed stream) */
	const struct spin_msg_info *info;
};

/** Argument of a completion handler. */
struct spin_done {
	const struct spin_msg_info *info;
	uint64_t bytes;          /**< payload bytes of the message */
	uint32_t npkts;          /**< packets processed */
	uint32_t errors;         /**< payload handlers that returned
				      SPIN_ERROR or had a DMA rejected */
	uint32_t dropped;        /**< payload handlers that returned
				      SPIN_DROP */
	uint32_t pad;
};

/** Argument of a sender-side (outbound) handler: one packet to build. */
struct spin_out_pkt {
	uint8_t *payload;        /**< the packet's payload in NIC packet
				      memory: fill len bytes */
	uint32_t len;            /**< payload bytes */
	uint32_t pad;
	uint64_t offset;         /**< byte offset of the payload in the
				      message (packed stream) */
	const struct spin_msg_info *info; /**< the message, or NULL when the
					       submitter gave none */
};

/**
 * Handler execution context: valid only during the call it is passed to.
 * Read it through the accessors; fields after `rt_priv` belong to the
 * runtime.
 */
struct spin_hctx {
	uint64_t win_addr;       /**< ME host window: client address */
	uint64_t win_len;        /**< ME host window bytes */
	void *args;              /**< context arguments in NIC memory */
	void *state;             /**< context state in NIC memory */
	uint32_t args_len;
	uint32_t state_len;
	uint32_t hpu;            /**< physical HPU running the handler */
	uint32_t vhpu;           /**< vHPU (blocked-RR) or SPIN_VHPU_NONE */
	const struct spin_msg_info *info;
	uint32_t nhpu;           /**< HPUs of the NIC */
	uint32_t pad;
	void *rt_priv[5];        /**< runtime private */
};

/*
 * Accessors of struct spin_hctx. Each takes the handler context @p h the
 * callback was given (valid during that call only) and cannot fail.
 */

/**
 * The message's header fields (a copy in NIC memory, valid during the
 * call).
 * @param h handler context
 * @return the header fields; NULL only in an outbound job submitted
 *   without a message
 */
static inline const struct spin_msg_info *
spin_hctx_info(const struct spin_hctx *h) { return h->info; }

/**
 * The arguments the client installed with the context, in NIC memory
 * (read-only by convention; the same bytes for every message).
 * @param h handler context
 * @return the argument bytes, NULL when there are none
 */
static inline const void *
spin_hctx_args(const struct spin_hctx *h) { return h->args; }

/**
 * Size of the context's arguments.
 * @param h handler context
 * @return the number of argument bytes (0: none)
 */
static inline uint32_t
spin_hctx_args_len(const struct spin_hctx *h) { return h->args_len; }

/**
 * The context's state area in NIC memory: zeroed at install, shared by
 * every handler of the context for every message, concurrently (see the
 * rules in the file comment).
 * @param h handler context
 * @return the state, NULL when the context has none
 */
static inline void *
spin_hctx_state(const struct spin_hctx *h) { return h->state; }

/**
 * Size of the context's state area.
 * @param h handler context
 * @return the number of state bytes (0: none)
 */
static inline uint32_t
spin_hctx_state_len(const struct spin_hctx *h) { return h->state_len; }

/**
 * Length of the host window: the DMA calls take offsets below it.
 * @param h handler context
 * @return the matched ME's window length (an outbound job: the
 *   initiator's memory descriptor length)
 */
static inline uint64_t
spin_hctx_win_len(const struct spin_hctx *h) { return h->win_len; }

/**
 * Start of the host window as the client sees it (for information: the
 * handler cannot dereference it; the DMA calls take window offsets).
 * @param h handler context
 * @return the window's client address
 */
static inline uint64_t
spin_hctx_win_addr(const struct spin_hctx *h) { return h->win_addr; }

/**
 * The physical HPU running the handler (an index for per-HPU slots in the
 * state: no two handlers run on one HPU at the same time).
 * @param h handler context
 * @return the HPU id, below spin_hctx_nhpu()
 */
static inline uint32_t
spin_hctx_hpu(const struct spin_hctx *h) { return h->hpu; }

/**
 * The virtual HPU of a payload handler under blocked-RR.
 * @param h handler context
 * @return the vHPU id (below the context's nvhpu), or SPIN_VHPU_NONE
 *   under the default policy and for header, completion and outbound
 *   handlers
 */
static inline uint32_t
spin_hctx_vhpu(const struct spin_hctx *h) { return h->vhpu; }

/**
 * The number of HPUs of the NIC. With one, no two handlers of the NIC
 * ever run at the same time: a handler may then claim shared state in NIC
 * memory with plain loads and stores instead of atomics.
 * @param h handler context
 * @return the number of HPUs (at least 1)
 */
static inline uint32_t
spin_hctx_nhpu(const struct spin_hctx *h) { return h->nhpu; }

/**
 * Write @p len bytes from NIC memory (or the packet) to the host window at
 * @p win_off and wait for the transfer.
 *
 * @param h handler context
 * @param win_off offset in the ME window
 * @param src source bytes
 * @param len bytes (0 is allowed: a pure event, as in paper 000 §3.2.2)
 * @param flags SPIN_DMA_NO_EVENT or 0 (0 counts one host event)
 * @return 0; -ERANGE out of window (rejected, counted, message error);
 *   -EIO the host copy failed (client memory gone); -EPERM from an
 *   outbound handler (its window is read-only).
 */
int spin_dma_to_host(struct spin_hctx *h, uint64_t win_off, const void *src,
		     size_t len, unsigned flags);

/**
 * Non-blocking spin_dma_to_host(): the handler may return before the
 * transfer finished; the completion handler runs only after it did (the
 * runtime counts outstanding DMAs per message). @p src must stay valid
 * until the handler returns. This emulator completes it synchronously.
 *
 * @param h handler context
 * @param win_off offset in the ME window
 * @param src source bytes, valid until the handler returns
 * @param len bytes (0: a pure event)
 * @param flags SPIN_DMA_NO_EVENT or 0
 * @return as spin_dma_to_host().
 */
int spin_dma_to_host_nb(struct spin_hctx *h, uint64_t win_off,
			const void *src, size_t len, unsigned flags);

/**
 * Strided non-blocking DMA (a 2D descriptor): @p n blocks of @p blocklen
 * bytes taken one after the other from @p src, block i written to the
 * window at win_off + i * stride (stride may be negative or smaller than
 * blocklen). One bounds check covers every block (the window is one
 * interval, so the first and the last block decide); a transfer with any
 * block out of the window writes nothing. Counts as @p n DMAs of
 * @p blocklen bytes and one host event (without SPIN_DMA_NO_EVENT).
 *
 * @param h handler context
 * @param win_off window offset of block 0
 * @param stride bytes from one block's window offset to the next's
 * @param src n * blocklen contiguous source bytes
 * @param blocklen bytes per block
 * @param n blocks
 * @param flags SPIN_DMA_NO_EVENT or 0
 * @return 0; -ERANGE a block out of window (rejected, counted once,
 *   message error); -EIO the host copy failed; -EPERM from an outbound
 *   handler.
 */
int spin_dma_to_host_strided_nb(struct spin_hctx *h, uint64_t win_off,
				int64_t stride, const void *src,
				size_t blocklen, uint64_t n, unsigned flags);

/**
 * The host window for a scatter DMA the handler drives itself, like a DMA
 * engine walking a descriptor list it builds as it goes (ddt_general
 * places a packet's blocks by its type this way, without one call per
 * block): the window's address in this process, its length in *len_p.
 * The handler must write only inside [0, *len_p) of it, and report what
 * it wrote with spin_dma_account(). Only handler families built into the
 * NIC may use it: spinnic does not export it to plugins (a plugin that
 * calls it is refused at load, "undefined symbol").
 *
 * @param h handler context
 * @param len_p receives the window length
 * @return the window, or NULL when it is not directly addressable here
 *   (then use spin_dma_to_host*, which reach it through the host) or
 *   not writable (an outbound job's window)
 */
void *spin_dma_window(struct spin_hctx *h, uint64_t *len_p);

/**
 * Count @p bytes written in @p ops pieces through spin_dma_window() as
 * non-blocking DMAs to the host (with @p flags as spin_dma_to_host_nb).
 * Built-in families only, like spin_dma_window().
 *
 * @param h handler context
 * @param bytes bytes written
 * @param ops pieces they were written in (DMA operations)
 * @param flags SPIN_DMA_NO_EVENT or 0 (one host event)
 */
void spin_dma_account(struct spin_hctx *h, uint64_t bytes, uint64_t ops,
		      unsigned flags);

/**
 * Read @p len bytes of the host window at @p win_off into @p dst and wait
 * for the transfer.
 *
 * @param h handler context
 * @param win_off offset in the window
 * @param dst destination in NIC memory (state, blob, stack)
 * @param len bytes
 * @return 0; -ERANGE out of window (rejected, counted, message error);
 *   -EIO the host copy failed.
 */
int spin_dma_from_host(struct spin_hctx *h, uint64_t win_off, void *dst,
		       size_t len);

/**
 * Atomically add @p v to the 8-byte word of the host window at @p win_off
 * (a PCIe FetchAdd). Atomic against Portals atomics on the same word and
 * against the other spin_host_* calls: region memory is updated with the
 * CPU's atomic instructions (so the client's own __atomic operations on
 * the word are coherent with it too), malloc'd memory under the same lock
 * the NIC's Portals atomics take there (not coherent with the client's
 * CPU; doc/NOTES.md "Active Access", handler atomics). From a message's
 * handler, a word on a page marked for Active Access is refused
 * (-EACCES): the marks decide what remote initiators do there, and an
 * atomic has no record to leave. From an `access` handler the word is
 * the log owner's own (no marks apply).
 *
 * @param h handler context
 * @param win_off offset in the window, a multiple of 8 (and the client
 *   address win_addr + win_off 8-aligned)
 * @param v addend (wraps modulo 2^64)
 * @param old_p if not NULL, receives the value before the addition
 * @return 0; -ERANGE outside the window or not 8-aligned (rejected,
 *   counted, message error); -EACCES a marked page (message handlers);
 *   -EIO the host memory is gone; -EPERM from an outbound handler.
 */
int spin_host_fetch_add(struct spin_hctx *h, uint64_t win_off, uint64_t v,
			uint64_t *old_p);

/**
 * Atomically replace the 8-byte word of the host window at @p win_off by
 * @p v (a PCIe Swap); atomic as spin_host_fetch_add().
 *
 * @param h handler context
 * @param win_off offset in the window, a multiple of 8
 * @param v the new value
 * @param old_p if not NULL, receives the value replaced
 * @return as spin_host_fetch_add().
 */
int spin_host_swap(struct spin_hctx *h, uint64_t win_off, uint64_t v,
		   uint64_t *old_p);

/**
 * Atomically replace the 8-byte word of the host window at @p win_off by
 * @p desired if it equals @p expected (a PCIe CAS); atomic as
 * spin_host_fetch_add().
 *
 * @param h handler context
 * @param win_off offset in the window, a multiple of 8
 * @param expected value to find
 * @param desired value to store
 * @param old_p if not NULL, receives the value found
 * @return 0 swapped; -EAGAIN not swapped (*old_p set); otherwise as
 *   spin_host_fetch_add().
 */
int spin_host_cas(struct spin_hctx *h, uint64_t win_off, uint64_t expected,
		  uint64_t desired, uint64_t *old_p);

/** Target of a put issued by a handler. */
struct spin_put_req {
	uint32_t nid, pid;       /**< target process */
	uint32_t pt_index;       /**< target portal index */
	uint32_t flags;          /**< reserved: 0 */
	uint64_t match_bits;
	uint64_t remote_offset;
	uint64_t hdr_data;
};

/**
 * Send @p len bytes from NIC memory (or the packet) as a new put.
 *
 * @param h handler context
 * @param req target
 * @param src bytes to send (copied before the call returns)
 * @param len bytes
 * @return 0; -ENOTSUP the NIC offers no handler puts, or an outbound
 *   handler called it; -ENOBUFS no packet memory now (retry or fail);
 *   -EINVAL bad target.
 */
int spin_put_from_nic(struct spin_hctx *h, const struct spin_put_req *req,
		      const void *src, size_t len);

/**
 * Send @p len bytes of the host window at @p win_off as a new put.
 *
 * @param h handler context
 * @param req target
 * @param win_off offset in the window
 * @param len bytes
 * @return 0; -ERANGE out of window (rejected, counted, message error);
 *   -ENOTSUP, -ENOBUFS, -EINVAL as spin_put_from_nic().
 */
int spin_put_from_host(struct spin_hctx *h, const struct spin_put_req *req,
		       uint64_t win_off, size_t len);

/**
 * Add @p n to the success count of the matched ME's counting event.
 *
 * @param h handler context
 * @param n amount
 * @return 0; -ENOENT the ME has no counter; -ENOTSUP not offered (or an
 *   outbound handler called it).
 */
int spin_ct_inc(struct spin_hctx *h, uint64_t n);

/**
 * Atomically add @p v to the uint64_t at @p state_off of the context state.
 *
 * @param h handler context
 * @param state_off byte offset in the state, a multiple of 8
 * @param v addend (wraps modulo 2^64)
 * @param old_p if not NULL, receives the value before the addition
 * @return 0; -ERANGE offset not 8-aligned or outside the state.
 */
int spin_nic_fetch_add(struct spin_hctx *h, uint64_t state_off, uint64_t v,
		       uint64_t *old_p);

/**
 * Atomically replace the uint64_t at @p state_off of the context state by
 * @p desired if it equals @p expected.
 *
 * @param h handler context
 * @param state_off byte offset in the state, a multiple of 8
 * @param expected value to find
 * @param desired value to store
 * @param old_p if not NULL, receives the value found
 * @return 0 swapped; -EAGAIN not swapped; -ERANGE offset not 8-aligned or
 *   outside the state.
 */
int spin_nic_cas(struct spin_hctx *h, uint64_t state_off, uint64_t expected,
		 uint64_t desired, uint64_t *old_p);

/**
 * Map a NIC memory blob (SPINNIC_CTRL_NICMEM_ALLOC) of the context's owner
 * for the rest of this handler call (at most SPIN_HCTX_MAX_BLOBS per
 * call). Handlers find blob handles in their arguments.
 *
 * @param h handler context
 * @param handle blob handle
 * @param len_p if not NULL, receives the blob size
 * @return the blob, or NULL: no such blob, another owner's, or too many.
 */
void *spin_nicmem_map(struct spin_hctx *h, uint32_t handle, uint64_t *len_p);

/** Most blobs one handler call may map. */
#define SPIN_HCTX_MAX_BLOBS 4

/* ---------------------------------------------------------------------- */
/* Families                                                                */
/* ---------------------------------------------------------------------- */

/**
 * Header handler: once per message, before its payload handlers.
 * @param hdr the message's header fields
 * @param h handler context
 * @return SPIN_SUCCESS; SPIN_DROP drop the message; SPIN_PROCEED the
 *   whole message takes the non-processing path; SPIN_ERROR
 */
typedef int (*spin_header_fn)(const struct spin_hdr *hdr, struct spin_hctx *h);

/**
 * Payload handler: once per packet, concurrently with the others of the
 * message.
 * @param pkt the packet (its payload valid during the call only)
 * @param h handler context
 * @return SPIN_SUCCESS; SPIN_DROP drop this packet; SPIN_PROCEED this
 *   packet takes the non-processing path; SPIN_ERROR
 */
typedef int (*spin_payload_fn)(const struct spin_pkt *pkt,
			       struct spin_hctx *h);

/** Most packets one payload_burst call gets. */
#define SPIN_PAYLOAD_BURST_MAX 16u

/**
 * Payload handler for several packets of one message at once (optional,
 * handler ABI 3): the runtime calls it instead of the payload handler
 * for 2 to SPIN_PAYLOAD_BURST_MAX packets of one message that an HPU
 * takes together, in the order the HPU would have run them one by one
 * (a vHPU's packets in its order, blocked-RR included; otherwise the
 * order they were queued in, which need not be stream order). Everything
 * said of the payload handler holds for each packet; one call saves the
 * runtime's per-packet work (context setup, counts) and lets a handler
 * share work between neighbouring packets (a window lookup, a tile of a
 * transpose). A family that sets it must set @c payload too: a packet
 * alone, and the calls the runtime times (one in
 * spin_rt_conf.handler_time_every, or all with a trace), go through
 * @c payload.
 *
 * @param pkts the packets (their payloads valid during the call only)
 * @param n how many, 2 to SPIN_PAYLOAD_BURST_MAX
 * @param rc out: each packet's outcome, as the payload handler returns
 *   it (SPIN_SUCCESS, SPIN_DROP, SPIN_PROCEED, SPIN_ERROR); a DMA of the
 *   call that was rejected or failed makes every SPIN_SUCCESS of the
 *   call SPIN_ERROR
 * @param h handler context (one for the call)
 */
typedef void (*spin_payload_burst_fn)(const struct spin_pkt *pkts,
				      unsigned n, int *rc,
				      struct spin_hctx *h);

/**
 * Completion handler: once per message, after every payload handler
 * returned and its DMAs finished.
 * @param done what the payload handlers did
 * @param h handler context
 * @return SPIN_SUCCESS; SPIN_ERROR the message completes with an error
 *   (SPIN_DROP and SPIN_PROCEED are counted, nothing more)
 */
typedef int (*spin_completion_fn)(const struct spin_done *done,
				  struct spin_hctx *h);

/**
 * Outbound (sender-side) handler: fill one packet of an outgoing message.
 * @param pkt the packet to fill
 * @param h handler context (window: the initiator's MD, read-only)
 * @return SPIN_SUCCESS; anything else fails the job
 */
typedef int (*spin_outbound_fn)(const struct spin_out_pkt *pkt,
				struct spin_hctx *h);

/**
 * One record of an Active Access log consumed on the NIC (doc/NOTES.md
 * "Active Access": a log created with an execution context whose family
 * has an `access` handler). The fields are the record's (struct
 * spinnic_aa_rec of the byte layout), checked by the NIC before the call.
 */
struct spin_access {
	uint16_t kind;       /**< 1 PUT_META ... 7 ATOMIC (never PAD) */
	uint16_t flags;      /**< bit 0 REDIRECTED, bit 1 HANDLER */
	uint32_t len;        /**< bytes at @c data (0 without data) */
	uint32_t mode;       /**< the page's bits at the access */
	uint32_t src_nid, src_pid; /**< the initiator */
	uint32_t pad;
	uint64_t addr;       /**< client address of the piece */
	uint64_t win_off;    /**< addr - window start; UINT64_MAX outside */
	uint64_t msg_id, msg_off, hdr_data;
	uint64_t pos;        /**< the record's byte position in its log */
	const uint8_t *data; /**< len bytes in NIC memory, valid during the
				  call */
};

/**
 * Access handler: once per record of a log bound to the context, in log
 * order (one record at a time per log), on an HPU. Its window is the one
 * given when the log was created. No message: spin_put_*() and
 * spin_ct_inc() return -ENOTSUP; the DMA and spin_host_* calls reach the
 * window (the log owner's memory, no marks apply).
 * @param a the record
 * @param h handler context
 * @return SPIN_SUCCESS; anything else is counted (the record is consumed
 *   all the same)
 */
typedef int (*spin_access_fn)(const struct spin_access *a,
			      struct spin_hctx *h);

/**
 * Bytes of a handler family name, including the terminating NUL (the
 * same as SPIN_HANDLER_NAME_MAX of the client header spin.h, and the
 * wire's SPINNIC_HANDLER_NAME).
 */
#define SPIN_HANDLER_NAME_MAX 48

/**
 * A handler family: one file in handlers/ (or a plugin), one entry in the
 * table. Checked when spinnic starts (spin_rt_create() for the built-in
 * table, --handlers for a plugin's): name set, shorter than
 * SPIN_HANDLER_NAME_MAX, printable ASCII without spaces, unique; at least
 * one of header, payload, completion, outbound and access set. The structure and
 * the name must stay valid while spinnic runs (static storage).
 */
struct spin_handler_family {
	const char *name;              /**< < SPIN_HANDLER_NAME_MAX (48)
					    bytes, unique; mandatory */
	spin_header_fn header;         /**< may be NULL */
	spin_payload_fn payload;       /**< may be NULL */
	spin_completion_fn completion; /**< may be NULL (not all four) */
	/**
	 * Optional: validate the client's arguments at install and size the
	 * state. Called from the control path, never concurrently with the
	 * handlers of the context being installed.
	 * @param args the client's argument bytes (NULL when none)
	 * @param args_len their number
	 * @param state_len_p in: bytes the client asked for; out: bytes the
	 *   family needs (the runtime allocates the larger)
	 * @return 0, or -EINVAL (install fails with PTL_ARG_INVALID)
	 */
	int (*init)(const void *args, uint32_t args_len,
		    uint32_t *state_len_p);
	/**
	 * Sender-side handler: fill pkt->payload with the packet's bytes
	 * (see the file comment). May be NULL: the context then takes no
	 * outbound job. SPIN_SUCCESS: the job succeeded; any other return,
	 * or a rejected or failed DMA, fails it.
	 */
	spin_outbound_fn outbound;
	/**
	 * Active Access consumer (handler ABI 2): run per record of a log
	 * created with a context of this family (see spin_access_fn). May
	 * be NULL: such a context cannot be bound to a log.
	 */
	spin_access_fn access;
	/**
	 * Payload handler for a burst of packets of one message (handler
	 * ABI 3; see spin_payload_burst_fn). May be NULL; when set,
	 * @c payload must be set too.
	 */
	spin_payload_burst_fn payload_burst;
};

/**
 * The families built into spinnic, NULL-terminated; defined in
 * handlers/handlers.c. The app passes it to spin_rt_create(), with the
 * families of --handlers plugins appended. spinnic's own: not exported
 * to plugins.
 */
extern const struct spin_handler_family *const spin_handler_families[];

/* ---------------------------------------------------------------------- */
/* Plugins: handler families built out of tree                             */
/* ---------------------------------------------------------------------- */

/**
 * ABI version of this header: the layout of the structures above and the
 * meaning of the calls. spinnic loads a plugin only when the plugin was
 * built against the same version (spinnic --handlers refuses it with one
 * line otherwise). Raised on any incompatible change.
 */
#define SPIN_HANDLER_ABI_VERSION 3u

/** Most families one plugin may define. */
#define SPIN_HANDLER_PLUGIN_FAMILIES_MAX 64u

/** What a plugin shared object exports, under the symbol name
 *  SPIN_HANDLER_PLUGIN_SYMBOL; define it with SPIN_HANDLER_PLUGIN(). */
struct spin_handler_plugin {
	uint32_t abi_version;   /**< SPIN_HANDLER_ABI_VERSION when built */
	uint32_t n_families;    /**< entries of @c families (1 to
				     SPIN_HANDLER_PLUGIN_FAMILIES_MAX) */
	const struct spin_handler_family *const *families; /**< none NULL */
};

/** Symbol spinnic looks up in a plugin (dlsym). */
#define SPIN_HANDLER_PLUGIN_SYMBOL "spin_handler_plugin"

/**
 * Define the plugin of this shared object: its handler families, by
 * address. Once per plugin, at file scope, e.g.
 *   SPIN_HANDLER_PLUGIN(&my_reduce_family, &my_filter_family);
 */
#define SPIN_HANDLER_PLUGIN(...)					\
	static const struct spin_handler_family *const			\
		spin_handler_plugin_families_[] = { __VA_ARGS__ };	\
	__attribute__((visibility("default")))				\
	const struct spin_handler_plugin spin_handler_plugin = {	\
		SPIN_HANDLER_ABI_VERSION,				\
		sizeof(spin_handler_plugin_families_) /			\
			sizeof(spin_handler_plugin_families_[0]),	\
		spin_handler_plugin_families_,				\
	}

#ifdef __cplusplus
}
#endif

#endif
