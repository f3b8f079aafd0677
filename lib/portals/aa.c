/* SPDX-License-Identifier: BSD-3-Clause */
/* Active Access, pure parts: page table, rule matrix, log ring writer
 * (aa.h; doc/NOTES.md "Active Access"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aa.h"

#define AA_ADDR_LIMIT (1ull << 56) /* above any user address */

void
ptl_aa_rule(uint32_t bits, bool write, struct ptl_aa_verdict *v_p)
{
	struct ptl_aa_verdict v = { 0 };

	if (write) {
		if (bits & SPINNIC_AA_W) {
			v.mem = true;
			v.data = (bits & SPINNIC_AA_WLD) != 0;
			v.kind = v.data ? SPINNIC_AA_PUT_DATA :
				 (bits & SPINNIC_AA_WL) ? SPINNIC_AA_PUT_META : 0;
		} else if (bits & SPINNIC_AA_WLD) {
			v.redirected = true;
			v.data = true;
			v.kind = SPINNIC_AA_PUT_DATA;
		} else {
			v.fail = true;
			v.kind = (bits & SPINNIC_AA_WL) ? SPINNIC_AA_PUT_BLOCKED : 0;
		}
	} else {
		if (bits & SPINNIC_AA_R) {
			v.mem = true;
			v.data = (bits & SPINNIC_AA_RLD) != 0;
			v.kind = v.data ? SPINNIC_AA_GET_DATA :
				 (bits & SPINNIC_AA_RL) ? SPINNIC_AA_GET_META : 0;
		} else {
			v.fail = true;
			v.kind = (bits & (SPINNIC_AA_RL | SPINNIC_AA_RLD)) ?
				 SPINNIC_AA_GET_BLOCKED : 0;
		}
	}
	*v_p = v;
}

/* ---- page table ---- */

static bool
range_same(const struct ptl_aa_range *a, const struct ptl_aa_range *b)
{
	return a->end == b->start && a->bits == b->bits && a->log == b->log;
}

/* Append r to out (merged with the last one when contiguous and equal). */
static void
range_push(struct ptl_aa_range *out, uint32_t *n, const struct ptl_aa_range *r)
{
	if (r->start >= r->end)
		return;
	if (*n > 0 && range_same(&out[*n - 1], r)) {
		out[*n - 1].end = r->end;
		return;
	}
	out[(*n)++] = *r;
}

int
ptl_aa_table_set(struct ptl_aa_table *t, uint64_t addr, uint64_t len,
		 uint32_t bits, uint32_t log)
{
	struct ptl_aa_range nr = { addr, addr + len, bits, log }, *out, piece;
	uint64_t end = addr + len;
	uint32_t i, n = 0;
	bool placed = false, dflt;

	if (len == 0 || addr % SPINNIC_AA_PAGE != 0 ||
	    len % SPINNIC_AA_PAGE != 0 || end < addr || end > AA_ADDR_LIMIT ||
	    (bits & ~SPINNIC_AA_BITS) != 0)
		return -EINVAL;
	dflt = bits == PTL_AA_DEFAULT && log == SPINNIC_HANDLE_NONE;
	/* at most two pieces of the old ranges survive besides the rest */
	out = malloc(((size_t)t->n + 3) * sizeof(*out));
	if (out == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct ptl_aa_range *r = &t->r[i];

		if (r->end <= addr) {
			range_push(out, &n, r);
			continue;
		}
		if (!placed && r->start >= end) {
			if (!dflt)
				range_push(out, &n, &nr);
			placed = true;
		}
		if (r->start >= end) {
			range_push(out, &n, r);
			continue;
		}
		/* overlapping: keep what lies outside [addr, end) */
		if (r->start < addr) {
			piece = *r;
			piece.end = addr;
			range_push(out, &n, &piece);
		}
		if (!placed) {
			if (!dflt)
				range_push(out, &n, &nr);
			placed = true;
		}
		if (r->end > end) {
			piece = *r;
			piece.start = end;
			range_push(out, &n, &piece);
		}
	}
	if (!placed && !dflt)
		range_push(out, &n, &nr);
	if (n > SPINNIC_AA_RANGES_MAX) {
		free(out);
		return -ENOSPC;
	}
	free(t->r);
	t->r = out;
	t->n = n;
	return 0;
}

uint32_t
ptl_aa_table_find(const struct ptl_aa_table *t, uint64_t addr,
		  uint64_t *end_p, uint32_t *log_p)
{
	uint32_t lo = 0, hi = t->n;

	/* first range ending after addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && t->r[lo].start <= addr) {
		*end_p = t->r[lo].end;
		*log_p = t->r[lo].log;
		return t->r[lo].bits;
	}
	*end_p = lo < t->n ? t->r[lo].start : UINT64_MAX;
	*log_p = SPINNIC_HANDLE_NONE;
	return PTL_AA_DEFAULT;
}

bool
ptl_aa_table_uses_log(const struct ptl_aa_table *t, uint32_t log)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].log == log)
			return true;
	return false;
}

void
ptl_aa_table_clear(struct ptl_aa_table *t)
{
	free(t->r);
	t->r = NULL;
	t->n = 0;
}

/* ---- log ring ---- */

int
ptl_aa_log_init(struct ptl_aa_log *lg, void *mem, uint64_t size)
{
	struct spinnic_aa_ring *ring = mem;

	if (size < SPINNIC_AA_RING_MIN || size > SPINNIC_AA_RING_MAX ||
	    (size & (size - 1)) != 0)
		return -EINVAL;
	lg->ring = ring;
	lg->size = size;
	lg->prod = 0;
	lg->lost = 0;
	lg->records = 0;
	lg->seq = 0;
	lg->err = false;
	memset(ring, 0, sizeof(*ring));
	ring->version = 1;
	ring->size = size;
	return 0;
}

static uint32_t
seq_next(struct ptl_aa_log *lg)
{
	if (++lg->seq == 0)
		lg->seq = 1;
	return lg->seq;
}

static uint8_t *
rec_at(struct ptl_aa_log *lg, uint64_t pos)
{
	return (uint8_t *)lg->ring + sizeof(*lg->ring) + (pos & (lg->size - 1));
}

static void
rec_commit(struct ptl_aa_log *lg, uint8_t *slot, struct spinnic_aa_rec *h)
{
	struct spinnic_aa_rec *dst = (struct spinnic_aa_rec *)slot;

	h->seq = seq_next(lg);
	/* everything but the commit word, then the commit word */
	memcpy((uint8_t *)dst + sizeof(h->seq), (uint8_t *)h + sizeof(h->seq),
	       sizeof(*h) - sizeof(h->seq));
	__atomic_store_n(&dst->seq, h->seq, __ATOMIC_RELEASE);
}

void
ptl_aa_log_lose(struct ptl_aa_log *lg)
{
	lg->lost++;
	__atomic_store_n(&lg->ring->lost, lg->lost, __ATOMIC_RELAXED);
}

/*
 * What a record of len data bytes needs at the log's write position now,
 * without changing anything: its bytes (*need_p) and the PAD before it
 * (*pad_p). The client's cons is read once, checked, never trusted
 * further.
 * @return 0 it fits; -ENOSPC full; -EPIPE the log is stopped or cons is
 *   invalid; -EINVAL larger than half the ring
 */
static int
log_room(const struct ptl_aa_log *lg, uint32_t len, uint64_t *need_p,
	 uint64_t *pad_p)
{
	uint64_t need = sizeof(struct spinnic_aa_rec) +
			((uint64_t)len + 63) / 64 * 64;
	uint64_t pos = lg->prod & (lg->size - 1), cons;

	*need_p = need;
	*pad_p = lg->size - pos < need ? lg->size - pos : 0;
	if (need > lg->size / 2)
		return -EINVAL;
	if (lg->err)
		return -EPIPE;
	cons = __atomic_load_n(&lg->ring->cons, __ATOMIC_ACQUIRE);
	if (cons > lg->prod || lg->prod - cons > lg->size || cons % 64 != 0)
		return -EPIPE;
	return lg->prod + *pad_p + need - cons <= lg->size ? 0 : -ENOSPC;
}

bool
ptl_aa_log_fits(const struct ptl_aa_log *lg, uint32_t len)
{
	uint64_t need, pad;

	return log_room(lg, len, &need, &pad) != -ENOSPC;
}

int
ptl_aa_log_append(struct ptl_aa_log *lg, struct spinnic_aa_rec *h,
		  const void *data)
{
	uint64_t need, pad;
	struct timespec ts;
	int rc;

	rc = log_room(lg, h->len, &need, &pad);
	if (rc == -EINVAL)
		return rc;
	if (rc == -EPIPE && !lg->err) {
		/* an invalid cons stops the log for good */
		lg->err = true;
		__atomic_store_n(&lg->ring->err, 1, __ATOMIC_RELAXED);
	}
	if (rc != 0) {
		ptl_aa_log_lose(lg);
		return rc;
	}
	if (pad != 0) {
		struct spinnic_aa_rec p = { 0 };

		p.kind = SPINNIC_AA_PAD;
		p.len = (uint32_t)(pad - sizeof(p));
		rec_commit(lg, rec_at(lg, lg->prod), &p);
		lg->prod += pad;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	h->ts_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (h->len > 0)
		memcpy(rec_at(lg, lg->prod) + sizeof(*h), data, h->len);
	rec_commit(lg, rec_at(lg, lg->prod), h);
	lg->prod += need;
	lg->records++;
	__atomic_store_n(&lg->ring->prod, lg->prod, __ATOMIC_RELEASE);
	return 0;
}

/* ---- the IOTLB model ---- */

int
ptl_aa_iotlb_init(struct ptl_aa_iotlb *t, uint32_t entries, uint32_t ways,
		  uint32_t policy)
{
	memset(t, 0, sizeof(*t));
	if (entries == 0)
		return 0;
	if (ways == 0)
		ways = entries;
	if (entries > PTL_AA_IOTLB_MAX || (entries & (entries - 1)) != 0 ||
	    (ways & (ways - 1)) != 0 || ways > entries ||
	    policy > PTL_AA_IOTLB_RND)
		return -EINVAL;
	t->tag = calloc(entries, sizeof(*t->tag));
	t->stamp = calloc(entries, sizeof(*t->stamp));
	if (t->tag == NULL || t->stamp == NULL) {
		ptl_aa_iotlb_fini(t);
		return -ENOMEM;
	}
	t->entries = entries;
	t->ways = ways;
	t->sets = entries / ways;
	t->policy = policy;
	t->rnd = 0x9e3779b97f4a7c15ull;
	return 0;
}

void
ptl_aa_iotlb_fini(struct ptl_aa_iotlb *t)
{
	free(t->tag);
	free(t->stamp);
	memset(t, 0, sizeof(*t));
}

bool
ptl_aa_iotlb_lookup(struct ptl_aa_iotlb *t, uint32_t dom, uint64_t page)
{
	const uint64_t key = 1 + (((uint64_t)dom << 44) |
				  (page & ((1ull << 44) - 1)));
	uint64_t *tag, *stamp;
	uint32_t w, victim = UINT32_MAX;

	if (t->entries == 0)
		return false;
	tag = t->tag + (size_t)(page & (t->sets - 1)) * t->ways;
	stamp = t->stamp + (size_t)(page & (t->sets - 1)) * t->ways;
	t->clock++;
	for (w = 0; w < t->ways; w++) {
		if (tag[w] == key) {
			stamp[w] = t->clock;
			return true;
		}
		if (tag[w] == 0 && victim == UINT32_MAX)
			victim = w;
	}
	if (victim == UINT32_MAX) {
		if (t->policy == PTL_AA_IOTLB_RND) {
			t->rnd ^= t->rnd << 13;
			t->rnd ^= t->rnd >> 7;
			t->rnd ^= t->rnd << 17;
			victim = (uint32_t)(t->rnd % t->ways);
		} else {
			victim = 0;
			for (w = 1; w < t->ways; w++)
				if (stamp[w] < stamp[victim])
					victim = w;
		}
	}
	tag[victim] = key;
	stamp[victim] = t->clock;
	return false;
}

uint32_t
ptl_aa_iotlb_inval(struct ptl_aa_iotlb *t, uint32_t dom)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->entries; i++) {
		if (t->tag[i] != 0 && ((t->tag[i] - 1) >> 44) == dom) {
			t->tag[i] = 0;
			t->stamp[i] = 0;
			n++;
		}
	}
	return n;
}
