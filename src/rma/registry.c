/* CMPI_Win handles name windows by (slot, serial). A freed window's slot is reused
 * with a new serial, so a stale copy of a handle is recognised and refused instead of
 * touching freed memory. Slots live in fixed chunks that never move. The windows are also
 * in a list in the order they were made; MPI_Finalize walks it for the windows left to it
 * (unfreed.c), with no allocation. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rma/window.h"

/* Creation and free may run in several threads at once (on different communicators). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHUNK_BITS CLAMPI_REGISTRY_CHUNK_BITS
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS CLAMPI_REGISTRY_MAX_CHUNKS
#define chunks clampi_registry_chunks

clampi_win **clampi_registry_chunks[MAX_CHUNKS];
static uint32_t nslots;
static uint32_t *free_slots;
static uint32_t nfree, free_cap;
static uint32_t next_serial = 1;
static clampi_win *newest; /* the list of registered windows, newest first */
static uint64_t made;

int clampi_registry_add(clampi_win *w, CMPI_Win *h) {
    uint32_t slot;
    pthread_mutex_lock(&registry_lock);
    if (nfree) {
        slot = free_slots[--nfree];
    } else {
        uint32_t chunk = nslots >> CHUNK_BITS;
        if (chunk >= MAX_CHUNKS || (!chunks[chunk] && !(chunks[chunk] = calloc(CHUNK, sizeof(clampi_win *))))) {
            pthread_mutex_unlock(&registry_lock);
            return MPI_ERR_NO_MEM;
        }
        slot = nslots++;
    }
    if (next_serial == 0) next_serial = 1;
    w->serial = next_serial++;
    chunks[slot >> CHUNK_BITS][slot & (CHUNK - 1)] = w;
    w->made = ++made;
    w->slot = slot;
    w->older = newest;
    w->newer = NULL;
    if (newest) newest->newer = w;
    newest = w;
    h->win = w->b.win;
    h->slot = slot;
    h->serial = w->serial;
    pthread_mutex_unlock(&registry_lock);
    return MPI_SUCCESS;
}

void clampi_registry_remove(CMPI_Win h) {
    if (!clampi_registry_find(h)) return;
    pthread_mutex_lock(&registry_lock);
    clampi_win *w = chunks[h.slot >> CHUNK_BITS][h.slot & (CHUNK - 1)];
    if (w->newer)
        w->newer->older = w->older;
    else
        newest = w->older;
    if (w->older) w->older->newer = w->newer;
    chunks[h.slot >> CHUNK_BITS][h.slot & (CHUNK - 1)] = NULL;
    if (nfree == free_cap) {
        uint32_t cap = free_cap ? free_cap * 2 : 64;
        uint32_t *p = realloc(free_slots, cap * sizeof *p);
        if (p) {
            free_slots = p;
            free_cap = cap;
        }
    }
    if (nfree < free_cap) free_slots[nfree++] = h.slot; /* else the slot is simply not reused */
    pthread_mutex_unlock(&registry_lock);
}

/* ---- MPI_Win -> state ------------------------------------------------------------------
 * Open addressing with linear probing over MAP_CAP slots; keys are the MPI_Win handle's
 * bits (a pointer in Open MPI, an int in MPICH; never 0 or 1). Writers (create/free) hold
 * registry_lock and bump map_seq around each change (odd while changing); readers take
 * no lock: they probe with relaxed atomic loads and retry if map_seq moved. A reader only
 * ever dereferences the state of a window it is using, which cannot be freed meanwhile. */
#define MAP_CAP CLAMPI_MAP_CAP
#define KEY_EMPTY 0u
#define KEY_TOMB 1u
#define map clampi_registry_map_slots
#define map_seq clampi_registry_map_seq
clampi_map_slot map[MAP_CAP];
unsigned map_seq;
static unsigned map_used, map_tombs;

#define win_key clampi_registry_win_key
#define map_home clampi_registry_map_home

static void map_put(uint64_t k, clampi_win *w) {
    for (uint32_t i = map_home(k);; i = (i + 1) & (MAP_CAP - 1)) {
        uint64_t cur = __atomic_load_n(&map[i].key, __ATOMIC_RELAXED);
        if (cur == KEY_EMPTY || cur == KEY_TOMB) {
            if (cur == KEY_TOMB) map_tombs--;
            __atomic_store_n(&map[i].w, w, __ATOMIC_RELAXED);
            __atomic_store_n(&map[i].key, k, __ATOMIC_RELAXED);
            map_used++;
            return;
        }
    }
}

/* Drops tombstones by re-inserting every live entry (inside a write section). */
static void map_rebuild(void) {
    static clampi_map_slot live[MAP_CAP];
    unsigned n = 0;
    for (uint32_t i = 0; i < MAP_CAP; i++) {
        uint64_t k = __atomic_load_n(&map[i].key, __ATOMIC_RELAXED);
        if (k != KEY_EMPTY && k != KEY_TOMB) {
            live[n].key = k;
            live[n].w = map[i].w;
            n++;
        }
        __atomic_store_n(&map[i].key, KEY_EMPTY, __ATOMIC_RELAXED);
    }
    map_used = map_tombs = 0;
    for (unsigned j = 0; j < n; j++) map_put(live[j].key, live[j].w);
}

static void write_begin(void) {
    __atomic_store_n(&map_seq, map_seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}
static void write_end(void) { __atomic_store_n(&map_seq, map_seq + 1, __ATOMIC_RELEASE); }

int clampi_registry_map(clampi_win *w) {
    int rc = -1;
    pthread_mutex_lock(&registry_lock);
    if (map_used < MAP_CAP / 2) {
        write_begin();
        if (map_used + map_tombs >= MAP_CAP / 2) map_rebuild();
        map_put(win_key(w->b.win), w);
        write_end();
        rc = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

void clampi_registry_unmap(clampi_win *w) {
    uint64_t k = win_key(w->b.win);
    pthread_mutex_lock(&registry_lock);
    for (uint32_t i = map_home(k), n = 0; n < MAP_CAP; i = (i + 1) & (MAP_CAP - 1), n++) {
        uint64_t cur = map[i].key;
        if (cur == KEY_EMPTY) break;
        if (cur == k && map[i].w == w) {
            write_begin();
            __atomic_store_n(&map[i].key, KEY_TOMB, __ATOMIC_RELAXED);
            map_used--;
            map_tombs++;
            write_end();
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

void clampi_registry_for_each_mapped(void (*fn)(const clampi_win *w)) {
    pthread_mutex_lock(&registry_lock);
    for (uint32_t i = 0; i < MAP_CAP; i++)
        if (map[i].key != KEY_EMPTY && map[i].key != KEY_TOMB) fn(map[i].w);
    pthread_mutex_unlock(&registry_lock);
}

/* (finalize_order, made) of a below b's */
static int finalizes_after(const clampi_win *a, const clampi_registry_place *b) {
    return a->b.finalize_order < b->order || (a->b.finalize_order == b->order && a->made < b->made);
}

int clampi_registry_next_to_finalize(int (*pred)(const clampi_win *w), clampi_registry_place *below, CMPI_Win *h) {
    pthread_mutex_lock(&registry_lock);
    const clampi_win *best = NULL;
    for (const clampi_win *w = newest; w; w = w->older) {
        if (!finalizes_after(w, below) || !pred(w)) continue;
        if (!best || w->b.finalize_order > best->b.finalize_order ||
            (w->b.finalize_order == best->b.finalize_order && w->made > best->made))
            best = w;
    }
    if (best) {
        *below = (clampi_registry_place){best->b.finalize_order, best->made};
        *h = (CMPI_Win){.win = best->b.win, .slot = best->slot, .serial = best->serial};
    }
    pthread_mutex_unlock(&registry_lock);
    return best != NULL;
}
