/* SPDX-License-Identifier: BSD-3-Clause */
/* spinnic-bench's preloaded NIC: lib/spin runtime, mbufs, host ops. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>

#include "bench.h"
#include "bench_nic.h"

/* the CPUs this process may use, read before EAL pins the main thread */
static cpu_set_t hpu_cpus;
static int hpu_ncpus;

#define HUGE_MIN_MB 256ull
#define RX_BURST 32u
/* A message that does not complete within this is reported, not awaited. */
#define RUN_TIMEOUT_S 30.0

/* The emulated client: one buffer; client addresses are its addresses. */
struct bench_nic {
	struct spin_rt *rt;
	unsigned nhpu;
	uint32_t payload;
	struct rte_mempool *pool;
	unsigned pool_n;
	struct rte_mbuf **pkts;
	uint32_t npkts;
	uint64_t len;
	uint64_t msg_id;
	struct bench_host host;
	/* blobs of the context being set up, freed with it */
	uint32_t blobs[16];
	unsigned nblobs;

	struct bench_hpus hpus;         /* HPU threads 1..nhpu-1 */

	/* the message of the run in flight */
	int done;
	uint64_t released;
	struct spin_msg_result res;
};


/* ---- EAL ------------------------------------------------------------------ */

/* MiB of free hugepages of every size. */
static uint64_t
huge_free_mb(void)
{
	const char *base = "/sys/kernel/mm/hugepages";
	DIR *d = opendir(base);
	struct dirent *e;
	uint64_t mb = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		unsigned long long kb, nfree;
		char path[512];
		FILE *f;

		if (sscanf(e->d_name, "hugepages-%llukB", &kb) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/free_hugepages", base,
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &nfree) == 1)
			mb += nfree * kb / 1024;
		fclose(f);
	}
	closedir(d);
	return mb;
}

int
bench_nic_eal_init(void)
{
	static int done;
	char prefix[64];
	char *argv[16];
	int argc = 0;

	if (done)
		return 0;
	/* EAL pins this thread to lcore 0: keep the CPUs for HPU threads */
	if (sched_getaffinity(0, sizeof(hpu_cpus), &hpu_cpus) == 0)
		hpu_ncpus = CPU_COUNT(&hpu_cpus);
	snprintf(prefix, sizeof(prefix), "--file-prefix=spinnic-bench%d",
		 (int)getpid());
	argv[argc++] = "spinnic-bench";
	argv[argc++] = "-l";
	argv[argc++] = "0";
	argv[argc++] = "--no-pci";
	argv[argc++] = prefix;
	argv[argc++] = "--log-level=4";
	argv[argc++] = "--no-telemetry";
	if (huge_free_mb() >= HUGE_MIN_MB) {
		argv[argc++] = "--in-memory";
	} else {
		argv[argc++] = "--no-huge";
		argv[argc++] = "--no-shconf";
		argv[argc++] = "-m";
		argv[argc++] = "512";
	}
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		bench_err("EAL initialization failed: %s",
			  rte_strerror(rte_errno));
		return -EIO;
	}
	done = 1;
	return 0;
}

void
bench_nic_eal_fini(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* the EAL leaves its (per-pid, now empty) runtime directory */
	if (dir[0] != '\0')
		(void)rmdir(dir);
}

int
bench_nic_has_family(const char *name)
{
	for (const struct spin_handler_family *const *f =
	     spin_handler_families; *f != NULL; f++)
		if (strcmp((*f)->name, name) == 0)
			return 1;
	return 0;
}

/* ---- host ops ------------------------------------------------------------- */

static uint8_t *
host_xlate(const struct bench_host *h, uint64_t addr, size_t len)
{
	/* the runtime checked the ME window; this is the region check */
	if (addr < h->addr || addr - h->addr > h->len ||
	    len > h->len - (addr - h->addr))
		return NULL;
	return h->win + (addr - h->addr);
}

void *
bench_host_direct(void *host, uint64_t addr, size_t len)
{
	return host_xlate(host, addr, len);
}

int
bench_host_dma_write(void *host, uint64_t addr, const void *src, size_t len)
{
	uint8_t *dst = host_xlate(host, addr, len);

	if (dst == NULL)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int
bench_host_dma_read(void *host, uint64_t addr, void *dst, size_t len)
{
	const uint8_t *src = host_xlate(host, addr, len);

	if (src == NULL)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

static void
host_msg_done(void *app_msg, const struct spin_msg_result *r)
{
	struct bench_nic *n = app_msg;

	n->res = *r;
	__atomic_store_n(&n->done, 1, __ATOMIC_RELEASE);
}

/* The NIC whose packets are in flight (one NIC at a time). */
static struct bench_nic *release_nic;

static void
host_pkt_release(void *pkt_cookie)
{
	struct bench_nic *n = release_nic;

	/* preloaded packets stay in their mbufs for the next run */
	(void)pkt_cookie;
	if (n != NULL)
		__atomic_fetch_add(&n->released, 1, __ATOMIC_RELEASE);
}

static void
host_pkt_release_burst(void *const *pkt_cookies, unsigned n)
{
	struct bench_nic *n_ = release_nic;

	(void)pkt_cookies;
	if (n_ != NULL)
		__atomic_fetch_add(&n_->released, n, __ATOMIC_RELEASE);
}

static const struct spin_host_ops nic_host_ops = {
	.direct = bench_host_direct,
	.dma_write = bench_host_dma_write,
	.dma_read = bench_host_dma_read,
	.msg_done = host_msg_done,
	.pkt_release = host_pkt_release,
	.pkt_release_burst = host_pkt_release_burst,
};

/* ---- HPU threads ------------------------------------------------------------ */

static void *
hpu_main(void *arg)
{
	struct bench_hpu_arg *a = arg;
	struct bench_hpus *p = a->p;
	uint64_t seen = 0;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->stop && p->gen == seen)
			pthread_cond_wait(&p->cv, &p->mu);
		seen = p->gen;
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		pthread_mutex_unlock(&p->mu);
		__atomic_fetch_add(&p->armed, 1, __ATOMIC_ACQ_REL);
		while (!__atomic_load_n(p->done, __ATOMIC_ACQUIRE))
			if (spin_hpu_poll(p->rt, a->hpu, p->burst) == 0)
				rte_pause();
		__atomic_fetch_sub(&p->armed, 1, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

/*
 * HPU thread @p h (HPU 0 is the main thread, on the first CPU it was
 * allowed) on the h-th of those CPUs, round robin: without it, a thread
 * inherits EAL's pinning of the main thread to lcore 0, and every HPU
 * time-shares that one CPU with the inbound loop (2 HPUs measured at
 * 0.15-0.3 of 1).
 */
void
bench_hpu_attr_cpu(pthread_attr_t *attr, unsigned h)
{
	cpu_set_t one;
	int i, k = 0, want;

	if (hpu_ncpus <= 1)
		return;
	want = (int)(h % (unsigned)hpu_ncpus);
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &hpu_cpus))
			continue;
		if (k++ == want)
			break;
	}
	if (i == CPU_SETSIZE)
		return;
	CPU_ZERO(&one);
	CPU_SET(i, &one);
	(void)pthread_attr_setaffinity_np(attr, sizeof(one), &one);
}

int
bench_hpus_start(struct bench_hpus *p, struct spin_rt *rt, unsigned nhpu,
		 const int *done, unsigned burst)
{
	int err;

	p->rt = rt;
	p->done = done;
	p->burst = burst;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (unsigned h = 1; h < nhpu; h++) {
		pthread_attr_t attr;

		p->args[h] = (struct bench_hpu_arg){ p, h };
		pthread_attr_init(&attr);
		bench_hpu_attr_cpu(&attr, h);
		err = pthread_create(&p->thr[p->nthr], &attr, hpu_main,
				     &p->args[h]);
		pthread_attr_destroy(&attr);
		if (err != 0) {
			bench_err("cannot start HPU thread %u: %s", h,
				  strerror(err));
			return err;
		}
		p->nthr++;
	}
	return 0;
}

void
bench_hpus_arm(struct bench_hpus *p)
{
	pthread_mutex_lock(&p->mu);
	p->gen++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	while (__atomic_load_n(&p->armed, __ATOMIC_ACQUIRE) != p->nthr)
		rte_pause();
}

void
bench_hpus_quiet(struct bench_hpus *p)
{
	while (__atomic_load_n(&p->armed, __ATOMIC_ACQUIRE) != 0)
		rte_pause();
}

void
bench_hpus_stop(struct bench_hpus *p)
{
	if (p->rt == NULL)
		return; /* never started */
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	p->nthr = 0;
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	p->rt = NULL;
}

/* ---- the NIC ---------------------------------------------------------------- */

struct bench_nic *
bench_nic_create(unsigned nhpu, uint32_t payload)
{
	struct spin_rt_conf conf;
	struct bench_nic *n;
	int err;

	if (nhpu == 0 || nhpu > SPIN_RT_HPUS_MAX || payload == 0 ||
	    payload > UINT16_MAX - RTE_PKTMBUF_HEADROOM) {
		bench_err("bad NIC: %u HPUs, %u-byte packets", nhpu, payload);
		errno = EINVAL;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL) {
		bench_err("out of memory");
		errno = ENOMEM;
		return NULL;
	}
	n->nhpu = nhpu;
	n->payload = payload;
	memset(&conf, 0, sizeof(conf));
	conf.nic_mem = 64ull << 20;
	conf.nhpu = nhpu;
	conf.pkt_payload = payload;
	conf.handler_time_every = bench_time_every();
	conf.handler_budget_ns = bench_budget_ns();
	conf.ops = &nic_host_ops;
	conf.families = spin_handler_families;
	n->rt = spin_rt_create(&conf);
	if (n->rt == NULL) {
		err = errno;
		bench_err("spin_rt_create: %s", strerror(err));
		goto fail;
	}
	release_nic = n;
	err = bench_hpus_start(&n->hpus, n->rt, nhpu, &n->done, RX_BURST);
	if (err != 0)
		goto fail;
	return n;
fail:
	bench_nic_destroy(n);
	errno = err;
	return NULL;
}

static void
pkts_free(struct bench_nic *n)
{
	if (n->pkts != NULL)
		for (uint32_t i = 0; i < n->npkts; i++)
			rte_pktmbuf_free(n->pkts[i]);
	free(n->pkts);
	n->pkts = NULL;
	n->npkts = 0;
	n->len = 0;
}

void
bench_nic_destroy(struct bench_nic *n)
{
	if (n == NULL)
		return;
	bench_hpus_stop(&n->hpus);
	if (n->rt != NULL)
		spin_rt_destroy(n->rt);
	pkts_free(n);
	rte_mempool_free(n->pool);
	if (release_nic == n)
		release_nic = NULL;
	free(n);
}

int
bench_nic_load(struct bench_nic *n, const void *data, uint64_t len)
{
	uint64_t np = len == 0 ? 1 : (len + n->payload - 1) / n->payload;
	static unsigned pool_seq;

	pkts_free(n);
	if (np > UINT32_MAX / 2) {
		bench_err("message of %llu bytes: too many packets",
			  (unsigned long long)len);
		return -ENOMEM;
	}
	if (n->pool == NULL || n->pool_n < np) {
		char name[RTE_MEMPOOL_NAMESIZE];

		rte_mempool_free(n->pool);
		snprintf(name, sizeof(name), "bench_pkts%u", pool_seq++);
		n->pool_n = (unsigned)np;
		n->pool = rte_pktmbuf_pool_create(name, n->pool_n, 0, 0,
				(uint16_t)(RTE_PKTMBUF_HEADROOM + n->payload),
				SOCKET_ID_ANY);
		if (n->pool == NULL) {
			bench_err("cannot create a pool of %u mbufs: %s",
				  n->pool_n, rte_strerror(rte_errno));
			n->pool_n = 0;
			return -ENOMEM;
		}
	}
	n->pkts = calloc(np, sizeof(*n->pkts));
	if (n->pkts == NULL ||
	    rte_pktmbuf_alloc_bulk(n->pool, n->pkts, (unsigned)np) != 0) {
		free(n->pkts);
		n->pkts = NULL;
		bench_err("cannot allocate %llu packets",
			  (unsigned long long)np);
		return -ENOMEM;
	}
	n->npkts = (uint32_t)np;
	n->len = len;
	for (uint64_t i = 0; i < np; i++) {
		uint64_t off = i * n->payload;
		uint32_t plen = (uint32_t)(len - off < n->payload ?
					   len - off : n->payload);
		char *p = rte_pktmbuf_append(n->pkts[i], (uint16_t)plen);

		if (plen != 0)
			memcpy(p, (const char *)data + off, plen);
	}
	return 0;
}

uint32_t
bench_nic_npkts(const struct bench_nic *n)
{
	return n->npkts;
}

void
bench_nic_copy_out(const struct bench_nic *n, void *dst)
{
	for (uint32_t i = 0; i < n->npkts; i++)
		memcpy((char *)dst + (uint64_t)i * n->payload,
		       rte_pktmbuf_mtod(n->pkts[i], const void *),
		       rte_pktmbuf_data_len(n->pkts[i]));
}

const void *
bench_nic_payload(const struct bench_nic *n, uint32_t i)
{
	return rte_pktmbuf_mtod(n->pkts[i], const void *);
}

uint32_t
bench_nic_payload_bytes(const struct bench_nic *n)
{
	return n->payload;
}

void
bench_nic_evict(const struct bench_nic *n)
{
	for (uint32_t i = 0; i < n->npkts; i++)
		bench_cache_evict(rte_pktmbuf_mtod(n->pkts[i], const void *),
				  rte_pktmbuf_data_len(n->pkts[i]));
}

int
bench_nic_ctx(struct bench_nic *n, const struct spin_ctx_conf *c,
	      uint32_t *ctx_p)
{
	int rc = spin_rt_ctx_create(n->rt, BENCH_NIC_OWNER, c, ctx_p);

	if (rc < 0)
		bench_err("cannot install a '%s' context: %s", c->family,
			  strerror(-rc));
	return rc;
}

int
bench_nic_blob(struct bench_nic *n, const void *data, uint64_t len,
	       uint32_t *handle_p)
{
	int rc;

	if (n->nblobs == sizeof(n->blobs) / sizeof(n->blobs[0])) {
		bench_err("too many NIC memory blobs for one context");
		return -ENOSPC;
	}
	rc = spin_rt_nicmem_alloc(n->rt, BENCH_NIC_OWNER, len, handle_p);
	if (rc == 0) {
		rc = spin_rt_nicmem_write(n->rt, BENCH_NIC_OWNER, *handle_p, 0,
					  data, len);
		if (rc < 0)
			spin_rt_nicmem_free(n->rt, BENCH_NIC_OWNER, *handle_p);
	}
	if (rc < 0) {
		bench_err("NIC memory blob of %llu bytes: %s",
			  (unsigned long long)len, strerror(-rc));
		return rc;
	}
	n->blobs[n->nblobs++] = *handle_p;
	return 0;
}

void
bench_nic_blobs_free(struct bench_nic *n)
{
	while (n->nblobs > 0)
		spin_rt_nicmem_free(n->rt, BENCH_NIC_OWNER,
				    n->blobs[--n->nblobs]);
}

void
bench_nic_ctx_free(struct bench_nic *n, uint32_t ctx)
{
	spin_rt_ctx_free(n->rt, BENCH_NIC_OWNER, ctx);
	bench_nic_blobs_free(n);
}


/* Poll HPU 0 until the message is done or the time is up. */
static int
wait_done(struct bench_nic *n)
{
	double t0 = bench_now();
	unsigned idle = 0;

	while (!__atomic_load_n(&n->done, __ATOMIC_ACQUIRE)) {
		if (spin_hpu_poll(n->rt, 0, RX_BURST) != 0) {
			idle = 0;
			continue;
		}
		rte_pause();
		if (++idle % 4096 == 0 && bench_now() - t0 > RUN_TIMEOUT_S)
			return -ETIMEDOUT;
	}
	return 0;
}

double
bench_nic_run(struct bench_nic *n, uint32_t ctx, void *win, uint64_t win_len,
	      struct spin_msg_result *r_p)
{
	struct spin_msg_info info;
	struct spin_msg *m;
	double t0, t1 = 0, tr;
	uint32_t i;
	int rc = 0;

	memset(&info, 0, sizeof(info));
	info.src_nid = 0;
	info.src_pid = 1;
	info.length = n->len;
	info.msg_id = ++n->msg_id;
	info.pkt_payload = n->payload;
	n->host = (struct bench_host){ win, (uint64_t)(uintptr_t)win, win_len };
	__atomic_store_n(&n->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->released, 0, __ATOMIC_RELAXED);
	release_nic = n;

	/* every HPU thread polling before the clock starts */
	bench_hpus_arm(&n->hpus);

	t0 = bench_now();
	m = spin_msg_start(n->rt, ctx, &info, &n->host, n->host.addr, win_len,
			   n);
	if (m == NULL) {
		rc = -errno;
		bench_err("spin_msg_start: %s", strerror(errno));
		__atomic_store_n(&n->done, 1, __ATOMIC_RELEASE);
		goto out;
	}
	/* the inbound engine: bursts of packets (spin_msg_packet_burst),
	 * HPU 0 polled after each */
	for (i = 0; i < n->npkts;) {
		struct spin_pkt_in burst[RX_BURST];
		unsigned k = RTE_MIN(n->npkts - i, RX_BURST), j, took = 0;

		for (j = 0; j < k; j++) {
			struct rte_mbuf *p = n->pkts[i + j];

			burst[j] = (struct spin_pkt_in){
				.payload = rte_pktmbuf_mtod(p, void *),
				.cookie = p,
				.offset = (uint64_t)(i + j) * n->payload,
				.len = rte_pktmbuf_data_len(p),
			};
		}
		for (j = 0; j < k; j += took) {
			took = spin_msg_packet_burst(m, burst + j, k - j, &rc);
			if (rc != -ENOBUFS)
				break;
			spin_hpu_poll(n->rt, 0, RX_BURST);
		}
		if (rc < 0) {
			bench_err("spin_msg_packet_burst %u: %s", i + j + took,
				  strerror(-rc));
			spin_msg_abort(m);
			break;
		}
		i += k;
		/* HPU 0's share of the burst: the main thread is also the
		 * inbound engine, and the other HPUs take the rest */
		spin_hpu_poll(n->rt, 0, RTE_MAX(k / n->nhpu, 1u));
	}
	if (wait_done(n) < 0) {
		bench_err("message not done after %.0f s", RUN_TIMEOUT_S);
		rc = -ETIMEDOUT;
		/* the HPU threads stop at done; the runtime keeps the message */
		__atomic_store_n(&n->done, 1, __ATOMIC_RELEASE);
	}
	t1 = bench_now();
out:
	bench_hpus_quiet(&n->hpus);
	if (rc < 0)
		return rc;
	if (r_p != NULL)
		*r_p = n->res;
	/* releases may trail msg_done on another HPU thread */
	tr = bench_now();
	while (__atomic_load_n(&n->released, __ATOMIC_ACQUIRE) != n->npkts &&
	       bench_now() - tr < 1.0)
		rte_pause();
	if (__atomic_load_n(&n->released, __ATOMIC_ACQUIRE) != n->npkts) {
		bench_err("%llu of %u packets released at msg_done",
			  (unsigned long long)n->released, n->npkts);
		return -EIO;
	}
	return t1 - t0;
}
