/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations inside lib/portals (trig.c): armed from the command
 * ring (cmd.c), fired by every counter change (ct.c), run from a fired
 * FIFO per NI by whichever thread changed the counter. Not installed.
 */
#ifndef PTL_TRIG_H
#define PTL_TRIG_H

#include "ptl_internal.h"

/* Take @p l; when !wait, give up after a short spin (the caller may hold
 * it further up its own stack). @return whether it is held */
static inline bool
ptl_trig_lock(ptl_lock_t *l, bool wait)
{
	unsigned i;

	if (wait) {
		ptl_lock(l);
		return true;
	}
	for (i = 0; i < 1024; i++) {
		if (!__atomic_load_n(&l->v, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE))
			return true;
		__builtin_ia32_pause();
	}
	return false;
}

/* cmd.c: act on one command (copied out of the ring, or fired): counter
 * commands applied, data commands resolved into @p out. @return 1 (an
 * operation in @p out), 0 (done, or refused and counted), -EAGAIN (!wait
 * and the NIC lock was busy) */
int ptl_cmd_take(struct ptl_client *c, const struct spinnic_cmd *cmd,
		 struct ptl_cmd *out, bool wait);
/* cmd.c: the SEND or REPLY failure event of data command @p cmd on @p eq */
void ptl_cmd_fail(struct ptl_client *c, const struct spinnic_cmd *cmd,
		  uint32_t eq, int fail);

/* Arm a TRIG command @p trig (trigger CT, threshold) for operation @p op */
void ptl_trig_arm(struct ptl_client *c, const struct spinnic_cmd *trig,
		  const struct spinnic_cmd *op);
/* ct->lock held, after its value changed: move what it releases to the
 * fired FIFO of NI @p kind */
void ptl_trig_fire_locked(struct ptl_client *c, unsigned kind,
			  struct ptl_ct *ct);
/* nic->lock and ct->lock held: destroy every pending operation of @p ct
 * (a triggered ME append releases its reserved entry) */
void ptl_trig_drop_locked(struct ptl_client *c, unsigned kind,
			  struct ptl_ct *ct);
/* nic->lock held, after every CT of NI @p kind dropped its pending ones
 * (the NI goes): what fired and did not run yet will not run (counted
 * cancelled); a persistent entry can have many such */
void ptl_trig_drop_fired(struct ptl_client *c, unsigned kind);
/* CT_CHECK: the client changed CT @p h itself; fire what it releases */
void ptl_trig_check(struct ptl_client *c, uint32_t h);
/* CT_CANCEL_TRIG: destroy the pending operations of CT @p h */
void ptl_trig_cancel(struct ptl_client *c, uint32_t h);

#endif
