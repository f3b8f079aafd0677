/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command ring: single producer (this process, serialized by
 * cmd_lock), single consumer (the NIC). A command is written into its slot
 * and published by a release store of head; a full ring is waited out
 * (spin, then yield), never dropped.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "shim_internal.h"

#define FULL_SPINS 256
#define FULL_YIELDS_PER_CHECK 1024

int
shim_cmd_post(const struct spinnic_cmd *cmd)
{
	struct spinnic_cmd_ring *ring = shim_g.region.ring;
	uint32_t head, n = SHIM_CMD_ENTRIES;
	unsigned waits = 0;

	pthread_mutex_lock(&shim_g.cmd_lock);
	if (shim_g.dead || shim_g.fd < 0) {
		pthread_mutex_unlock(&shim_g.cmd_lock);
		return -EIO;
	}
	head = shim_g.cmd_head;
	while (head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) >= n) {
		if (waits < FULL_SPINS) {
			shim_cpu_relax();
		} else {
			sched_yield();
			if ((waits - FULL_SPINS) % FULL_YIELDS_PER_CHECK == 0 &&
			    shim_ctrl_gone()) {
				pthread_mutex_unlock(&shim_g.cmd_lock);
				return -EIO;
			}
		}
		waits++;
	}
	ring->slots[head & (n - 1)] = *cmd;
	shim_g.cmd_head = head + 1;
	__atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&shim_g.cmd_lock);
	return 0;
}
