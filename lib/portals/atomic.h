/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC's atomic arithmetic (Portals 4 PtlAtomic, PtlFetchAtomic,
 * PtlSwap at the target): which (operation, datatype) pairs the
 * specification allows, and applying one element-wise to memory, atomic
 * against concurrent callers. Pure: no NIC state. Called by the target
 * engine once atomics are wired (doc/NOTES.md "NIC atomics"); internal to
 * lib/portals. Numbers: SPINNIC_PTL_* of wire.h (portals4.h's ptl_op_t,
 * ptl_datatype_t).
 */
#ifndef PTL_ATOMIC_H
#define PTL_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>

#include "wire.h"

/**
 * Whether the specification allows an operation on a datatype: MIN, MAX
 * and the ordered conditional swaps (CSWAP_LE/LT/GE/GT) on integers and
 * reals; SUM, PROD, SWAP, CSWAP, CSWAP_NE on every type; LOR, LAND, LXOR,
 * BOR, BAND, BXOR and MSWAP on integers only.
 * @param op SPINNIC_PTL_MIN .. SPINNIC_PTL_MSWAP.
 * @param type SPINNIC_PTL_INT8_T .. SPINNIC_PTL_LONG_DOUBLE_COMPLEX.
 * @return true if allowed; false for a refused pair or an unknown value.
 */
bool ptl_atomic_valid(unsigned int op, unsigned int type);

/**
 * Size of one element of a datatype (long double: sizeof(long double),
 * 16 on x86-64 of which 10 bytes carry the value).
 * @param type a datatype.
 * @return bytes; 0 for an unknown type.
 */
size_t ptl_atomic_type_size(unsigned int type);

/**
 * Apply an atomic operation element by element: for each element t of
 * @p target and v of @p operand, t = op(t, v) (SWAP: t = v; CSWAP*: t = v
 * when compare <op> t, the compare value on the left; MSWAP: t = (v & mask)
 * | (t & ~mask)), the old t copied to @p fetch_out. Each element is atomic
 * against concurrent callers using the same datatype on the same element
 * (natively aligned 1/2/4/8-byte integers, float and double with the
 * CPU's atomic instructions, so host atomics on them are coherent too;
 * complex types, long double and unaligned elements under a striped lock,
 * which only other callers of this function take). No alignment is
 * required of any buffer. MIN/MAX use < and >: a NaN target stays, a NaN
 * operand changes nothing. Signed integers wrap (two's complement).
 * @param op SPINNIC_PTL_*, valid for @p type (ptl_atomic_valid()).
 * @param type SPINNIC_PTL_*_T datatype.
 * @param target the memory operated on (len bytes).
 * @param operand the initiator's values (len bytes).
 * @param compare_or_mask CSWAP*: the value compared with each element;
 *   MSWAP: the mask; one element, used for every element; ignored (may be
 *   NULL) by other operations.
 * @param len bytes, a multiple of the element size (0: nothing done).
 * @param fetch_out receives the old values (len bytes), or NULL.
 * @return 0; -EINVAL (pair not valid, len not a multiple of the element
 *   size, a buffer NULL that is needed).
 */
int ptl_atomic_apply(unsigned int op, unsigned int type, void *target,
		     const void *operand, const void *compare_or_mask,
		     size_t len, void *fetch_out);

#endif
