/* CMPI_Win handles name windows by (slot, serial). A freed window's slot is reused
 * with a new serial, so a stale copy of a handle is recognised and refused instead of
 * touching freed memory. Slots live in fixed chunks that never move. */
#include <stdlib.h>

#include "rma/window.h"

#define CHUNK_BITS CLAMPI_REGISTRY_CHUNK_BITS
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS CLAMPI_REGISTRY_MAX_CHUNKS
#define chunks clampi_registry_chunks

clampi_win **clampi_registry_chunks[MAX_CHUNKS];
static uint32_t nslots;
static uint32_t *free_slots;
static uint32_t nfree, free_cap;
static uint32_t next_serial = 1;

int clampi_registry_add(clampi_win *w, CMPI_Win *h) {
    uint32_t slot;
    if (nfree) {
        slot = free_slots[--nfree];
    } else {
        uint32_t chunk = nslots >> CHUNK_BITS;
        if (chunk >= MAX_CHUNKS) return MPI_ERR_NO_MEM;
        if (!chunks[chunk] && !(chunks[chunk] = calloc(CHUNK, sizeof(clampi_win *)))) return MPI_ERR_NO_MEM;
        slot = nslots++;
    }
    if (next_serial == 0) next_serial = 1;
    w->serial = next_serial++;
    chunks[slot >> CHUNK_BITS][slot & (CHUNK - 1)] = w;
    h->win = w->win;
    h->slot = slot;
    h->serial = w->serial;
    return MPI_SUCCESS;
}

void clampi_registry_remove(CMPI_Win h) {
    if (!clampi_registry_find(h)) return;
    chunks[h.slot >> CHUNK_BITS][h.slot & (CHUNK - 1)] = NULL;
    if (nfree == free_cap) {
        uint32_t cap = free_cap ? free_cap * 2 : 64;
        uint32_t *p = realloc(free_slots, cap * sizeof *p);
        if (!p) return; /* the slot is simply not reused */
        free_slots = p;
        free_cap = cap;
    }
    free_slots[nfree++] = h.slot;
}
