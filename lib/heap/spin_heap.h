/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_heap.h
 * libspinnic-heap.so: a preload allocator that serves the process's heap
 * (malloc, free, calloc, realloc, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc, malloc_usable_size) from the spinnic host region, so
 * that buffers an application malloc()s are reached by the NIC directly
 * instead of through process_vm_readv/writev (DESIGN §4, README "Preload
 * allocator"). Use it with
 *
 *     LD_PRELOAD=libspinnic-heap.so ./app
 *
 * The region is created at the process's start (the library's
 * constructor; SPINNIC_REGION_SIZE, SPINNIC_HUGEPAGES as for
 * spin_host_alloc()), before any PtlNIInit(): the buffers malloc'd before
 * MPI_Init lie in the region that PtlNIInit later attaches. No spinnic
 * needs to run. When the region is full, could not be created, or while the
 * library is not yet initialized, the libc allocator serves the request;
 * free() and realloc() route each pointer to the allocator that made it
 * (by the region's bounds).
 *
 * Environment: SPINNIC_HEAP=0 turns it off (libc serves everything);
 * SPINNIC_HEAP_MIN=N leaves requests under N bytes to libc;
 * SPINNIC_HEAP_STATS=1 prints the counters below on stderr at exit.
 *
 * This header is only needed to read the counters (tests, benchmarks):
 * an application uses the library unchanged.
 */
#ifndef SPIN_HEAP_H
#define SPIN_HEAP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What spin_heap_stats() reports (counts since the process started). */
struct spin_heap_stats {
	uint32_t enabled;        /**< 1 when the region serves requests */
	uint32_t pad;
	uint64_t region_allocs;  /**< requests served from the region */
	uint64_t region_frees;   /**< region allocations freed */
	uint64_t region_bytes;   /**< usable bytes of region allocations live */
	uint64_t libc_allocs;    /**< requests served by libc */
	uint64_t fallback_full;  /**< ... of them because the region was full */
	uint64_t libc_frees;     /**< frees of libc allocations */
	uint64_t bad_frees;      /**< frees of region pointers that are no
				      live allocation (ignored, reported) */
	uint64_t span_bytes;     /**< region bytes held by the small-size
				      classes (never given back) */
};

/**
 * Read the allocator's counters (relaxed: each field is exact, the set is
 * not a snapshot).
 * @param st_p receives them.
 */
void spin_heap_stats(struct spin_heap_stats *st_p);

#ifdef __cplusplus
}
#endif

#endif /* SPIN_HEAP_H */
