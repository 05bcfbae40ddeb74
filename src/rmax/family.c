#include "rmax/family.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/stats.h"
#include "rmax/mh_share.h"
#include "rma/options.h"
#include "rma/stats.h"

clampi_rmax *clampi_rmax_of(clampi_win *w) {
    if (!w->rmax) {
        w->rmax = calloc(1, sizeof *w->rmax);
        if (w->rmax) w->rmax->parent_elide = w->elide_flushes;
    }
    return w->rmax;
}

void clampi_rmax_link(clampi_win *parent, clampi_win *child, int kind, CMPI_Win handle) {
    clampi_rmax *p = parent->rmax, *c = child->rmax;
    c->kind = kind;
    c->parent = parent;
    c->handle = handle;
    c->prev = NULL;
    c->next = p->children;
    if (p->children) p->children->rmax->prev = child;
    p->children = child;
    /* Flush elision counts a window's own operations; a child's operations may be completed
     * by the parent's flush and vice versa, so no member of a family skips MPI's flush. */
    if (p->nchildren++ == 0) p->parent_elide = parent->elide_flushes;
    parent->elide_flushes = CLAMPI_ELIDE_NEVER;
    child->elide_flushes = CLAMPI_ELIDE_NEVER;
    if (parent->b.ops->family_join) parent->b.ops->family_join(&parent->b, &child->b);
}

static void unlink_child(clampi_win *child) {
    clampi_rmax *c = child->rmax;
    clampi_win *parent = c->parent;
    clampi_rmax *p = parent->rmax;
    if (c->prev)
        c->prev->rmax->next = c->next;
    else
        p->children = c->next;
    if (c->next) c->next->rmax->prev = c->prev;
    if (--p->nchildren == 0) parent->elide_flushes = p->parent_elide;
    if (p->nchildren == 0 && parent->b.ops->family_empty) parent->b.ops->family_empty(&parent->b);
}

/* Frees a child: local; nothing of the parent's is released. */
static void free_child(clampi_win *child) {
    clampi_rmax *c = child->rmax;
    if (clampi_stats_enabled()) clampi_stats_print(child);
    unlink_child(child);
    const clampi_backend_ext *e = clampi_rmax_ext(child);
    if (e) e->mh_release(&child->b);
    clampi_registry_remove(c->handle);
    if (e) e->unshare(&child->b);
    clampi_win_release(child);
}

int clampi_rmax_on_free(clampi_win *w, CMPI_Win *handle) {
    clampi_rmax *x = w->rmax;
    if (x->kind != CLAMPI_RMAX_PARENT) {
        free_child(w);
        handle->win = MPI_WIN_NULL;
        handle->slot = 0;
        handle->serial = 0;
        return MPI_SUCCESS;
    }
    while (x->children) free_child(x->children);
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    if (e && x->mh_cache) e->mh_cache_free(&w->b, x->mh_cache); /* rkeys on the parent's endpoints: before they close */
    x->mh_cache = NULL;
    clampi_rmax_notify_release(w); /* before the backend's free */
    return -1;
}

void clampi_rmax_release(clampi_win *w) {
    if (!w->rmax) return;
    clampi_mh_shares_free(&w->rmax->mh_shares);
    if (w->rmax->mh_table) w->rmax->mh_ext->mh_table_free(w->rmax->mh_table);
    if (w->rmax->kind == CLAMPI_RMAX_PARENT && w->b.ops && w->b.ops->family_free) w->b.ops->family_free(&w->b);
    free(w->rmax);
    w->rmax = NULL;
}

/* A child window: the window layer's clone, sharing the parent's backend state. */
clampi_win *clampi_rmax_clone(const clampi_win *parent) {
    clampi_win *w = clampi_win_clone(parent);
    const clampi_backend_ext *e = clampi_rmax_ext(parent);
    if (w && e) e->share(&w->b, &parent->b);
    return w;
}

void clampi_rmax_discard(clampi_win *w) {
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    if (e) e->unshare(&w->b);
    clampi_win_release(w);
}

int clampi_rmax_on_create(clampi_win *w, MPI_Comm comm) {
    /* Rank 0's clock and address mixed: distinct across the windows of a job (and runs),
     * identical on every rank of this one. */
    uint64_t id = 0;
    if (w->b.rank == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        static uint64_t counter;
        id = ((uint64_t)ts.tv_sec * 1000000007ull) ^ ((uint64_t)ts.tv_nsec << 17) ^ (uintptr_t)w ^
             (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 48);
        if (id == 0) id = 1;
    }
    int rc = PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, comm);
    clampi_rmax *x = clampi_rmax_of(w);
    if (rc != MPI_SUCCESS || !x) return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
    x->win_id = id;
    clampi_rmax_select_ops(w);
    clampi_rmax_notify_setup(w);
    return MPI_SUCCESS;
}

/* The extensions hook into every window's life (rma/window.h): registered before main.
 * Static links keep this object with -Wl,-u,clampi_rmax_hooks (clampi_static's CMake
 * interface and clampi.pc's Libs.private add it). */
void clampi_rmax_select_ops(clampi_win *w) {
    const clampi_backend_ext *e = clampi_rmax_ext(w);
    if (e) w->b.ops = e->variant(&w->b, w->opts.acc_intrinsic); /* other windows keep theirs */
}

static void on_set_info(clampi_win *w) { clampi_rmax_select_ops(w); }
const clampi_win_hooks clampi_rmax_hooks = {
    .on_backend = clampi_rmax_on_create,
    .on_free = clampi_rmax_on_free,
    .on_set_info = on_set_info,
    .on_release = clampi_rmax_release,
};
__attribute__((constructor)) static void register_hooks(void) { clampi_win_set_hooks(&clampi_rmax_hooks); }
