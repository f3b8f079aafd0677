/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The authenticated wire's key for fuzzing (fuzz_wire.c, and fuzz_gen.c for
 * the sealed seeds corpus/wire/NN-auth-...): a fixed, public secret.
 */
#ifndef FUZZ_WIRE_KEY_H
#define FUZZ_WIRE_KEY_H

#include <stdint.h>
#include <stdlib.h>

#include "wire.h"
#include "wire_internal.h" /* the counter, reset for deterministic frames */

/* A MAC context under the fuzz key whose next frame counter is 1: seeds
 * and runs seal the same bytes every time (IV reuse does not matter
 * here: nothing is secret). */
static inline struct spinnic_wire_auth *
fz_wire_auth(void)
{
	static const char secret[] = "spinnic fuzz wire secret: public on purpose";
	static struct spinnic_wire_auth *a;

	if (a == NULL) {
		uint8_t key[SPINNIC_WIRE_KEY_LEN];

		if (spinnic_wire_key_derive(secret, sizeof(secret) - 1,
					    key) != 0)
			abort();
		a = spinnic_wire_auth_create(key);
		if (a == NULL)
			abort();
	}
	a->next_ctr = 1;
	return a;
}

#endif
