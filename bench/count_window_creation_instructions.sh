#!/usr/bin/env bash
# Instructions rank 0 spends in CMPI_Win_allocate of its first clampi_backend=ucx window
# (callgrind --toggle-collect, only rank 0 under valgrind), Debian Open MPI over shared
# memory, oversubscribed, and how many UCX endpoints that makes. The endpoint count is exact
# and the instructions inside ucp_ep_create move by well under 1 %; the total also counts
# rank 0 polling in the window's collectives while the other ranks catch up, so it moves
# with load (by millions). Compare two trees (e.g. a commit's worktree and HEAD), each built with
# scripts/build.sh openmpi:
#   bench/count_window_creation_instructions.sh TREE [NP...]     (default NP: 2 8 32 64)
set -euo pipefail
tree=$(cd "${1:?tree}" && pwd); shift
nps=("$@"); [ ${#nps[@]} -gt 0 ] || nps=(2 8 32 64)
root=$(cd "$(dirname "$0")/.." && pwd)
b=$tree/build/openmpi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mpicc.openmpi -O2 -I"$tree/include" -o "$d/prog" "$root/bench/count_window_creation_instructions.c" \
  -L"$b/src" -lclampi -Wl,-rpath,"$b/src"
cat >"$d/wrap.sh" <<W
#!/bin/sh
[ "\$OMPI_COMM_WORLD_RANK" = 0 ] && exec valgrind --tool=callgrind --toggle-collect=CMPI_Win_allocate \
  --callgrind-out-file="$d/cg.out" "\$@"
exec "\$@"
W
chmod +x "$d/wrap.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in "${nps[@]}"; do
  rm -f "$d/cg.out"
  mpirun.openmpi --oversubscribe -n "$np" --mca btl self,vader "$d/wrap.sh" "$d/prog" 1 a >"$d/log" 2>&1 ||
    { echo "np $np: run failed"; cat "$d/log"; exit 1; }
  read -r total eps ep_ir < <(python3 - "$d/cg.out" <<'PY'
import re, sys
# totals, calls of ucp_ep_create and the instructions inside them, from callgrind's own file
names, cfn, calls, inside, total = {}, None, 0, 0, 0
lines = open(sys.argv[1]).read().splitlines()
for i, line in enumerate(lines):
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3): names[m.group(2)] = m.group(3)
        if m.group(1) == "cfn": cfn = names.get(m.group(2))
        continue
    if line.startswith("summary:") or line.startswith("totals:"): total = int(line.split()[1])
    if line.startswith("calls=") and cfn == "ucp_ep_create":
        calls += int(line.split("=")[1].split()[0])
        inside += int(lines[i + 1].split()[1])
print(f"{total:,} {calls} {inside:,}")
PY
)
  printf "%-10s np %3d  instructions %12s  endpoints %3s  in ucp_ep_create %12s\n" \
    "$(git -C "$tree" rev-parse --short HEAD)" "$np" "$total" "${eps:-0}" "${ep_ir:-0}"
done
