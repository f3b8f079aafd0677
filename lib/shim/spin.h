/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin.h
 * sPIN additions to the Portals 4 API (DESIGN §6, §8): host-region memory,
 * execution contexts (packet handlers attached to an ME), NIC memory
 * blobs for handlers, and NIC information. Part of libspinnic; every
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

/**
 * Name of a PTL_* return code ("PTL_OK", "PTL_ARG_INVALID", ...).
 * @param rc a return code.
 * @return a static string ("PTL_UNKNOWN" for values out of range).
 */
const char *spin_strerror(int rc);

#ifdef __cplusplus
}
#endif

#endif
