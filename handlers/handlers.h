/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The families of handlers/, one per file, collected in handlers.c's
 * spin_handler_families[] (declared in spin_handler.h). Not installed.
 */
#ifndef SPIN_HANDLERS_H
#define SPIN_HANDLERS_H

#include <stdint.h>

#include "spin_handler.h"

extern const struct spin_handler_family spin_handlers_checksum;
extern const struct spin_handler_family spin_handlers_ddt_vector;
extern const struct spin_handler_family spin_handlers_ddt_iblock;
extern const struct spin_handler_family spin_handlers_ddt_general;
extern const struct spin_handler_family spin_handlers_ddt_iovec;
extern const struct spin_handler_family spin_handlers_ddt_gather;

/** The first bytes (up to 1 KiB) of a packet's payload on their way to
 *  the cache: what the runtime does for packets it runs one by one, for a
 *  burst handler to do a couple of packets ahead. */
static inline void
handlers_prefetch(const struct spin_pkt *pkt)
{
	uint32_t n = pkt->len < 1024 ? pkt->len : 1024;

	for (uint32_t o = 0; o < n; o += 64)
		__builtin_prefetch(pkt->payload + o);
}

/** |v| as an unsigned number (INT64_MIN included). */
static inline uint64_t
handlers_mag(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/**
 * a / d and a % d; shifts when d is a power of two (sizes often are).
 * @param d divisor, > 0
 * @param rem_p a % d
 * @return a / d
 */
static inline uint64_t
handlers_div_rem(uint64_t a, uint64_t d, uint64_t *rem_p)
{
	if ((d & (d - 1)) == 0) {
		*rem_p = a & (d - 1);
		return a >> __builtin_ctzll(d);
	}
	*rem_p = a % d;
	return a / d;
}

struct ddt_blob;

/**
 * The validated type blob in the arguments (struct spin_ddt_args) of a
 * ddt family: ddt_blob_load() once per context, the view then kept in
 * *view (in the context's state; 0: not yet, else its offset in the
 * arguments + 1), so later packets only read it.
 * @return the blob, or NULL when it does not load
 */
const struct ddt_blob *spin_ddt_args_blob(struct spin_hctx *h,
					  uint64_t *view);

#endif
