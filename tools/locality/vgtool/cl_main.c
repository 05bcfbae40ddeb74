/* clampi-locality: a Valgrind tool that counts every load and store of every
 * thread per memory page, records the first touch of each page (thread and
 * source line) and the allocation it belongs to, and writes numalize-style CSV
 * plus a JSON summary at exit (docs/locality-format.md). */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_vki.h"
#include "valgrind.h"
#include "clampi/locality.h"
#include "cl_global.h"

/* ---------------- options ---------------- */

UWord cl_page_size = 4096;
UInt cl_page_shift = 12;
SizeT cl_min_size = 0; /* 0 = one page */
const HChar *cl_out_dir = "clampi-locality.out";
Int cl_rank = -1;

static Long opt_page_size = 4096, opt_min_size = -1, opt_rank = -1;

static Bool cl_process_cmd_line_option(const HChar *arg) {
    if VG_BINT_CLO (arg, "--page-size", opt_page_size, 1, 1L << 30) {
    } else if VG_BINT_CLO (arg, "--min-size", opt_min_size, 0, 1L << 62) {
    } else if VG_BINT_CLO (arg, "--rank", opt_rank, 0, 1L << 30) {
    } else if VG_STR_CLO (arg, "--out-dir", cl_out_dir) {
    } else
        return VG_(replacement_malloc_process_cmd_line_option)(arg);
    return True;
}

static void cl_print_usage(void) {
    VG_(printf)
    ("    --page-size=<n>     page size in bytes, a power of two [4096]\n"
     "    --min-size=<n>      smallest allocation tracked as a structure [page size]\n"
     "    --out-dir=<dir>     directory for rank<R>.csv and rank<R>.json [clampi-locality.out]\n"
     "    --rank=<r>          rank in the file names [OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, 0]\n");
}

static void cl_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

static Int rank_from_env(void) {
    static const HChar *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL};
    for (Int i = 0; vars[i]; i++) {
        const HChar *v = VG_(getenv)(vars[i]);
        if (v && *v) return (Int)VG_(strtoll10)(v, NULL);
    }
    return 0;
}

/* ---------------- threads ---------------- */

ThreadStats *cl_cur;
UWord cl_last_page = (UWord)-1;
Addr cl_last_base = (Addr)-1 << 12; /* cl_last_page << cl_page_shift */
ULong *cl_last_count;
Int cl_nthreads;
static ThreadStats **threads; /* by our id */
static Int *tid_to_id;        /* by Valgrind ThreadId (slots are reused) */
static ULong insn_counter;    /* instructions of cl_cur not yet added to it */

ThreadStats *cl_thread(Int id) { return threads[id]; }

Int cl_thread_id_of(ThreadId tid) { return (tid >= 1 && tid < VG_N_THREADS && tid_to_id) ? tid_to_id[tid] : -1; }

/* Accesses before the first thread is known (none in practice) go here. */
static ULong dummy_count;

static Bool skipped_module(const HChar *base) {
    return VG_(strncmp)(base, "libc.so", 7) == 0 || VG_(strncmp)(base, "libc-", 5) == 0 ||
           VG_(strncmp)(base, "libpthread", 10) == 0 || VG_(strncmp)(base, "vgpreload_", 10) == 0;
}

/* The file name of the module whose code created a thread, as the sampler records it: the
 * innermost frame of the creating thread's stack outside the C library (pthread_create,
 * thrd_create, clone). The report tells the runtimes' threads from the program's by it. */
static const HChar *creator_module(ThreadId parent) {
    Addr ips[16];
    UInt n = VG_(get_StackTrace)(parent, ips, 16, NULL, NULL, 0);
    DiEpoch ep = VG_(current_DiEpoch)();
    for (UInt i = 0; i < n; i++) {
        const HChar *obj;
        if (!VG_(get_objname)(ep, ips[i], &obj)) continue;
        const HChar *slash = VG_(strrchr)(obj, '/');
        const HChar *base = slash ? slash + 1 : obj;
        if (!skipped_module(base)) return VG_(strdup)("cl.creator", base);
    }
    return "";
}

static void cl_thread_created(ThreadId parent, ThreadId child) {
    ThreadStats *t = VG_(malloc)("cl.thread", sizeof *t);
    t->id = cl_nthreads;
    t->last_page = (UWord)-1;
    t->last_count = &dummy_count;
    t->insns = 0;
    t->creator = parent == VG_INVALID_THREADID ? "" : creator_module(parent);
    cl_count_map_init(&t->counts);
    threads = VG_(realloc)("cl.threads", threads, (cl_nthreads + 1) * sizeof *threads);
    threads[cl_nthreads++] = t;
    tid_to_id[child] = t->id;
}

/* Thread stacks, as Valgrind knows them when each thread starts: pages first
 * touched before the owner ran (pthread_create writes the new thread's TCB) are
 * attributed at exit (cl_thread_stack_of). */
typedef struct {
    Addr lo, hi;
    Int id;
} StackRange;
static StackRange *stacks;
static Int n_stacks;

static void cl_thread_first_insn(ThreadId tid) {
    Addr hi = VG_(thread_get_stack_max)(tid);
    SizeT size = VG_(thread_get_stack_size)(tid);
    if (!hi || !size) return;
    stacks = VG_(realloc)("cl.stacks", stacks, (n_stacks + 1) * sizeof *stacks);
    stacks[n_stacks].lo = hi - size + 1;
    stacks[n_stacks].hi = hi;
    stacks[n_stacks].id = cl_thread_id_of(tid);
    n_stacks++;
}

Int cl_thread_stack_of(Addr a) {
    for (Int i = n_stacks - 1; i >= 0; i--)
        if (a >= stacks[i].lo && a <= stacks[i].hi) return stacks[i].id;
    return -1;
}

static void cl_start_client_code(ThreadId tid, ULong blocks_done) {
    Int id = cl_thread_id_of(tid);
    ThreadStats *t = id >= 0 ? threads[id] : NULL;
    if (t == cl_cur || !t) return;
    cl_flush_misses(); /* they belong to the thread that ran until now */
    if (cl_cur) {
        cl_cur->insns += insn_counter;
        cl_cur->last_page = cl_last_page;
        cl_cur->last_count = cl_last_count;
    }
    insn_counter = 0;
    cl_cur = t;
    cl_cur_tid = tid;
    cl_last_page = t->last_page;
    cl_last_base = t->last_page << cl_page_shift;
    cl_last_count = t->last_count;
}

/* ---------------- syscalls: exit status, mmap, munmap ---------------- */

Bool cl_exited;
Int cl_exit_status;

static void cl_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs) {
    if (sysno == __NR_exit_group) {
        cl_exited = True;
        cl_exit_status = (Int)(args[0] & 0xff);
    }
}

static void cl_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res) {
    if (sr_isError(res)) return;
    if (sysno == __NR_munmap || sysno == __NR_mmap) cl_flush_misses();
    if (sysno == __NR_munmap) {
        cl_alloc_unmap(args[0], args[1]);
        return;
    }
    if (sysno != __NR_mmap) return;
    Addr start = sr_Res(res);
    SizeT len = args[1];
    cl_pages_reset(start, len);
    cl_mapping_forget(start, len);
    UWord prot = args[2], flags = args[3];
    Int fd = (Int)args[4];
    Bool anon = (flags & VKI_MAP_ANONYMOUS) != 0, shared = (flags & VKI_MAP_SHARED) != 0;
    if (shared && !anon) { /* the file behind fd names the physical pages across processes */
        HChar link[64], file[4096];
        VG_(snprintf)(link, sizeof link, "/proc/self/fd/%d", fd);
        SSizeT n = VG_(readlink)(link, file, sizeof file - 1);
        if (n > 0) {
            file[n] = 0;
            HChar *deleted = VG_(strstr)(file, " (deleted)"); /* unlinked after mapping: same file */
            if (deleted && deleted[10] == 0) *deleted = 0;
            cl_mapping_add(start, len, file, args[5]);
        }
    }
    /* Allocations only: no reservations (PROT_NONE), no thread stacks, no
     * private file maps or private MAP_FIXED placements (the loader mapping
     * libraries). Shared MAP_FIXED maps count: MPICH places shared windows so. */
    if (prot == VKI_PROT_NONE || (flags & 0x20000 /* MAP_STACK */)) return;
    if (!anon && !shared) return;
    if ((flags & VKI_MAP_FIXED) && !shared) return;
    if (len >= cl_min_size) cl_alloc_track(tid, start, len, "mmap", NULL);
}

/* ---------------- client requests ---------------- */

static Bool cl_handle_client_request(ThreadId tid, UWord *args, UWord *ret) {
    if (!VG_IS_TOOL_USERREQ('C', 'L', args[0])) return False;
    if (args[0] == CLAMPI_LOCALITY_REQ_NAME) {
        HChar name[128];
        const HChar *src = (const HChar *)args[2];
        Int i = 0;
        for (; src && src[i] && i < (Int)sizeof name - 1; i++) name[i] = src[i];
        name[i] = 0;
        cl_flush_misses();
        if (i > 0) cl_alloc_name(tid, args[1], name);
        *ret = 0;
        return True;
    }
    return False;
}

/* ---------------- instrumentation ---------------- */

static IRTemp tmp_op(IRSB *sb, IRType ty, IRExpr *e) {
    IRTemp t = newIRTemp(sb->tyenv, ty);
    addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
    return t;
}
#define RD(t) IRExpr_RdTmp(t)

/* Counts one access inline when it lies wholly inside the running thread's
 * cached page; otherwise appends it to the miss buffer. No call per access:
 * a helper call at every access costs more than all of this (register spills).
 *
 * The IR per access is what Valgrind's translation time grows with (on a short MPI
 * program, LCC, 70 % of the traced run is VEX optimizing and register-allocating
 * superblocks that run once). cl_last_base and cl_last_count change
 * only in cl_flush_misses and between superblocks, so they are read into temporaries
 * once per flush region; the miss buffer's next slot is carried in a temporary and
 * stored to cl_miss_next after each access (a fault in the middle of the superblock
 * keeps the misses before it):
 *   off = addr - base                        (unsigned)
 *   hit = off <= page_size - size
 *   *count += guard && hit
 *   *slot = {addr, size << 48 | iaddr}; if (guard && !hit) slot++
 *   cl_miss_next = slot */
typedef struct {
    IRTemp base, count, slot; /* per flush region */
    UInt accesses;            /* instrumented accesses since the last flush point */
} SbState;

static void load_region(IRSB *sb, SbState *S) {
    S->slot = tmp_op(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cl_miss_next)));
    S->base = tmp_op(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cl_last_base)));
    S->count = tmp_op(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cl_last_count)));
    S->accesses = 0;
}

static void add_access(IRSB *sb, SbState *S, IRExpr *addr, Int size, IRExpr *guard, Addr iaddr) {
    S->accesses++;
    IRExpr *room = IRExpr_Const(IRConst_U64(size <= (Int)cl_page_size ? cl_page_size - size : 0));
    if (addr->tag != Iex_RdTmp && addr->tag != Iex_Const) addr = RD(tmp_op(sb, Ity_I64, addr));
    IRTemp off = tmp_op(sb, Ity_I64, IRExpr_Binop(Iop_Sub64, addr, RD(S->base)));
    IRTemp hit = tmp_op(sb, Ity_I1, IRExpr_Binop(Iop_CmpLE64U, RD(off), room));
    IRTemp miss = tmp_op(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, room, RD(off)));
    if (guard) {
        hit = tmp_op(sb, Ity_I1, IRExpr_Binop(Iop_And1, RD(hit), guard));
        miss = tmp_op(sb, Ity_I1, IRExpr_Binop(Iop_And1, RD(miss), guard));
    }
    /* No guarded stores (each one a branch around a store in the host code): the counter
     * gets + hit, the miss entry is written at the free slot always and kept (the slot
     * moves on) only on a miss. The counter pointer always points at a counter (a dummy
     * before the first miss); the slot is within the buffer (add_flush's bounds). */
    IRTemp old = tmp_op(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, RD(S->count)));
    IRTemp inc = tmp_op(sb, Ity_I64, IRExpr_Unop(Iop_1Uto64, RD(hit)));
    IRTemp new = tmp_op(sb, Ity_I64, IRExpr_Binop(Iop_Add64, RD(old), RD(inc)));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, RD(S->count), RD(new)));

    ULong info = ((ULong)(size < 0xffff ? size : 0xffff) << 48) | ((ULong)iaddr & 0xffffffffffffULL);
    IRTemp slot8 = tmp_op(sb, Ity_I64, IRExpr_Binop(Iop_Add64, RD(S->slot), IRExpr_Const(IRConst_U64(8))));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, RD(S->slot), addr));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, RD(slot8), IRExpr_Const(IRConst_U64(info))));
    IRTemp next = tmp_op(sb, Ity_I64, IRExpr_Binop(Iop_Add64, RD(S->slot), IRExpr_Const(IRConst_U64(16))));
    S->slot = tmp_op(sb, Ity_I64, IRExpr_ITE(RD(miss), RD(next), RD(S->slot)));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&cl_miss_next), RD(S->slot)));
}

static VG_REGPARM(0) void cl_flush_helper(void) { cl_flush_misses(); }

/* if (cl_miss_next > cl_miss_buf + threshold) cl_flush_misses(), then the region's
 * temporaries anew */
static void add_flush(IRSB *sb, SbState *S, UWord threshold) {
    IRTemp n = tmp_op(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&cl_miss_next)));
    IRExpr *limit = mkIRExpr_HWord((HWord)(cl_miss_buf + threshold));
    IRTemp due = tmp_op(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, limit, RD(n)));
    IRDirty *di = unsafeIRDirty_0_N(0, "cl_flush_misses", VG_(fnptr_to_fnentry)(cl_flush_helper), mkIRExprVec_0());
    di->guard = RD(due);
    addStmtToIRSB(sb, IRStmt_Dirty(di));
    if (S) load_region(sb, S);
}

/* insn_counter += n, inline (no call). */
static void add_insns(IRSB *sb, UInt *pending) {
    if (*pending == 0) return;
    IRTemp old = newIRTemp(sb->tyenv, Ity_I64), new = newIRTemp(sb->tyenv, Ity_I64);
    IRExpr *where = mkIRExpr_HWord((HWord)&insn_counter);
    addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, where)));
    addStmtToIRSB(sb,
                  IRStmt_WrTmp(new, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old), IRExpr_Const(IRConst_U64(*pending)))));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, where, IRExpr_RdTmp(new)));
    *pending = 0;
}

static IRSB *cl_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo_host, IRType gWordTy,
                           IRType hWordTy) {
    IRSB *out = deepCopyIRSBExceptStmts(in);
    IRTypeEnv *tyenv = in->tyenv;
    Int i = 0;
    UInt pending = 0; /* instructions seen since the counter was last bumped */
    Addr iaddr = 0;
    while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark) addStmtToIRSB(out, in->stmts[i++]);
    /* A superblock that returns: its misses are processed before the return instruction,
     * with the guest's instruction pointer on it. After `leave` (or the epilogue's pops),
     * the unwind information of the return instruction still finds the caller; at the end
     * of the superblock the stack pointer is already past the return address, and the
     * first touch's stack (touch_context) would be unwound from garbage. */
    Int last_imark = -1;
    if (in->jumpkind == Ijk_Ret)
        for (Int k = in->stmts_used - 1; k >= i; k--)
            if (in->stmts[k] && in->stmts[k]->tag == Ist_IMark) {
                last_imark = k;
                break;
            }
    SbState S;
    add_flush(out, NULL, CL_MISS_CAP / 2); /* room for this superblock's misses */
    load_region(out, &S);
    for (; i < in->stmts_used; i++) {
        IRStmt *st = in->stmts[i];
        if (!st || st->tag == Ist_NoOp) continue;
        if (S.accesses >= CL_MISS_CAP / 2 - 4) /* a giant superblock: flush on the way */
            add_flush(out, &S, 0);
        if (i == last_imark && S.accesses) {
            addStmtToIRSB(out, IRStmt_Put(layout->offset_IP,
                                          gWordTy == Ity_I64 ? IRExpr_Const(IRConst_U64(st->Ist.IMark.addr))
                                                             : IRExpr_Const(IRConst_U32((UInt)st->Ist.IMark.addr))));
            add_flush(out, &S, 0);
        }
        switch (st->tag) {
        case Ist_IMark:
            pending++;
            iaddr = st->Ist.IMark.addr;
            break;
        case Ist_WrTmp:
            if (st->Ist.WrTmp.data->tag == Iex_Load) {
                IRExpr *ld = st->Ist.WrTmp.data;
                add_access(out, &S, ld->Iex.Load.addr, sizeofIRType(ld->Iex.Load.ty), NULL, iaddr);
            }
            break;
        case Ist_Store:
            add_access(out, &S, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)), NULL, iaddr);
            break;
        case Ist_StoreG: {
            IRStoreG *sg = st->Ist.StoreG.details;
            add_access(out, &S, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->guard, iaddr);
            break;
        }
        case Ist_LoadG: {
            IRLoadG *lg = st->Ist.LoadG.details;
            IRType ty = Ity_INVALID, wide = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &wide, &ty);
            add_access(out, &S, lg->addr, sizeofIRType(ty), lg->guard, iaddr);
            break;
        }
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) add_access(out, &S, d->mAddr, d->mSize, NULL, iaddr);
            if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) add_access(out, &S, d->mAddr, d->mSize, NULL, iaddr);
            break;
        }
        case Ist_CAS: { /* a read and a write, as a load-modify-store */
            IRCAS *cas = st->Ist.CAS.details;
            Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo)) * (cas->dataHi ? 2 : 1);
            add_access(out, &S, cas->addr, size, NULL, iaddr);
            add_access(out, &S, cas->addr, size, NULL, iaddr);
            break;
        }
        case Ist_LLSC: {
            IRType ty = st->Ist.LLSC.storedata ? typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)
                                               : typeOfIRTemp(tyenv, st->Ist.LLSC.result);
            add_access(out, &S, st->Ist.LLSC.addr, sizeofIRType(ty), NULL, iaddr);
            break;
        }
        case Ist_Exit: /* the instructions so far ran whether or not the exit is taken */
            add_insns(out, &pending);
            break;
        default: break;
        }
        addStmtToIRSB(out, st);
    }
    add_insns(out, &pending);
    add_flush(out, NULL, 0); /* misses are processed within the superblock's function */
    return out;
}

/* ---------------- init / fini ---------------- */

static Int initial_pid;

void cl_locations_init(void);
static void cl_post_clo_init(void) {
    cl_locations_init();
    if (opt_page_size < 1 || (opt_page_size & (opt_page_size - 1)) != 0) {
        VG_(fmsg_bad_option)("--page-size", "must be a power of two (got %lld)\n", opt_page_size);
    }
    cl_page_size = (UWord)opt_page_size;
    cl_page_shift = (UInt)VG_(log2_64)((ULong)cl_page_size);
    cl_min_size = opt_min_size >= 0 ? (SizeT)opt_min_size : cl_page_size;
    cl_rank = opt_rank >= 0 ? (Int)opt_rank : rank_from_env();
    tid_to_id = VG_(malloc)("cl.tids", (VG_N_THREADS + 1) * sizeof(Int));
    for (UInt i = 0; i <= VG_N_THREADS; i++) tid_to_id[i] = -1;
    initial_pid = VG_(getpid)();
    cl_pages_init();
    cl_alloc_init();
    cl_last_count = &dummy_count;
}

static void cl_fini(Int exitcode) {
    cl_flush_misses();
    if (cl_cur) cl_cur->insns += insn_counter;
    insn_counter = 0;
    if (VG_(getpid)() != initial_pid) return; /* a forked child: the parent writes */
    cl_write_output();
}

void cl_alloc_register_malloc(void);

static void cl_pre_clo_init(void) {
    VG_(details_name)("clampi-locality");
    VG_(details_version)("1");
    VG_(details_description)("per-page memory access locality of threads");
    VG_(details_copyright_author)("clampi project");
    VG_(details_bug_reports_to)("the clampi project");
    VG_(details_avg_translation_sizeB)(400);
    VG_(basic_tool_funcs)(cl_post_clo_init, cl_instrument, cl_fini);
    VG_(needs_command_line_options)(cl_process_cmd_line_option, cl_print_usage, cl_print_debug_usage);
    VG_(needs_client_requests)(cl_handle_client_request);
    VG_(needs_syscall_wrapper)(cl_pre_syscall, cl_post_syscall);
    cl_alloc_register_malloc();
    VG_(track_pre_thread_ll_create)(cl_thread_created);
    VG_(track_start_client_code)(cl_start_client_code);
    VG_(track_pre_thread_first_insn)(cl_thread_first_insn);
}

VG_DETERMINE_INTERFACE_VERSION(cl_pre_clo_init)
