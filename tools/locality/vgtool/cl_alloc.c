/* Allocations: Valgrind's malloc replacement (the client's malloc family runs
 * here), mmap tracking (from the syscall wrapper in cl_main.c), names given
 * with CLAMPI_LOCALITY_NAME, and shared file mappings. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_oset.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_execontext.h"
#include "pub_tool_machine.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_tooliface.h"
#include "cl_global.h"

/* Every tracked allocation ever made, in creation order (pages keep pointers). */
static Alloc **allocs;
static Word n_allocs, cap_allocs;

/* Live tracked allocations by address (they do not overlap). */
typedef struct {
    Addr start;
    SizeT size;
    Alloc *al;
} LiveNode;
static OSet *live;

static Word cmp_live(const void *key, const void *elem) {
    Addr a = *(const Addr *)key;
    const LiveNode *n = elem;
    if (a < n->start) return -1;
    if (a >= n->start + n->size) return 1;
    return 0;
}

void cl_alloc_init(void) {
    live = VG_(OSetGen_Create)(offsetof(LiveNode, start), cmp_live, VG_(malloc), "cl.live", VG_(free));
}

Word cl_alloc_count(void) { return n_allocs; }
Alloc *cl_alloc_at(Word i) { return allocs[i]; }

Alloc *cl_alloc_find_live(Addr a) {
    LiveNode *n = VG_(OSetGen_Lookup)(live, &a);
    return n ? n->al : NULL;
}

static void live_remove(Addr start) {
    LiveNode *n = VG_(OSetGen_Remove)(live, &start);
    if (!n) return;
    n->al->live = False;
    VG_(OSetGen_FreeNode)(live, n);
}

Alloc *cl_alloc_track(ThreadId tid, Addr start, SizeT size, const HChar *kind, ExeContext *where) {
    if (size == 0) return NULL;
    /* Live allocations never overlap: whatever the new block covers is gone. */
    cl_alloc_unmap(start, size);
    Alloc *al = VG_(malloc)("cl.alloc", sizeof *al);
    al->start = start;
    al->size = size;
    al->thread = cl_thread_id_of(tid);
    al->where = where ? where : VG_(record_ExeContext)(tid, 0);
    al->kind = kind;
    al->user_name = NULL;
    al->resolved_name = NULL;
    al->live = True;
    if (n_allocs == cap_allocs) {
        cap_allocs = cap_allocs ? 2 * cap_allocs : 256;
        allocs = VG_(realloc)("cl.allocs", allocs, cap_allocs * sizeof(Alloc *));
    }
    allocs[n_allocs++] = al;
    LiveNode *n = VG_(OSetGen_AllocNode)(live, sizeof(LiveNode));
    n->start = start;
    n->size = size;
    n->al = al;
    VG_(OSetGen_Insert)(live, n);
    cl_pages_assign_alloc(al);
    return al;
}

void cl_alloc_untrack(Addr start) {
    Alloc *al = cl_alloc_find_live(start);
    if (al && al->start == start) live_remove(start);
}

/* Memory [start, start+len) was unmapped or mapped anew: every tracked
 * allocation overlapping it is gone. */
void cl_alloc_unmap(Addr start, SizeT len) {
    Addr gone[64];
    for (;;) { /* in batches: the set cannot change while it is iterated */
        Int n = 0;
        Alloc *first = cl_alloc_find_live(start); /* may begin below start */
        if (first) gone[n++] = first->start;
        VG_(OSetGen_ResetIterAt)(live, &start);
        LiveNode *node;
        while (n < 64 && (node = VG_(OSetGen_Next)(live)) != NULL && node->start < start + len) {
            if (first && node->start == first->start) continue;
            gone[n++] = node->start;
        }
        if (n == 0) return;
        for (Int i = 0; i < n; i++) live_remove(gone[i]);
    }
}

void cl_alloc_name(ThreadId tid, Addr a, const HChar *name) {
    Alloc *al = cl_alloc_find_live(a);
    if (!al) { /* not a tracked allocation: name the rest of a's page */
        Addr end = ((a >> cl_page_shift) + 1) << cl_page_shift;
        al = cl_alloc_track(tid, a, end - a, "named", NULL);
    }
    if (al->user_name) VG_(free)(al->user_name);
    al->user_name = VG_(strdup)("cl.name", name);
}

/* ---------------- the malloc family ---------------- */

static void *do_alloc(ThreadId tid, SizeT n, SizeT align, Bool zero, const HChar *kind) {
    cl_flush_misses(); /* earlier accesses see the allocations of their time */
    void *p = VG_(cli_malloc)(align, n);
    if (!p) return NULL;
    if (zero) VG_(memset)(p, 0, n);
    if (n >= cl_min_size) cl_alloc_track(tid, (Addr)p, n, kind, NULL);
    return p;
}

static void do_free(ThreadId tid, void *p) {
    if (!p) return;
    cl_flush_misses();
    cl_alloc_untrack((Addr)p);
    VG_(cli_free)(p);
}

static void *cl_malloc(ThreadId tid, SizeT n) { return do_alloc(tid, n, VG_(clo_alignment), False, "malloc"); }
static void *cl_new(ThreadId tid, SizeT n) { return do_alloc(tid, n, VG_(clo_alignment), False, "new"); }
static void *cl_new_aligned(ThreadId tid, SizeT n, SizeT al) { return do_alloc(tid, n, al, False, "new"); }

/* memalign, posix_memalign, aligned_alloc and valloc all arrive here. glibc's
 * aligned_alloc is an alias of memalign (Valgrind replaces both as memalign), so
 * a call through posix_memalign's wrapper is "posix_memalign" and any other is
 * "aligned_alloc" (memalign and valloc are obsolete spellings of it). */
static void *cl_memalign(ThreadId tid, SizeT align, SizeT n) {
    cl_flush_misses();
    void *p = VG_(cli_malloc)(align, n);
    if (!p || n < cl_min_size) return p;
    ExeContext *where = VG_(record_ExeContext)(tid, 0);
    const HChar *kind = "aligned_alloc", *fn;
    Addr ips[3];
    UInt n_ips = VG_(get_StackTrace)(tid, ips, 3, NULL, NULL, 0);
    for (UInt i = 1; i < n_ips; i++)
        if (VG_(get_fnname)(VG_(current_DiEpoch)(), ips[i], &fn) && VG_(strstr)(fn, "posix_memalign"))
            kind = "posix_memalign";
    cl_alloc_track(tid, (Addr)p, n, kind, where);
    return p;
}

static void *cl_calloc(ThreadId tid, SizeT nmemb, SizeT size1) {
    if (size1 && nmemb > (SizeT)-1 / size1) return NULL; /* overflow */
    return do_alloc(tid, nmemb * size1, VG_(clo_alignment), True, "calloc");
}

static void cl_free_any(ThreadId tid, void *p) { do_free(tid, p); }
static void cl_free_aligned(ThreadId tid, void *p, SizeT align) { do_free(tid, p); }

static void *cl_realloc(ThreadId tid, void *p, SizeT n) {
    cl_flush_misses();
    if (p) cl_alloc_untrack((Addr)p);
    void *q = VG_(cli_realloc)(p, n);
    if (q && n >= cl_min_size) cl_alloc_track(tid, (Addr)q, n, "realloc", NULL);
    return q;
}

static SizeT cl_usable_size(ThreadId tid, void *p) { return VG_(cli_malloc_usable_size)(p); }

void cl_alloc_register_malloc(void);
void cl_alloc_register_malloc(void) {
    VG_(needs_malloc_replacement)
    (cl_malloc, cl_new, cl_new_aligned, cl_new, cl_new_aligned, cl_memalign, cl_calloc, cl_free_any, cl_free_any,
     cl_free_aligned, cl_free_any, cl_free_aligned, cl_realloc, cl_usable_size, 0);
}

/* ---------------- shared file mappings ---------------- */

static SharedMap *maps;
static Word n_maps, cap_maps;

void cl_mapping_add(Addr start, SizeT len, const HChar *file, ULong offset) {
    if (n_maps == cap_maps) {
        cap_maps = cap_maps ? 2 * cap_maps : 32;
        maps = VG_(realloc)("cl.maps", maps, cap_maps * sizeof(SharedMap));
    }
    maps[n_maps].start = start;
    maps[n_maps].end = start + len;
    maps[n_maps].file = VG_(strdup)("cl.maps", file);
    maps[n_maps].offset = offset;
    n_maps++;
}

void cl_mapping_forget(Addr start, SizeT len) {
    Word kept = 0;
    for (Word i = 0; i < n_maps; i++) {
        if (maps[i].start < start + len && maps[i].end > start) { /* replaced by a new mapping */
            VG_(free)(maps[i].file);
            continue;
        }
        maps[kept++] = maps[i];
    }
    n_maps = kept;
}

Word cl_mapping_count(void) { return n_maps; }
SharedMap *cl_mapping_at(Word i) { return &maps[i]; }
