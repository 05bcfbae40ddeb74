/* The options table: every knob of clampi, one row each (name, part, info key, environment
 * variable, type, default, allowed values, one line of documentation). Every part reads its
 * knobs through this table; clampi-info prints it; docs/options.md is generated from it.
 *
 * Strongest first: info key (window or communicator) > environment variable > default.
 * A bad value is never replaced silently: per-object keys fail the MPI call with
 * MPI_ERR_INFO_VALUE, process-wide variables print "clampi: invalid value for VAR: 'v'
 * (allowed: ...); using DEFAULT" once on stderr.
 *
 * MPI-free: the info-key lookup is in common/options_info.c. */
#ifndef CLAMPI_COMMON_OPTIONS_H
#define CLAMPI_COMMON_OPTIONS_H
#include <stddef.h>

typedef enum clampi_opt_type {
    CLAMPI_OPT_BOOL,   /* 1/0, true/false, yes/no, on/off (any case) */
    CLAMPI_OPT_SIZE,   /* bytes or entries: 4096, 64K, 16M, 1G; "unlimited" where allowed */
    CLAMPI_OPT_UINT,   /* an integer in [min, max] */
    CLAMPI_OPT_ENUM,   /* one of the names in `allowed` ("a|b|c"); the value is its index */
    CLAMPI_OPT_STRING, /* free text, checked by the part that reads it */
} clampi_opt_type;

/* X(ID, name, part, info key or NULL, environment variable, type, default, allowed, min, max, doc)
 * Each knob's doc sits beside its default (the UCX config-table habit). */
#define CLAMPI_OPTION_ROWS(X)                                                                                          \
    /* ---- RMA get cache: per window (info key at creation or MPI_Win_set_info) ---- */                               \
    X(MODE, "mode", "rma", "clampi_mode", "CLAMPI_MODE", ENUM, "transparent",                                          \
      "transparent|always_cache|user_defined|off", 0, 0,                                                               \
      "Cache mode: transparent keeps nothing past a flush (only gets in flight are shared), always_cache never "       \
      "invalidates (read-only window), user_defined invalidates at CMPI_Win_invalidate, off passes through")           \
    X(INDEX_SIZE, "index_size", "rma", "clampi_index_size", "CLAMPI_INDEX_SIZE", SIZE, "16384", NULL, 1, 0,            \
      "Initial entries of a window's cache index (cuckoo hash); adaptive sizing may grow it")                          \
    X(BUFFER_SIZE, "buffer_size", "rma", "clampi_buffer_size", "CLAMPI_BUFFER_SIZE", SIZE, "16M", NULL, 1, 0,          \
      "Initial bytes of a window's cache buffer; adaptive sizing may grow it")                                         \
    X(SHM_DIRECT, "shm_direct", "rma", "clampi_shm_direct", "CLAMPI_SHM_DIRECT", BOOL, "true", NULL, 0, 0,             \
      "Serve gets to same-node targets by load/store from the target's memory where MPI exposes it; UCX windows: "     \
      "puts, gets and accumulates to same-node window memory in the node-shared heap by load/store, and intrinsic "    \
      "atomics as CPU atomics on target memory mapped here (false on any rank, in its environment or the "             \
      "window's info at creation: no load/store to or from that rank's memory, and the window's atomics on UCX)")      \
    X(FLUSH_PROBE, "flush_probe", "rma", NULL, "CLAMPI_FLUSH_PROBE", BOOL, "false", NULL, 0, 0,                        \
      "UCX windows: every flush counts the workers, endpoints and operations it drove, for "                           \
      "clampi_ucx_test_flush_probe (tests, bench/rmaext/flush_count); off, flushes skip that accounting")              \
    X(DYNAMIC_CACHE, "dynamic_cache", "rma", "clampi_dynamic_cache", "CLAMPI_DYNAMIC_CACHE", BOOL, "false", NULL, 0,   \
      0, "Allow caching modes on dynamic windows (the program promises not to detach cached memory)")                  \
    X(ADAPTIVE, "adaptive", "rma", "clampi_adaptive", "CLAMPI_ADAPTIVE", BOOL, "true", NULL, 0, 0,                     \
      "Adapt index and buffer sizes at run time (the sizes above are the start)")                                      \
    X(BACKEND, "backend", "rma", "clampi_backend", "CLAMPI_BACKEND", ENUM, "mpi", "mpi|ucx", 0, 0,                     \
      "How a window's bytes move: the MPI library's RMA, or clampi's UCX backend (needed by the RMA extensions)")      \
    X(PROGRESS, "progress", "rma", "clampi_progress", "CLAMPI_PROGRESS", ENUM, "auto", "auto|thread|none", 0, 0,       \
      "UCX windows: who progresses the target side (auto: a progress thread where the transport needs one)")           \
    X(PROGRESS_PROBES, "progress_probes", "rma", NULL, "CLAMPI_PROGRESS_PROBES", UINT, "16", NULL, 1, 1u << 30,        \
      "UCX windows, clampi_progress=auto on memory UCX allocated: how many peers each process asks UCX about (an "     \
      "endpoint to each) before the window's processes agree whether they need a progress thread; a larger "           \
      "communicator asks that many, spread over its ranks")                                                            \
    X(PROGRESS_FROM_MPI, "progress_from_mpi", "rma", NULL, "CLAMPI_PROGRESS_FROM_MPI", BOOL, "true", NULL, 0, 0,       \
      "UCX windows and messages: a program waiting inside MPI progresses clampi's UCX workers itself while they "      \
      "have work (Open MPI's progress engine; MPICH's polls of its UCX worker; clampi's own shared-memory waits on "   \
      "every MPI), and a progress thread "                                                                             \
      "without a core of its own sleeps meanwhile; false: the progress thread alone does")                             \
    X(WIN_SCOPE, "win_scope", "rma", "mpi_win_scope", "CLAMPI_WIN_SCOPE", ENUM, "process", "process|thread", 0, 0,     \
      "UCX windows: a flush completes the calling thread's operations only (thread) or every thread's")                \
    X(WIN_ORDER, "win_order", "rma", "mpi_win_order", "CLAMPI_WIN_ORDER", BOOL, "false", NULL, 0, 0,                   \
      "UCX windows: operations to one target complete in issue order")                                                 \
    X(ACC_INTRINSIC, "acc_intrinsic", "rma", "mpi_assert_accumulate_intrinsic", "CLAMPI_ACC_INTRINSIC", BOOL, "false", \
      NULL, 0, 0, "UCX windows: accumulates the network can do natively use its atomics")                              \
    /* ---- RMA: process-wide ---- */                                                                                  \
    X(WINDOW_MODES, "window_modes", "rma", NULL, "CLAMPI_WINDOW_MODES", STRING, "", "name:mode[,name:mode...]", 0, 0,  \
      "Per-window modes by the name the program gives with MPI_Win_set_name, e.g. graph:always_cache")                 \
    X(MH_SHARE, "mh_share", "rma", NULL, "CLAMPI_MH_SHARE", BOOL, "true", NULL, 0, 0,                                  \
      "A memory handle to the program's own memory moves the region's pages onto a memory file same-node peers map: "  \
      "their puts and gets there are loads and stores. No other thread may write the region while the handle is "      \
      "created or released (neighbouring memory on its first and last pages is guarded)")                              \
    X(MH_SUBSCRIBE_AFTER, "mh_subscribe_after", "rma", NULL, "CLAMPI_MH_SUBSCRIBE_AFTER", UINT, "16", NULL, 0,         \
      1u << 30,                                                                                                        \
      "A memory-handle window whose owner is on another node keeps a copy of the handle's liveness after this many "   \
      "operations and flushes that fetched it (one round trip each); the owner's release clears the copy. 0: never")   \
    X(STATS, "stats", "rma", NULL, "CLAMPI_STATS", BOOL, "false", NULL, 0, 0,                                          \
      "Print one machine-readable statistics line per window, collective layer and matching communicator")             \
    X(STATS_DEST, "stats_dest", "rma", NULL, "CLAMPI_STATS_DEST", STRING, "stdout", "stdout|stderr|file:PATH", 0, 0,   \
      "Where the statistics lines go. file:PATH: one file per process, appended, never mixed with the program's "      \
      "output or another rank's (%r: rank in MPI_COMM_WORLD, %p: process id, %h: host name, %%: %)")                   \
    X(NODE_SIZE, "node_size", "rma", NULL, "CLAMPI_NODE_SIZE", UINT, "0", NULL, 0, 1u << 30,                           \
      "Simulated nodes for testing: ranks [iK, (i+1)K) of MPI_COMM_WORLD form node i (0: the real nodes)")             \
    /* ---- transparent preload ---- */                                                                                \
    X(INFLIGHT_SHARING, "inflight_sharing", "preload", NULL, "CLAMPI_INFLIGHT_SHARING", ENUM, "auto",                  \
      "auto|always|never", 0, 0,                                                                                       \
      "Transparent windows: share gets in flight for remote targets while it pays (auto), for every target, "          \
      "or never")                                                                                                      \
    /* ---- collectives and the node-shared heap (process-wide) ---- */                                                \
    X(COLL, "coll", "coll", NULL, "CLAMPI_COLL", BOOL, "true", NULL, 0, 0,                                             \
      "Preload: MPI_Alltoall/MPI_Allgather take clampi's shared-heap path on communicators it can serve")              \
    X(SHMEM_ALLOC, "shmem_alloc", "coll", NULL, "CLAMPI_SHMEM_ALLOC", BOOL, "true", NULL, 0, 0,                        \
      "Preload: MPI_Alloc_mem serves from the node-shared heap")                                                       \
    X(HEAP_SIZE, "heap_size", "coll", NULL, "CLAMPI_HEAP_SIZE", SIZE, "256M", NULL, 1, 0,                              \
      "Bytes of each process's segment of the node-shared heap")                                                       \
    X(COLL_STAGED_MAX, "coll_staged_max", "coll", NULL, "CLAMPI_COLL_STAGED_MAX", SIZE, "32K", NULL, 1, 0,             \
      "Largest block copied through the heap when a buffer is outside it (larger blocks go to MPI)")                   \
    X(COLL_DIRECT_MAX, "coll_direct_max", "coll", NULL, "CLAMPI_COLL_DIRECT_MAX", SIZE, "unlimited", NULL, 1, 0,       \
      "Largest block copied directly between heap buffers (larger blocks go to MPI)")                                  \
    X(COLL_EAGER_MAX, "coll_eager_max", "coll", NULL, "CLAMPI_COLL_EAGER_MAX", SIZE, "1K", NULL, 0, 0,                 \
      "Largest block sent through the shared mailbox (the one-synchronization path); 0 switches it off")               \
    X(COLL_SPIN, "coll_spin", "coll", NULL, "CLAMPI_COLL_SPIN", UINT, "256", NULL, 0, 1u << 30,                        \
      "Busy polls between two sched_yield calls while waiting for node peers")                                         \
    X(COLL_SPIN_OVERSUB, "coll_spin_oversub", "coll", NULL, "CLAMPI_COLL_SPIN_OVERSUB", UINT, "0", NULL, 0, 1u << 30,  \
      "The same when the node runs more processes than cores (0: yield on every poll)")                                \
    X(COLL_HIER, "coll_hier", "coll", NULL, "CLAMPI_COLL_HIER", BOOL, "true", NULL, 0, 0,                              \
      "Communicators spanning nodes: hierarchical Alltoall/Allgather (node leaders exchange through MPI)")             \
    X(COLL_HIER_ALLTOALL_MAX, "coll_hier_alltoall_max", "coll", NULL, "CLAMPI_COLL_HIER_ALLTOALL_MAX", SIZE, "8K",     \
      NULL, 0, 0,                                                                                                      \
      "Communicators spanning nodes: largest Alltoall block on the hierarchical path (larger blocks go to the MPI, "   \
      "where every process sends at once instead of one leader per node); 0: Allgather only")                          \
    X(COLL_ALGO, "coll_algo", "coll", NULL, "CLAMPI_COLL_ALGO", ENUM, "morton", "morton|naive|mpi", 0, 0,              \
      "Intra-node copy order: Morton (Z) order, row by row, or the MPI library's collective")                          \
    /* ---- message matching: per communicator (info key) ---- */                                                      \
    X(MATCH, "match", "match", "clampi_match", "CLAMPI_MATCH", ENUM, "lla+hot", "list|lla|hot|lla+hot|bins", 0, 0,     \
      "Matching structure: linked list, linked list of arrays, either with hot caching, or source bins")               \
    X(MATCH_WIDTH, "match_width", "match", "clampi_match_width", "CLAMPI_MATCH_WIDTH", UINT, "16", NULL, 1, 1u << 16,  \
      "Entries per block of the linked list of arrays")                                                                \
    X(MATCH_HOT_PERIOD, "match_hot_period", "match", "clampi_match_hot_period", "CLAMPI_MATCH_HOT_PERIOD", UINT, "50", \
      NULL, 1, 10000000,                                                                                               \
      "Hot caching: microseconds between two reads of the queues (a helper thread's reads back off to 64 periods "     \
      "while both queues are empty)")                                                                                  \
    X(MATCH_HOT_BY, "match_hot_by", "match", "clampi_match_hot_by", "CLAMPI_MATCH_HOT_BY", ENUM, "auto",               \
      "auto|thread|progress", 0, 0,                                                                                    \
      "Hot caching: one helper thread per process reads every communicator's queues, or the message layer's "          \
      "progress does; auto: the thread only if this process may run on at least 2 CPUs per MPI rank on its node")      \
    X(MATCH_CARRIER, "match_carrier", "match", "clampi_match_carrier", "CLAMPI_MATCH_CARRIER", ENUM, "auto",           \
      "ucx|mpi|auto", 0, 0,                                                                                            \
      "What carries the messages: UCX active messages beside MPI, or MPI's own point-to-point on a duplicate of the "  \
      "communicator, clampi matching only the receives beyond the native depth (docs/matching.md); auto: mpi when "    \
      "the preload turns matching on from CLAMPI_MATCH and handles are persistent, ucx otherwise")                     \
    X(MATCH_NATIVE_DEPTH, "match_native_depth", "match", "clampi_match_native_depth", "CLAMPI_MATCH_NATIVE_DEPTH",     \
      UINT, "16", NULL, 0, 1u << 20,                                                                                   \
      "Carrier mpi: nonblocking receives left in MPI's own queue per communicator before clampi queues the deeper "    \
      "ones")                                                                                                          \
    X(MATCH_NATIVE_DEPTH_MAX, "match_native_depth_max", "match", "clampi_match_native_depth_max",                      \
      "CLAMPI_MATCH_NATIVE_DEPTH_MAX", UINT, "64", NULL, 0, 1u << 20,                                                  \
      "Carrier mpi: the native depth doubles up to this many receives while clampi's receives match in posting "       \
      "order (a window whose messages arrive in order costs MPI's queue little), and falls back to "                   \
      "clampi_match_native_depth when a match skips an older receive; at most clampi_match_native_depth: fixed")       \
    X(MATCH_CARRIER_COLL_BYTES, "match_carrier_coll_bytes", "match", NULL, "CLAMPI_MATCH_CARRIER_COLL_BYTES", UINT,    \
      "0", NULL, 0, 1u << 30,                                                                                          \
      "Carrier mpi, preload: a blocking collective whose data per process is at most this many bytes runs as its "     \
      "nonblocking form while clampi takes messages (clampi's queued receives stay clampi's); a larger one is MPI's "  \
      "blocking call after clampi's queued receives go to MPI (MPI's nonblocking collectives are much slower). 0: "    \
      "every collective with data is MPI's blocking call after that hand-over (MPI_Barrier keeps clampi's queue "      \
      "either way: clampi's own barrier of messages, or MPI's nonblocking form). The same on every rank")              \
    X(MATCH_HANDLES, "match_handles", "match", NULL, "CLAMPI_MATCH_HANDLES", ENUM, "auto",                             \
      "auto|persistent|generalized", 0, 0,                                                                             \
      "Handles of nonblocking clampi requests: pooled inactive persistent MPI requests that only clampi's completion " \
      "calls complete (no MPI call per message), or MPI generalized requests that MPI's own waits also complete; "     \
      "auto: generalized if the process has an MPI's own Fortran bindings ahead of clampi's (they call PMPI_ waits "   \
      "directly; the preload brings its own)")                                                                         \
    X(MATCH_PROFILE, "match_profile", "match", NULL, "CLAMPI_MATCH_PROFILE", STRING, "0", "0|1|PATH.json", 0, 0,       \
      "Preload: profile the program's receive-queue depth (1: summary on stderr, a path: JSON there)")                 \
    X(MATCH_SPIN, "match_spin", "match", NULL, "CLAMPI_MATCH_SPIN", UINT, "1024", NULL, 1, 1u << 30,                   \
      "Polls of a waiting message call (a blocking receive, send or probe, a wait) between two sched_yield calls")     \
    X(MATCH_SPIN_OVERSUB, "match_spin_oversub", "match", NULL, "CLAMPI_MATCH_SPIN_OVERSUB", UINT, "64", NULL, 1,       \
      1u << 30, "The same when the node runs more MPI processes than it has CPUs (as its launcher says)")              \
    X(MATCH_VERBOSE, "match_verbose", "match", NULL, "CLAMPI_MATCH_VERBOSE", BOOL, "false", NULL, 0, 0,                \
      "Say on stderr why a communicator stays on MPI, and trace out-of-order arrivals (debugging)")                    \
    /* ---- locality sampler (libclampi_locality_sample, set by clampi-locality run --sample) ---- */                  \
    X(LOCALITY_OUT, "locality_out", "locality", NULL, "CLAMPI_LOCALITY_OUT", STRING, "clampi-locality.out", NULL, 0,   \
      0, "Sampler: output directory (clampi-locality run -o sets it)")                                                 \
    X(LOCALITY_PAGE_SIZE, "locality_page_size", "locality", NULL, "CLAMPI_LOCALITY_PAGE_SIZE", SIZE, "4K", NULL, 1, 0, \
      "Sampler: page size of the analysis (a power of two, at least the system page)")                                 \
    X(LOCALITY_MIN_SIZE, "locality_min_size", "locality", NULL, "CLAMPI_LOCALITY_MIN_SIZE", SIZE, "4K", NULL, 1, 0,    \
      "Sampler: smallest allocation or static object tracked (default: the page size)")                                \
    X(LOCALITY_SAMPLE_PERIOD_MS, "locality_sample_period_ms", "locality", NULL, "CLAMPI_LOCALITY_SAMPLE_PERIOD_MS",    \
      UINT, "10", NULL, 0, 60000, "Sampler: milliseconds between re-protection rounds (0: first touch only)")          \
    X(LOCALITY_SAMPLE_PAGES, "locality_sample_pages", "locality", NULL, "CLAMPI_LOCALITY_SAMPLE_PAGES", UINT, "16",    \
      NULL, 1, 1u << 20, "Sampler: page runs re-protected per round")                                                  \
    X(LOCALITY_SAMPLE_RUN, "locality_sample_run", "locality", NULL, "CLAMPI_LOCALITY_SAMPLE_RUN", UINT, "8", NULL, 1,  \
      1u << 20, "Sampler: pages per re-protected run")                                                                 \
    X(LOCALITY_SAMPLE_AHEAD, "locality_sample_ahead", "locality", NULL, "CLAMPI_LOCALITY_SAMPLE_AHEAD", UINT, "0",     \
      NULL, 0, 511,                                                                                                    \
      "Sampler: most pages opened ahead of a thread's in-order first touches, under its own protection key (fewer "    \
      "faults, first-touch thread still exact; opt-in: see docs/locality-sampler.md; 0: one fault per page)")          \
    X(LOCALITY_MAX_PAGES, "locality_max_pages", "locality", NULL, "CLAMPI_LOCALITY_MAX_PAGES", UINT, "1048576", NULL,  \
      64, 1u << 30, "Sampler: pages its table holds (bounds its memory; pages beyond are counted as dropped)")         \
    X(LOCALITY_VALGRIND_ARGS, "locality_valgrind_args", "locality", NULL, "CLAMPI_LOCALITY_VALGRIND_ARGS", STRING, "", \
      NULL, 0, 0, "clampi-locality run --exact: extra Valgrind options (read by the command)")                         \
    X(LOCALITY_VALGRIND_LIB, "locality_valgrind_lib", "locality", NULL, "CLAMPI_LOCALITY_VALGRIND_LIB", STRING, "",    \
      NULL, 0, 0, "clampi-locality: where the Valgrind tool is (default: next to the command)")                        \
    X(LOCALITY_SAMPLE_LIB, "locality_sample_lib", "locality", NULL, "CLAMPI_LOCALITY_SAMPLE_LIB", STRING, "", NULL, 0, \
      0, "clampi-locality: the sampler library to preload (default: next to the command)")

typedef enum clampi_opt_id {
#define CLAMPI_OPT_ID(id, ...) CLAMPI_OPT_##id,
    CLAMPI_OPTION_ROWS(CLAMPI_OPT_ID)
#undef CLAMPI_OPT_ID
        CLAMPI_NOPTIONS
} clampi_opt_id;

typedef struct clampi_option {
    const char *name, *part, *info_key, *env;
    clampi_opt_type type;
    const char *def, *allowed;
    unsigned long long min, max; /* UINT range; SIZE: min only (max 0 = none) */
    const char *doc;
} clampi_option;

extern const clampi_option clampi_option_table[CLAMPI_NOPTIONS];

/* A parsed value: BOOL 0/1, SIZE bytes (SIZE_MAX for "unlimited"), UINT the number, ENUM the
 * index in `allowed`; `text` points at the text it came from (STRING options use it). */
typedef struct clampi_opt_value {
    unsigned long long u;
    const char *text;
} clampi_opt_value;

typedef enum clampi_opt_source { CLAMPI_OPT_FROM_DEFAULT, CLAMPI_OPT_FROM_ENV, CLAMPI_OPT_FROM_INFO } clampi_opt_source;

/* text -> value; 0, or -1 if the text is not an allowed value. */
int clampi_opt_parse(clampi_opt_id id, const char *text, clampi_opt_value *out);
/* The default, parsed. */
clampi_opt_value clampi_opt_default(clampi_opt_id id);
/* The environment's value: 1 (set and valid), 0 (unset or empty), -1 (invalid). */
int clampi_opt_env(clampi_opt_id id, clampi_opt_value *out);
/* A process-wide knob: environment > default, read once. An invalid value is reported on
 * stderr once ("clampi: invalid value for VAR ...; using the default") and the default is used. */
clampi_opt_value clampi_opt_process(clampi_opt_id id);
/* Where clampi_opt_process's value came from. */
clampi_opt_source clampi_opt_process_source(clampi_opt_id id);
/* value -> text (the canonical spelling: ENUM names, "true"/"false", sizes in bytes). */
void clampi_opt_format(clampi_opt_id id, clampi_opt_value v, char *buf, size_t len);
/* ENUM option id: the name of value index, as a string that lives as long as the process
 * ("?" for an index out of range). */
const char *clampi_opt_enum_name(clampi_opt_id id, unsigned long long index);
/* The allowed values as text ("transparent|always_cache|...", "1..65536", "a size: 4096, 64K, 16M"). */
void clampi_opt_allowed(clampi_opt_id id, char *buf, size_t len);
/* The row whose environment variable (or info key) is `name`; -1 if none. */
int clampi_opt_find_env(const char *name);
int clampi_opt_find_info_key(const char *key);
const char *clampi_opt_source_name(clampi_opt_source s);
#endif
