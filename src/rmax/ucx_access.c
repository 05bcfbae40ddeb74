/* The extensions' view of the UCX backend's window state (see ucx_access.h). Until the
 * backend exists every window is an MPI window. */
#include "rmax/ucx_access.h"

#include "rmax/family.h"

int clampi_rmax_is_ucx(const clampi_win *w) { (void)w; return 0; }
int clampi_rmax_attached(const clampi_win *w, const void *base, size_t size) { (void)w, (void)base, (void)size; return 0; }
ucp_worker_h clampi_rmax_worker(clampi_win *w) { (void)w; return NULL; }
ucp_ep_h clampi_rmax_ep(clampi_win *w, int target) { (void)w, (void)target; return NULL; }
ucp_worker_h clampi_rmax_thread_worker(clampi_win *w) { (void)w; return NULL; }
ucp_ep_h clampi_rmax_thread_ep(clampi_win *w, int target) { (void)w, (void)target; return NULL; }
int clampi_rmax_eps(clampi_win *w, ucp_ep_h **eps) { (void)w, (void)eps; return 0; }
void clampi_win_share_backend(clampi_win *w, const clampi_win *parent) { (void)w, (void)parent; }
void clampi_win_detach_shared(clampi_win *w) { (void)w; }
uint64_t clampi_rmax_win_id(const clampi_win *w) { return w->rmax ? w->rmax->win_id : 0; }
