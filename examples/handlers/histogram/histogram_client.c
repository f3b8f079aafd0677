/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * histogram_client: the two processes of the histogram example, one role
 * per run. Each attaches to the spinnic node named by SPINNIC_SOCKET.
 *
 *   target LEN       install a "histogram" context that drops the packets
 *                    tagged NOISE, attach it to an ME of LEN bytes plus
 *                    the result, print "ready NID PID PT", wait for the
 *                    message, then check byte for byte: the packets not
 *                    dropped landed at their offsets, the dropped ones
 *                    left the buffer as it was, the histogram and packet
 *                    counts equal those computed here; print "ok ..."
 *   send NID PID PT LEN
 *                    put a message of LEN bytes to the target, print "ok"
 *
 * The message: one record per packet of the NIC (spin_nic_info()'s
 * payload_size P). Packet r starts with a 4-byte tag, NOISE for every
 * third one, r otherwise; the rest is a byte pattern.
 * Exit status 0 when every check passed, 1 otherwise ("fail ..." line).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals4.h>
#include <spin.h>

#include "histogram.h"

#define MATCH 0x4157u
#define NOISE 0x4e4f4953u   /* the tag of the packets to drop */
#define FILL 0xa5           /* the target's buffer before the message */
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

static uint32_t
tag(uint64_t r)
{
	return r % 3 == 2 ? NOISE : (uint32_t)r;
}

/* the message of len bytes in packets of p bytes */
static void
message_fill(uint8_t *m, uint64_t len, uint32_t p)
{
	uint64_t i, off;

	for (i = 0; i < len; i++)
		m[i] = (uint8_t)(i * 7 + (i >> 8));
	for (off = 0; off + 4 <= len; off += p) {
		uint32_t t = tag(off / p);

		memcpy(m + off, &t, 4);
	}
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

static void
target(ptl_handle_ni_t ni, ptl_handle_eq_t eq, uint64_t len, uint32_t p)
{
	struct histogram_args a = {
		.version = HISTOGRAM_ARGS_VERSION,
		.drop_mask = UINT32_MAX,
		.drop_value = NOISE,
	};
	struct spin_ctx_desc d = {
		.family = HISTOGRAM_FAMILY,
		.args = &a,
		.args_len = sizeof(a),
		.policy = SPIN_SCHED_DEFAULT,  /* packets in parallel */
	};
	struct histogram_result want, got;
	uint64_t win_len = len + sizeof(want), off, i;
	uint8_t *win = spin_host_alloc(win_len), *msg = malloc(len + 1);
	spin_handle_ctx_t ctx;
	ptl_handle_me_t meh;
	ptl_process_t id;
	ptl_pt_index_t pt;
	ptl_event_t ev;
	ptl_me_t me;

	if (win == NULL || msg == NULL)
		fail("out of memory (%" PRIu64 " bytes)", win_len);
	memset(win, FILL, win_len);

	/* PTL_ARG_INVALID here: is spinnic running with --handlers? */
	check(spin_ctx_install(ni, &d, &ctx), "spin_ctx_install histogram");
	check(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), "PtlPTAlloc");
	memset(&me, 0, sizeof(me));
	me.start = win;
	me.length = win_len;  /* the message, then the result */
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
	check(spin_me_append(ni, pt, &me, PTL_PRIORITY_LIST, ctx, NULL, &meh),
	      "spin_me_append");
	check(PtlGetPhysId(ni, &id), "PtlGetPhysId");
	printf("ready %u %u %u\n", id.phys.nid, id.phys.pid, pt);
	fflush(stdout);

	/* the PUT event comes after the completion handler ran */
	wait_event(eq, PTL_EVENT_PUT, &ev);
	if (ev.rlength != len)
		fail("message of %" PRIu64 " bytes, expected %" PRIu64,
		     (uint64_t)ev.rlength, len);

	/* what should be there, computed on the host */
	message_fill(msg, len, p);
	memset(&want, 0, sizeof(want));
	for (i = 0; i < len; i++)
		want.bins[msg[i]]++;
	for (off = 0; off < len; off += p) {
		uint64_t n = len - off < p ? len - off : p;

		if (n >= 4 && tag(off / p) == NOISE) {
			want.pkts_dropped++;
			memset(msg + off, FILL, n);  /* never written */
		} else {
			want.pkts_kept++;
		}
	}
	for (i = 0; i < len; i++)
		if (win[i] != msg[i])
			fail("buffer byte %" PRIu64 " (packet %" PRIu64 "): "
			     "0x%02x, expected 0x%02x", i, i / p, win[i],
			     msg[i]);
	memcpy(&got, win + len, sizeof(got));
	for (i = 0; i < 256; i++)
		if (got.bins[i] != want.bins[i])
			fail("bin %" PRIu64 ": %" PRIu64 ", expected %" PRIu64,
			     i, got.bins[i], want.bins[i]);
	if (got.pkts_kept != want.pkts_kept ||
	    got.pkts_dropped != want.pkts_dropped)
		fail("packets kept %" PRIu64 " dropped %" PRIu64 ", expected %"
		     PRIu64 " and %" PRIu64, got.pkts_kept, got.pkts_dropped,
		     want.pkts_kept, want.pkts_dropped);
	printf("ok %" PRIu64 " bytes in %" PRIu64 "-byte packets: %" PRIu64
	       " kept, %" PRIu64 " dropped, histogram of 256 bins matches\n",
	       len, (uint64_t)p, got.pkts_kept, got.pkts_dropped);
	check(spin_ctx_free(ctx), "spin_ctx_free"); /* the ME was use-once */
	spin_host_free(win);
	free(msg);
}

static void
sender(ptl_handle_ni_t ni, ptl_handle_eq_t eq, char **argv, uint32_t p)
{
	ptl_process_t dst = { .phys = {
		.nid = (ptl_nid_t)strtoul(argv[0], NULL, 0),
		.pid = (ptl_pid_t)strtoul(argv[1], NULL, 0) } };
	ptl_pt_index_t pt = (ptl_pt_index_t)strtoul(argv[2], NULL, 0);
	uint64_t len = strtoull(argv[3], NULL, 0);
	uint8_t *msg = spin_host_alloc(len + 1);
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	ptl_md_t md;

	if (msg == NULL)
		fail("spin_host_alloc(%" PRIu64 ")", len);
	message_fill(msg, len, p);
	memset(&md, 0, sizeof(md));
	md.start = msg;
	md.length = len;
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	check(PtlMDBind(ni, &md, &mdh), "PtlMDBind");
	check(PtlPut(mdh, 0, len, PTL_ACK_REQ, dst, pt, MATCH, 0, NULL, 0),
	      "PtlPut");
	wait_event(eq, PTL_EVENT_SEND, &ev);
	wait_event(eq, PTL_EVENT_ACK, &ev);
	printf("ok sent %" PRIu64 " bytes\n", len);
	PtlMDRelease(mdh);
	spin_host_free(msg);
}

int
main(int argc, char **argv)
{
	struct spin_nic_info info;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_ni_limits_t lim;
	const char *role = argc > 1 ? argv[1] : "";

	if (!((strcmp(role, "target") == 0 && argc == 3) ||
	      (strcmp(role, "send") == 0 && argc == 6))) {
		fprintf(stderr, "usage: histogram_client target LEN\n"
			"       histogram_client send NID PID PT LEN\n");
		return 2;
	}
	check(PtlInit(), "PtlInit");
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			PTL_PID_ANY, NULL, &lim, &ni), "PtlNIInit");
	check(spin_nic_info(ni, &info), "spin_nic_info");
	check(PtlEQAlloc(ni, 64, &eq), "PtlEQAlloc");
	if (strcmp(role, "target") == 0)
		target(ni, eq, strtoull(argv[2], NULL, 0), info.payload_size);
	else
		sender(ni, eq, argv + 2, info.payload_size);
	PtlEQFree(eq);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
