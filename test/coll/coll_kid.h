/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bootstrap of lib/coll integration tests' ranks (forked kids, kid.c):
 * each attaches with a logical NI and tells the parent its id; the parent
 * sends every rank the map; each rank sets it and creates a communicator.
 */
#ifndef COLL_KID_H
#define COLL_KID_H

#include <portals4.h>
#include <spin_coll.h>

#include "kid.h"

/**
 * In rank @p self of @p P: PtlInit, a matching logical NI (asking for
 * @p max_trig triggered operations when non-zero), "id NID PID" to the
 * parent, its "map NID:PID ..." line read (60 s), PtlSetMap, and the
 * communicator on portal table entry @p pt.
 * @return 0; 1 after a "fail ..." line (and the reason on stderr)
 */
int coll_kid_comm(struct kid *self, unsigned P, unsigned pt,
		  unsigned max_trig, ptl_handle_ni_t *ni_p,
		  spin_coll_comm_t **comm_p);

/**
 * In the parent: read the "id" line of each of the @p P ranks and send
 * every one the map (rank i is kids[i]). Fails the test otherwise.
 */
void coll_kids_map(struct kid *kids, unsigned P);

#endif
