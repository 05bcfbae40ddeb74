/* A tracked allocation as the locality sampler records it (MPI-free). */
#ifndef CLAMPI_LOCALITY_ALLOCS_H
#define CLAMPI_LOCALITY_ALLOCS_H
#include <stddef.h>
#include <stdint.h>

enum clampi_lalloc_kind {
    CLAMPI_LA_MALLOC,
    CLAMPI_LA_CALLOC,
    CLAMPI_LA_REALLOC,
    CLAMPI_LA_POSIX_MEMALIGN,
    CLAMPI_LA_ALIGNED_ALLOC,
    CLAMPI_LA_NEW,
    CLAMPI_LA_MMAP,
    CLAMPI_LA_STATIC, /* the executable's .data/.bss objects (sampler) */
};
/* The contract's "kind" strings, indexed by enum clampi_lalloc_kind. */
extern const char *const clampi_lalloc_kind_names[];

#define CLAMPI_LA_FRAMES 24 /* operator new <- 7 frames of -O0 std::vector <- main; MPI_Init <- 20 frames of Open MPI */

typedef struct clampi_lalloc {
    uintptr_t start;     /* address the program got */
    size_t size;         /* bytes it asked for */
    uintptr_t map_start; /* first page of the region the sampler watches */
    size_t map_size;     /* bytes of that region (whole pages) */
    int32_t thread;      /* allocating thread */
    int32_t prot;        /* the program's protection of the region */
    uint8_t kind;        /* enum clampi_lalloc_kind */
    uint8_t shared;      /* MAP_SHARED file mapping: file/file_off are set */
    uint8_t freed;       /* freed / unmapped: its pages are no longer watched */
    uint8_t nframes;
    uint8_t unwatched; /* the kernel writes into it (an alternate signal stack): never
                               re-protected by the sampler after its first touch */
    uint32_t reuses;   /* sampler: later allocations from the same call stack and size that
                          got this block again after a free (alloc.c, parked blocks) */
    uint64_t file_off;
    uintptr_t frames[CLAMPI_LA_FRAMES]; /* return addresses, innermost first */
    char name[128];                     /* CLAMPI_LOCALITY_NAME (at most 127 characters); "" when not named */
    char file[176];                     /* file of a shared mapping */
} clampi_lalloc;
#endif
