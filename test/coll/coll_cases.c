/* SPDX-License-Identifier: BSD-3-Clause */
/* The cases of test/coll (coll_cases.h). */
#include <stdio.h>
#include <string.h>

#include "coll_cases.h"

static const size_t sizes[] = { 0, 1, 4095, 4097, 65536 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned
inst_for(size_t size)
{
	return size > 8192 ? 10 : 100;
}

unsigned
coll_cases(unsigned P, struct coll_case *out, unsigned max)
{
	unsigned n = 0, s, r, a;

#define ADD(...) do { \
	if (n < max) \
		out[n] = (struct coll_case){ __VA_ARGS__ }; \
	n++; \
} while (0)
	for (s = 0; s < NSIZES; s++)
		for (r = 0; r < P; r++)
			ADD(.kind = CK_BCAST, .algo = 0, .size = sizes[s],
			    .root = r, .instances = inst_for(sizes[s]));
	for (a = 1; a <= 2; a++)
		for (s = 0; s < NSIZES; s++)
			ADD(.kind = CK_BCAST, .algo = a, .size = sizes[s],
			    .root = P - 1, .instances = inst_for(sizes[s]));
	for (s = 0; s < NSIZES; s++)
		ADD(.kind = CK_BCAST, .algo = 3, .size = sizes[s],
		    .root = P / 2, .instances = inst_for(sizes[s]));
	ADD(.kind = CK_BARRIER, .instances = 100);
	for (s = 0; s < NSIZES; s++)
		ADD(.kind = CK_ALLREDUCE, .algo = 0, .size = sizes[s],
		    .instances = inst_for(sizes[s]));
	ADD(.kind = CK_ALLREDUCE, .algo = 1, .size = 8 * 513,
	    .instances = 100);
	ADD(.kind = CK_ALLREDUCE, .algo = 1, .size = 65536, .instances = 10);
	ADD(.kind = CK_ALLREDUCE, .algo = 2, .size = 8 * 700,
	    .instances = 20);
	for (s = 0; s < NSIZES; s++)
		ADD(.kind = CK_ALLREDUCE, .algo = 3, .size = sizes[s],
		    .instances = inst_for(sizes[s]));
	ADD(.kind = CK_ALLREDUCE, .algo = 4, .size = 8 * 8193,
	    .instances = 10);
	for (a = 0; a <= 1; a++)
		for (s = 0; s < NSIZES; s++)
			ADD(.kind = CK_ALLTOALL, .algo = a, .size = sizes[s],
			    .instances = sizes[s] > 8192 ? 3 : 30);
	for (s = 0; s < NSIZES; s++)
		ADD(.kind = CK_ALLGATHER, .size = sizes[s],
		    .instances = sizes[s] > 8192 ? 3 : 30);
	if (P == 4)
		ADD(.kind = CK_BCAST, .algo = 0, .size = 1 << 20, .root = 1,
		    .instances = 3);
	/* dissemination (Bruck) allgather: after the rest, so that the
	 * earlier cases keep their index (the seed of their inputs) */
	for (s = 0; s < NSIZES; s++)
		ADD(.kind = CK_ALLGATHER, .algo = 1, .size = sizes[s],
		    .instances = sizes[s] > 8192 ? 3 : 30);
#undef ADD
	return n;
}

void
coll_case_name(const struct coll_case *c, char *buf, size_t len)
{
	static const char *const names[] = { "bcast", "barrier", "allreduce",
					     "alltoall", "allgather" };

	snprintf(buf, len, "%s/%u size %zu root %u", names[c->kind], c->algo,
		 c->size, c->root);
}

size_t
coll_send_len(const struct coll_case *c, unsigned P)
{
	switch (c->kind) {
	case CK_ALLTOALL:
		return c->size * P;
	case CK_BARRIER:
		return 0;
	default:
		return c->size;
	}
}

size_t
coll_recv_len(const struct coll_case *c, unsigned P)
{
	switch (c->kind) {
	case CK_ALLTOALL:
	case CK_ALLGATHER:
		return c->size * P;
	case CK_BARRIER:
		return 0;
	default:
		return c->size;
	}
}

static uint64_t
splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
coll_input(const struct coll_case *c, unsigned ci, unsigned rank,
	   uint64_t inst, void *buf, size_t len)
{
	uint64_t x = ((uint64_t)ci << 40) ^ ((uint64_t)rank << 24) ^ inst ^
		     0x5eed;
	uint8_t *p = buf;
	size_t i;

	(void)c;
	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = splitmix(&x);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = splitmix(&x);

		memcpy(p + i, &v, len - i);
	}
}

uint64_t
coll_digest(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void
coll_expect(const struct coll_case *c, unsigned ci, unsigned rank,
	    unsigned P, uint64_t inst, void *out, void *scratch)
{
	size_t n = c->size, slen = coll_send_len(c, P), i;
	uint8_t *o = out, *t = scratch;
	unsigned r;

	switch (c->kind) {
	case CK_BARRIER:
		return;
	case CK_BCAST:
		coll_input(c, ci, c->root, inst, out, n);
		return;
	case CK_ALLGATHER:
		for (r = 0; r < P; r++)
			coll_input(c, ci, r, inst, o + r * n, n);
		return;
	case CK_ALLTOALL:
		for (r = 0; r < P; r++) {
			coll_input(c, ci, r, inst, t, slen);
			memcpy(o + r * n, t + (size_t)rank * n, n);
		}
		return;
	case CK_ALLREDUCE:
		coll_input(c, ci, 0, inst, out, n);
		for (r = 1; r < P; r++) {
			coll_input(c, ci, r, inst, t, n);
			if (c->algo == 0 || c->algo == 3) {
				for (i = 0; i < n; i++)
					o[i] = (uint8_t)(o[i] + t[i]);
				continue;
			}
			for (i = 0; i + 8 <= n; i += 8) {
				uint64_t a, b;
				int64_t sa, sb;

				memcpy(&a, o + i, 8);
				memcpy(&b, t + i, 8);
				memcpy(&sa, o + i, 8);
				memcpy(&sb, t + i, 8);
				if (c->algo == 1 || c->algo == 4)
					a += b;
				else
					a = (uint64_t)(sa > sb ? sa : sb);
				memcpy(o + i, &a, 8);
			}
		}
		return;
	}
}
