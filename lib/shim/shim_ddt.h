/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives (spin.h, DESIGN §7): what the four shim_ddt_*.c files
 * share. shim_ddt_type.c prepares a type (strategy choice),
 * shim_ddt_args.c builds its handler arguments, shim_ddt_nic.c uploads
 * them to NIC memory (LRU of prepared types), shim_ddt_recv.c posts and
 * completes the receives. Internal to lib/shim, 0 or a negative errno.
 */
#ifndef SHIM_DDT_H
#define SHIM_DDT_H

#include <pthread.h>
#include <stdint.h>

#include "ddt.h"
#include "shim_internal.h"
#include "spin_ddt_args.h"

/* Largest handler arguments of a type loaded into NIC memory (bytes). */
#define TYPE_ARGS_MAX (1u << 20)

struct spin_type_offload {
	struct spin_type_offload *prev, *next; /* LRU, most recent first */
	ptl_handle_ni_t ni;
	struct ddt_type *t;
	int64_t count;
	enum spin_type_strategy strat;
	int64_t size;              /* packed bytes of count elements */
	int64_t lo;                /* window = buf + lo ... */
	uint64_t span;             /* ... for span bytes */
	/* what the NIC needs, kept to upload again after an eviction */
	const char *family;
	void *args;
	size_t args_len;
	void *list;                /* iovec entries (blob) */
	size_t list_len;
	struct spin_ddt_sched sched;
	/* NIC side */
	bool loaded;
	spin_handle_ctx_t ctx;
	spin_handle_nicmem_t blob;
	uint64_t nic_bytes;
	uint32_t posted;           /* receives posted and not completed */
};

/* Guards the LRU, every offload's NIC side and posted count, and the
 * counters (shim_ddt_nic.c). */
extern pthread_mutex_t shim_type_lock;
extern struct spin_type_stats shim_type_st;

/** Build the handler arguments (and list) of o->strat (shim_ddt_args.c).
 *  @return 0; -EINVAL (the layout cannot be expressed); -ENOMEM; -EIO
 *  (spinnic did not say its packet payload) */
int shim_type_args_build(struct spin_type_offload *o,
			 const struct ddt_class_info *ci);

/** Put o at the LRU head (shim_type_lock held). */
void shim_type_lru_add(struct spin_type_offload *o);
/** Take o off the LRU (shim_type_lock held). */
void shim_type_lru_del(struct spin_type_offload *o);
/** Move o to the LRU head (shim_type_lock held). */
void shim_type_lru_touch(struct spin_type_offload *o);
/** Upload o, evicting idle types while NIC memory is short
 *  (shim_type_lock held). @return 0; -ENOMEM (NIC memory, nothing left
 *  to evict); another error of the upload */
int shim_type_load(struct spin_type_offload *o);
/** Give o's NIC memory back (shim_type_lock held). @return 0; -EBUSY
 *  (the NIC still uses its context) */
int shim_type_unload(struct spin_type_offload *o);

#endif
