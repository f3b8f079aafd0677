/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lcore roles: every EAL lcore, launched by main.c, runs its list of role
 * poll functions round-robin, with an idle backoff (spin, then sleep
 * --idle-sleep-us, growing) because the cores are shared with clients.
 * spinnic_quiesce(), called by the control thread, waits for every running
 * lcore to finish a round before a detached client's region is unmapped.
 * Defaults and backoff: app/spinnic/README.md, "Roles".
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "ptl_nic.h"
#include "spinnic.h"
#include "spin_rt.h"

/* Idle rounds spent on rte_pause() before sleeping. */
#define IDLE_SPIN_ROUNDS 64u
/* Idle sleeps after which the sleep grows 4x (then 16x): an lcore idle
 * for a while (~0.1 s, ~1 s at the default) costs next to no CPU, one
 * that just went idle reacts within --idle-sleep-us. */
#define IDLE_GROW1 2000u
#define IDLE_GROW2 20000u
#define IDLE_SLEEP_CAP_US 1000u
/* HERs an HPU task runs per turn, so other tasks of the lcore get theirs. */
#define HPU_BUDGET 32u

static const char *const role_names[SPINNIC_ROLE_MAX] = {
	[SPINNIC_ROLE_INBOUND] = "inbound",
	[SPINNIC_ROLE_OUTBOUND] = "outbound",
	[SPINNIC_ROLE_HPU] = "hpu",
};

static bool
mask_has(const uint64_t *mask, unsigned lcore)
{
	return (mask[lcore / 64] >> (lcore % 64)) & 1;
}

/* The lcores of a role: from --lcore-roles, or the defaults. */
static unsigned
role_lcores(const struct spinnic *sn, enum spinnic_role role,
	    unsigned *ids)
{
	const struct spinnic_cfg *cfg = &sn->cfg;
	unsigned lcore, n = 0;

	if (cfg->roles_given & (1u << role)) {
		for (lcore = 0; lcore < RTE_MAX_LCORE; lcore++)
			if (mask_has(cfg->role_mask[role], lcore))
				ids[n++] = lcore;
		return n;
	}
	if (role != SPINNIC_ROLE_HPU) {
		ids[0] = rte_get_main_lcore();
		return 1;
	}
	/* HPUs over every lcore, workers first so HPU 0 does not share the
	 * main lcore with the engines when there is a choice */
	RTE_LCORE_FOREACH_WORKER(lcore)
		ids[n++] = lcore;
	ids[n++] = rte_get_main_lcore();
	return n;
}

static int
task_add(struct spinnic *sn, unsigned lcore, enum spinnic_role role,
	 struct spinnic_node *node, unsigned hpu, bool drain)
{
	struct spinnic_lcore *lc = &sn->lcores[lcore];

	if (lc->nb_tasks == SPINNIC_TASKS_MAX) {
		SPINNIC_LOG(ERR, "lcore %u: more than %u tasks", lcore,
			    SPINNIC_TASKS_MAX);
		return -E2BIG;
	}
	lc->tasks[lc->nb_tasks++] = (struct spinnic_task){
		.role = role, .node = node, .hpu = hpu, .drain = drain,
	};
	return 0;
}

int
spinnic_lcores_assign(struct spinnic *sn)
{
	unsigned ids[SPINNIC_ROLE_MAX][RTE_MAX_LCORE];
	unsigned n[SPINNIC_ROLE_MAX];
	unsigned r, i, h, lcore;
	int rc;

	for (r = 0; r < SPINNIC_ROLE_MAX; r++) {
		n[r] = role_lcores(sn, (enum spinnic_role)r, ids[r]);
		for (i = 0; i < n[r]; i++)
			if (!rte_lcore_is_enabled(ids[r][i])) {
				fprintf(stderr, "spinnic: --lcore-roles: %s lcore %u is not an EAL lcore (see -l / --lcores)\n",
					role_names[r], ids[r][i]);
				return -EINVAL;
			}
	}
	if (sn->cfg.ctrl_lcore >= 0 &&
	    !rte_lcore_is_enabled((unsigned)sn->cfg.ctrl_lcore)) {
		fprintf(stderr, "spinnic: --lcore-roles: ctrl lcore %d is not an EAL lcore (see -l / --lcores)\n",
			sn->cfg.ctrl_lcore);
		return -EINVAL;
	}
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		unsigned in_lcore = ids[SPINNIC_ROLE_INBOUND]
					[i % n[SPINNIC_ROLE_INBOUND]];

		/* on a shared lcore: packets in, their handlers at once,
		 * then what goes out */
		rc = task_add(sn, in_lcore, SPINNIC_ROLE_INBOUND, node, 0,
			      false);
		for (h = 0; rc == 0 && h < sn->cfg.hpus; h++) {
			lcore = ids[SPINNIC_ROLE_HPU][h % n[SPINNIC_ROLE_HPU]];
			rc = task_add(sn, lcore, SPINNIC_ROLE_HPU, node, h,
				      lcore == in_lcore);
		}
		if (rc == 0)
			rc = task_add(sn, ids[SPINNIC_ROLE_OUTBOUND]
				      [i % n[SPINNIC_ROLE_OUTBOUND]],
				      SPINNIC_ROLE_OUTBOUND, node, 0, false);
		if (rc != 0)
			return rc;
	}
	RTE_LCORE_FOREACH(lcore) {
		const struct spinnic_lcore *lc = &sn->lcores[lcore];
		char line[256];
		int len = 0;

		for (i = 0; i < lc->nb_tasks && len < (int)sizeof(line) - 32;
		     i++) {
			const struct spinnic_task *t = &lc->tasks[i];

			if (t->role == SPINNIC_ROLE_HPU)
				len += snprintf(line + len, sizeof(line) - len,
						" hpu%u.%u", t->node->index,
						t->hpu);
			else
				len += snprintf(line + len, sizeof(line) - len,
						" %s%u", role_names[t->role],
						t->node->index);
		}
		if (i < lc->nb_tasks)
			snprintf(line + len, sizeof(line) - len, " ...");
		SPINNIC_LOG(INFO, "lcore %u:%s", lcore,
			    lc->nb_tasks != 0 ? line : " idle");
	}
	return 0;
}

static inline unsigned
task_poll(const struct spinnic_task *t)
{
	switch (t->role) {
	case SPINNIC_ROLE_INBOUND:
		return spinnic_inbound_poll(t->node);
	case SPINNIC_ROLE_OUTBOUND:
		return spinnic_outbound_poll(t->node);
	case SPINNIC_ROLE_HPU:
		/* and Active Access logs the NIC serves (timers, access
		 * handlers): one load when there are none */
		return spin_hpu_poll(t->node->rt, t->hpu, HPU_BUDGET) +
		       ptl_aa_poll(t->node->nic, spinnic_aa_access,
				   (void *)(uintptr_t)t, HPU_BUDGET);
	default:
		return 0;
	}
}

static void
idle_sleep(unsigned us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	nanosleep(&ts, NULL);
}

static int
lcore_loop(void *arg)
{
	struct spinnic *sn = arg;
	struct spinnic_lcore *lc = &sn->lcores[rte_lcore_id()];
	const unsigned sleep_us = sn->cfg.idle_sleep_us;
	const unsigned nb = lc->nb_tasks;
	unsigned idle = 0, i, work;

	__atomic_store_n(&lc->running, true, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sn->lcores_stop, __ATOMIC_ACQUIRE)) {
		work = 0;
		for (i = 0; i < nb; i++) {
			const struct spinnic_task *t = &lc->tasks[i];
			unsigned w = task_poll(t);

			if (w != 0 && t->drain)
				w += spinnic_inbound_done(t->node);
			work += w;
		}
		/* end of a round: nothing loaded before this is held */
		__atomic_store_n(&lc->rounds, lc->rounds + 1,
				 __ATOMIC_SEQ_CST);
		if (work != 0) {
			lc->work += work;
			idle = 0;
			continue;
		}
		lc->idle_rounds++;
		if (idle < IDLE_SPIN_ROUNDS || sleep_us == 0) {
			idle++;
			rte_pause();
		} else {
			unsigned n = idle++ - IDLE_SPIN_ROUNDS;
			unsigned us = n < IDLE_GROW1 ? sleep_us :
				n < IDLE_GROW2 ? 4 * sleep_us : 16 * sleep_us;

			/* growth stops at 1 ms (or the given sleep) */
			if (us > IDLE_SLEEP_CAP_US)
				us = RTE_MAX(sleep_us, IDLE_SLEEP_CAP_US);
			lc->sleeps++;
			idle_sleep(us);
			if (idle == UINT_MAX)
				idle = IDLE_SPIN_ROUNDS + IDLE_GROW2;
		}
	}
	__atomic_store_n(&lc->running, false, __ATOMIC_SEQ_CST);
	return 0;
}

int
spinnic_lcores_run(struct spinnic *sn)
{
	unsigned lcore;
	int rc;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		rc = rte_eal_remote_launch(lcore_loop, sn, lcore);
		if (rc != 0) {
			SPINNIC_LOG(ERR, "lcore %u: launch: %s", lcore,
				    rte_strerror(-rc));
			spinnic_stop(sn);
			__atomic_store_n(&sn->lcores_stop, 1,
					 __ATOMIC_RELEASE);
			rte_eal_mp_wait_lcore();
			return rc;
		}
	}
	lcore_loop(sn);
	rte_eal_mp_wait_lcore();
	return 0;
}

void
spinnic_quiesce(struct spinnic *sn)
{
	static uint64_t snap[RTE_MAX_LCORE];
	unsigned lcore;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	RTE_LCORE_FOREACH(lcore)
		snap[lcore] = __atomic_load_n(&sn->lcores[lcore].rounds,
					      __ATOMIC_SEQ_CST);
	RTE_LCORE_FOREACH(lcore) {
		const struct spinnic_lcore *lc = &sn->lcores[lcore];
		unsigned waited = 0;

		while (__atomic_load_n(&lc->running, __ATOMIC_SEQ_CST) &&
		       __atomic_load_n(&lc->rounds, __ATOMIC_SEQ_CST) ==
		       snap[lcore]) {
			idle_sleep(10);
			/* an lcore stuck in a task holds every detach up */
			if (++waited == 100000)
				SPINNIC_LOG(WARNING, "quiesce: lcore %u has not finished a round for 1 s",
					    lcore);
		}
	}
}

void
spinnic_stop(struct spinnic *sn)
{
	uint64_t one = 1;
	ssize_t n;

	__atomic_store_n(&sn->stop, 1, __ATOMIC_RELEASE);
	if (sn->wake_fd >= 0) {
		/* eventfd write: async-signal-safe; a full counter is fine */
		n = write(sn->wake_fd, &one, sizeof(one));
		(void)n;
	}
}
