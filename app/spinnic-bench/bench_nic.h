/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench's preloaded NIC (DESIGN §10): one lib/spin runtime with the
 * handler families of handlers/, the packets of one message built into
 * rte_mbufs before anything is timed, and a host buffer reached through
 * host ops that copy (the emulated DMA). A timed run is what the NIC does
 * from the first packet to the last byte placed: spin_msg_start, every
 * packet through spin_msg_packet_burst (32 at a time, HPU 0 polled after
 * each burst), HPUs polled until msg_done.
 *
 * HPU 0 runs on the calling thread, between packets and after the last;
 * HPUs 1..N-1 run on their own threads while a run is in flight.
 */
#ifndef SPINNIC_BENCH_NIC_H
#define SPINNIC_BENCH_NIC_H

#include <stddef.h>
#include <stdint.h>

#include <spin_rt.h>

/** Owner id of every context the bench installs. */
#define BENCH_NIC_OWNER 1u

struct bench_nic;

/**
 * Start the EAL once for this process: -l 0 --no-pci, --in-memory when at
 * least 256 MiB of hugepages are free, else --no-huge --no-shconf -m 512.
 * @return 0; -EIO the EAL did not start (logged)
 */
int bench_nic_eal_init(void);

/** Release the EAL (rte_eal_cleanup) and remove its runtime directory;
 * after bench_nic_eal_init() succeeded, once, at the end. */
void bench_nic_eal_fini(void);

/** Whether handlers/ has a family of that name (the families table). */
int bench_nic_has_family(const char *name);

/**
 * A NIC with @p nhpu HPUs (threads started here for HPUs 1..nhpu-1) and
 * @p payload bytes per packet.
 * @return the NIC, or NULL (logged) with errno EINVAL, ENOMEM, EAGAIN
 */
struct bench_nic *bench_nic_create(unsigned nhpu, uint32_t payload);

/** Stop the HPU threads, free the packets, the pool and the runtime. */
void bench_nic_destroy(struct bench_nic *n);

/**
 * Build the packets of a message of @p len bytes of @p data (in order,
 * payload bytes each, the last shorter) into mbufs, replacing those of
 * the previous message.
 * @return 0; -ENOMEM (logged)
 */
int bench_nic_load(struct bench_nic *n, const void *data, uint64_t len);

/** Packets of the loaded message. */
uint32_t bench_nic_npkts(const struct bench_nic *n);

/**
 * Copy the loaded packets' payloads into @p dst at their message offsets:
 * what the non-processing path of a contiguous receive does.
 */
void bench_nic_copy_out(const struct bench_nic *n, void *dst);

/** Payload of loaded packet @p i (< bench_nic_npkts()). */
const void *bench_nic_payload(const struct bench_nic *n, uint32_t i);

/** Payload bytes per packet (every packet but the last holds as many). */
uint32_t bench_nic_payload_bytes(const struct bench_nic *n);

/** Evict the packets' payloads from the caches (--cold). */
void bench_nic_evict(const struct bench_nic *n);

/**
 * Install an execution context (spin_rt_ctx_create: family, arguments,
 * scheduling policy) owned by BENCH_NIC_OWNER.
 * @return 0; the negative errno of spin_rt_ctx_create (logged)
 */
int bench_nic_ctx(struct bench_nic *n, const struct spin_ctx_conf *c,
		  uint32_t *ctx_p);

/**
 * Copy @p len bytes into a new NIC memory blob (a serialized type,
 * checkpoints, an iovec list) for the arguments of the next context;
 * freed by the next bench_nic_ctx_free().
 * @param handle_p receives the blob handle the handler maps
 * @return 0; -ENOSPC, -ENOMEM, -EINVAL (logged)
 */
int bench_nic_blob(struct bench_nic *n, const void *data, uint64_t len,
		   uint32_t *handle_p);

/** Free the blobs made since the last bench_nic_ctx_free() (a set-up
 * that failed after making some). */
void bench_nic_blobs_free(struct bench_nic *n);

/** Free a context from bench_nic_ctx() and the blobs made for it. */
void bench_nic_ctx_free(struct bench_nic *n, uint32_t ctx);

/**
 * One timed run of the loaded message through context @p ctx into the
 * host window [win, win + win_len).
 * @param r_p receives the runtime's result of the message
 * @return seconds from the first packet to msg_done; < 0 on failure
 *   (logged): no message slot, packets refused, message never completed
 */
double bench_nic_run(struct bench_nic *n, uint32_t ctx, void *win,
		     uint64_t win_len, struct spin_msg_result *r_p);


/**
 * The host of a benchmark NIC (preloaded or wire): one buffer whose client
 * addresses are its own addresses. Its DMA ops serve both NICs'
 * spin_host_ops (`host` is a struct bench_host).
 */
struct bench_host {
	uint8_t *win;
	uint64_t addr, len;
};
void *bench_host_direct(void *host, uint64_t addr, size_t len);
int bench_host_dma_write(void *host, uint64_t addr, const void *src,
			 size_t len);
int bench_host_dma_read(void *host, uint64_t addr, void *dst, size_t len);


#include <pthread.h>

/**
 * HPU threads 1..nhpu-1 of a benchmark NIC (preloaded or wire; HPU 0 is
 * the caller's): each waits for a run (bench_hpus_arm), then polls its
 * HPU until *done is set.
 */
struct bench_hpus {
	struct spin_rt *rt;
	const int *done;
	unsigned burst;
	pthread_t thr[SPIN_RT_HPUS_MAX];
	unsigned nthr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t gen;
	int stop;
	unsigned armed;
	struct bench_hpu_arg {
		struct bench_hpus *p;
		unsigned hpu;
	} args[SPIN_RT_HPUS_MAX];
};
/** Start the threads of HPUs 1..nhpu-1. @return 0 or an errno (logged;
 *  the started ones are stopped) */
int bench_hpus_start(struct bench_hpus *p, struct spin_rt *rt, unsigned nhpu,
		     const int *done, unsigned burst);
/** Every thread polling before the clock starts (*done must be 0). */
void bench_hpus_arm(struct bench_hpus *p);
/** Wait until every thread left its poll loop (after *done). */
void bench_hpus_quiet(struct bench_hpus *p);
/** Stop and join the threads (any state; also after a failed start). */
void bench_hpus_stop(struct bench_hpus *p);
/** Pin a thread to be created with @p attr as HPU thread @p h is (the
 *  h-th allowed CPU, round robin; HPU 0 is the main thread's). */
void bench_hpu_attr_cpu(pthread_attr_t *attr, unsigned h);

#endif
