/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command ring: single producer (this process, serialized by
 * cmd_lock), single consumer (the NIC). Commands are written into their
 * slots and published by one release store of head; a full ring is waited
 * out (spin, then yield), never dropped. shim_cmd_sync waits until the NIC
 * consumed up to a point (PtlCTCancelTriggered).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "shim_internal.h"

#define FULL_SPINS 256
#define FULL_YIELDS_PER_CHECK 1024

/*
 * Wait until the NIC's consumer index reaches @p need (the ring has room,
 * or it took everything up to a point), spinning, then yielding; a gone
 * spinnic ends the wait. @return 0 or -EIO
 */
static int
tail_wait(struct spinnic_cmd_ring *ring, uint32_t need)
{
	unsigned waits = 0;

	while ((int32_t)(need - __atomic_load_n(&ring->tail,
						__ATOMIC_ACQUIRE)) > 0) {
		if (waits < FULL_SPINS) {
			shim_cpu_relax();
		} else {
			sched_yield();
			if ((waits - FULL_SPINS) % FULL_YIELDS_PER_CHECK == 0 &&
			    shim_ctrl_gone())
				return -EIO;
		}
		waits++;
	}
	return 0;
}

int
shim_cmd_post_n(const struct spinnic_cmd *cmds, unsigned n, uint32_t *end_p)
{
	struct spinnic_cmd_ring *ring = shim_g.region.ring;
	uint32_t head;
	unsigned i;
	int rc = -EIO;

	pthread_mutex_lock(&shim_g.cmd_lock);
	if (shim_g.dead || shim_g.fd < 0 || n == 0 || n > SHIM_CMD_ENTRIES)
		goto out;
	head = shim_g.cmd_head;
	/* cmd_lock held: room for n slots */
	rc = tail_wait(ring, head + n - SHIM_CMD_ENTRIES);
	if (rc != 0)
		goto out;
	for (i = 0; i < n; i++)
		ring->slots[(head + i) & (SHIM_CMD_ENTRIES - 1)] = cmds[i];
	shim_g.cmd_head = head + n;
	/* one release store: the NIC sees all n slots or none */
	__atomic_store_n(&ring->head, head + n, __ATOMIC_RELEASE);
	if (end_p != NULL)
		*end_p = head + n;
out:
	pthread_mutex_unlock(&shim_g.cmd_lock);
	return rc;
}

int
shim_cmd_post(const struct spinnic_cmd *cmd)
{
	return shim_cmd_post_n(cmd, 1, NULL);
}

int
shim_cmd_sync(uint32_t end)
{
	return tail_wait(shim_g.region.ring, end);
}
