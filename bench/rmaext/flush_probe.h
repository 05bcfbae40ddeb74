/* Counting what a flush does, by interposition (flush_probe.c): the calling thread marks its
 * flushes with fp_enter/fp_leave; the lock, progress and flush calls made meanwhile, from
 * this executable, the MPI library or UCX, are counted for that thread. */
#ifndef RMAEXT_FLUSH_PROBE_H
#define RMAEXT_FLUSH_PROBE_H
void fp_enter(void);
void fp_leave(void);
/* Zero every thread's counters and the lock-sharing map (all threads quiescent). */
void fp_reset(void);
/* Prints " locks=... shared_locks=... workers=... progress=... ep_flushes=..." per flush. */
void fp_report(long flushes);
#endif
