/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * histogram.h: what the "histogram" handler family and its client share:
 * the argument block the client installs with the execution context, and
 * the result the completion handler writes to the host.
 */
#ifndef HISTOGRAM_H
#define HISTOGRAM_H

#include <assert.h>
#include <stdint.h>

/** The family name a client asks for in spin_ctx_install(). */
#define HISTOGRAM_FAMILY "histogram"
#define HISTOGRAM_ARGS_VERSION 1u

/**
 * The filter: a packet whose first 4 bytes, read as a little-endian
 * uint32 w, satisfy (w & drop_mask) == drop_value is dropped; the others
 * land in the ME's buffer at their offset in the message. drop_mask 0:
 * nothing is dropped. Packets shorter than 4 bytes are never dropped.
 */
struct histogram_args {
	uint32_t version;     /**< HISTOGRAM_ARGS_VERSION */
	uint32_t drop_mask;
	uint32_t drop_value;  /**< no bit outside drop_mask */
	uint32_t pad;         /**< 0 */
};
static_assert(sizeof(struct histogram_args) == 16, "histogram args");

/**
 * The context's state in NIC memory, and what the completion handler
 * writes to the ME's buffer right after the message (at offset = message
 * length): counts since the context was installed.
 */
struct histogram_result {
	uint64_t bins[256];     /**< bytes of each value, in every packet
				     (kept or dropped) */
	uint64_t pkts_kept;     /**< packets written to the host */
	uint64_t pkts_dropped;  /**< packets the filter dropped */
};
static_assert(sizeof(struct histogram_result) == 2064, "histogram result");

#endif
