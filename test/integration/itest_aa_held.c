/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handler records held on the NIC (doc/NOTES.md "Active Access: handler
 * records wait on the NIC"): with one HPU per node, a target's checksum
 * handler copies NPUT 2 KiB puts into a W|R|WLD page whose 16 KiB log
 * (7 such records) is consumed on the NIC by the aa_count access
 * handler on that same HPU. The records a full ring cannot take are held
 * on the NIC and the client's sPIN packets are refused meanwhile
 * (resent), so no handler DMA waits on the HPU and nothing is lost:
 * every put acknowledged OK, the page's write count and the active
 * flush's processed count exactly NPUT, node 1 held some records
 * (aa_dma_waits), lost none and refused packets (drop_aa_full). Before,
 * the HPU waited 2 s per DMA for a consumer that only that HPU could run,
 * then lost the records. First, a target whose log (host-consumed) is
 * never read is killed while the NIC holds its handler records and the
 * sPIN messages that made them wait for their acks: its detach forgets
 * both (no leak, and the run above still works). Over the lossy link too
 * (itest_aa_held_lossy).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>
#include <spin_handler_args.h>

#include "harness.h"
#include "itest_aa.h"
#include "kid.h"
#include "tel.h"
#include "active_access.h"

#define NPUT 400u
#define PUT_LEN 2048u
#define P_DATA 0u    /* the handler's copies land here (W|R|WLD) */
#define P_RESULT 1u  /* the checksum's result (unmarked) */
#define P_CNT 2u     /* aa_count's counters (unmarked) */
#define P_FLUSH 3u   /* the flushing page: processed count */
#define NPG 4u
#define MATCH_F 0xaa19ull
#define DOOMED (1u << 31) /* in ini_arg.pt: the doomed target */
/* the doomed target's bits: puts to it still in flight when the next
 * target takes its pid (a new incarnation) must not match that one */
#define MATCH_D 0xaa1aull

/* In a kid: the checksum context (SPIN_CSUM_F_COPY: every payload to
 * page P_DATA, the result to P_RESULT) on an ME over the first two pages
 * of @p b with @p bits. @return 0, 1 after saying why */
static int
csum_me(struct kid *self, struct kid_ni *n, uint8_t *b, uint64_t bits,
	spin_handle_ctx_t *ctx_p, ptl_handle_me_t *meh_p)
{
	struct spin_csum_args sa = { .version = SPIN_CSUM_ARGS_VERSION,
				     .flags = SPIN_CSUM_F_COPY,
				     .result_off = P_RESULT * PG };
	struct spin_ctx_desc sd = { .family = "checksum", .args = &sa,
				    .args_len = sizeof(sa) };
	ptl_me_t me;

	KCHECK(self, spin_ctx_install(n->ni, &sd, ctx_p) == PTL_OK,
	       "checksum ctx");
	memset(&me, 0, sizeof(me));
	me.start = b;
	me.length = 2 * PG;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	KCHECK(self, spin_me_append(n->ni, n->pt, &me, PTL_PRIORITY_LIST,
				    *ctx_p, NULL, meh_p) == PTL_OK, "spin ME");
	return 0;
}

/* The doomed target: the same checksum ME into a W|R|WLD page whose
 * host-consumed log is never read; killed by the test. */
static int
doomed_main(struct kid *self, void *arg)
{
	spin_handle_aalog_t log;
	spin_handle_ctx_t sctx;
	ptl_handle_me_t meh;
	struct kid_ni n;
	uint8_t *raw, *b;
	char line[64];

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc((NPG + 1) * PG);
	KCHECK(self, raw != NULL, "alloc");
	b = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	KCHECK(self, aa_log_new(n.ni, 1u << 14, 0, 0, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, b + P_DATA * PG, PG,
				   A_W | A_R | A_WLD, log) == PTL_OK, "assoc");
	if (csum_me(self, &n, b, MATCH_D, &sctx, &meh) != 0)
		return 1;
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	(void)kid_line(self, line, sizeof(line), 120000);
	return 1; /* killed before */
}

static int
target_main(struct kid *self, void *arg)
{
	struct aa_count_args ca = {
		.version = AA_COUNT_ARGS_VERSION, .npages = 1,
		.counters_off = P_CNT * PG, .processed_off = P_FLUSH * PG,
	};
	struct spin_ctx_desc cd = { .family = AA_COUNT_FAMILY, .args = &ca,
				    .args_len = sizeof(ca) };
	struct spin_aa_log_desc ld = { .size = 1u << 14,
				       .flags = SPIN_AA_LOG_HANDLER };
	struct spin_aa_log_status st;
	spin_handle_ctx_t actx, sctx;
	spin_handle_aalog_t log;
	ptl_handle_me_t meh[2];
	uint64_t writes, reads;
	struct kid_ni n;
	uint8_t *raw, *b;
	char line[64];
	ptl_me_t me;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	raw = spin_host_alloc((NPG + 1) * PG);
	KCHECK(self, raw != NULL, "alloc");
	b = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(b, 0, NPG * PG);
	ca.base = (uintptr_t)b;
	KCHECK(self, spin_ctx_install(n.ni, &cd, &actx) == PTL_OK, "aa ctx");
	ld.ctx = actx;
	ld.win_addr = b;
	ld.win_len = NPG * PG;
	KCHECK(self, spin_aa_log_create(n.ni, &ld, &log) == PTL_OK, "log");
	KCHECK(self, spin_aa_assoc(n.ni, b + P_DATA * PG, PG,
				   A_W | A_R | A_WLD, log) == PTL_OK &&
	       spin_aa_assoc(n.ni, b + P_FLUSH * PG, PG, A_R | SPIN_AA_FLUSH,
			     log) == PTL_OK, "assoc");
	if (csum_me(self, &n, b, MATCH, &sctx, &meh[0]) != 0)
		return 1;
	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.start = b + P_FLUSH * PG;
	me.length = PG;
	me.options = PTL_ME_OP_GET | PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_bits = MATCH_F;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh[1]) == PTL_OK, "flush ME");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strcmp(line, "check") == 0, "no check line");
	memcpy(&writes, b + P_CNT * PG, 8);
	memcpy(&reads, b + P_CNT * PG + 8, 8);
	KCHECK(self, writes == NPUT && reads == 0,
	       "page counts: %" PRIu64 " writes, %" PRIu64 " reads", writes,
	       reads);
	KCHECK(self, b[P_DATA * PG] != 0 &&
	       kid_bytes_all(b + P_DATA * PG, PUT_LEN, b[P_DATA * PG]),
	       "the data page holds no put");
	KCHECK(self, spin_aa_log_status(log, &st) == PTL_OK && st.lost == 0,
	       "log status: lost %" PRIu64, st.lost);
	PtlMEUnlink(meh[0]);
	PtlMEUnlink(meh[1]);
	KCHECK(self, spin_aa_assoc(n.ni, b, NPG * PG, A_W | A_R,
				   SPIN_AA_LOG_NONE) == PTL_OK, "unmark");
	KCHECK(self, spin_aa_log_free(log) == PTL_OK, "log free");
	KCHECK(self, spin_ctx_free(actx) == PTL_OK &&
	       spin_ctx_free(sctx) == PTL_OK, "ctx free");
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* NPUT puts as fast as they go (each a page of one byte value), every
 * ack OK, then the active flush: processed NPUT. To the doomed target
 * (pid 1 << 31 in ia->pid's top bit): no acks, then "sent" and wait. */
static int
ini_main(struct kid *self, void *arg)
{
	const struct ini_arg *ia = arg;
	const bool doomed = ia->pt & DOOMED;
	const unsigned pt = ia->pt & ~DOOMED;
	ptl_process_t t = { .phys = { ia->nid, ia->pid } };
	uint8_t *loc = spin_host_alloc(256 * PUT_LEN);
	unsigned i = 0, acks = 0, which;
	char line[64];
	ptl_handle_md_t md;
	struct kid_ni n;
	uint64_t val = 0;
	ptl_event_t ev;
	ptl_md_t d;
	int rc;

	KCHECK(self, loc != NULL, "alloc");
	for (i = 0; i < 256; i++)
		memset(loc + i * PUT_LEN, i == 0 ? 0xff : (int)i, PUT_LEN);
	if (kid_ni_open(self, &n, 4096) != 0)
		return 1;
	memset(&d, 0, sizeof(d));
	d.start = loc;
	d.length = 256 * PUT_LEN;
	d.eq_handle = n.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &d, &md) == PTL_OK, "PtlMDBind");
	if (doomed) {
		for (i = 0; i < NPUT;) {
			rc = PtlPut(md, (i % 256) * PUT_LEN, PUT_LEN,
				    PTL_NO_ACK_REQ, t, pt, MATCH_D, 0, NULL, 0);
			KCHECK(self, rc == PTL_OK || rc == PTL_NO_SPACE,
			       "put %u: %d", i, rc);
			i += rc == PTL_OK;
		}
		kid_say(self, "sent");
		KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0,
		       "no end line");
		PtlMDRelease(md);
		kid_ni_close(&n);
		kid_say(self, "ok");
		return 0;
	}
	for (i = 0; i < NPUT || acks < NPUT;) {
		if (i < NPUT) {
			rc = PtlPut(md, (i % 256) * PUT_LEN, PUT_LEN,
				    PTL_ACK_REQ, t, pt, MATCH, 0, NULL, 0);
			KCHECK(self, rc == PTL_OK || rc == PTL_NO_SPACE,
			       "put %u: %d", i, rc);
			i += rc == PTL_OK;
		}
		rc = PtlEQPoll(&n.eq, 1, i < NPUT ? 0 : 60000, &ev, &which);
		if (i == NPUT)
			KCHECK(self, rc == PTL_OK, "ack %u: none", acks);
		if (rc != PTL_OK)
			continue;
		KCHECK(self, ev.type == PTL_EVENT_ACK &&
		       ev.ni_fail_type == PTL_NI_OK, "ack %u: type %d fail %d",
		       acks, (int)ev.type, (int)ev.ni_fail_type);
		acks++;
	}
	/* returns once aa_count ran for every record before it, the held
	 * ones included */
	KCHECK(self, spin_aa_flush(n.ni, t, pt, MATCH_F, 0, &val, 60000)
	       == PTL_OK, "flush");
	KCHECK(self, val == NPUT, "processed %" PRIu64 ", want %u", val,
	       NPUT);
	PtlMDRelease(md);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* spinnic's telemetry socket */
static int tel_fd = -1;

/* a node 1 Active Access counter now (telemetry /spinnic/aa) */
static long long
node1_aa(const char *key)
{
	char *r = tel_query(tel_fd, "/spinnic/aa,1");
	long long v = tel_need(r, "node1", key);

	free(r);
	return v;
}

/* a final counter of node 1, 0 when not printed */
static long long
final1(const char *name)
{
	long long v = itest_counter(1, name);

	return v < 0 ? 0 : v;
}

/* The doomed target is killed once the NIC holds its records (and so
 * the sPIN messages that made them wait for their acks). */
static void
run_killed(void)
{
	struct ini_arg ia;
	struct kid tk, ik;
	long long before;
	char line[256];
	unsigned ms;

	before = node1_aa("dma_waits");
	kid_start(&tk, "aa-held-doomed", 1, false, doomed_main, NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	ia.pt |= DOOMED;
	kid_start(&ik, "aa-held-initiator0", 0, false, ini_main, &ia);
	kid_expect(&ik, "sent", line, sizeof(line));
	for (ms = 0; node1_aa("dma_waits") == before; ms++) {
		ITEST_CHECK(ms < 60000, "the NIC held no record in 60 s");
		usleep(1000);
	}
	usleep(20000);
	kill(tk.pid, SIGKILL);
	ITEST_CHECK(waitpid(tk.pid, NULL, 0) == tk.pid, "reap the target");
	kid_tell(&ik, "end");
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
}

int
main(void)
{
	static const char *const one_hpu[] = { "--hpus", "1", NULL };
	long long rec0, hnd0, held0, lost0, refused0, rec, hnd, held, refused;
	char tel_path[256], line[256];
	struct ini_arg ia;
	struct kid tk, ik;

	itest_init("itest_aa_held", 150);
	itest_spinnic_start(one_hpu);
	if (itest_log_word("telemetry: ", tel_path, sizeof(tel_path)) != 0 ||
	    tel_path[0] != '/')
		itest_fail("spinnic did not log its telemetry socket");
	tel_fd = tel_connect(tel_path);
	run_killed();
	/* the run proper counts from here */
	rec0 = node1_aa("records");
	hnd0 = node1_aa("handled");
	held0 = node1_aa("dma_waits");
	lost0 = node1_aa("lost");
	refused0 = node1_aa("drop_aa_full");
	close(tel_fd);
	kid_start(&tk, "aa-held-target", 1, false, target_main, NULL);
	kid_expect(&tk, "ready", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ia.nid, &ia.pid,
			   &ia.pt) == 3, "target line %s", line);
	kid_start(&ik, "aa-held-initiator", 0, false, ini_main, &ia);
	kid_expect(&ik, "ok", line, sizeof(line));
	kid_end(&ik);
	kid_tell(&tk, "check");
	kid_expect(&tk, "ok", line, sizeof(line));
	kid_end(&tk);
	itest_spinnic_finish();
	/* the killed target's log, held records and waiting messages are
	 * gone with it */
	itest_expect_no_leaks();
	rec = final1("aa_records") - rec0;
	hnd = final1("aa_handled") - hnd0;
	held = final1("aa_dma_waits") - held0;
	refused = final1("drop_aa_full") - refused0;
	printf("itest_aa_held: node 1: %lld records, %lld handled, %lld held "
	       "on the NIC, %lld lost, %lld packets refused\n", rec, hnd,
	       held, final1("aa_lost") - lost0, refused);
	ITEST_CHECK(rec == NPUT && hnd == NPUT &&
		    final1("aa_lost") == lost0 &&
		    final1("aa_dma_wait_lost") == 0,
		    "node 1: aa_records %lld aa_handled %lld aa_lost %lld "
		    "aa_dma_wait_lost %lld", rec, hnd,
		    final1("aa_lost") - lost0, final1("aa_dma_wait_lost"));
	/* the full ring was met: records held, packets refused meanwhile
	 * (a blast of 2 KiB puts outruns the 7 records the ring holds; over
	 * the lossy link the puts come spread out, and it may not) */
	ITEST_CHECK(getenv("SPINNIC_ITEST_FAULTS") != NULL ||
		    (held > 0 && refused > 0),
		    "the ring never filled (held %lld, refused %lld)", held,
		    refused);
	ITEST_CHECK(getenv("SPINNIC_ITEST_FAULTS") == NULL ||
		    itest_counter(0, "faults") + itest_counter(1, "faults") >
		    0, "no fault was injected");
	return 0;
}
