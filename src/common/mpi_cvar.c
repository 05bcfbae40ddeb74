/* MPI_T control-variable overrides (common/mpi_cvar.h). */
#include "common/mpi_cvar.h"

#include <mpi.h>
#include <pthread.h>
#include <string.h>

static int write_int(int index, int value, int *old) {
    MPI_T_cvar_handle h;
    int count = 0;
    if (PMPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS) return 0;
    int ok = 0;
    if (count == 1 && (old == NULL || PMPI_T_cvar_read(h, old) == MPI_SUCCESS))
        ok = PMPI_T_cvar_write(h, &value) == MPI_SUCCESS;
    PMPI_T_cvar_handle_free(&h);
    return ok;
}

/* MPI_T is initialised once and never finalized: after its last MPI_T_finalize, MPICH 4.0
 * finds no control variable by name any more (MPI_T_cvar_get_index: MPI_T_ERR_INVALID_NAME),
 * which would break the program's own use of MPI_T. It is initialised at the MPI's own
 * thread level: Open MPI's MPI_T_init_thread sets the level MPI_Query_thread reports
 * (asking for MPI_THREAD_SINGLE made a program initialised with MPI_THREAD_MULTIPLE read
 * MPI_THREAD_SINGLE back). */
static pthread_once_t tool_once = PTHREAD_ONCE_INIT;
static int tool_ready;

static void tool_init(void) {
    int level = MPI_THREAD_SINGLE, initialized = 0, finalized = 0, provided;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (initialized && !finalized) PMPI_Query_thread(&level);
    tool_ready = PMPI_T_init_thread(level, &provided) == MPI_SUCCESS;
}

int clampi_mpi_t_ready(void) {
    pthread_once(&tool_once, tool_init);
    return tool_ready;
}

void clampi_cvar_override_int(clampi_cvar_override *o, const char *name, int value) {
    memset(o, 0, sizeof *o);
    if (!clampi_mpi_t_ready()) return;
    int index;
    MPI_Datatype type;
    int verbosity, bind, scope;
    MPI_T_enum enumtype;
    char nm[256], desc[8];
    int len = (int)sizeof nm, dlen = (int)sizeof desc;
    if (PMPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        PMPI_T_cvar_get_info(index, nm, &len, &verbosity, &type, &enumtype, desc, &dlen, &bind, &scope) !=
            MPI_SUCCESS ||
        type != MPI_INT || bind != MPI_T_BIND_NO_OBJECT || scope == MPI_T_SCOPE_CONSTANT ||
        scope == MPI_T_SCOPE_READONLY || !write_int(index, value, &o->old))
        return;
    o->index = index;
    o->active = 1;
}

void clampi_cvar_restore(clampi_cvar_override *o) {
    if (!o->active) return;
    write_int(o->index, o->old, NULL);
    o->active = 0;
}
