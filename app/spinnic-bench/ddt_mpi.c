/* SPDX-License-Identifier: BSD-3-Clause */
/* A ddt type rebuilt as an MPI datatype from its constructor arguments. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "ddt_mpi.h"

static void
finalize_at_exit(void)
{
	int done = 0;

	MPI_Finalized(&done);
	if (!done)
		MPI_Finalize();
}

int
ddt_mpi_init(void)
{
	int init = 0;

	MPI_Initialized(&init);
	if (init)
		return 0;
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
		fprintf(stderr, "ddt_mpi: MPI_Init failed\n");
		return -EIO;
	}
	atexit(finalize_at_exit);
	return 0;
}

static int
base_type(enum ddt_base b, MPI_Datatype *type_p)
{
	static const struct {
		enum ddt_base b;
		MPI_Datatype m;
	} map[] = {
		{ DDT_BYTE, MPI_BYTE },
		{ DDT_CHAR, MPI_CHAR },
		{ DDT_INT8, MPI_INT8_T },
		{ DDT_UINT8, MPI_UINT8_T },
		{ DDT_INT16, MPI_INT16_T },
		{ DDT_UINT16, MPI_UINT16_T },
		{ DDT_INT32, MPI_INT32_T },
		{ DDT_UINT32, MPI_UINT32_T },
		{ DDT_INT64, MPI_INT64_T },
		{ DDT_UINT64, MPI_UINT64_T },
		{ DDT_FLOAT, MPI_FLOAT },
		{ DDT_DOUBLE, MPI_DOUBLE },
		{ DDT_COMPLEX, MPI_C_FLOAT_COMPLEX },
		{ DDT_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].b == b) {
			*type_p = map[i].m;
			return 0;
		}
	return -EINVAL;
}

static int
fits_int(int64_t v)
{
	return v >= INT_MIN && v <= INT_MAX;
}

/* int copy of an int64 array; NULL with *rc_p set when a value does not fit */
static int *
to_int(const int64_t *a, int64_t n, int *rc_p)
{
	int *r = malloc((size_t)(n > 0 ? n : 1) * sizeof(*r));

	if (r == NULL) {
		*rc_p = -ENOMEM;
		return NULL;
	}
	for (int64_t i = 0; i < n; i++) {
		if (!fits_int(a[i])) {
			free(r);
			*rc_p = -ERANGE;
			return NULL;
		}
		r[i] = (int)a[i];
	}
	return r;
}

static MPI_Aint *
to_aint(const int64_t *a, int64_t n, int *rc_p)
{
	MPI_Aint *r = malloc((size_t)(n > 0 ? n : 1) * sizeof(*r));

	if (r == NULL) {
		*rc_p = -ENOMEM;
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		r[i] = (MPI_Aint)a[i];
	return r;
}

/* Resize a derived type to lib/ddt's bounds where they differ. */
static int
match_bounds(const struct ddt_type *t, enum ddt_combiner comb,
	     struct ddt_mpi_adjust *adj, MPI_Datatype *type_p)
{
	MPI_Datatype r;
	MPI_Aint lb, ext;

	MPI_Type_get_extent(*type_p, &lb, &ext);
	if (lb == ddt_lb(t) && ext == ddt_extent(t))
		return 0;
	if (MPI_Type_create_resized(*type_p, (MPI_Aint)ddt_lb(t),
				    (MPI_Aint)ddt_extent(t), &r) != MPI_SUCCESS)
		return -EIO;
	MPI_Type_free(type_p);
	*type_p = r;
	if (comb == DDT_COMBINER_STRUCT)
		adj->structs++;
	else
		adj->others++;
	return 0;
}

/* Derived types are freed by the caller once their parent holds them;
 * *derived_p says whether type_p is one (predefined ones must not be). */
static int
build(const struct ddt_type *t, unsigned int flags,
      struct ddt_mpi_adjust *adj, MPI_Datatype *type_p, int *derived_p)
{
	MPI_Datatype old = MPI_DATATYPE_NULL, *olds = NULL;
	int old_derived = 0, *olds_derived = NULL;
	int *bl = NULL, *d = NULL, *sz = NULL, *sub = NULL, *st = NULL;
	MPI_Aint *ad = NULL;
	struct ddt_contents c;
	int rc, mrc = MPI_SUCCESS, n;

	rc = ddt_get_contents(t, &c);
	if (rc < 0)
		return rc;
	*derived_p = 0;
	if (c.combiner == DDT_COMBINER_NAMED)
		return base_type(c.base, type_p);
	if (!fits_int(c.count) || !fits_int(c.blocklen))
		return -ERANGE;
	n = (int)c.count;
	if (c.combiner != DDT_COMBINER_STRUCT) {
		rc = build(c.types[0], flags, adj, &old, &old_derived);
		if (rc < 0)
			return rc;
	}

	switch (c.combiner) {
	case DDT_COMBINER_CONTIGUOUS:
		mrc = MPI_Type_contiguous(n, old, type_p);
		break;
	case DDT_COMBINER_VECTOR:
		if (!fits_int(c.stride)) {
			rc = -ERANGE;
			break;
		}
		mrc = MPI_Type_vector(n, (int)c.blocklen, (int)c.stride, old,
				      type_p);
		break;
	case DDT_COMBINER_HVECTOR:
		mrc = MPI_Type_create_hvector(n, (int)c.blocklen,
					      (MPI_Aint)c.stride, old, type_p);
		break;
	case DDT_COMBINER_INDEXED:
		bl = to_int(c.blocklens, n, &rc);
		d = bl ? to_int(c.displs, n, &rc) : NULL;
		if (d != NULL)
			mrc = MPI_Type_indexed(n, bl, d, old, type_p);
		break;
	case DDT_COMBINER_HINDEXED:
		bl = to_int(c.blocklens, n, &rc);
		ad = bl ? to_aint(c.displs, n, &rc) : NULL;
		if (ad != NULL)
			mrc = MPI_Type_create_hindexed(n, bl, ad, old, type_p);
		break;
	case DDT_COMBINER_INDEXED_BLOCK:
		d = to_int(c.displs, n, &rc);
		if (d != NULL)
			mrc = MPI_Type_create_indexed_block(n, (int)c.blocklen,
							    d, old, type_p);
		break;
	case DDT_COMBINER_HINDEXED_BLOCK:
		ad = to_aint(c.displs, n, &rc);
		if (ad != NULL)
			mrc = MPI_Type_create_hindexed_block(n,
				(int)c.blocklen, ad, old, type_p);
		break;
	case DDT_COMBINER_STRUCT:
		bl = to_int(c.blocklens, n, &rc);
		ad = bl ? to_aint(c.displs, n, &rc) : NULL;
		olds = calloc((size_t)(n > 0 ? n : 1), sizeof(*olds));
		olds_derived = calloc((size_t)(n > 0 ? n : 1),
				      sizeof(*olds_derived));
		if (olds == NULL || olds_derived == NULL)
			rc = -ENOMEM;
		for (int i = 0; rc == 0 && ad != NULL && i < n; i++)
			rc = build(c.types[i], flags, adj, &olds[i],
				   &olds_derived[i]);
		if (rc == 0 && ad != NULL)
			mrc = MPI_Type_create_struct(n, bl, ad, olds, type_p);
		break;
	case DDT_COMBINER_SUBARRAY:
		sz = to_int(c.sizes, n, &rc);
		sub = sz ? to_int(c.subsizes, n, &rc) : NULL;
		st = sub ? to_int(c.starts, n, &rc) : NULL;
		if (st != NULL)
			mrc = MPI_Type_create_subarray(n, sz, sub, st,
				c.order == DDT_ORDER_C ? MPI_ORDER_C :
							 MPI_ORDER_FORTRAN,
				old, type_p);
		break;
	case DDT_COMBINER_RESIZED:
		mrc = MPI_Type_create_resized(old, (MPI_Aint)c.lb,
					      (MPI_Aint)c.extent, type_p);
		break;
	case DDT_COMBINER_DUP:
		mrc = MPI_Type_dup(old, type_p);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (rc == 0 && mrc != MPI_SUCCESS)
		rc = -EIO;
	if (rc == 0)
		*derived_p = 1;
	if (rc == 0 && (flags & DDT_MPI_MATCH_BOUNDS))
		rc = match_bounds(t, c.combiner, adj, type_p);

	if (old_derived)
		MPI_Type_free(&old);
	for (int i = 0; olds_derived != NULL && i < n; i++)
		if (olds_derived[i])
			MPI_Type_free(&olds[i]);
	free(olds_derived);
	free(olds);
	free(st);
	free(sub);
	free(sz);
	free(ad);
	free(d);
	free(bl);
	return rc;
}

int
ddt_mpi_type(const struct ddt_type *t, unsigned int flags,
	     MPI_Datatype *type_p, struct ddt_mpi_adjust *adj_p)
{
	struct ddt_mpi_adjust adj = { 0, 0 };
	MPI_Datatype m;
	int derived, rc;

	rc = build(t, flags, &adj, &m, &derived);
	if (adj_p != NULL)
		*adj_p = adj;
	if (rc < 0)
		return rc;
	/* Always hand back a derived, committed type the caller may free. */
	if (!derived && MPI_Type_dup(m, &m) != MPI_SUCCESS)
		return -EIO;
	if (MPI_Type_commit(&m) != MPI_SUCCESS) {
		MPI_Type_free(&m);
		return -EIO;
	}
	*type_p = m;
	return 0;
}

void
ddt_mpi_type_free(MPI_Datatype *type)
{
	if (*type != MPI_DATATYPE_NULL)
		MPI_Type_free(type);
}
