/* Matching engine, model-checked: random interleavings of posts, arrivals (in per-sender
 * order), wildcard receives, probes, matched probes and cancels on several contexts, run
 * against a trivially correct reference (two arrays searched front to back), for every
 * structure and configuration, many deterministic seeds. Every call's result must equal
 * the reference's; at the end both queues must drain in the same order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "match/match.h"
#include "match/queue.h"

#define MAXQ 4096
typedef struct {
    clampi_match_key key;
    uintptr_t cookie;
} ent;
typedef struct {
    ent posted[MAXQ], unexp[MAXQ];
    int np, nu;
} ref;

static int ref_match(clampi_match_key e, clampi_match_key q) {
    if (e.context != q.context) return 0;
    int s = e.source == q.source || e.source == CLAMPI_MATCH_ANY_SOURCE || q.source == CLAMPI_MATCH_ANY_SOURCE;
    int t = e.tag == q.tag || e.tag == CLAMPI_MATCH_ANY_TAG || q.tag == CLAMPI_MATCH_ANY_TAG;
    return s && t;
}
static int ref_find(ent *a, int *n, clampi_match_key k, int remove, uintptr_t *c) {
    for (int i = 0; i < *n; i++)
        if (ref_match(a[i].key, k)) {
            *c = a[i].cookie;
            if (remove) memmove(a + i, a + i + 1, (size_t)(--*n - i) * sizeof *a);
            return 1;
        }
    return 0;
}
static void ref_push(ent *a, int *n, clampi_match_key k, uintptr_t c) {
    CHECK(*n < MAXQ);
    a[*n].key = k;
    a[(*n)++].cookie = c;
}

static uint64_t rng;
static unsigned rnd(unsigned n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void drain_cb(uintptr_t c, void *arg) {
    uintptr_t **p = arg;
    *(*p)++ = c;
}

static ref R;
static uintptr_t drained[MAXQ];

/* One random run of nops operations on a matcher of configuration cfg. */
static void run(const clampi_match_config *cfg, uint64_t seed, int nops) {
    clampi_matcher *m;
    CHECK(clampi_matcher_create(cfg, &m) == 0);
    memset(&R, 0, sizeof R);
    rng = seed * 0x9e3779b97f4a7c15ull + 1;
    uintptr_t next_cookie = 1;
    int nctx = 1 + (int)rnd(3), nsrc = 1 + (int)rnd(4), ntag = 1 + (int)rnd(4);
    int bias = (int)rnd(3); /* 0: balanced; 1: posts pile up; 2: arrivals pile up */
    for (int op = 0; op < nops; op++) {
        unsigned r = rnd(100);
        clampi_match_key k = {rnd((unsigned)nctx), (int32_t)rnd((unsigned)nsrc), (int32_t)rnd((unsigned)ntag)};
        if (k.context == 2) k.context = CLAMPI_MATCH_MAX_CONTEXT; /* extreme context ids work */
        uintptr_t got = 0, want = 0;
        int post_share = bias == 1 ? 55 : bias == 2 ? 25 : 40;
        if (r < (unsigned)post_share) { /* post, sometimes with wildcards */
            if (rnd(4) == 0) k.source = CLAMPI_MATCH_ANY_SOURCE;
            if (rnd(4) == 0) k.tag = CLAMPI_MATCH_ANY_TAG;
            uintptr_t c = next_cookie++;
            int a = clampi_matcher_post(m, k, c, &got);
            int b = ref_find(R.unexp, &R.nu, k, 1, &want);
            if (!b) ref_push(R.posted, &R.np, k, c);
            CHECK_EQ_INT(a, b);
            if (a) CHECK_EQ_INT(got, want);
        } else if (r < 80) { /* arrival: a concrete key */
            uintptr_t c = next_cookie++;
            int a = clampi_matcher_arrive(m, k, c, &got);
            int b = ref_find(R.posted, &R.np, k, 1, &want);
            if (!b) ref_push(R.unexp, &R.nu, k, c);
            CHECK_EQ_INT(a, b);
            if (a) CHECK_EQ_INT(got, want);
        } else if (r < 92) { /* probe or matched probe */
            if (rnd(3) == 0) k.source = CLAMPI_MATCH_ANY_SOURCE;
            if (rnd(3) == 0) k.tag = CLAMPI_MATCH_ANY_TAG;
            int remove = (int)rnd(2);
            int a = clampi_matcher_probe(m, k, remove, &got);
            int b = ref_find(R.unexp, &R.nu, k, remove, &want);
            CHECK_EQ_INT(a, b);
            if (a) CHECK_EQ_INT(got, want);
        } else { /* cancel a queued receive, or one that is gone (matched / cancelled) */
            uintptr_t c = R.np && rnd(3) ? R.posted[rnd((unsigned)R.np)].cookie : 1 + rnd((unsigned)next_cookie);
            int b = 0;
            for (int i = 0; i < R.np; i++)
                if (R.posted[i].cookie == c) {
                    memmove(R.posted + i, R.posted + i + 1, (size_t)(--R.np - i) * sizeof(ent));
                    b = 1;
                    break;
                }
            CHECK_EQ_INT(clampi_matcher_cancel(m, c), b);
        }
        if (op % 64 == 0) {
            clampi_match_stats st;
            clampi_matcher_stats(m, &st);
            CHECK_EQ_INT(st.posted_len, R.np);
            CHECK_EQ_INT(st.unexpected_len, R.nu);
        }
        if (cfg->hot_by == CLAMPI_MATCH_HOT_PROGRESS) clampi_matcher_progress(m);
    }
    for (int which = 0; which < 2; which++) {
        uintptr_t *p = drained;
        size_t n = clampi_matcher_drain(m, which, drain_cb, &p);
        ent *a = which ? R.unexp : R.posted;
        CHECK_EQ_INT(n, which ? R.nu : R.np);
        for (size_t i = 0; i < n; i++) CHECK_EQ_INT(drained[i], a[i].cookie);
    }
    clampi_matcher_destroy(m);
}

int main(int argc, char **argv) {
    int seeds = argc > 1 ? atoi(argv[1]) : 150;
    clampi_match_config cfgs[32];
    int n = 0;
    for (int k = 0; k < CLAMPI_MATCH_NKINDS; k++) {
        clampi_match_config c;
        clampi_match_config_default(&c);
        c.kind = (clampi_match_kind)k;
        c.hot_period_us = 20;
        cfgs[n++] = c;
    }
    /* lla widths at and around the SIMD group, scalar compare, hot at progress, few bins */
    unsigned widths[] = {1, 2, 3, 5, 9, 16, 64};
    for (unsigned i = 0; i < sizeof widths / sizeof *widths; i++) {
        clampi_match_config_default(&cfgs[n]);
        cfgs[n].kind = CLAMPI_MATCH_LLA;
        cfgs[n++].width = widths[i];
    }
    unsigned simd_widths[] = {1, 9, 16, 64};
    for (int simd = 0; simd < 2; simd++) /* scalar, SSE2 (the default is AVX2 where the CPU has it) */
        for (unsigned i = 0; i < sizeof simd_widths / sizeof *simd_widths; i++) {
            clampi_match_config_default(&cfgs[n]);
            cfgs[n].kind = CLAMPI_MATCH_LLA;
            cfgs[n].width = simd_widths[i];
            cfgs[n++].simd = simd;
        }
    clampi_match_config_default(&cfgs[n]);
    cfgs[n].hot_by = CLAMPI_MATCH_HOT_PROGRESS;
    cfgs[n++].hot_period_us = 1;
    clampi_match_config_default(&cfgs[n]);
    cfgs[n].kind = CLAMPI_MATCH_BINS;
    cfgs[n++].bins = 3;
    for (int i = 0; i < n; i++)
        for (int s = 0; s < seeds; s++) run(&cfgs[i], (uint64_t)s, 300 + (s % 7) * 300);

    /* the default (simd 2) walks with AVX2 where the CPU has it, else SSE2 */
    clampi_mq *q = clampi_mq_lla_create(16, 2);
    CHECK(q != NULL);
#if defined(__x86_64__) && defined(__GNUC__) /* as queue_lla.c */
    __builtin_cpu_init();
    CHECK_EQ_INT(clampi_mq_lla_simd(q), __builtin_cpu_supports("avx2") ? 2 : 1);
#endif
    q->ops->destroy(q);

    /* bad configurations are refused */
    clampi_matcher *m;
    clampi_match_config c;
    clampi_match_config_default(&c);
    c.width = 0;
    CHECK(clampi_matcher_create(&c, &m) == -1 && m == NULL);
    clampi_match_config_default(&c);
    c.kind = CLAMPI_MATCH_NKINDS;
    CHECK(clampi_matcher_create(&c, &m) == -1);
    clampi_match_kind kind;
    CHECK(clampi_match_kind_parse("lla+hot", &kind) == 0 && kind == CLAMPI_MATCH_LLA_HOT);
    CHECK(clampi_match_kind_parse("LLA", &kind) == -1);
    printf("match: %d configurations x %d seeds ok\n", n, seeds);
    return 0;
}
