/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce_put_client: the three processes of the reduce_put example, one
 * role per run. Each attaches to the spinnic node named by SPINNIC_SOCKET.
 *
 *   peer N SEED          expose an 8-byte ME for the total, print
 *                        "ready NID PID PT", wait for the total the
 *                        handler puts, check it against the sum of the
 *                        N int32s computed here, print "ok total=T"
 *   reduce PEER_NID PEER_PID PEER_PT N
 *                        install a "reduce_put" context whose completion
 *                        handler puts to the peer, attach it to an ME of
 *                        N int32s, print "ready NID PID PT", wait for
 *                        the message, check that none of its bytes
 *                        reached the ME's buffer, print "ok"
 *   send NID PID PT N SEED
 *                        put N int32s to the reducer, print "ok"
 *
 * Exit status 0 when every check passed, 1 otherwise ("fail ..." line).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals4.h>
#include <spin.h>

#include "reduce_put.h"

#define DATA_MATCH 0x5ed0u   /* the reducer's ME: the int32s */
#define TOTAL_MATCH 0x7074u  /* the peer's ME: the 8-byte total */
#define TIMEOUT_MS 30000

static void __attribute__((format(printf, 1, 2), noreturn))
fail(const char *fmt, ...)
{
	va_list ap;

	printf("fail: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static void
check(int rc, const char *what)
{
	if (rc != PTL_OK)
		fail("%s: %s", what, spin_strerror(rc));
}

/* int32 i of the message: all over the range, negatives included */
static int32_t
value(uint64_t i, uint64_t seed)
{
	return (int32_t)(uint32_t)((i + 1) * 2654435761u ^ seed * 0x9e3779b9u);
}

/* one event of the wanted type on eq, or fail */
static void
wait_event(ptl_handle_eq_t eq, ptl_event_kind_t type, ptl_event_t *ev)
{
	unsigned which;
	int rc = PtlEQPoll(&eq, 1, TIMEOUT_MS, ev, &which);

	if (rc != PTL_OK)
		fail("no event after %u ms: %s", TIMEOUT_MS, spin_strerror(rc));
	if (ev->type != type || ev->ni_fail_type != PTL_NI_OK)
		fail("event %d (ni_fail_type %d), expected %d", (int)ev->type,
		     (int)ev->ni_fail_type, (int)type);
}

/* a put ME on pt: window buf[0, len) */
static void
me_append(ptl_handle_ni_t ni, ptl_pt_index_t pt, void *buf, uint64_t len,
	  uint64_t match, spin_handle_ctx_t ctx, ptl_handle_me_t *me_p)
{
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = len;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = match;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
	check(spin_me_append(ni, pt, &me, PTL_PRIORITY_LIST, ctx, NULL, me_p),
	      "spin_me_append");
}

static void
ready(ptl_handle_ni_t ni, ptl_pt_index_t pt)
{
	ptl_process_t id;

	check(PtlGetPhysId(ni, &id), "PtlGetPhysId");
	printf("ready %u %u %u\n", id.phys.nid, id.phys.pid, pt);
	fflush(stdout);
}

static void
peer(ptl_handle_ni_t ni, ptl_handle_eq_t eq, uint64_t n, uint64_t seed)
{
	int64_t *total = spin_host_alloc(sizeof(*total)), want = 0;
	ptl_handle_me_t meh;
	ptl_pt_index_t pt;
	ptl_event_t ev;
	uint64_t i;

	if (total == NULL)
		fail("spin_host_alloc");
	for (i = 0; i < n; i++)
		want += value(i, seed);
	*total = 0;
	check(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), "PtlPTAlloc");
	me_append(ni, pt, total, sizeof(*total), TOTAL_MATCH, SPIN_CTX_NONE,
		  &meh);
	ready(ni, pt);
	wait_event(eq, PTL_EVENT_PUT, &ev);
	if (ev.mlength != sizeof(*total) || *total != want)
		fail("total %" PRId64 " (%" PRIu64 " bytes), computed here %"
		     PRId64, *total, (uint64_t)ev.mlength, want);
	printf("ok total=%" PRId64 " of %" PRIu64 " int32s\n", *total, n);
	spin_host_free(total);
}

static void
reducer(ptl_handle_ni_t ni, ptl_handle_eq_t eq, char **argv)
{
	struct reduce_put_args a = {
		.version = REDUCE_PUT_ARGS_VERSION,
		.peer_nid = (uint32_t)strtoul(argv[0], NULL, 0),
		.peer_pid = (uint32_t)strtoul(argv[1], NULL, 0),
		.peer_pt = (uint32_t)strtoul(argv[2], NULL, 0),
		.match_bits = TOTAL_MATCH,
	};
	struct spin_ctx_desc d = {
		.family = REDUCE_PUT_FAMILY,
		.args = &a,
		.args_len = sizeof(a),
		.policy = SPIN_SCHED_DEFAULT,  /* packets in parallel */
	};
	uint64_t len = strtoull(argv[3], NULL, 0) * 4, i;
	uint8_t *win = spin_host_alloc(len);
	spin_handle_ctx_t ctx;
	ptl_handle_me_t meh;
	ptl_pt_index_t pt;
	ptl_event_t ev;

	if (win == NULL)
		fail("spin_host_alloc(%" PRIu64 ")", len);
	memset(win, 0, len);
	/* PTL_ARG_INVALID here: is spinnic running with --handlers? */
	check(spin_ctx_install(ni, &d, &ctx), "spin_ctx_install reduce_put");
	check(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), "PtlPTAlloc");
	me_append(ni, pt, win, len, DATA_MATCH, ctx, &meh);
	ready(ni, pt);
	/* the PUT event comes after the completion handler ran */
	wait_event(eq, PTL_EVENT_PUT, &ev);
	if (ev.rlength != len)
		fail("message of %" PRIu64 " bytes, expected %" PRIu64,
		     (uint64_t)ev.rlength, len);
	for (i = 0; i < len; i++)
		if (win[i] != 0)
			fail("byte %" PRIu64 " of the ME buffer written", i);
	printf("ok reduced %" PRIu64 " bytes on the NIC\n", len);
	check(spin_ctx_free(ctx), "spin_ctx_free"); /* the ME was use-once */
	spin_host_free(win);
}

static void
sender(ptl_handle_ni_t ni, ptl_handle_eq_t eq, char **argv)
{
	ptl_process_t dst = { .phys = {
		.nid = (ptl_nid_t)strtoul(argv[0], NULL, 0),
		.pid = (ptl_pid_t)strtoul(argv[1], NULL, 0) } };
	ptl_pt_index_t pt = (ptl_pt_index_t)strtoul(argv[2], NULL, 0);
	uint64_t n = strtoull(argv[3], NULL, 0);
	uint64_t seed = strtoull(argv[4], NULL, 0), i;
	int32_t *data = spin_host_alloc(n * 4);
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	ptl_md_t md;

	if (data == NULL)
		fail("spin_host_alloc(%" PRIu64 ")", n * 4);
	for (i = 0; i < n; i++)
		data[i] = value(i, seed);
	memset(&md, 0, sizeof(md));
	md.start = data;
	md.length = n * 4;
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	check(PtlMDBind(ni, &md, &mdh), "PtlMDBind");
	check(PtlPut(mdh, 0, n * 4, PTL_ACK_REQ, dst, pt, DATA_MATCH, 0,
		     NULL, 0), "PtlPut");
	wait_event(eq, PTL_EVENT_SEND, &ev);
	wait_event(eq, PTL_EVENT_ACK, &ev);
	printf("ok sent %" PRIu64 " int32s\n", n);
	PtlMDRelease(mdh);
	spin_host_free(data);
}

int
main(int argc, char **argv)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_ni_limits_t lim;
	const char *role = argc > 1 ? argv[1] : "";

	if (!((strcmp(role, "peer") == 0 && argc == 4) ||
	      (strcmp(role, "reduce") == 0 && argc == 6) ||
	      (strcmp(role, "send") == 0 && argc == 7))) {
		fprintf(stderr, "usage: reduce_put_client peer N SEED\n"
			"       reduce_put_client reduce PEER_NID PEER_PID "
			"PEER_PT N\n"
			"       reduce_put_client send NID PID PT N SEED\n");
		return 2;
	}
	check(PtlInit(), "PtlInit");
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			PTL_PID_ANY, NULL, &lim, &ni), "PtlNIInit");
	check(PtlEQAlloc(ni, 64, &eq), "PtlEQAlloc");
	if (strcmp(role, "peer") == 0)
		peer(ni, eq, strtoull(argv[2], NULL, 0),
		     strtoull(argv[3], NULL, 0));
	else if (strcmp(role, "reduce") == 0)
		reducer(ni, eq, argv + 2);
	else
		sender(ni, eq, argv + 2);
	PtlEQFree(eq);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
