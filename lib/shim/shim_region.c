/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host region: a sealed memfd shared with spinnic, holding the region
 * header, the command ring and a heap (user buffers, EQ rings, counters).
 * The heap is first fit over an address-ordered chain of blocks with
 * boundary tags and an explicit free list; freed blocks coalesce with
 * both neighbours.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim_internal.h"

#define HEAP_MAGIC_USED 0x55534544u /* "DESU" */
#define HEAP_MAGIC_FREE 0x45455246u /* "FREE" */

/* Block header, 64 bytes so payloads stay 64-byte aligned. Offsets are
 * heap offsets + 1 so 0 means none. */
struct heap_blk {
	uint64_t size;      /* whole block, header included */
	uint64_t prev_size; /* previous block in address order, 0 if first */
	uint64_t next_free;
	uint64_t prev_free;
	uint32_t magic;
	uint32_t pad;
	uint64_t user_size;
	uint8_t pad1[16];
};
static_assert(sizeof(struct heap_blk) == SHIM_HEAP_ALIGN, "heap header");

static uint64_t
align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static struct heap_blk *
blk_at(uint64_t off1)
{
	return (struct heap_blk *)(shim_g.region.heap + off1 - 1);
}

static uint64_t
blk_off1(const struct heap_blk *b)
{
	return (uint64_t)((const uint8_t *)b - shim_g.region.heap) + 1;
}

static struct heap_blk *
blk_next(struct heap_blk *b)
{
	uint64_t off = blk_off1(b) - 1 + b->size;

	return off < shim_g.region.heap_size ?
		(struct heap_blk *)(shim_g.region.heap + off) : NULL;
}

static void
free_list_insert(struct heap_blk *b)
{
	b->magic = HEAP_MAGIC_FREE;
	b->prev_free = 0;
	b->next_free = shim_g.region.free_head;
	if (shim_g.region.free_head != 0)
		blk_at(shim_g.region.free_head)->prev_free = blk_off1(b);
	shim_g.region.free_head = blk_off1(b);
}

static void
free_list_remove(struct heap_blk *b)
{
	if (b->prev_free != 0)
		blk_at(b->prev_free)->next_free = b->next_free;
	else
		shim_g.region.free_head = b->next_free;
	if (b->next_free != 0)
		blk_at(b->next_free)->prev_free = b->prev_free;
	b->next_free = b->prev_free = 0;
}

static uint64_t
region_size_wanted(void)
{
	const char *s = getenv("SPINNIC_REGION_SIZE");
	uint64_t v = SHIM_REGION_DEFAULT;

	if (s != NULL && *s != '\0') {
		char *end;
		unsigned long long n = strtoull(s, &end, 0);

		if (*end == 'k' || *end == 'K')
			n <<= 10, end++;
		else if (*end == 'm' || *end == 'M')
			n <<= 20, end++;
		else if (*end == 'g' || *end == 'G')
			n <<= 30, end++;
		if (*end != '\0' || n == 0)
			SHIM_ERR("SPINNIC_REGION_SIZE=%s is not a size; using %u MiB",
				 s, SHIM_REGION_DEFAULT >> 20);
		else
			v = n;
	}
	return align_up(v, SHIM_REGION_ALIGN);
}

/* Create, size and map a memfd; hugetlb selects MFD_HUGETLB. */
static int
region_map(uint64_t size, int hugetlb, int *fd_p, void **base_p)
{
	unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	void *base;
	int fd;

	if (hugetlb)
		flags |= MFD_HUGETLB;
	fd = memfd_create("spinnic-region", flags);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail;
	/* a shared hugetlb mapping reserves its pages here: no SIGBUS later */
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto fail;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
		int err = errno;

		munmap(base, size);
		close(fd);
		return -err;
	}
	*fd_p = fd;
	*base_p = base;
	return 0;
fail:;
	int err = errno;

	close(fd);
	return -err;
}

static void region_copy(uint8_t *dst, int old_fd, const uint8_t *src,
			uint64_t size);

/* fork(): the region is a MAP_SHARED file, so a child would share its
 * heap (allocator state included) with this process; the child gets a
 * copy instead (doc/NOTES.md "Preload allocator"). The copy is made in
 * the parent before the fork, under the heap lock: made in the child, it
 * would race with the parent, which runs on at once. */
static int region_fork_fd = -1;

static void
region_fork_prepare(void)
{
	struct shim_region *r = &shim_g.region;
	uint64_t len;
	void *tmp;
	int fd;

	pthread_mutex_lock(&r->heap_lock);
	region_fork_fd = -1;
	if (r->base == NULL)
		return;
	/* header, ring, heap up to its high-water mark (and the header of
	 * the free block after it): the rest is free, its contents unused */
	len = (uint64_t)(r->heap - r->base) + r->heap_hwm +
		sizeof(struct heap_blk);
	len = align_up(len, 4096);
	if (len > r->size)
		len = r->size;
	if (region_map(r->size, 0, &fd, &tmp) < 0) {
		/* no stdio: a preloaded heap holds its locks here */
		static const char msg[] = "spinnic: fork: cannot make the "
			"child its own copy of the host region; it shares "
			"this process's\n";

		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		return;
	}
	region_copy(tmp, r->memfd, r->base, len);
	munmap(tmp, r->size);
	region_fork_fd = fd;
}

static void
region_fork_parent(void)
{
	if (region_fork_fd >= 0)
		close(region_fork_fd);
	region_fork_fd = -1;
	pthread_mutex_unlock(&shim_g.region.heap_lock);
}

/* In the child: the copy at the same address (async-signal-safe calls). */
static void
region_fork_child(void)
{
	static const char msg[] = "spinnic: fork: cannot map the child's copy "
		"of the host region; it shares the parent's\n";
	struct shim_region *r = &shim_g.region;

	pthread_mutex_init(&r->heap_lock, NULL);
	if (region_fork_fd < 0)
		return;
	if (mmap(r->base, r->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, region_fork_fd, 0) == MAP_FAILED) {
		close(region_fork_fd);
		region_fork_fd = -1;
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		return;
	}
	close(r->memfd);
	r->memfd = region_fork_fd;
	r->hugetlb = 0;
	region_fork_fd = -1;
}

static void
region_create(void)
{
	struct shim_region *r = &shim_g.region;
	const char *hp = getenv("SPINNIC_HUGEPAGES");
	uint64_t size = region_size_wanted();
	uint64_t ring_bytes, heap_off;
	void *base = NULL;
	int fd = -1, rc = -1;

	if (hp == NULL || strcmp(hp, "0") != 0) {
		rc = region_map(size, 1, &fd, &base);
		if (rc < 0)
			SHIM_ERR("no hugepages for the %llu MiB host region (%s); "
				 "using ordinary pages",
				 (unsigned long long)(size >> 20), strerror(-rc));
		else
			r->hugetlb = 1;
	}
	if (rc < 0) {
		rc = region_map(size, 0, &fd, &base);
		if (rc < 0) {
			SHIM_ERR("cannot create the host region: %s",
				 strerror(-rc));
			shim_g.region_err = -rc;
			return;
		}
	}
	r->base = base;
	r->size = size;
	r->memfd = fd;
	r->hdr = base;
	ring_bytes = sizeof(struct spinnic_cmd_ring) +
		(uint64_t)SHIM_CMD_ENTRIES * sizeof(struct spinnic_cmd);
	r->ring = (struct spinnic_cmd_ring *)(r->base + 4096);
	heap_off = align_up(4096 + ring_bytes, 4096);
	r->heap = r->base + heap_off;
	r->heap_size = (size - heap_off) & ~(uint64_t)(SHIM_HEAP_ALIGN - 1);

	r->hdr->magic = SPINNIC_REGION_MAGIC;
	r->hdr->version = SPINNIC_ABI_VERSION;
	r->hdr->hdr_size = sizeof(struct spinnic_region_hdr);
	r->hdr->size = size;
	r->hdr->cmd_off = 4096;
	r->hdr->cmd_entries = SHIM_CMD_ENTRIES;
	r->hdr->heap_off = heap_off;
	r->hdr->heap_size = r->heap_size;
	r->ring->mask = SHIM_CMD_ENTRIES - 1;

	struct heap_blk *b = (struct heap_blk *)r->heap;

	memset(b, 0, sizeof(*b));
	b->size = r->heap_size;
	free_list_insert(b);
	if (pthread_atfork(region_fork_prepare, region_fork_parent,
			   region_fork_child) != 0)
		SHIM_ERR("pthread_atfork failed: a fork()ed child would share "
			 "the host region with this process");
}

int
shim_region_get(void)
{
	pthread_once(&shim_g.region_once, region_create);
	return shim_g.region.base != NULL ? 0 : -shim_g.region_err;
}

/* Copy the data of the old region file into the new mapping: only the
 * extents that hold pages (SEEK_DATA), so an ordinary-page region does not
 * grow to its whole size; hugetlbfs reports all of it as data. */
static void
region_copy(uint8_t *dst, int old_fd, const uint8_t *src, uint64_t size)
{
	off_t data, hole = 0;

	while ((uint64_t)hole < size) {
		data = lseek(old_fd, hole, SEEK_DATA);
		if (data >= 0 && (uint64_t)data >= size)
			return;
		if (data < 0) {
			if (errno == ENXIO)
				return;
			data = hole;          /* no SEEK_DATA: copy the rest */
			hole = (off_t)size;
		} else {
			hole = lseek(old_fd, data, SEEK_HOLE);
			if (hole < 0 || (uint64_t)hole > size)
				hole = (off_t)size;
		}
		memcpy(dst + data, src + data, (size_t)(hole - data));
	}
}

int
shim_region_renew(void)
{
	struct shim_region *r = &shim_g.region;
	int seals, fd, rc, hugetlb = r->hugetlb;
	void *tmp, *at;

	seals = fcntl(r->memfd, F_GET_SEALS);
	if (seals < 0)
		return -errno;
	if (!(seals & F_SEAL_FUTURE_WRITE))
		return 0;
	rc = region_map(r->size, hugetlb, &fd, &tmp);
	if (rc < 0 && hugetlb) {
		hugetlb = 0;
		rc = region_map(r->size, 0, &fd, &tmp);
		if (rc == 0)
			SHIM_ERR("no hugepages for a fresh %llu MiB host region; "
				 "using ordinary pages",
				 (unsigned long long)(r->size >> 20));
	}
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&r->heap_lock);
	region_copy(tmp, r->memfd, r->base, r->size);
	/* the same address: every pointer into the region stays valid */
	at = mmap(r->base, r->size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED, fd, 0);
	rc = at == MAP_FAILED ? -errno : 0;
	if (rc == 0) {
		close(r->memfd);
		r->memfd = fd;
		r->hugetlb = hugetlb;
	}
	pthread_mutex_unlock(&r->heap_lock);
	munmap(tmp, r->size);
	if (rc < 0)
		close(fd);
	return rc;
}

void *
shim_heap_alloc(size_t size)
{
	struct shim_region *r = &shim_g.region;
	struct heap_blk *b, *rest, *next;
	uint64_t need;
	int rc;

	if (size == 0 || size > (1ull << 62)) {
		errno = EINVAL;
		return NULL;
	}
	rc = shim_region_get();
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	need = align_up(size, SHIM_HEAP_ALIGN) + sizeof(struct heap_blk);
	pthread_mutex_lock(&r->heap_lock);
	for (uint64_t o = r->free_head; o != 0; o = b->next_free) {
		b = blk_at(o);
		if (b->size < need)
			continue;
		free_list_remove(b);
		if (b->size - need >= 2 * sizeof(struct heap_blk)) {
			rest = (struct heap_blk *)((uint8_t *)b + need);
			memset(rest, 0, sizeof(*rest));
			rest->size = b->size - need;
			rest->prev_size = need;
			b->size = need;
			next = blk_next(rest);
			if (next != NULL)
				next->prev_size = rest->size;
			free_list_insert(rest);
		}
		b->magic = HEAP_MAGIC_USED;
		b->user_size = size;
		r->heap_used += b->size;
		if (blk_off1(b) - 1 + b->size + sizeof(*b) > r->heap_hwm)
			r->heap_hwm = blk_off1(b) - 1 + b->size + sizeof(*b);
		pthread_mutex_unlock(&r->heap_lock);
		return b + 1;
	}
	pthread_mutex_unlock(&r->heap_lock);
	errno = ENOMEM;
	return NULL;
}

void
shim_heap_free(void *p)
{
	struct shim_region *r = &shim_g.region;
	struct heap_blk *b, *next, *prev;
	uint64_t off;

	if (p == NULL)
		return;
	if (r->base == NULL || (uint8_t *)p < r->heap + sizeof(*b) ||
	    (uint8_t *)p >= r->heap + r->heap_size) {
		SHIM_ERR("spin_host_free(%p): not in the host region", p);
		return;
	}
	off = (uint64_t)((uint8_t *)p - r->heap);
	if (off % SHIM_HEAP_ALIGN != 0) {
		SHIM_ERR("spin_host_free(%p): not an allocation", p);
		return;
	}
	b = (struct heap_blk *)p - 1;
	pthread_mutex_lock(&r->heap_lock);
	if (b->magic != HEAP_MAGIC_USED) {
		pthread_mutex_unlock(&r->heap_lock);
		SHIM_ERR("spin_host_free(%p): not an allocation or freed twice",
			 p);
		return;
	}
	r->heap_used -= b->size;
	next = blk_next(b);
	if (next != NULL && next->magic == HEAP_MAGIC_FREE) {
		free_list_remove(next);
		next->magic = 0;
		b->size += next->size;
	}
	prev = b->prev_size != 0 ?
		(struct heap_blk *)((uint8_t *)b - b->prev_size) : NULL;
	if (prev != NULL && prev->magic == HEAP_MAGIC_FREE) {
		b->magic = 0;
		prev->size += b->size;
		b = prev;
	} else {
		free_list_insert(b);
	}
	next = blk_next(b);
	if (next != NULL)
		next->prev_size = b->size;
	pthread_mutex_unlock(&r->heap_lock);
}

uint64_t
shim_heap_used(void)
{
	uint64_t v;

	pthread_mutex_lock(&shim_g.region.heap_lock);
	v = shim_g.region.heap_used;
	pthread_mutex_unlock(&shim_g.region.heap_lock);
	return v;
}

int
shim_heap_check(void)
{
	struct shim_region *r = &shim_g.region;
	uint64_t off = 0, prev = 0, nfree = 0, nlist = 0, used = 0;
	int rc = 0, prev_free = 0;

	if (r->base == NULL)
		return 0;
	pthread_mutex_lock(&r->heap_lock);
	while (off < r->heap_size) {
		struct heap_blk *b = (struct heap_blk *)(r->heap + off);
		int is_free = b->magic == HEAP_MAGIC_FREE;

		if (b->size < sizeof(*b) || b->size % SHIM_HEAP_ALIGN != 0 ||
		    b->prev_size != prev ||
		    (!is_free && b->magic != HEAP_MAGIC_USED) ||
		    (is_free && prev_free)) {
			rc = -EFAULT;
			break;
		}
		nfree += is_free;
		used += is_free ? 0 : b->size;
		prev_free = is_free;
		prev = b->size;
		off += b->size;
	}
	if (rc == 0 && off != r->heap_size)
		rc = -EFAULT;
	for (uint64_t o = r->free_head; rc == 0 && o != 0;
	     o = blk_at(o)->next_free) {
		if (++nlist > nfree || blk_at(o)->magic != HEAP_MAGIC_FREE)
			rc = -EFAULT;
	}
	if (rc == 0 && (nlist != nfree || used != r->heap_used))
		rc = -EFAULT;
	pthread_mutex_unlock(&r->heap_lock);
	return rc;
}

void *
spin_host_alloc(size_t size)
{
	return shim_heap_alloc(size);
}

void
spin_host_free(void *p)
{
	shim_heap_free(p);
}

int
spin_host_contains(const void *p, size_t len)
{
	const uint8_t *q = p;
	struct shim_region *r = &shim_g.region;

	if (r->base == NULL || q < r->heap)
		return 0;
	return (uint64_t)(q - r->heap) <= r->heap_size &&
		len <= r->heap_size - (uint64_t)(q - r->heap);
}
