/* Barnes-Hut n-body force computation on clampi, as in the CLaMPI evaluation.
 *
 * 3-D, Plummer-sphere initial conditions, Plummer softening, velocity Verlet. Bodies are
 * generated identically on every rank, sorted by Morton key and block-partitioned; each
 * rank keeps its bodies for the whole run. Every force phase, each rank builds the
 * octree of its bodies into its window (nodes, then body records in leaf order); the
 * force on each local body is the walk of the local tree (memory) and of every remote
 * tree with one get (+ flush) for its root, for each opened cell's children (stored
 * contiguously) and for each opened leaf's bodies, opening
 * criterion size / distance < theta. The trees change every step: clampi windows are
 * user-defined mode, invalidated after each force phase.
 *
 * Configurations run side by side in one job, alternating trial by trial (a trial is a
 * whole run from the same initial state): uncached (plain MPI_Get on an MPI window),
 * fixed[:INDEX[:BUFFER]], adaptive[:INDEX[:BUFFER]]. Every configuration must end with
 * bit-identical positions. --verify checks forces against direct O(N^2) summation and
 * the energy drift (rank 0 gathers all bodies).
 *
 * Usage: bh [--bodies-per-rank N | --bodies N] [--steps S] [--theta T] [--dt DT] [--eps E]
 *           [--seed X] [--config C]... [--trials T] [--verify] [--max-force-error E]
 *           [--max-energy-drift E] [--json FILE] [--shm-direct true|false] */
#include <clampi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appkit.h"
#include "octree.h"

static int rank, nranks;

static void die(const char *msg) {
    if (rank == 0) fprintf(stderr, "bh: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- initial conditions: Plummer sphere (Aarseth, Henon & Wielen 1974) ------------ */
static uint64_t rng_state;
static double urand(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
}
static void random_direction(double r, double out[3]) {
    double z = 2 * urand() - 1, phi = 2 * M_PI * urand(), s = sqrt(1 - z * z);
    out[0] = r * s * cos(phi);
    out[1] = r * s * sin(phi);
    out[2] = r * z;
}

typedef struct body_state {
    double pos[3], vel[3], acc[3], mass;
    uint64_t key;
} body_state;

static uint64_t spread3(uint64_t x) { /* 21 bits -> every third bit */
    x &= 0x1fffff;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}
static int cmp_key(const void *a, const void *b) {
    uint64_t x = ((const body_state *)a)->key, y = ((const body_state *)b)->key;
    return (x > y) - (x < y);
}

static void plummer(body_state *b, int n, uint64_t seed) {
    rng_state = seed * 0x2545F4914F6CDD1Dull + 7;
    for (int i = 0; i < n; i++) {
        double r;
        do r = 1.0 / sqrt(pow(urand() * 0.999 + 1e-9, -2.0 / 3.0) - 1.0);
        while (r > 10);
        random_direction(r, b[i].pos);
        double x, y;
        do {
            x = urand();
            y = 0.1 * urand();
        } while (y > x * x * pow(1 - x * x, 3.5));
        random_direction(x * sqrt(2.0) * pow(1 + r * r, -0.25), b[i].vel);
        b[i].mass = 1.0 / n;
        memset(b[i].acc, 0, sizeof b[i].acc);
    }
    /* Morton keys over the bounding cube */
    double lo = 1e300, hi = -1e300;
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            lo = fmin(lo, b[i].pos[d]);
            hi = fmax(hi, b[i].pos[d]);
        }
    double scale = (double)0x1fffff / (hi - lo + 1e-12);
    for (int i = 0; i < n; i++) {
        uint64_t k = 0;
        for (int d = 0; d < 3; d++) k |= spread3((uint64_t)((b[i].pos[d] - lo) * scale)) << d;
        b[i].key = k;
    }
    qsort(b, n, sizeof *b, cmp_key);
}

/* ---- the distributed tree and the force walk -------------------------------------- */
typedef struct bh_ctx {
    int nlocal, maxnodes;
    body_state *me; /* local bodies */
    bh_body *tmpin;
    int *perm;
    double theta2, eps2;
    MPI_Aint body_off; /* byte offset of the body records in every window */
    int cached;
    MPI_Win mw;
    CMPI_Win cw;
    unsigned char *base; /* this rank's window memory */
    app_run *ev;         /* adaptation events (rank 0, clampi) */
    double t_phase0;
    long gets; /* remote reads this phase (nodes + leaf bodies) */
} bh_ctx;

static void remote_read(bh_ctx *x, void *dst, int bytes, int target, MPI_Aint disp) {
    if (x->cached) {
        CMPI_Get(dst, bytes, MPI_BYTE, target, disp, bytes, MPI_BYTE, x->cw);
        CMPI_Win_flush(target, x->cw);
    } else {
        MPI_Get(dst, bytes, MPI_BYTE, target, disp, bytes, MPI_BYTE, x->mw);
        MPI_Win_flush(target, x->mw);
    }
    x->gets++;
}

/* Acceleration at p from the tree of rank r (own tree: read in place). Remote: one get
 * for the root, one for the children block of each opened cell, one for the bodies of
 * each opened leaf. */
static void walk(bh_ctx *x, int r, const double p[3], double acc[3]) {
    bh_node stack[512];
    bh_body bodybuf[BH_LEAF * 64];
    const bh_node *nodes = (const bh_node *)x->base;
    int sp = 0;
    if (r == rank)
        stack[sp++] = nodes[0];
    else
        remote_read(x, &stack[sp++], sizeof(bh_node), r, 0);
    while (sp) {
        const bh_node nd = stack[--sp];
        if (nd.count == 0) continue;
        double d0 = nd.com[0] - p[0], d1 = nd.com[1] - p[1], d2 = nd.com[2] - p[2];
        double dist2 = d0 * d0 + d1 * d1 + d2 * d2;
        if (nd.size * nd.size < x->theta2 * dist2) { /* far enough: the cell as one body */
            bh_interact(p, nd.com, nd.mass, x->eps2, acc);
        } else if (nd.nchild == 0) { /* leaf: every body */
            const bh_body *bs;
            if (r == rank)
                bs = (const bh_body *)(x->base + x->body_off) + nd.first;
            else {
                if (nd.count > (int)(sizeof bodybuf / sizeof *bodybuf)) die("leaf too large");
                remote_read(x, bodybuf, nd.count * (int)sizeof(bh_body), r,
                            x->body_off + (MPI_Aint)nd.first * (MPI_Aint)sizeof(bh_body));
                bs = bodybuf;
            }
            for (int i = 0; i < nd.count; i++) bh_interact(p, bs[i].pos, bs[i].mass, x->eps2, acc);
        } else {
            if (sp + nd.nchild > (int)(sizeof stack / sizeof *stack)) die("tree too deep");
            if (r == rank)
                memcpy(&stack[sp], nodes + nd.child, sizeof(bh_node) * (size_t)nd.nchild);
            else
                remote_read(x, &stack[sp], nd.nchild * (int)sizeof(bh_node), r,
                            (MPI_Aint)nd.child * (MPI_Aint)sizeof(bh_node));
            sp += nd.nchild;
        }
    }
}

/* Builds this rank's tree into its window and computes every local body's acceleration.
 * Returns the force phase's time (max over ranks; the tree build is not included). */
static double force_phase(bh_ctx *x) {
    for (int i = 0; i < x->nlocal; i++) {
        memcpy(x->tmpin[i].pos, x->me[i].pos, sizeof x->tmpin[i].pos);
        x->tmpin[i].mass = x->me[i].mass;
    }
    bh_build(x->tmpin, x->nlocal, (bh_node *)x->base, (bh_body *)(x->base + x->body_off), x->perm);
    if (x->nlocal == 0) memset(x->base, 0, sizeof(bh_node)); /* an empty root */
    MPI_Barrier(MPI_COMM_WORLD);
    if (x->cached)
        CMPI_Win_lock_all(MPI_MODE_NOCHECK, x->cw);
    else
        MPI_Win_lock_all(MPI_MODE_NOCHECK, x->mw);
    double t0 = MPI_Wtime();
    for (int i = 0; i < x->nlocal; i++) {
        double acc[3] = {0, 0, 0};
        for (int k = 0; k < nranks; k++) walk(x, (rank + k) % nranks, x->me[i].pos, acc);
        memcpy(x->me[i].acc, acc, sizeof acc);
        if (x->ev && (i & 31) == 0) app_events_sample(x->ev, x->cw, MPI_Wtime() - x->t_phase0, i);
    }
    double t = MPI_Wtime() - t0, tmax;
    if (x->cached) {
        CMPI_Win_unlock_all(x->cw);
        CMPI_Win_invalidate(x->cw); /* bodies move: the trees are rebuilt */
    } else {
        MPI_Win_unlock_all(x->mw);
    }
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody reads a tree while its owner rebuilds it */
    return tmax;
}

/* ---- verification: direct summation on rank 0 -------------------------------------- */
static body_state *gather_all(bh_ctx *x, int n) {
    int bytes = x->nlocal * (int)sizeof(body_state), *counts = NULL, *displs = NULL;
    body_state *all = NULL;
    if (rank == 0) {
        counts = malloc(sizeof(int) * nranks);
        displs = malloc(sizeof(int) * nranks);
        all = malloc(sizeof *all * (size_t)n);
    }
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0, s = 0; r < nranks; r++) {
            displs[r] = s;
            s += counts[r];
        }
    MPI_Gatherv(x->me, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    return all;
}

static double energy(const body_state *b, int n, double eps2) {
    double e = 0;
    for (int i = 0; i < n; i++) {
        e += 0.5 * b[i].mass * (b[i].vel[0] * b[i].vel[0] + b[i].vel[1] * b[i].vel[1] + b[i].vel[2] * b[i].vel[2]);
        for (int j = i + 1; j < n; j++) {
            double d0 = b[i].pos[0] - b[j].pos[0], d1 = b[i].pos[1] - b[j].pos[1], d2 = b[i].pos[2] - b[j].pos[2];
            e -= b[i].mass * b[j].mass / sqrt(d0 * d0 + d1 * d1 + d2 * d2 + eps2);
        }
    }
    return e;
}

/* RMS relative force error of the Barnes-Hut accelerations against direct summation. */
static double force_error(const body_state *b, int n, double eps2, double *max_rel) {
    double num = 0, den = 0;
    *max_rel = 0;
    for (int i = 0; i < n; i++) {
        double a[3] = {0, 0, 0};
        for (int j = 0; j < n; j++) bh_interact(b[i].pos, b[j].pos, b[j].mass, eps2, a);
        double e2 = 0, a2 = 0;
        for (int d = 0; d < 3; d++) {
            e2 += (b[i].acc[d] - a[d]) * (b[i].acc[d] - a[d]);
            a2 += a[d] * a[d];
        }
        num += e2;
        den += a2;
        if (a2 > 0 && sqrt(e2 / a2) > *max_rel) *max_rel = sqrt(e2 / a2);
    }
    return sqrt(num / den);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int n = 0, per_rank = 1000, steps = 3, trials = 3, verify = 0;
    double theta = 0.5, dt = 0.01, eps = 0.02, max_ferr = 0.01, max_drift = 1e-3;
    uint64_t seed = 1;
    const char *json = NULL, *shm = NULL;
    app_run *runs = calloc(APP_MAX_CONFIGS, sizeof *runs);
    int nruns = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verify")) {
            verify = 1;
            continue;
        }
        if (!v) die("missing value after an option");
        i++;
        if (!strcmp(a, "--bodies"))
            n = atoi(v);
        else if (!strcmp(a, "--bodies-per-rank"))
            per_rank = atoi(v);
        else if (!strcmp(a, "--steps"))
            steps = atoi(v);
        else if (!strcmp(a, "--theta"))
            theta = atof(v);
        else if (!strcmp(a, "--dt"))
            dt = atof(v);
        else if (!strcmp(a, "--eps"))
            eps = atof(v);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--trials"))
            trials = atoi(v);
        else if (!strcmp(a, "--max-force-error"))
            max_ferr = atof(v);
        else if (!strcmp(a, "--max-energy-drift"))
            max_drift = atof(v);
        else if (!strcmp(a, "--json"))
            json = v;
        else if (!strcmp(a, "--shm-direct"))
            shm = v;
        else if (!strcmp(a, "--config")) {
            if (nruns == APP_MAX_CONFIGS) die("too many --config");
            if (app_parse_config(v, &runs[nruns].cfg) != 0)
                die("bad --config (uncached | fixed[:INDEX[:BUFFER]] | adaptive[:INDEX[:BUFFER]])");
            nruns++;
        } else
            die("unknown option");
    }
    if (n <= 0) n = per_rank * nranks;
    if (trials < 1 || trials > APP_MAX_TRIALS || steps < 0 || theta <= 0) die("bad --trials, --steps or --theta");
    if (nruns == 0) {
        app_parse_config("uncached", &runs[nruns++].cfg);
        app_parse_config("fixed", &runs[nruns++].cfg);
        app_parse_config("adaptive", &runs[nruns++].cfg);
    }

    body_state *init = malloc(sizeof *init * (size_t)n);
    plummer(init, n, seed);
    const int lo = (int)((int64_t)n * rank / nranks), hi = (int)((int64_t)n * (rank + 1) / nranks);
    bh_ctx x = {.nlocal = hi - lo, .theta2 = theta * theta, .eps2 = eps * eps};
    int maxlocal = 0;
    MPI_Allreduce(&x.nlocal, &maxlocal, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    x.maxnodes = bh_max_nodes(maxlocal);
    x.body_off = (MPI_Aint)x.maxnodes * (MPI_Aint)sizeof(bh_node);
    /* a multiple of 64 bytes: MPICH 4.0's MPI_Win_allocate misplaces the targets after a
     * rank whose size is not a multiple of 16 */
    const MPI_Aint win_bytes = (x.body_off + (MPI_Aint)maxlocal * (MPI_Aint)sizeof(bh_body) + 63) & ~(MPI_Aint)63;
    x.me = malloc(sizeof *x.me * (size_t)(x.nlocal + 1));
    x.tmpin = malloc(sizeof *x.tmpin * (size_t)(x.nlocal + 1));
    x.perm = malloc(sizeof *x.perm * (size_t)(x.nlocal + 1));
    if (rank == 0)
        printf("# bh: %d bodies (Plummer), %d ranks, theta=%.2f, %d steps (+1 initial force phase), dt=%g, eps=%g\n", n,
               nranks, theta, steps, dt, eps);

    unsigned char *mbase;
    MPI_Win_allocate(win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mbase, &x.mw);
    double ref_sum = NAN;
    long gets_uncached = 0;
    for (int t = 0; t < trials; t++) {
        for (int c = 0; c < nruns; c++) {
            app_run *r = &runs[c];
            memcpy(x.me, init + lo, sizeof *x.me * (size_t)x.nlocal);
            x.cached = r->cfg.kind != APP_UNCACHED;
            x.ev = NULL;
            if (x.cached) {
                MPI_Info info = app_config_info(&r->cfg, CLAMPI_USER_DEFINED, shm);
                if (CMPI_Win_allocate(win_bytes, 1, info, MPI_COMM_WORLD, &x.base, &x.cw) != MPI_SUCCESS)
                    die("CMPI_Win_allocate failed");
                MPI_Info_free(&info);
                MPI_Win_set_name(x.cw.win, "bh_tree");
                if (rank == 0) {
                    x.ev = r;
                    app_events_begin(r);
                }
            } else {
                x.base = mbase;
            }
            const int check = verify && t == 0 && c == 0;
            double e0 = 0, total = 0;
            x.gets = 0;
            x.t_phase0 = MPI_Wtime();
            if (check) {
                body_state *all = gather_all(&x, n);
                if (rank == 0) e0 = energy(all, n, x.eps2);
                free(all);
            }
            total += force_phase(&x);
            if (check) {
                body_state *all = gather_all(&x, n);
                if (rank == 0) {
                    double maxrel, err = force_error(all, n, x.eps2, &maxrel);
                    printf("# force check (theta=%.2f): rms relative error %.3e, max per body %.3e (bound %.1e)\n",
                           theta, err, maxrel, max_ferr);
                    if (!(err <= max_ferr)) die("force error above --max-force-error");
                }
                free(all);
            }
            for (int s = 0; s < steps; s++) { /* velocity Verlet */
                for (int i = 0; i < x.nlocal; i++)
                    for (int d = 0; d < 3; d++) {
                        x.me[i].vel[d] += 0.5 * dt * x.me[i].acc[d];
                        x.me[i].pos[d] += dt * x.me[i].vel[d];
                    }
                total += force_phase(&x);
                for (int i = 0; i < x.nlocal; i++)
                    for (int d = 0; d < 3; d++) x.me[i].vel[d] += 0.5 * dt * x.me[i].acc[d];
            }
            r->t[r->ntrials++] = total / (steps + 1); /* mean force-phase time per step */
            if (check) {
                body_state *all = gather_all(&x, n);
                if (rank == 0) {
                    double e1 = energy(all, n, x.eps2), drift = fabs((e1 - e0) / e0);
                    printf("# energy: %.9f -> %.9f after %d steps, relative drift %.3e (bound %.1e)\n", e0, e1, steps,
                           drift, max_drift);
                    if (!(drift <= max_drift)) die("energy drift above --max-energy-drift");
                }
                free(all);
            }
            /* every configuration computes the same trajectory, bit for bit */
            double sum = 0, all_sum;
            for (int i = 0; i < x.nlocal; i++) sum += x.me[i].pos[0] + 3 * x.me[i].pos[1] + 7 * x.me[i].pos[2];
            MPI_Allreduce(&sum, &all_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (!isnan(ref_sum) && memcmp(&all_sum, &ref_sum, sizeof all_sum) != 0)
                die("configurations disagree on the trajectory");
            ref_sum = all_sum;
            if (x.cached) {
                app_stats_accumulate(x.cw, &r->stats);
                CMPI_Win_free(&x.cw);
            } else {
                long g;
                MPI_Allreduce(&x.gets, &g, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
                gets_uncached = g;
            }
        }
        if (rank == 0) {
            printf("# trial %d/%d done\n", t + 1, trials);
            fflush(stdout);
        }
    }
    char params[256];
    snprintf(params, sizeof params,
             "\"bodies\": %d, \"theta\": %g, \"steps\": %d, \"dt\": %g, \"eps\": %g, \"trials\": %d, "
             "\"remote_reads_per_run\": %ld",
             n, theta, steps, dt, eps, trials, gets_uncached);
    if (rank == 0)
        app_report("bh", params, "force-phase seconds per step (max over ranks)", 1e3, "ms/step", runs, nruns, json,
                   nranks);
    MPI_Win_free(&x.mw);
    free(init);
    free(x.me);
    free(x.tmpin);
    free(x.perm);
    free(runs);
    MPI_Finalize();
    return 0;
}
