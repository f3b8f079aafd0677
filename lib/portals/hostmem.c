/* SPDX-License-Identifier: BSD-3-Clause */
/* Host memory access, the NIC's IOMMU (DESIGN §4): addresses inside the
 * client's region are copied directly; anything else is the client's own
 * memory, reached with process_vm_readv/writev on its pid (slow path). */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "atomic.h"
#include "ptl_internal.h"

/* Atomics on memory outside a region: read, apply, write back, one at a
 * time in the process (every Portals atomic of every NIC passes here),
 * through one buffer the lock guards (an atomic is one packet). */
static pthread_mutex_t bounce_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t bounce_buf[SPINNIC_WIRE_MAX_PAYLOAD];

#define HOST_BATCH 64 /* iovecs per process_vm_* call (<= IOV_MAX) */

void *
ptl_host_ptr(struct ptl_client *c, uint64_t addr, size_t len)
{
	uint64_t off;

	if (addr < c->base_va || !ptl_client_is_alive(c))
		return NULL;
	off = addr - c->base_va;
	if (!ptl_range_ok(off, len, c->size))
		return NULL;
	return c->region + off;
}

static int
slow_batch(struct ptl_client *c, struct iovec *local, struct iovec *remote,
	   unsigned n, size_t bytes, bool write)
{
	struct ptl_nic *nic = c->nic;
	ssize_t done;

	if (n == 0)
		return 0;
	done = write ? process_vm_writev(c->os_pid, local, n, remote, n, 0) :
		       process_vm_readv(c->os_pid, local, n, remote, n, 0);
	PTL_STAT(nic, slow_path_calls);
	if (done < 0 || (size_t)done != bytes) {
		PTL_STAT(nic, host_fault);
		return -EFAULT;
	}
	PTL_STAT_ADD(nic, slow_path_bytes, bytes);
	return 0;
}

static int
host_access(struct ptl_client *c, const struct ptl_host_iov *iov,
	    unsigned n, bool write)
{
	struct ptl_nic *nic = c->nic;
	struct iovec local[HOST_BATCH], remote[HOST_BATCH];
	size_t fast = 0, bytes = 0;
	unsigned i, k = 0;
	int rc;

	if (!ptl_client_is_alive(c)) {
		PTL_STAT(nic, dead_client);
		return -ESHUTDOWN;
	}
	for (i = 0; i < n; i++) {
		uint64_t addr = iov[i].addr;
		size_t len = iov[i].len;
		void *p;

		if (len == 0)
			continue;
		if (addr + len < addr) {
			PTL_STAT(nic, host_fault);
			return -EFAULT;
		}
		p = ptl_host_ptr(c, addr, len);
		if (p != NULL) {
			if (write)
				memcpy(p, iov[i].buf, len);
			else
				memcpy(iov[i].buf, p, len);
			fast += len;
			continue;
		}
		if (bytes + len < bytes || bytes + len > (size_t)SSIZE_MAX / 2) {
			rc = slow_batch(c, local, remote, k, bytes, write);
			if (rc < 0)
				return rc;
			k = 0;
			bytes = 0;
		}
		local[k].iov_base = iov[i].buf;
		local[k].iov_len = len;
		remote[k].iov_base = (void *)(uintptr_t)addr;
		remote[k].iov_len = len;
		k++;
		bytes += len;
		if (k == HOST_BATCH) {
			rc = slow_batch(c, local, remote, k, bytes, write);
			if (rc < 0)
				return rc;
			k = 0;
			bytes = 0;
		}
	}
	if (fast)
		PTL_STAT_ADD(nic, fast_bytes, fast);
	return slow_batch(c, local, remote, k, bytes, write);
}

int
ptl_host_write(struct ptl_client *c, uint64_t addr, const void *src,
	       size_t len)
{
	struct ptl_host_iov v = { .addr = addr, .buf = (void *)(uintptr_t)src,
				  .len = len };

	return host_access(c, &v, 1, true);
}

int
ptl_host_read(struct ptl_client *c, uint64_t addr, void *dst, size_t len)
{
	struct ptl_host_iov v = { .addr = addr, .buf = dst, .len = len };

	return host_access(c, &v, 1, false);
}

int
ptl_host_writev(struct ptl_client *c, const struct ptl_host_iov *iov,
		unsigned n)
{
	return host_access(c, iov, n, true);
}

int
ptl_host_readv(struct ptl_client *c, const struct ptl_host_iov *iov,
	       unsigned n)
{
	return host_access(c, iov, n, false);
}

int
ptl_host_atomic(struct ptl_client *c, uint64_t addr, unsigned op,
		unsigned type, const void *operand, const void *compare,
		size_t len, void *fetch_out)
{
	void *t = ptl_host_ptr(c, addr, len);
	int rc;

	if (len == 0)
		return 0;
	if (t != NULL)
		return ptl_atomic_apply(op, type, t, operand, compare, len,
					fetch_out);
	if (len > sizeof(bounce_buf))
		return -EINVAL;
	pthread_mutex_lock(&bounce_lock);
	rc = ptl_host_read(c, addr, bounce_buf, len);
	if (rc == 0)
		rc = ptl_atomic_apply(op, type, bounce_buf, operand, compare,
				      len, fetch_out);
	if (rc == 0)
		rc = ptl_host_write(c, addr, bounce_buf, len);
	pthread_mutex_unlock(&bounce_lock);
	return rc;
}

/* ---- iovec MDs and MEs (doc/NOTES.md "iovec MDs and MEs") ---- */

int
ptl_iovs_load(struct ptl_client *c, uint64_t addr, uint64_t count,
	      uint32_t max, struct ptl_iovs **iovs_p)
{
	struct ptl_iovs *v;
	uint64_t sum = 0;
	uint32_t i;
	int rc;

	if (count == 0 || count > max || count > PTL_MAX_IOVECS)
		return -EINVAL;
	v = malloc(sizeof(*v) + count * sizeof(v->ent[0]));
	if (v == NULL)
		return -ENOMEM;
	/* ptl_iovec_t is {void *, ptl_size_t}: 16 bytes, as ptl_iov_ent */
	rc = ptl_host_read(c, addr, v->ent, count * sizeof(v->ent[0]));
	if (rc < 0)
		goto fail;
	rc = -EINVAL;
	for (i = 0; i < count; i++) {
		const struct ptl_iov_ent *e = &v->ent[i];

		if (e->addr + e->len < e->addr || e->len > INT64_MAX - sum)
			goto fail;
		sum += e->len;
	}
	v->refs = 1;
	v->n = (uint32_t)count;
	v->total = sum;
	*iovs_p = v;
	return 0;
fail:
	free(v);
	return rc;
}

void
ptl_iovs_get(struct ptl_iovs *v)
{
	if (v != NULL)
		__atomic_fetch_add(&v->refs, 1, __ATOMIC_RELAXED);
}

void
ptl_iovs_put(struct ptl_iovs *v)
{
	if (v != NULL && __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(v);
}

int
ptl_iov_access(struct ptl_client *c, const struct ptl_iov_ent *iov,
	       unsigned n, uint64_t off, void *buf, uint64_t len, bool write)
{
	struct ptl_host_iov seg[HOST_BATCH];
	uint8_t *b = buf;
	unsigned i, k = 0;
	int rc;

	for (i = 0; i < n && len > 0; i++) {
		uint64_t take;

		if (off >= iov[i].len) {
			off -= iov[i].len;
			continue;
		}
		take = iov[i].len - off;
		if (take > len)
			take = len;
		seg[k].addr = iov[i].addr + off;
		seg[k].buf = b;
		seg[k].len = take;
		b += take;
		len -= take;
		off = 0;
		if (++k == HOST_BATCH) {
			rc = host_access(c, seg, k, write);
			if (rc < 0)
				return rc;
			k = 0;
		}
	}
	if (len > 0) {
		PTL_STAT(c->nic, host_fault);
		return -ERANGE;
	}
	return k == 0 ? 0 : host_access(c, seg, k, write);
}

int
ptl_md_access(struct ptl_client *c, uint32_t h, uint64_t off, void *buf,
	      uint64_t len, bool write)
{
	struct ptl_nic *nic = c->nic;
	struct ptl_iovs *v = NULL;
	struct ptl_md *md;
	int rc;

	ptl_lock(&nic->lock);
	md = ptl_md_get(c, h, NULL);
	if (md != NULL)
		v = md->iov;
	ptl_iovs_get(v);
	ptl_unlock(&nic->lock);
	if (v == NULL)
		return -EBADF;
	rc = ptl_iov_access(c, v->ent, v->n, off, buf, len, write);
	ptl_iovs_put(v);
	return rc;
}
