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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_pause.h>

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

static void
floor_share(const struct bench_floor *f, uint8_t *w, int64_t lo, int64_t hi)
{
	for (int64_t i = lo; i < hi; i++)
		copy_piece(w + f->p[i].dst, f->p[i].src, f->p[i].len);
}

struct floor_thr {
	const struct bench_floor *f;
	uint8_t *w;
	int64_t lo, hi;
	const int *go;
	int ready, done;   /* atomic */
};

static void *
floor_thr_main(void *arg)
{
	struct floor_thr *t = arg;

	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(t->go, __ATOMIC_ACQUIRE))
		rte_pause();
	floor_share(t->f, t->w, t->lo, t->hi);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

double
bench_floor_run_threads(const struct bench_floor *f, void *win, unsigned nthr)
{
	struct floor_thr th[SPIN_RT_HPUS_MAX];
	pthread_t tid[SPIN_RT_HPUS_MAX];
	unsigned k, started = 0;
	double t0, t = -1;
	int go = 0;

	if (nthr <= 1)
		return bench_floor_run(f, win);
	if (nthr > SPIN_RT_HPUS_MAX)
		nthr = SPIN_RT_HPUS_MAX;
	/* share k: pieces [n k / nthr, n (k + 1) / nthr); 0 is the caller's */
	for (k = 1; k < nthr; k++) {
		pthread_attr_t attr;
		int err;

		th[k] = (struct floor_thr){
			f, win, f->n * k / nthr, f->n * (k + 1) / nthr, &go,
			0, 0,
		};
		pthread_attr_init(&attr);
		bench_hpu_attr_cpu(&attr, k);
		err = pthread_create(&tid[k], &attr, floor_thr_main, &th[k]);
		pthread_attr_destroy(&attr);
		if (err != 0) {
			bench_err("floor: cannot start thread %u: %s", k,
				  strerror(err));
			goto out;
		}
		started++;
	}
	for (k = 1; k < nthr; k++)
		while (!__atomic_load_n(&th[k].ready, __ATOMIC_ACQUIRE))
			rte_pause();
	t0 = bench_now();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	floor_share(f, win, 0, f->n / nthr);
	for (k = 1; k < nthr; k++)
		while (!__atomic_load_n(&th[k].done, __ATOMIC_ACQUIRE))
			rte_pause();
	t = bench_now() - t0;
out:
	/* threads that started but were not let go: let them go now */
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (k = 1; k <= started; k++)
		pthread_join(tid[k], NULL);
	return t;
}

void
bench_floor_free(struct bench_floor *f)
{
	free(f);
}
