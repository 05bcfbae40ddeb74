/* What the generated Fortran entry points (gen_entry_points.py) need: the Fortran
 * sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE) as each MPI lays them out,
 * status conversion, Fortran strings, and the symbol aliases. Include only from the
 * generated file and fortran_support.c. */
#ifndef CLAMPI_PMPI_FORTRAN_SUPPORT_H
#define CLAMPI_PMPI_FORTRAN_SUPPORT_H
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

#include "clampi/export.h"

#include "pmpi/match_entry.h" /* clampi_pm_message_f2c/c2f */

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is C int (the MPIs clampi builds with)");

/* Fortran's .TRUE. as gfortran and Intel's compilers both read it (odd = true). */
#define CLAMPI_F_TRUE 1
#define CLAMPI_F_MAX_DIMS 64

/* Every spelling a Fortran compiler may use for one entry point. */
#define CLAMPI_F_ALIAS(sym, fn) extern __typeof__(fn) sym __attribute__((alias(#fn))) CLAMPI_API;

/* A C array for n handles or statuses: on the stack up to 32, else on the heap. */
#define CLAMPI_F_ARRAY(type, name, n)                                                           \
    type name##_stack[32];                                                                      \
    type *name = (n) <= 32 ? name##_stack : malloc(sizeof(type) * (size_t)((n) > 0 ? (n) : 1)); \
    if (!name) {                                                                                \
        if (ierr) *ierr = MPI_ERR_NO_MEM;                                                       \
        return;                                                                                 \
    }
#define CLAMPI_F_ARRAY_FREE(name) \
    if (name != name##_stack) free(name)

/* Choice buffers: the Fortran MPI_BOTTOM / MPI_IN_PLACE become C's. */
void *clampi_f_buf(void *buf);   /* mpif.h, `use mpi` */
void *clampi_f08_buf(void *buf); /* `use mpi_f08` */

int clampi_f_status_ignored(const MPI_Fint *status);
void clampi_f_status_in(const MPI_Fint *f, MPI_Status *c);
int clampi_f_statuses_ignored(const MPI_Fint *statuses);
void clampi_f_status_out(const MPI_Status *c, MPI_Fint *f);
MPI_Fint *clampi_f_status_at(MPI_Fint *statuses, int k);
int clampi_f08_status_ignored(const MPI_Fint *status);
void clampi_f08_status_in(const MPI_Fint *f, MPI_Status *c);
int clampi_f08_statuses_ignored(const MPI_Fint *statuses);
void clampi_f08_status_out(const MPI_Status *c, MPI_Fint *f);
MPI_Fint *clampi_f08_status_at(MPI_Fint *statuses, int k);

/* A Fortran string (blank-padded, length passed apart) as a C string. */
void clampi_f_string(char *dst, size_t cap, const char *src, size_t len);

/* The next definition of a Fortran symbol (the MPI's own), never `self`. */
void (*clampi_f_next(const char *name, void (*self)(void)))(void);
/* The first of names that the MPI defines (RTLD_NEXT), never `self`; NULL if none. */
void (*clampi_f_next_of(const char *const names[], size_t n, void (*self)(void)))(void);
/* The same, looked up once and kept in *slot. */
void (*clampi_f_next_cached(void (**slot)(void), const char *const names[], size_t n, void (*self)(void)))(void);

#define CLAMPI_F08 1

#endif
