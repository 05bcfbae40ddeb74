# Sourced by latency_preload.sh and depth_preload.sh: the launcher arguments of both sides.
# TRANSPORT=shm (default) or tcp: MPI's and clampi's UCX both over TCP loopback (Open MPI: ob1 +
# btl tcp,self; MPICH: UCX_TLS=tcp,self, which clampi's UCX context reads too). Ranks are
# bound to cores on both sides (an unbound pair on 2 cores is placed differently from run
# to run: bimodal timings). Sets transport, ompi_net, mpich_net and sfx (result file suffix).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
transport=${TRANSPORT:-shm}
ompi_net=(--bind-to core); mpich_net=(-bind-to core); sfx=""
if [ "$transport" = tcp ]; then
  ompi_net+=(--mca pml ob1 --mca btl tcp,self --mca osc pt2pt -x UCX_TLS=tcp,self); mpich_net+=(-genv UCX_TLS tcp,self); sfx="-tcp"
fi
