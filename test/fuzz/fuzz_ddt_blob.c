/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: serialized types (ddt_blob_load, DESIGN §7), as a client
 * would write them into NIC memory. The input is the blob; it is loaded
 * twice: as is (the checksum usually rejects a mutated blob), then with
 * its checksum recomputed, so the structure checks are fuzzed without the
 * checksum's help. Every accepted blob is used as the NIC would
 * (fuzz_ddt_use.h): a crash or a block outside the declared span there is
 * a validation hole in ddt_blob_load.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "ddt_internal.h"
#include "fuzz_check.h"
#include "fuzz_ddt_use.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ddt_blob *b;
	uint64_t *buf;
	size_t words = (size + 7) / 8;

	if (size > (1 << 16))
		return 0;
	/* 8-byte aligned, exact size rounded to a word: ASan sees overreads */
	buf = malloc(words ? words * 8 : 8);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (ddt_blob_load(buf, size, &b) == 0)
		fz_ddt_use_blob(b, size);
	else
		FZ_CHECK(ddt_blob_error()[0] != 0);
	if (size >= sizeof(struct ddt_blob_hdr)) {
		struct ddt_blob_hdr *h = (struct ddt_blob_hdr *)buf;

		if (h->len <= size) {
			h->checksum = ddt_blob_checksum(buf, h->len);
			if (ddt_blob_load(buf, size, &b) == 0)
				fz_ddt_use_blob(b, size ^ h->checksum);
		}
	}
	free(buf);
	return 0;
}
