/* Page tables: per-thread access counts (the hot path) and one record per page
 * with its first touch and owner (the cold path, once per thread and page). */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_machine.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_options.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_aspacemgr.h"
#include "cl_global.h"

#define EMPTY ((UWord)-1)

static inline UWord hash_page(UWord page, UWord mask) { return (UWord)((page * 0x9E3779B97F4A7C15ULL) >> 17) & mask; }

/* ---------------- per-thread counts ---------------- */

void cl_count_map_init(CountMap *m) {
    m->mask = 1023;
    m->used = 0;
    m->slots = VG_(malloc)("cl.counts", (m->mask + 1) * sizeof(CountSlot));
    for (UWord i = 0; i <= m->mask; i++) m->slots[i].page = EMPTY;
}

static void count_map_grow(CountMap *m) {
    CountSlot *old = m->slots;
    UWord old_cap = m->mask + 1;
    m->mask = old_cap * 2 - 1;
    m->slots = VG_(malloc)("cl.counts", (m->mask + 1) * sizeof(CountSlot));
    for (UWord i = 0; i <= m->mask; i++) m->slots[i].page = EMPTY;
    for (UWord i = 0; i < old_cap; i++) {
        if (old[i].page == EMPTY) continue;
        UWord h = hash_page(old[i].page, m->mask);
        while (m->slots[h].page != EMPTY) h = (h + 1) & m->mask;
        m->slots[h] = old[i];
    }
    VG_(free)(old);
}

/* The slot of page; *fresh tells whether it was just created. */
static CountSlot *count_slot(CountMap *m, UWord page, Bool *fresh) {
    UWord h = hash_page(page, m->mask);
    for (;;) {
        CountSlot *s = &m->slots[h];
        if (s->page == page) {
            *fresh = False;
            return s;
        }
        if (s->page == EMPTY) break;
        h = (h + 1) & m->mask;
    }
    if (2 * (m->used + 1) > m->mask + 1) {
        count_map_grow(m);
        h = hash_page(page, m->mask);
        while (m->slots[h].page != EMPTY) h = (h + 1) & m->mask;
    }
    m->used++;
    m->slots[h].page = page;
    m->slots[h].count = 0;
    *fresh = True;
    return &m->slots[h];
}

/* ---------------- page records ---------------- */

static PageInfo *pages; /* growable array, index = record id */
static Word n_pages, cap_pages;
static Word *index_slots; /* open addressing: page -> record id, -1 empty */
static UWord *index_keys;
static UWord index_mask;

void cl_pages_init(void) {
    cap_pages = 1024;
    pages = VG_(malloc)("cl.pages", cap_pages * sizeof(PageInfo));
    index_mask = 4095;
    index_keys = VG_(malloc)("cl.pindex", (index_mask + 1) * sizeof(UWord));
    index_slots = VG_(malloc)("cl.pindex", (index_mask + 1) * sizeof(Word));
    for (UWord i = 0; i <= index_mask; i++) index_keys[i] = EMPTY;
}

Word cl_page_count(void) { return n_pages; }
PageInfo *cl_page_at(Word i) { return &pages[i]; }

PageInfo *cl_page_lookup(UWord page) {
    UWord h = hash_page(page, index_mask);
    while (index_keys[h] != EMPTY) {
        if (index_keys[h] == page) return &pages[index_slots[h]];
        h = (h + 1) & index_mask;
    }
    return NULL;
}

static void index_insert(UWord page, Word id) {
    UWord h = hash_page(page, index_mask);
    while (index_keys[h] != EMPTY) h = (h + 1) & index_mask;
    index_keys[h] = page;
    index_slots[h] = id;
}

PageInfo *cl_page_get(UWord page) {
    PageInfo *p = cl_page_lookup(page);
    if (p) return p;
    if (n_pages == cap_pages) {
        cap_pages *= 2;
        pages = VG_(realloc)("cl.pages", pages, cap_pages * sizeof(PageInfo));
    }
    if (2 * (UWord)(n_pages + 1) > index_mask + 1) { /* rebuild the index twice as big */
        VG_(free)(index_keys);
        VG_(free)(index_slots);
        index_mask = index_mask * 2 + 1;
        index_keys = VG_(malloc)("cl.pindex", (index_mask + 1) * sizeof(UWord));
        index_slots = VG_(malloc)("cl.pindex", (index_mask + 1) * sizeof(Word));
        for (UWord i = 0; i <= index_mask; i++) index_keys[i] = EMPTY;
        for (Word i = 0; i < n_pages; i++) index_insert(pages[i].page, i);
    }
    p = &pages[n_pages];
    p->page = page;
    p->ft_thread = -1;
    p->ft_where = NULL;
    p->alloc = NULL;
    p->datasym = NULL;
    p->datasym_start = 0;
    p->stack_of = -1;
    index_insert(page, n_pages++);
    return p;
}

void cl_pages_assign_alloc(Alloc *al) {
    UWord first = al->start >> cl_page_shift, last = (al->start + al->size - 1) >> cl_page_shift;
    if (last - first + 1 > (UWord)n_pages) { /* big range, few pages: scan the records */
        for (Word i = 0; i < n_pages; i++)
            if (pages[i].page >= first && pages[i].page <= last) pages[i].alloc = al;
        return;
    }
    for (UWord pg = first; pg <= last; pg++) {
        PageInfo *p = cl_page_lookup(pg);
        if (p) p->alloc = al;
    }
}

/* A new mapping makes fresh pages: forget what happened at these addresses
 * before (an earlier, unmapped life such as the loader's temporary maps). */
static void reset_page(PageInfo *p) {
    p->ft_thread = -1;
    p->ft_where = NULL;
    p->alloc = NULL;
    p->datasym = NULL;
    p->stack_of = -1;
    for (Int t = 0; t < cl_nthreads; t++) {
        ThreadStats *ts = cl_thread(t);
        UWord h = hash_page(p->page, ts->counts.mask);
        while (ts->counts.slots[h].page != EMPTY) {
            if (ts->counts.slots[h].page == p->page) {
                ts->counts.slots[h].count = 0;
                break;
            }
            h = (h + 1) & ts->counts.mask;
        }
        if (ts->last_page == p->page) ts->last_page = EMPTY;
    }
    if (cl_last_page == p->page) { /* the running thread's inline cache */
        cl_last_page = EMPTY;
        cl_last_base = EMPTY << cl_page_shift;
    }
}

void cl_pages_reset(Addr start, SizeT len) {
    if (len == 0) return;
    UWord first = start >> cl_page_shift, last = (start + len - 1) >> cl_page_shift;
    if (last - first + 1 > (UWord)n_pages) {
        for (Word i = 0; i < n_pages; i++)
            if (pages[i].page >= first && pages[i].page <= last) reset_page(&pages[i]);
        return;
    }
    for (UWord pg = first; pg <= last; pg++) {
        PageInfo *p = cl_page_lookup(pg);
        if (p) reset_page(p);
    }
}

/* C++ static data is named by its mangled symbol (`static double s[]` at file scope is
 * `_ZL1s`): the demangled name is the variable's. */
extern void VG_(demangle)(Bool do_cxx_demangling, Bool do_z_demangling, const HChar *orig, const HChar **result);
static const HChar *demangled(const HChar *sym) {
    const HChar *out = NULL;
    if (sym[0] != '_' || sym[1] != 'Z') return sym;
    VG_(demangle)(True, False, sym, &out);
    return out && out[0] ? out : sym;
}

/* Interned static-data symbol names (few distinct ones). */
static const HChar *intern(const HChar *s) {
    static HChar **names;
    static Word n, cap;
    for (Word i = 0; i < n; i++)
        if (VG_(strcmp)(names[i], s) == 0) return names[i];
    if (n == cap) {
        cap = cap ? 2 * cap : 64;
        names = VG_(realloc)("cl.syms", names, cap * sizeof(HChar *));
    }
    names[n] = VG_(strdup)("cl.syms", s);
    return names[n++];
}

/* ---------------- misses: counted in batches ---------------- */

MissEntry cl_miss_buf[CL_MISS_CAP];
MissEntry *cl_miss_next = cl_miss_buf;
ThreadId cl_cur_tid;

/* The first-touch stack: the running thread's stack at the flush, with the
 * innermost frame replaced by the touching instruction. Flushes happen at the
 * end of the superblock that made the access (same function) or earlier. */
static Addr flush_ips[64];
static UInt flush_n_ips;

static ExeContext *touch_context(Addr iaddr) {
    Addr ips[64];
    if (flush_n_ips == 0) {
        UInt depth = VG_(clo_backtrace_size) < 64 ? (UInt)VG_(clo_backtrace_size) : 64;
        flush_n_ips = VG_(get_StackTrace)(cl_cur_tid, flush_ips, depth, NULL, NULL, 0);
        if (flush_n_ips == 0) flush_n_ips = 1;
    }
    VG_(memcpy)(ips, flush_ips, flush_n_ips * sizeof(Addr));
    ips[0] = iaddr;
    return VG_(make_ExeContext_from_StackTrace)(ips, flush_n_ips);
}

static void first_touch(ThreadStats *t, PageInfo *p, Addr a, Addr iaddr) {
    p->ft_thread = t->id;
    p->ft_where = touch_context(iaddr);
    if (!p->alloc) p->alloc = cl_alloc_find_live(a);
    if (!p->alloc) {
        const HChar *sym;
        PtrdiffT off;
        if (VG_(get_datasym_and_offset)(VG_(current_DiEpoch)(), a, &sym, &off)) {
            /* another object's static data (libc's, ld.so's, a library's): "libc.so.6:sym",
             * so that the report can tell it from the program's */
            const HChar *obj = NULL;
            HChar named[512], exe[256];
            NSegment const *seg = VG_(am_find_nsegment)(a);
            obj = seg ? VG_(am_get_filename)(seg) : NULL;
            if (!obj) VG_(DebugInfo_sect_kind)(&obj, a);
            if (obj && VG_(strcmp)(obj, "???") == 0) obj = NULL;
            VG_(snprintf)(exe, sizeof exe, "%s", VG_(args_the_exename) ? VG_(basename)(VG_(args_the_exename)) : "");
            if (obj && exe[0] && VG_(strcmp)(VG_(basename)(obj), exe) != 0) {
                HChar lib[256];
                VG_(snprintf)(lib, sizeof lib, "%s", VG_(basename)(obj));
                VG_(snprintf)(named, sizeof named, "%s:%s", lib, demangled(sym));
                p->datasym = intern(named);
            } else {
                p->datasym = intern(demangled(sym));
            }
            p->datasym_start = a - off;
        }
    }
    ThreadId st;
    Addr lo, hi;
    VG_(thread_stack_reset_iter)(&st);
    while (VG_(thread_stack_next)(&st, &lo, &hi)) {
        if (a >= lo && a <= hi) {
            p->stack_of = cl_thread_id_of(st);
            break;
        }
    }
}

static void count_slow(ThreadStats *t, UWord page, Addr a, Addr iaddr) {
    Bool fresh;
    CountSlot *s = count_slot(&t->counts, page, &fresh);
    fresh = fresh || s->count == 0; /* 0: reset by a new mapping (cl_pages_reset) */
    s->count++;
    cl_last_page = page;
    cl_last_base = page << cl_page_shift;
    cl_last_count = &s->count;
    if (!fresh) return;
    /* This thread's first access to the page: was it anyone's? */
    PageInfo *p = cl_page_get(page);
    if (p->ft_thread < 0) first_touch(t, p, a, iaddr);
}

/* Accesses that missed the inline one-page cache, in program order. An access
 * that spans a page boundary counts once on each page it touches. */
void cl_flush_misses(void) {
    UWord n = (UWord)(cl_miss_next - cl_miss_buf);
    ThreadStats *t = cl_cur;
    if (n == 0 || !t) return;
    cl_miss_next = cl_miss_buf;
    flush_n_ips = 0;
    for (UWord i = 0; i < n; i++) {
        Addr a = cl_miss_buf[i].addr, iaddr = (Addr)(cl_miss_buf[i].info & 0xffffffffffffULL);
        UWord size = (UWord)(cl_miss_buf[i].info >> 48);
        UWord page = a >> cl_page_shift, last = (a + (size ? size : 1) - 1) >> cl_page_shift;
        if (page == cl_last_page)
            (*cl_last_count)++;
        else
            count_slow(t, page, a, iaddr);
        for (UWord pg = page + 1; pg <= last; pg++) count_slow(t, pg, pg << cl_page_shift, iaddr);
    }
}
