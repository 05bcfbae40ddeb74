/* The one wait policy of clampi's own waits (node peers on the shared heap, messages in the
 * matching layer, a page another thread is opening): poll; after every `budget` polls that
 * found nothing, give the CPU away once (sched_yield), and poll again. A yield is a system
 * call: on a core of its own a waiting process has nobody to yield to, so budgets are large
 * there; on an oversubscribed node the process waited for needs this CPU, so budgets are
 * small or 0 (yield on every poll). Futex sleeping was measured and is slower on this kind
 * of machine (a wake-up costs tens of microseconds under KVM). Budgets are options:
 * CLAMPI_COLL_SPIN[_OVERSUB], CLAMPI_MATCH_SPIN[_OVERSUB]; the oversubscription test is
 * topo/node.h's. */
#ifndef CLAMPI_COMMON_WAIT_H
#define CLAMPI_COMMON_WAIT_H

#include <sched.h>

/* A spinning poll's pause: lets a sibling hardware thread run, saves power. */
static inline void clampi_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Call once per poll that found nothing; *polls (start at 0) counts them. Every budget-th
 * call yields (budget 0 or 1: every call). Returns 1 when it yielded. */
static inline int clampi_wait_pause(unsigned *polls, unsigned budget) {
    ++*polls;
    if (budget > 1 && *polls % budget != 0) return 0;
    sched_yield();
    return 1;
}

#endif
