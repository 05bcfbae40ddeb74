/* The matcher: a posted and an unexpected queue of one structure under one mutex. */
#include <stdlib.h>
#include <string.h>

#include "match/hot.h"
#include "match/matcher_internal.h"

static const char *kind_names[CLAMPI_MATCH_NKINDS] = {
    [CLAMPI_MATCH_LIST] = "list",       [CLAMPI_MATCH_LLA] = "lla",   [CLAMPI_MATCH_HOT] = "hot",
    [CLAMPI_MATCH_LLA_HOT] = "lla+hot", [CLAMPI_MATCH_BINS] = "bins",
};

void clampi_match_config_default(clampi_match_config *cfg) {
    cfg->kind = CLAMPI_MATCH_LLA_HOT;
    cfg->width = CLAMPI_MATCH_DEFAULT_WIDTH;
    cfg->hot_period_us = CLAMPI_MATCH_DEFAULT_HOT_PERIOD_US;
    cfg->hot_by = CLAMPI_MATCH_HOT_THREAD;
    cfg->bins = CLAMPI_MATCH_DEFAULT_BINS;
    cfg->simd = 2;
}

int clampi_match_kind_parse(const char *name, clampi_match_kind *kind) {
    for (int k = 0; k < CLAMPI_MATCH_NKINDS; k++)
        if (!strcmp(name, kind_names[k])) {
            *kind = (clampi_match_kind)k;
            return 0;
        }
    return -1;
}

const char *clampi_match_kind_name(clampi_match_kind kind) {
    return (unsigned)kind < CLAMPI_MATCH_NKINDS ? kind_names[kind] : "?";
}

static clampi_mq *queue_create(const clampi_match_config *c) {
    switch (c->kind) {
    case CLAMPI_MATCH_LIST:
    case CLAMPI_MATCH_HOT: return clampi_mq_list_create();
    case CLAMPI_MATCH_LLA:
    case CLAMPI_MATCH_LLA_HOT: return clampi_mq_lla_create(c->width, c->simd);
    case CLAMPI_MATCH_BINS: return clampi_mq_bins_create(c->bins);
    default: return NULL;
    }
}

int clampi_matcher_create(const clampi_match_config *cfg, clampi_matcher **out) {
    *out = NULL;
    if ((unsigned)cfg->kind >= CLAMPI_MATCH_NKINDS || cfg->width < 1 || cfg->hot_period_us < 1 || cfg->bins < 1)
        return -1;
    clampi_matcher *m = calloc(1, sizeof *m);
    if (!m) return -2;
    m->cfg = *cfg;
    pthread_mutex_init(&m->lock, NULL);
    m->posted = queue_create(cfg);
    m->unexpected = queue_create(cfg);
    m->hot = cfg->kind == CLAMPI_MATCH_HOT || cfg->kind == CLAMPI_MATCH_LLA_HOT;
    if (!m->posted || !m->unexpected || (m->hot && clampi_hot_start(m) != 0)) {
        if (m->posted) m->posted->ops->destroy(m->posted);
        if (m->unexpected) m->unexpected->ops->destroy(m->unexpected);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return -2;
    }
    *out = m;
    return 0;
}

void clampi_matcher_destroy(clampi_matcher *m) {
    if (!m) return;
    if (m->hot) clampi_hot_stop(m);
    m->posted->ops->destroy(m->posted);
    m->unexpected->ops->destroy(m->unexpected);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static void note_search(clampi_matcher *m, size_t depth) {
    m->st.searches++;
    m->st.searched += depth;
    atomic_store_explicit(&m->last_depth, depth, memory_order_relaxed);
}

static void note_match(clampi_matcher *m, size_t depth) {
    m->st.match_depth_sum += depth;
    if (depth > m->st.match_depth_max) m->st.match_depth_max = depth;
}

/* Search `from`; on a miss append to `to`. Shared by post and arrive. */
static int match_or_queue(clampi_matcher *m, clampi_mq *from, clampi_mq *to, clampi_match_key key, uintptr_t cookie,
                          uintptr_t *matched) {
    size_t depth = 0;
    int r = from->ops->find(from, key, 1, matched, &depth);
    note_search(m, depth);
    if (r) {
        m->st.matches++;
        note_match(m, depth);
    } else if (to->ops->push(to, key, cookie) != 0)
        r = -1;
    return r;
}

int clampi_matcher_post(clampi_matcher *m, clampi_match_key key, uintptr_t cookie, uintptr_t *matched) {
    pthread_mutex_lock(&m->lock);
    m->st.posts++;
    int r = match_or_queue(m, m->unexpected, m->posted, key, cookie, matched);
    pthread_mutex_unlock(&m->lock);
    return r;
}

int clampi_matcher_arrive(clampi_matcher *m, clampi_match_key key, uintptr_t cookie, uintptr_t *matched) {
    pthread_mutex_lock(&m->lock);
    m->st.arrivals++;
    int r = match_or_queue(m, m->posted, m->unexpected, key, cookie, matched);
    pthread_mutex_unlock(&m->lock);
    return r;
}

int clampi_matcher_probe(clampi_matcher *m, clampi_match_key key, int remove, uintptr_t *found) {
    size_t depth = 0;
    pthread_mutex_lock(&m->lock);
    m->st.probes++;
    int r = m->unexpected->ops->find(m->unexpected, key, remove, found, &depth);
    note_search(m, depth);
    if (r && remove) {
        m->st.matches++;
        note_match(m, depth);
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

int clampi_matcher_cancel(clampi_matcher *m, uintptr_t cookie) {
    pthread_mutex_lock(&m->lock);
    m->st.cancels++;
    int r = m->posted->ops->remove_cookie(m->posted, cookie);
    pthread_mutex_unlock(&m->lock);
    return r;
}

size_t clampi_matcher_drain(clampi_matcher *m, int which, void (*fn)(uintptr_t, void *), void *arg) {
    clampi_mq *q = which ? m->unexpected : m->posted;
    size_t n = 0;
    uintptr_t c;
    pthread_mutex_lock(&m->lock);
    while (q->ops->pop(q, &c)) {
        if (fn) fn(c, arg);
        n++;
    }
    pthread_mutex_unlock(&m->lock);
    return n;
}

size_t clampi_matcher_touch(clampi_matcher *m) {
    if (pthread_mutex_trylock(&m->lock) != 0) return SIZE_MAX; /* busy: it is being searched anyway */
    uint64_t s = m->posted->ops->touch(m->posted) + m->unexpected->ops->touch(m->unexpected);
    size_t entries = m->posted->len + m->unexpected->len;
    pthread_mutex_unlock(&m->lock);
    atomic_store_explicit(&m->sink, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->touches, 1, memory_order_relaxed);
    return entries;
}

void clampi_matcher_stats(clampi_matcher *m, clampi_match_stats *out) {
    pthread_mutex_lock(&m->lock);
    *out = m->st;
    out->posted_len = m->posted->len;
    out->unexpected_len = m->unexpected->len;
    pthread_mutex_unlock(&m->lock);
    out->touches = atomic_load_explicit(&m->touches, memory_order_relaxed);
}

size_t clampi_matcher_last_depth(clampi_matcher *m) {
    return atomic_load_explicit(&m->last_depth, memory_order_relaxed);
}

const clampi_match_config *clampi_matcher_config(const clampi_matcher *m) { return &m->cfg; }
