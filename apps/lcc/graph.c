#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unit(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* CSR from m directed pairs: both directions, no self loops, no duplicates. */
static int build_csr(graph *g, int64_t n, const int64_t *src, const int64_t *dst, int64_t m) {
    g->n = n;
    g->row = calloc((size_t)n + 1, sizeof *g->row);
    int64_t *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!g->row || !fill) return -1;
    for (int64_t i = 0; i < m; i++)
        if (src[i] != dst[i]) {
            g->row[src[i] + 1]++;
            g->row[dst[i] + 1]++;
        }
    for (int64_t v = 0; v < n; v++) g->row[v + 1] += g->row[v];
    int32_t *adj = malloc((size_t)(g->row[n] ? g->row[n] : 1) * sizeof *adj);
    if (!adj) return -1;
    for (int64_t i = 0; i < m; i++) {
        if (src[i] == dst[i]) continue;
        adj[g->row[src[i]] + fill[src[i]]++] = (int32_t)dst[i];
        adj[g->row[dst[i]] + fill[dst[i]]++] = (int32_t)src[i];
    }
    /* sort and deduplicate each list, compacting in place */
    int64_t out = 0;
    for (int64_t v = 0; v < n; v++) {
        int64_t b = g->row[v], e = g->row[v + 1];
        qsort(adj + b, (size_t)(e - b), sizeof *adj, cmp_i32);
        g->row[v] = out;
        for (int64_t i = b; i < e; i++)
            if (i == b || adj[i] != adj[i - 1]) adj[out++] = adj[i];
    }
    g->row[n] = out;
    g->adj = adj;
    free(fill);
    return 0;
}

int graph_rmat(graph *g, int scale, int edgefactor, uint64_t seed) {
    const double a = 0.57, b = 0.19, c = 0.19;
    const int64_t n = (int64_t)1 << scale, m = n * edgefactor;
    int64_t *src = malloc((size_t)m * sizeof *src), *dst = malloc((size_t)m * sizeof *dst);
    int64_t *perm = malloc((size_t)n * sizeof *perm);
    if (!src || !dst || !perm) return -1;
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    for (int64_t i = 0; i < m; i++) {
        int64_t u = 0, v = 0;
        for (int bit = 0; bit < scale; bit++) {
            double r = unit(&s);
            int ub = r >= a + b, vb = (r >= a && r < a + b) || r >= a + b + c;
            u |= (int64_t)ub << bit;
            v |= (int64_t)vb << bit;
        }
        src[i] = u;
        dst[i] = v;
    }
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(splitmix(&s) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int64_t i = 0; i < m; i++) {
        src[i] = perm[src[i]];
        dst[i] = perm[dst[i]];
    }
    int rc = build_csr(g, n, src, dst, m);
    free(src);
    free(dst);
    free(perm);
    return rc;
}

int graph_read_edges(graph *g, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int64_t cap = 1024, m = 0, n = 0;
    int64_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
    char line[512];
    while (src && dst && fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '%' || *p == '\n' || *p == '\r' || !*p) continue;
        long long u, v;
        if (sscanf(p, "%lld %lld", &u, &v) != 2 || u < 0 || v < 0 || u > INT32_MAX || v > INT32_MAX) {
            fclose(f);
            free(src);
            free(dst);
            return -1;
        }
        if (m == cap) {
            cap *= 2;
            src = realloc(src, cap * sizeof *src);
            dst = realloc(dst, cap * sizeof *dst);
            if (!src || !dst) break;
        }
        src[m] = u;
        dst[m++] = v;
        if (u + 1 > n) n = u + 1;
        if (v + 1 > n) n = v + 1;
    }
    fclose(f);
    int rc = src && dst ? build_csr(g, n, src, dst, m) : -1;
    free(src);
    free(dst);
    return rc;
}

void graph_free(graph *g) {
    free(g->row);
    free(g->adj);
    memset(g, 0, sizeof *g);
}

int64_t graph_intersect(const int32_t *a, int64_t na, const int32_t *b, int64_t nb) {
    int64_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j])
            i++;
        else if (a[i] > b[j])
            j++;
        else {
            k++;
            i++;
            j++;
        }
    }
    return k;
}

int64_t graph_triangles_at(const graph *g, int64_t v) {
    int64_t t = 0;
    for (int64_t i = g->row[v]; i < g->row[v + 1]; i++) {
        int32_t u = g->adj[i];
        t += graph_intersect(g->adj + g->row[v], g->row[v + 1] - g->row[v], g->adj + g->row[u],
                             g->row[u + 1] - g->row[u]);
    }
    return t / 2; /* each triangle (v, u, w) is seen from u and from w */
}

double graph_lcc(int64_t d, int64_t t) { return d < 2 ? 0.0 : (double)t / ((double)d * (double)(d - 1) / 2.0); }
