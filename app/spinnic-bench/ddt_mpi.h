/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The system MPI beside lib/ddt: a ddt type rebuilt as an MPI datatype from
 * its constructor arguments (ddt_get_contents), for spinnic-bench ddt and the
 * MPI comparison test. Only built when MPI is found (SPINNIC_HAVE_MPI).
 */
#ifndef SPINNIC_DDT_MPI_H
#define SPINNIC_DDT_MPI_H

#include <mpi.h>

#include <ddt.h>

/**
 * Initialize MPI once as a singleton (no mpiexec needed) unless already
 * initialized; MPI_Finalize runs at exit.
 * @return 0, -EIO when MPI_Init fails
 */
int ddt_mpi_init(void);

/** ddt_mpi_type() flag: where the MPI library's lb/extent of a constructed
 * type differ from lib/ddt's, resize the MPI type to lib/ddt's bounds, so
 * that both describe the same typemap for any count. (MPICH departs from
 * the standard's sticky lb/ub markers and alignment padding in structs.) */
#define DDT_MPI_MATCH_BOUNDS 1u

/** Where ddt_mpi_type() had to change bounds (DDT_MPI_MATCH_BOUNDS). */
struct ddt_mpi_adjust {
	int structs;  /**< struct types resized */
	int others;   /**< any other constructor resized */
};

/**
 * Build and commit the MPI datatype equal to t, recursively through the
 * constructor arguments of t and its inputs.
 * @param t any ddt type (committed or not)
 * @param flags 0 or DDT_MPI_MATCH_BOUNDS
 * @param type_p receives the datatype; free it with ddt_mpi_type_free()
 * @param adj_p if not NULL, receives the bounds adjustments made
 * @return 0, -ERANGE (an argument does not fit MPI's int), -EINVAL (unknown
 *   combiner or base), -EIO (an MPI call failed)
 */
int ddt_mpi_type(const struct ddt_type *t, unsigned int flags,
		 MPI_Datatype *type_p, struct ddt_mpi_adjust *adj_p);

/** Free a datatype from ddt_mpi_type() (predefined ones are left alone). */
void ddt_mpi_type_free(MPI_Datatype *type);

#endif
