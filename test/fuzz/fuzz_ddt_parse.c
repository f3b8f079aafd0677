/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: type expressions (ddt_parse, DESIGN §7). The input is the
 * expression text. A rejected one must say where and why ("at position N:
 * ..."). An accepted one must print and parse back to an equal type, and
 * once committed, serialize into a blob that ddt_blob_load accepts and
 * that describes the same type; the blob is then used as the NIC would
 * (fuzz_ddt_use.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "fuzz_check.h"
#include "fuzz_ddt_use.h"

static char printed[1 << 14];
static uint64_t blob[1 << 14];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ddt_blob *b;
	struct ddt_type *t, *u;
	const char *err = NULL;
	char *e;
	ssize_t bl;
	int n, eq;

	if (size > 4096)
		return 0;
	e = malloc(size + 1);
	if (e == NULL)
		return 0;
	memcpy(e, data, size);
	e[size] = 0;
	t = ddt_parse(e, &err);
	free(e);
	if (t == NULL) {
		FZ_CHECK(err != NULL && strncmp(err, "at position ", 12) == 0);
		return 0;
	}
	n = ddt_print(t, printed, sizeof(printed));
	FZ_CHECK(n > 0);
	if (n < (int)sizeof(printed)) {
		u = ddt_parse(printed, &err);
		FZ_CHECK(u != NULL);
		FZ_CHECK(ddt_equal(t, u) == 1);
		ddt_free(u);
	}
	if (ddt_commit(t) != 0)
		goto out;
	bl = ddt_serialize(t, NULL, 0);
	if (bl > 0 && (size_t)bl <= sizeof(blob)) {
		FZ_CHECK(ddt_serialize(t, blob, sizeof(blob)) == bl);
		FZ_CHECK(ddt_blob_load(blob, (size_t)bl, &b) == 0);
		FZ_CHECK(ddt_blob_size(b) == ddt_size(t));
		FZ_CHECK(ddt_blob_extent(b) == ddt_extent(t));
		u = ddt_blob_to_type(b);
		FZ_CHECK(u != NULL);
		/* equal, or too large to walk when the dataloops differ */
		eq = ddt_equal(t, u);
		FZ_CHECK(eq == 1 ||
			 (eq == -E2BIG && ddt_size(t) > ((int64_t)16 << 30)));
		ddt_free(u);
		fz_ddt_use_blob(b, (uint64_t)size * 0x9e3779b97f4a7c15ull);
	}
out:
	ddt_free(t);
	return 0;
}
