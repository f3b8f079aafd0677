/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handler API (spin_handler.h): DMA to and from the matched ME's host
 * window (the emulated IOMMU check is here), puts, counters, NIC memory
 * atomics and blobs.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>

#include "spin_internal.h"

static bool
win_ok(const struct spin_exec *x, uint64_t off, size_t len)
{
	return off <= x->h.win_len && len <= x->h.win_len - off;
}

/* @p rc: -ERANGE out of window, -EPERM a write from an outbound job */
static int
dma_refuse(struct spin_exec *x, int rc)
{
	if (!x->err)
		x->dma_err = rc;
	x->err = true;
	x->hpu->st.dma_rejects++;
	x->hpu->fst[x->ctx->fam_idx].dma_rejects++;
	if (x->m != NULL)
		SPIN_ATOMIC_ADD(&x->m->res.dma_rejects, 1);
	SPIN_ATOMIC_ADD(&x->ctx->dma_rejects, 1);
	return rc;
}

static int
dma_reject(struct spin_exec *x)
{
	return dma_refuse(x, -ERANGE);
}

static int
dma_fail(struct spin_exec *x)
{
	if (!x->err)
		x->dma_err = -EIO;
	x->err = true;
	x->hpu->st.dma_failures++;
	x->hpu->fst[x->ctx->fam_idx].dma_failures++;
	SPIN_ATOMIC_ADD(&x->ctx->h_dma_failures, 1);
	if (x->m != NULL)
		SPIN_ATOMIC_ADD(&x->m->res.dma_failures, 1);
	return -EIO;
}

/*
 * Map the whole window once per handler call (the first DMA that moves
 * bytes): one ops->direct() call instead of one per DMA. A window the
 * host cannot map as a whole (ops->direct NULL or refusing) keeps the
 * per-DMA path: direct() of the piece, else dma_write/dma_read. The host
 * keeps the client's region mapped while a message of it is in flight,
 * so the mapping holds for the call; asking again at every call keeps
 * the host's own checks (client alive) per packet.
 */
static inline uint32_t
win_map(struct spin_exec *x)
{
	const struct spin_host_ops *ops = &x->rt->ops;

	if (likely(x->win_map != SPIN_WIN_UNMAPPED))
		return x->win_map;
	x->win_base = ops->direct != NULL && x->h.win_len != 0 ?
		ops->direct(x->host, x->h.win_addr, x->h.win_len) : NULL;
	x->win_map = x->win_base != NULL ? SPIN_WIN_DIRECT : SPIN_WIN_SLOW;
	return x->win_map;
}

/* The host's copy, told the message when it wants to know. */
static int
host_write(struct spin_exec *x, uint64_t addr, const void *src, size_t len)
{
	const struct spin_host_ops *ops = &x->rt->ops;

	if (ops->dma_write_msg != NULL && x->m != NULL)
		return ops->dma_write_msg(x->host, x->m->app_msg, addr, src,
					  len);
	return ops->dma_write(x->host, addr, src, len);
}

static int
host_read(struct spin_exec *x, uint64_t addr, void *dst, size_t len)
{
	const struct spin_host_ops *ops = &x->rt->ops;

	if (ops->dma_read_msg != NULL && x->m != NULL)
		return ops->dma_read_msg(x->host, x->m->app_msg, addr, dst,
					 len);
	return ops->dma_read(x->host, addr, dst, len);
}

int
spin_dma_write_win(struct spin_exec *x, uint64_t win_off, const void *src,
		   size_t len, unsigned flags)
{
	const struct spin_host_ops *ops = &x->rt->ops;
	uint64_t addr;
	void *dst;

	if (unlikely(x->m == NULL && !x->access))
		return dma_refuse(x, -EPERM); /* a sender's MD: read-only */
	if (!win_ok(x, win_off, len))
		return dma_reject(x);
	if (!(flags & SPIN_DMA_NO_EVENT))
		x->dma_events++;
	if (len == 0)
		return 0;
	if (likely(win_map(x) == SPIN_WIN_DIRECT)) {
		memcpy(x->win_base + win_off, src, len);
	} else {
		addr = x->h.win_addr + win_off;
		dst = ops->direct != NULL ?
			ops->direct(x->host, addr, len) : NULL;
		if (dst != NULL)
			memcpy(dst, src, len);
		else if (host_write(x, addr, src, len) != 0)
			return dma_fail(x);
	}
	x->hpu->st.dma_ops++;
	x->hpu->st.dma_bytes_to += len;
	x->dma_bytes += len;
	return 0;
}

int
spin_dma_to_host(struct spin_hctx *h, uint64_t win_off, const void *src,
		 size_t len, unsigned flags)
{
	return spin_dma_write_win(spin_exec_of(h), win_off, src, len, flags);
}

int
spin_dma_to_host_nb(struct spin_hctx *h, uint64_t win_off, const void *src,
		    size_t len, unsigned flags)
{
	struct spin_exec *x = spin_exec_of(h);
	int rc;

	/*
	 * DMAs in flight are counted per handler call; the call's HER keeps
	 * its `pending` reference on the message until they finished
	 * (spin_exec_release), so completion waits for them. This emulator
	 * copies synchronously: the count is back to zero at once.
	 */
	x->dma_inflight++;
	rc = spin_dma_write_win(x, win_off, src, len, flags);
	x->dma_inflight--;
	return rc;
}

int
spin_dma_to_host_strided_nb(struct spin_hctx *h, uint64_t win_off,
			    int64_t stride, const void *src, size_t blocklen,
			    uint64_t n, unsigned flags)
{
	struct spin_exec *x = spin_exec_of(h);
	const uint8_t *s = src;
	uint64_t last, i, bytes;
	__int128 l;

	if (n <= 1 || unlikely(x->m == NULL))
		return spin_dma_write_win(x, win_off, src, n ? blocklen : 0,
					  flags);
	/* the last block's offset, exact; both ends in the window */
	l = (__int128)win_off + (__int128)stride * (__int128)(n - 1);
	if (l < 0 || l > (__int128)UINT64_MAX ||
	    __builtin_mul_overflow(blocklen, n, &bytes))
		return dma_reject(x);
	last = (uint64_t)l;
	if (!win_ok(x, win_off, blocklen) || !win_ok(x, last, blocklen))
		return dma_reject(x);
	if (!(flags & SPIN_DMA_NO_EVENT))
		x->dma_events++;
	if (blocklen == 0)
		return 0;
	if (likely(win_map(x) == SPIN_WIN_DIRECT)) {
		uint8_t *d = x->win_base + win_off;

		/* small blocks: copies of a constant size, inlined */
#define STRIDED_K(k) \
		do { \
			for (i = 0; i < n; i++) { \
				memcpy(d, s, (k)); \
				d += stride; \
				s += (k); \
			} \
		} while (0)
		switch (blocklen) {
		case 1: STRIDED_K(1); break;
		case 2: STRIDED_K(2); break;
		case 4: STRIDED_K(4); break;
		case 8: STRIDED_K(8); break;
		case 16: STRIDED_K(16); break;
		case 32: STRIDED_K(32); break;
		case 64: STRIDED_K(64); break;
		default: STRIDED_K(blocklen); break;
		}
#undef STRIDED_K
	} else {
		for (i = 0; i < n; i++) {
			int rc = spin_dma_write_win(x, win_off, s, blocklen,
						    SPIN_DMA_NO_EVENT);

			if (rc != 0)
				return rc;
			win_off += (uint64_t)stride;
			s += blocklen;
		}
		return 0;
	}
	x->hpu->st.dma_ops += n;
	x->hpu->st.dma_bytes_to += bytes;
	x->dma_bytes += bytes;
	return 0;
}

void *
spin_dma_window(struct spin_hctx *h, uint64_t *len_p)
{
	struct spin_exec *x = spin_exec_of(h);

	/* an outbound job's window (a sender's MD) is read-only */
	if (x->m == NULL || x->h.win_len == 0 ||
	    win_map(x) != SPIN_WIN_DIRECT)
		return NULL;
	*len_p = x->h.win_len;
	return x->win_base;
}

void
spin_dma_account(struct spin_hctx *h, uint64_t bytes, uint64_t ops,
		 unsigned flags)
{
	struct spin_exec *x = spin_exec_of(h);

	if (!(flags & SPIN_DMA_NO_EVENT))
		x->dma_events++;
	x->hpu->st.dma_ops += ops;
	x->hpu->st.dma_bytes_to += bytes;
	x->dma_bytes += bytes;
}

int
spin_dma_from_host(struct spin_hctx *h, uint64_t win_off, void *dst,
		   size_t len)
{
	struct spin_exec *x = spin_exec_of(h);
	const struct spin_host_ops *ops = &x->rt->ops;
	uint64_t addr;
	void *src;

	if (!win_ok(x, win_off, len))
		return dma_reject(x);
	if (len == 0)
		return 0;
	if (likely(win_map(x) == SPIN_WIN_DIRECT)) {
		memcpy(dst, x->win_base + win_off, len);
	} else {
		addr = x->h.win_addr + win_off;
		src = ops->direct != NULL ?
			ops->direct(x->host, addr, len) : NULL;
		if (src != NULL)
			memcpy(dst, src, len);
		else if (host_read(x, addr, dst, len) != 0)
			return dma_fail(x);
	}
	x->hpu->st.dma_ops++;
	x->hpu->st.dma_bytes_from += len;
	x->dma_from += len;
	return 0;
}

/* a handler put the NIC refused: counted for the family and context */
static int
put_refused(struct spin_exec *x, int rc)
{
	x->hpu->fst[x->ctx->fam_idx].put_errors++;
	SPIN_ATOMIC_ADD(&x->ctx->h_put_errors, 1);
	return rc;
}

int
spin_put_from_nic(struct spin_hctx *h, const struct spin_put_req *req,
		  const void *src, size_t len)
{
	struct spin_exec *x = spin_exec_of(h);
	const struct spin_host_ops *ops = &x->rt->ops;
	int rc;

	if (ops->put_from_nic == NULL || x->m == NULL)
		return put_refused(x, -ENOTSUP);
	rc = ops->put_from_nic(x->m->host, x->m->app_msg, req, src, len);
	return rc == 0 ? 0 : put_refused(x, rc);
}

int
spin_put_from_host(struct spin_hctx *h, const struct spin_put_req *req,
		   uint64_t win_off, size_t len)
{
	struct spin_exec *x = spin_exec_of(h);
	const struct spin_host_ops *ops = &x->rt->ops;
	int rc;

	if (x->m == NULL)
		return put_refused(x, -ENOTSUP);
	if (!win_ok(x, win_off, len))
		return dma_reject(x);
	if (ops->put_from_host == NULL)
		return put_refused(x, -ENOTSUP);
	rc = ops->put_from_host(x->m->host, x->m->app_msg, req,
				x->m->win_addr + win_off, len);
	return rc == 0 ? 0 : put_refused(x, rc);
}

int
spin_ct_inc(struct spin_hctx *h, uint64_t n)
{
	struct spin_exec *x = spin_exec_of(h);
	const struct spin_host_ops *ops = &x->rt->ops;

	if (ops->ct_inc == NULL || x->m == NULL)
		return -ENOTSUP;
	return ops->ct_inc(x->m->host, x->m->app_msg, n);
}

static uint64_t *
state_word(struct spin_hctx *h, uint64_t off)
{
	if ((off & 7) != 0 || off >= h->state_len ||
	    h->state_len - off < sizeof(uint64_t))
		return NULL;
	return (uint64_t *)((uint8_t *)h->state + off);
}

int
spin_nic_fetch_add(struct spin_hctx *h, uint64_t state_off, uint64_t v,
		   uint64_t *old_p)
{
	uint64_t *w = state_word(h, state_off);
	uint64_t old;

	if (w == NULL)
		return -ERANGE;
	old = __atomic_fetch_add(w, v, __ATOMIC_ACQ_REL);
	if (old_p != NULL)
		*old_p = old;
	return 0;
}

int
spin_nic_cas(struct spin_hctx *h, uint64_t state_off, uint64_t expected,
	     uint64_t desired, uint64_t *old_p)
{
	uint64_t *w = state_word(h, state_off);
	bool ok;

	if (w == NULL)
		return -ERANGE;
	ok = __atomic_compare_exchange_n(w, &expected, desired, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	if (old_p != NULL)
		*old_p = expected;
	return ok ? 0 : -EAGAIN;
}

/*
 * 8-byte atomics on the host window: the host does them (atomic64), so
 * they take the same path as Portals atomics on the same word (CPU
 * atomics on region memory, the bounce lock on malloc'd memory).
 */
static int
host_atomic(struct spin_hctx *h, uint64_t win_off, unsigned op, uint64_t v,
	    uint64_t cmp, uint64_t *old_p)
{
	struct spin_exec *x = spin_exec_of(h);
	const struct spin_host_ops *ops = &x->rt->ops;
	uint64_t addr, old = 0;
	int rc;

	if (unlikely(x->m == NULL && !x->access))
		return dma_refuse(x, -EPERM);
	addr = x->h.win_addr + win_off;
	if (!win_ok(x, win_off, sizeof(uint64_t)) || (addr & 7) != 0)
		return dma_reject(x);
	if (ops->atomic64 == NULL)
		return -ENOTSUP;
	rc = ops->atomic64(x->host, x->m != NULL ? x->m->app_msg : NULL, addr,
			   op, v, cmp, &old);
	if (rc == -EACCES)
		return dma_refuse(x, -EACCES);
	if (rc != 0)
		return dma_fail(x);
	x->hpu->st.dma_ops++;
	x->hpu->st.dma_bytes_to += sizeof(uint64_t);
	x->dma_bytes += sizeof(uint64_t);
	if (old_p != NULL)
		*old_p = old;
	if (op == SPIN_HOST_ATOMIC_CAS && old != cmp)
		return -EAGAIN;
	return 0;
}

int
spin_host_fetch_add(struct spin_hctx *h, uint64_t win_off, uint64_t v,
		    uint64_t *old_p)
{
	return host_atomic(h, win_off, SPIN_HOST_ATOMIC_FADD, v, 0, old_p);
}

int
spin_host_swap(struct spin_hctx *h, uint64_t win_off, uint64_t v,
	       uint64_t *old_p)
{
	return host_atomic(h, win_off, SPIN_HOST_ATOMIC_SWAP, v, 0, old_p);
}

int
spin_host_cas(struct spin_hctx *h, uint64_t win_off, uint64_t expected,
	      uint64_t desired, uint64_t *old_p)
{
	return host_atomic(h, win_off, SPIN_HOST_ATOMIC_CAS, desired, expected,
			   old_p);
}

void *
spin_nicmem_map(struct spin_hctx *h, uint32_t handle, uint64_t *len_p)
{
	struct spin_exec *x = spin_exec_of(h);
	struct spin_blob *b;

	if (x->nblobs == SPIN_HCTX_MAX_BLOBS ||
	    spin_blob_ref(x->rt, x->ctx->o.owner, handle, &b) != 0)
		return NULL;
	x->blobs[x->nblobs++] = (uint32_t)(b - x->rt->blobs);
	if (len_p != NULL)
		*len_p = b->o.mem_len;
	return x->rt->arena.base + b->o.mem_off;
}

/*
 * After the handler returned: its DMAs are done (the caller drops the
 * HER's message reference next), counters go to the message and context,
 * blobs it mapped may go.
 */
void
spin_exec_release(struct spin_exec *x)
{
	uint32_t i;

	RTE_VERIFY(x->dma_inflight == 0);
	if (x->m != NULL && (x->dma_bytes != 0 || x->dma_events != 0)) {
		/* to the message and context with the HPU's batch */
		struct spin_batch *b = spin_batch_for(x->rt, x->hpu, x->m);

		b->dma_bytes += x->dma_bytes;
		b->dma_events += x->dma_events;
		x->dma_bytes = 0;
		x->dma_events = 0;
	}
	x->win_map = SPIN_WIN_UNMAPPED;

	for (i = 0; i < x->nblobs; i++)
		spin_blob_unref(x->rt, &x->rt->blobs[x->blobs[i]]);
	x->nblobs = 0;
}
