/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks and input reading shared by every fuzz target (libc only). */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* a fuzz check failed: report and abort (libFuzzer saves the input) */
#define FZ_CHECK(cond)                                                    \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n",      \
				__FILE__, __LINE__, #cond);               \
			abort();                                          \
		}                                                         \
	} while (0)

/* little-endian reader over the fuzz input */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t
fz_take(struct fz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		if (in->n == 0)
			break;
		v |= (uint64_t)in->p[0] << (8 * i);
		in->p++;
		in->n--;
	}
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
