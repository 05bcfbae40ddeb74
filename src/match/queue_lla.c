/* "lla": linked list of arrays (the semi-permanent cache occupancy paper). Each block holds `width` entries with the keys
 * laid out as three arrays (contexts, sources, tags: structure of arrays, each 64-byte
 * aligned), so one cache line holds 16 contexts or sources or tags and a search reads
 * whole lines; the cookies sit apart and are read only on a match.
 *
 * Entries of a block occupy slots [first, end); a removed entry becomes a hole (context
 * CLAMPI_MQ_HOLE, which no search key equals), first/end skip holes at either edge, and a
 * block that is more than half holes is compacted by sliding its live entries forward
 * (and merged with its successor when both fit in one) -- all moves keep queue order.
 * Invariant: every slot outside [first, end) holds a hole, so the SIMD compare may read
 * whole 8-slot groups (AVX2 where the CPU has it, else SSE2's 4). */
#include <stdlib.h>
#include <string.h>

#include "match/queue.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LLA_AVX2 1 /* compiled for any x86-64, used where the CPU has it (cpuid at creation) */
#endif

typedef struct block {
    struct block *prev, *next;
    unsigned first, end, live;
    uint32_t *ctx;
    int32_t *src, *tag;
    uintptr_t *cookie;
} block;

typedef struct {
    clampi_mq base;
    block *head, *tail, *spare;
    unsigned width, cap; /* cap: width rounded up to the AVX2 compare's 8 keys */
    int simd;            /* 0 scalar, 1 SSE2 (4 keys per compare), 2 AVX2 (8) */
} lla_q;

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

static block *block_new(lla_q *l) {
    block *b = l->spare;
    if (b) {
        l->spare = NULL;
    } else {
        size_t keys = round64(l->cap * sizeof(uint32_t));
        size_t bytes = round64(sizeof(block)) + 3 * keys + round64(l->cap * sizeof(uintptr_t));
        unsigned char *p = aligned_alloc(64, bytes);
        if (!p) return NULL;
        b = (block *)p;
        p += round64(sizeof(block));
        b->ctx = (uint32_t *)p;
        b->src = (int32_t *)(p + keys);
        b->tag = (int32_t *)(p + 2 * keys);
        b->cookie = (uintptr_t *)(p + 3 * keys);
    }
    memset(b->ctx, 0xff, l->cap * sizeof(uint32_t)); /* all holes */
    b->first = b->end = b->live = 0;
    b->prev = b->next = NULL;
    return b;
}

static void block_release(lla_q *l, block *b) {
    if (b->prev)
        b->prev->next = b->next;
    else
        l->head = b->next;
    if (b->next)
        b->next->prev = b->prev;
    else
        l->tail = b->prev;
    if (!l->spare)
        l->spare = b;
    else
        free(b);
}

static int lla_push(clampi_mq *q, clampi_match_key key, uintptr_t cookie) {
    lla_q *l = (lla_q *)q;
    block *b = l->tail;
    if (!b || b->end == l->width) {
        block *nb = block_new(l);
        if (!nb) return -1;
        nb->prev = b;
        if (b)
            b->next = nb;
        else
            l->head = nb;
        l->tail = b = nb;
    }
    unsigned i = b->end++;
    b->ctx[i] = key.context;
    b->src[i] = key.source;
    b->tag[i] = key.tag;
    b->cookie[i] = cookie;
    b->live++;
    q->len++;
    return 0;
}

/* Slides the live entries of b to slots [0, live) in order; holes after them. */
static void block_compact(lla_q *l, block *b) {
    unsigned w = 0;
    for (unsigned i = b->first; i < b->end; i++) {
        if (b->ctx[i] == CLAMPI_MQ_HOLE) continue;
        if (w != i) {
            b->ctx[w] = b->ctx[i];
            b->src[w] = b->src[i];
            b->tag[w] = b->tag[i];
            b->cookie[w] = b->cookie[i];
            b->ctx[i] = CLAMPI_MQ_HOLE;
        }
        w++;
    }
    b->first = 0;
    b->end = w;
    (void)l;
}

/* Moves every entry of b->next behind b's (both compacted first) and frees it. */
static void block_merge_next(lla_q *l, block *b) {
    block *n = b->next;
    block_compact(l, b);
    block_compact(l, n);
    memcpy(b->ctx + b->end, n->ctx, n->end * sizeof *n->ctx);
    memcpy(b->src + b->end, n->src, n->end * sizeof *n->src);
    memcpy(b->tag + b->end, n->tag, n->end * sizeof *n->tag);
    memcpy(b->cookie + b->end, n->cookie, n->end * sizeof *n->cookie);
    b->end += n->end;
    b->live += n->live;
    block_release(l, n);
}

static void remove_slot(lla_q *l, block *b, unsigned i) {
    b->ctx[i] = CLAMPI_MQ_HOLE;
    b->live--;
    l->base.len--;
    if (b->live == 0) {
        block_release(l, b);
        return;
    }
    while (b->ctx[b->first] == CLAMPI_MQ_HOLE) b->first++;
    while (b->ctx[b->end - 1] == CLAMPI_MQ_HOLE) b->end--;
    if (b->end - b->first > 2 * b->live) {
        block_compact(l, b);
        if (b->next && b->live + b->next->live <= l->width) block_merge_next(l, b);
    }
}

/* Index of the first slot in [first, end) matching key, or -1. */
static int scan_scalar(const block *b, clampi_match_key key) {
    for (unsigned i = b->first; i < b->end; i++) {
        clampi_match_key e = {b->ctx[i], b->src[i], b->tag[i]};
        if (clampi_mq_key_match(e, key)) return (int)i;
    }
    return -1;
}

#if defined(__SSE2__)
static int scan_sse2(const block *b, clampi_match_key key) {
    const __m128i qc = _mm_set1_epi32((int)key.context), qs = _mm_set1_epi32(key.source), qt = _mm_set1_epi32(key.tag),
                  any = _mm_set1_epi32(-1);
    const int src_any = key.source == CLAMPI_MATCH_ANY_SOURCE, tag_any = key.tag == CLAMPI_MATCH_ANY_TAG;
    for (unsigned i = b->first & ~3u; i < b->end; i += 4) {
        __m128i m = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(b->ctx + i)), qc);
        if (!src_any) {
            __m128i s = _mm_load_si128((const __m128i *)(b->src + i));
            m = _mm_and_si128(m, _mm_or_si128(_mm_cmpeq_epi32(s, qs), _mm_cmpeq_epi32(s, any)));
        }
        if (!tag_any) {
            __m128i t = _mm_load_si128((const __m128i *)(b->tag + i));
            m = _mm_and_si128(m, _mm_or_si128(_mm_cmpeq_epi32(t, qt), _mm_cmpeq_epi32(t, any)));
        }
        int bits = _mm_movemask_ps(_mm_castsi128_ps(m));
        if (bits) return (int)i + __builtin_ctz((unsigned)bits);
    }
    return -1;
}
#endif

#if defined(LLA_AVX2)
/* The walk of lla_find with the compare of scan_sse2, 8 keys at a time: at depth 1,024 the
 * walk is most of a message's matching cost. The whole walk is one AVX2 function (one
 * call and one vzeroupper per search, not per block). */
__attribute__((target("avx2"))) static block *walk_avx2(const lla_q *l, clampi_match_key key, int *at, size_t *depth) {
    const __m256i qc = _mm256_set1_epi32((int)key.context), qs = _mm256_set1_epi32(key.source),
                  qt = _mm256_set1_epi32(key.tag), any = _mm256_set1_epi32(-1);
    const int src_any = key.source == CLAMPI_MATCH_ANY_SOURCE, tag_any = key.tag == CLAMPI_MATCH_ANY_TAG;
    size_t d = 0;
    for (block *b = l->head; b; b = b->next) {
        for (unsigned i = b->first & ~7u; i < b->end; i += 8) {
            __m256i m = _mm256_cmpeq_epi32(_mm256_load_si256((const __m256i *)(b->ctx + i)), qc);
            if (!src_any) {
                __m256i v = _mm256_load_si256((const __m256i *)(b->src + i));
                m = _mm256_and_si256(m, _mm256_or_si256(_mm256_cmpeq_epi32(v, qs), _mm256_cmpeq_epi32(v, any)));
            }
            if (!tag_any) {
                __m256i v = _mm256_load_si256((const __m256i *)(b->tag + i));
                m = _mm256_and_si256(m, _mm256_or_si256(_mm256_cmpeq_epi32(v, qt), _mm256_cmpeq_epi32(v, any)));
            }
            int bits = _mm256_movemask_ps(_mm256_castsi256_ps(m));
            if (bits) {
                *at = (int)i + __builtin_ctz((unsigned)bits);
                *depth = d + (unsigned)*at - b->first;
                return b;
            }
        }
        d += b->end - b->first;
    }
    *depth = d;
    return NULL;
}
#endif

/* The first entry matching key: its block and slot (*at), *depth the entries before it;
 * NULL (depth: the queue's length) if none. */
static block *walk(const lla_q *l, clampi_match_key key, int *at, size_t *depth) {
#if defined(LLA_AVX2)
    if (l->simd == 2) return walk_avx2(l, key, at, depth);
#endif
    size_t d = 0;
    for (block *b = l->head; b; b = b->next) {
#if defined(__SSE2__)
        int i = l->simd ? scan_sse2(b, key) : scan_scalar(b, key);
#else
        int i = scan_scalar(b, key);
#endif
        if (i >= 0) {
            *at = i;
            *depth = d + (unsigned)i - b->first;
            return b;
        }
        d += b->end - b->first;
    }
    *depth = d;
    return NULL;
}

static int lla_find(clampi_mq *q, clampi_match_key key, int remove, uintptr_t *cookie, size_t *depth) {
    lla_q *l = (lla_q *)q;
    int i = 0;
    block *b = walk(l, key, &i, depth);
    if (!b) return 0;
    *cookie = b->cookie[i];
    if (remove) remove_slot(l, b, (unsigned)i);
    return 1;
}

static int lla_remove_cookie(clampi_mq *q, uintptr_t cookie) {
    lla_q *l = (lla_q *)q;
    for (block *b = l->head; b; b = b->next)
        for (unsigned i = b->first; i < b->end; i++)
            if (b->ctx[i] != CLAMPI_MQ_HOLE && b->cookie[i] == cookie) {
                remove_slot(l, b, i);
                return 1;
            }
    return 0;
}

static int lla_pop(clampi_mq *q, uintptr_t *cookie) {
    lla_q *l = (lla_q *)q;
    if (!l->head) return 0;
    *cookie = l->head->cookie[l->head->first];
    remove_slot(l, l->head, l->head->first);
    return 1;
}

static uint64_t lla_touch(clampi_mq *q) {
    uint64_t sum = 0;
    for (block *b = ((lla_q *)q)->head; b; b = b->next)
        for (unsigned i = b->first; i < b->end; i++) sum += b->ctx[i] + (uint32_t)b->src[i] + (uint32_t)b->tag[i];
    return sum;
}

static void lla_destroy(clampi_mq *q) {
    lla_q *l = (lla_q *)q;
    while (l->head) {
        block *n = l->head->next;
        free(l->head);
        l->head = n;
    }
    free(l->spare);
    free(l);
}

static const clampi_mq_ops lla_ops = {lla_push, lla_find, lla_remove_cookie, lla_pop, lla_touch, lla_destroy};

clampi_mq *clampi_mq_lla_create(unsigned width, int simd) {
    if (width < 1 || width > (1u << 20)) return NULL;
    lla_q *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->base.ops = &lla_ops;
    l->width = width;
    l->cap = (width + 7) & ~7u;
    l->simd = simd > 1 ? 1 : simd;
#if defined(LLA_AVX2)
    __builtin_cpu_init(); /* in case a matcher is made from a constructor */
    if (simd > 1 && __builtin_cpu_supports("avx2")) l->simd = 2;
#endif
    return &l->base;
}

int clampi_mq_lla_simd(const clampi_mq *q) { return ((const lla_q *)q)->simd; }
