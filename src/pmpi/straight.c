/* The preload's straight path: which targets skip clampi (see straight.h). */
#include "pmpi/straight.h"
#include "common/options.h"
#include "topo/node.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define QUIET_EPOCHS 2 /* synchronizations without a shared get before a pause */
#define FIRST_PAUSE 64 /* synchronizations; the pause grows 4-fold up to MAX_PAUSE */
#define MAX_PAUSE 4096

/* CLAMPI_INFLIGHT_SHARING (options table: auto|always|never, read once; an invalid value is
 * reported and taken as auto: the preload never fails a program for a tuning knob). */
static enum clampi_sharing sharing_setting(void) {
    static const enum clampi_sharing by_index[] = {SHARING_AUTO, SHARING_ALWAYS, SHARING_NEVER};
    return by_index[clampi_opt_process(CLAMPI_OPT_INFLIGHT_SHARING).u];
}

/* same_node[t] = 1 if comm's rank t runs on the caller's node (clampi_node_split: the one
 * node decision, which honours CLAMPI_NODE_SIZE). */
static int find_same_node(MPI_Comm comm, int n, unsigned char *same_node) {
    MPI_Group g_comm, g_node;
    MPI_Comm node = MPI_COMM_NULL;
    if (clampi_node_split(comm, &node) != MPI_SUCCESS) return -1;
    PMPI_Comm_group(comm, &g_comm);
    PMPI_Comm_group(node, &g_node);
    int *ranks = malloc(2 * (size_t)n * sizeof *ranks), rc = ranks ? 0 : -1;
    if (ranks) {
        int *mapped = ranks + n;
        for (int i = 0; i < n; i++) ranks[i] = i;
        PMPI_Group_translate_ranks(g_comm, n, ranks, g_node, mapped);
        for (int t = 0; t < n; t++) same_node[t] = mapped[t] != MPI_UNDEFINED;
        free(ranks);
    }
    PMPI_Group_free(&g_node);
    PMPI_Group_free(&g_comm);
    PMPI_Comm_free(&node);
    return rc;
}

/* What target t should be now (window lock held). */
static unsigned char wanted(const clampi_win *w, int t) {
    const struct clampi_straight_policy *p = w->straight_policy;
    unsigned char v;
    switch (w->opts.mode) {
    case CLAMPI_MODE_OFF: v = 1; break;
    case CLAMPI_MODE_TRANSPARENT:
        if (w->target_shm && w->target_shm[t])
            v = 0; /* clampi's direct copy (shared windows) */
        else if (p->sharing == SHARING_NEVER)
            v = 1;
        else if (p->sharing == SHARING_ALWAYS)
            v = 0;
        else
            v = p->same_node[t] || p->paused;
        break;
    default: v = 0; /* caching modes */
    }
    /* gets of an earlier sharing period still wait for their synchronization */
    if (v == 1 && clampi_inflight_pending(&w->inflight, (uint32_t)t)) v = 2;
    return v;
}

clampi_straight_last clampi_last;

static void update_last(const clampi_win *w) {
    const struct clampi_straight_policy *p = w->straight_policy;
    if (clampi_last.w != w) return;
    MPI_Win none;
    memset(&none, 0, sizeof none);
    if (w->cmpi_route) { /* served through the CMPI_ layer: nothing goes straight */
        clampi_last.ops_win = clampi_last.syncs_win = none;
        clampi_last.budget = UINT64_MAX;
        return;
    }
    clampi_last.ops_win = p->nops == w->b.nranks ? clampi_last.win : none;
    clampi_last.syncs_win = p->nsyncs == w->b.nranks ? clampi_last.win : none;
    clampi_last.budget = p->paused ? p->pause_left : UINT64_MAX;
}

void clampi_straight_remember(MPI_Win win, clampi_win *w) {
    clampi_straight_forget_last();
    clampi_last.win = win;
    clampi_last.w = w;
    clampi_last.budget = UINT64_MAX;
    if (!w)
        clampi_last.ops_win = clampi_last.syncs_win = win; /* not managed: all to MPI */
    else if (w->straight_policy)
        update_last(w);
}

static void set_target(clampi_win *w, int t) {
    struct clampi_straight_policy *p = w->straight_policy;
    unsigned char old = w->straight[t], v = wanted(w, t);
    p->nops += (v != 0) - (old != 0);
    p->nsyncs += (v == 1) - (old == 1);
    __atomic_store_n(&w->straight[t], v, __ATOMIC_RELAXED);
    __atomic_store_n(&w->all_straight, p->nsyncs == w->b.nranks, __ATOMIC_RELAXED);
}

static void set_all(clampi_win *w) {
    for (int t = 0; t < w->b.nranks; t++) set_target(w, t);
    update_last(w);
}

int clampi_straight_setup(clampi_win *w, MPI_Comm comm) {
    struct clampi_straight_policy *p = calloc(1, sizeof *p + (size_t)w->b.nranks);
    if (!p || find_same_node(comm, w->b.nranks, p->same_node) != 0) {
        free(p);
        return -1;
    }
    p->sharing = sharing_setting();
    p->next_pause = FIRST_PAUSE;
    memset(w->straight, 0, (size_t)w->b.nranks);
    w->straight_policy = p;
    set_all(w);
    return 0;
}

void clampi_straight_refresh(clampi_win *w) {
    struct clampi_straight_policy *p = w->straight_policy;
    if (!p) return; /* no straight path (UCX backend, windows of a family) */
    clampi_win_enter(w);
    p->paused = 0;
    p->quiet = 0;
    p->seen_misses = w->n.misses;
    p->seen_hits = w->n.inflight_hits;
    set_all(w);
    clampi_win_leave(w);
}

/* In-flight sharing of a transparent window (auto): one step per synchronization that
 * went through clampi. Returns 1 if every target must be re-evaluated. */
static int policy_step(clampi_win *w, struct clampi_straight_policy *p) {
    if (p->paused) {
        if (--p->pause_left) return 0;
        p->paused = 0;
        p->quiet = 0;
        p->seen_misses = w->n.misses;
        p->seen_hits = w->n.inflight_hits;
        return 1;
    }
    uint64_t tracked = w->n.misses - p->seen_misses, shared = w->n.inflight_hits - p->seen_hits;
    p->seen_misses = w->n.misses;
    p->seen_hits = w->n.inflight_hits;
    if (shared && shared * 64 >= tracked) { /* paid off: ≥ 1 in 64 gets saved a network get */
        p->quiet = 0;
        p->next_pause = FIRST_PAUSE;
        return 0;
    }
    if (++p->quiet < QUIET_EPOCHS) return 0;
    p->paused = 1;
    p->pause_left = p->next_pause;
    if (p->next_pause < MAX_PAUSE) p->next_pause *= 4;
    clampi_inflight_forget_all(&w->inflight); /* writes to paused targets are not tracked */
    return 1;
}

void clampi_straight_after_sync(clampi_win *w, int target) {
    struct clampi_straight_policy *p = w->straight_policy;
    if (!p) return;
    clampi_win_enter(w);
    int all = target < 0;
    if (w->opts.mode == CLAMPI_MODE_TRANSPARENT && p->sharing == SHARING_AUTO) {
        /* the fast path used up the pause (clampi_last.budget): this is its last sync */
        if (p->paused && clampi_last.w == w && clampi_last.budget == 0) p->pause_left = 1;
        all |= policy_step(w, p);
    }
    if (all) {
        set_all(w);
    } else if (target < w->b.nranks) {
        set_target(w, target);
        update_last(w);
    }
    clampi_win_leave(w);
}
