/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout-aware typed receives (paper 001, doc/NOTES.md "Layout-aware typed
 * receives"): the decision for one post, host path or a NIC strategy, from
 * a layout's features and a cost table. Pure and deterministic: no I/O, no
 * locks, no environment (shim_ddt_choose.c).
 */
#ifndef SHIM_DDT_CHOOSE_H
#define SHIM_DDT_CHOOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "ddt.h"
#include "spin.h"

/* Paper 001's block-length threshold T (Algorithm 1): the NIC only for an
 * average block longer than this. */
#define SHIM_DDT_T 2048

/* Hysteresis: the NIC must be predicted (1 + h) times faster. */
#define SHIM_DDT_HYST 0.10

/* A close call: host and NIC times within this share of the host's. */
#define SHIM_DDT_CLOSE 0.25

/* Which rule decides (SPINNIC_DDT_CHOOSER). */
enum shim_ddt_chooser {
	SHIM_CHOOSER_AWARE = 0, /* cost table; without one, THRESHOLD */
	SHIM_CHOOSER_STATIC,    /* by class, prepared at the post (old rule) */
	SHIM_CHOOSER_THRESHOLD, /* paper 001 Algorithm 1, T = 2 KiB */
};

/* What the decision knows of one layout and one post. */
struct shim_ddt_feat {
	enum ddt_class cls;  /* ddt_classify() of count elements */
	int64_t size;        /* packed bytes of the message */
	int64_t nblocks;     /* merged contiguous blocks (a general layout
				beyond SHIM_DDT_FEAT_SAMPLE of them: size /
				the mean of its first ones, estimated) */
	int64_t blk_min;     /* shortest and longest block (exact up to */
	int64_t blk_max;     /* SHIM_DDT_FEAT_SAMPLE blocks, else sampled) */
	double blk_mean;     /* size / nblocks: paper 001's l */
	int64_t npkts;       /* packets of the message */
	double blk_per_pkt;  /* nblocks / npkts */
	bool in_region;      /* the buffer lies in the host region */
};

/* Blocks read to find blk_min and blk_max of a general layout. */
#define SHIM_DDT_FEAT_SAMPLE 64

/* Predicted cost of one message by one strategy (ns):
 * msg + (byte * size + block * nblocks + pkt * npkts
 *        + gen_block * nblocks when the layout is general
 *        + out_block * nblocks when the buffer is outside the region) / p,
 * p = min(nhpu, npkts) for a NIC strategy (packets are handled in
 * parallel), 1 for the host path. */
struct shim_ddt_cost {
	bool valid;          /* offered at all */
	double msg_ns, byte_ns, block_ns, pkt_ns, out_block_ns;
	/* more per block of a general layout (irregular blocks: dataloops
	 * instead of a stride), added to block_ns for DDT_CLASS_GENERAL */
	double gen_block_ns;
};

/* A cost table: [SPIN_TYPE_HOST] the host path (staging receive and
 * unpack), the NIC strategies at their index. */
struct shim_ddt_costs {
	struct shim_ddt_cost s[SPIN_TYPE_COUNT];
	uint32_t nhpu;       /* HPUs of the NIC (0 taken as 1) */
	/* the client's unpack inside s[SPIN_TYPE_HOST] (ns per byte, per
	 * block; measured and kept in the cache file, not used by the
	 * decision: the refinement times whole receives) */
	double unpack_byte_ns, unpack_block_ns;
};

/* The decision for one post. */
struct shim_ddt_choice {
	enum spin_type_strategy nic;   /* the NIC candidate of the layout
					  (CONTIG: nothing to prepare) */
	bool prepare;                  /* worth preparing nic */
	enum spin_type_strategy strat; /* what this post uses */
	/* AWARE with a table: the host and NIC times compared (measured or
	 * predicted ns; negative: none); otherwise both -1 */
	double t_host, t_nic;
};

/* When the aware chooser queues the preparation of a layout whose NIC
 * candidate is worth it (SPINNIC_DDT_GATE). Algorithm 1 (THRESHOLD)
 * queues at the first use whatever the gate. */
enum shim_ddt_gate {
	SHIM_GATE_SECOND = 0, /* from the layout's second use (default): a
				 layout used once never pays preparation */
	SHIM_GATE_EAGER,      /* at the first use (the second slice) */
	SHIM_GATE_RENT,       /* from the second use, once uses x predicted
				 gain per message covers the preparation */
};

/* The use from which SHIM_GATE_SECOND and SHIM_GATE_RENT prepare. */
#define SHIM_DDT_PREP_USES 2

/** Features of @p count elements of committed @p t for packets of
 *  @p payload bytes. @return 0; -EINVAL; -ENOMEM */
int shim_ddt_feat_get(const struct ddt_type *t, int64_t count,
		      uint32_t payload, bool in_region,
		      struct shim_ddt_feat *f_p);

/** Predicted ns of strategy @p s for @p f by table @p c; a negative value
 *  when @p s is not offered. */
double shim_ddt_predict(const struct shim_ddt_costs *c,
			enum spin_type_strategy s,
			const struct shim_ddt_feat *f);

/** shim_ddt_predict() with per-byte cost @p byte_ns in place of the
 *  strategy's own (negative: its own). */
double shim_ddt_predict_byte(const struct shim_ddt_costs *c,
			     enum spin_type_strategy s,
			     const struct shim_ddt_feat *f, double byte_ns);

/* Online refinement: measured times of one layout's receives, per path
 * (exponentially weighted, shim_ddt_lc.c). An estimate with fewer than
 * SHIM_DDT_OBS_MIN samples is not used: the table predicts. */
#define SHIM_DDT_OBS_MIN 3
#define SHIM_DDT_EWMA_ALPHA 0.25
/* A sample beyond CLIP times the estimate (or below 1/CLIP of it) counts
 * as that bound. */
#define SHIM_DDT_OBS_CLIP 2.0
struct shim_ddt_obs {
	double host_ns, nic_ns;  /* EWMA of the host path and of the NIC
				    candidate */
	uint32_t n_host, n_nic;  /* samples behind them */
	bool on_nic;             /* the layout's last decision was its NIC
				    candidate: it stays there until the
				    host is (1 + SHIM_DDT_HYST) times
				    faster (two-sided hysteresis) */
	enum spin_type_strategy built; /* SPIN_TYPE_AUTO: nothing built or
				    being built, the candidate is chosen
				    per post; else the layout's NIC object,
				    which is then the candidate */
	/* Age of the estimates (shim_ddt_explore()): the layout's use at
	 * the last sample of each path or at its last post (an exploration
	 * included: its sample is on the way), whichever came later; 0:
	 * neither yet */
	uint64_t host_at, nic_at;
	uint32_t explore_n;      /* the path not taken is explored once its
				    estimate is this many uses old (0:
				    SHIM_DDT_EXPLORE_MIN); doubles at each
				    exploration up to SHIM_DDT_EXPLORE_MAX,
				    back to the minimum when the side
				    chosen flips */
	bool host_stale, nic_stale; /* explored: the next sample of that
				    path re-measures an old estimate */
};

/* The bounds of the exploration period (uses); in a close call the
 * period is at most SHIM_DDT_EXPLORE_CLOSE. */
#define SHIM_DDT_EXPLORE_MIN 8u
#define SHIM_DDT_EXPLORE_MAX 128u
#define SHIM_DDT_EXPLORE_CLOSE 16u

/** Fold sample @p ns into estimate @p *ewma_p of @p *n_p samples: the
 *  least of the first SHIM_DDT_OBS_MIN samples, then an EWMA
 *  (SHIM_DDT_EWMA_ALPHA) of samples clipped to [1/CLIP, CLIP] times the
 *  estimate (SHIM_DDT_OBS_CLIP).
 *  @return false when @p ns is not a time (NaN, negative, over 1000 s):
 *  ignored */
bool shim_ddt_obs_add(double *ewma_p, uint32_t *n_p, double ns);

/** One measured receive of the layout's host path or NIC candidate
 *  (@p nic) at its @p uses-th use: folded by shim_ddt_obs_add(), except
 *  that the first sample after an exploration (an estimate older than
 *  the exploration period) replaces the estimate when the estimate is
 *  over SHIM_DDT_OBS_CLIP times the sample — interference only adds
 *  time, so an estimate a load spike raised comes back at once.
 *  The path's age starts again (o->host_at or o->nic_at = @p uses).
 *  @return false when @p ns is not a time: ignored, nothing changed */
bool shim_ddt_obs_sample(struct shim_ddt_obs *o, bool nic, double ns,
			 uint64_t uses);

/** A receive's sample without the wait for its sender (spinnic's NIC
 *  time, spinnic_event.nic_ns): the NIC's time for the message (from its
 *  first packet to its completion: the NIC strategy's work, or the copy
 *  to the host path's staging buffer) plus @p unpack_ns (the host path's
 *  unpack after the data landed, 0 on the NIC) plus the completion
 *  latency *@p lat_p, the least (post-to-completion - NIC time - unpack)
 *  seen so far: the post, the event's way to the client and the
 *  completion call when the sender was already waiting (any wait only
 *  adds). So both paths' samples count from the data's arrival and stay
 *  in the calibration table's units (a receive whose sender is ready).
 *  @p nic_ns is the NIC's word: used only when a time in (0,
 *  @p ptc_ns] (a message matched after its post cannot take longer on
 *  the NIC than at the client), else the sample is @p ptc_ns as before.
 *  *@p lat_p < 0: none yet (the first usable receive sets it, so its
 *  sample is its @p ptc_ns). *@p used_p (when not NULL): whether the
 *  NIC time was used.
 *  @return the sample (ns); NaN when @p ptc_ns is not a time */
double shim_ddt_ctx_sample(double ptc_ns, double nic_ns, double unpack_ns,
			   double *lat_p, bool *used_p);

/** Exploration by age, at the @p uses-th post of a layout whose decision
 *  side is @p nic_side (before any exploration). A flip of the side
 *  (against o->on_nic) resets the period to SHIM_DDT_EXPLORE_MIN. When
 *  @p can (AWARE with a table, the NIC object prepared), the other path
 *  is explored once its estimate is o->explore_n uses old (uses since
 *  its last sample or post; at most SHIM_DDT_EXPLORE_CLOSE when the
 *  decision is a close call, @p close, shim_ddt_close()); each
 *  exploration doubles the period up to SHIM_DDT_EXPLORE_MAX and marks
 *  that estimate stale. O(1); does not set o->on_nic (the caller does,
 *  with the side).
 *  @return whether this post takes the other path */
bool shim_ddt_explore(struct shim_ddt_obs *o, bool nic_side, uint64_t uses,
		      bool can, bool close);

/** shim_ddt_choose() with measured times: in AWARE mode with a table, an
 *  estimate of SHIM_DDT_OBS_MIN samples or more replaces the table's
 *  prediction of its path; a layout on its NIC candidate (o->on_nic)
 *  stays there until the host is (1 + SHIM_DDT_HYST) times faster; a
 *  close call whose NIC side has fewer than SHIM_DDT_OBS_MIN samples is
 *  prepared, and posted to the NIC once ready, to be measured. @p o may
 *  be NULL. */
void shim_ddt_choose_obs(enum shim_ddt_chooser ch,
			 const struct shim_ddt_costs *c,
			 const struct shim_ddt_feat *f,
			 const struct shim_ddt_obs *o, bool ready,
			 struct shim_ddt_choice *ch_p);

/** Decide one post. @p c may be NULL (no table: AWARE acts as
 *  THRESHOLD); @p ready says whether the layout's NIC candidate is
 *  prepared (STATIC ignores it: the caller prepares at the post). */
void shim_ddt_choose(enum shim_ddt_chooser ch, const struct shim_ddt_costs *c,
		     const struct shim_ddt_feat *f, bool ready,
		     struct shim_ddt_choice *ch_p);

/** Whether decision @p c was a close call (AWARE with a table: both
 *  times known and within SHIM_DDT_CLOSE of the host's). */
bool shim_ddt_close(const struct shim_ddt_choice *c);

/** Whether to queue the preparation of a layout now, at its @p uses-th
 *  use (this post counted), given the decision @p c of this post (only
 *  when c->prepare). THRESHOLD and STATIC: always (Algorithm 1). AWARE:
 *  by gate @p g; SHIM_GATE_RENT compares uses * (c->t_host - c->t_nic)
 *  with @p prep_ns, the predicted preparation cost (0 or less: unknown,
 *  the gate is SHIM_GATE_SECOND's). Pure. */
bool shim_ddt_gate_open(enum shim_ddt_chooser ch, enum shim_ddt_gate g,
			const struct shim_ddt_choice *c, uint64_t uses,
			double prep_ns);

/** SPINNIC_DDT_GATE: second (unset), eager, rent.
 *  @return the gate or -EINVAL */
int shim_ddt_gate_parse(const char *v);

/** SPINNIC_DDT_CHOOSER: aware (unset), static, threshold.
 *  @return the chooser or -EINVAL */
int shim_ddt_chooser_parse(const char *v);

#endif
