/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target for the two lib/ddt parsers that take outside input: type
 * expressions (ddt_parse) and serialized types (ddt_blob_load). The first
 * input byte picks the parser (even: expression, odd: blob).
 *
 * libFuzzer (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DSPINNIC_LIBFUZZER \
 *     -Ilib/ddt test/ddt/fuzz_ddt.c lib/ddt/[a-z]*.c -lm -o fuzz_ddt
 *   ./fuzz_ddt -max_total_time=60
 * Without libFuzzer (meson target test/ddt/fuzz_ddt): runs the files given
 * as arguments, or with none a fixed number of random and mutated inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "ddt_internal.h" /* to reseal mutated blobs with their checksum */

static uint64_t big_buf[1 << 14];

static int count_cb(void *arg, int64_t off, int64_t len, int64_t so)
{
	(void)off;
	(void)so;
	*(int64_t *)arg += len;
	return 0;
}

/* A type that was accepted must behave: print/parse round trip, and a
 * bounded segment run inside the declared span. */
static void use_blob(const struct ddt_blob *b)
{
	struct ddt_type *t = ddt_blob_to_type(b);
	int64_t size = ddt_blob_size(b);
	struct ddt_segment *s;

	ddt_free(t);
	if (size <= 0 || size > (1 << 16))
		return;
	s = ddt_segment_create_blob(b, 1);
	if (s == NULL)
		return;
	/* only the block stream: the typed span may be anywhere */
	{
		int64_t n = 0;

		if (ddt_segment_blocks(s, size / 2, size, count_cb, &n) != 0 ||
		    n != size - size / 2)
			abort();
	}
	ddt_segment_free(s);
}

static void fuzz_expr(const uint8_t *data, size_t size)
{
	char *e = malloc(size + 1);
	struct ddt_type *t, *u;
	const char *err;
	char out[4096];

	if (e == NULL)
		return;
	memcpy(e, data, size);
	e[size] = 0;
	t = ddt_parse(e, &err);
	free(e);
	if (t == NULL) {
		if (strncmp(err, "at position ", 12) != 0)
			abort();
		return;
	}
	if (ddt_print(t, out, sizeof(out)) < (int)sizeof(out)) {
		u = ddt_parse(out, NULL);
		if (u == NULL || !ddt_equal(t, u))
			abort();
		ddt_free(u);
	}
	if (ddt_commit(t) == 0 && ddt_size(t) <= (1 << 16)) {
		struct ddt_segment *s = ddt_segment_create(t, 1);
		int64_t n = 0;

		if (s != NULL &&
		    ddt_segment_blocks(s, 0, ddt_size(t), count_cb, &n) == 0 &&
		    n != ddt_size(t))
			abort();
		ddt_segment_free(s);
	}
	ddt_free(t);
}

static void fuzz_blob(const uint8_t *data, size_t size)
{
	const struct ddt_blob *b;

	if (size > sizeof(big_buf))
		return;
	memcpy(big_buf, data, size);
	if (ddt_blob_load(big_buf, size, &b) == 0)
		use_blob(b);
	/* the structure checks must hold without the checksum's help */
	if (size >= sizeof(struct ddt_blob_hdr)) {
		struct ddt_blob_hdr *h = (void *)big_buf;

		if (h->len <= size)
			h->checksum = ddt_blob_checksum(big_buf, h->len);
		if (ddt_blob_load(big_buf, size, &b) == 0)
			use_blob(b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_blob(data + 1, size - 1);
	else
		fuzz_expr(data + 1, size - 1);
	return 0;
}

#ifndef SPINNIC_LIBFUZZER
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	static const char *const seeds[] = {
		"vector(4,2,3)[struct(1,2;0,8)[double,resized(-4,16)[int32]]]",
		"subarray(4,5,6;2,3,1;1,2,3;F)[hindexed(1,2;-8,40)[int16]]",
		"indexed_block(2;5,0,9)[contig(3)[complex]]",
	};
	uint8_t buf[512];

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t n;

		if (f == NULL) {
			perror(argv[i]);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
	}
	if (argc > 1)
		return 0;
	for (int it = 0; it < 200000; it++) {
		const char *sd = seeds[rnd() % 3];
		size_t n = strlen(sd) + 1;

		if (it % 2 == 0) {
			/* mutated expression */
			buf[0] = 0;
			memcpy(buf + 1, sd, n - 1);
			for (int k = 0; k < 1 + (int)(rnd() % 4); k++)
				buf[1 + rnd() % (n - 1)] = (uint8_t)rnd();
		} else {
			/* mutated serialized type */
			struct ddt_type *t = ddt_parse(sd, NULL);
			ssize_t bl;

			ddt_commit(t);
			bl = ddt_serialize(t, buf + 8, sizeof(buf) - 8);
			ddt_free(t);
			if (bl <= 0)
				continue;
			/* keep the blob 8-byte aligned after the mode byte */
			memmove(buf + 1, buf + 8, (size_t)bl);
			buf[0] = 1;
			n = (size_t)bl + 1;
			for (int k = 0; k < 1 + (int)(rnd() % 4); k++)
				buf[1 + rnd() % (n - 1)] ^= (uint8_t)rnd();
		}
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("fuzz_ddt: 200000 inputs, no failure\n");
	return 0;
}
#endif
