/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicators of lib/coll and their host-driven barrier (spin_coll.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spin.h>

#include "coll_internal.h"

#define SYNC_TIMEOUT_MS 30000u

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

size_t
coll_eager_from_env(void)
{
	const char *v = getenv("SPINNIC_COLL_EAGER");
	unsigned long long x;
	char *end;

	if (v == NULL || *v == '\0')
		return SPIN_COLL_EAGER_DEFAULT;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || *end != '\0' || x > (1ull << 30)) {
		fprintf(stderr, "spin_coll: SPINNIC_COLL_EAGER=%s: not a byte "
			"count <= 1 GiB, using %u\n", v,
			SPIN_COLL_EAGER_DEFAULT);
		return SPIN_COLL_EAGER_DEFAULT;
	}
	return (size_t)x;
}

unsigned
spin_coll_comm_rank(const spin_coll_comm_t *comm)
{
	return comm->rank;
}

unsigned
spin_coll_comm_size(const spin_coll_comm_t *comm)
{
	return comm->size;
}

size_t
spin_coll_comm_eager_max(const spin_coll_comm_t *comm)
{
	return comm->eager_max;
}

/* ---- host barrier ------------------------------------------------------- */

/*
 * SYNC arrivals, kept per process and not per communicator: a fast peer
 * that already freed a communicator and created the next one on the same
 * portal index may send that one's first barrier messages while this rank
 * still waits in the old one's last barrier; its entry takes and
 * acknowledges them, so they are noted here, where the new communicator
 * finds them. The key holds the portal index and the generation (how many
 * communicators this process created on that index before: the same on
 * every rank, as creation is collective and in order) so that none is
 * taken for another.
 */
static struct {
	uint64_t *keys;
	uint32_t *vals;          /* the sender's bits (coll_comm_sync_or) */
	size_t n, cap;
} seen;
static unsigned generation[256];

static uint64_t
sync_key(const spin_coll_comm_t *c, uint32_t epoch, unsigned round,
	 unsigned src)
{
	return (uint64_t)(c->gen & 0xfff) << 36 |
	       (uint64_t)(epoch & 0xffff) << 20 | (uint64_t)(round & 0xff) << 12 |
	       (src & 0xfff);
}

static int
sync_note(spin_coll_comm_t *c, uint64_t key, uint32_t val)
{
	if (seen.n == seen.cap) {
		size_t cap = seen.cap ? seen.cap * 2 : 64;
		uint64_t *n = realloc(seen.keys, cap * sizeof(*n));
		uint32_t *v;

		if (n == NULL)
			return -ENOMEM;
		seen.keys = n;
		v = realloc(seen.vals, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		seen.vals = v;
		seen.cap = cap;
	}
	seen.vals[seen.n] = val;
	seen.keys[seen.n++] = (uint64_t)(c->pt & 0xffff) << 48 | key;
	return 0;
}

/* Take @p key out of the arrived set, OR its bits into @p val.
 * @return true when it was there */
static bool
sync_take(spin_coll_comm_t *c, uint64_t key, uint32_t *val)
{
	uint64_t k = (uint64_t)(c->pt & 0xffff) << 48 | key;
	size_t i;

	for (i = 0; i < seen.n; i++)
		if (seen.keys[i] == k) {
			*val |= seen.vals[i];
			seen.n--;
			seen.keys[i] = seen.keys[seen.n];
			seen.vals[i] = seen.vals[seen.n];
			return true;
		}
	return false;
}

/* One event of the comm's EQ: an arrival is noted, an ACK reported.
 * @return 1 ACK ok, 2 ACK failed, 0 other, -ETIMEDOUT nothing within
 * @p ms, -EIO */
static int
sync_event(spin_coll_comm_t *c, unsigned ms)
{
	ptl_event_t ev;
	unsigned which;
	int rc = PtlEQPoll(&c->eq, 1, ms, &ev, &which);

	if (rc == PTL_EQ_EMPTY)
		return -ETIMEDOUT;
	if (rc != PTL_OK && rc != PTL_EQ_DROPPED) {
		fprintf(stderr, "spin_coll: rank %u: PtlEQPoll: %d\n", c->rank,
			rc);
		return -EIO;
	}
	switch (ev.type) {
	case PTL_EVENT_PUT:
		if (ev.ni_fail_type != PTL_NI_OK)
			return 0;
		if (sync_note(c, ev.match_bits & ((1ull << 48) - 1),
			      (uint32_t)ev.hdr_data) != 0)
			return -ENOMEM;
		return 0;
	case PTL_EVENT_ACK:
		return ev.ni_fail_type == PTL_NI_OK ? 1 : 2;
	default:
		return 0;
	}
}

/* A 0-byte SYNC put to @p dst, re-sent until acknowledged (a peer whose
 * entry is not posted yet drops it). */
static int
sync_send(spin_coll_comm_t *c, unsigned dst, uint64_t key, uint32_t val,
	  uint64_t t0)
{
	ptl_process_t to = { .rank = dst };

	for (;;) {
		int rc;

		rc = PtlPut(c->sync_md, 0, 0, PTL_ACK_REQ, to, c->pt,
			    ((uint64_t)COLL_T_SYNC << 61) | key, 0, NULL, val);
		if (rc != PTL_OK) {
			fprintf(stderr, "spin_coll: rank %u: PtlPut to %u: %d\n",
				c->rank, dst, rc);
			return -EIO;
		}
		do {
			rc = sync_event(c, 100);
			if (rc == -ETIMEDOUT && now_ms() - t0 > SYNC_TIMEOUT_MS)
				return -ETIMEDOUT;
		} while (rc == 0 || rc == -ETIMEDOUT);
		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		if (now_ms() - t0 > SYNC_TIMEOUT_MS)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

int
spin_coll_comm_sync(spin_coll_comm_t *c)
{
	uint32_t val = 0;

	return coll_comm_sync_or(c, &val);
}

/* Dissemination: after round k a rank has heard, directly or not, from
 * the 2^(k+1) - 1 ranks before it, so the bits it sends on are an OR
 * over them, and after the last round over every rank (OR is
 * idempotent: a rank heard twice changes nothing). */
int
coll_comm_sync_or(spin_coll_comm_t *c, uint32_t *val)
{
	uint64_t t0 = now_ms();
	uint32_t epoch = c->sync_epoch++;
	unsigned round, dist;
	int rc;

	for (round = 0, dist = 1; dist < c->size; round++, dist <<= 1) {
		unsigned to = (c->rank + dist) % c->size;
		unsigned from = (c->rank + c->size - dist) % c->size;
		uint64_t want = sync_key(c, epoch, round, from);

		rc = sync_send(c, to, sync_key(c, epoch, round, c->rank), *val,
			       t0);
		if (rc != 0)
			return rc;
		while (!sync_take(c, want, val)) {
			rc = sync_event(c, 100);
			if (rc == -ETIMEDOUT) {
				if (now_ms() - t0 > SYNC_TIMEOUT_MS)
					return rc;
				continue;
			}
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

uint64_t
coll_ctl_failures(spin_coll_comm_t *c)
{
	ptl_ct_event_t ev;

	if (PtlCTGet(c->ctl_ct, &ev) != PTL_OK)
		return UINT64_MAX;
	return ev.failure;
}

/* ---- communicators ------------------------------------------------------ */

static void
comm_release(spin_coll_comm_t *c)
{
	coll_match_comm_free(c);
	if (c->ctl_md != PTL_INVALID_HANDLE)
		PtlMDRelease(c->ctl_md);
	if (c->ctl_ct != PTL_INVALID_HANDLE)
		PtlCTFree(c->ctl_ct);
	if (c->sync_md != PTL_INVALID_HANDLE)
		PtlMDRelease(c->sync_md);
	if (c->sync_me != PTL_INVALID_HANDLE) {
		ptl_event_t ev;
		int k, rc;

		for (k = 0; k < 1000 &&
		     PtlMEUnlink(c->sync_me) == PTL_IN_USE; k++)
			usleep(100);
		/* a faster peer's first barrier message for the next
		 * communicator on this index may have been taken (and
		 * acknowledged) by this one's entry: keep what arrived */
		while ((rc = PtlEQGet(c->eq, &ev)) == PTL_OK ||
		       rc == PTL_EQ_DROPPED)
			if (ev.type == PTL_EVENT_PUT &&
			    ev.ni_fail_type == PTL_NI_OK)
				(void)sync_note(c, ev.match_bits &
						   ((1ull << 48) - 1),
						(uint32_t)ev.hdr_data);
	}
	if (c->pt != PTL_PT_ANY)
		PtlPTFree(c->ni, c->pt);
	if (c->eq != PTL_INVALID_HANDLE)
		PtlEQFree(c->eq);
	free(c->stag_used);
	free(c);
}

int
spin_coll_comm_create(ptl_handle_ni_t ni, ptl_pt_index_t pt_index,
		      spin_coll_comm_t **comm_p)
{
	struct spin_nic_info info;
	ptl_process_t me_id;
	ptl_size_t map_size = 0;
	ptl_process_t one;
	spin_coll_comm_t *c;
	ptl_md_t md;
	ptl_me_t me;
	int rc;

	if (comm_p == NULL)
		return -EINVAL;
	*comm_p = NULL;
	if (PtlGetMap(ni, 1, &one, &map_size) != PTL_OK || map_size == 0 ||
	    map_size > SPIN_COLL_RANKS_MAX || PtlGetId(ni, &me_id) != PTL_OK ||
	    spin_nic_info(ni, &info) != PTL_OK)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->ni = ni;
	c->pt = PTL_PT_ANY;
	c->eq = c->sync_me = c->sync_md = c->ctl_md = PTL_INVALID_HANDLE;
	c->ctl_ct = PTL_INVALID_HANDLE;
	c->rank = me_id.rank;
	c->size = (unsigned)map_size;
	c->eager_max = coll_eager_from_env();
	/* the NIC's own rule (lib/portals/client.c atomic_limits): one
	 * packet, in whole largest elements */
	c->max_atomic = info.payload_size / 32u * 32u;
	if (c->max_atomic == 0)
		c->max_atomic = 32;
	c->stag_used = calloc(COLL_SCHED_TAGS, 1);
	if (c->stag_used == NULL) {
		comm_release(c);
		return -ENOMEM;
	}
	if (PtlEQAlloc(ni, 4096, &c->eq) != PTL_OK) {
		comm_release(c);
		return -EIO;
	}
	rc = PtlPTAlloc(ni, 0, c->eq, pt_index, &c->pt);
	if (rc != PTL_OK) {
		c->pt = PTL_PT_ANY;
		comm_release(c);
		return rc == PTL_PT_IN_USE ? -EBUSY : -EIO;
	}
	c->gen = generation[c->pt & 0xff]++;
	memset(&me, 0, sizeof(me));
	me.start = NULL;
	me.length = 0;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.rank = PTL_RANK_ANY;
	me.match_bits = (uint64_t)COLL_T_SYNC << 61;
	me.ignore_bits = (1ull << 61) - 1;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_UNLINK_DISABLE;
	if (PtlMEAppend(ni, c->pt, &me, PTL_PRIORITY_LIST, NULL,
			&c->sync_me) != PTL_OK) {
		c->sync_me = PTL_INVALID_HANDLE;
		comm_release(c);
		return -EIO;
	}
	memset(&md, 0, sizeof(md));
	md.start = &c->ctl_byte;
	md.length = 0;
	md.eq_handle = c->eq;
	md.ct_handle = PTL_CT_NONE;
	md.options = PTL_MD_EVENT_SEND_DISABLE;
	if (PtlMDBind(ni, &md, &c->sync_md) != PTL_OK) {
		c->sync_md = PTL_INVALID_HANDLE;
		comm_release(c);
		return -EIO;
	}
	/* control puts carry no acknowledgement: their SEND, counted in
	 * bytes (0 on success), tells a lost one (coll_ctl_failures()) */
	if (PtlCTAlloc(ni, &c->ctl_ct) != PTL_OK) {
		c->ctl_ct = PTL_INVALID_HANDLE;
		comm_release(c);
		return -EIO;
	}
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = c->ctl_ct;
	md.options = PTL_MD_EVENT_SEND_DISABLE | PTL_MD_EVENT_CT_SEND |
		     PTL_MD_EVENT_CT_BYTES;
	if (PtlMDBind(ni, &md, &c->ctl_md) != PTL_OK) {
		c->ctl_md = PTL_INVALID_HANDLE;
		comm_release(c);
		return -EIO;
	}
	rc = spin_coll_comm_sync(c);
	if (rc != 0) {
		comm_release(c);
		return rc;
	}
	*comm_p = c;
	return 0;
}

int
spin_coll_comm_free(spin_coll_comm_t *c)
{
	int rc;

	if (c == NULL)
		return 0;
	if (c->live_scheds != 0)
		return -EBUSY;
	rc = spin_coll_comm_sync(c);
	comm_release(c);
	return rc;
}

void *
coll_mem_alloc(size_t len)
{
	void *p = spin_host_alloc(len ? len : 1);

	if (p == NULL)
		p = malloc(len ? len : 1);
	if (p != NULL)
		memset(p, 0, len ? len : 1);
	return p;
}

void
coll_mem_free(void *p)
{
	if (p != NULL && spin_host_contains(p, 1))
		spin_host_free(p);
	else
		free(p);
}
