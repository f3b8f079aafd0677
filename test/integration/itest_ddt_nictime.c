/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic's own time per message (spinnic_event.nic_ns, ABI 8) through a
 * real spinnic, and the layout-aware chooser's use of it (issue #16):
 *  1. a typed receive through the layout cache (its first use: the host
 *     path) whose sender is ready at once: a NIC time > 0 and within the
 *     receive's time at the client; the chooser takes a sample timed by
 *     it (spin_type_cache_stats().nic_timed) and learns the completion
 *     latency;
 *  2. the same layout again with a sender that sleeps SLEEP_MS between
 *     the post and its put: the NIC time counts from the first packet,
 *     so the client's time is at least the sleep plus the NIC time, and
 *     the sample the chooser takes is not raised by the sleep (the
 *     completion latency stays below it);
 *  3. a receive of a prepared NIC strategy (spin_me_append_typed(), the
 *     specialized handler) with the late sender: the NIC time covers the
 *     handlers' work, and the client's time holds it and the sleep.
 * Every receive is checked byte for byte. The client sends to itself
 * through node 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>

#include "harness.h"
#include "shim_ddt.h"

#define NODE 1u
#define SLEEP_MS 200u
#define EV_TIMEOUT_MS 20000

#define CFAIL(...) do { \
	fprintf(stderr, "itest_ddt_nictime client: %s:%d: ", __func__, \
		__LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	_exit(1); \
} while (0)
#define CCHECK(c, ...) do { if (!(c)) CFAIL(__VA_ARGS__); } while (0)
#define CPTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) \
		CFAIL("%s: %s", #call, spin_strerror(rc_)); \
} while (0)

struct node {
	ptl_handle_ni_t ni;
	ptl_process_t id;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_handle_md_t md;
};

/* the layout: 512 blocks of 32 bytes, stride 64 */
#define NBLK 512
#define BLK 8
#define STRIDE 16
#define PACKED (NBLK * BLK * 4)
#define EXTENT (NBLK * STRIDE * 4)

static uint8_t packed[PACKED];

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static ptl_me_t
me_match(uint64_t bits)
{
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	return me;
}

/* Send the packed stream to ourselves after @p sleep_ms, wait for the
 * receive's PUT event (the last event taken: its NIC time is readable)
 * and complete it. @return the client's time, post to completion */
static uint64_t
recv_one(struct node *n, struct spin_typed_recv *r, uint64_t t_post,
	 uint64_t bits, unsigned sleep_ms, uint64_t *nic_p)
{
	ptl_event_t ev;
	uint64_t t;
	int rc;

	if (sleep_ms > 0)
		usleep(sleep_ms * 1000u);
	CPTL(PtlPut(n->md, 0, PACKED, PTL_NO_ACK_REQ, n->id, n->pt, bits, 0,
		    NULL, 0));
	for (;;) {
		unsigned which;

		rc = PtlEQPoll(&n->eq, 1, EV_TIMEOUT_MS, &ev, &which);
		CCHECK(rc == PTL_OK, "PtlEQPoll: %s", spin_strerror(rc));
		if (ev.type == PTL_EVENT_PUT && ev.user_ptr == r)
			break;
		CCHECK(ev.ni_fail_type == PTL_NI_OK, "event %d failed",
		       ev.type);
	}
	CCHECK(ev.ni_fail_type == PTL_NI_OK && ev.mlength == PACKED,
	       "PUT: fail %d, %llu bytes", ev.ni_fail_type,
	       (unsigned long long)ev.mlength);
	CPTL(spin_event_nic_time(&ev, nic_p));
	CPTL(spin_typed_recv_complete(r, &ev, NULL));
	t = now_ns() - t_post;
	return t;
}

static void
check_data(const struct ddt_type *t, const uint8_t *buf)
{
	static uint8_t again[PACKED];

	CCHECK(ddt_pack(t, 1, buf, again) == 0, "pack");
	CCHECK(memcmp(again, packed, PACKED) == 0, "received bytes differ");
}

static int
client(void)
{
	struct spin_type_cache_stats s0, s1;
	struct spin_type_offload *off;
	struct spin_typed_recv *r;
	struct ddt_type *t;
	struct node n;
	ptl_md_t md;
	ptl_me_t me;
	uint64_t t0, ptc, nic, bits = 0x100;
	double lat1, lat2;
	uint8_t *buf;
	unsigned i;

	/* no calibration: the aware rule without a table is the threshold
	 * rule, so 32-byte blocks stay on the host, deterministically */
	setenv("SPINNIC_DDT_CALIB", "off", 1);
	unsetenv("SPINNIC_DDT_CHOOSER");
	unsetenv("SPINNIC_DDT_STRATEGY");
	CPTL(PtlInit());
	CPTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		       PTL_PID_ANY, NULL, NULL, &n.ni));
	CPTL(PtlGetPhysId(n.ni, &n.id));
	CPTL(PtlEQAlloc(n.ni, 256, &n.eq));
	CPTL(PtlPTAlloc(n.ni, 0, n.eq, PTL_PT_ANY, &n.pt));
	for (i = 0; i < PACKED; i++)
		packed[i] = (uint8_t)(i * 7 + 3);
	memset(&md, 0, sizeof(md));
	md.start = packed;
	md.length = PACKED;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	CPTL(PtlMDBind(n.ni, &md, &n.md));
	t = ddt_vector(NBLK, BLK, STRIDE, ddt_base(DDT_INT32));
	CCHECK(t != NULL && ddt_commit(t) == 0, "type");
	buf = spin_host_alloc(EXTENT);
	CCHECK(buf != NULL, "spin_host_alloc");

	/* 1. the host path, the sender ready */
	spin_type_cache_stats(&s0);
	memset(buf, 0, EXTENT);
	me = me_match(++bits);
	t0 = now_ns();
	CPTL(spin_me_append_ddt(n.ni, n.pt, &me, t, 1, buf, NULL, &r));
	CCHECK(spin_typed_recv_strategy(r) == SPIN_TYPE_HOST,
	       "first use not on the host");
	ptc = recv_one(&n, r, t0, bits, 0, &nic);
	check_data(t, buf);
	CCHECK(nic > 0 && nic <= ptc, "NIC time %llu, client %llu",
	       (unsigned long long)nic, (unsigned long long)ptc);
	spin_type_cache_stats(&s1);
	CCHECK(s1.samples == s0.samples + 1 &&
	       s1.nic_timed == s0.nic_timed + 1,
	       "samples %llu -> %llu, NIC-timed %llu -> %llu",
	       (unsigned long long)s0.samples,
	       (unsigned long long)s1.samples,
	       (unsigned long long)s0.nic_timed,
	       (unsigned long long)s1.nic_timed);
	lat1 = shim_lc_latency();
	CCHECK(lat1 >= 0 && lat1 <= (double)(ptc - nic),
	       "completion latency %.0f (client %llu, NIC %llu)", lat1,
	       (unsigned long long)ptc, (unsigned long long)nic);
	fprintf(stderr, "itest_ddt_nictime: host, sender ready: client "
		"%llu ns, NIC %llu ns, latency %.0f ns\n",
		(unsigned long long)ptc, (unsigned long long)nic, lat1);

	/* 2. the same layout, the sender SLEEP_MS late */
	memset(buf, 0, EXTENT);
	me = me_match(++bits);
	t0 = now_ns();
	CPTL(spin_me_append_ddt(n.ni, n.pt, &me, t, 1, buf, NULL, &r));
	CCHECK(spin_typed_recv_strategy(r) == SPIN_TYPE_HOST,
	       "8-byte elements left the host without a table");
	ptc = recv_one(&n, r, t0, bits, SLEEP_MS, &nic);
	check_data(t, buf);
	/* the NIC's interval lies after the sleep, inside the client's */
	CCHECK(nic > 0 && ptc >= SLEEP_MS * 1000000ull + nic,
	       "NIC time %llu, client %llu, sleep %u ms",
	       (unsigned long long)nic, (unsigned long long)ptc, SLEEP_MS);
	spin_type_cache_stats(&s0);
	CCHECK(s0.samples == s1.samples + 1 &&
	       s0.nic_timed == s1.nic_timed + 1, "second sample not taken");
	/* the sleep is not in the sample: the latency did not rise */
	lat2 = shim_lc_latency();
	CCHECK(lat2 >= 0 && lat2 <= lat1, "latency %.0f after %.0f", lat2,
	       lat1);
	fprintf(stderr, "itest_ddt_nictime: host, sender %u ms late: client "
		"%llu ns, NIC %llu ns\n", SLEEP_MS, (unsigned long long)ptc,
		(unsigned long long)nic);

	/* 3. a NIC strategy, the sender late */
	CPTL(spin_type_offload(n.ni, t, 1, SPIN_TYPE_SPECIALIZED, &off));
	memset(buf, 0, EXTENT);
	me = me_match(++bits);
	t0 = now_ns();
	CPTL(spin_me_append_typed(n.ni, n.pt, &me, off, buf, NULL, &r));
	CCHECK(spin_typed_recv_strategy(r) == SPIN_TYPE_SPECIALIZED,
	       "the specialized handler was not taken (strategy %d)",
	       (int)spin_typed_recv_strategy(r));
	ptc = recv_one(&n, r, t0, bits, SLEEP_MS, &nic);
	check_data(t, buf);
	CCHECK(nic > 0 && ptc >= SLEEP_MS * 1000000ull + nic,
	       "NIC time %llu, client %llu, sleep %u ms",
	       (unsigned long long)nic, (unsigned long long)ptc, SLEEP_MS);
	CCHECK(shim_lc_latency() <= lat2, "latency rose");
	fprintf(stderr, "itest_ddt_nictime: NIC (specialized), sender %u ms "
		"late: client %llu ns, NIC %llu ns\n", SLEEP_MS,
		(unsigned long long)ptc, (unsigned long long)nic);
	CPTL(spin_type_offload_free(off));

	CPTL(spin_type_cache_flush(n.ni));
	spin_host_free(buf);
	ddt_free(t);
	CPTL(PtlMDRelease(n.md));
	CPTL(PtlPTFree(n.ni, n.pt));
	CPTL(PtlEQFree(n.eq));
	CPTL(PtlNIFini(n.ni));
	PtlFini();
	return 0;
}

int
main(void)
{
	time_t t0;
	pid_t pid;
	int st;

	itest_init("itest_ddt_nictime", 60);
	itest_spinnic_start(NULL);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		itest_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		setenv("SPINNIC_SOCKET", itest_socket_path(NODE), 1);
		_exit(client());
	}
	for (t0 = time(NULL);;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (time(NULL) - t0 > 30) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			itest_fail("client still running after 30 s");
		}
		usleep(20000);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		itest_fail("client failed (status 0x%x)\nspinnic:\n%s", st,
			   itest_spinnic_log());
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
