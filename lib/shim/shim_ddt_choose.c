/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout-aware typed receives: a layout's features (class, blocks, block
 * lengths, packets, buffer location) and the decision for one post by
 * today's class rule (static), paper 001's Algorithm 1 (threshold) or a
 * cost table (aware). Deterministic; the layout cache (shim_ddt_lc.c)
 * calls it on every post.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "shim_ddt_choose.h"

/* The first blocks of a general layout, adjacent ones merged. */
struct feat_walk {
	int64_t n, bytes;       /* complete merged blocks and their bytes */
	int64_t cur_off, cur_len; /* the block being merged (len 0: none) */
	int64_t min, max;
};

static void
walk_close(struct feat_walk *w)
{
	if (w->cur_len == 0)
		return;
	w->n++;
	w->bytes += w->cur_len;
	if (w->cur_len < w->min)
		w->min = w->cur_len;
	if (w->cur_len > w->max)
		w->max = w->cur_len;
	w->cur_len = 0;
}

static int
walk_block(void *arg, int64_t off, int64_t len, int64_t stream_off)
{
	struct feat_walk *w = arg;

	(void)stream_off;
	if (len <= 0)
		return 0;
	if (w->cur_len > 0 && off == w->cur_off + w->cur_len) {
		w->cur_len += len;
		return 0;
	}
	walk_close(w);
	if (w->n >= SHIM_DDT_FEAT_SAMPLE)
		return 1; /* a block after the sample: enough */
	w->cur_off = off;
	w->cur_len = len;
	return 0;
}

/* Blocks of a general layout from its first SHIM_DDT_FEAT_SAMPLE merged
 * blocks: exact when there are no more, else size / their mean length.
 * The fourth slice counted them all (ddt_flatten()): 50-190 us for
 * Fig. 13's general types of 8 000-32 000 blocks, on every first post.
 * @return 0 or a negative errno */
static int
feat_general(const struct ddt_type *t, int64_t count, int64_t size,
	     struct shim_ddt_feat *f_p)
{
	struct feat_walk w = { .min = INT64_MAX };
	struct ddt_segment *s = ddt_segment_create(t, count);
	int rc;

	if (s == NULL)
		return -ENOMEM;
	rc = ddt_segment_blocks(s, 0, size, walk_block, &w);
	ddt_segment_free(s);
	if (rc < 0)
		return rc;
	if (rc == 0)
		walk_close(&w); /* the walk ended: the count is exact */
	if (w.n == 0 || w.bytes <= 0)
		return -EINVAL;
	f_p->blk_min = w.min;
	f_p->blk_max = w.max;
	f_p->nblocks = rc == 0 ? w.n :
		(int64_t)((double)size * (double)w.n / (double)w.bytes + 0.5);
	if (f_p->nblocks < w.n)
		f_p->nblocks = w.n;
	return 0;
}

int
shim_ddt_feat_get(const struct ddt_type *t, int64_t count, uint32_t payload,
		  bool in_region, struct shim_ddt_feat *f_p)
{
	struct ddt_class_info ci;
	int64_t size;
	int rc;

	memset(f_p, 0, sizeof(*f_p));
	f_p->in_region = in_region;
	f_p->cls = DDT_CLASS_CONTIG;
	if (count < 0 || __builtin_mul_overflow(ddt_size(t), count, &size))
		return -EINVAL;
	f_p->size = size;
	if (size == 0)
		return 0;
	rc = ddt_classify(t, count, &ci);
	if (rc != 0)
		return rc == -ENOMEM ? rc : -EINVAL;
	f_p->cls = ci.cls;
	if (ci.cls == DDT_CLASS_CONTIG) {
		f_p->nblocks = 1;
		f_p->blk_min = f_p->blk_max = size;
	} else if (ci.cls != DDT_CLASS_GENERAL) {
		f_p->nblocks = ci.nblocks * count;
		f_p->blk_min = f_p->blk_max = ci.blocklen;
	} else {
		rc = feat_general(t, count, size, f_p);
		if (rc != 0)
			return rc;
	}
	if (f_p->nblocks <= 0)
		f_p->nblocks = 1;
	f_p->blk_mean = (double)size / (double)f_p->nblocks;
	if (payload == 0)
		payload = 1;
	f_p->npkts = (size + payload - 1) / payload;
	f_p->blk_per_pkt = (double)f_p->nblocks / (double)f_p->npkts;
	return 0;
}

static bool
strat_is_nic(enum spin_type_strategy s)
{
	return s != SPIN_TYPE_HOST && s != SPIN_TYPE_CONTIG &&
		s != SPIN_TYPE_AUTO;
}

double
shim_ddt_predict(const struct shim_ddt_costs *c, enum spin_type_strategy s,
		 const struct shim_ddt_feat *f)
{
	return shim_ddt_predict_byte(c, s, f, -1.0);
}

double
shim_ddt_predict_byte(const struct shim_ddt_costs *c,
		      enum spin_type_strategy s,
		      const struct shim_ddt_feat *f, double byte_ns)
{
	const struct shim_ddt_cost *k;
	double work, par = 1.0;

	if (c == NULL || (unsigned)s >= SPIN_TYPE_COUNT || !c->s[s].valid)
		return -1.0;
	k = &c->s[s];
	if (byte_ns < 0.0)
		byte_ns = k->byte_ns;
	work = byte_ns * (double)f->size +
		k->block_ns * (double)f->nblocks +
		k->pkt_ns * (double)f->npkts;
	if (!f->in_region)
		work += k->out_block_ns * (double)f->nblocks;
	if (f->cls == DDT_CLASS_GENERAL)
		work += k->gen_block_ns * (double)f->nblocks;
	if (strat_is_nic(s)) {
		par = c->nhpu > 0 ? (double)c->nhpu : 1.0;
		if ((double)f->npkts < par)
			par = f->npkts > 0 ? (double)f->npkts : 1.0;
	}
	return k->msg_ns + work / par;
}

/* Today's rule (shim_ddt_type.c): specialized handlers for regular
 * layouts, read-write checkpoints for the rest. */
static enum spin_type_strategy
class_rule(enum ddt_class cls)
{
	return cls == DDT_CLASS_VECTOR || cls == DDT_CLASS_INDEXED_BLOCK ?
		SPIN_TYPE_SPECIALIZED : SPIN_TYPE_RW_CP;
}

/* The cheapest NIC strategy that can express the layout by table c, or
 * HOST when none is offered. */
static enum spin_type_strategy
cheapest_nic(const struct shim_ddt_costs *c, const struct shim_ddt_feat *f,
	     double *t_p)
{
	/* in the order of preference among near-equal costs: ro-cp before
	 * hpu-local, measured at least as fast on every general type of
	 * Fig. 13 (1.01-1.05x) and 2.3x on fft2d's transposes, whose tiles
	 * across packets the calibration's layouts cannot show (NOTES
	 * "candidate order") */
	static const enum spin_type_strategy cand[] = {
		SPIN_TYPE_SPECIALIZED, SPIN_TYPE_IOVEC, SPIN_TYPE_RO_CP,
		SPIN_TYPE_HPU_LOCAL, SPIN_TYPE_RW_CP,
	};
	enum spin_type_strategy best = SPIN_TYPE_HOST;
	double t[sizeof(cand) / sizeof(cand[0])], bt = -1.0, byte = -1.0;
	size_t i;

	/* every NIC strategy copies a byte alike (the payload into host
	 * memory); they differ in finding where a block goes. The fitted
	 * per-byte costs differ by calibration noise, which a large message
	 * multiplies (Fig. 13's nas_lu_x, sw4_y: hpu-local picked, 1.2-1.3x
	 * slower than specialized), so the candidates are compared with the
	 * least per-byte cost of the table's NIC strategies */
	for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (c->s[cand[i]].valid &&
		    (byte < 0.0 || c->s[cand[i]].byte_ns < byte))
			byte = c->s[cand[i]].byte_ns;
	for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		t[i] = -1.0;
		/* the specialized handlers know vectors and indexed blocks */
		if (cand[i] == SPIN_TYPE_SPECIALIZED &&
		    f->cls != DDT_CLASS_VECTOR &&
		    f->cls != DDT_CLASS_INDEXED_BLOCK)
			continue;
		t[i] = shim_ddt_predict_byte(c, cand[i], f, byte);
		if (t[i] >= 0.0 && (bt < 0.0 || t[i] < bt))
			bt = t[i];
	}
	/* the earliest (simplest) strategy within the hysteresis of the
	 * cheapest: a calibration's noise between strategies of nearly equal
	 * cost does not pick the more complex one */
	for (i = 0; bt >= 0.0 && i < sizeof(cand) / sizeof(cand[0]); i++)
		if (t[i] >= 0.0 && t[i] <= bt * (1.0 + SHIM_DDT_HYST)) {
			best = cand[i];
			break;
		}
	/* the candidate's own prediction is what the host is compared with */
	*t_p = best != SPIN_TYPE_HOST ? shim_ddt_predict(c, best, f) : -1.0;
	return best;
}

bool
shim_ddt_obs_add(double *ewma_p, uint32_t *n_p, double ns)
{
	if (!(ns >= 0.0) || ns > 1e12)
		return false; /* NaN, negative or absurd: not a time */
	if (*n_p == 0) {
		*ewma_p = ns;
	} else if (*n_p < SHIM_DDT_OBS_MIN) {
		/* interference on a shared CPU only adds time: the least of
		 * the first samples starts the estimate */
		if (ns < *ewma_p)
			*ewma_p = ns;
	} else {
		/* one preempted receive (10 ms among 40 us ones, seen in
		 * spinnic-bench layout) moves the estimate by at most
		 * alpha x (CLIP - 1); a lasting change still gets through,
		 * a few samples later */
		if (ns > *ewma_p * SHIM_DDT_OBS_CLIP)
			ns = *ewma_p * SHIM_DDT_OBS_CLIP;
		else if (ns < *ewma_p / SHIM_DDT_OBS_CLIP)
			ns = *ewma_p / SHIM_DDT_OBS_CLIP;
		*ewma_p += SHIM_DDT_EWMA_ALPHA * (ns - *ewma_p);
	}
	if (*n_p < UINT32_MAX)
		(*n_p)++;
	return true;
}

bool
shim_ddt_obs_sample(struct shim_ddt_obs *o, bool nic, double ns,
		    uint64_t uses)
{
	double *ew = nic ? &o->nic_ns : &o->host_ns;
	uint32_t *n = nic ? &o->n_nic : &o->n_host;
	bool *stale = nic ? &o->nic_stale : &o->host_stale;

	if (!shim_ddt_obs_add(ew, n, ns))
		return false;
	/* a re-measure of an old estimate more than CLIP times what the
	 * path costs now: a load spike's leftover (the clipped EWMA would
	 * take ~10 explorations to forget four samples at 10x), replaced.
	 * Any lower sample replacing it (first version) biased the path not
	 * taken low against the taken one's EWMA: 1.6x the flips in close
	 * calls, measured with spinnic-bench halo */
	if (*stale && *n > SHIM_DDT_OBS_MIN && ns * SHIM_DDT_OBS_CLIP < *ew)
		*ew = ns;
	*stale = false;
	if (nic)
		o->nic_at = uses;
	else
		o->host_at = uses;
	return true;
}

double
shim_ddt_ctx_sample(double ptc_ns, double nic_ns, double unpack_ns,
		    double *lat_p, bool *used_p)
{
	double out;

	if (used_p != NULL)
		*used_p = false;
	if (!(ptc_ns >= 0) || ptc_ns > 1e12)
		return NAN;
	if (!(unpack_ns >= 0) || unpack_ns > ptc_ns)
		unpack_ns = 0;
	/* the NIC's word: within the client's own time, or not used */
	if (!(nic_ns > 0) || nic_ns > ptc_ns || nic_ns + unpack_ns > ptc_ns)
		return ptc_ns;
	out = ptc_ns - nic_ns - unpack_ns;
	if (!(*lat_p >= 0) || out < *lat_p)
		*lat_p = out;
	if (used_p != NULL)
		*used_p = true;
	return nic_ns + unpack_ns + *lat_p;
}

bool
shim_ddt_explore(struct shim_ddt_obs *o, bool nic_side, uint64_t uses,
		 bool can, bool close)
{
	uint64_t at = nic_side ? o->host_at : o->nic_at;
	uint32_t n;

	if (o->explore_n < SHIM_DDT_EXPLORE_MIN || nic_side != o->on_nic)
		o->explore_n = SHIM_DDT_EXPLORE_MIN; /* a flip: look again
							soon */
	/* a close call turns on a few percent: looked at more often */
	n = close && o->explore_n > SHIM_DDT_EXPLORE_CLOSE ?
		SHIM_DDT_EXPLORE_CLOSE : o->explore_n;
	if (!can || uses < at || uses - at < n)
		return false;
	if (nic_side) {
		o->host_at = uses;
		o->host_stale = true;
	} else {
		o->nic_at = uses;
		o->nic_stale = true;
	}
	/* the choice stood: look less often (a bounded share of posts) */
	o->explore_n = o->explore_n >= SHIM_DDT_EXPLORE_MAX / 2 ?
		SHIM_DDT_EXPLORE_MAX : o->explore_n * 2;
	return true;
}

void
shim_ddt_choose(enum shim_ddt_chooser ch, const struct shim_ddt_costs *c,
		const struct shim_ddt_feat *f, bool ready,
		struct shim_ddt_choice *ch_p)
{
	shim_ddt_choose_obs(ch, c, f, NULL, ready, ch_p);
}

void
shim_ddt_choose_obs(enum shim_ddt_chooser ch, const struct shim_ddt_costs *c,
		    const struct shim_ddt_feat *f, const struct shim_ddt_obs *o,
		    bool ready, struct shim_ddt_choice *ch_p)
{
	double tn, th;

	ch_p->t_host = ch_p->t_nic = -1.0;
	if (f->size == 0 || f->cls == DDT_CLASS_CONTIG) {
		/* a plain entry on the data: nothing to prepare or unpack */
		ch_p->nic = ch_p->strat = SPIN_TYPE_CONTIG;
		ch_p->prepare = false;
		return;
	}
	if (ch == SHIM_CHOOSER_STATIC) {
		ch_p->nic = ch_p->strat = class_rule(f->cls);
		ch_p->prepare = true;
		return;
	}
	if (ch == SHIM_CHOOSER_THRESHOLD || c == NULL) {
		/* Algorithm 1: only the average block length counts */
		ch_p->nic = class_rule(f->cls);
		ch_p->prepare = f->blk_mean > SHIM_DDT_T;
	} else {
		if (o != NULL && o->built != SPIN_TYPE_AUTO &&
		    (unsigned)o->built < SPIN_TYPE_COUNT) {
			/* an object is built: only it can be posted */
			tn = shim_ddt_predict(c, o->built, f);
			ch_p->nic = tn >= 0.0 ? o->built : SPIN_TYPE_HOST;
		} else {
			ch_p->nic = cheapest_nic(c, f, &tn);
		}
		th = shim_ddt_predict(c, SPIN_TYPE_HOST, f);
		/* measured beats predicted once there are enough samples */
		if (o != NULL && o->n_host >= SHIM_DDT_OBS_MIN)
			th = o->host_ns;
		if (o != NULL && o->n_nic >= SHIM_DDT_OBS_MIN &&
		    ch_p->nic != SPIN_TYPE_HOST)
			tn = o->nic_ns;
		/* no host cost in the table: the host path cannot be judged,
		 * so the NIC wins when offered */
		ch_p->prepare = ch_p->nic != SPIN_TYPE_HOST &&
			(th < 0.0 || tn * (1.0 + SHIM_DDT_HYST) < th);
		ch_p->t_host = th;
		ch_p->t_nic = ch_p->nic != SPIN_TYPE_HOST ? tn : -1.0;
		/* on the NIC already: leave only for a host (1 + h) times
		 * faster, so that a NIC a few percent faster keeps it */
		if (o != NULL && o->on_nic && ready &&
		    ch_p->nic != SPIN_TYPE_HOST && th >= 0.0 &&
		    !(th * (1.0 + SHIM_DDT_HYST) < tn)) {
			ch_p->strat = ch_p->nic;
			return;
		}
		/* a close call the NIC has not been measured on: the table
		 * is not precise enough to decide it (seen: host predicted
		 * 9% faster, measured 10% slower), so prepare the NIC and
		 * measure it on its first receives */
		if (!ch_p->prepare && o != NULL &&
		    o->n_nic < SHIM_DDT_OBS_MIN && shim_ddt_close(ch_p)) {
			ch_p->prepare = true;
			ch_p->strat = ready ? ch_p->nic : SPIN_TYPE_HOST;
			return;
		}
	}
	ch_p->strat = ch_p->prepare && ready ? ch_p->nic : SPIN_TYPE_HOST;
}

bool
shim_ddt_close(const struct shim_ddt_choice *c)
{
	double d = c->t_host - c->t_nic;

	return c->nic != SPIN_TYPE_HOST && c->t_host > 0.0 &&
		c->t_nic >= 0.0 && (d < 0.0 ? -d : d) < SHIM_DDT_CLOSE *
		c->t_host;
}

bool
shim_ddt_gate_open(enum shim_ddt_chooser ch, enum shim_ddt_gate g,
		   const struct shim_ddt_choice *c, uint64_t uses,
		   double prep_ns)
{
	double gain;

	if (!c->prepare)
		return false;
	if (ch != SHIM_CHOOSER_AWARE || g == SHIM_GATE_EAGER)
		return true;
	if (uses < SHIM_DDT_PREP_USES)
		return false;
	if (g != SHIM_GATE_RENT || !(prep_ns > 0.0) || c->t_host < 0.0 ||
	    c->t_nic < 0.0)
		return true;
	/* ski rental: a layout used u times is expected to be used about u
	 * more times; prepare once that many uses repay the preparation */
	gain = c->t_host - c->t_nic;
	/* a close call is prepared to be measured: the table may be wrong
	 * by the close band, so the most it can gain is that much more; a
	 * preparation that cannot pay even then (ms for a 32k-block layout,
	 * Fig. 13's specfem3d_oc) is not made */
	if (shim_ddt_close(c))
		gain += SHIM_DDT_CLOSE * c->t_host;
	return gain > 0.0 && (double)uses * gain >= prep_ns;
}

int
shim_ddt_gate_parse(const char *v)
{
	if (v == NULL || *v == '\0' || strcmp(v, "rent") == 0)
		return SHIM_GATE_RENT;
	if (strcmp(v, "second") == 0)
		return SHIM_GATE_SECOND;
	if (strcmp(v, "eager") == 0)
		return SHIM_GATE_EAGER;
	return -EINVAL;
}

int
shim_ddt_chooser_parse(const char *v)
{
	if (v == NULL || *v == '\0' || strcmp(v, "aware") == 0)
		return SHIM_CHOOSER_AWARE;
	if (strcmp(v, "static") == 0)
		return SHIM_CHOOSER_STATIC;
	if (strcmp(v, "threshold") == 0)
		return SHIM_CHOOSER_THRESHOLD;
	return -EINVAL;
}
