/* At exit: resolve source locations and structure names, then write
 * DIR/rank<R>.csv and DIR/rank<R>.json (each to .tmp, then renamed). */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_execontext.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_xarray.h"
#include "pub_tool_vki.h"
#include "cl_global.h"
#include "cl_srcname.h"

/* ---------------- source locations ---------------- */

/* How many of the program's lines outward of an allocation's are kept, for naming the
 * variable behind an allocation wrapper (alloc_name_uncached). */
#define CL_OUTER_LINES 3

typedef struct {
    ExeContext *ec;
    HChar short_loc[128]; /* "file.c:123" or "?" */
    HChar path[512];      /* source file, for reading the line; "" if unknown */
    UInt line;
    HChar lib[128]; /* a library between the allocator and the program (its own
                               buffer): "libmpi.so.40", else "" */
    Bool alloc_mem; /* that call went through MPI_Alloc_mem: the program's memory */
    Int owner;      /* the allocator's caller: 0 unknown, 1 the program, 2 a library */
    Bool program;   /* a frame of the program was found */
    Addr ip;        /* that frame's instruction (tells allocations on one line apart) */
    Bool alloc;     /* an allocation's location (else a first touch's) */
    Int site_rank;  /* line_sites: this site's place among the line's, -1 not known yet */
    Int site_count;
    Int n_outer; /* the program's next lines outward (inlined callers, calling frames) */
    HChar *outer_path[CL_OUTER_LINES];
    UInt outer_line[CL_OUTER_LINES];
} Loc;

static Loc *locs;
static Word n_locs, cap_locs;

static Bool starts_with(const HChar *s, const HChar *prefix) {
    return s && VG_(strncmp)(s, prefix, VG_(strlen)(prefix)) == 0;
}

/* Frames of the C library, the C++ runtime, system headers (inlined STL code),
 * Valgrind's preloads and clampi itself do not count as "the program". `path` is the
 * source file of one (possibly inlined) level of the frame, `fn` its function. */
static Bool is_system_level(DiEpoch ep, Addr ip, const HChar *path, const HChar *fn) {
    const HChar *obj;
    if (VG_(get_objname)(ep, ip, &obj) &&
        (starts_with(obj, "/lib") || starts_with(obj, "/usr/lib") || VG_(strstr)(obj, "vgpreload_") ||
         VG_(strstr)(obj, "libstdc++") || VG_(strstr)(obj, "/ld-linux")))
        return True;
    if (starts_with(path, "/usr/include") || starts_with(path, "/usr/lib") || starts_with(path, "/usr/src") ||
        VG_(strstr)(path, "/c++/") || VG_(strstr)(path, "libstdc++") || VG_(strstr)(path, "/glibc"))
        return True;
    /* the standard library's templates instantiated in the program, whatever file the
     * line table names, and clampi's own functions */
    if (starts_with(fn, "std::") || starts_with(fn, "__gnu_cxx::") || starts_with(fn, "__cxx") ||
        starts_with(fn, "operator new") || starts_with(fn, "void std::") || starts_with(fn, "clampi_") ||
        starts_with(fn, "clampi::") || starts_with(fn, "CMPI_") || starts_with(fn, "cmpi_"))
        return True;
    return False;
}

typedef struct {
    Loc *out;
    Bool found_program, found_any;
} FrameWalk;

/* Libraries that allocate on the program's behalf (the allocator itself, the C++
 * runtime's out-of-line templates) are not an allocation's owner. */
static Bool is_transparent_obj(const HChar *obj) {
    return VG_(strstr)(obj, "vgpreload_") || VG_(strstr)(obj, "libstdc++") || VG_(strstr)(obj, "libgcc_s");
}

/* Who made a heap allocation, decided by the allocator's caller (the
 * first frame outside the transparent objects): the program (also its own instances of
 * libstdc++ templates, and clampi's allocation functions CMPI_Alloc_mem,
 * clampi_numa_alloc...) or a library (Open MPI's calloc inside MPI_Win_allocate_shared,
 * stdio's buffer, CMPI_Win_allocate's bookkeeping). Named after the outermost library
 * below the program's frame (libmpi, not an MCA component). MPI_Alloc_mem anywhere on
 * the way: the program's memory. */
static void note_owner(Loc *l, UInt n, DiEpoch ep, Addr ip) {
    const HChar *obj, *fn;
    if (n == 0 || !VG_(get_objname)(ep, ip, &obj) || is_transparent_obj(obj)) return;
    if (!VG_(get_fnname)(ep, ip, &fn)) fn = "";
    if (VG_(strcmp)(fn, "MPI_Alloc_mem") == 0 || VG_(strcmp)(fn, "PMPI_Alloc_mem") == 0) l->alloc_mem = True;
    Bool clampi = VG_(strstr)(obj, "libclampi") != NULL;
    if (!VG_(strstr)(obj, ".so") && !starts_with(obj, "/lib") && !starts_with(obj, "/usr/lib")) {
        if (l->owner == 0) l->owner = 1; /* the executable */
        return;
    }
    if (l->owner == 0) l->owner = clampi && VG_(strstr)(fn, "lloc") && !VG_(strstr)(fn, "Win_") ? 1 : 2;
    if (!l->lib[0] || !clampi) VG_(snprintf)(l->lib, sizeof l->lib, "%s", VG_(basename)(obj));
}

static void set_loc(Loc *l, const HChar *path, UInt line) {
    VG_(snprintf)(l->short_loc, sizeof l->short_loc, "%s:%u", VG_(basename)(path), line);
    VG_(snprintf)(l->path, sizeof l->path, "%s", path);
    l->line = line;
}

/* One level of VG_(describe_IP)'s text, "0x4011AB: fn (dir/file.c:123)" (the directory
 * is printed in full: cl_locations_init adds --fullpath-after=): its function, path and
 * line. False without a source location ("(in /lib/libc.so.6)"). */
static Bool parse_described(const HChar *d, HChar *fn, Int fncap, HChar *path, Int pathcap, UInt *line) {
    const HChar *open = NULL, *q;
    Int n = (Int)VG_(strlen)(d);
    if (n < 4 || d[n - 1] != ')') return False;
    for (q = d; (q = VG_(strstr)(q, " (")) != NULL; q++) open = q;
    if (!open || starts_with(open + 2, "in ")) return False;
    const HChar *colon = NULL;
    for (q = open + 2; q < d + n - 1; q++)
        if (*q == ':') colon = q;
    if (!colon) return False;
    Int plen = (Int)(colon - (open + 2));
    if (plen <= 0 || plen >= pathcap) return False;
    VG_(memcpy)(path, open + 2, plen);
    path[plen] = 0;
    *line = (UInt)VG_(strtoll10)(colon + 1, NULL);
    const HChar *f = VG_(strstr)(d, ": ");
    f = (f && f < open) ? f + 2 : d;
    Int flen = (Int)(open - f);
    if (flen >= fncap) flen = fncap - 1;
    VG_(memcpy)(fn, f, flen);
    fn[flen] = 0;
    return *line > 0;
}

/* Walks every inlined level of the frame, innermost first: at -O2 the program's line that
 * constructs a std::vector is an inlined caller of new_allocator.h / stl_algobase.h code
 * at the same instruction. */
static void visit_frame(UInt n, DiEpoch ep, Addr ip, void *opaque) {
    FrameWalk *w = opaque;
    Loc *l = w->out;
    if (w->found_program && l->n_outer == CL_OUTER_LINES) return;
    if (!w->found_program) note_owner(l, n, ep, ip);
    InlIPCursor *iipc = VG_(new_IIPC)(ep, ip);
    do {
        HChar fn[256], path[512];
        UInt line;
        if (!parse_described(VG_(describe_IP)(ep, ip, iipc), fn, sizeof fn, path, sizeof path, &line)) continue;
        if (!is_system_level(ep, ip, path, fn)) {
            if (w->found_program) { /* a line further out, for naming */
                l->outer_path[l->n_outer] = VG_(strdup)("cl.outer", path);
                l->outer_line[l->n_outer++] = line;
                if (l->n_outer == CL_OUTER_LINES) break;
                continue;
            }
            set_loc(l, path, line);
            l->ip = ip;
            w->found_program = True;
            l->program = True;
        } else if (!w->found_any && !w->found_program) {
            set_loc(l, path, line);
            w->found_any = True;
        }
    } while (VG_(next_IIPC)(iipc));
    VG_(delete_IIPC)(iipc);
}

/* VG_(describe_IP) prints directories only with --fullpath-after; an empty prefix keeps
 * them whole (the option only changes how Valgrind's own messages print locations). */
extern XArray *VG_(clo_fullpath_after);
/* Inlined frames need the DWARF inline info, which Valgrind reads by default only for
 * Memcheck and a few other tools (--read-inline-info; the CLI passes =yes too). */
extern Bool VG_(clo_read_inline_info);
void cl_locations_init(void);
void cl_locations_init(void) {
    static const HChar *empty = "";
    VG_(clo_read_inline_info) = True;
    if (VG_(clo_fullpath_after) && VG_(sizeXA)(VG_(clo_fullpath_after)) == 0)
        VG_(addToXA)(VG_(clo_fullpath_after), &empty);
}

/* ExeContext -> its Loc, open addressing (many pages share few contexts). */
static Word *loc_index; /* -1 empty */
static UWord loc_mask;

static UWord hash_ec(const ExeContext *ec) { return ((UWord)ec >> 4) * 0x9E3779B97F4A7C15ULL >> 20; }

static void loc_index_rebuild(UWord cap) {
    VG_(free)(loc_index);
    loc_mask = cap - 1;
    loc_index = VG_(malloc)("cl.locidx", cap * sizeof(Word));
    for (UWord i = 0; i < cap; i++) loc_index[i] = -1;
    for (Word i = 0; i < n_locs; i++) {
        UWord h = hash_ec(locs[i].ec) & loc_mask;
        while (loc_index[h] >= 0) h = (h + 1) & loc_mask;
        loc_index[h] = i;
    }
}

static const Loc *resolve(ExeContext *ec) {
    static const Loc unknown = {NULL, "?", "", 0, "", False, 0, False, 0, False, -1, 0, 0, {NULL}, {0}};
    if (!ec) return &unknown;
    if (!loc_index) loc_index_rebuild(1024);
    UWord h = hash_ec(ec) & loc_mask;
    for (; loc_index[h] >= 0; h = (h + 1) & loc_mask)
        if (locs[loc_index[h]].ec == ec) return &locs[loc_index[h]];
    if (n_locs == cap_locs) {
        cap_locs = cap_locs ? 2 * cap_locs : 256;
        locs = VG_(realloc)("cl.locs", locs, cap_locs * sizeof(Loc));
    }
    Loc *l = &locs[n_locs];
    *l = unknown;
    l->ec = ec;
    FrameWalk w = {l, False, False};
    VG_(apply_ExeContext)(visit_frame, &w, ec);
    loc_index[h] = n_locs++;
    if (2 * (UWord)n_locs > loc_mask + 1) loc_index_rebuild(2 * (loc_mask + 1));
    return l;
}

/* ---------------- source lines ---------------- */

typedef struct {
    HChar *path;
    HChar *text;
    Int len;
} SrcFile;
static SrcFile srcs[32];
static Int n_srcs;

static const SrcFile *load_source(const HChar *path) {
    for (Int i = 0; i < n_srcs; i++)
        if (VG_(strcmp)(srcs[i].path, path) == 0) return &srcs[i];
    if (n_srcs == (Int)(sizeof srcs / sizeof srcs[0])) return NULL;
    SrcFile *f = &srcs[n_srcs++];
    f->path = VG_(strdup)("cl.src", path);
    f->text = NULL;
    f->len = 0;
    SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
    if (sr_isError(r)) return f;
    Int fd = (Int)sr_Res(r), cap = 1 << 16;
    f->text = VG_(malloc)("cl.src", cap + 1);
    for (;;) {
        if (f->len == cap) {
            if (cap >= (8 << 20)) break; /* 8 MiB of source is enough */
            cap *= 2;
            f->text = VG_(realloc)("cl.src", f->text, cap + 1);
        }
        Int got = VG_(read)(fd, f->text + f->len, cap - f->len);
        if (got <= 0) break;
        f->len += got;
    }
    f->text[f->len] = 0;
    VG_(close)(fd);
    return f;
}

/* Copies line number `line` (1-based) of path into buf; False if unreadable. */
static Bool source_line(const HChar *path, UInt line, HChar *buf, Int cap) {
    const SrcFile *f = path[0] ? load_source(path) : NULL;
    if (!f || !f->text || line == 0) return False;
    const HChar *p = f->text, *end = f->text + f->len;
    for (UInt l = 1; l < line && p < end; p++)
        if (*p == '\n') l++;
    if (p >= end) return False;
    Int n = 0;
    while (p < end && *p != '\n' && n < cap - 1) buf[n++] = *p++;
    buf[n] = 0;
    return True;
}

/* The variable a line assigns (cl_srcname.h), also when the statement began on the line
 * before ("double *u =" / "malloc(n);"). */
static Bool name_on_line(const HChar *path, UInt line, HChar *out, Int cap) {
    HChar src[512], prev[512];
    if (!source_line(path, line, src, sizeof src)) return False;
    Bool has_prev = line > 1 && source_line(path, line - 1, prev, sizeof prev);
    return cl_srcname_from_statement(has_prev ? prev : NULL, src, out, cap) != 0;
}

/* Does the function that allocated on `line` return `name` further down (an allocation
 * wrapper naming its own variable: "T *p = malloc(n); ... return p;")? Read up to the end
 * of the function (a '}' indented less than the allocation), at most 64 lines. */
static Bool returned_later(const HChar *path, UInt line, const HChar *name) {
    HChar at[512], src[512];
    if (!source_line(path, line, at, sizeof at)) return False;
    for (UInt l = line + 1; l <= line + 64 && source_line(path, l, src, sizeof src); l++) {
        if (cl_srcname_returns(src, name)) return True;
        if (cl_srcname_closes(at, src)) break;
    }
    return False;
}

/* A statement split over lines (cl_srcname_split_members): the names on `src`, line `line`
 * of path, read with the lines around it. */
#define CONTEXT_LINES 16
static Int split_members(const HChar *path, UInt line, const HChar *src, HChar *names, Int cap, Int max) {
    static HChar before[CONTEXT_LINES][512], after[CONTEXT_LINES][512];
    const char *prev[CONTEXT_LINES], *next[CONTEXT_LINES];
    Int np = 0, nn = 0;
    for (; np < CONTEXT_LINES && (UInt)np + 1 < line && source_line(path, line - 1 - (UInt)np, before[np], 512); np++)
        prev[np] = before[np];
    for (; nn < CONTEXT_LINES && source_line(path, line + 1 + (UInt)nn, after[nn], 512); nn++) next[nn] = after[nn];
    return cl_srcname_split_members(prev, np, src, next, nn, names, (unsigned long)cap, max);
}

/* Several allocations of the program on one line (a C++ constructor setting up members:
 * "Dom(int n) : m_x(n), m_y(n) {}"): the allocation sites, distinct instructions of that
 * line, follow the members' order in the code. Which one is where's, of how many? */
static void line_sites(ExeContext *where, Int *rank, Int *count) {
    static Bool all_resolved;
    if (!all_resolved) { /* every allocation's location, once (locs may move meanwhile) */
        all_resolved = True;
        for (Word i = 0; i < cl_alloc_count(); i++) (void)resolve(cl_alloc_at(i)->where);
        for (Word i = 0; i < cl_alloc_count(); i++) ((Loc *)resolve(cl_alloc_at(i)->where))->alloc = True;
    }
    Loc *me = (Loc *)resolve(where);
    if (me->site_rank < 0) {
        me->site_rank = me->site_count = 0;
        for (Word i = 0; i < n_locs; i++) {
            const Loc *o = &locs[i];
            if (!o->alloc || !o->program || o->line != me->line || VG_(strcmp)(o->path, me->path) != 0) continue;
            Bool seen = False;
            for (Word j = 0; j < i && !seen; j++)
                seen = locs[j].alloc && locs[j].program && locs[j].ip == o->ip && locs[j].line == o->line &&
                       VG_(strcmp)(locs[j].path, o->path) == 0;
            if (seen) continue;
            me->site_count++;
            if (o->ip < me->ip) me->site_rank++;
        }
    }
    *rank = me->site_rank;
    *count = me->site_count;
}

/* The structure name of a tracked allocation (contract: variable from the
 * source line, else alloc@file:line). */
static void alloc_name_uncached(const Alloc *al, HChar *out, Int cap) {
    if (al->user_name) {
        VG_(snprintf)(out, cap, "%s", al->user_name);
        return;
    }
    const Loc *l = resolve(al->where);
    HChar line[512];
    /* a heap block a library allocated for itself is not the program's variable (the
     * memory MPI_Alloc_mem returns, and mmaps such as a
     * shared window's segment, are) */
    if (l->lib[0] && !l->alloc_mem &&
        ((l->owner == 2 && VG_(strcmp)(al->kind, "mmap") != 0) || !l->program)) { /* no program frame at all */
        VG_(snprintf)(out, cap, "alloc@%s", l->lib);
        return;
    }
    if (source_line(l->path, l->line, line, sizeof line)) {
        HChar members[8][128];
        Int k = cl_srcname_members(line, &members[0][0], sizeof members[0], 8), rank, count;
        if (k == 0 && l->program) k = split_members(l->path, l->line, line, &members[0][0], sizeof members[0], 8);
        if (k > 0 && l->program) {
            ExeContext *where = l->ec;
            line_sites(where, &rank, &count); /* resolves every allocation: locs may move */
            l = resolve(where);
            /* more names than allocations: an initializer list's scalars allocate nothing */
            const SrcFile *f = count < k ? load_source(l->path) : NULL;
            if (f && f->text) k = cl_srcname_keep_allocating(f->text, &members[0][0], sizeof members[0], k);
            if (count == k) {
                VG_(snprintf)(out, cap, "%s", members[rank]);
                return;
            }
        }
        HChar own[256] = "";
        if (name_on_line(l->path, l->line, out, cap)) {
            if (!returned_later(l->path, l->line, out)) return;
            VG_(snprintf)(own, sizeof own, "%s", out); /* a wrapper's own variable: last resort */
        }
        /* an allocation wrapper's line names nothing ("return static_cast<T *>(malloc(n));"
         * in LULESH's Allocate<T>), or a local it returns: the variable its caller assigns
         * the result to */
        for (Int i = 0; i < l->n_outer; i++)
            if (name_on_line(l->outer_path[i], l->outer_line[i], out, cap)) return;
        if (own[0]) {
            VG_(snprintf)(out, cap, "%s", own);
            return;
        }
    }
    if (l->line)
        VG_(snprintf)(out, cap, "alloc@%s", l->short_loc);
    else
        VG_(snprintf)(out, cap, "?");
}

static void alloc_name(Alloc *al, HChar *out, Int cap) {
    if (!al->resolved_name) {
        HChar name[256];
        alloc_name_uncached(al, name, sizeof name);
        al->resolved_name = VG_(strdup)("cl.aname", name);
    }
    VG_(snprintf)(out, cap, "%s", al->resolved_name);
}

/* CSV fields must not contain separators. */
static void csv_clean(HChar *s) {
    for (; *s; s++)
        if (*s == ',' || *s == '"' || *s == '\n' || *s == '\r') *s = '_';
}

static void json_str(VgFile *f, const HChar *s) {
    VG_(fprintf)(f, "\"");
    for (; s && *s; s++) {
        UChar c = (UChar)*s;
        if (c == '"' || c == '\\')
            VG_(fprintf)(f, "\\%c", c);
        else if (c < 0x20)
            VG_(fprintf)(f, "\\u%04x", (UInt)c);
        else
            VG_(fprintf)(f, "%c", c);
    }
    VG_(fprintf)(f, "\"");
}

/* ---------------- the page table as rows ---------------- */

/* Pages of tracked allocations that nobody touched are reported too (with
 * zero counts); very large ones only up to this many pages. */
#define MAX_UNTOUCHED_PAGES_PER_ALLOC (1UL << 18)

static void add_untouched_pages(void) {
    for (Word i = 0; i < cl_alloc_count(); i++) {
        Alloc *al = cl_alloc_at(i);
        UWord first = al->start >> cl_page_shift, last = (al->start + al->size - 1) >> cl_page_shift;
        if (last - first + 1 > MAX_UNTOUCHED_PAGES_PER_ALLOC) last = first + MAX_UNTOUCHED_PAGES_PER_ALLOC - 1;
        for (UWord pg = first; pg <= last; pg++) {
            PageInfo *p = cl_page_get(pg);
            if (p->ft_thread < 0) p->alloc = al; /* latest allocation wins */
        }
    }
}

static Word *page_order;
static Int cmp_page_order(const void *a, const void *b) {
    UWord pa = cl_page_at(*(const Word *)a)->page, pb = cl_page_at(*(const Word *)b)->page;
    return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/* counts[row * nthreads + t] */
static ULong *count_matrix(void) {
    Int nt = cl_nthreads;
    ULong *m = VG_(calloc)("cl.matrix", (SizeT)cl_page_count() * nt + 1, sizeof(ULong));
    for (Int t = 0; t < nt; t++) {
        CountMap *cm = &cl_thread(t)->counts;
        for (UWord i = 0; i <= cm->mask; i++) {
            if (cm->slots[i].page == (UWord)-1) continue;
            PageInfo *p = cl_page_lookup(cm->slots[i].page);
            tl_assert(p);
            m[(p - cl_page_at(0)) * nt + t] += cm->slots[i].count;
        }
    }
    return m;
}

static void page_struct_name(PageInfo *p, HChar *out, Int cap) {
    if (!p->alloc && p->stack_of < 0 && !p->datasym) p->stack_of = cl_thread_stack_of(p->page << cl_page_shift);
    if (p->alloc)
        alloc_name(p->alloc, out, cap);
    else if (p->stack_of >= 0)
        VG_(snprintf)(out, cap, "[stack T%d]", p->stack_of);
    else if (p->datasym)
        VG_(snprintf)(out, cap, "%s", p->datasym);
    else
        VG_(snprintf)(out, cap, "?");
    csv_clean(out);
}

/* ---------------- files ---------------- */

static VgFile *open_tmp(const HChar *path) {
    HChar tmp[4200];
    VG_(snprintf)(tmp, sizeof tmp, "%s.tmp", path);
    VgFile *f = VG_(fopen)(tmp, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
    if (!f) VG_(umsg)("clampi-locality: cannot write %s (does the directory %s exist?)\n", tmp, cl_out_dir);
    return f;
}

static void commit_tmp(VgFile *f, const HChar *path) {
    HChar tmp[4200];
    VG_(fclose)(f);
    VG_(snprintf)(tmp, sizeof tmp, "%s.tmp", path);
    if (VG_(rename)(tmp, path) != 0) VG_(umsg)("clampi-locality: cannot rename %s to %s\n", tmp, path);
}

static void write_csv(const HChar *path, const ULong *m, ULong *thread_total) {
    VgFile *f = open_tmp(path);
    if (!f) return;
    Int nt = cl_nthreads;
    VG_(fprintf)(f, "address,alloc.thread,alloc.location,firsttouch.thread,firsttouch.location,struct.name");
    for (Int t = 0; t < nt; t++) VG_(fprintf)(f, ",T%d", t);
    VG_(fprintf)(f, "\n");
    HChar name[256];
    for (Word k = 0; k < cl_page_count(); k++) {
        Word row = page_order[k];
        PageInfo *p = cl_page_at(row);
        page_struct_name(p, name, sizeof name);
        VG_(fprintf)
        (f, "0x%lx,%d,%s,%d,%s,%s", p->page << cl_page_shift, p->alloc ? p->alloc->thread : -1,
         p->alloc ? resolve(p->alloc->where)->short_loc : "?", p->ft_thread, resolve(p->ft_where)->short_loc, name);
        for (Int t = 0; t < nt; t++) {
            VG_(fprintf)(f, ",%llu", m[row * nt + t]);
            thread_total[t] += m[row * nt + t];
        }
        VG_(fprintf)(f, "\n");
    }
    commit_tmp(f, path);
}

static void write_structures(VgFile *f) {
    HChar name[256];
    Bool first = True;
    VG_(fprintf)(f, "  \"structures\": [");
    for (Word i = 0; i < cl_alloc_count(); i++) {
        Alloc *al = cl_alloc_at(i);
        alloc_name(al, name, sizeof name);
        csv_clean(name);
        VG_(fprintf)(f, "%s\n    {\"name\": ", first ? "" : ",");
        json_str(f, name);
        VG_(fprintf)
        (f, ", \"address\": \"0x%lx\", \"size\": %lu, \"alloc_thread\": %d, \"alloc_location\": ", al->start, al->size,
         al->thread);
        json_str(f, resolve(al->where)->short_loc);
        VG_(fprintf)(f, ", \"kind\": ");
        json_str(f, al->kind);
        VG_(fprintf)(f, "}");
        first = False;
    }
    /* Static data seen on untracked pages: one entry per symbol; its size is
     * the extent of the reported pages (symbol sizes are not in the tool API). */
    enum { MAX_SYMS = 1024 };
    const PageInfo *sym_first[MAX_SYMS];
    Addr sym_end[MAX_SYMS];
    Int n_syms = 0;
    for (Word k = 0; k < cl_page_count(); k++) {
        const PageInfo *p = cl_page_at(page_order[k]);
        if (p->alloc || !p->datasym || p->stack_of >= 0) continue;
        Int j = 0;
        while (j < n_syms && sym_first[j]->datasym != p->datasym) j++;
        if (j == n_syms) {
            if (n_syms == MAX_SYMS) continue;
            sym_first[n_syms++] = p;
        }
        sym_end[j] = (p->page + 1) << cl_page_shift; /* pages come in address order */
    }
    for (Int j = 0; j < n_syms; j++) {
        VG_(fprintf)(f, "%s\n    {\"name\": ", first ? "" : ",");
        json_str(f, sym_first[j]->datasym);
        VG_(fprintf)
        (f,
         ", \"address\": \"0x%lx\", \"size\": %lu, \"alloc_thread\": -1, "
         "\"alloc_location\": \"?\", \"kind\": \"static\"}",
         sym_first[j]->datasym_start, sym_end[j] - sym_first[j]->datasym_start);
        first = False;
    }
    VG_(fprintf)(f, "\n  ],\n");
}

static void write_mappings(VgFile *f) {
    Bool first = True;
    VG_(fprintf)(f, "  \"mappings\": [");
    for (Word i = 0; i < cl_mapping_count(); i++) {
        const SharedMap *mp = cl_mapping_at(i);
        Bool holds = False;
        for (Word k = 0; k < cl_page_count() && !holds; k++) {
            Addr a = cl_page_at(k)->page << cl_page_shift;
            holds = a + cl_page_size > mp->start && a < mp->end;
        }
        if (!holds) continue;
        VG_(fprintf)
        (f, "%s\n    {\"start\": \"0x%lx\", \"end\": \"0x%lx\", \"file\": ", first ? "" : ",", mp->start, mp->end);
        json_str(f, mp->file);
        VG_(fprintf)(f, ", \"offset\": %llu, \"shared\": true}", mp->offset);
        first = False;
    }
    VG_(fprintf)(f, "\n  ]\n");
}

static void write_json(const HChar *path, const ULong *thread_total) {
    VgFile *f = open_tmp(path);
    if (!f) return;
    VG_(fprintf)
    (f, "{\n  \"tool\": \"clampi-locality\", \"version\": 1, \"mode\": \"exact\", \"counts\": \"exact\",\n");
    VG_(fprintf)(f, "  \"rank\": %d, \"pid\": %d,\n  \"program\": [", cl_rank, VG_(getpid)());
    json_str(f, VG_(args_the_exename));
    for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)); i++) {
        VG_(fprintf)(f, ", ");
        json_str(f, *(HChar **)VG_(indexXA)(VG_(args_for_client), i));
    }
    VG_(fprintf)(f, "],\n  \"page_size\": %lu, \"min_size\": %lu,\n", cl_page_size, cl_min_size);
    if (cl_exited)
        VG_(fprintf)(f, "  \"complete\": true, \"exit_status\": %d, \"signal\": null,\n", cl_exit_status);
    else
        VG_(fprintf)(f, "  \"complete\": false, \"exit_status\": null, \"signal\": null,\n");
    VG_(fprintf)(f, "  \"threads\": %d,\n  \"thread_work\": [", cl_nthreads);
    for (Int t = 0; t < cl_nthreads; t++) VG_(fprintf)(f, "%s%llu", t ? ", " : "", cl_thread(t)->insns);
    VG_(fprintf)(f, "], \"work_unit\": \"instructions\",\n  \"thread_creator\": [");
    for (Int t = 0; t < cl_nthreads; t++) {
        if (t) VG_(fprintf)(f, ", ");
        json_str(f, cl_thread(t)->creator);
    }
    VG_(fprintf)(f, "],\n  \"thread_accesses\": [");
    for (Int t = 0; t < cl_nthreads; t++) VG_(fprintf)(f, "%s%llu", t ? ", " : "", thread_total[t]);
    VG_(fprintf)(f, "],\n");
    write_structures(f);
    write_mappings(f);
    VG_(fprintf)(f, "}\n");
    commit_tmp(f, path);
}

void cl_write_output(void) {
    add_untouched_pages();
    Word n = cl_page_count();
    page_order = VG_(malloc)("cl.order", (n + 1) * sizeof(Word));
    for (Word i = 0; i < n; i++) page_order[i] = i;
    VG_(ssort)(page_order, n, sizeof(Word), cmp_page_order);
    ULong *m = count_matrix();
    ULong *thread_total = VG_(calloc)("cl.totals", cl_nthreads + 1, sizeof(ULong));
    HChar csv[4096], json[4096];
    VG_(snprintf)(csv, sizeof csv, "%s/rank%d.csv", cl_out_dir, cl_rank);
    VG_(snprintf)(json, sizeof json, "%s/rank%d.json", cl_out_dir, cl_rank);
    write_csv(csv, m, thread_total);
    write_json(json, thread_total);
}
