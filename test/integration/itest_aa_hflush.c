/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active flush behind message handlers (paper 004 §3.6, doc/NOTES.md
 * "Active Access", third slice), through a real spinnic --virtual 2 with
 * test/spin's plugin_slow (argv[1]): the target's ME runs "test_slow",
 * whose payload handler sleeps 20 ms per packet and then DMAs the packet to
 * W|R|WLD pages; NMSG puts of several packets go without acks and
 * spin_aa_flush follows at once, while most handlers have not run. The
 * flush must return only once every handler ran and the consumer
 * processed every record their DMAs made: the bytes processed are all the
 * puts' bytes, and a get right after reads every byte the handlers
 * wrote. The HPUs run on their own lcore (on the inbound role's, a
 * burst's handlers all run before the next packet is read). Again over
 * the lossy link (itest_aa_hflush_lossy).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "harness.h"
#include "itest_aa.h"
#include "kid.h"

#define NMSG 4u
#define MSG_LEN 8192u  /* several packets each: one message slot holds */
#define DATA (NMSG * MSG_LEN)
#define DPG (DATA / PG) /* data pages; the flushing page after them */
#define MATCH_PLAIN (MATCH + 1)

static uint8_t
byte_of(uint64_t o)
{
	return (uint8_t)(o * 7 + o / 251 + 1);
}

struct hf_ctx {
	uint8_t *buf;
	uint64_t bytes, count;
	unsigned bad;
};

/* every record: a handler's DMA of one packet to the data pages */
static int
on_rec(void *arg, const struct spin_aa_rec *r)
{
	struct hf_ctx *f = arg;
	uint64_t off = (uint64_t)((const uint8_t *)r->addr - f->buf), k;

	if (r->kind != SPIN_AA_PUT_DATA || !(r->flags & SPIN_AA_F_HANDLER) ||
	    off >= DATA || r->len > DATA - off)
		f->bad++;
	else
		for (k = 0; k < r->len; k++)
			if (((const uint8_t *)r->data)[k] != byte_of(off + k))
				f->bad++;
	f->count++;
	f->bytes += r->len;
	/* what the flush returns: bytes processed */
	__atomic_store_n((uint64_t *)(f->buf + DATA), f->bytes,
			 __ATOMIC_RELEASE);
	return 0;
}

/* DPG data pages (W|R|WLD) under an ME with test_slow, then the flushing
 * page (R|FLUSH); all under a plain ME for the flush and the get. */
static int
target_main(struct kid *self, void *arg)
{
	struct spin_ctx_desc d = { .family = "test_slow" };
	ptl_handle_me_t meh, mph;
	struct hf_ctx f = { 0 };
	spin_handle_aalog_t log;
	spin_handle_ctx_t ctx;
	struct kid_ni n;
	char line[64];
	uint8_t *raw;
	unsigned got;
	ptl_me_t me;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc((DPG + 2) * PG);
	KCHECK(self, raw != NULL, "alloc");
	f.buf = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(f.buf, 0, (DPG + 1) * PG);
	KCHECK(self, spin_ctx_install(n.ni, &d, &ctx) == PTL_OK, "ctx");
	KCHECK(self, aa_log_new(n.ni, 1u << 16, 0, 0, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, f.buf, DATA, A_W | A_R | A_WLD,
				   log) == PTL_OK, "assoc data");
	KCHECK(self, spin_aa_assoc(n.ni, f.buf + DATA, PG,
				   A_R | SPIN_AA_FLUSH, log) == PTL_OK,
	       "assoc flush");
	memset(&me, 0, sizeof(me));
	me.start = f.buf;
	me.length = DATA;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, spin_me_append(n.ni, n.pt, &me, PTL_PRIORITY_LIST, ctx,
				    NULL, &meh) == PTL_OK, "spin_me_append");
	me.length = DATA + PG;
	me.options = PTL_ME_OP_GET | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_bits = MATCH_PLAIN;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &mph) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	while (kid_line(self, line, sizeof(line), 1) != 0)
		spin_aa_log_poll(log, on_rec, &f, 64, &got);
	KCHECK(self, strcmp(line, "done") == 0, "line %s", line);
	PtlMEUnlink(meh);
	PtlMEUnlink(mph);
	KCHECK(self, spin_ctx_free(ctx) == PTL_OK, "ctx free");
	KCHECK(self, spin_aa_assoc(n.ni, f.buf, DATA + PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok bytes=%" PRIu64 " records=%" PRIu64 " bad=%u",
		f.bytes, f.count, f.bad);
	return 0;
}

/* NMSG puts without acks, at once spin_aa_flush, then a get of the data
 * pages. */
static int
ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(2 * DATA);
	unsigned i, which, wrong = 0;
	ptl_handle_md_t md;
	struct kid_ni n;
	uint64_t val = 0;
	ptl_event_t ev;
	ptl_md_t d;
	int rc;

	KCHECK(self, loc != NULL, "alloc");
	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	for (i = 0; i < DATA; i++)
		loc[i] = byte_of(i);
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 2 * DATA;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (i = 0; i < NMSG; i++) {
		do {
			rc = PtlPut(md, i * MSG_LEN, MSG_LEN, PTL_NO_ACK_REQ,
				    t, ia->pt, MATCH, i * MSG_LEN, NULL, 0);
		} while (rc == PTL_NO_SPACE);
		KCHECK(self, rc == PTL_OK, "put %u: %d", i, rc);
	}
	rc = spin_aa_flush(n.ni, t, ia->pt, MATCH_PLAIN, DATA, &val, 30000);
	KCHECK(self, rc == PTL_OK, "flush: %d", rc);
	/* the handlers' bytes, read right after the flush returned */
	KCHECK(self, PtlGet(md, DATA, DATA, t, ia->pt, MATCH_PLAIN, 0,
			    NULL) == PTL_OK, "PtlGet");
	do {
		rc = PtlEQPoll(&n.eq, 1, 20000, &ev, &which);
		KCHECK(self, rc == PTL_OK, "get: %d", rc);
	} while (ev.type != PTL_EVENT_REPLY);
	KCHECK(self, ev.ni_fail_type == PTL_NI_OK, "get failed: %d",
	       ev.ni_fail_type);
	for (i = 0; i < DATA; i++)
		wrong += loc[DATA + i] != loc[i];
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok processed=%" PRIu64 " wrong=%u", val, wrong);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long long processed, bytes, records;
	unsigned wrong, bad;
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];

	itest_init("itest_aa_hflush", 100);
	ITEST_CHECK(argc == 2, "usage: %s PLUGIN_SLOW_SO", argv[0]);
	{
		/* the HPUs on their own lcore: on the inbound role's lcore
		 * a burst's handlers all run before the next packet is read,
		 * so no handler could still run when the flush arrives */
		const char *opts[] = { "--handlers", argv[1], "--lcores", "0-1",
				       "--lcore-roles",
				       "inbound=0,outbound=0,hpu=1", NULL };

		itest_spinnic_start(opts);
	}
	kid_start(&tk, "aa-hflush-target", 1, false, target_main, NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-hflush-initiator", 0, false, ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	ITEST_CHECK(sscanf(line, "ok processed=%llu wrong=%u", &processed,
			   &wrong) == 2, "%s", line);
	kid_tell(&tk, "done");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	ITEST_CHECK(sscanf(line, "ok bytes=%llu records=%llu bad=%u", &bytes,
			   &records, &bad) == 3, "%s", line);
	printf("itest_aa_hflush: flush after %u slow-handler puts of %u "
	       "bytes: %llu bytes processed, %u not yet written; target: "
	       "%llu records, %llu bytes, %u bad\n", NMSG, MSG_LEN, processed,
	       wrong, records, bytes, bad);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	aa_expect_logged("itest_aa_hflush", (unsigned long)records);
	ITEST_CHECK(processed == DATA && wrong == 0,
		    "the flush returned before the handlers' work: %llu of %u "
		    "bytes processed, %u bytes missing", processed, DATA,
		    wrong);
	ITEST_CHECK(bytes == DATA && bad == 0, "target: %llu bytes, %u bad",
		    bytes, bad);
	ITEST_CHECK(itest_counter(1, "aa_flush_waits") > 0,
		    "the flush never waited for a handler");
	return 0;
}
