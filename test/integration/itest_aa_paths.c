/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access on the other write paths, through a real spinnic
 * --virtual 2: sPIN handler DMAs (the checksum family copying payloads
 * into marked pages: HANDLER records with the initiator, the bytes and
 * the window offset; a refused DMA leaves its page untouched and fails
 * the put). The paper's premise (remote writes do not set soft-dirty
 * bits) is itest_aa_softdirty.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>
#include <spin_handler_args.h>

#include "harness.h"
#include "itest_aa.h"
#include "kid.h"

/* ---- sPIN handler DMAs: the "checksum" family copying payloads ------------------ */

struct hrec {
	unsigned n, bad, meta, data;
	uint8_t *buf;
};

static int
on_handler_rec(void *arg, const struct spin_aa_rec *r)
{
	struct hrec *h = arg;
	uint64_t off = (uint64_t)((uint8_t *)r->addr - h->buf), k;

	h->n++;
	/* the message's initiator (node 0) and the offset in the window */
	if (!(r->flags & SPIN_AA_F_HANDLER) || r->initiator.phys.nid != 0 ||
	    r->msg_off != off)
		h->bad++;
	if (r->kind == SPIN_AA_PUT_META && off < PG && r->len == 0)
		h->meta++;
	else if (r->kind == SPIN_AA_PUT_DATA && off >= PG && off < 2 * PG) {
		h->data++;
		for (k = 0; k < r->len; k++)
			if (((const uint8_t *)r->data)[k] !=
			    (uint8_t)((off + k) * 11 + 5))
				h->bad++;
	} else {
		h->bad++;
	}
	return 0;
}

/*
 * An ME with the checksum handler (payload copied by handler DMAs,
 * result after the data) over pages 0 (W|R|WL), 1 (W|R|WLD), 2
 * (unmarked: the result); then page 0 made R only: the handler's DMA
 * there is refused and the message fails.
 */
static int
handler_target_main(struct kid *self, void *arg)
{
	struct spin_csum_args ca = { .version = SPIN_CSUM_ARGS_VERSION,
				     .flags = SPIN_CSUM_F_COPY,
				     .result_off = SPIN_CSUM_RESULT_AFTER };
	struct spin_ctx_desc d = { .family = "checksum", .args = &ca,
				   .args_len = sizeof(ca) };
	struct hrec h = { 0 };
	spin_handle_aalog_t log;
	spin_handle_ctx_t ctx;
	ptl_handle_me_t meh;
	struct kid_ni n;
	char line[64];
	uint8_t *raw;
	unsigned got;
	ptl_me_t me;
	uint64_t j;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc(4 * PG);
	KCHECK(self, raw != NULL, "alloc");
	h.buf = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(h.buf, 0, 3 * PG);
	KCHECK(self, spin_ctx_install(n.ni, &d, &ctx) == PTL_OK, "ctx");
	KCHECK(self, aa_log_new(n.ni, 1u << 16, 0, 0, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, h.buf, PG, A_W | A_R | A_WL, log) ==
	       PTL_OK && spin_aa_assoc(n.ni, h.buf + PG, PG,
				       A_W | A_R | A_WLD, log) == PTL_OK,
	       "assoc");
	memset(&me, 0, sizeof(me));
	me.start = h.buf;
	me.length = 3 * PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, spin_me_append(n.ni, n.pt, &me, PTL_PRIORITY_LIST, ctx,
				    NULL, &meh) == PTL_OK, "spin_me_append");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	for (j = 0; j < 2 * PG; j++)
		KCHECK(self, h.buf[j] == (uint8_t)(j * 11 + 5), "byte %"
		       PRIu64, j);
	while (spin_aa_log_poll(log, on_handler_rec, &h, 64, &got) == PTL_OK)
		;
	/* page 0 refuses writes now */
	memset(h.buf, 0, PG);
	KCHECK(self, spin_aa_assoc(n.ni, h.buf, PG, A_R, SPIN_AA_LOG_NONE) ==
	       PTL_OK, "assoc R");
	kid_say(self, "marked");
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       strcmp(line, "check") == 0, "no second check line");
	for (j = 0; j < PG; j++)
		KCHECK(self, h.buf[j] == 0, "refused page written at %" PRIu64,
		       j);
	while (spin_aa_log_poll(log, on_handler_rec, &h, 64, &got) == PTL_OK)
		;
	PtlMEUnlink(meh);
	KCHECK(self, spin_aa_assoc(n.ni, h.buf, 3 * PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	KCHECK(self, spin_ctx_free(ctx) == PTL_OK, "ctx free");
	kid_ni_close(&n);
	kid_say(self, "ok n=%u meta=%u data=%u bad=%u", h.n, h.meta, h.data,
		h.bad);
	return 0;
}

/* A put of two pages; "again": the same; says each ack's failure type. */
static int
handler_ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(2 * PG);
	ptl_handle_md_t md;
	struct kid_ni n;
	unsigned which;
	char line[64];
	ptl_md_t d;
	uint64_t k;
	int r;

	KCHECK(self, loc != NULL, "alloc");
	for (k = 0; k < 2 * PG; k++)
		loc[k] = (uint8_t)(k * 11 + 5);
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 2 * PG;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	for (r = 0; r < 2; r++) {
		ptl_event_t ev;

		KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0,
		       "no go line");
		KCHECK(self, PtlPut(md, 0, 2 * PG, PTL_ACK_REQ, t, ia->pt,
				    MATCH, 0, NULL, 0) == PTL_OK, "put");
		KCHECK(self, PtlEQPoll(&n.eq, 1, 20000, &ev, &which) ==
		       PTL_OK && ev.type == PTL_EVENT_ACK, "ack");
		kid_say(self, "acked %d", ev.ni_fail_type);
	}
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* @return the records logged */
static unsigned
run_handler(void)
{
	unsigned nrec, meta, data, bad;
	struct ini_arg ia;
	struct kid tk, ik;
	char line[256];
	int f1, f2;

	kid_start(&tk, "aa-handler-target", 1, false, handler_target_main,
		  NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-handler-initiator", 0, false, handler_ini_main,
		  &ia);
	kid_tell(&ik, "go");
	kid_expect(&ik, "acked", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "acked %d", &f1) == 1, "%s", line);
	kid_tell(&tk, "check");
	kid_expect(&tk, "marked", line, sizeof(line));
	kid_tell(&ik, "go");
	kid_expect(&ik, "acked", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "acked %d", &f2) == 1, "%s", line);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	kid_tell(&tk, "check");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	ITEST_CHECK(sscanf(line, "ok n=%u meta=%u data=%u bad=%u", &nrec,
			   &meta, &data, &bad) == 4, "%s", line);
	printf("itest_aa: handler DMAs: %u records (%u WL on page 0, %u WLD "
	       "on page 1), acks %d then %d (page 0 refusing)\n", nrec, meta,
	       data, f1, f2);
	ITEST_CHECK(f1 == PTL_NI_OK && f2 != PTL_NI_OK, "ack failure types "
		    "%d, %d", f1, f2);
	ITEST_CHECK(bad == 0 && meta >= 1 && data >= 1 && data * PG >= PG,
		    "handler records: bad %u meta %u data %u", bad, meta,
		    data);
	return nrec;
}

int
main(void)
{
	unsigned long want = 0;

	itest_init("itest_aa_paths", 180);
	itest_spinnic_start(NULL);
	want += run_handler();
	itest_spinnic_finish();
	itest_expect_no_leaks();
	aa_expect_logged("itest_aa_paths", want);
	return 0;
}
