/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_put.h: what the "reduce_put" handler family and its client share,
 * the argument block the client installs with the execution context.
 * Fixed-width and pointer-free: the client builds it, spinnic copies it
 * into NIC memory, the handlers read it there.
 */
#ifndef REDUCE_PUT_H
#define REDUCE_PUT_H

#include <assert.h>
#include <stdint.h>

/** The family name a client asks for in spin_ctx_install(). */
#define REDUCE_PUT_FAMILY "reduce_put"
#define REDUCE_PUT_ARGS_VERSION 1u

/**
 * A message is an array of int32s (host byte order). Its sum, an int64,
 * is put (8 bytes) to the peer below once the whole message arrived.
 */
struct reduce_put_args {
	uint32_t version;     /**< REDUCE_PUT_ARGS_VERSION */
	uint32_t peer_nid;    /**< where the total goes */
	uint32_t peer_pid;
	uint32_t peer_pt;     /**< portal index at the peer */
	uint64_t match_bits;  /**< of the peer's ME for the total */
};
static_assert(sizeof(struct reduce_put_args) == 24, "reduce_put args");

#endif
