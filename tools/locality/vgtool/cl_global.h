/* clampi-locality Valgrind tool: state shared by its parts.
 *
 *   cl_main.c     registration, options, instrumentation, threads, syscalls
 *   cl_pages.c    page tables: per-thread access counts, per-page first touch
 *   cl_alloc.c    malloc replacement, mmap tracking, named structures
 *   cl_output.c   source locations, structure names, CSV + JSON at exit
 *   cl_srcname.c  variable name from an allocation's source line (libc-free) */
#ifndef CL_GLOBAL_H
#define CL_GLOBAL_H

#include "pub_tool_basics.h"
#include "pub_tool_execontext.h"

/* ---- options (cl_main.c) ---- */
extern UWord cl_page_size; /* --page-size, a power of two */
extern UInt cl_page_shift;
extern SizeT cl_min_size;       /* --min-size: smallest tracked allocation */
extern const HChar *cl_out_dir; /* --out-dir */
extern Int cl_rank;             /* --rank, else from the MPI launcher's environment */

/* ---- threads (cl_main.c) ---- */
/* Per-thread open-addressing map page -> access count. */
typedef struct {
    UWord page;
    ULong count;
} CountSlot;
typedef struct {
    CountSlot *slots;
    UWord mask; /* capacity - 1 */
    UWord used;
} CountMap;

typedef struct {
    Int id;          /* 0 = main thread, then creation order */
    UWord last_page; /* saved cl_last_page / cl_last_count while not running */
    ULong *last_count;
    CountMap counts;
    ULong insns;          /* guest instructions executed */
    const HChar *creator; /* file name of the module whose code created it ("": main thread) */
} ThreadStats;

extern ThreadStats *cl_cur; /* the running thread (one at a time under Valgrind) */
/* The running thread's one-entry cache (last page it touched and that page's
 * counter): the instrumented code counts a hit inline through these. */
extern UWord cl_last_page;
extern Addr cl_last_base; /* cl_last_page << cl_page_shift */
extern ULong *cl_last_count;
extern Int cl_nthreads;
ThreadStats *cl_thread(Int id);
Int cl_thread_id_of(ThreadId tid); /* -1 if unknown */
Int cl_thread_stack_of(Addr a);    /* owner of the thread stack holding a, or -1 */

/* ---- allocations (cl_alloc.c) ---- */
typedef struct {
    Addr start;
    SizeT size;
    Int thread;           /* allocating thread */
    ExeContext *where;    /* allocation stack */
    const HChar *kind;    /* contract's kind string */
    HChar *user_name;     /* set by CLAMPI_LOCALITY_NAME, else NULL */
    HChar *resolved_name; /* struct.name, computed at exit */
    Bool live;
} Alloc;

void cl_alloc_init(void);
Alloc *cl_alloc_find_live(Addr a); /* tracked live allocation holding a, or NULL */
Alloc *cl_alloc_track(ThreadId tid, Addr start, SizeT size, const HChar *kind, ExeContext *where);
void cl_alloc_untrack(Addr start); /* heap block freed */
void cl_alloc_unmap(Addr start, SizeT len);
void cl_alloc_name(ThreadId tid, Addr a, const HChar *name);
Word cl_alloc_count(void);
Alloc *cl_alloc_at(Word i); /* in creation order */

/* Shared file-backed mappings, for page identity across processes (ranks). */
typedef struct {
    Addr start, end;
    HChar *file;
    ULong offset;
} SharedMap;
void cl_mapping_add(Addr start, SizeT len, const HChar *file, ULong offset);
void cl_mapping_forget(Addr start, SizeT len); /* a new mapping replaced [start, +len) */
Word cl_mapping_count(void);
SharedMap *cl_mapping_at(Word i);

/* ---- pages (cl_pages.c) ---- */
typedef struct {
    UWord page;           /* page number (address >> cl_page_shift) */
    Int ft_thread;        /* first toucher, -1 if only allocated */
    ExeContext *ft_where; /* first-touch stack */
    Alloc *alloc;         /* tracked allocation holding the page */
    const HChar *datasym; /* static data symbol at the first touch, or NULL */
    Addr datasym_start;   /* that symbol's address */
    Int stack_of;         /* page lies in this thread's stack, or -1 */
} PageInfo;

void cl_pages_init(void);
/* Accesses that missed the inline cache wait here (program order) until
 * cl_flush_misses() runs: at the end of each superblock, at thread switches,
 * and before allocation events and at exit. */
typedef struct {
    Addr addr;
    ULong info; /* size << 48 | instruction address (48 bits) */
} MissEntry;
#define CL_MISS_CAP 4096
extern MissEntry cl_miss_buf[CL_MISS_CAP];
extern MissEntry *cl_miss_next; /* next free entry */
extern ThreadId cl_cur_tid;     /* Valgrind id of cl_cur */
void cl_flush_misses(void);
void cl_count_map_init(CountMap *m);
Word cl_page_count(void);
PageInfo *cl_page_at(Word i);
PageInfo *cl_page_lookup(UWord page); /* NULL if never touched */
PageInfo *cl_page_get(UWord page);    /* creates an untouched record */
void cl_pages_assign_alloc(Alloc *al);
void cl_pages_reset(Addr start, SizeT len);
/* fresh mapping: forget the range's past */ /* existing pages of al's range now belong to al */

/* ---- output (cl_output.c) ---- */
extern Bool cl_exited; /* the client called exit_group */
extern Int cl_exit_status;
void cl_write_output(void);

#endif
