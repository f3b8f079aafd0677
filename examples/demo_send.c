/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * demo_send: the sending side of `make demo`. Holds its data laid out as
 * vector(count, blocklen, stride)[double] (a strided matrix part), packs it
 * with the datatype library and puts the packed message ITERATIONS times,
 * all in flight at once, to the receiver; waits for every SEND and ACK.
 *
 * usage: demo_send NID PID PT COUNT BLOCKLEN STRIDE ITERATIONS
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <portals4.h>
#include <spin.h>

#include "demo_common.h"

#define MATCH 0xd3d0

int
main(int argc, char **argv)
{
	struct ddt_type *type;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t mdh;
	ptl_ni_limits_t lim;
	ptl_process_t target;
	ptl_event_t ev;
	ptl_md_t md;
	uint64_t len, extent;
	long iters, i, acks = 0, sends = 0;
	ptl_pt_index_t pt;
	double *typed;
	uint8_t *buf;
	unsigned which;

	if (argc != 8)
		die("usage: demo_send NID PID PT COUNT BLOCKLEN STRIDE "
		    "ITERATIONS");
	target.phys.nid = (ptl_nid_t)strtoul(argv[1], NULL, 0);
	target.phys.pid = (ptl_pid_t)strtoul(argv[2], NULL, 0);
	pt = (ptl_pt_index_t)strtoul(argv[3], NULL, 0);
	type = demo_type(argv[4], argv[5], argv[6]);
	iters = atol(argv[7]);
	if (iters <= 0)
		die("bad ITERATIONS");
	len = (uint64_t)ddt_size(type);
	extent = (uint64_t)ddt_true_extent(type);

	ptl_check(PtlInit(), "PtlInit");
	ptl_check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			    PTL_PID_ANY, NULL, &lim, &ni), "PtlNIInit");
	ptl_check(PtlEQAlloc(ni, 1024, &eq), "PtlEQAlloc");

	/* the application's strided data, packed once for the NIC */
	typed = malloc(extent);
	buf = spin_host_alloc(len);
	if (typed == NULL || buf == NULL)
		die("out of memory (%" PRIu64 " + %" PRIu64 " bytes)", extent,
		    len);
	demo_fill(typed, extent / sizeof(double));
	if (ddt_pack(type, 1, typed, buf) != 0)
		die("ddt_pack");
	md.start = buf;
	md.length = len;
	md.options = 0;
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	ptl_check(PtlMDBind(ni, &md, &mdh), "PtlMDBind");

	for (i = 0; i < iters; i++)
		ptl_check(PtlPut(mdh, 0, len, PTL_ACK_REQ, target, pt, MATCH, 0,
				 NULL, (ptl_hdr_data_t)i), "PtlPut");
	while (acks < iters || sends < iters) {
		int rc = PtlEQPoll(&eq, 1, 30000, &ev, &which);

		if (rc != PTL_OK)
			die("no event after %ld sends %ld acks (%s)", sends,
			    acks, spin_strerror(rc));
		if (ev.ni_fail_type != PTL_NI_OK)
			die("event %d failed: ni_fail_type %d", (int)ev.type,
			    (int)ev.ni_fail_type);
		if (ev.type == PTL_EVENT_SEND)
			sends++;
		else if (ev.type == PTL_EVENT_ACK)
			acks++;
	}
	printf("demo_send: %ld puts of %" PRIu64 " packed bytes sent and "
	       "acknowledged\n", iters, len);
	PtlMDRelease(mdh);
	PtlEQFree(eq);
	PtlNIFini(ni);
	PtlFini();
	spin_host_free(buf);
	free(typed);
	ddt_free(type);
	return 0;
}
