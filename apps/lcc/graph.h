/* Undirected graphs for LCC: a Graph500-style R-MAT (Kronecker) generator, a SNAP-style
 * edge-list reader, CSR with sorted, duplicate-free adjacency lists and no self loops,
 * and the serial reference (triangles per vertex by sorted-list intersection). */
#ifndef CLAMPI_LCC_GRAPH_H
#define CLAMPI_LCC_GRAPH_H
#include <stdint.h>

typedef struct graph {
    int64_t n;    /* vertices 0..n-1 */
    int64_t *row; /* n+1 offsets into adj */
    int32_t *adj; /* sorted neighbour lists */
} graph;

/* R-MAT with a=0.57, b=0.19, c=0.19 (d=0.05): 2^scale vertices, edgefactor*2^scale
 * generated edges, vertex labels randomly permuted (as Graph500 does); deterministic in seed. */
int graph_rmat(graph *g, int scale, int edgefactor, uint64_t seed);
/* "u v" per line, '#' comments, any whitespace; vertex ids >= 0. Returns 0 or -1. */
int graph_read_edges(graph *g, const char *path);
void graph_free(graph *g);
/* |adj(a) ∩ adj(b)| for two sorted lists. */
int64_t graph_intersect(const int32_t *a, int64_t na, const int32_t *b, int64_t nb);
/* Triangles through v (serial reference). */
int64_t graph_triangles_at(const graph *g, int64_t v);
/* LCC of a vertex with degree d and t triangles: t / (d (d-1) / 2), 0 for d < 2. */
double graph_lcc(int64_t d, int64_t t);
#endif
