/* The bytes of a memory handle (CMPIX_Memhandle_create): a fixed little header, the
 * owner's packed UCX rkeys, and a checksum over everything before it. MPI-free, so the
 * parser is unit-tested (and fuzzed) without mpiexec. All integers little-endian as
 * written by this host (handles never leave a homogeneous job). */
#ifndef CLAMPI_RMAX_MH_FORMAT_H
#define CLAMPI_RMAX_MH_FORMAT_H
#include <stddef.h>
#include <stdint.h>

#define CLAMPI_MH_MAGIC 0x484d4c43u /* "CLMH" */
#define CLAMPI_MH_VERSION 3u

typedef struct clampi_mh_fields {
    uint32_t owner;      /* rank in the window's communicator */
    uint64_t win_id;     /* the dynamic window's id, the same on every rank */
    uint64_t base, size; /* the registered region at the owner */
    uint32_t slot;       /* liveness word: index in the owner's generation table */
    uint64_t generation; /* value that word holds while the handle is live (never 0) */
    uint64_t gen_addr;   /* address of that word at the owner */
    const void *rkey;    /* packed rkey of [base, base+size) */
    uint32_t rkey_len;
    const void *gen_rkey; /* packed rkey of the generation table */
    uint32_t gen_rkey_len;
    /* The region in clampi's node-shared heap (CMPI_Alloc_mem): a same-node peer whose
     * heap has this id reaches it by load/store at (segment, offset). heap_id 0: not. */
    uint64_t heap_id, heap_off;
    uint32_t heap_seg;
    /* The region's pages moved onto a memory file a same-node peer maps (mh_share.h):
     * share_node 0: none. */
    uint64_t share_node, share_token, share_lo, share_len;
    uint32_t share_pid, share_fd;
} clampi_mh_fields;

/* Writes the handle to out (cap bytes). Returns its length, or -1 if it does not fit. */
int clampi_mh_encode(const clampi_mh_fields *f, void *out, size_t cap);
/* Parses len bytes; the rkey pointers point into buf. 0, or -1 for anything that is not
 * exactly a handle this version wrote (bad magic/version, wrong length, checksum). */
int clampi_mh_decode(const void *buf, size_t len, clampi_mh_fields *f);
#endif
