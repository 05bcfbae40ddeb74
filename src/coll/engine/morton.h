/* Morton (Z-order) schedule over the P x P block matrix. MPI-free.
 *
 * Cell (r, c) of the receive-buffer matrix is block c of process r's receive buffer
 * (for Alltoall it comes from block r of process c's send buffer; for Allgather from
 * process c's send vector). The cells are ordered along the Z curve over the next power
 * of two N >= P (z bits interleave r and c: r on the odd bits, c on the even bits),
 * skipping cells outside P x P, and the curve is cut into P segments of P cells each;
 * segment k is process k's work. */
#ifndef CLAMPI_COLL_MORTON_H
#define CLAMPI_COLL_MORTON_H

#include <stdint.h>

typedef struct clampi_coll_cell {
    uint32_t r; /* receiving process (row of the recv-buffer matrix) */
    uint32_t c; /* sending process (column) */
} clampi_coll_cell;

/* Interleaves r (odd bits) and c (even bits) into a Morton index, and back. */
uint64_t clampi_coll_morton_encode(uint32_t r, uint32_t c);
void clampi_coll_morton_decode(uint64_t z, uint32_t *r, uint32_t *c);

/* Writes segment k (0 <= k < p) of the Morton schedule for p processes into out[0..p-1]
 * (exactly p cells). Returns the number of cells written (p), or -1 on bad arguments. */
int clampi_coll_morton_segment(uint32_t p, uint32_t k, clampi_coll_cell *out);

/* The naive schedule's segment k: row k, cells (k, 0), (k, 1), ..., (k, p-1). */
int clampi_coll_naive_segment(uint32_t p, uint32_t k, clampi_coll_cell *out);

#endif
