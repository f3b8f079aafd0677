/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /spinnic/aa (app/spinnic/telemetry.c) over the EAL's telemetry socket,
 * with a real spinnic --virtual 2: a target on node 1 marks two pages
 * R|WLD, one bound to a back-pressuring 16 KiB log, one to a dropping
 * one; an initiator puts 100 records' worth into the first and 200 into
 * the second (128 fit). Then the node's counters, the client's marks
 * (2 ranges, 8192 bytes, 2 logs) and each log (mode, consumer, records,
 * lost, prod, cons, lag) are exactly what was sent; after the target
 * consumed the first log its lag is 0; after it left, it is not listed.
 * A node that does not exist answers null.
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
#include "tel.h"

#define RING 16384u     /* 128 records of 8 bytes */
#define NBP 100u        /* to the back-pressuring log: all fit */
#define NDROP 200u      /* to the dropping one: 128 fit */
#define REC 128u        /* bytes of a record with 8 data bytes */

static int
target_main(struct kid *self, void *arg)
{
	spin_handle_aalog_t bp, dr;
	ptl_handle_me_t meh;
	unsigned count = 0, got;
	struct kid_ni n;
	char line[64];
	uint8_t *raw, *buf;
	ptl_me_t me;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc(3 * PG);
	KCHECK(self, raw != NULL, "alloc");
	buf = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	KCHECK(self, aa_log_new(n.ni, RING, 0, 0, &bp) == PTL_OK, "log bp");
	KCHECK(self, aa_log_new(n.ni, RING, SPIN_AA_LOG_DROP, 5, &dr) ==
	       PTL_OK, "log drop");
	KCHECK(self, spin_aa_assoc(n.ni, buf, PG, A_R | A_WLD, bp) == PTL_OK &&
	       spin_aa_assoc(n.ni, buf + PG, PG, A_R | A_WLD, dr) == PTL_OK,
	       "assoc");
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = 2 * PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "consume") == 0, "no consume line");
	while (spin_aa_log_poll(bp, on_count, &count, 64, &got) == PTL_OK)
		;
	kid_say(self, "consumed %u", count);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "done") == 0, "no done line");
	PtlMEUnlink(meh);
	KCHECK(self, spin_aa_assoc(n.ni, buf, 2 * PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(bp) == PTL_OK &&
	       spin_aa_log_free(dr) == PTL_OK, "log free");
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* NBP puts to page 0, NDROP to page 1, each acknowledged. */
static int
ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(64);
	unsigned i, which;
	ptl_handle_md_t md;
	struct kid_ni n;
	ptl_md_t d;

	KCHECK(self, loc != NULL, "alloc");
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 64;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (i = 0; i < NBP + NDROP; i++) {
		ptl_event_t ev;

		KCHECK(self, PtlPut(md, 0, 8, PTL_ACK_REQ, t, ia->pt, MATCH,
				    i < NBP ? 0 : PG, NULL, 0) == PTL_OK,
		       "put %u", i);
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.type == PTL_EVENT_ACK, "ack %u", i);
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* A log's dict must say @p mode and @p consumer. */
static void
check_strs(const char *r, const char *obj, const char *mode)
{
	ITEST_CHECK(tel_json_has_str(r, obj, "mode", mode) &&
		    tel_json_has_str(r, obj, "consumer", "host"),
		    "%s: not a %s log consumed by the host: %s", obj, mode, r);
}

int
main(void)
{
	char tel_path[256], line[256], cmd[64], obj[64], lg0[64], lg1[64];
	long long rec0, lost0, live0;
	struct ini_arg ia;
	struct kid tk, ik;
	unsigned i;
	char *r;
	int fd;

	itest_init("itest_aa_tel", 90);
	itest_spinnic_start(NULL);
	if (itest_log_word("telemetry: ", tel_path, sizeof(tel_path)) != 0 ||
	    tel_path[0] != '/')
		itest_fail("spinnic did not log its telemetry socket");
	fd = tel_connect(tel_path);
	r = tel_query(fd, "/spinnic/aa,1");
	rec0 = tel_need(r, "node1", "records");
	lost0 = tel_need(r, "node1", "lost");
	live0 = tel_need(r, "node1", "logs_live");
	ITEST_CHECK(tel_json_num(r, "node0", "records") == NO_OBJ,
		    "/spinnic/aa,1 answered node0 too: %s", r);
	free(r);

	kid_start(&tk, "aa-tel-target", 1, false, target_main, NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-tel-initiator", 0, false, ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);

	snprintf(cmd, sizeof(cmd), "/spinnic/aa,1,%u", ia.pid);
	snprintf(obj, sizeof(obj), "node1/pid%u", ia.pid);
	snprintf(lg0, sizeof(lg0), "node1/pid%u/log0", ia.pid);
	snprintf(lg1, sizeof(lg1), "node1/pid%u/log1", ia.pid);
	r = tel_query(fd, cmd);
	ITEST_CHECK(tel_need(r, "node1", "records") - rec0 ==
		    NBP + RING / REC &&
		    tel_need(r, "node1", "lost") - lost0 ==
		    NDROP - RING / REC &&
		    tel_need(r, "node1", "logs_live") - live0 == 2,
		    "node1 counters: %s", r);
	tel_need(r, "node1", "backpressure");
	tel_need(r, "node1", "flush_waits");
	tel_need(r, "node1", "dma_waits");
	ITEST_CHECK(tel_need(r, obj, "ranges") == 2 &&
		    tel_need(r, obj, "marked_bytes") == 2 * PG &&
		    tel_need(r, obj, "logs") == 2, "%s: %s", obj, r);
	check_strs(r, lg0, "backpressure");
	check_strs(r, lg1, "drop");
	ITEST_CHECK(tel_need(r, lg0, "size") == RING &&
		    tel_need(r, lg0, "records") == NBP &&
		    tel_need(r, lg0, "lost") == 0 &&
		    tel_need(r, lg0, "prod") == NBP * REC &&
		    tel_need(r, lg0, "cons") == 0 &&
		    tel_need(r, lg0, "lag_bytes") == NBP * REC &&
		    tel_need(r, lg0, "held") == 0 &&
		    tel_need(r, lg0, "err") == 0 &&
		    tel_need(r, lg0, "notify_every") == 1, "%s: %s", lg0, r);
	ITEST_CHECK(tel_need(r, lg1, "records") == RING / REC &&
		    tel_need(r, lg1, "lost") == NDROP - RING / REC &&
		    tel_need(r, lg1, "lag_bytes") == RING &&
		    tel_need(r, lg1, "notify_every") == 5, "%s: %s", lg1, r);
	ITEST_CHECK(tel_json_num(r, "node1/pid0/log0", "size") == NO_OBJ ||
		    ia.pid == 0, "another client listed: %s", r);
	free(r);

	/* consumed: no lag */
	kid_tell(&tk, "consume");
	kid_expect(&tk, "consumed", line, sizeof(line));
	ITEST_CHECK(strcmp(line, "consumed 100") == 0, "target: %s", line);
	r = tel_query(fd, cmd);
	ITEST_CHECK(tel_need(r, lg0, "cons") == NBP * REC &&
		    tel_need(r, lg0, "lag_bytes") == 0, "%s: %s", lg0, r);
	free(r);

	/* gone with the client */
	kid_tell(&tk, "done");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	for (i = 0; i < 100; i++) {
		long long v;

		r = tel_query(fd, "/spinnic/aa");
		v = tel_json_num(r, obj, "logs");
		free(r);
		if (v == NO_OBJ)
			break;
		usleep(20000);
	}
	ITEST_CHECK(i < 100, "%s still listed after it left", obj);
	r = tel_query(fd, "/spinnic/aa,7");
	ITEST_CHECK(strstr(r, "\"/spinnic/aa\":null") != NULL ||
		    strstr(r, "\"/spinnic/aa\": null") != NULL,
		    "/spinnic/aa,7: expected null, got %s", r);
	free(r);
	r = tel_query(fd, "/spinnic/aa,x");
	ITEST_CHECK(strstr(r, "null") != NULL, "/spinnic/aa,x: %s", r);
	free(r);
	close(fd);
	fprintf(stderr, "itest_aa_tel: /spinnic/aa passed\n");
	itest_spinnic_finish();
	itest_expect_no_leaks();
	return 0;
}
