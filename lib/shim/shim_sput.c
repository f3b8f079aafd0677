/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streaming puts (PtlSPutStart, PtlSPutStream) and outbound sPIN puts
 * (PtlProcessPut), paper 000 §3.1. The shim checks what it can (MDs,
 * ranges, the running total of a stream) and posts SPUT_START,
 * SPUT_STREAM and PROCESS_PUT commands; the NIC (app/spinnic/
 * outbound_stream.c) checks again and builds the packets.
 *
 * Stream slots are per process (the NIC keeps one table per client); a
 * slot is freed when the pieces reach the declared length. Posting under
 * sput_lock keeps a stream's commands in ring order with its slot's reuse.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "shim_internal.h"

struct shim_sput {
	uint8_t used;
	uint16_t gen;
	unsigned ni_slot;
	uint64_t total;         /* declared length */
	uint64_t handed;        /* bytes of the pieces posted so far */
};

_Static_assert(SPIN_SPUT_MAX == SPINNIC_SPUT_MAX,
	       "spin.h and the ABI agree on the number of streams");

static pthread_mutex_t sput_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_sput sputs[SPINNIC_SPUT_MAX];

static spin_handle_sput_t
sput_handle(uint32_t idx)
{
	return shim_handle_make(SHIM_KIND_SPUT, sputs[idx].ni_slot,
				sputs[idx].gen, idx);
}

/* sput_lock held: the open stream of a handle, or NULL */
static struct shim_sput *
sput_find(spin_handle_sput_t h)
{
	uint32_t idx = shim_handle_idx(h);

	if (shim_handle_kind(h) != SHIM_KIND_SPUT || idx >= SPINNIC_SPUT_MAX ||
	    !sputs[idx].used || sputs[idx].gen != shim_handle_gen(h) ||
	    sputs[idx].ni_slot != shim_handle_ni(h))
		return NULL;
	return &sputs[idx];
}

/* A data MD and [local_offset, +length) in it. @return the MD or NULL */
static struct shim_obj *
md_range(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	 ptl_size_t length, struct shim_ni **ni_p)
{
	struct shim_obj *o = shim_to_md(md_handle, ni_p);

	if (o == NULL || local_offset > o->u.md.length ||
	    length > o->u.md.length - local_offset) {
		SHIM_DBG("bad MD handle %#llx or range %llu+%llu",
			 (unsigned long long)md_handle,
			 (unsigned long long)local_offset,
			 (unsigned long long)length);
		return NULL;
	}
	return o;
}

/* The PtlPut()-like fields of a command. @return 0 or a negative errno */
static int
put_fields(const struct shim_ni *ni, ptl_ack_req_t ack_req,
	   ptl_process_t target_id, ptl_pt_index_t pt_index,
	   ptl_match_bits_t match_bits, ptl_size_t remote_offset,
	   void *user_ptr, ptl_hdr_data_t hdr_data, ptl_size_t msg_length,
	   struct spinnic_cmd *cmd)
{
	if ((unsigned)ack_req > PTL_OC_ACK_REQ || pt_index == PTL_PT_ANY ||
	    (ni->limits.max_pt_index >= 0 &&
	     pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) ||
	    (ni->limits.max_msg_size > 0 &&
	     msg_length > ni->limits.max_msg_size)) {
		SHIM_DBG("bad ack %d, PT %u or length %llu", (int)ack_req,
			 pt_index, (unsigned long long)msg_length);
		return -EINVAL;
	}
	cmd->ni = ni->nic_ni;
	cmd->ack_req = ack_req;
	cmd->pt_index = pt_index;
	cmd->match_bits = match_bits;
	cmd->remote_offset = remote_offset;
	cmd->user_ptr = (uint64_t)(uintptr_t)user_ptr;
	cmd->hdr_data = hdr_data;
	return shim_target(ni, target_id, &cmd->target, 0);
}

int
PtlSPutStart(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	     ptl_size_t length, ptl_size_t total_length,
	     ptl_ack_req_t ack_req, ptl_process_t target_id,
	     ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	     ptl_size_t remote_offset, void *user_ptr,
	     ptl_hdr_data_t hdr_data, spin_handle_sput_t *sput_p)
{
	struct spinnic_cmd cmd;
	struct shim_ni *ni;
	struct shim_obj *o;
	uint32_t idx;
	int rc;

	SHIM_ENTER();
	o = md_range(md_handle, local_offset, length, &ni);
	if (o == NULL || sput_p == NULL || length > total_length)
		return PTL_ARG_INVALID;
	memset(&cmd, 0, sizeof(cmd));
	rc = put_fields(ni, ack_req, target_id, pt_index, match_bits,
			remote_offset, user_ptr, hdr_data, total_length, &cmd);
	if (rc != 0)
		return shim_ptl(rc);
	cmd.op = SPINNIC_CMD_SPUT_START;
	cmd.md = o->nic_id;
	cmd.local_offset = local_offset;
	cmd.length = length;
	cmd.msg_length = total_length;

	pthread_mutex_lock(&sput_lock);
	for (idx = 0; idx < SPINNIC_SPUT_MAX && sputs[idx].used; idx++)
		;
	if (idx == SPINNIC_SPUT_MAX) {
		pthread_mutex_unlock(&sput_lock);
		SHIM_DBG("%u streaming puts open", SPINNIC_SPUT_MAX);
		return PTL_NO_SPACE;
	}
	cmd.stream = idx;
	rc = shim_cmd_post(&cmd);
	if (rc == 0) {
		struct shim_sput *s = &sputs[idx];

		s->gen++;
		s->ni_slot = shim_handle_ni(md_handle);
		s->total = total_length;
		s->handed = length;
		*sput_p = sput_handle(idx);
		/* a first piece of the whole message finishes it */
		s->used = length < total_length;
	}
	pthread_mutex_unlock(&sput_lock);
	return shim_ptl(rc);
}

int
PtlSPutStream(spin_handle_sput_t sput, ptl_handle_md_t md_handle,
	      ptl_size_t local_offset, ptl_size_t length, int eom)
{
	struct spinnic_cmd cmd;
	struct shim_sput *s;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	SHIM_ENTER();
	o = md_range(md_handle, local_offset, length, &ni);
	if (o == NULL)
		return PTL_ARG_INVALID;
	pthread_mutex_lock(&sput_lock);
	s = sput_find(sput);
	if (s == NULL || s->ni_slot != shim_handle_ni(md_handle) ||
	    length > s->total - s->handed ||
	    (eom && s->handed + length != s->total)) {
		pthread_mutex_unlock(&sput_lock);
		SHIM_DBG("stream %#llx: unknown, or piece of %llu bytes%s "
			 "does not fit its declared length",
			 (unsigned long long)sput, (unsigned long long)length,
			 eom ? " with EOM" : "");
		return PTL_ARG_INVALID;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_SPUT_STREAM;
	cmd.flags = eom ? SPINNIC_CMD_F_EOM : 0;
	cmd.ni = ni->nic_ni;
	cmd.md = o->nic_id;
	cmd.local_offset = local_offset;
	cmd.length = length;
	cmd.stream = shim_handle_idx(sput);
	rc = shim_cmd_post(&cmd);
	if (rc == 0) {
		s->handed += length;
		if (s->handed == s->total)
			s->used = 0;
	}
	pthread_mutex_unlock(&sput_lock);
	return shim_ptl(rc);
}

int
PtlProcessPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	      spin_handle_nicmem_t type, ptl_size_t count, ptl_size_t length,
	      ptl_ack_req_t ack_req, ptl_process_t target_id,
	      ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	      ptl_size_t remote_offset, void *user_ptr,
	      ptl_hdr_data_t hdr_data)
{
	struct spinnic_cmd cmd;
	struct shim_obj *o, *blob;
	struct shim_ni *ni;
	int rc;

	SHIM_ENTER();
	/* the origin must be in the MD; the NIC checks the type's span */
	o = md_range(md_handle, local_offset, 0, &ni);
	blob = shim_to_nicmem(type, NULL);
	if (o == NULL || blob == NULL || blob->u.nicmem.size == 0 ||
	    blob->u.nicmem.size > SPINNIC_PROC_BLOB_MAX) {
		SHIM_DBG("bad MD %#llx or type blob %#llx",
			 (unsigned long long)md_handle,
			 (unsigned long long)type);
		return PTL_ARG_INVALID;
	}
	memset(&cmd, 0, sizeof(cmd));
	rc = put_fields(ni, ack_req, target_id, pt_index, match_bits,
			remote_offset, user_ptr, hdr_data, length, &cmd);
	if (rc != 0)
		return shim_ptl(rc);
	cmd.op = SPINNIC_CMD_PROCESS_PUT;
	cmd.md = o->nic_id;
	cmd.local_offset = local_offset;
	cmd.length = length;
	cmd.blob = blob->nic_id;
	cmd.blob_len = (uint32_t)blob->u.nicmem.size;
	cmd.count = count;
	return shim_ptl(shim_cmd_post(&cmd));
}
