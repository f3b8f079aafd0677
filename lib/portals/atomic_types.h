/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Portals 4 atomic datatypes and operations: each type's size and kind,
 * which kinds each operation takes (the specification's table). Header
 * only, libc only: the NIC (atomic.c, cmd.c, wire.c) and the client
 * library (lib/shim's argument checks) read the same table.
 */
#ifndef SPINNIC_ATOMIC_TYPES_H
#define SPINNIC_ATOMIC_TYPES_H

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

enum atomic_kind { AK_SINT, AK_UINT, AK_REAL, AK_CPLX };

#define K(k) (1u << (k))
#define K_INT (K(AK_SINT) | K(AK_UINT))
#define K_ORD (K_INT | K(AK_REAL))
#define K_ALL (K_ORD | K(AK_CPLX))

struct atomic_type {
	uint8_t size;
	uint8_t kind;
};

static const struct atomic_type atomic_types[SPINNIC_PTL_DATATYPE_LAST] = {
	[SPINNIC_PTL_INT8_T] = { 1, AK_SINT },
	[SPINNIC_PTL_UINT8_T] = { 1, AK_UINT },
	[SPINNIC_PTL_INT16_T] = { 2, AK_SINT },
	[SPINNIC_PTL_UINT16_T] = { 2, AK_UINT },
	[SPINNIC_PTL_INT32_T] = { 4, AK_SINT },
	[SPINNIC_PTL_UINT32_T] = { 4, AK_UINT },
	[SPINNIC_PTL_INT64_T] = { 8, AK_SINT },
	[SPINNIC_PTL_UINT64_T] = { 8, AK_UINT },
	[SPINNIC_PTL_FLOAT] = { sizeof(float), AK_REAL },
	[SPINNIC_PTL_FLOAT_COMPLEX] = { sizeof(float complex), AK_CPLX },
	[SPINNIC_PTL_DOUBLE] = { sizeof(double), AK_REAL },
	[SPINNIC_PTL_DOUBLE_COMPLEX] = { sizeof(double complex), AK_CPLX },
	[SPINNIC_PTL_LONG_DOUBLE] = { sizeof(long double), AK_REAL },
	[SPINNIC_PTL_LONG_DOUBLE_COMPLEX] = { sizeof(long double complex),
					      AK_CPLX },
};

/* the kinds of datatype each operation takes (atomic.h) */
static const uint8_t atomic_op_kinds[SPINNIC_PTL_OP_LAST] = {
	[SPINNIC_PTL_MIN] = K_ORD, [SPINNIC_PTL_MAX] = K_ORD,
	[SPINNIC_PTL_SUM] = K_ALL, [SPINNIC_PTL_PROD] = K_ALL,
	[SPINNIC_PTL_LOR] = K_INT, [SPINNIC_PTL_LAND] = K_INT,
	[SPINNIC_PTL_BOR] = K_INT, [SPINNIC_PTL_BAND] = K_INT,
	[SPINNIC_PTL_LXOR] = K_INT, [SPINNIC_PTL_BXOR] = K_INT,
	[SPINNIC_PTL_SWAP] = K_ALL, [SPINNIC_PTL_CSWAP] = K_ALL,
	[SPINNIC_PTL_CSWAP_NE] = K_ALL, [SPINNIC_PTL_CSWAP_LE] = K_ORD,
	[SPINNIC_PTL_CSWAP_LT] = K_ORD, [SPINNIC_PTL_CSWAP_GE] = K_ORD,
	[SPINNIC_PTL_CSWAP_GT] = K_ORD, [SPINNIC_PTL_MSWAP] = K_INT,
};

/** Whether the specification allows operation @p op on datatype @p type
 *  (SPINNIC_PTL_* numbers; unknown values: no). */
static inline bool
spinnic_atomic_valid(unsigned int op, unsigned int type)
{
	if (op >= SPINNIC_PTL_OP_LAST || type >= SPINNIC_PTL_DATATYPE_LAST)
		return false;
	return (atomic_op_kinds[op] & K(atomic_types[type].kind)) != 0;
}

/** Whether operation @p op is PtlSwap's (SWAP, the CSWAPs, MSWAP); the
 *  others are PtlAtomic's and PtlFetchAtomic's. */
static inline bool
spinnic_atomic_swap_op(unsigned int op)
{
	return op == SPINNIC_PTL_SWAP || op >= SPINNIC_PTL_CSWAP;
}

/** Bytes of one element of @p type; 0 for an unknown type. */
static inline size_t
spinnic_atomic_size(unsigned int type)
{
	return type < SPINNIC_PTL_DATATYPE_LAST ? atomic_types[type].size : 0;
}

#endif
