#!/usr/bin/env bash
# The messages a put + flush costs in UCX itself over TCP (UCX_TLS=tcp,self), no MPI, no
# clampi: bench/ucx_put_flush_messages.c under `strace -ff`, each process's send calls
# counted (sendto: one message; sendmsg/writev: one message from several pieces). Counts do
# not move with the machine's load. Runs against the system's UCX, or the UCX libraries in
# UCX_LIB_DIR (a wheel's: the program is built against the system's headers, and UCP's API
# is stable across 1.x). Prints a table; N put + flush (default 1000).
# Usage: ucx_put_flush_messages.sh [N]
set -euo pipefail
command -v strace >/dev/null || { echo "ucx_put_flush_messages.sh: needs strace (scripts/deps.sh installs it)" >&2; exit 1; }
n=${1:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/prog" "$root/bench/ucx_put_flush_messages.c" -lucp -lucs
run_env=(env UCX_TLS=tcp,self)
[ -n "${UCX_LIB_DIR:-}" ] && run_env+=(LD_LIBRARY_PATH="$UCX_LIB_DIR")
printf '# %s, UCX %s, %s put+flush of 8 bytes, UCX_TLS=tcp,self\n' "$(date -u +%F)" "$("${run_env[@]}" "$tmp/prog" version)" "$n"
printf '# sends per process (sendto = one message; sendmsg and writev = one message sent from pieces)\n'
printf '%-6s %-10s %-8s %8s %8s %8s %8s %8s\n' mode native_put process sendto sendmsg writev per_op flushes
for put in n y; do
  for mode in each once; do
    rm -f "$tmp"/t.*
    "${run_env[@]}" PUT_ENABLE=$put strace -ff -o "$tmp/t" -e trace=sendto,sendmsg,writev,wait4 "$tmp/prog" $mode "$n" \
      >/dev/null 2>&1 || { echo "ucx_put_flush_messages.sh: the program failed ($mode, PUT_ENABLE=$put)" >&2; exit 1; }
    for f in "$tmp"/t.*; do
      s=$(grep -c '^sendto(' "$f" || true) m=$(grep -c '^sendmsg(' "$f" || true) w=$(grep -c '^writev(' "$f" || true)
      [ $((s + m + w)) -lt 2 ] && continue # UCX's helper threads
      who=target; grep -q '^wait4(' "$f" && who=origin
      ops=$n; [ $mode = once ] && ops=1
      printf '%-6s %-10s %-8s %8d %8d %8d %8s %8d\n' $mode $put $who "$s" "$m" "$w" \
        "$(awk -v t=$((s + m + w)) -v n="$n" 'BEGIN { printf "%.2f", t / n }')" $ops
    done
  done
done
echo "# per_op: sends per put; mode each flushes after every put, once flushes once after the $n puts"
