/* Message-matching engine (the semi-permanent cache occupancy paper): the posted-receive queue and the unexpected-message
 * queue of one communicator (or of several: the context id is part of the key), MPI-free.
 *
 * A key is (context id, source, tag). Posted receives may carry CLAMPI_MATCH_ANY_SOURCE /
 * CLAMPI_MATCH_ANY_TAG; arrived messages never do; probes and receives search the
 * unexpected queue with wildcards. The first entry in queue order that matches wins, which
 * gives MPI's non-overtaking rule as long as arrivals from one sender are fed in the order
 * that sender sent them (the message layer's job).
 *
 * Thread safety: every call on one matcher takes that matcher's mutex (one lock for the
 * pair of queues: a post must search the unexpected queue and append to the posted queue
 * atomically with respect to an arrival doing the converse). The hot-caching helper thread
 * takes the same lock with trylock only, so it never delays a post or an arrival. */
#ifndef CLAMPI_MATCH_MATCH_H
#define CLAMPI_MATCH_MATCH_H
#include <stddef.h>
#include <stdint.h>

#define CLAMPI_MATCH_ANY_SOURCE (-1)
#define CLAMPI_MATCH_ANY_TAG (-1)
/* Context ids are 0 .. CLAMPI_MATCH_MAX_CONTEXT; the value above is reserved (holes). */
#define CLAMPI_MATCH_MAX_CONTEXT 0xfffffffeu

typedef struct clampi_match_key {
    uint32_t context;
    int32_t source; /* >= 0, or CLAMPI_MATCH_ANY_SOURCE */
    int32_t tag;    /* >= 0, or CLAMPI_MATCH_ANY_TAG */
} clampi_match_key;

/* The structures of the paper (list, linked list of arrays, hot caching over either) and
 * per-source bins (Flajslik et al., ISC 2016). */
typedef enum clampi_match_kind {
    CLAMPI_MATCH_LIST,
    CLAMPI_MATCH_LLA,
    CLAMPI_MATCH_HOT,     /* list + hot caching */
    CLAMPI_MATCH_LLA_HOT, /* lla + hot caching */
    CLAMPI_MATCH_BINS,
    CLAMPI_MATCH_NKINDS
} clampi_match_kind;

/* Who touches the queues for hot caching. */
typedef enum clampi_match_hot_by {
    CLAMPI_MATCH_HOT_THREAD,   /* the process's helper thread, every hot_period_us */
    CLAMPI_MATCH_HOT_PROGRESS, /* clampi_matcher_progress(), when hot_period_us has passed */
} clampi_match_hot_by;

#define CLAMPI_MATCH_DEFAULT_WIDTH 16
#define CLAMPI_MATCH_DEFAULT_HOT_PERIOD_US 50
#define CLAMPI_MATCH_DEFAULT_BINS 64

typedef struct clampi_match_config {
    clampi_match_kind kind;
    unsigned width;         /* lla: entries per array (>= 1) */
    unsigned hot_period_us; /* hot: touch period in microseconds (>= 1) */
    clampi_match_hot_by hot_by;
    unsigned bins; /* bins: number of source bins (rounded up to a power of two) */
    int simd;      /* lla key compare: 2 AVX2 where the CPU has it, else SSE2 (default); 1 SSE2; 0 scalar */
} clampi_match_config;

/* Defaults: kind lla+hot, width 16, period 50 us by a thread, 64 bins, SIMD on. */
void clampi_match_config_default(clampi_match_config *cfg);
/* "list", "lla", "hot", "lla+hot", "bins" <-> kind. parse returns 0, or -1 if unknown. */
int clampi_match_kind_parse(const char *name, clampi_match_kind *kind);
const char *clampi_match_kind_name(clampi_match_kind kind);

typedef struct clampi_matcher clampi_matcher;

/* Returns 0, or -1 (bad config: *out NULL; out of memory or no thread: -2). */
int clampi_matcher_create(const clampi_match_config *cfg, clampi_matcher **out);
/* Frees the queues (the cookies left in them are the caller's to reclaim first with
 * clampi_matcher_drain). */
void clampi_matcher_destroy(clampi_matcher *m);

/* Posts a receive. If an unexpected message matches, removes it and returns 1 with its
 * cookie in *matched; otherwise appends (key, cookie) to the posted queue and returns 0.
 * -1: out of memory (nothing changed). */
int clampi_matcher_post(clampi_matcher *m, clampi_match_key key, uintptr_t cookie, uintptr_t *matched);
/* A message arrived (no wildcards in key). If a posted receive matches, removes it and
 * returns 1 with its cookie in *matched; otherwise appends to the unexpected queue, 0. */
int clampi_matcher_arrive(clampi_matcher *m, clampi_match_key key, uintptr_t cookie, uintptr_t *matched);
/* Probe: the first unexpected message matching key (wildcards allowed); 1 and its cookie,
 * or 0. remove = 1 takes it off the queue (matched probe, MPI_Mprobe). */
int clampi_matcher_probe(clampi_matcher *m, clampi_match_key key, int remove, uintptr_t *found);
/* Cancels a posted receive: 1 if it was still queued (now removed), 0 if not (matched). */
int clampi_matcher_cancel(clampi_matcher *m, uintptr_t cookie);
/* Removes and hands back every entry (posted: which = 0, unexpected: 1), in order;
 * fn may be NULL. Returns how many. */
size_t clampi_matcher_drain(clampi_matcher *m, int which, void (*fn)(uintptr_t cookie, void *arg), void *arg);

/* Hot caching at progress: touches the queues if hot_by == PROGRESS and the period has
 * passed since the last touch. Cheap otherwise (a clock read). */
void clampi_matcher_progress(clampi_matcher *m);
/* Touches every entry of both queues now (if the lock is free); for benchmarks. Returns the
 * entries the queues hold (SIZE_MAX if the lock was busy). */
size_t clampi_matcher_touch(clampi_matcher *m);

typedef struct clampi_match_stats {
    uint64_t posts, arrivals, probes, cancels, matches;
    uint64_t searched; /* entries compared, over all searches */
    uint64_t searches;
    uint64_t touches; /* hot-caching passes */
    /* searches that matched (a post or arrival that found its partner, a matched probe):
     * entries compared by each, summed and the largest */
    uint64_t match_depth_sum, match_depth_max;
    size_t posted_len, unexpected_len;
} clampi_match_stats;
void clampi_matcher_stats(clampi_matcher *m, clampi_match_stats *out);
/* Entries compared by the matcher's last search (the match's depth, or the whole queue on
 * a miss). For benchmarks and for a caller that serializes its calls on m (the MPI
 * carrier's native depth); otherwise racy under threads (a statistic). */
size_t clampi_matcher_last_depth(clampi_matcher *m);
const clampi_match_config *clampi_matcher_config(const clampi_matcher *m);
#endif
