/* Differential test of the UCX window backend: random sequences of every RMA operation
 * run on a UCX window and on an MPI-backend window side by side (same arguments), then
 * the windows' memory and every fetched result are byte-compared after each epoch.
 *
 * Determinism without restricting MPI semantics: origin r only writes its own slice of
 * each target's window (puts, gets, accumulates, fetch-ops, CAS there), tracked per epoch
 * so that an element is either put once, or only read, or only accumulated (accumulates
 * to one element are ordered by MPI); all ranks also add into a shared slice with
 * MPI_SUM accumulates and fetch-and-op (commutative: the final value is deterministic).
 *
 * Usage: test_ucx_differential SYNC KIND MODE ROUNDS SEED [SCOPE] [ORDER]
 *   SYNC  fence | lock | lockall | pscw | mixed     KIND  allocate | create | heap | dynamic
 *   (heap: CMPI_Win_create on CMPI_Alloc_mem memory, the node-shared heap: on one node the
 *   UCX window's puts, gets and accumulates are loads and stores, and the test checks that
 *   they were)
 *   MODE  a clampi_mode (transparent, off, user_defined)   SCOPE process|thread  ORDER true|false */
#define CLAMPI_TEST_USES_MPI
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"

#define K 16      /* elements per origin slice */
#define S 8       /* shared elements */
#define MAXOPS 24 /* per target per epoch */

enum { FREE, PUT, GET, ACC };
enum { SYNC_FENCE, SYNC_LOCK, SYNC_LOCKALL, SYNC_PSCW, NSYNC };

static int rank, nranks, kind_dynamic;
static int passive;        /* this epoch is passive-target: request-based RMA is allowed (MPI 12.3.5) */
static MPI_Aint *bases[2]; /* dynamic: per target base address, per window */
static int64_t *mem[2];
static size_t nelem;
static MPI_Datatype pair_t, vec_t; /* contiguous 2 x int64; origin-side vector (stride 2) */
/* Non-contiguous TARGET types over elements e and e + 2 of a 3-element span: a vector, an
 * indexed type listing e + 2 before e (packed order differs from address order), and a
 * resized int64 of extent 2 elements (used with count 2). */
static MPI_Datatype tvec_t, tind_t, tres_t;

static uint64_t rng_state;
static char tlog[1 << 16]; /* this epoch's operations, printed when it fails */
static size_t tlog_n;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int rndn(int n) { return (int)(rnd() % (uint64_t)n); }

static MPI_Aint disp_of(int win, int target, size_t elem) {
    if (kind_dynamic) return bases[win][target] + (MPI_Aint)(elem * sizeof(int64_t));
    return (MPI_Aint)elem;
}

/* Results fetched in an epoch: compared between the windows at its end. */
typedef struct {
    int64_t buf[2][2 * K];
    int n;
    int compare;
} result_t;
/* Origin buffers must stay untouched until the epoch completes the operation. */
typedef struct {
    int64_t src[2 * K], cmp;
} origin_t;

typedef struct {
    CMPI_Win w[2];
    result_t *res;
    int nres;
    MPI_Request *reqs;
    int nreqs;
    origin_t *orig;
    int norig;
} state_t;

/* The windows an operation is applied to: both, or (lock style: one window's lock at a time,
 * so that the two windows' locks never nest) first [0,1) then, replayed, [1,2). */
static int vlo = 0, vhi = 2;
static int acc_once;

static result_t *new_result(state_t *st, int n, int compare) {
    result_t *r = &st->res[st->nres++];
    if (vlo == 0) memset(r, 0, sizeof *r);
    r->n = n;
    r->compare = compare;
    return r;
}

/* One random operation from this rank to target, on both windows. */
static void random_op(state_t *st, int target, unsigned char *track) {
    size_t slice = (size_t)rank * K;
    int op = rndn(14);
    if (!passive && (op == 4 || op == 6)) op = op == 4 ? 0 : 5; /* Rput/Rget: passive target only */
    origin_t *o_ = &st->orig[st->norig++];
    int64_t *src = o_->src, *cmpp = &o_->cmp;
    for (int i = 0; i < 2 * K; i++) src[i] = (int64_t)(rnd() % 1000) - 500;
    if (op == 10) { /* shared slice: SUM accumulate or fetch-and-op SUM (result not compared) */
        size_t e = (size_t)nranks * K + (size_t)rndn(S);
        if (rnd() & 1) {
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(CMPI_Accumulate(src, 1, MPI_INT64_T, target, disp_of(v, target, e), 1, MPI_INT64_T,
                                             MPI_SUM, st->w[v]),
                             MPI_SUCCESS);
        } else {
            result_t *r = new_result(st, 1, 0);
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(
                    CMPI_Fetch_and_op(src, r->buf[v], MPI_INT64_T, target, disp_of(v, target, e), MPI_SUM, st->w[v]),
                    MPI_SUCCESS);
        }
        return;
    }
    /* an element range [e, e + len) in our slice whose state allows the op */
    int len = op >= 11 ? 3 : 1 + rndn(4);
    if (op == 2 || op == 3) len &= ~1, len = len ? len : 2; /* pair type / vector: even */
    size_t e0 = (size_t)rndn(K - len + 1);
    int want = (op <= 1 || op == 4 || op == 11) ? PUT : (op == 5 || op == 6 || op == 3 || op == 12) ? GET : ACC;
    if (op == 2) want = PUT;
    for (int i = 0; i < len; i++) {
        unsigned char s = track[e0 + (size_t)i];
        /* acc_once: Open MPI 4.1's osc/pt2pt (the reference there; its osc/rdma crashes in
         * compare-and-swap to self) does not keep MPI's default accumulate ordering
         * (rar,raw,war,waw), so its tests accumulate once per element. */
        if (want == PUT ? s != FREE : want == GET ? (s != FREE && s != GET) : (s != FREE && (s != ACC || acc_once)))
            return;
    }
    for (int i = 0; i < len; i++) track[e0 + (size_t)i] = (unsigned char)want;
    size_t e = slice + e0;
    if (tlog_n < sizeof tlog - 100)
        tlog_n +=
            (size_t)snprintf(tlog + tlog_n, sizeof tlog - tlog_n, "rank %d op %d -> %d elems [%zu,%zu) src0 %lld\n",
                             rank, op, target, e, e + (size_t)len, (long long)src[0]);
    switch (op) {
    case 0:
    case 1: /* put */
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(CMPI_Put(src, len, MPI_INT64_T, target, disp_of(v, target, e), len, MPI_INT64_T, st->w[v]),
                         MPI_SUCCESS);
        break;
    case 2: /* put: contiguous derived type on both sides */
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(CMPI_Put(src, len / 2, pair_t, target, disp_of(v, target, e), len / 2, pair_t, st->w[v]),
                         MPI_SUCCESS);
        break;
    case 3: { /* get into a strided origin buffer */
        result_t *r = new_result(st, 2 * len, 1);
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(CMPI_Get(r->buf[v], len / 2, vec_t, target, disp_of(v, target, e), len, MPI_INT64_T, st->w[v]),
                         MPI_SUCCESS);
        break;
    }
    case 4: /* rput (waited at epoch end) */
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(CMPI_Rput(src, len, MPI_INT64_T, target, disp_of(v, target, e), len, MPI_INT64_T, st->w[v],
                                   &st->reqs[st->nreqs++]),
                         MPI_SUCCESS);
        break;
    case 5: { /* get */
        result_t *r = new_result(st, len, 1);
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(
                CMPI_Get(r->buf[v], len, MPI_INT64_T, target, disp_of(v, target, e), len, MPI_INT64_T, st->w[v]),
                MPI_SUCCESS);
        break;
    }
    case 6: { /* rget */
        result_t *r = new_result(st, len, 1);
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(CMPI_Rget(r->buf[v], len, MPI_INT64_T, target, disp_of(v, target, e), len, MPI_INT64_T,
                                   st->w[v], &st->reqs[st->nreqs++]),
                         MPI_SUCCESS);
        break;
    }
    case 11:
    case 12:
    case 13: { /* non-contiguous target type: elements e, e + 2 */
        int pick = rndn(3);
        MPI_Datatype tt = pick == 0 ? tvec_t : pick == 1 ? tind_t : tres_t;
        int tc = pick == 2 ? 2 : 1;
        if (op == 11) {
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(CMPI_Put(src, 2, MPI_INT64_T, target, disp_of(v, target, e), tc, tt, st->w[v]),
                             MPI_SUCCESS);
        } else if (op == 12) {
            result_t *r = new_result(st, 2, 1);
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(CMPI_Get(r->buf[v], 2, MPI_INT64_T, target, disp_of(v, target, e), tc, tt, st->w[v]),
                             MPI_SUCCESS);
        } else if (rnd() & 1) {
            MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_REPLACE};
            MPI_Op o = ops[rndn(3)];
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(CMPI_Accumulate(src, 2, MPI_INT64_T, target, disp_of(v, target, e), tc, tt, o, st->w[v]),
                             MPI_SUCCESS);
        } else {
            MPI_Op ops[] = {MPI_SUM, MPI_NO_OP, MPI_REPLACE};
            MPI_Op o = ops[rndn(3)];
            result_t *r = new_result(st, 2, 1);
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(CMPI_Get_accumulate(src, 2, MPI_INT64_T, r->buf[v], 2, MPI_INT64_T, target,
                                                 disp_of(v, target, e), tc, tt, o, st->w[v]),
                             MPI_SUCCESS);
        }
        break;
    }
    case 7: { /* accumulate */
        MPI_Op ops[] = {MPI_SUM, MPI_BXOR, MPI_MAX, MPI_MIN, MPI_REPLACE, MPI_PROD};
        MPI_Op o = ops[rndn(6)];
        if (o == MPI_PROD)
            for (int i = 0; i < len; i++) src[i] = src[i] % 3;
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(
                CMPI_Accumulate(src, len, MPI_INT64_T, target, disp_of(v, target, e), len, MPI_INT64_T, o, st->w[v]),
                MPI_SUCCESS);
        break;
    }
    case 8: { /* get_accumulate (SUM, NO_OP, REPLACE) */
        MPI_Op ops[] = {MPI_SUM, MPI_NO_OP, MPI_REPLACE};
        MPI_Op o = ops[rndn(3)];
        result_t *r = new_result(st, len, 1);
        for (int v = vlo; v < vhi; v++)
            CHECK_EQ_INT(CMPI_Get_accumulate(src, len, MPI_INT64_T, r->buf[v], len, MPI_INT64_T, target,
                                             disp_of(v, target, e), len, MPI_INT64_T, o, st->w[v]),
                         MPI_SUCCESS);
        break;
    }
    case 9: { /* fetch_and_op or compare_and_swap on one element */
        result_t *r = new_result(st, 1, 1);
        if (rnd() & 1) {
            MPI_Op ops[] = {MPI_SUM, MPI_NO_OP, MPI_REPLACE, MPI_BOR};
            MPI_Op o = ops[rndn(4)];
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(CMPI_Fetch_and_op(src, r->buf[v], MPI_INT64_T, target, disp_of(v, target, e), o, st->w[v]),
                             MPI_SUCCESS);
        } else {
            /* compare with the value the element has in the reference run half of the time */
            *cmpp = (rnd() & 1) ? (int64_t)(target * 1000 + (int)e) : src[1]; /* the initial value, or not */
            for (int v = vlo; v < vhi; v++)
                CHECK_EQ_INT(
                    CMPI_Compare_and_swap(src, cmpp, r->buf[v], MPI_INT64_T, target, disp_of(v, target, e), st->w[v]),
                    MPI_SUCCESS);
        }
        break;
    }
    }
}

/* Ops from this rank to target in this epoch (max count). */
static void ops_to(state_t *st, int target, unsigned char *track, int flushes) {
    int n = rndn(MAXOPS);
    for (int i = 0; i < n; i++) {
        random_op(st, target, track);
        if (flushes && rndn(8) == 0) {
            int f = rndn(4);
            if (acc_once && f >= 2) f -= 2; /* Open MPI osc/pt2pt: flush_local can hang (lock_all) */
            for (int v = vlo; v < vhi; v++) {
                int rc = f == 0   ? CMPI_Win_flush(target, st->w[v])
                         : f == 1 ? CMPI_Win_flush_all(st->w[v])
                         : f == 2 ? CMPI_Win_flush_local(target, st->w[v])
                                  : CMPI_Win_flush_local_all(st->w[v]);
                CHECK_EQ_INT(rc, MPI_SUCCESS);
            }
        }
    }
}

static void both(int (*fn)(CMPI_Win), state_t *st) {
    for (int v = 0; v < 2; v++) CHECK_EQ_INT(fn(st->w[v]), MPI_SUCCESS);
}

static void epoch(state_t *st, int sync, unsigned char *track) {
    memset(track, FREE, (size_t)nranks * K);
    tlog_n = 0;
    passive = sync == SYNC_LOCK || sync == SYNC_LOCKALL;
    st->nres = st->nreqs = st->norig = 0;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    switch (sync) {
    case SYNC_FENCE:
        for (int v = 0; v < 2; v++) CHECK_EQ_INT(CMPI_Win_fence(0, st->w[v]), MPI_SUCCESS);
        for (int t = 0; t < nranks; t++) ops_to(st, t, track + (size_t)t * K, 0);
        for (int v = 0; v < 2; v++) CHECK_EQ_INT(CMPI_Win_fence(0, st->w[v]), MPI_SUCCESS);
        break;
    case SYNC_LOCK: {
        int first = rndn(nranks);
        for (int i = 0; i < nranks; i++) {
            int t = (first + i) % nranks;
            int type = (rnd() & 1) ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
            /* the same operations replayed on each window under its own lock */
            uint64_t saved = rng_state;
            int nres = st->nres, norig = st->norig;
            size_t log_after_first = 0;
            unsigned char tsave[K];
            memcpy(tsave, track + (size_t)t * K, K);
            for (int v = 0; v < 2; v++) {
                rng_state = saved;
                st->nres = nres, st->norig = norig; /* same results/origins; requests append */
                memcpy(track + (size_t)t * K, tsave, K);
                vlo = v, vhi = v + 1;
                CHECK_EQ_INT(CMPI_Win_lock(type, t, 0, st->w[v]), MPI_SUCCESS);
                ops_to(st, t, track + (size_t)t * K, 1);
                CHECK_EQ_INT(CMPI_Win_unlock(t, st->w[v]), MPI_SUCCESS);
                if (v == 0)
                    log_after_first = tlog_n;
                else
                    tlog_n = log_after_first;
            }
            vlo = 0, vhi = 2;
        }
        break;
    }
    case SYNC_LOCKALL:
        for (int v = 0; v < 2; v++) CHECK_EQ_INT(CMPI_Win_lock_all(0, st->w[v]), MPI_SUCCESS);
        for (int t = 0; t < nranks; t++) ops_to(st, t, track + (size_t)t * K, 1);
        both(CMPI_Win_unlock_all, st);
        break;
    case SYNC_PSCW:
        for (int v = 0; v < 2; v++) {
            CHECK_EQ_INT(CMPI_Win_post(world, 0, st->w[v]), MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_start(world, 0, st->w[v]), MPI_SUCCESS);
        }
        for (int t = 0; t < nranks; t++) ops_to(st, t, track + (size_t)t * K, 0);
        both(CMPI_Win_complete, st);
        both(CMPI_Win_wait, st);
        break;
    }
    MPI_Group_free(&world);
    CHECK_EQ_INT(MPI_Waitall(st->nreqs, st->reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < st->nres; i++)
        if (st->res[i].compare &&
            memcmp(st->res[i].buf[0], st->res[i].buf[1], sizeof(int64_t) * (size_t)st->res[i].n)) {
            fprintf(stderr, "rank %d: result %d differs (sync %d):", rank, i, sync);
            for (int j = 0; j < st->res[i].n; j++)
                fprintf(stderr, " %lld/%lld", (long long)st->res[i].buf[0][j], (long long)st->res[i].buf[1][j]);
            fprintf(stderr, " (mpi/ucx)\n");
            bad = 1;
        }
    for (size_t e = 0; e < nelem; e++)
        if (mem[0][e] != mem[1][e]) {
            fprintf(stderr, "rank %d: element %zu: mpi %lld ucx %lld (sync %d)\n", rank, e, (long long)mem[0][e],
                    (long long)mem[1][e], sync);
            bad = 1;
        }
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) fputs(tlog, stderr); /* every rank's operations of the failed epoch */
    CHECK(!any);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, getenv("DIFF_MT") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(argc >= 6);
    const char *syncs[] = {"fence", "lock", "lockall", "pscw", "mixed"};
    int sync = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(argv[1], syncs[i])) sync = i;
    CHECK(sync >= 0);
    const char *kind = argv[2], *mode = argv[3];
    int rounds = atoi(argv[4]);
    uint64_t seed = strtoull(argv[5], NULL, 10);
    const char *scope = argc > 6 ? argv[6] : "process", *order = argc > 7 ? argv[7] : "false";
    kind_dynamic = !strcmp(kind, "dynamic");
    acc_once = getenv("CLAMPI_TEST_OMPI_WORKAROUNDS") != NULL;
    MPI_Type_contiguous(2, MPI_INT64_T, &pair_t);
    MPI_Type_commit(&pair_t);
    MPI_Type_vector(1, 2, 2, MPI_INT64_T, &vec_t); /* 2 elements, resized to stride 4 below */
    MPI_Datatype v2;
    MPI_Type_create_resized(vec_t, 0, 4 * sizeof(int64_t), &v2);
    MPI_Type_free(&vec_t);
    vec_t = v2;
    MPI_Type_commit(&vec_t);
    MPI_Type_vector(2, 1, 2, MPI_INT64_T, &tvec_t);
    MPI_Type_commit(&tvec_t);
    int ind_len[2] = {1, 1}, ind_disp[2] = {2, 0};
    MPI_Type_indexed(2, ind_len, ind_disp, MPI_INT64_T, &tind_t);
    MPI_Type_commit(&tind_t);
    MPI_Type_create_resized(MPI_INT64_T, 0, 2 * sizeof(int64_t), &tres_t);
    MPI_Type_commit(&tres_t);

    nelem = (size_t)nranks * K + S;
    state_t st;
    st.res = calloc((size_t)nranks * MAXOPS, sizeof *st.res);
    st.reqs = calloc((size_t)nranks * MAXOPS * 2, sizeof *st.reqs);
    st.orig = calloc((size_t)nranks * MAXOPS, sizeof *st.orig);
    for (int v = 0; v < 2; v++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, CLAMPI_BACKEND, v && !getenv("DIFF_BOTH_MPI") ? "ucx" : "mpi");
        MPI_Info_set(info, CLAMPI_MODE, v ? (char *)mode : "off");
        MPI_Info_set(info, CLAMPI_WIN_SCOPE, (char *)scope);
        MPI_Info_set(info, CLAMPI_WIN_ORDER, (char *)order);
        MPI_Info_set(info, CLAMPI_SHM_DIRECT, "false");
        if (!strcmp(kind, "allocate")) {
            CHECK_EQ_INT(CMPI_Win_allocate((MPI_Aint)(nelem * sizeof(int64_t)), sizeof(int64_t), info, MPI_COMM_WORLD,
                                           &mem[v], &st.w[v]),
                         MPI_SUCCESS);
        } else if (!strcmp(kind, "create") || !strcmp(kind, "heap")) {
            if (!strcmp(kind, "heap"))
                CHECK_EQ_INT(CMPI_Alloc_mem((MPI_Aint)(nelem * sizeof(int64_t)), MPI_INFO_NULL, &mem[v]), MPI_SUCCESS);
            else
                mem[v] = malloc(nelem * sizeof(int64_t));
            CHECK_EQ_INT(CMPI_Win_create(mem[v], (MPI_Aint)(nelem * sizeof(int64_t)), sizeof(int64_t), info,
                                         MPI_COMM_WORLD, &st.w[v]),
                         MPI_SUCCESS);
        } else {
            CHECK(kind_dynamic);
            mem[v] = malloc(nelem * sizeof(int64_t));
            CHECK_EQ_INT(CMPI_Win_create_dynamic(info, MPI_COMM_WORLD, &st.w[v]), MPI_SUCCESS);
            CHECK_EQ_INT(CMPI_Win_attach(st.w[v], mem[v], (MPI_Aint)(nelem * sizeof(int64_t))), MPI_SUCCESS);
            MPI_Aint mine;
            MPI_Get_address(mem[v], &mine);
            bases[v] = malloc(sizeof(MPI_Aint) * (size_t)nranks);
            MPI_Allgather(&mine, 1, MPI_AINT, bases[v], 1, MPI_AINT, MPI_COMM_WORLD);
        }
        MPI_Info_free(&info);
        for (size_t e = 0; e < nelem; e++) mem[v][e] = (int64_t)(rank * 1000 + (int)e);
    }
    /* the UCX window reports what is in effect */
    MPI_Info used;
    char value[64];
    int flag;
    CHECK_EQ_INT(CMPI_Win_get_info(st.w[1], &used), MPI_SUCCESS);
    MPI_Info_get(used, CLAMPI_BACKEND, 63, value, &flag);
    CHECK(flag && !strcmp(value, getenv("DIFF_BOTH_MPI") ? "mpi" : "ucx"));
    MPI_Info_get(used, CLAMPI_WIN_SCOPE, 63, value, &flag);
    CHECK(flag && !strcmp(value, getenv("DIFF_BOTH_MPI") ? "process" : scope));
    MPI_Info_free(&used);
    CHECK_EQ_INT(CMPI_Win_get_info(st.w[0], &used), MPI_SUCCESS);
    MPI_Info_get(used, CLAMPI_WIN_SCOPE, 63, value, &flag);
    CHECK(flag && !strcmp(value, "process"));
    MPI_Info_free(&used);
    MPI_Barrier(MPI_COMM_WORLD);

    unsigned char *track = malloc((size_t)nranks * K);
    for (int r = 0; r < rounds; r++) {
        rng_state = seed * 7919 + (uint64_t)r * 104729 + 1; /* same on all ranks: the sync style */
        int s = sync == 4 ? rndn(NSYNC) : sync;
        rng_state = seed * 7919 + (uint64_t)r * 104729 + (uint64_t)rank * 15485863 + 3;
        epoch(&st, s, track);
        if (!strcmp(mode, "user_defined")) CHECK_EQ_INT(CMPI_Win_invalidate(st.w[1]), MPI_SUCCESS);
    }
    for (int v = 0; v < 2; v++) {
        if (kind_dynamic) CHECK_EQ_INT(CMPI_Win_detach(st.w[v], mem[v]), MPI_SUCCESS);
        CHECK_EQ_INT(CMPI_Win_free(&st.w[v]), MPI_SUCCESS);
        if (!strcmp(kind, "heap"))
            CHECK_EQ_INT(CMPI_Free_mem(mem[v]), MPI_SUCCESS);
        else if (strcmp(kind, "allocate"))
            free(mem[v]);
    }
    if (rank == 0) printf("ucx differential: %s %s %s %d rounds np %d: ok\n", argv[1], kind, mode, rounds, nranks);
    MPI_Type_free(&pair_t);
    MPI_Type_free(&vec_t);
    MPI_Type_free(&tvec_t);
    MPI_Type_free(&tind_t);
    MPI_Type_free(&tres_t);
    free(track);
    free(st.res);
    free(st.reqs);
    free(st.orig);
    MPI_Finalize();
    return 0;
}
