/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations on a real spinnic (--virtual 2), by two forked
 * clients linked with libspinnic (kid.h):
 *  - the responder (node 1) arms a chain of 100 PtlTriggeredCTInc behind
 *    its ME's counter and a PtlTriggeredPut behind the chain's end,
 *    rewrites the put's buffer after posting, then sleeps in PtlCTWait:
 *    one put from the initiator (node 0) runs the chain on the NIC and the
 *    initiator gets the rewritten bytes;
 *  - PtlCTGet right after PtlCTInc / PtlCTSet sees the new value;
 *  - a PtlTriggeredGet released by a PtlCTInc; a threshold already met
 *    fires at post time; failures count;
 *  - PtlCTCancelTriggered: nothing fires after it, even past the
 *    threshold; max_triggered_ops: PTL_NO_SPACE, room again after cancel
 *    and after PtlCTFree;
 *  - a PtlTriggeredFetchAtomic: the NIC runs it, the operand read at
 *    fire time;
 *  - paper 002's Fig. 6 in miniature: one PtlCTInc on the responder fires
 *    a PtlTriggeredMEAppend and, on the same counter and threshold, a
 *    PtlTriggeredPut of an RTR; the RTR's counter on the initiator fires
 *    its PtlTriggeredPut of the data, which matches the appended entry
 *    (linked before the RTR left: issue order).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"

#define EV_MS 10000
#define CHAIN 100
#define LEN 3000              /* two packets */
#define M_PING 0x71           /* initiator -> responder ME */
#define M_PONG 0x72           /* triggered put -> initiator ME */
#define M_GET 0x73            /* initiator's get-able ME */
#define M_ATOM 0x74           /* initiator's atomic target */
#define M_RTR 0x75            /* Fig. 6: responder -> initiator RTR */
#define M_DATA 0x76           /* Fig. 6: initiator -> the appended ME */
#define DLEN 2048

/* A ME on @p n's PT over @p buf counting into @p ct. @return 0 or -1 */
static int
me_add(struct kid_ni *n, void *buf, ptl_size_t len, uint64_t bits,
       unsigned op, ptl_handle_ct_t ct)
{
	ptl_handle_me_t meh;
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = len;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = op | PTL_ME_EVENT_LINK_DISABLE |
		     (ct != PTL_CT_NONE ? PTL_ME_EVENT_CT_COMM : 0);
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	return PtlMEAppend(n->ni, n->pt, &me, PTL_PRIORITY_LIST, NULL,
			   &meh) == PTL_OK ? 0 : -1;
}

static int
md_add(struct kid_ni *n, void *buf, ptl_size_t len, ptl_handle_ct_t ct,
       ptl_handle_md_t *mdh)
{
	ptl_md_t md;

	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = len;
	md.eq_handle = n->eq;
	md.ct_handle = ct;
	md.options = ct != PTL_CT_NONE ? PTL_MD_EVENT_CT_SEND : 0;
	return PtlMDBind(n->ni, &md, mdh) == PTL_OK ? 0 : -1;
}

/* ---- the initiator (node 0) --------------------------------------------- */

/* Fig. 6, sender side: the RTR's ME counts; its counter fires the data */
static int
fig6_init(struct kid *self, struct kid_ni *n, ptl_process_t peer,
	  ptl_pt_index_t pt)
{
	uint8_t *rtr = spin_host_alloc(64), *data = spin_host_alloc(DLEN);
	ptl_handle_ct_t rtr_ct;
	ptl_handle_md_t mdh;

	KCHECK(self, rtr && data, "spin_host_alloc");
	memset(data, 0xd6, DLEN);
	KCHECK(self, PtlCTAlloc(n->ni, &rtr_ct) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, me_add(n, rtr, 64, M_RTR, PTL_ME_OP_PUT, rtr_ct) == 0,
	       "RTR ME");
	KCHECK(self, md_add(n, data, DLEN, PTL_CT_NONE, &mdh) == 0, "MD");
	KCHECK(self, PtlTriggeredPut(mdh, 0, DLEN, PTL_NO_ACK_REQ, peer, pt,
				     M_DATA, 0, NULL, 0, rtr_ct, 1) == PTL_OK,
	       "PtlTriggeredPut data");
	return 0;
}

static int
kid_init(struct kid *self, void *arg)
{
	uint8_t *ping = spin_host_alloc(64), *pong = spin_host_alloc(LEN);
	uint8_t *getbuf = spin_host_alloc(LEN);
	int64_t *atom = spin_host_alloc(sizeof(*atom));
	ptl_handle_ct_t pong_ct;
	ptl_handle_md_t mdh;
	ptl_process_t peer;
	ptl_ct_event_t ct;
	struct kid_ni n;
	unsigned nid, pid, pt;
	char line[128];

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, ping && pong && getbuf && atom, "spin_host_alloc");
	memset(pong, 0, LEN);
	memset(getbuf, 0x5c, LEN);
	*atom = 100;
	KCHECK(self, PtlCTAlloc(n.ni, &pong_ct) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, me_add(&n, pong, LEN, M_PONG, PTL_ME_OP_PUT,
			    pong_ct) == 0, "pong ME");
	KCHECK(self, me_add(&n, getbuf, LEN, M_GET, PTL_ME_OP_GET,
			    PTL_CT_NONE) == 0, "get ME");
	KCHECK(self, me_add(&n, atom, sizeof(*atom), M_ATOM,
			    PTL_ME_OP_PUT | PTL_ME_OP_GET, PTL_CT_NONE) == 0,
	       "atomic ME");
	KCHECK(self, md_add(&n, ping, 64, PTL_CT_NONE, &mdh) == 0, "MD");
	kid_say(self, "id %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0 &&
		     sscanf(line, "go %u %u %u", &nid, &pid, &pt) == 3, "go");
	peer.phys.nid = nid;
	peer.phys.pid = pid;
	if (fig6_init(self, &n, peer, pt) != 0)
		return 1;
	KCHECK(self, PtlPut(mdh, 0, 64, PTL_NO_ACK_REQ, peer, pt, M_PING, 0,
			    NULL, 0) == PTL_OK, "PtlPut");
	/* the responder sleeps: its NIC runs the chain and the put */
	KCHECK(self, PtlCTWait(pong_ct, 1, &ct) == PTL_OK && ct.failure == 0,
	       "pong CT");
	KCHECK(self, kid_bytes_all(pong, LEN, 0xbb),
	       "pong bytes %#x: the MD was read when posted", pong[0]);
	kid_say(self, "pong ok");
	/* stay for the responder's get and atomic */
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0, "end");
	KCHECK(self, *atom == 107, "atomic target %lld, want 107",
	       (long long)*atom);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

/* ---- the responder (node 1) --------------------------------------------- */

/* Counter operations seen by the caller at once (the bug: ~20 ms late) */
static int
ct_now(struct kid *self, struct kid_ni *n)
{
	ptl_ct_event_t one = { .success = 1 }, v;
	ptl_ct_event_t five = { .success = 5, .failure = 2 };
	ptl_handle_ct_t ct;
	int i;

	KCHECK(self, PtlCTAlloc(n->ni, &ct) == PTL_OK, "PtlCTAlloc");
	for (i = 1; i <= 50; i++) {
		KCHECK(self, PtlCTInc(ct, one) == PTL_OK, "PtlCTInc");
		KCHECK(self, PtlCTGet(ct, &v) == PTL_OK &&
			     v.success == (ptl_size_t)i,
		       "CTGet after Inc: %llu, want %d",
		       (unsigned long long)v.success, i);
	}
	KCHECK(self, PtlCTSet(ct, five) == PTL_OK, "PtlCTSet");
	KCHECK(self, PtlCTGet(ct, &v) == PTL_OK && v.success == 5 &&
		     v.failure == 2, "CTGet after Set: %llu/%llu",
	       (unsigned long long)v.success, (unsigned long long)v.failure);
	KCHECK(self, PtlCTFree(ct) == PTL_OK, "PtlCTFree");
	return 0;
}

/* The next REPLY event on @p n's EQ (PUT and SEND of the chain before
 * it). @return 0 or -1 */
static int
reply_wait(struct kid_ni *n)
{
	ptl_event_t ev;
	int i;

	for (i = 0; i < 8; i++)
		if (PtlEQWait(n->eq, &ev) == PTL_OK &&
		    ev.type == PTL_EVENT_REPLY)
			return ev.ni_fail_type == PTL_NI_OK ? 0 : -1;
	return -1;
}

/* A get released by this client's own PtlCTInc; failures count; a
 * threshold already met fires at post time */
static int
trig_get(struct kid *self, struct kid_ni *n, ptl_process_t peer,
	 ptl_pt_index_t pt)
{
	ptl_ct_event_t fail = { .failure = 1 }, v;
	uint8_t *buf = spin_host_alloc(LEN);
	ptl_handle_ct_t trig, md_ct;
	ptl_handle_md_t mdh;

	KCHECK(self, buf != NULL, "spin_host_alloc");
	memset(buf, 0, LEN);
	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK &&
		     PtlCTAlloc(n->ni, &md_ct) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, md_add(n, buf, LEN, PTL_CT_NONE, &mdh) == 0, "MD");
	KCHECK(self, PtlTriggeredGet(mdh, 0, LEN, peer, pt, M_GET, 0, NULL,
				     trig, 2) == PTL_OK, "PtlTriggeredGet");
	KCHECK(self, PtlCTInc(trig, fail) == PTL_OK, "PtlCTInc");
	usleep(100000);
	KCHECK(self, kid_bytes_all(buf, LEN, 0), "the get ran below its threshold");
	KCHECK(self, PtlCTInc(trig, fail) == PTL_OK, "PtlCTInc");
	KCHECK(self, reply_wait(n) == 0, "REPLY");
	KCHECK(self, kid_bytes_all(buf, LEN, 0x5c), "get bytes");
	/* met already: fires at post, counted on a CT of its own */
	KCHECK(self, PtlTriggeredCTInc(md_ct, fail, trig, 1) == PTL_OK,
	       "PtlTriggeredCTInc");
	KCHECK(self, PtlCTWait(md_ct, 1, &v) == PTL_OK && v.failure == 1,
	       "fired at post");
	PtlMDRelease(mdh);
	PtlCTFree(trig);
	PtlCTFree(md_ct);
	return 0;
}

/* PtlTriggeredFetchAtomic (SUM into the initiator's 100): the operand is
 * 5 when posted, 7 when the trigger comes */
static int
trig_atomic(struct kid *self, struct kid_ni *n, ptl_process_t peer,
	    ptl_pt_index_t pt)
{
	ptl_ct_event_t one = { .success = 1 };
	int64_t *v = spin_host_alloc(2 * sizeof(*v));
	ptl_handle_ct_t trig;
	ptl_handle_md_t mdh;

	KCHECK(self, v != NULL, "spin_host_alloc");
	v[0] = 5;
	v[1] = -1;
	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, md_add(n, v, 2 * sizeof(*v), PTL_CT_NONE, &mdh) == 0,
	       "MD");
	KCHECK(self, PtlTriggeredFetchAtomic(mdh, sizeof(*v), mdh, 0,
					     sizeof(*v), peer, pt, M_ATOM, 0,
					     NULL, 0, PTL_SUM, PTL_INT64_T,
					     trig, 1) == PTL_OK,
	       "PtlTriggeredFetchAtomic");
	v[0] = 7;
	KCHECK(self, PtlCTInc(trig, one) == PTL_OK, "PtlCTInc");
	KCHECK(self, reply_wait(n) == 0, "REPLY of the atomic");
	KCHECK(self, v[1] == 100, "old value %lld, want 100",
	       (long long)v[1]);
	PtlMDRelease(mdh);
	PtlCTFree(trig);
	return 0;
}

/* Post up to @p max increments of @p dst behind @p trig (never met).
 * @return how many until PTL_NO_SPACE, -1 on another error */
static int
fill(ptl_handle_ct_t dst, ptl_handle_ct_t trig, int max)
{
	ptl_ct_event_t one = { .success = 1 };
	int i, rc;

	for (i = 0; i < max; i++) {
		rc = PtlTriggeredCTInc(dst, one, trig, 1u << 30);
		if (rc == PTL_NO_SPACE)
			return i;
		if (rc != PTL_OK)
			return -1;
	}
	return i;
}

/* Cancel destroys and touches nothing else; the limit; CTFree drops */
static int
cancel_limit(struct kid *self, struct kid_ni *n, int max)
{
	ptl_ct_event_t one = { .success = 1 }, v;
	ptl_ct_event_t big = { .success = 1u << 30 };
	ptl_handle_ct_t trig, dst;
	int got, i;

	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK &&
		     PtlCTAlloc(n->ni, &dst) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, PtlTriggeredCTInc(dst, one, trig, 2) == PTL_OK, "post");
	KCHECK(self, PtlCTInc(trig, one) == PTL_OK, "inc");
	KCHECK(self, PtlCTCancelTriggered(trig) == PTL_OK, "cancel");
	KCHECK(self, PtlCTInc(trig, one) == PTL_OK, "inc");
	usleep(100000);
	KCHECK(self, PtlCTGet(dst, &v) == PTL_OK && v.success == 0,
	       "fired after cancel");
	KCHECK(self, PtlCTGet(trig, &v) == PTL_OK && v.success == 2,
	       "cancel touched the counter");
	got = fill(dst, trig, max + 1);
	KCHECK(self, got == max, "%d posted, max_triggered_ops %d", got, max);
	KCHECK(self, PtlCTCancelTriggered(trig) == PTL_OK, "cancel");
	KCHECK(self, fill(dst, trig, max) == max, "no room after cancel");
	KCHECK(self, PtlCTFree(trig) == PTL_OK, "PtlCTFree");
	/* the NIC drops them with the counter (some maybe still queued) */
	KCHECK(self, PtlCTAlloc(n->ni, &trig) == PTL_OK, "PtlCTAlloc");
	for (i = 0; i < 300 && fill(dst, trig, 1) != 1; i++)
		usleep(10000);
	KCHECK(self, i < 300, "no room after PtlCTFree");
	KCHECK(self, PtlCTInc(trig, big) == PTL_OK, "inc");
	KCHECK(self, PtlCTWait(dst, 1, &v) == PTL_OK && v.success == 1,
	       "after free");
	PtlCTFree(trig);
	PtlCTFree(dst);
	return 0;
}

/* Fig. 6, receiver side: activation appends the data ME and sends the
 * RTR, both on the NIC; the host only increments and then waits */
static int
fig6_resp(struct kid *self, struct kid_ni *n, ptl_process_t peer,
	  ptl_pt_index_t pt)
{
	uint8_t *rtr = spin_host_alloc(64), *data = spin_host_alloc(DLEN);
	ptl_ct_event_t one = { .success = 1 }, v;
	ptl_handle_ct_t act, got;
	ptl_handle_md_t mdh;
	ptl_handle_me_t meh;
	ptl_me_t me;

	KCHECK(self, rtr && data, "spin_host_alloc");
	memset(data, 0, DLEN);
	KCHECK(self, PtlCTAlloc(n->ni, &act) == PTL_OK &&
		     PtlCTAlloc(n->ni, &got) == PTL_OK, "PtlCTAlloc");
	KCHECK(self, md_add(n, rtr, 8, PTL_CT_NONE, &mdh) == 0, "MD");
	memset(&me, 0, sizeof(me));
	me.start = data;
	me.length = DLEN;
	me.ct_handle = got;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_CT_COMM;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = M_DATA;
	KCHECK(self, PtlTriggeredMEAppend(n->ni, n->pt, &me,
					  PTL_PRIORITY_LIST, NULL, &meh, act,
					  1) == PTL_OK,
	       "PtlTriggeredMEAppend");
	KCHECK(self, PtlTriggeredPut(mdh, 0, 8, PTL_NO_ACK_REQ, peer, pt,
				     M_RTR, 0, NULL, 0, act, 1) == PTL_OK,
	       "PtlTriggeredPut RTR");
	KCHECK(self, PtlCTInc(act, one) == PTL_OK, "activate");
	KCHECK(self, PtlCTWait(got, 1, &v) == PTL_OK && v.failure == 0,
	       "data CT %llu/%llu", (unsigned long long)v.success,
	       (unsigned long long)v.failure);
	KCHECK(self, kid_bytes_all(data, DLEN, 0xd6), "data %#x", data[0]);
	/* use-once, consumed: the handle is gone as after PtlMEAppend */
	KCHECK(self, PtlMEUnlink(meh) == PTL_ARG_INVALID, "consumed ME");
	PtlCTFree(act);
	PtlCTFree(got);
	return 0;
}

/* The chain: ME counter -> 100 counters -> a put back to the initiator */
static int
arm_chain(struct kid *self, struct kid_ni *n, ptl_process_t peer,
	  ptl_pt_index_t pt, ptl_handle_ct_t *cts, uint8_t *src,
	  ptl_handle_md_t *mdh)
{
	ptl_ct_event_t one = { .success = 1 };
	int i;

	for (i = 0; i <= CHAIN; i++)
		KCHECK(self, PtlCTAlloc(n->ni, &cts[i]) == PTL_OK, "CT %d", i);
	KCHECK(self, me_add(n, src + LEN, 64, M_PING, PTL_ME_OP_PUT,
			    cts[0]) == 0, "ping ME");
	KCHECK(self, md_add(n, src, LEN, cts[CHAIN], mdh) == 0, "MD");
	for (i = 0; i < CHAIN; i++)
		KCHECK(self, PtlTriggeredCTInc(cts[i + 1], one, cts[i], 1) ==
			     PTL_OK, "PtlTriggeredCTInc %d", i);
	KCHECK(self, PtlTriggeredPut(*mdh, 0, LEN, PTL_NO_ACK_REQ, peer, pt,
				     M_PONG, 0, NULL, 0, cts[CHAIN], 1) ==
		     PTL_OK, "PtlTriggeredPut");
	/* after posting, before the trigger: the put must send this */
	memset(src, 0xbb, LEN);
	return 0;
}

static int
kid_resp(struct kid *self, void *arg)
{
	uint8_t *src = spin_host_alloc(LEN + 64);
	ptl_handle_ct_t cts[CHAIN + 1];
	ptl_ni_limits_t lim;
	ptl_handle_md_t mdh;
	ptl_handle_ni_t ni2;
	ptl_process_t peer;
	ptl_ct_event_t v;
	struct kid_ni n;
	unsigned nid, pid, pt;
	char line[128];

	(void)arg;
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	KCHECK(self, src != NULL, "spin_host_alloc");
	memset(src, 0xaa, LEN + 64);
	KCHECK(self, PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			       PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim,
			       &ni2) == PTL_OK && lim.max_triggered_ops > 0,
	       "max_triggered_ops %d", lim.max_triggered_ops);
	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0 &&
		     sscanf(line, "peer %u %u %u", &nid, &pid, &pt) == 3,
	       "peer");
	peer.phys.nid = nid;
	peer.phys.pid = pid;
	if (arm_chain(self, &n, peer, pt, cts, src, &mdh) != 0)
		return 1;
	kid_say(self, "armed %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	/* asleep: nothing of this client drives the chain */
	KCHECK(self, PtlCTWait(cts[CHAIN], 2, &v) == PTL_OK, "chain end");
	KCHECK(self, v.success == 2 && v.failure == 0,
	       "chain end %llu/%llu", (unsigned long long)v.success,
	       (unsigned long long)v.failure);
	kid_say(self, "chain ok");
	if (ct_now(self, &n) != 0 || trig_get(self, &n, peer, pt) != 0 ||
	    trig_atomic(self, &n, peer, pt) != 0 ||
	    cancel_limit(self, &n, lim.max_triggered_ops) != 0)
		return 1;
	if (fig6_resp(self, &n, peer, pt) != 0)
		return 1;
	kid_say(self, "fig6 ok");
	PtlNIFini(ni2);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

int
main(void)
{
	char line[128], go[140];
	struct kid ki, kr;

	itest_init("itest_trig", 80);
	itest_spinnic_start(NULL);
	kid_start(&ki, "initiator", 0, false, kid_init, NULL);
	kid_expect(&ki, "id ", line, sizeof(line));
	kid_start(&kr, "responder", 1, false, kid_resp, NULL);
	snprintf(go, sizeof(go), "peer %s", line + 3);
	kid_tell(&kr, go);
	kid_expect(&kr, "armed ", line, sizeof(line));
	snprintf(go, sizeof(go), "go %s", line + 6);
	kid_tell(&ki, go);
	kid_expect(&ki, "pong ok", line, sizeof(line));
	printf("itest_trig: chain of %d PtlTriggeredCTInc and a PtlTriggeredPut run by the NIC, the buffer read at fire time: ok\n",
	       CHAIN);
	kid_expect(&kr, "chain ok", line, sizeof(line));
	kid_expect(&kr, "fig6 ok", line, sizeof(line));
	printf("itest_trig: CTGet after Inc/Set, PtlTriggeredGet, a triggered FETCH_ATOMIC, cancel, max_triggered_ops, PtlCTFree: ok\n");
	printf("itest_trig: Fig. 6: PtlTriggeredMEAppend and the RTR fired by one PtlCTInc, the data matched the appended ME: ok\n");
	kid_expect(&kr, "ok", line, sizeof(line));
	kid_tell(&ki, "end");
	kid_expect(&ki, "ok", line, sizeof(line));
	kid_end(&ki);
	kid_end(&kr);
	itest_spinnic_finish();
	itest_expect_no_leaks();
	printf("itest_trig: ok\n");
	return 0;
}
