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
 * time in the process (every Portals atomic of every NIC passes here). */
static pthread_mutex_t bounce_lock = PTHREAD_MUTEX_INITIALIZER;

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
	uint8_t *buf;
	int rc;

	if (len == 0)
		return 0;
	if (t != NULL)
		return ptl_atomic_apply(op, type, t, operand, compare, len,
					fetch_out);
	buf = malloc(len);
	if (buf == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&bounce_lock);
	rc = ptl_host_read(c, addr, buf, len);
	if (rc == 0)
		rc = ptl_atomic_apply(op, type, buf, operand, compare, len,
				      fetch_out);
	if (rc == 0)
		rc = ptl_host_write(c, addr, buf, len);
	pthread_mutex_unlock(&bounce_lock);
	free(buf);
	return rc;
}
