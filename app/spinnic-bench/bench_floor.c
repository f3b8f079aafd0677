/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The copy floor of a layout (bench_floor.h): the type flattened once,
 * its blocks cut at the packets' boundaries into (window offset, payload
 * pointer, length) pieces; a run is one memcpy per piece, timed like the
 * strategies (bench_now() around it). Pieces up to 16 bytes are copied
 * inline, larger ones by memcpy: a libc call per 4-byte block would make
 * the floor slower than the engines it bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ddt.h>

#include "bench.h"
#include "bench_floor.h"
#include "bench_nic.h"

struct floor_piece {
	int64_t dst;
	const uint8_t *src;
	size_t len;
};

struct bench_floor {
	int64_t n;
	struct floor_piece p[];
};

/* pieces of block b (stream offset pos) over packets of payload bytes */
static int64_t
cut_block(const struct bench_nic *nic, const struct ddt_iov *b, int64_t pos,
	  int64_t lo, struct floor_piece *out)
{
	uint32_t payload = bench_nic_payload_bytes(nic);
	int64_t n = 0, done = 0;

	while (done < b->len) {
		int64_t at = pos + done, in = at % payload;
		int64_t len = b->len - done < payload - in ?
			b->len - done : payload - in;

		if (out != NULL)
			out[n] = (struct floor_piece){
				b->off + done - lo,
				(const uint8_t *)bench_nic_payload(
					nic, (uint32_t)(at / payload)) + in,
				(size_t)len,
			};
		n++;
		done += len;
	}
	return n;
}

struct bench_floor *
bench_floor_create(const struct bench_nic *nic, const struct ddt_type *t,
		   int64_t count, int64_t lo)
{
	int64_t nb = ddt_flatten(t, count, NULL, 0), np = 0, pos = 0;
	struct ddt_iov *iov;
	struct bench_floor *f = NULL;

	if (nb < 0) {
		bench_err("floor: ddt_flatten: %s", ddt_strerror((int)nb));
		errno = EINVAL;
		return NULL;
	}
	iov = malloc((size_t)(nb + 1) * sizeof(*iov));
	if (iov == NULL || ddt_flatten(t, count, iov, nb) != nb)
		goto out;
	for (int64_t i = 0; i < nb; pos += iov[i].len, i++)
		np += cut_block(nic, &iov[i], pos, lo, NULL);
	f = malloc(sizeof(*f) + (size_t)np * sizeof(f->p[0]));
	if (f == NULL)
		goto out;
	f->n = 0;
	pos = 0;
	for (int64_t i = 0; i < nb; pos += iov[i].len, i++)
		f->n += cut_block(nic, &iov[i], pos, lo, f->p + f->n);
out:
	if (f == NULL) {
		bench_err("floor: out of memory for %lld blocks",
			  (long long)nb);
		errno = ENOMEM;
	}
	free(iov);
	return f;
}

/* n bytes, inline up to 16 (overlapping moves: no call, one branch) */
static inline void
copy_piece(uint8_t *d, const uint8_t *s, size_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

double
bench_floor_run(const struct bench_floor *f, void *win)
{
	uint8_t *w = win;
	double t0 = bench_now();

	for (int64_t i = 0; i < f->n; i++)
		copy_piece(w + f->p[i].dst, f->p[i].src, f->p[i].len);
	return bench_now() - t0;
}

void
bench_floor_free(struct bench_floor *f)
{
	free(f);
}
