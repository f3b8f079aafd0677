/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * demo_recv: the receiving side of `make demo`. Exposes a region buffer
 * laid out as vector(count, blocklen, stride)[double] through an ME that
 * carries the ddt_vector execution context: the NIC's packet handlers
 * unpack every packet of a packed message straight into place. Prints
 * "ready NID PID PT", waits for the sender's messages (all carry the same
 * bytes), verifies every byte of the typed buffer (the blocks hold the
 * sender's values, the gaps are untouched) against a host pack + unpack
 * of the sender's data, and prints the receive throughput next to the
 * streaming-copy limit (memcpy of the same bytes) measured in the same
 * run.
 *
 * usage: demo_recv COUNT BLOCKLEN STRIDE ITERATIONS
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>
#include <spin_handler_args.h>

#include "demo_common.h"

#define MATCH 0xd3d0

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The streaming-copy limit: memcpy of the same number of bytes between
 * buffers larger than the caches (as the NIC's writes are), best of 3.
 */
static double
memcpy_gbit_s(size_t len)
{
	size_t size = len < (64u << 20) ? (64u << 20) : len;
	uint8_t *a = malloc(size), *b = malloc(size);
	double best = 0;
	int r;

	if (a == NULL || b == NULL)
		die("out of memory");
	memset(a, 1, size);
	memset(b, 2, size);
	for (r = 0; r < 3; r++) {
		double t0 = now_s(), t;

		memcpy(b, a, size);
		t = now_s() - t0;
		a[r] = b[size - 1 - (size_t)r];
		if (t > 0 && (double)size * 8 / t / 1e9 > best)
			best = (double)size * 8 / t / 1e9;
	}
	free(a);
	free(b);
	return best;
}

int
main(int argc, char **argv)
{
	struct spin_vec_args va;
	struct spin_ctx_desc d;
	struct spin_nic_info info;
	struct ddt_type *type;
	spin_handle_ctx_t ctx;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t meh;
	ptl_ni_limits_t lim;
	ptl_pt_index_t pt;
	ptl_process_t id;
	ptl_event_t ev;
	ptl_me_t me;
	long count, blocklen, stride, iters, i;
	uint64_t packed_len, extent, j;
	uint8_t *win, *packed, *want;
	double *typed;
	double t_first = 0, t_last = 0, gbit, limit;
	unsigned which;

	if (argc != 5)
		die("usage: demo_recv COUNT BLOCKLEN STRIDE ITERATIONS");
	count = atol(argv[1]);
	blocklen = atol(argv[2]);
	stride = atol(argv[3]);
	iters = atol(argv[4]);
	if (iters < 2)
		die("ITERATIONS must be at least 2");
	type = demo_type(argv[1], argv[2], argv[3]);
	packed_len = (uint64_t)ddt_size(type);
	extent = (uint64_t)ddt_true_extent(type);

	ptl_check(PtlInit(), "PtlInit");
	ptl_check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			    PTL_PID_ANY, NULL, &lim, &ni), "PtlNIInit");
	ptl_check(PtlGetPhysId(ni, &id), "PtlGetPhysId");
	ptl_check(spin_nic_info(ni, &info), "spin_nic_info");
	ptl_check(PtlEQAlloc(ni, 1024, &eq), "PtlEQAlloc");
	ptl_check(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), "PtlPTAlloc");

	win = spin_host_alloc(extent);
	if (win == NULL)
		die("spin_host_alloc(%" PRIu64 "): region too small "
		    "(SPINNIC_REGION_SIZE)", extent);
	memset(win, 0, extent);

	/* vector(count, blocklen, stride)[double] at window offset 0 */
	memset(&va, 0, sizeof(va));
	va.version = SPIN_VEC_ARGS_VERSION;
	va.blocklen = (uint64_t)blocklen * sizeof(double);
	va.count = (uint64_t)count;
	va.stride = (int64_t)stride * (int64_t)sizeof(double);
	va.extent = (int64_t)extent;
	va.nelem = 1;
	memset(&d, 0, sizeof(d));
	d.family = "ddt_vector";
	d.args = &va;
	d.args_len = sizeof(va);
	ptl_check(spin_ctx_install(ni, &d, &ctx), "spin_ctx_install");

	memset(&me, 0, sizeof(me));
	me.start = win;
	me.length = extent;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE;
	ptl_check(spin_me_append(ni, pt, &me, PTL_PRIORITY_LIST, ctx, NULL,
				 &meh), "spin_me_append");

	printf("demo_recv: vector(%ld,%ld,%ld)[double]: %" PRIu64
	       " packed bytes into a %" PRIu64 "-byte buffer, %u-byte packets\n",
	       count, blocklen, stride, packed_len, extent, info.payload_size);
	printf("ready %u %u %u\n", id.phys.nid, id.phys.pid, pt);
	fflush(stdout);

	for (i = 0; i < iters; i++) {
		int rc = PtlEQPoll(&eq, 1, 30000, &ev, &which);

		if (rc != PTL_OK)
			die("message %ld: no event (%s)", i, spin_strerror(rc));
		if (ev.type != PTL_EVENT_PUT || ev.ni_fail_type != PTL_NI_OK ||
		    ev.rlength != packed_len)
			die("message %ld: event %d ni_fail %d rlength %" PRIu64,
			    i, (int)ev.type, (int)ev.ni_fail_type,
			    (uint64_t)ev.rlength);
		if (i == 0)
			t_first = now_s();
		t_last = now_s();
	}

	/* every byte: the NIC's unpack against the host's */
	typed = malloc(extent);
	packed = malloc(packed_len);
	want = calloc(1, extent);
	if (typed == NULL || packed == NULL || want == NULL)
		die("out of memory");
	demo_fill(typed, extent / sizeof(double));
	if (ddt_pack(type, 1, typed, packed) != 0 ||
	    ddt_unpack(type, 1, packed, want) != 0)
		die("ddt_pack/ddt_unpack");
	for (j = 0; j < extent; j++)
		if (win[j] != want[j])
			die("byte %" PRIu64 " of the buffer: %u, want %u", j,
			    win[j], want[j]);
	printf("demo_recv: verified all %" PRIu64 " bytes of the typed buffer "
	       "(%" PRIu64 " data bytes placed by the ddt_vector handler)\n",
	       extent, packed_len);

	gbit = (double)(iters - 1) * (double)packed_len * 8 /
		(t_last - t_first) / 1e9;
	limit = memcpy_gbit_s(packed_len);
	printf("demo_recv: %ld messages, unpacked by the NIC at %.2f Gbit/s; "
	       "streaming copy of the same bytes %.2f Gbit/s; ratio %.3f\n",
	       iters, gbit, limit, gbit / limit);
	fflush(stdout);

	PtlMEUnlink(meh);
	spin_ctx_free(ctx);
	PtlPTFree(ni, pt);
	PtlEQFree(eq);
	PtlNIFini(ni);
	PtlFini();
	spin_host_free(win);
	free(typed);
	free(packed);
	free(want);
	ddt_free(type);
	return 0;
}
