/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The copy floor of a layout (the `floor` row of unpack and apps): the
 * preloaded packets' payloads copied into the same window by a bare loop
 * over a precomputed list of (window offset, payload, length) pieces, the
 * type's blocks cut at packet boundaries. No runtime, no type walk: what
 * any receive of these packets into this layout has to do at least.
 */
#ifndef SPINNIC_BENCH_FLOOR_H
#define SPINNIC_BENCH_FLOOR_H

#include <stdint.h>

struct bench_nic;
struct ddt_type;
struct bench_floor;

/**
 * The pieces of @p count elements of committed @p t over the packets
 * loaded in @p n, for a window whose byte 0 is the type's offset @p lo.
 * @return the list, or NULL (logged) with errno ENOMEM, EINVAL
 */
struct bench_floor *bench_floor_create(const struct bench_nic *n,
				       const struct ddt_type *t, int64_t count,
				       int64_t lo);
/** One timed run into @p win. @return seconds */
double bench_floor_run(const struct bench_floor *f, void *win);
/**
 * One timed run split over @p nthr threads placed as the HPU threads of
 * a NIC with nthr HPUs (the caller's the first, bench_hpu_attr_cpu): the
 * floor at the parallelism the HPUs have, which the machine's cores and
 * memory allow. Each thread copies a contiguous share of the pieces; the
 * clock runs from the start signal (threads waiting) to the last done.
 * @return seconds, < 0 when a thread could not start (logged)
 */
double bench_floor_run_threads(const struct bench_floor *f, void *win,
			       unsigned nthr);
void bench_floor_free(struct bench_floor *f);

#endif
