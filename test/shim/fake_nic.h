/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fake spinnic for libspinnic unit tests: a thread that listens on a
 * temporary control socket, checks what the client sends (message sizes,
 * the ATTACH fd and region header), answers every control op with canned
 * success replies, and gives the test the NIC's view of the region so it
 * can consume commands and post events and counter updates.
 */
#ifndef FAKE_NIC_H
#define FAKE_NIC_H

#include <pthread.h>
#include <stdint.h>

#include "spinnic_abi.h"

#define FAKE_MAX_OBJ 64
#define FAKE_BLOB_MAX 4096
#define FAKE_TRIG_MAX 4 /* max_triggered_ops of its NIs */

enum fake_mode {
	FAKE_ANSWER = 0, /* answer every request */
	FAKE_SILENT,     /* accept, never answer */
};

struct fake_nic {
	char dir[64];
	char path[100];
	int lfd, cfd;
	pthread_t thr;
	int running;
	enum fake_mode mode;
	pthread_mutex_t lock;
	/* what the client sent */
	int nfds;                       /* fds with ATTACH */
	int bad_msgs;                   /* wrong size/version/flags */
	char why[160];                  /* first problem seen */
	struct spinnic_ctrl_attach attach;
	uint8_t *region;                /* NIC's own mapping */
	uint64_t region_size;
	int nops[SPINNIC_CTRL_OP_MAX];
	struct spinnic_ctrl_msg last[SPINNIC_CTRL_OP_MAX];
	/* canned behaviour */
	int status[SPINNIC_CTRL_OP_MAX]; /* reply status per op */
	int hangup_op;                   /* close when this op arrives */
	int delay_op;                    /* answer this op ... */
	unsigned delay_ms;               /* ... this late (a slow spinnic) */
	uint32_t next_id;
	/* objects the client gave the NIC */
	uint64_t eq_off[FAKE_MAX_OBJ];
	uint32_t eq_count[FAKE_MAX_OBJ];
	uint64_t ct_off[FAKE_MAX_OBJ];
	char ctx_family[SPINNIC_HANDLER_NAME];
	uint8_t ctx_args[FAKE_BLOB_MAX];
	uint32_t ctx_args_len;
	uint8_t blob[FAKE_BLOB_MAX];
};

/** Start listening; sets SPINNIC_SOCKET. @return 0 or -1. */
int fake_nic_start(struct fake_nic *f, enum fake_mode mode);
/** Stop the thread, close everything, remove the socket. */
void fake_nic_stop(struct fake_nic *f);
/** Close the client connection (spinnic "crashes"). */
void fake_nic_hangup(struct fake_nic *f);
/** Ops of a kind received so far. */
int fake_nic_count(struct fake_nic *f, int op);
/** Take the next command from the ring. @return 1 if one was there. */
int fake_nic_cmd_pop(struct fake_nic *f, struct spinnic_cmd *cmd_p);
/** Post an event as the NIC does. @return 1 posted, 0 dropped. */
int fake_nic_post_event(struct fake_nic *f, uint32_t eq,
			const struct spinnic_event *ev);
/** The NIC's view of an EQ / a counter. */
struct spinnic_eq *fake_nic_eq(struct fake_nic *f, uint32_t eq);
struct spinnic_ct *fake_nic_ct(struct fake_nic *f, uint32_t ct);
/** Set a counter as the NIC does (and wake waiters). */
void fake_nic_ct_set(struct fake_nic *f, uint32_t ct, uint64_t success,
		     uint64_t failure);

#endif
