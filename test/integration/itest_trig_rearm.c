/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent (re-arming) triggered operations (spin_trig_set_period) on a
 * real spinnic (--virtual 2), by two forked clients linked with
 * libspinnic (kid.h):
 *  - the responder (node 1) arms, once, a 3-hop chain of re-armed
 *    PtlTriggeredCTInc behind its ME's counter and a re-armed
 *    PtlTriggeredPut behind the chain's end, then sleeps; the initiator
 *    (node 0) sends 10 000 pings, one at a time, each answered by one
 *    pong the responder's NIC sends: every counter moves by exactly one
 *    per instance (checked at the end, after a pause: nothing extra);
 *  - on the same counter and threshold, before the put, a re-armed
 *    PtlTriggeredMEAppend of a use-once ME (paper 002 Fig. 6): a fresh
 *    copy appears per instance, and the initiator's data put after each
 *    pong lands in it (the responder counts exactly one per instance);
 *  - the put's buffer is read at each firing: rewritten by the responder
 *    between instances, the next pong carries the new bytes;
 *  - one counter jump crossing three thresholds fires three times;
 *    PtlCTCancelTriggered stops the re-arming;
 *  - max_triggered_ops counts a persistent entry once however often it
 *    fires, and firing releases nothing: PTL_NO_SPACE until cancel, room
 *    again after cancel and after PtlCTFree;
 *  - period 0 restores one-shot posts; another thread's posts are
 *    one-shot (the period is per thread); persistent ME unlink and a bad
 *    NI handle: PTL_ARG_INVALID; PtlMEUnlink of the persistent append's
 *    handle: PTL_OK, and no copy is left;
 *  - the responder exits with the chain still armed: the NIC drops it
 *    (final counters: trig_cancelled), nothing leaks.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"

#define N_INST 10000
#define HOPS 3
#define LEN 64
#define M_PING 0x81           /* initiator -> responder ME */
#define M_PONG 0x82           /* re-armed put -> initiator ME */
#define M_DATA 0x83           /* initiator -> the re-appended use-once ME */
#define CHAIN_ENTS (HOPS + 2) /* triggered entries the chain holds */

/* A ME on @p n's PT over @p buf counting into @p ct. @return 0 or -1 */
static int
me_add(struct kid_ni *n, void *buf, ptl_size_t len, uint64_t bits,
       ptl_handle_ct_t ct)
{
	ptl_handle_me_t meh;
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = len;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_COMM_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	return PtlMEAppend(n->ni, n->pt, &me, PTL_PRIORITY_LIST, NULL,
			   &meh) == PTL_OK ? 0 : -1;
}

static int
md_add(struct kid_ni *n, void *buf, ptl_size_t len, ptl_handle_md_t *mdh)
{
	ptl_md_t md;

	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = len;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	md.options = 0;
	return PtlMDBind(n->ni, &md, mdh) == PTL_OK ? 0 : -1;
}

/* @p ct's value after a pause (what fires late would show) */
static ptl_size_t
settled(ptl_handle_ct_t ct, ptl_size_t *failure)
{
	ptl_ct_event_t v = { 0, 0 };

	usleep(100000);
	(void)PtlCTGet(ct, &v);
	*failure = v.failure;
	return v.success;
}

/* ---- the initiator (node 0) --------------------------------------------- */

static int
kid_init(struct kid *self, void *arg)
{
	uint8_t *ping = spin_host_alloc(LEN), *pong = spin_host_alloc(LEN);
	ptl_handle_ct_t pong_ct;
	ptl_handle_md_t mdh;
	ptl_process_t peer;
	ptl_size_t s, f;
	ptl_ct_event_t v;
	struct kid_ni n;
	struct timespec t0, t1;
	unsigned nid, pid, pt, i;
	char line[128];

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, ping && pong, "spin_host_alloc");
	memset(ping, 0x11, LEN);
	memset(pong, 0, LEN);
	KCHECK(self, PtlCTAlloc(n.ni, &pong_ct) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, me_add(&n, pong, LEN, M_PONG, pong_ct) == 0, "pong ME");
	KCHECK(self, md_add(&n, ping, LEN, &mdh) == 0, "MD");
	kid_say(self, "id %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0 &&
		     sscanf(line, "go %u %u %u", &nid, &pid, &pt) == 3, "go");
	peer.phys.nid = nid;
	peer.phys.pid = pid;
	/* one instance at a time: ping, then its pong (timed: reported,
	 * never checked) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i <= N_INST; i++) {
		KCHECK(self, PtlPut(mdh, 0, LEN, PTL_NO_ACK_REQ, peer, pt,
				    M_PING, 0, NULL, 0) == PTL_OK,
		       "PtlPut %u", i);
		KCHECK(self, PtlCTWait(pong_ct, i, &v) == PTL_OK &&
			     v.failure == 0, "pong %u: %llu/%llu", i,
		       (unsigned long long)v.success,
		       (unsigned long long)v.failure);
		/* into this instance's copy of the use-once ME */
		KCHECK(self, PtlPut(mdh, 0, LEN, PTL_NO_ACK_REQ, peer, pt,
				    M_DATA, 0, NULL, 0) == PTL_OK,
		       "PtlPut data %u", i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = settled(pong_ct, &f);
	KCHECK(self, s == N_INST && f == 0, "pongs %llu/%llu, want %d",
	       (unsigned long long)s, (unsigned long long)f, N_INST);
	KCHECK(self, kid_bytes_all(pong, LEN, 0xbb), "pong bytes %#x", pong[0]);
	kid_say(self, "loop ok %.1f",
		((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		 (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / N_INST);
	/* the responder rewrote its buffer: the next firing reads it */
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0 &&
		     strcmp(line, "again") == 0, "again");
	KCHECK(self, PtlPut(mdh, 0, LEN, PTL_NO_ACK_REQ, peer, pt, M_PING, 0,
			    NULL, 0) == PTL_OK, "PtlPut");
	KCHECK(self, PtlCTWait(pong_ct, N_INST + 1, &v) == PTL_OK &&
		     v.failure == 0, "last pong");
	KCHECK(self, PtlPut(mdh, 0, LEN, PTL_NO_ACK_REQ, peer, pt, M_DATA, 0,
			    NULL, 0) == PTL_OK, "PtlPut data");
	s = settled(pong_ct, &f);
	KCHECK(self, s == N_INST + 1 && f == 0, "pongs %llu/%llu",
	       (unsigned long long)s, (unsigned long long)f);
	KCHECK(self, kid_bytes_all(pong, LEN, 0xcc),
	       "pong bytes %#x: the MD was not read at fire time", pong[0]);
	kid_say(self, "again ok");
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0, "end");
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* ---- the responder (node 1) --------------------------------------------- */

/* Post up to @p max persistent increments of @p dst behind @p trig at
 * threshold 1. @return how many until PTL_NO_SPACE, -1 on another error */
static int
fill(ptl_handle_ct_t dst, ptl_handle_ct_t trig, int max)
{
	ptl_ct_event_t one = { .success = 1 };
	int i, rc;

	for (i = 0; i < max; i++) {
		rc = PtlTriggeredCTInc(dst, one, trig, 1);
		if (rc == PTL_NO_SPACE)
			return i;
		if (rc != PTL_OK)
			return -1;
	}
	return i;
}

/* A jump over three thresholds fires three times; cancel stops it */
static int
jump_cancel(struct kid *self, struct kid_ni *n)
{
	ptl_ct_event_t one = { .success = 1 }, seven = { .success = 7 };
	ptl_ct_event_t ten = { .success = 10 }, v;
	ptl_handle_ct_t trig, dst;
	ptl_size_t s, f;

	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK &&
		     PtlCTAlloc(n->ni, &dst) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, spin_trig_set_period(n->ni, 2) == PTL_OK, "period 2");
	KCHECK(self, PtlTriggeredCTInc(dst, one, trig, 2) == PTL_OK, "post");
	KCHECK(self, PtlCTInc(trig, seven) == PTL_OK, "inc 7");
	KCHECK(self, PtlCTWait(dst, 3, &v) == PTL_OK, "wait 3");
	s = settled(dst, &f);
	KCHECK(self, s == 3 && f == 0, "7 crossed 2, 4, 6: %llu fired",
	       (unsigned long long)s);
	KCHECK(self, PtlCTInc(trig, one) == PTL_OK, "inc 1");
	KCHECK(self, PtlCTWait(dst, 4, &v) == PTL_OK, "wait 4");
	KCHECK(self, PtlCTCancelTriggered(trig) == PTL_OK, "cancel");
	KCHECK(self, PtlCTInc(trig, ten) == PTL_OK, "inc 10");
	s = settled(dst, &f);
	KCHECK(self, s == 4, "fired after cancel: %llu",
	       (unsigned long long)s);
	PtlCTFree(trig);
	PtlCTFree(dst);
	return 0;
}

/* max_triggered_ops: once per persistent entry, held until cancel/free;
 * @p max: the room left (the chain holds CHAIN_ENTS entries, however
 * often they fired) */
static int
limit(struct kid *self, struct kid_ni *n, int max)
{
	ptl_ct_event_t three = { .success = 3 }, v;
	ptl_handle_ct_t trig, dst;
	int got, i;

	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK &&
		     PtlCTAlloc(n->ni, &dst) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, spin_trig_set_period(n->ni, 1) == PTL_OK, "period 1");
	got = fill(dst, trig, max + 1);
	KCHECK(self, got == max, "%d posted, room for %d", got, max);
	KCHECK(self, PtlCTInc(trig, three) == PTL_OK, "inc 3");
	KCHECK(self, PtlCTWait(dst, 3 * (ptl_size_t)max, &v) == PTL_OK &&
		     v.success == 3 * (ptl_size_t)max, "fired %llu, want %d",
	       (unsigned long long)v.success, 3 * max);
	/* firing releases nothing: still full */
	KCHECK(self, fill(dst, trig, 1) == 0, "room while all persist");
	KCHECK(self, PtlCTCancelTriggered(trig) == PTL_OK, "cancel");
	KCHECK(self, fill(dst, trig, max) == max, "no room after cancel");
	KCHECK(self, PtlCTFree(trig) == PTL_OK, "PtlCTFree");
	/* the NIC drops them with the counter (some maybe still queued) */
	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK, "PtlCTAlloc");
	for (i = 0; i < 300 && fill(dst, trig, 1) != 1; i++)
		usleep(10000);
	KCHECK(self, i < 300, "no room after PtlCTFree");
	/* that one stays armed: the exit drops it */
	return 0;
}

struct other {
	ptl_handle_ct_t dst, trig;
	int rc;
};

static void *
other_main(void *arg)
{
	struct other *o = arg;
	ptl_ct_event_t one = { .success = 1 };

	o->rc = PtlTriggeredCTInc(o->dst, one, o->trig, 1);
	return NULL;
}

/* Period 0 restores one-shot posts; the period is this thread's only;
 * no persistent ME operations */
static int
one_shot(struct kid *self, struct kid_ni *n)
{
	ptl_ct_event_t one = { .success = 1 }, five = { .success = 5 }, v;
	ptl_handle_ct_t trig, dst, dst2;
	ptl_handle_me_t meh;
	struct other o;
	pthread_t th;
	ptl_size_t s, f;
	ptl_me_t me;
	int rc;

	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK &&
		     PtlCTAlloc(n->ni, &dst) == PTL_OK &&
		     PtlCTAlloc(n->ni, &dst2) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, spin_trig_set_period(n->ni, 1) == PTL_OK, "period 1");
	KCHECK(self, spin_trig_set_period(PTL_INVALID_HANDLE, 1) ==
		     PTL_ARG_INVALID, "bad NI accepted");
	memset(&me, 0, sizeof(me));
	me.start = spin_host_alloc(LEN);
	me.ct_handle = PTL_CT_NONE;
	me.length = LEN;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 0x99;
	rc = me.start == NULL ? -1 : PtlMEAppend(n->ni, n->pt, &me,
						 PTL_PRIORITY_LIST, NULL, &meh);
	KCHECK(self, rc == PTL_OK, "PtlMEAppend: %d", rc);
	KCHECK(self, PtlTriggeredMEUnlink(meh, trig, 1) == PTL_ARG_INVALID,
	       "persistent PtlTriggeredMEUnlink accepted");
	KCHECK(self, PtlMEUnlink(meh) == PTL_OK, "PtlMEUnlink");
	/* another thread: one-shot */
	o.dst = dst2;
	o.trig = trig;
	o.rc = -1;
	KCHECK(self, pthread_create(&th, NULL, other_main, &o) == 0 &&
		     pthread_join(th, NULL) == 0 && o.rc == PTL_OK,
	       "other thread's post: %d", o.rc);
	KCHECK(self, spin_trig_set_period(n->ni, 0) == PTL_OK, "period 0");
	KCHECK(self, PtlTriggeredCTInc(dst, one, trig, 1) == PTL_OK, "post");
	KCHECK(self, PtlCTInc(trig, five) == PTL_OK, "inc 5");
	KCHECK(self, PtlCTWait(dst, 1, &v) == PTL_OK &&
		     PtlCTWait(dst2, 1, &v) == PTL_OK, "wait");
	KCHECK(self, PtlCTInc(trig, five) == PTL_OK, "inc 5");
	s = settled(dst, &f);
	KCHECK(self, s == 1, "one-shot fired %llu times",
	       (unsigned long long)s);
	s = settled(dst2, &f);
	KCHECK(self, s == 1, "other thread's post fired %llu times",
	       (unsigned long long)s);
	PtlCTFree(trig);
	PtlCTFree(dst);
	PtlCTFree(dst2);
	/* back to persistent for what follows */
	KCHECK(self, spin_trig_set_period(n->ni, 1) == PTL_OK, "period 1");
	return 0;
}

/* The chain: ME counter -> HOPS counters -> a put back to the initiator,
 * each armed once, period 1 */
static int
arm_chain(struct kid *self, struct kid_ni *n, ptl_process_t peer,
	  ptl_pt_index_t pt, ptl_handle_ct_t *cts, uint8_t *src,
	  ptl_handle_ct_t *data_ct, ptl_handle_me_t *tmpl)
{
	ptl_ct_event_t one = { .success = 1 };
	ptl_handle_md_t mdh;
	ptl_me_t me;
	int i;

	for (i = 0; i <= HOPS; i++)
		KCHECK(self, PtlCTAlloc(n->ni, &cts[i]) == PTL_OK, "CT %d", i);
	KCHECK(self, me_add(n, src + LEN, LEN, M_PING, cts[0]) == 0,
	       "ping ME");
	KCHECK(self, md_add(n, src, LEN, &mdh) == 0, "MD");
	KCHECK(self, spin_trig_set_period(n->ni, 1) == PTL_OK, "period 1");
	for (i = 0; i < HOPS; i++)
		KCHECK(self, PtlTriggeredCTInc(cts[i + 1], one, cts[i], 1) ==
			     PTL_OK, "PtlTriggeredCTInc %d", i);
	/* Fig. 6: the data's use-once ME, linked before the pong leaves */
	KCHECK(self, PtlCTAlloc(n->ni, data_ct) == PTL_OK, "PtlCTAlloc");
	memset(&me, 0, sizeof(me));
	me.start = src + 2 * LEN;
	me.length = LEN;
	me.ct_handle = *data_ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = M_DATA;
	KCHECK(self, PtlTriggeredMEAppend(n->ni, n->pt, &me,
					  PTL_PRIORITY_LIST, NULL, tmpl,
					  cts[HOPS], 1) == PTL_OK,
	       "PtlTriggeredMEAppend");
	KCHECK(self, PtlTriggeredPut(mdh, 0, LEN, PTL_NO_ACK_REQ, peer, pt,
				     M_PONG, 0, NULL, 0, cts[HOPS], 1) ==
		     PTL_OK, "PtlTriggeredPut");
	return 0;
}

static int
kid_resp(struct kid *self, void *arg)
{
	uint8_t *src = spin_host_alloc(3 * LEN);
	ptl_handle_ct_t cts[HOPS + 1], data_ct;
	ptl_handle_me_t tmpl;
	ptl_ct_event_t v;
	ptl_process_t peer;
	ptl_size_t s, f;
	struct kid_ni n;
	unsigned nid, pid, pt;
	char line[128];
	int i;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, src != NULL, "spin_host_alloc");
	memset(src, 0xbb, 3 * LEN);
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0 &&
		     sscanf(line, "peer %u %u %u", &nid, &pid, &pt) == 3,
	       "peer");
	peer.phys.nid = nid;
	peer.phys.pid = pid;
	if (arm_chain(self, &n, peer, pt, cts, src, &data_ct, &tmpl) != 0)
		return 1;
	kid_say(self, "armed %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	/* asleep while the NIC runs N_INST instances */
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
		     strcmp(line, "rewrite") == 0, "rewrite");
	for (i = 0; i <= HOPS; i++) {
		s = settled(cts[i], &f);
		KCHECK(self, s == N_INST && f == 0,
		       "counter %d at %llu/%llu, want %d", i,
		       (unsigned long long)s, (unsigned long long)f, N_INST);
	}
	/* one data put per instance, each into a fresh copy */
	KCHECK(self, PtlCTWait(data_ct, N_INST, &v) == PTL_OK, "data");
	s = settled(data_ct, &f);
	KCHECK(self, s == N_INST && f == 0, "data %llu/%llu, want %d",
	       (unsigned long long)s, (unsigned long long)f, N_INST);
	memset(src, 0xcc, LEN);
	kid_say(self, "rewritten");
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0 &&
		     strcmp(line, "local") == 0, "local");
	for (i = 0; i <= HOPS; i++) {
		s = settled(cts[i], &f);
		KCHECK(self, s == N_INST + 1, "counter %d at %llu", i,
		       (unsigned long long)s);
	}
	KCHECK(self, PtlCTWait(data_ct, N_INST + 1, &v) == PTL_OK, "data");
	s = settled(data_ct, &f);
	KCHECK(self, s == N_INST + 1 && f == 0, "data %llu/%llu",
	       (unsigned long long)s, (unsigned long long)f);
	/* the handle names the template: it and any copy go, the appends
	 * stop (the entry stays armed, the exit drops it) */
	KCHECK(self, PtlMEUnlink(tmpl) == PTL_OK, "PtlMEUnlink template");
	KCHECK(self, PtlMEUnlink(tmpl) == PTL_ARG_INVALID, "unlinked twice");
	if (jump_cancel(self, &n) != 0 ||
	    limit(self, &n, n.lim.max_triggered_ops - CHAIN_ENTS) != 0 ||
	    one_shot(self, &n) != 0)
		return 1;
	kid_say(self, "max %d", n.lim.max_triggered_ops);
	/* exit with the chain (and limit()'s last entry) armed: no fini */
	return 0;
}

/* A final counter of node 1; the dump leaves zeros out */
static long long
counter(const char *name)
{
	long long v = itest_counter(1, name);

	return v < 0 ? 0 : v;
}

int
main(void)
{
	char line[128], go[140];
	struct kid ki, kr;
	long long cancelled, rearmed;
	int max;

	itest_init("itest_trig_rearm", 150);
	itest_spinnic_start(NULL);
	kid_start(&ki, "initiator", 0, false, kid_init, NULL);
	kid_expect(&ki, "id ", line, sizeof(line));
	kid_start(&kr, "responder", 1, false, kid_resp, NULL);
	snprintf(go, sizeof(go), "peer %s", line + 3);
	kid_tell(&kr, go);
	kid_expect(&kr, "armed ", line, sizeof(line));
	snprintf(go, sizeof(go), "go %s", line + 6);
	kid_line_ms = 120000;
	kid_tell(&ki, go);
	kid_expect(&ki, "loop ok", line, sizeof(line));
	printf("itest_trig_rearm: %s us per instance (ping, chain, append, pong, data; not checked)\n",
	       line + 8);
	kid_tell(&kr, "rewrite");
	kid_expect(&kr, "rewritten", line, sizeof(line));
	printf("itest_trig_rearm: %d instances of a %d-hop chain of re-armed PtlTriggeredCTInc, a re-armed PtlTriggeredMEAppend of a use-once ME and a re-armed PtlTriggeredPut, each fired once per instance: ok\n",
	       N_INST, HOPS);
	kid_tell(&ki, "again");
	kid_expect(&ki, "again ok", line, sizeof(line));
	printf("itest_trig_rearm: the re-armed put reads its buffer at each firing: ok\n");
	kid_tell(&kr, "local");
	kid_expect(&kr, "max ", line, sizeof(line));
	max = atoi(line + 4);
	printf("itest_trig_rearm: a jump over 3 thresholds, cancel, max_triggered_ops (%d) once per entry, period 0, per thread, PtlMEUnlink of a persistent append: ok\n",
	       max);
	kid_end(&kr);
	kid_tell(&ki, "end");
	kid_expect(&ki, "ok", line, sizeof(line));
	kid_end(&ki);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	/* node 1: jump_cancel 1, limit 2 * (max - CHAIN_ENTS) (cancel,
	 * free), the exit CHAIN_ENTS + 1 (limit's last); the PtlCTFree may
	 * overtake TRIG commands still in the ring: refused instead */
	cancelled = counter("trig_cancelled") + counter("trig_refused");
	rearmed = counter("trig_rearmed");
	if (cancelled != 1 + 2LL * (max - CHAIN_ENTS) + CHAIN_ENTS + 1)
		itest_fail("node 1 trig_cancelled + trig_refused %lld, want %lld",
			   cancelled, 1 + 2LL * (max - CHAIN_ENTS) + CHAIN_ENTS + 1);
	if (rearmed < (HOPS + 1) * (long long)(N_INST + 1))
		itest_fail("node 1 trig_rearmed %lld", rearmed);
	if (counter("trig_rearm_ended") != 0)
		itest_fail("node 1: entries ended");
	printf("itest_trig_rearm: cancel, PtlCTFree and the exit dropped every entry (%lld): ok\n",
	       cancelled);
	printf("itest_trig_rearm: ok\n");
	return 0;
}
