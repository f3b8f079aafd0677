/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libspinnic-heap.so: the process's heap from the spinnic host region
 * (spin_heap.h; DESIGN §4; doc/NOTES.md "Preload allocator").
 *
 * Over libspinnic's region allocator (spin_host_alloc: first fit, boundary
 * tags, one lock, 64-byte headers) sit
 *  - 32 small size classes (16 B .. 8 KiB usable, 4 per power of two
 *    above 128 B), each with its own lock, a LIFO free list and a bump
 *    span of 64 KiB taken from the region; spans are never given back;
 *  - large requests (> 8 KiB) and alignments over 16 B: one region block
 *    each, freed to the region at once.
 * Every object carries a 16-byte header before it (magic, class or offset
 * to the block, usable size): free() tells region pointers from libc's by
 * the region's bounds, then checks the header. Whatever the region cannot
 * serve goes to glibc's own allocator (__libc_malloc and friends, which
 * need no dlsym: no bootstrap recursion).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spin.h>

#include "spin_heap.h"

/* glibc's allocator under its internal names (GLIBC_2.2.5, exported) */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

#define HEAP_EXPORT __attribute__((visibility("default")))

#define HDR_SIZE 16u
#define SMALL_MAX 8192u
#define NCLASS 32u
#define SPAN_SIZE (64u << 10)
#define MAGIC_SMALL 0x6c6d7348u /* "Hsml" */
#define MAGIC_LARGE 0x67724c48u /* "HLrg" */
#define MAGIC_FREE 0x65724648u  /* "HFre" */
#define BAD_FREE_REPORTS 8u

struct obj_hdr {
	uint32_t magic;
	uint32_t aux;   /* small: class; large: user pointer - block */
	uint64_t size;  /* usable bytes */
};
_Static_assert(sizeof(struct obj_hdr) == HDR_SIZE, "object header");

struct size_class {
	pthread_mutex_t lock;
	void *free_head;       /* first free object (user pointer) */
	uint8_t *bump;         /* next unused object of the current span */
	uint8_t *bump_end;
	uint32_t usable;
	/* counted under the lock: no shared atomic on the small path */
	uint64_t allocs, frees;
} __attribute__((aligned(64)));

static struct size_class classes[NCLASS];

static int heap_ready;          /* the constructor ran: region usable */
static int heap_enabled;        /* the region serves requests */
static size_t heap_min;         /* SPINNIC_HEAP_MIN */
static int heap_print_stats;
/* the smallest region request that failed since the last region free:
 * requests as big go to libc without walking the region's free list */
static size_t heap_fail_size = SIZE_MAX;
static size_t (*libc_usable)(void *);

/* set while this thread is inside the region allocator or the
 * constructor: a malloc from there (stdio, pthread_atfork, dlsym) goes to
 * libc instead of recursing */
static __thread int in_heap __attribute__((tls_model("initial-exec")));

static struct {
	uint64_t region_allocs, region_frees, region_bytes, libc_allocs,
		fallback_full, libc_frees, bad_frees, span_bytes;
} heap_st;

#define ST_ADD(f, v) __atomic_fetch_add(&heap_st.f, (v), __ATOMIC_RELAXED)
#define ST_SUB(f, v) __atomic_fetch_sub(&heap_st.f, (v), __ATOMIC_RELAXED)

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Class of a request of n bytes (1 <= n <= SMALL_MAX). */
static unsigned
class_of(size_t n)
{
	unsigned p;

	if (n <= 128)
		return (unsigned)((n + 15) / 16) - 1;
	p = 63u - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
	return 8u + (p - 7u) * 4u +
		(unsigned)(((n - 1) - ((size_t)1 << p)) >> (p - 2u));
}

static bool
in_region(const void *p)
{
	return heap_enabled && spin_host_contains(p, 1);
}

static void
heap_report(const char *what, const void *p)
{
	uint64_t n = ST_ADD(bad_frees, 1);
	char line[160];
	int len;

	if (n >= BAD_FREE_REPORTS)
		return;
	/* no stdio: this may run inside the allocator */
	len = snprintf(line, sizeof(line),
		       "spinnic-heap: %s(%p): not a live allocation of the "
		       "host region; ignored\n", what, p);
	if (len > 0)
		(void)!write(STDERR_FILENO, line,
			     (size_t)len < sizeof(line) ? (size_t)len :
			     sizeof(line) - 1);
}

/* One region block for a large or over-aligned request. */
static void *
large_alloc(size_t n, size_t align)
{
	size_t extra = align <= 16 ? 64 : align + HDR_SIZE;
	uint8_t *raw, *user;
	struct obj_hdr *h;

	if (n > SIZE_MAX / 2 || align > (1u << 30))
		return NULL;
	if (n + extra >= __atomic_load_n(&heap_fail_size, __ATOMIC_RELAXED)) {
		ST_ADD(fallback_full, 1);
		return NULL;
	}
	raw = spin_host_alloc(n + extra);
	if (raw == NULL) {
		size_t cur = __atomic_load_n(&heap_fail_size, __ATOMIC_RELAXED);

		while (n + extra < cur &&
		       !__atomic_compare_exchange_n(&heap_fail_size, &cur,
						    n + extra, false,
						    __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
			;
		ST_ADD(fallback_full, 1);
		return NULL;
	}
	user = align <= 16 ? raw + 64 :
		(uint8_t *)align_up((uintptr_t)raw + HDR_SIZE, align);
	h = (struct obj_hdr *)user - 1;
	h->magic = MAGIC_LARGE;
	h->aux = (uint32_t)(user - raw);
	h->size = n;
	ST_ADD(region_allocs, 1);
	ST_ADD(region_bytes, n);
	return user;
}

static void *
small_alloc(size_t n)
{
	struct size_class *c = &classes[class_of(n)];
	size_t osz = (size_t)c->usable + HDR_SIZE;
	struct obj_hdr *h;
	uint8_t *p;

	pthread_mutex_lock(&c->lock);
	p = c->free_head;
	if (p != NULL && ((struct obj_hdr *)p - 1)->magic != MAGIC_FREE) {
		/* a write through a freed pointer: drop the list (leak it) */
		c->free_head = NULL;
		pthread_mutex_unlock(&c->lock);
		heap_report("malloc: free list", p);
		return NULL;
	}
	if (p != NULL) {
		c->free_head = *(void **)p;
	} else {
		if (c->bump == NULL || (size_t)(c->bump_end - c->bump) < osz) {
			uint8_t *span = NULL;

			if (SPAN_SIZE < __atomic_load_n(&heap_fail_size,
							 __ATOMIC_RELAXED))
				span = spin_host_alloc(SPAN_SIZE);
			if (span == NULL) {
				pthread_mutex_unlock(&c->lock);
				ST_ADD(fallback_full, 1);
				return NULL;
			}
			ST_ADD(span_bytes, SPAN_SIZE);
			c->bump = span;
			c->bump_end = span + SPAN_SIZE;
		}
		p = c->bump + HDR_SIZE;
		c->bump += osz;
	}
	h = (struct obj_hdr *)p - 1;
	h->magic = MAGIC_SMALL;
	h->aux = (uint32_t)(c - classes);
	h->size = c->usable;
	c->allocs++;
	pthread_mutex_unlock(&c->lock);
	return p;
}

/* A region allocation, or NULL: then libc serves it. */
static void *
region_alloc(size_t n, size_t align)
{
	void *p;

	if (!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE) || !heap_enabled ||
	    in_heap || n < heap_min)
		return NULL;
	if (n == 0)
		n = 1;
	in_heap = 1;
	if (align <= 16 && n <= SMALL_MAX)
		p = small_alloc(n);
	else
		p = large_alloc(n, align);
	in_heap = 0;
	return p;
}

/* Header of a region pointer, or NULL (reported) when it is none. */
static struct obj_hdr *
region_hdr(void *p, const char *what)
{
	struct obj_hdr *h = (struct obj_hdr *)p - 1;

	if ((uintptr_t)p % 16 != 0 || !spin_host_contains(h, HDR_SIZE) ||
	    (h->magic == MAGIC_SMALL && h->aux >= NCLASS) ||
	    (h->magic != MAGIC_SMALL && h->magic != MAGIC_LARGE)) {
		heap_report(what, p);
		return NULL;
	}
	return h;
}

static void
region_free(void *p)
{
	struct obj_hdr *h = region_hdr(p, "free");

	if (h == NULL)
		return;
	if (h->magic == MAGIC_SMALL) {
		struct size_class *c = &classes[h->aux];

		pthread_mutex_lock(&c->lock);
		if (h->magic != MAGIC_SMALL) { /* freed twice, concurrently */
			pthread_mutex_unlock(&c->lock);
			heap_report("free", p);
			return;
		}
		h->magic = MAGIC_FREE;
		*(void **)p = c->free_head;
		c->free_head = p;
		c->frees++;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	ST_ADD(region_frees, 1);
	ST_SUB(region_bytes, h->size);
	h->magic = MAGIC_FREE;
	in_heap = 1;
	spin_host_free((uint8_t *)p - h->aux);
	in_heap = 0;
	__atomic_store_n(&heap_fail_size, SIZE_MAX, __ATOMIC_RELAXED);
}

static void *
libc_alloc(size_t n, size_t align)
{
	void *p = align <= 16 ? __libc_malloc(n) : __libc_memalign(align, n);

	if (p != NULL)
		ST_ADD(libc_allocs, 1);
	return p;
}

/* ---- the interface ---------------------------------------------------- */

HEAP_EXPORT void *
malloc(size_t n)
{
	void *p = region_alloc(n, 0);

	return p != NULL ? p : libc_alloc(n, 0);
}

HEAP_EXPORT void
free(void *p)
{
	if (p == NULL)
		return;
	if (in_region(p)) {
		region_free(p);
		return;
	}
	ST_ADD(libc_frees, 1);
	__libc_free(p);
}

HEAP_EXPORT void *
calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	p = region_alloc(total, 0);
	if (p != NULL) {
		memset(p, 0, total);
		return p;
	}
	p = __libc_calloc(n, size);
	if (p != NULL)
		ST_ADD(libc_allocs, 1);
	return p;
}

HEAP_EXPORT void *
realloc(void *p, size_t n)
{
	struct obj_hdr *h;
	void *q;

	if (p == NULL)
		return malloc(n);
	if (!in_region(p)) {
		/* libc's stays libc's: a realloc moves no buffer in */
		return __libc_realloc(p, n);
	}
	if (n == 0) {
		free(p);
		return NULL;
	}
	h = region_hdr(p, "realloc");
	if (h == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* in place when it fits and would not waste over half */
	if (n <= h->size && (n > h->size / 2 || h->size <= 16))
		return p;
	q = malloc(n);
	if (q == NULL)
		return NULL;
	memcpy(q, p, n < h->size ? n : h->size);
	region_free(p);
	return q;
}

static bool
align_ok(size_t align)
{
	return align != 0 && (align & (align - 1)) == 0;
}

HEAP_EXPORT int
posix_memalign(void **p_p, size_t align, size_t n)
{
	void *p;

	if (!align_ok(align) || align % sizeof(void *) != 0)
		return EINVAL;
	p = region_alloc(n, align);
	if (p == NULL)
		p = libc_alloc(n, align);
	if (p == NULL)
		return ENOMEM;
	*p_p = p;
	return 0;
}

HEAP_EXPORT void *
memalign(size_t align, size_t n)
{
	void *p;

	if (!align_ok(align)) {
		/* glibc rounds a non-power of two up */
		if (align > SIZE_MAX / 2 + 1) {
			errno = EINVAL;
			return NULL;
		}
		align = align < 2 ? 1 : (size_t)1 << (64 - __builtin_clzll(
				(unsigned long long)align));
	}
	p = region_alloc(n, align);
	return p != NULL ? p : libc_alloc(n, align);
}

HEAP_EXPORT void *
aligned_alloc(size_t align, size_t n)
{
	if (!align_ok(align)) {
		errno = EINVAL;
		return NULL;
	}
	return memalign(align, n);
}

HEAP_EXPORT void *
valloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = region_alloc(n, page);

	if (p != NULL)
		return p;
	p = __libc_valloc(n);
	if (p != NULL)
		ST_ADD(libc_allocs, 1);
	return p;
}

HEAP_EXPORT void *
pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (n > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	p = region_alloc(align_up(n ? n : 1, page), page);
	if (p != NULL)
		return p;
	p = __libc_pvalloc(n);
	if (p != NULL)
		ST_ADD(libc_allocs, 1);
	return p;
}

HEAP_EXPORT size_t
malloc_usable_size(void *p)
{
	struct obj_hdr *h;

	if (p == NULL)
		return 0;
	if (!in_region(p))
		return libc_usable != NULL ? libc_usable(p) : 0;
	h = region_hdr(p, "malloc_usable_size");
	return h != NULL ? h->size : 0;
}

HEAP_EXPORT void
spin_heap_stats(struct spin_heap_stats *st_p)
{
	if (st_p == NULL)
		return;
	memset(st_p, 0, sizeof(*st_p));
	st_p->enabled = (uint32_t)heap_enabled;
#define ST_GET(f) (st_p->f = __atomic_load_n(&heap_st.f, __ATOMIC_RELAXED))
	ST_GET(region_allocs);
	ST_GET(region_frees);
	ST_GET(region_bytes);
	ST_GET(libc_allocs);
	ST_GET(fallback_full);
	ST_GET(libc_frees);
	ST_GET(bad_frees);
	ST_GET(span_bytes);
#undef ST_GET
	/* the small classes' counts: read without their locks (each word
	 * exact, the sum not a snapshot) */
	for (unsigned i = 0; i < NCLASS; i++) {
		uint64_t a = __atomic_load_n(&classes[i].allocs,
					     __ATOMIC_RELAXED);
		uint64_t f = __atomic_load_n(&classes[i].frees,
					     __ATOMIC_RELAXED);

		st_p->region_allocs += a;
		st_p->region_frees += f;
		st_p->region_bytes += (a - f) * classes[i].usable;
	}
}

/* ---- fork and start ---------------------------------------------------- */

/* Every class lock is held across fork(), so the child finds none held by
 * a thread it does not have. Registered after libspinnic's own handler
 * (the region's creation registers it): prepare handlers run in reverse
 * order, so these class locks are taken before the region's lock, the
 * order of small_alloc(). */
static void
heap_fork_prepare(void)
{
	for (unsigned i = 0; i < NCLASS; i++)
		pthread_mutex_lock(&classes[i].lock);
}

static void
heap_fork_parent(void)
{
	for (unsigned i = NCLASS; i-- > 0;)
		pthread_mutex_unlock(&classes[i].lock);
}

static void
heap_fork_child(void)
{
	for (unsigned i = 0; i < NCLASS; i++)
		pthread_mutex_init(&classes[i].lock, NULL);
}

static void
heap_print(void)
{
	struct spin_heap_stats st;

	spin_heap_stats(&st);
	fprintf(stderr, "spinnic-heap: pid %d: %s; region: %llu allocations, "
		"%llu frees, %llu bytes live, %llu span bytes; libc: %llu "
		"allocations (%llu with the region full), %llu frees; "
		"%llu bad frees\n", (int)getpid(),
		st.enabled ? "enabled" : "disabled",
		(unsigned long long)st.region_allocs,
		(unsigned long long)st.region_frees,
		(unsigned long long)st.region_bytes,
		(unsigned long long)st.span_bytes,
		(unsigned long long)st.libc_allocs,
		(unsigned long long)st.fallback_full,
		(unsigned long long)st.libc_frees,
		(unsigned long long)st.bad_frees);
}

static size_t
env_size(const char *name)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0')
		return 0;
	v = strtoull(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end != '\0') {
		fprintf(stderr, "spinnic-heap: %s=%s is not a size; ignored\n",
			name, s);
		return 0;
	}
	return (size_t)v;
}

__attribute__((constructor)) static void
heap_init(void)
{
	const char *on = getenv("SPINNIC_HEAP");
	const char *st = getenv("SPINNIC_HEAP_STATS");
	void *probe;

	in_heap = 1;
	for (unsigned i = 0; i < NCLASS; i++) {
		unsigned s = i < 8 ? (i + 1) * 16 :
			(1u << (7 + (i - 8) / 4)) +
			((i - 8) % 4 + 1) * (1u << (5 + (i - 8) / 4));

		pthread_mutex_init(&classes[i].lock, NULL);
		classes[i].usable = s;
	}
	libc_usable = (size_t (*)(void *))dlsym(RTLD_NEXT,
						"malloc_usable_size");
	heap_min = env_size("SPINNIC_HEAP_MIN");
	heap_print_stats = st != NULL && strcmp(st, "0") != 0 && *st != '\0';
	if (heap_print_stats)
		atexit(heap_print);
	if (on != NULL && strcmp(on, "0") == 0)
		goto out;
	/* create the region now (libspinnic registers its fork handler
	 * then), so that ours comes after it */
	probe = spin_host_alloc(64);
	if (probe == NULL) {
		fprintf(stderr, "spinnic-heap: no host region (%s); the libc "
			"allocator serves this process\n", strerror(errno));
		goto out;
	}
	spin_host_free(probe);
	if (pthread_atfork(heap_fork_prepare, heap_fork_parent,
			   heap_fork_child) != 0) {
		fprintf(stderr, "spinnic-heap: pthread_atfork failed; the libc "
			"allocator serves this process\n");
		goto out;
	}
	heap_enabled = 1;
out:
	in_heap = 0;
	__atomic_store_n(&heap_ready, 1, __ATOMIC_RELEASE);
}
