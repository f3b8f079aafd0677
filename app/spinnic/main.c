/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic, the software sPIN NIC (DESIGN §3, §9), on the main lcore:
 * options, plugins, EAL, ports, per node Portals state, sPIN runtime and
 * engine, lcore roles, control sockets, "spinnic: ready"; then run until a
 * signal or --duration, let the control thread detach every client, stop
 * the lcores, print counters and tear down in reverse order.
 * Exit status: 0 after a clean stop, 1 on a runtime failure, 2 on bad options.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_pdump.h>

#include "spinnic.h"
#include "auth.h"
#include "ptl_nic.h"
#include "spin_rt.h"

/* For the signal handler only. */
static struct spinnic *sig_sn;

static void
on_signal(int sig)
{
	(void)sig;
	if (sig_sn != NULL)
		spinnic_stop(sig_sn);
}

static int
signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGTERM, &sa, NULL) != 0)
		return -errno;
	/* a client hanging up mid-reply must not kill the NIC */
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) != 0)
		return -errno;
	return 0;
}

/* Portals state and sPIN runtime of every node, then its engine. */
static int
nodes_setup(struct spinnic *sn)
{
	const struct spinnic_cfg *cfg = &sn->cfg;
	unsigned i;
	int rc;

	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];
		struct ptl_nic_conf pconf;
		struct spin_rt_conf rconf;

		ptl_nic_conf_default(&pconf, node->nid);
		pconf.max_clients = SPINNIC_CLIENTS_MAX;
		pconf.payload_size = cfg->payload;
		pconf.nic_mem_total = cfg->nic_mem;
		if (cfg->max_trig != 0)
			pconf.limits.max_triggered_ops = (int32_t)cfg->max_trig;
		if (cfg->aa_page != 0)
			pconf.aa_page = cfg->aa_page;
		pconf.aa_iotlb_entries = cfg->aa_iotlb[0];
		pconf.aa_iotlb_ways = cfg->aa_iotlb[1];
		pconf.aa_iotlb_policy = cfg->aa_iotlb[2];
		rc = ptl_nic_create(&pconf, &node->nic);
		if (rc != 0) {
			SPINNIC_LOG(ERR, "node %u: Portals state: %s", i,
				    strerror(-rc));
			return rc;
		}

		memset(&rconf, 0, sizeof(rconf));
		rconf.nic_mem = cfg->nic_mem;
		rconf.nic_mem_per_owner = cfg->nic_mem_per_client;
		rconf.nhpu = cfg->hpus;
		rconf.max_msgs = SPINNIC_MAX_MSGS;
		rconf.max_hers = SPINNIC_MAX_HERS;
		rconf.max_owners = SPINNIC_CLIENTS_MAX;
		rconf.pkt_payload = cfg->payload;
		rconf.socket_id = (int)rte_socket_id();
		rconf.ops = &spinnic_engine_host_ops;
		rconf.families = sn->families;
		rconf.handler_budget_ns = (uint64_t)cfg->handler_budget_us *
			1000;
		rconf.handler_trace = cfg->handler_trace;
		rconf.handler_time_every = cfg->handler_time_every;
		node->rt = spin_rt_create(&rconf);
		if (node->rt == NULL) {
			rc = -errno;
			SPINNIC_LOG(ERR, "node %u: sPIN runtime (%u HPUs, %llu bytes NIC memory): %s",
				    i, cfg->hpus,
				    (unsigned long long)cfg->nic_mem,
				    strerror(-rc));
			return rc;
		}

		rc = spinnic_engine_init(node);
		if (rc != 0) {
			SPINNIC_LOG(ERR, "node %u: engine: %s", i,
				    strerror(-rc));
			return rc;
		}
		if (cfg->wire_keyed) {
			rc = spinnic_auth_init(node, cfg->wire_key);
			if (rc != 0) {
				SPINNIC_LOG(ERR, "node %u: wire MAC: %s", i,
					    strerror(-rc));
				return rc;
			}
		}
	}
	if (cfg->wire_keyed) {
		/* the MAC contexts hold the key now */
		explicit_bzero(sn->cfg.wire_key, sizeof(sn->cfg.wire_key));
		SPINNIC_LOG(INFO, "wire: authenticated (--wire-key): AES-256-GMAC on every frame, unauthenticated or unsequenced frames dropped");
	}
	return 0;
}

static void
nodes_teardown(struct spinnic *sn)
{
	unsigned i;

	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		if (node->rt != NULL) {
			spin_rt_destroy(node->rt);
			node->rt = NULL;
		}
		spinnic_auth_fini(node);
		if (node->eng != NULL)
			spinnic_engine_fini(node);
		if (node->nic != NULL) {
			ptl_nic_destroy(node->nic);
			node->nic = NULL;
		}
	}
}

/*
 * The EAL leaves its runtime directory behind (the telemetry socket is
 * only unlinked at process exit); with our per-pid prefix nobody else
 * uses it, so remove the socket and the directory.
 */
static void
runtime_dir_remove(const char *dir)
{
	char path[PATH_MAX + 32];

	if (dir[0] == '\0')
		return;
	snprintf(path, sizeof(path), "%s/dpdk_telemetry.v2", dir);
	(void)unlink(path);
	(void)rmdir(dir);
}

/* Free the EAL argv of spinnic_eal_args(): @p strs is a copy of its
 * entries taken before rte_eal_init() (NULL: @p v is untouched). */
static void
eal_args_free(char **v, char **strs)
{
	char **p;

	for (p = strs != NULL ? strs : v; *p != NULL; p++)
		free(*p);
	free(strs);
	free(v);
}

/* Options after "--", or every argument when there is no "--". */
static int
options_argv(int argc, char **argv, char ***oargv_p, int *sep_p)
{
	char **v;
	int i, sep = -1, n = 0;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	v = calloc((size_t)argc + 1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	v[n++] = argv[0];
	for (i = sep < 0 ? 1 : sep + 1; i < argc; i++)
		v[n++] = argv[i];
	v[n] = NULL;
	*oargv_p = v;
	*sep_p = sep;
	return n;
}

int
main(int argc, char **argv)
{
	char runtime_dir[PATH_MAX] = "";
	char **eal_strs;
	struct spinnic_plugins *plugins = NULL;
	struct spinnic_cfg cfg;
	struct spinnic *sn;
	char **oargv, **eargv;
	int oargc, eargc, sep, rc, ret = 0;
	bool pdump_ok = false;
	unsigned i;

	oargc = options_argv(argc, argv, &oargv, &sep);
	if (oargc < 0) {
		fprintf(stderr, "spinnic: out of memory\n");
		return 1;
	}
	rc = spinnic_options_parse(&cfg, oargc, oargv);
	free(oargv);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	if (sep > 1 && cfg.lcores[0] != '\0') {
		fprintf(stderr, "spinnic: --lcores applies only without EAL args; give the EAL -l instead\n");
		return 2;
	}
	/* lcores and the socket directory: refused before the EAL too */
	if (spinnic_options_check(&cfg, argc, argv) < 0)
		return 2;
	/* --handlers: a refused plugin stops spinnic before the EAL */
	rc = spinnic_plugins_load(&cfg, &plugins);
	if (rc < 0)
		return rc == -EINVAL ? 2 : 1;

	if (sep <= 1 && cfg.virtual_nodes == 0) {
		/* default EAL args probe no device (--no-pci): virtual nodes */
		cfg.virtual_nodes = cfg.socket_path[0] != '\0' ? 1 : 2;
		fprintf(stderr, "spinnic: no EAL args and no --virtual: running %u virtual nodes\n",
			cfg.virtual_nodes);
	}
	/* state and signals first: a stop requested while the EAL starts
	 * is honoured once it has, with a clean exit */
	sn = calloc(1, sizeof(*sn));
	if (sn == NULL) {
		fprintf(stderr, "spinnic: out of memory\n");
		spinnic_plugins_unload(plugins);
		return 1;
	}
	sn->cfg = cfg;
	sn->families = spinnic_plugins_families(plugins);
	sn->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sn->wake_fd < 0) {
		fprintf(stderr, "spinnic: eventfd: %s\n", strerror(errno));
		free(sn);
		spinnic_plugins_unload(plugins);
		return 1;
	}
	sig_sn = sn;
	rc = signals_install();
	if (rc != 0) {
		fprintf(stderr, "spinnic: signals: %s\n", strerror(-rc));
		ret = 1;
		goto out_sn;
	}

	/* before the EAL: the af_xdp PMD probes at rte_eal_init() */
	if (spinnic_xdp_reset(&cfg) != 0) {
		ret = 1;
		goto out_sn;
	}
	eargc = spinnic_eal_args(&cfg, argc, argv, &eargv);
	if (eargc < 0) {
		fprintf(stderr, "spinnic: out of memory\n");
		ret = 1;
		goto out_sn;
	}
	/* the EAL permutes and overwrites argv entries and may keep
	 * pointers into them until rte_eal_cleanup(): free a copy then */
	eal_strs = calloc((size_t)eargc + 1, sizeof(*eal_strs));
	if (eal_strs == NULL) {
		fprintf(stderr, "spinnic: out of memory\n");
		eal_args_free(eargv, NULL);
		ret = 1;
		goto out_sn;
	}
	memcpy(eal_strs, eargv, sizeof(*eal_strs) * (size_t)eargc);
	rc = rte_eal_init(eargc, eargv);
	if (rc < 0) {
		fprintf(stderr, "spinnic: EAL initialization failed: %s\n",
			rte_strerror(rte_errno));
		eal_args_free(eargv, eal_strs);
		ret = 1;
		goto out_sn;
	}

	spinnic_log_portals();
	spinnic_plugins_log(plugins);

	/* our own --file-prefix: remove its (empty) runtime dir at exit */
	if (sep <= 1)
		snprintf(runtime_dir, sizeof(runtime_dir), "%s",
			 rte_eal_get_runtime_dir());
	/* dpdk-dumpcap attaches through pdump: needs a shared config
	 * (--capture); in-memory and no-shconf EALs refuse (ENOTSUP) */
	pdump_ok = rte_pdump_init() == 0;
	if (!pdump_ok && cfg.capture)
		SPINNIC_LOG(WARNING, "capture: rte_pdump_init: %s (dpdk-dumpcap needs a multi-process EAL on hugepages)",
			    rte_strerror(rte_errno));
	if (__atomic_load_n(&sn->stop, __ATOMIC_ACQUIRE))
		goto out_eal;

	rc = spinnic_ports_init(sn);
	if (rc != 0) {
		ret = rc == -EINVAL ? 2 : 1;
		goto out_ports;
	}
	rc = nodes_setup(sn);
	if (rc != 0) {
		ret = 1;
		goto out_nodes;
	}
	rc = spinnic_lcores_assign(sn);
	if (rc != 0) {
		ret = rc == -EINVAL ? 2 : 1;
		goto out_nodes;
	}
	rc = spinnic_ctrl_start(sn);
	if (rc != 0) {
		ret = 1;
		goto out_ctrl;
	}

	sn->start_tsc = rte_rdtsc();
	for (i = 0; i < sn->nb_nodes; i++)
		SPINNIC_LOG(INFO, "node %u: nid %u listening on %s", i,
			    sn->nodes[i]->nid, sn->nodes[i]->sock_path);
	/* monitoring is not essential: a failure is logged, no more */
	(void)spinnic_telemetry_init(sn);
	printf("spinnic: ready\n");
	fflush(stdout);

	rc = spinnic_lcores_run(sn);
	if (rc != 0)
		ret = 1;
	if (__atomic_load_n(&sn->stop, __ATOMIC_ACQUIRE))
		SPINNIC_LOG(INFO, "stopping");

	spinnic_stats_print(sn, stdout);
	spinnic_ctrl_stats_print(sn, stdout);
	fflush(stdout);
out_ctrl:
	spinnic_telemetry_fini(sn);
	spinnic_ctrl_stop(sn);
out_nodes:
	nodes_teardown(sn);
out_ports:
	spinnic_ports_fini(sn);
out_eal:
	if (pdump_ok)
		rte_pdump_uninit();
	rte_eal_cleanup();
	if (cfg.capture)
		spinnic_capture_cleanup(runtime_dir);
	runtime_dir_remove(runtime_dir);
	eal_args_free(eargv, eal_strs);
out_sn:
	sig_sn = NULL;
	close(sn->wake_fd);
	free(sn);
	/* the runtimes that ran their handlers are gone */
	spinnic_plugins_unload(plugins);
	return ret;
}
