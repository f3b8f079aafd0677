/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lock granularity of matching (doc/NOTES.md): two threads call
 * ptl_nic_match + ptl_match_complete on different PTs ("diff") or on the
 * same PT ("same") while a third appends and unlinks entries on those PTs.
 * Built against lib/portals as it is (one node-wide lock); the per-PT
 * prototype it was compared with is commit 65e0700. Without arguments a
 * short run that checks the counts (a unit test); with an iteration count
 * per thread, one line: matches per second, diff and same.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ptl_nic.h"

#define REGION_SIZE (1u << 20)
#define CMD_OFF 4096u
#define EQ_OFF (64u * 1024)
#define BUF_OFF (256u * 1024)
#define N_PT 2
#define N_AHEAD 16   /* non-matching entries before the one that matches */

#define CHECK(x) do { \
	if (!(x)) { \
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #x); \
		exit(1); \
	} \
} while (0)

struct env {
	struct ptl_nic *nic;
	struct ptl_client *c;
	uint8_t *region;
	uint32_t ni;
	uint32_t pt[N_PT];
};

struct worker {
	struct env *e;
	unsigned pt;
	unsigned long n, matched;
};

static volatile int stop;

static int
ctrl(struct env *e, uint16_t op, struct spinnic_ctrl_msg *m)
{
	m->version = SPINNIC_ABI_VERSION;
	m->op = op;
	CHECK(ptl_nic_ctrl(e->nic, e->c, m, m) == 0);
	return m->status;
}

static uint32_t
me_append(struct env *e, unsigned pt, uint64_t bits)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.me.ni = e->ni;
	m.u.me.pt_index = e->pt[pt];
	m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	m.u.me.start = (uint64_t)(uintptr_t)e->region + BUF_OFF;
	m.u.me.length = 4096;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT |
			 SPINNIC_PTL_ME_EVENT_COMM_DISABLE |
			 SPINNIC_PTL_ME_EVENT_LINK_DISABLE |
			 SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.match_bits = bits;
	CHECK(ctrl(e, SPINNIC_CTRL_ME_APPEND, &m) == SPINNIC_PTL_OK);
	return m.u.me.me;
}

static void
env_setup(struct env *e)
{
	struct spinnic_region_hdr *h;
	struct ptl_nic_conf cf;
	struct spinnic_ctrl_msg m;
	unsigned p, i;

	memset(e, 0, sizeof(*e));
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	CHECK(ptl_nic_create(&cf, &e->nic) == 0);
	e->region = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(e->region != MAP_FAILED);
	h = (struct spinnic_region_hdr *)e->region;
	h->magic = SPINNIC_REGION_MAGIC;
	h->version = SPINNIC_ABI_VERSION;
	h->hdr_size = sizeof(*h);
	h->size = REGION_SIZE;
	h->cmd_off = CMD_OFF;
	h->cmd_entries = 16;
	h->heap_off = BUF_OFF;
	h->heap_size = REGION_SIZE - BUF_OFF;
	CHECK(ptl_client_attach(e->nic, e->region, REGION_SIZE,
				(uint64_t)(uintptr_t)e->region, getpid(),
				getuid(), SPINNIC_PTL_PID_ANY, &e->c) == 0);
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	CHECK(ctrl(e, SPINNIC_CTRL_NI_INIT, &m) == SPINNIC_PTL_OK);
	e->ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = e->ni;
	m.u.eq.ring_off = EQ_OFF;
	m.u.eq.count = 64;
	CHECK(ctrl(e, SPINNIC_CTRL_EQ_ALLOC, &m) == SPINNIC_PTL_OK);
	for (p = 0; p < N_PT; p++) {
		uint32_t eq = m.u.eq.eq;

		memset(&m, 0, sizeof(m));
		m.u.pt.ni = e->ni;
		m.u.pt.eq = eq;
		m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
		CHECK(ctrl(e, SPINNIC_CTRL_PT_ALLOC, &m) == SPINNIC_PTL_OK);
		e->pt[p] = m.u.pt.pt_index;
		m.u.eq.eq = eq;
		for (i = 0; i < N_AHEAD; i++)
			me_append(e, p, 0x1000 + i);
		me_append(e, p, 0);
	}
}

static void *
matcher(void *arg)
{
	struct worker *w = arg;
	struct spinnic_pkt h;
	struct ptl_match m;
	unsigned long i;

	memset(&h, 0, sizeof(h));
	h.type = SPINNIC_WIRE_T_DATA;
	h.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	h.op = SPINNIC_WIRE_OP_PUT;
	h.src.nid = 2;
	h.src.pid = 7;
	h.dst = ptl_client_id(w->e->c);
	h.pt_index = w->e->pt[w->pt];
	h.uid = 1000;
	h.msg_len = 64;
	h.pay_len = 64;
	for (i = 0; i < w->n; i++) {
		if (ptl_nic_match(w->e->nic, &h, &m) != 0)
			continue;
		w->matched++;
		ptl_match_complete(w->e->nic, &m, SPINNIC_PTL_NI_OK);
	}
	return NULL;
}

/* appends then unlinks an entry on each PT in turn, until stopped */
static void *
churn(void *arg)
{
	struct env *e = arg;
	unsigned long i;

	for (i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++) {
		struct spinnic_ctrl_msg m;

		memset(&m, 0, sizeof(m));
		m.u.me.me = me_append(e, i % N_PT, 0x2000 + i % 7);
		CHECK(ctrl(e, SPINNIC_CTRL_ME_UNLINK, &m) == SPINNIC_PTL_OK);
	}
	return NULL;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* matches per second of two matchers (on one PT when same) */
static double
run(struct env *e, bool same, unsigned long n)
{
	struct worker w[2];
	pthread_t th[3];
	double t0, t;
	unsigned k;

	stop = 0;
	CHECK(pthread_create(&th[2], NULL, churn, e) == 0);
	t0 = now_s();
	for (k = 0; k < 2; k++) {
		w[k] = (struct worker){ .e = e, .pt = same ? 0 : k, .n = n };
		CHECK(pthread_create(&th[k], NULL, matcher, &w[k]) == 0);
	}
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	t = now_s() - t0;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(th[2], NULL);
	/* the matching entry is persistent: every header matches */
	CHECK(w[0].matched == n && w[1].matched == n);
	return 2.0 * (double)n / t;
}

int
main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	struct ptl_nic_stats s;
	struct env e;
	double diff, same;

	env_setup(&e);
	diff = run(&e, false, n);
	same = run(&e, true, n);
	ptl_nic_stats_get(e.nic, &s);
	CHECK(s.match_priority == 4 * (uint64_t)n);
	CHECK(s.drop_no_match == 0);
	printf("diff=%.0f same=%.0f\n", diff, same);
	ptl_client_detach(e.nic, e.c);
	ptl_nic_destroy(e.nic);
	return 0;
}
