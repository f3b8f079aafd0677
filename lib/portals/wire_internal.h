/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Between wire.c (framing, libc only) and wire_auth.c (the MAC, on
 * libcrypto): not installed.
 */
#ifndef SPINNIC_WIRE_INTERNAL_H
#define SPINNIC_WIRE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct evp_cipher_ctx_st;

/** A MAC context (wire.h: struct spinnic_wire_auth). */
struct spinnic_wire_auth {
	struct evp_cipher_ctx_st *ctx; /**< AES-256-GCM, keyed; per frame
					    only the IV changes */
	uint64_t next_ctr;             /**< counter of the next frame sealed */
};

/** GCM's 96-bit IV: source nid (4 bytes), frame counter (8), big-endian. */
#define WIRE_AUTH_IV_LEN 12u

/**
 * GMAC tag of @p len bytes at @p data under @p iv.
 * @return 0, -EIO (libcrypto failed)
 */
int wire_auth_tag(struct spinnic_wire_auth *a,
		  const uint8_t iv[WIRE_AUTH_IV_LEN], const uint8_t *data,
		  size_t len, uint8_t tag_p[SPINNIC_WIRE_AUTH_TAG_LEN]);

/**
 * Check a tag (constant time).
 * @return 0 when @p tag is the GMAC of the data, -1 otherwise
 */
int wire_auth_verify(struct spinnic_wire_auth *a,
		     const uint8_t iv[WIRE_AUTH_IV_LEN], const uint8_t *data,
		     size_t len, const uint8_t tag[SPINNIC_WIRE_AUTH_TAG_LEN]);

#endif
