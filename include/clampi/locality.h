/* clampi locality analysis: naming data structures for `clampi-locality`.
 *
 * CLAMPI_LOCALITY_NAME(ptr, name) gives the structure that holds ptr a name in
 * the tool's output (struct.name column, "structures" in the JSON):
 *   - under `clampi-locality run --exact` (Valgrind) it is a client request;
 *   - under `clampi-locality run --sample` the preloaded sampler defines the weak
 *     function clampi_locality_name() and the macro calls it;
 *   - in a plain run it does nothing (a few instructions).
 * ptr may point anywhere inside a tracked allocation (>= --min-size); for
 * other memory the name applies from ptr to the end of its page. name is
 * copied (at most 127 characters). */
#ifndef CLAMPI_LOCALITY_H
#define CLAMPI_LOCALITY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by the sampler library (libclampi_locality_sample.so) only. */
void clampi_locality_name(const void *ptr, const char *name) __attribute__((weak));

/* Valgrind client request number: VG_USERREQ_TOOL_BASE('C','L') + 0. */
#define CLAMPI_LOCALITY_REQ_NAME ((unsigned int)((('C' & 0xff) << 24) | (('L' & 0xff) << 16)))

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CLAMPI_LOCALITY_HAVE_VALGRIND_ 1
#endif
#endif

#ifdef CLAMPI_LOCALITY_HAVE_VALGRIND_
#define CLAMPI_LOCALITY_VG_NAME_(ptr, name) \
    VALGRIND_DO_CLIENT_REQUEST_STMT(CLAMPI_LOCALITY_REQ_NAME, (ptr), (name), 0, 0, 0)
#else
#define CLAMPI_LOCALITY_VG_NAME_(ptr, name) ((void)0)
#endif

#define CLAMPI_LOCALITY_NAME(ptr, name)                                                            \
    do {                                                                                           \
        CLAMPI_LOCALITY_VG_NAME_((const void *)(ptr), (const char *)(name));                       \
        if (clampi_locality_name) clampi_locality_name((const void *)(ptr), (const char *)(name)); \
    } while (0)

/* ---- NUMA first-touch allocators (clampi_numa_alloc & co.) follow here. ---- */

#ifdef __cplusplus
}
#endif

#endif /* CLAMPI_LOCALITY_H */
