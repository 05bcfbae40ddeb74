#include "octree.h"

#include <stdlib.h>
#include <string.h>

int bh_max_nodes(int n) { return 6 * n + 1024; }

typedef struct builder {
    const bh_body *in;
    bh_node *nodes;
    int nnodes, nout;
    bh_body *out;
    int *perm;
    int cap;
} builder;

/* Fills node id (already allocated) from idx[0..n), bodies inside the cube (center c,
 * half-side h); allocates its children as one block. */
static void build(builder *b, int id, int *idx, int n, const double c[3], double h, int depth) {
    bh_node *nd = &b->nodes[id];
    memset(nd, 0, sizeof *nd);
    nd->child = -1;
    nd->size = 2 * h;
    nd->first = -1;
    if (n <= BH_LEAF || depth >= 40) {
        nd->first = b->nout;
        nd->count = n;
        double m = 0, s[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            const bh_body *x = &b->in[idx[i]];
            b->out[b->nout] = *x;
            b->perm[b->nout++] = idx[i];
            m += x->mass;
            for (int d = 0; d < 3; d++) s[d] += x->mass * x->pos[d];
        }
        nd->mass = m;
        for (int d = 0; d < 3; d++) nd->com[d] = m > 0 ? s[d] / m : c[d];
        return;
    }
    /* partition by octant (stable counting sort through tmp) */
    int cnt[8] = {0}, start[8];
    int *oct = malloc(sizeof *oct * (size_t)n);
    for (int i = 0; i < n; i++) {
        const double *p = b->in[idx[i]].pos;
        oct[i] = (p[0] >= c[0]) | ((p[1] >= c[1]) << 1) | ((p[2] >= c[2]) << 2);
        cnt[oct[i]]++;
    }
    for (int k = 0, s = 0; k < 8; k++) {
        start[k] = s;
        s += cnt[k];
    }
    int *tmp = malloc(sizeof *tmp * (size_t)n), pos[8];
    memcpy(pos, start, sizeof pos);
    for (int i = 0; i < n; i++) tmp[pos[oct[i]]++] = idx[i];
    memcpy(idx, tmp, sizeof *idx * (size_t)n);
    free(tmp);
    free(oct);
    int nchild = 0;
    for (int k = 0; k < 8; k++) nchild += cnt[k] > 0;
    if (b->nnodes + nchild > b->cap) abort(); /* cannot happen within bh_max_nodes for sane inputs */
    const int base = b->nnodes;
    b->nnodes += nchild;
    double m = 0, s[3] = {0, 0, 0};
    for (int k = 0, j = 0; k < 8; k++) {
        if (!cnt[k]) continue;
        double cc[3] = {c[0] + (k & 1 ? h / 2 : -h / 2), c[1] + (k & 2 ? h / 2 : -h / 2),
                        c[2] + (k & 4 ? h / 2 : -h / 2)};
        const int ch = base + j++;
        build(b, ch, idx + start[k], cnt[k], cc, h / 2, depth + 1);
        m += b->nodes[ch].mass;
        for (int d = 0; d < 3; d++) s[d] += b->nodes[ch].mass * b->nodes[ch].com[d];
    }
    nd = &b->nodes[id];
    nd->child = base;
    nd->nchild = nchild;
    nd->count = n;
    nd->mass = m;
    for (int d = 0; d < 3; d++) nd->com[d] = m > 0 ? s[d] / m : c[d];
}

int bh_build(const bh_body *in, int n, bh_node *nodes, bh_body *out, int *perm) {
    if (n == 0) return 0;
    double lo[3], hi[3];
    for (int d = 0; d < 3; d++) lo[d] = hi[d] = in[0].pos[d];
    for (int i = 1; i < n; i++)
        for (int d = 0; d < 3; d++) {
            if (in[i].pos[d] < lo[d]) lo[d] = in[i].pos[d];
            if (in[i].pos[d] > hi[d]) hi[d] = in[i].pos[d];
        }
    double c[3], h = 0;
    for (int d = 0; d < 3; d++) {
        c[d] = (lo[d] + hi[d]) / 2;
        if ((hi[d] - lo[d]) / 2 > h) h = (hi[d] - lo[d]) / 2;
    }
    h = h * 1.0001 + 1e-12;
    int *idx = malloc(sizeof *idx * (size_t)n);
    for (int i = 0; i < n; i++) idx[i] = i;
    builder b = {in, nodes, 1, 0, out, perm, bh_max_nodes(n)};
    build(&b, 0, idx, n, c, h, 0);
    free(idx);
    return b.nnodes;
}
