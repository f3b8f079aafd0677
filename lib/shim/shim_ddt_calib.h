/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout-aware typed receives: the calibration of the `aware` chooser's
 * cost table (doc/NOTES.md "Layout-aware typed receives", calibration).
 * Measured once per machine and spinnic configuration through the real
 * NIC (self-sends), cached in a text file that is validated field by
 * field when read back (shim_ddt_calib.c). Internal to lib/shim.
 */
#ifndef SHIM_DDT_CALIB_H
#define SHIM_DDT_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "portals4.h"
#include "shim_ddt_choose.h"

/* Format of the cache file (first line "spinnic-ddt-calib 3"). Version 2:
 * a strategy's per-message cost includes the receive's post (version 1
 * timed from the put); version 3: a general layout's extra cost per block
 * (gen_block_ns). The version is in the file's name and key, so an older
 * file is not read. */
#define SHIM_CALIB_VERSION 3u
/* A cache file longer than this is foreign. */
#define SHIM_CALIB_FILE_MAX 4096u
/* Largest accepted value of a fixed cost (ns per message) and of a
 * variable one (ns per byte, block or packet); beyond is corrupt. */
#define SHIM_CALIB_MSG_MAX 1e8
#define SHIM_CALIB_UNIT_MAX 1e6
/* Wall-clock budget of one measurement (ms): rounds beyond the third of
 * a layout stop at its share. */
#define SHIM_CALIB_BUDGET_MS 250

/* A calibration: the cost table and what it was measured for. */
struct shim_calib {
	uint64_t key;                 /* shim_calib_key() of its setting */
	uint32_t payload;             /* NIC packet payload bytes */
	struct shim_ddt_costs costs;  /* costs.nhpu: the NIC's HPUs */
	double prep_msg_ns;           /* preparation of a NIC object: fixed */
	double prep_block_ns;         /* ... and per block (iovec list) */
	double calib_ms;              /* wall time of the measurement */
};

/* Why a cache file was refused (counted, shim_calib_stats). */
enum shim_calib_err {
	SHIM_CALIB_OK = 0,
	SHIM_CALIB_E_IO,        /* unreadable, empty, over the size cap */
	SHIM_CALIB_E_FORMAT,    /* a line missing, unknown, out of order */
	SHIM_CALIB_E_VERSION,   /* another format version */
	SHIM_CALIB_E_KEY,       /* another machine or spinnic setting */
	SHIM_CALIB_E_VALUE,     /* NaN, inf, negative, out of range */
	SHIM_CALIB_E_COUNT,
};

struct shim_calib_stats {
	uint64_t loaded;        /* tables taken from a cache file */
	uint64_t rejected;      /* cache files refused (one warning each) */
	uint64_t measured;      /* measurements run */
	uint64_t measure_failed;
	uint64_t saved;         /* cache files written */
	uint64_t save_failed;
	uint64_t reject[SHIM_CALIB_E_COUNT]; /* by reason */
};

/** The key of this setting: format version, ABI version, the spinnic
 *  build's version string, NIC payload, HPUs, NIC memory, the host name
 *  and CPU count. */
uint64_t shim_calib_key(uint32_t payload, uint32_t nhpu, uint64_t nic_mem);

/** Parse a cache file's bytes (any bytes: it is read from disk) and check
 *  every field; @p key must match. Pure.
 *  @return SHIM_CALIB_OK or the reason it is refused */
enum shim_calib_err shim_calib_parse(const char *buf, size_t len,
				     uint64_t key, struct shim_calib *c_p);

/** Write @p c as a cache file's text. @return its length, or -ENOSPC when
 *  @p len is too small, -EINVAL when a value would not parse back */
int shim_calib_format(const struct shim_calib *c, char *buf, size_t len);

/** The cache file for @p key: $SPINNIC_DDT_CALIB_FILE, else
 *  $XDG_CACHE_HOME/spinnic/ddt-calib-v3-KEY, else
 *  $HOME/.cache/spinnic/ddt-calib-v3-KEY. @return 0; -ENAMETOOLONG;
 *  -ENOENT (no HOME) */
int shim_calib_path(uint64_t key, char *buf, size_t len);

/** Read and check the cache file @p path; a refused file is one warning
 *  and a counter. @return 0; -ENOENT (no file); -EINVAL (refused) */
int shim_calib_load(const char *path, uint64_t key, struct shim_calib *c_p);

/** Write @p c to @p path atomically (temporary file in the same folder,
 *  fsync, rename), creating the folder. @return 0 or a negative errno */
int shim_calib_save(const char *path, const struct shim_calib *c);

/* One measured point: ns of a message of a layout of nblocks blocks of
 * blk bytes (a vector; general: an hindexed of blocks blk - 8 and blk + 8
 * long in turn, gaps of blk) received by strategy s. */
typedef int (*shim_calib_measure_fn)(void *arg, enum spin_type_strategy s,
				     int64_t blk, int64_t nblocks,
				     bool in_region, bool general,
				     double *ns_p);

/** Measure the table through @p fn (the real NIC, or a test's model) and
 *  fit it: per layout 3 to 8 interleaved rounds (more while its share of
 *  SHIM_CALIB_BUDGET_MS lasts), a strategy that fails stays invalid.
 *  @return 0; -EIO (the host path could not be measured) */
int shim_calib_run(shim_calib_measure_fn fn, void *arg, uint32_t payload,
		   uint32_t nhpu, struct shim_calib *c_p);

/* Self-sends through the NIC of one matching NI: a private EQ, PT and MD,
 * region buffers, the objects of the current layout. */
struct shim_calib_nic {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	uint8_t *src, *dst, *dst_out;  /* region, region, malloc'd */
	size_t cap;                    /* bytes of each */
	struct ddt_type *t;            /* the current layout ... */
	int64_t blk, nblocks;          /* ... of nblocks blocks of blk bytes */
	bool general;                  /* ... an irregular one */
	struct spin_type_offload *off[SPIN_TYPE_COUNT];
	bool fresh[SPIN_TYPE_COUNT];   /* off[s] posted once (uploaded) */
	double prep_min_ns;            /* cheapest build + upload seen */
	uint64_t match;
};

/** Open the private resources on @p ni. @return 0 or a negative errno */
int shim_calib_nic_open(ptl_handle_ni_t ni, struct shim_calib_nic *n);
void shim_calib_nic_close(struct shim_calib_nic *n);
/** The shim_calib_measure_fn of the real calibration (@p arg: an open
 *  struct shim_calib_nic): one post, one self-put, its completion. */
int shim_calib_measure_nic(void *arg, enum spin_type_strategy s,
			   int64_t blk, int64_t nblocks, bool in_region,
			   bool general, double *ns_p);

/** The whole calibration on @p ni: shim_calib_run() through the NIC,
 *  then the host unpack and the preparation costs in-process.
 *  @return 0; -EIO */
int shim_calib_measure_all(ptl_handle_ni_t ni, uint32_t payload,
			   uint32_t nhpu, struct shim_calib *c_p);

/** The host unpack alone (in-process, no NIC) per byte and per block.
 *  @return 0 or -ENOMEM */
int shim_calib_unpack(double *byte_ns_p, double *block_ns_p);

void shim_calib_stats_get(struct shim_calib_stats *s_p);
/** Count a refusal (and warn once per process per reason). */
void shim_calib_reject(const char *path, enum shim_calib_err why);
const char *shim_calib_strerror(enum shim_calib_err why);

#endif
