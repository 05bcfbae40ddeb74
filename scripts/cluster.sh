#!/usr/bin/env bash
# A cluster in one box, for multi-node tests and benchmarks: NODES emulated nodes made of
# Linux namespaces on this machine.
#   scripts/cluster.sh up NODES     make nodes node0..node{NODES-1} (a no-op if already up)
#   scripts/cluster.sh run openmpi|mpich NP [VAR=VALUE ...] CMD [ARGS...]
#                                   NP ranks, NP/NODES per node in blocks (ranks 0..NP/NODES-1
#                                   on node0, ...), VAR=VALUE set in every rank; exit status
#                                   and output (stdout, stderr) are the job's; stdin is /dev/null
#   scripts/cluster.sh down         remove everything `up` made (also after crashes)
#   scripts/cluster.sh status       list the nodes; exit 0 if up, 1 if not
# The nodes belong to the process whose `up` made them (a ctest run, a benchmark script, a
# shell) for as long as it lives; an `up` that finds them already there uses them as a guest
# (and owns them if their owner is gone). A `down` from anyone but the owner leaves them up
# and says so (exit 0), an `up` that would rebuild them (another node count) fails; with
# CLAMPI_CLUSTER_FORCE=1 both go ahead. So a `down` typed at a terminal cannot pull the
# nodes from under a test suite's fixtures.
# Without root or the namespace tools (or the MPI launcher, for run) it exits with status 77
# and a one-line reason on stderr, so that tests are skipped, not passed.
# CLAMPI_CLUSTER_MPIRUN / CLAMPI_CLUSTER_MPIEXEC override Debian's mpirun.openmpi /
# mpiexec.mpich; Open MPI's BTLs default to OMPI_MCA_btl=tcp,self,vader unless set.
#
# Design: node I is a network namespace clampi-nI whose eth0 (198.18.0.(I+1)/24, benchmarking
# range) is a veth to a bridge in namespace clampi-sw, so the root namespace's network is
# untouched; plus a holder process (a `sleep` under unshare) that keeps the node's UTS
# namespace (hostname nodeI, which MPIs use to tell nodes apart) and its mount namespace:
# /etc/hosts from /etc/netns/clampi-nI (ip netns exec) and its own boot_id, because UCX
# treats processes with the same boot_id as one machine and would use shared memory between
# nodes. /tmp and /dev/shm are the host's (ranks of a node share them; only boot_id differs).
# The launcher runs inside node0 and reaches the other nodes through this script as its
# remote shell ("ssh"): the symlink $STATE/clampi-ssh runs the hidden `agent` mode.
set -euo pipefail

STATE=/run/clampi-cluster          # nodes, nodeI.pid, nodeI.boot_id, hostfiles, clampi-ssh
LOCK=/run/clampi-cluster.lock      # outside STATE: `down` removes STATE while holding it
NET=198.18.0
SELF=$(readlink -f "${BASH_SOURCE[0]}")

die() { echo "cluster.sh: $*" >&2; exit 1; }
skip() { echo "cluster.sh: skipped: $*" >&2; exit 77; }

need_tools() {
  [ "$EUID" = 0 ] || skip "needs root (network namespaces)"
  local t
  for t in ip unshare nsenter mount flock setsid; do
    command -v "$t" >/dev/null 2>&1 || skip "needs '$t' (packages iproute2, util-linux)"
  done
}

# The node's holder is alive and still in its network namespace (a dead holder, or a reused
# pid, fails this). Pid files are only trusted after this check; nothing is killed by pid file.
holder_ok() {  # holder_ok I
  local pid
  pid=$(cat "$STATE/node$1.pid" 2>/dev/null) || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] &&
    [ "$(stat -L -c %i "/proc/$pid/ns/net" 2>/dev/null)" = "$(stat -L -c %i "/run/netns/clampi-n$1" 2>/dev/null)" ]
}

healthy() {  # healthy [NODES]: the recorded cluster is complete (and has NODES nodes)
  local n i
  n=$(cat "$STATE/nodes" 2>/dev/null) || return 1
  [ -z "${1:-}" ] || [ "$1" = "$n" ] || return 1
  for ((i = 0; i < n; i++)); do holder_ok "$i" || return 1; done
  [ "$(readlink "$STATE/clampi-ssh")" = "$SELF" ]
}

# Remove whatever a previous up left, complete or not: every process inside our namespaces
# (holders, and ranks or daemons orphaned by a crashed run) is ours to kill.
teardown() {
  local ns pids
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^clampi-(n[0-9]+|sw)$/ { print $1 }'); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf /etc/netns/clampi-n[0-9]* "$STATE"
  rmdir /etc/netns 2>/dev/null || true  # only if empty (ip netns recreates it)
}

# Ranks left by a launcher killed with -9 (its node0 children) are adopted like the holders
# (ppid 1 or the holder's reaper); processes of live jobs never are, so every `up` reaps them.
reap_orphans() {  # reap_orphans NODES
  local i p holder ppid
  for ((i = 0; i < $1; i++)); do
    holder=$(cat "$STATE/node$i.pid")
    for p in $(ip netns pids "clampi-n$i"); do
      ppid=$(awk '/^PPid/ { print $2 }' "/proc/$p/status" 2>/dev/null) || continue
      if [ "$p" != "$holder" ] && { [ "$ppid" = 1 ] || [ "$ppid" = "$(awk '/^PPid/ { print $2 }' "/proc/$holder/status")" ]; }; then
        kill -KILL "$p" 2>/dev/null || true
      fi
    done
  done
}

make_node() {  # make_node I NODES
  local i=$1 n=$2 ns=clampi-n$1 j
  ip netns add "$ns"
  ip -n clampi-sw link add "n$i" type veth peer name eth0 netns "$ns"
  ip -n clampi-sw link set "n$i" master br0 up
  ip -n "$ns" addr add "$NET.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  mkdir -p "/etc/netns/$ns"
  { printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n'
    for ((j = 0; j < n; j++)); do printf '%s\tnode%d\n' "$NET.$((j + 1))" "$j"; done
  } >"/etc/netns/$ns/hosts"
  echo "node$i" >"/etc/netns/$ns/hostname"
  cat /proc/sys/kernel/random/uuid >"$STATE/node$i.boot_id"
}

# After all make_node calls: a holder's mount namespace is private, so it only sees the
# /run/netns/clampi-n* mounts made before it (the agent checks nodes through them).
start_holder() {  # start_holder I
  local i=$1
  # setsid -f and /dev/null stdio: the holder must outlive the caller's process group and
  # must not keep its pipes (`out=$(cluster.sh up 2)` would wait for EOF forever) or the
  # lock (fd 9). It writes its pid (that of the exec'd sleep) once the node is set up.
  setsid -f ip netns exec "clampi-n$i" unshare --uts --mount --propagation private \
    sh -c 'hostname "$1" && mount --bind "$2" /proc/sys/kernel/random/boot_id &&
           cd / && echo $$ >"$3" && exec sleep infinity' \
    holder "node$i" "$STATE/node$i.boot_id" "$STATE/node$i.pid" </dev/null >/dev/null 2>&1 9>&-
}

up() {  # up NODES
  local n=${1:-} i t who
  [[ $n =~ ^[1-9][0-9]*$ ]] && ((n <= 250)) || die "usage: cluster.sh up NODES (1..250)"
  unshare --net --uts --mount true 2>/dev/null || skip "namespaces not permitted here (unshare --net --uts --mount failed)"
  exec 9>"$LOCK"
  flock 9
  if healthy "$n"; then
    reap_orphans "$n"
    other_owner >/dev/null || claim
    return 0
  fi
  if [ -e "$STATE/nodes" ] && who=$(other_owner) && ! forced; then
    die "the nodes are in use by $who: not rebuilt for up $n (CLAMPI_CLUSTER_FORCE=1 rebuilds them)"
  fi
  teardown
  trap 'teardown; echo "cluster.sh: up $n failed, cleaned up" >&2' EXIT
  mkdir -p "$STATE"
  ip netns add clampi-sw
  ip -n clampi-sw link set lo up
  ip -n clampi-sw link add br0 type bridge
  ip -n clampi-sw link set br0 up
  for ((i = 0; i < n; i++)); do make_node "$i" "$n"; done
  for ((i = 0; i < n; i++)); do start_holder "$i"; done
  for ((i = 0; i < n; i++)); do
    for ((t = 0; t < 100; t++)); do holder_ok "$i" && break; sleep 0.1; done
    holder_ok "$i" || die "node$i did not start (hostname or boot_id bind mount failed?)"
  done
  ln -s "$SELF" "$STATE/clampi-ssh"
  claim
  echo "$n" >"$STATE/nodes"  # last: marks the cluster complete
  trap - EXIT
}

# The owner is our parent process (ctest, a script, a shell), named by pid and start time, so
# a reused pid is not taken for it. An orphaned caller (parent 1) owns nothing.
started() { # the process's start time: field 22 of its stat, counted after the ") " ending its name
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  set -- ${stat##*) }
  echo "${20:-}"
}
claim() {
  if [ "$PPID" = 1 ]; then rm -f "$STATE/owner"; return; fi
  echo "$PPID $(started $PPID) $(cat /proc/$PPID/comm 2>/dev/null)" >"$STATE/owner"
}
other_owner() {  # prints the owner and succeeds if another live process owns the nodes
  local pid start comm
  [ -f "$STATE/owner" ] && read -r pid start comm <"$STATE/owner" || return 1
  [ "$pid" != "$PPID" ] && [ -n "$start" ] && [ "$(started "$pid")" = "$start" ] || return 1
  echo "pid $pid ($comm)"
}
forced() { [ "${CLAMPI_CLUSTER_FORCE:-0}" = 1 ]; }

down() {
  local who
  exec 9>"$LOCK"
  flock 9
  if who=$(other_owner) && ! forced; then
    echo "cluster.sh: left up: the nodes are in use by $who (CLAMPI_CLUSTER_FORCE=1 takes them down)" >&2
    return 0
  fi
  teardown
}

status() {
  local n i
  healthy || { echo "cluster: not up"; return 1; }
  n=$(cat "$STATE/nodes")
  for ((i = 0; i < n; i++)); do
    echo "node$i $NET.$((i + 1)) netns clampi-n$i holder $(cat "$STATE/node$i.pid")"
  done
}

# The launchers' remote shell: called like ssh ([options] HOST COMMAND...), runs COMMAND with
# sh -c in node HOST. As with ssh, the command gets only stdin/stdout/stderr: every other
# descriptor the launcher left open (its listening and control sockets, pipes of the other
# proxies) is closed; exec keeps the agent's pid = the remote command's until it ends.
agent() {
  while [[ ${1:-} == -* ]]; do
    case $1 in -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;; *) shift ;; esac
  done
  local host=${1:-} i fd
  [ $# -ge 2 ] || die "agent: usage: clampi-ssh [ssh options] HOST COMMAND..."
  shift
  host=${host#*@}
  case $host in
    node[0-9]*) i=${host#node} ;;
    "$NET".*) i=$((${host##*.} - 1)) ;;
    *) die "agent: unknown host '$host'" ;;
  esac
  holder_ok "$i" || die "agent: node$i is not up"
  for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    if ((fd > 2 && fd != 255)); then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  exec nsenter -t "$(cat "$STATE/node$i.pid")" --net --uts --mount -- /bin/sh -c "$*"
}

run() {  # run openmpi|mpich NP [VAR=VALUE ...] CMD [ARGS...]
  local usage="usage: cluster.sh run openmpi|mpich NP [VAR=VALUE ...] CMD [ARGS...]"
  local mpi=${1:-} np=${2:-} n k i e launcher hostfile hosts args=() envs=()
  [ $# -ge 3 ] || die "$usage"
  shift 2
  healthy || die "no cluster is up: run 'scripts/cluster.sh up NODES' first"
  n=$(cat "$STATE/nodes")
  [[ $np =~ ^[1-9][0-9]*$ ]] || die "NP must be a positive integer, not '$np'"
  ((np % n == 0)) || die "NP=$np is not a multiple of NODES=$n (each node gets NP/NODES ranks)"
  k=$((np / n))
  while [[ $# -gt 0 && $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] || die "$usage"
  case $mpi in
    openmpi)
      launcher=${CLAMPI_CLUSTER_MPIRUN:-mpirun.openmpi}
      command -v "$launcher" >/dev/null || skip "Open MPI launcher '$launcher' not found"
      hostfile=$STATE/hostfile.$k
      if [ ! -f "$hostfile" ]; then  # tmp + mv: concurrent runs may write it at once
        for ((i = 0; i < n; i++)); do echo "node$i slots=$k"; done >"$hostfile.$$"
        mv -f "$hostfile.$$" "$hostfile"
      fi
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      export OMPI_MCA_btl=${OMPI_MCA_btl:-tcp,self,vader}
      # ppr:K:node = K ranks per node, node by node: blocks. 2 cores: oversubscribe, no binding.
      args=(--hostfile "$hostfile" -np "$np" --map-by "ppr:$k:node" --oversubscribe --bind-to none
        --wdir "$PWD" --mca plm_rsh_agent "$STATE/clampi-ssh"
        --mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24")
      for e in "${envs[@]}"; do args+=(-x "$e"); done ;;
    mpich)
      # Debian's MPICH 4.0.2 can hang in MPI_Finalize over UCX tcp (disconnect needs peers that
      # already block in the PMI barrier; pmodels/mpich#6596): callers should use a timeout.
      launcher=${CLAMPI_CLUSTER_MPIEXEC:-mpiexec.mpich}
      command -v "$launcher" >/dev/null || skip "MPICH launcher '$launcher' not found"
      hosts=node0:$k
      for ((i = 1; i < n; i++)); do hosts+=",node$i:$k"; done
      args=(-launcher ssh -launcher-exec "$STATE/clampi-ssh" -iface eth0 -hosts "$hosts"
        -n "$np" -wdir "$PWD")
      for e in "${envs[@]}"; do args+=(-genv "${e%%=*}" "${e#*=}"); done ;;
    *) die "$usage" ;;
  esac
  # Inside node0, so that the launcher is on the cluster's network and node0 is its own host.
  exec nsenter -t "$(cat "$STATE/node0.pid")" --net --uts --mount --wd="$PWD" -- \
    "$launcher" "${args[@]}" "$@" </dev/null
}

# Called through the symlink $STATE/clampi-ssh: Hydra's -launcher-exec takes one path, no args.
[ "$(basename "$0")" = clampi-ssh ] && set -- agent "$@"
need_tools
case ${1:-} in
  up | down | status | run | agent) cmd=$1; shift; "$cmd" "$@" ;;
  *) die "usage: cluster.sh up NODES | run openmpi|mpich NP [VAR=VALUE ...] CMD [ARGS...] | down | status" ;;
esac
