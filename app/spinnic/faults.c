/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection (--fault-inject, DESIGN §11): loss, duplication,
 * corruption and reordering, one seeded stage per direction, run by the
 * role that owns it (RX: inbound, after the burst; TX: outbound, before
 * the hold). Options and semantics: app/spinnic/README.md, "Fault injection".
 */
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "engine.h"

static uint64_t
rnd64(struct fault_stage *fs)
{
	uint64_t x = fs->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	fs->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static double
rnd(struct fault_stage *fs)
{
	return (double)(rnd64(fs) >> 11) * 0x1.0p-53;
}

struct fault_stage *
fault_stage_new(const struct spinnic_fault_cfg *fc, uint64_t seed,
		struct rte_mempool *pool)
{
	struct fault_stage *fs;

	if (fc->loss <= 0 && fc->dup <= 0 && fc->corrupt <= 0 &&
	    fc->reorder == 0)
		return NULL;
	fs = rte_zmalloc("spinnic_faults", sizeof(*fs), 0);
	if (fs == NULL)
		return NULL;
	fs->loss = fc->loss;
	fs->dup = fc->dup;
	fs->corrupt = fc->corrupt;
	fs->window = RTE_MIN(fc->reorder, ENG_FAULT_WIN);
	fs->rng = (seed + 1) * 0x9e3779b97f4a7c15ull;
	if (fs->rng == 0)
		fs->rng = 1;
	fs->pool = pool;
	return fs;
}

void
fault_stage_free(struct fault_stage *fs)
{
	if (fs == NULL)
		return;
	while (fs->nwin > 0)
		rte_pktmbuf_free(fs->win[--fs->nwin]);
	rte_free(fs);
}

static void
corrupt(struct fault_stage *fs, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_data_len(m), bit;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

	if (len <= SPINNIC_WIRE_ETH_LEN)
		return;
	bit = (uint32_t)(rnd64(fs) % ((uint64_t)(len - SPINNIC_WIRE_ETH_LEN) * 8));
	f[SPINNIC_WIRE_ETH_LEN + bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* A surviving packet enters the reorder window; one may leave it. */
static unsigned
window_pass(struct fault_stage *fs, struct rte_mbuf *m, struct rte_mbuf **out)
{
	unsigned i;

	if (fs->window == 0) {
		out[0] = m;
		return 1;
	}
	if (fs->nwin < fs->window) {
		fs->win[fs->nwin++] = m;
		fs->events++;
		return 0;
	}
	i = (unsigned)(rnd64(fs) % fs->window);
	out[0] = fs->win[i];
	fs->win[i] = m;
	return 1;
}

unsigned
fault_apply(struct fault_stage *fs, struct rte_mbuf **in, unsigned n,
	    struct rte_mbuf **out)
{
	unsigned i, k = 0;

	if (n == 0) {
		/* idle: let the window go, in order */
		for (i = 0; i < fs->nwin; i++)
			out[k++] = fs->win[i];
		fs->nwin = 0;
		return k;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = in[i], *c = NULL;
		double r = rnd(fs);

		if (r < fs->loss) {
			rte_pktmbuf_free(m);
			fs->events++;
			continue;
		}
		r -= fs->loss;
		if (r < fs->dup) {
			c = rte_pktmbuf_copy(m, fs->pool, 0, UINT32_MAX);
			if (c != NULL)
				fs->events++;
		} else if (r - fs->dup < fs->corrupt) {
			corrupt(fs, m);
			fs->events++;
		}
		k += window_pass(fs, m, out + k);
		if (c != NULL)
			k += window_pass(fs, c, out + k);
	}
	return k;
}
