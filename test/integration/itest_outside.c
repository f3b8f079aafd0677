/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small puts between memory outside the clients' regions (malloc'd at the
 * initiator, mmap'd at the target), through a real spinnic --virtual 2
 * (doc/NOTES.md "Inline puts" and "Batched writes"):
 *  - the initiator's puts of <= 32 bytes carry their bytes in the command:
 *    node 0 makes no process_vm_readv for them (node 0's slow_path_calls
 *    are the big put's below, fewer than its packets);
 *  - the target's writes are staged and written a burst at a time: every
 *    put packet to it is counted in wb_pkts;
 *  - one put in four lands on a page the target unmapped: those fail
 *    (ACK with a failure) and only those; every other byte is checked.
 *  - a 256 KiB put between malloc'd buffers (its packets' payloads read
 *    a batch at a time), byte-checked; one whose first page is unmapped
 *    fails with PTL_NI_SEGV and sends nothing;
 *  - PTL_MD_VOLATILE (max_volatile_size bytes): the buffer is the
 *    caller's again when PtlPut, PtlAtomic or PtlSwap returns, in the
 *    region, in malloc'd memory and through an iovec MD: rewritten at once,
 *    the target still gets the bytes of the call; one byte more is
 *    PTL_ARG_INVALID.
 * Again over the lossy link (itest_outside_lossy): resends of inline puts
 * come from the copy kept in the window entry.
 * The clients are forked children linked with libspinnic (kid.c).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "kid.h"

#define MATCH 0x0b5ull
#define NPUT 512u             /* puts */
#define PLEN 8u               /* bytes each */
#define WINDOW 64u            /* in flight */
#define PAGE 4096u

/* put i: to the unmapped page when i % 4 == 3, else to slot i of page 0 */
static bool
put_bad(unsigned i)
{
	return i % 4 == 3;
}

static uint64_t
put_off(unsigned i)
{
	return put_bad(i) ? PAGE + (uint64_t)(i % 64) * PLEN :
			    (uint64_t)i * PLEN;
}

static uint8_t
put_byte(unsigned i, unsigned k)
{
	return (uint8_t)(i * 7 + k + 1);
}

/* ---- the target (node 1) ------------------------------------------------ */

static int
target_main(struct kid *self, void *arg)
{
	ptl_handle_me_t meh;
	struct kid_ni n;
	char line[64];
	uint8_t *buf;
	ptl_me_t me;
	unsigned i, k, bad = 0;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	/* two pages outside the region; the second taken away again */
	buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KCHECK(self, buf != MAP_FAILED, "mmap");
	KCHECK(self, munmap(buf + PAGE, PAGE) == 0, "munmap");
	memset(buf, 0, PAGE);
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = 2 * PAGE;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_SUCCESS_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0 &&
	       strcmp(line, "check") == 0, "no check (\"%s\")", line);
	for (i = 0; i < NPUT; i++) {
		if (put_bad(i))
			continue;
		for (k = 0; k < PLEN; k++)
			if (buf[put_off(i) + k] != put_byte(i, k))
				bad++;
	}
	KCHECK(self, bad == 0, "%u bytes wrong in the target", bad);
	kid_say(self, "bytes ok");
	PtlMEUnlink(meh);
	kid_ni_close(&n);
	return 0;
}

/* ---- the initiator (node 0) --------------------------------------------- */

/* Wait until @p ct counts @p want. @return 0 or 1 */
static int
ct_reach(struct kid *self, ptl_handle_ct_t ct, ptl_size_t want)
{
	ptl_ct_event_t ev;

	KCHECK(self, PtlCTWait(ct, want, &ev) == PTL_OK && ev.failure == 0,
	       "PtlCTWait %llu: success %llu failure %llu",
	       (unsigned long long)want, (unsigned long long)ev.success,
	       (unsigned long long)ev.failure);
	return 0;
}

/* A volatile MD over @p buf (@p iov_n > 0: an iovec MD of that many
 * entries at @p buf) */
static int
vol_md(struct kid_ni *n, void *buf, ptl_size_t len, unsigned iov_n,
       ptl_handle_md_t *mdh)
{
	ptl_md_t md;

	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = iov_n > 0 ? iov_n : len;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_VOLATILE | (iov_n > 0 ? PTL_IOVEC : 0);
	return PtlMDBind(n->ni, &md, mdh) == PTL_OK ? 0 : -1;
}

#define BIG (256u << 10)

/* The SEND event of the one put in flight on @p n's EQ: its failure */
static int
send_fail(struct kid *self, struct kid_ni *n, int *fail_p)
{
	unsigned which;
	ptl_event_t ev;
	int rc = PtlEQPoll(&n->eq, 1, 30000, &ev, &which);

	KCHECK(self, rc == PTL_OK && ev.type == PTL_EVENT_SEND,
	       "SEND: rc %d, event %d", rc, ev.type);
	*fail_p = ev.ni_fail_type;
	return 0;
}

/* Big puts from malloc'd memory to this client's own malloc'd ME */
static int
big_checks(struct kid *self, struct kid_ni *n)
{
	uint8_t *src = malloc(BIG), *dst = malloc(BIG), *hole;
	ptl_handle_md_t mdh;
	ptl_handle_ct_t ct;
	ptl_handle_me_t meh;
	ptl_ct_event_t cev;
	unsigned i;
	ptl_me_t me;
	ptl_md_t md;
	int fail;

	KCHECK(self, src && dst, "malloc");
	for (i = 0; i < BIG; i++)
		src[i] = (uint8_t)(i * 31 + 7);
	memset(dst, 0, BIG);
	KCHECK(self, PtlCTAlloc(n->ni, &ct) == PTL_OK, "PtlCTAlloc");
	memset(&me, 0, sizeof(me));
	me.start = dst;
	me.length = BIG;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_CT_COMM;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH + 2;
	KCHECK(self, PtlMEAppend(n->ni, n->pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	memset(&md, 0, sizeof(md));
	md.start = src;
	md.length = BIG;
	md.eq_handle = n->eq;
	md.ct_handle = PTL_CT_NONE;
	KCHECK(self, PtlMDBind(n->ni, &md, &mdh) == PTL_OK, "PtlMDBind");
	KCHECK(self, PtlPut(mdh, 0, BIG, PTL_NO_ACK_REQ, n->id, n->pt,
			    MATCH + 2, 0, NULL, 0) == PTL_OK, "big PtlPut");
	if (send_fail(self, n, &fail) != 0)
		return 1;
	KCHECK(self, fail == PTL_NI_OK, "big put: SEND failed %d", fail);
	KCHECK(self, PtlCTWait(ct, 1, &cev) == PTL_OK && cev.failure == 0,
	       "big put not counted");
	for (i = 0; i < BIG; i++)
		KCHECK(self, dst[i] == (uint8_t)(i * 31 + 7),
		       "big put: byte %u is %#x", i, dst[i]);
	PtlMDRelease(mdh);
	/* the source's first page unmapped: nothing can be sent */
	hole = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KCHECK(self, hole != MAP_FAILED && munmap(hole, PAGE) == 0, "mmap");
	md.start = hole;
	md.length = 4 * PAGE;
	KCHECK(self, PtlMDBind(n->ni, &md, &mdh) == PTL_OK, "PtlMDBind");
	KCHECK(self, PtlPut(mdh, 0, 4 * PAGE, PTL_NO_ACK_REQ, n->id, n->pt,
			    MATCH + 2, 0, NULL, 0) == PTL_OK, "PtlPut");
	if (send_fail(self, n, &fail) != 0)
		return 1;
	KCHECK(self, fail == PTL_NI_SEGV, "put from an unmapped page: %d",
	       fail);
	PtlCTGet(ct, &cev);
	KCHECK(self, cev.success == 1 && cev.failure == 0,
	       "the failed put was counted (%llu/%llu)",
	       (unsigned long long)cev.success,
	       (unsigned long long)cev.failure);
	PtlMDRelease(mdh);
	munmap(hole + PAGE, 3 * PAGE);
	PtlMEUnlink(meh);
	PtlCTFree(ct);
	free(src);
	free(dst);
	return 0;
}

/* PTL_MD_VOLATILE: puts and atomics to this client's own ME, the source
 * rewritten as soon as the call returns */
static int
volatile_checks(struct kid *self, struct kid_ni *n)
{
	uint8_t *reg = spin_host_alloc(64), *heap = malloc(64);
	/* the landing ME and the atomics' MD in the region: node 0 makes
	 * no process_vm call for them (checked at the end) */
	int64_t *land = spin_host_alloc(64);
	int64_t *opnd = spin_host_alloc(2 * sizeof(int64_t));
	const ptl_size_t vmax = n->lim.max_volatile_size;
	/* the iovec array in the region too (the NIC loads it at bind) */
	ptl_iovec_t *iov = spin_host_alloc(2 * sizeof(*iov));
	ptl_handle_md_t mdh;
	ptl_handle_ct_t ct;
	ptl_handle_me_t meh;
	ptl_size_t got = 0;
	ptl_me_t me;
	unsigned k;

	KCHECK(self, reg && heap && land && opnd && iov, "memory");
	KCHECK(self, vmax >= 8 && vmax <= 32, "max_volatile_size %llu",
	       (unsigned long long)vmax);
	KCHECK(self, PtlCTAlloc(n->ni, &ct) == PTL_OK, "PtlCTAlloc");
	memset(&me, 0, sizeof(me));
	me.start = land;
	me.length = 64;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
		     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE |
		     PTL_ME_EVENT_CT_COMM;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH + 1;
	KCHECK(self, PtlMEAppend(n->ni, n->pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	/* puts from the region, from malloc'd memory, through an iovec */
	for (k = 0; k < 3; k++) {
		uint8_t *src = k == 0 ? reg : heap;
		unsigned i;

		for (i = 0; i < vmax; i++)
			src[i] = (uint8_t)(0x40 + k * 16 + i);
		iov[0].iov_base = src;
		iov[0].iov_len = vmax / 2;
		iov[1].iov_base = src + vmax / 2;
		iov[1].iov_len = vmax - vmax / 2;
		KCHECK(self, (k == 2 ? vol_md(n, iov, 0, 2, &mdh) :
			      vol_md(n, src, 64, 0, &mdh)) == 0, "MD %u", k);
		memset(land, 0, 64);
		KCHECK(self, PtlPut(mdh, 0, vmax + 1, PTL_NO_ACK_REQ, n->id,
				    n->pt, MATCH + 1, 0, NULL, 0) ==
		       PTL_ARG_INVALID, "a volatile put over %llu B taken",
		       (unsigned long long)vmax);
		KCHECK(self, PtlPut(mdh, 0, vmax, PTL_NO_ACK_REQ, n->id,
				    n->pt, MATCH + 1, 0, NULL, 0) == PTL_OK,
		       "volatile PtlPut %u", k);
		memset(src, 0xee, vmax); /* the caller's again */
		if (ct_reach(self, ct, ++got) != 0)
			return 1;
		for (i = 0; i < vmax; i++)
			KCHECK(self, ((uint8_t *)land)[i] ==
			       (uint8_t)(0x40 + k * 16 + i),
			       "volatile put %u: byte %u is %#x", k, i,
			       ((uint8_t *)land)[i]);
		PtlMDRelease(mdh);
	}
	/* an atomic and a compare-and-swap: volatile in the region too */
	KCHECK(self, vol_md(n, opnd, 2 * sizeof(int64_t), 0, &mdh) == 0,
	       "atomic MD");
	land[0] = 10;
	opnd[0] = 5;
	KCHECK(self, PtlAtomic(mdh, 0, sizeof(int64_t), PTL_NO_ACK_REQ,
			       n->id, n->pt, MATCH + 1, 0, NULL, 0, PTL_SUM,
			       PTL_INT64_T) == PTL_OK, "volatile PtlAtomic");
	opnd[0] = 1000;
	if (ct_reach(self, ct, ++got) != 0)
		return 1;
	KCHECK(self, land[0] == 15, "volatile atomic: %lld, want 15",
	       (long long)land[0]);
	{
		int64_t cmp = 15;

		opnd[0] = 77;
		KCHECK(self, PtlSwap(mdh, sizeof(int64_t), mdh, 0,
				     sizeof(int64_t), n->id, n->pt,
				     MATCH + 1, 0, NULL, 0, &cmp, PTL_CSWAP,
				     PTL_INT64_T) == PTL_OK,
		       "volatile PtlSwap");
		opnd[0] = 99;
		if (ct_reach(self, ct, ++got) != 0)
			return 1;
		/* the old value comes back into the MD: wait for it */
		for (k = 0; k < 100000 && opnd[1] != 15; k++)
			usleep(10);
		KCHECK(self, land[0] == 77 && opnd[1] == 15,
		       "volatile CSWAP: target %lld (want 77), old %lld",
		       (long long)land[0], (long long)opnd[1]);
	}
	PtlMDRelease(mdh);
	PtlMEUnlink(meh);
	PtlCTFree(ct);
	spin_host_free(reg);
	spin_host_free(iov);
	free(heap);
	spin_host_free(land);
	spin_host_free(opnd);
	return 0;
}

static int
initiator_main(struct kid *self, void *arg)
{
	unsigned nid, pid, pt, i, k, posted = 0, done = 0, ok = 0, fail = 0;
	ptl_process_t peer;
	ptl_handle_md_t mdh;
	struct kid_ni n;
	uint8_t *src;
	char line[96];
	ptl_md_t md;

	(void)arg;
	if (kid_ni_open(self, &n, 2 * WINDOW) != 0)
		return 1;
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	       sscanf(line, "go %u %u %u", &nid, &pid, &pt) == 3,
	       "no go (\"%s\")", line);
	peer.phys.nid = nid;
	peer.phys.pid = pid;
	src = malloc(NPUT * PLEN);
	KCHECK(self, src != NULL, "malloc");
	for (i = 0; i < NPUT; i++)
		for (k = 0; k < PLEN; k++)
			src[i * PLEN + k] = put_byte(i, k);
	memset(&md, 0, sizeof(md));
	md.start = src;
	md.length = NPUT * PLEN;
	md.eq_handle = n.eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	KCHECK(self, PtlMDBind(n.ni, &md, &mdh) == PTL_OK, "PtlMDBind");
	while (done < NPUT) {
		ptl_event_t ev;
		unsigned which;
		int rc;

		while (posted < NPUT && posted - done < WINDOW) {
			KCHECK(self, PtlPut(mdh, posted * PLEN, PLEN,
					    PTL_ACK_REQ, peer, pt, MATCH,
					    put_off(posted),
					    (void *)(uintptr_t)(posted + 1),
					    0) == PTL_OK, "PtlPut %u", posted);
			/* the command has the bytes: the buffer may change */
			src[posted * PLEN] ^= 0xff;
			posted++;
		}
		rc = PtlEQPoll(&n.eq, 1, 30000, &ev, &which);
		KCHECK(self, rc == PTL_OK, "PtlEQPoll %d after %u acks", rc,
		       done);
		KCHECK(self, ev.type == PTL_EVENT_ACK, "event %d", ev.type);
		i = (unsigned)((uintptr_t)ev.user_ptr - 1);
		KCHECK(self, i < NPUT, "user_ptr %p", ev.user_ptr);
		if (ev.ni_fail_type == PTL_NI_OK) {
			KCHECK(self, !put_bad(i), "put %u to the unmapped page acked OK", i);
			KCHECK(self, ev.mlength == PLEN, "put %u mlength %" PRIu64, i,
			       (uint64_t)ev.mlength);
			ok++;
		} else {
			KCHECK(self, put_bad(i), "put %u failed (%d)", i,
			       (int)ev.ni_fail_type);
			fail++;
		}
		done++;
	}
	if (volatile_checks(self, &n) != 0 || big_checks(self, &n) != 0)
		return 1;
	kid_say(self, "acks ok=%u fail=%u", ok, fail);
	PtlMDRelease(mdh);
	free(src);
	kid_ni_close(&n);
	return 0;
}

int
main(void)
{
	long long reads, wb_pkts, wb_flushes, writes;
	unsigned nid, pid, pt, ok, fail;
	struct kid t, in;
	char line[96];

	itest_init("itest_outside", 180);
	itest_spinnic_start(NULL);
	kid_line_ms = 120000;
	kid_start(&t, "target", 1, false, target_main, NULL);
	kid_expect(&t, "ready ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &nid, &pid, &pt) == 3,
		    "target said \"%s\"", line);
	kid_start(&in, "initiator", 0, false, initiator_main, NULL);
	snprintf(line, sizeof(line), "go %u %u %u", nid, pid, pt);
	kid_tell(&in, line);
	kid_expect(&in, "acks ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "acks ok=%u fail=%u", &ok, &fail) == 2 &&
		    fail == NPUT / 4 && ok == NPUT - fail,
		    "initiator said \"%s\"", line);
	kid_end(&in);
	kid_tell(&t, "check");
	kid_expect(&t, "bytes ok", line, sizeof(line));
	kid_end(&t);
	itest_spinnic_finish();
	reads = itest_counter(0, "slow_path_calls");
	writes = itest_counter(1, "slow_path_calls");
	wb_pkts = itest_counter(1, "wb_pkts");
	wb_flushes = itest_counter(1, "wb_flushes");
	/* zero counters are not printed: the name is right when node 1,
	 * which wrote, has it */
	ITEST_CHECK(writes > 0, "node 1: slow_path_calls %lld", writes);
	/* node 0's calls are the big put's (128 packets read, and written
	 * to its own malloc'd ME) in batches, and the failed one's; the
	 * inline and volatile puts make none */
	if (reads < 0)
		reads = 0;
	ITEST_CHECK(reads < (long long)(BIG / 2048),
		    "node 0 made %lld process_vm calls", reads);
	/* each packet staged once (duplicates are dropped before) */
	ITEST_CHECK(wb_pkts == NPUT && wb_flushes > 0 && wb_flushes <= wb_pkts,
		    "node 1: wb_pkts %lld, wb_flushes %lld (%u puts)", wb_pkts,
		    wb_flushes, NPUT);
	printf("itest_outside: %u puts of %u B, malloc'd to mmap'd: %u acked, %u failed on the unmapped page; node 0 process_vm calls %lld; node 1 %lld packets in %lld batches, %lld process_vm calls\n",
	       NPUT, PLEN, ok, fail, reads, wb_pkts, wb_flushes, writes);
	itest_expect_no_leaks();
	return 0;
}
