/* Barnes-Hut octree over one rank's bodies, laid out flat so it can live in an RMA
 * window: nodes[0] is the root, a node's children are contiguous (one get fetches them
 * all), leaves hold a contiguous run of the body records (which the build writes in
 * leaf order). Plummer softening. */
#ifndef CLAMPI_BH_OCTREE_H
#define CLAMPI_BH_OCTREE_H
#include <stdint.h>

#define BH_LEAF 8 /* bodies per leaf at most (unless they coincide) */

typedef struct bh_body {
    double pos[3], mass;
} bh_body; /* 32 bytes: window record */
typedef struct bh_node {
    double com[3], mass;   /* centre of mass and total mass of the subtree */
    double size;           /* cell side length (opening criterion: size / distance < theta) */
    int32_t child, nchild; /* children: nodes [child, child+nchild); nchild = 0 in a leaf */
    int32_t first, count;  /* bodies in the subtree; leaf: records [first, first+count), else first = -1 */
} bh_node;                 /* 56 bytes */

/* Nodes a tree of n bodies may need at most. */
int bh_max_nodes(int n);
/* Builds the tree of bodies in[0..n) into nodes (returns how many, 0 if n = 0) and writes
 * the bodies in leaf order to out; perm[k] = index in `in` of out[k]. */
int bh_build(const bh_body *in, int n, bh_node *nodes, bh_body *out, int *perm);
/* Adds to acc the acceleration at p from a body/cell of mass m at q (softening eps2). */
static inline void bh_interact(const double p[3], const double q[3], double m, double eps2, double acc[3]) {
    double d0 = q[0] - p[0], d1 = q[1] - p[1], d2 = q[2] - p[2];
    double r2 = d0 * d0 + d1 * d1 + d2 * d2 + eps2;
    double inv = 1.0 / __builtin_sqrt(r2);
    double f = m * inv * inv * inv;
    acc[0] += f * d0;
    acc[1] += f * d1;
    acc[2] += f * d2;
}
#endif
