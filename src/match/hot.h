/* Hot caching (the semi-permanent cache occupancy paper): the queues are read every hot_period_us so their lines stay in
 * the cache between searches. Two ways, chosen by cfg.hot_by:
 *  - THREAD: one helper thread per process wakes when a matcher's period has passed and
 *    reads its queues under trylock. Works while the application computes (the case that
 *    evicts the queues) but costs a thread: on an oversubscribed node it competes for a
 *    core, and the touch only helps when the thread shares a cache level with the
 *    matching thread. One thread, not one per matcher: a program with hundreds of
 *    communicators would otherwise run hundreds of threads, and pay a thread's creation
 *    (an 8 MiB stack, a clone) for every communicator it makes.
 *  - PROGRESS: clampi_matcher_progress(), called from the message layer's progress, reads
 *    the queues when the period has passed. No thread and no core, but nothing is touched
 *    while the application computes without calling into MPI, which is exactly when the
 *    queues get evicted. */
#ifndef CLAMPI_MATCH_HOT_H
#define CLAMPI_MATCH_HOT_H
#include "match/match.h"

int clampi_hot_start(clampi_matcher *m);
void clampi_hot_stop(clampi_matcher *m);
#endif
