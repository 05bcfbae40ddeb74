#!/usr/bin/env bash
# Installs the Debian packages clampi needs to build, test and benchmark, if missing.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config
      openmpi-bin libopenmpi-dev mpich libmpich-dev libucx-dev
      valgrind bc python3 python3-matplotlib python3-mpi4py
      libnuma-dev binutils clang-format   # libnuma: clampi_numa_alloc binding; binutils: addr2line for the locality sampler; clang-format: the style check
      gfortran                            # Fortran programs under the preload (tests/fortran)
      python3-venv                        # the platform matrix's MPIs (PyPI wheels, scripts/mpi_wheels.sh)
      iproute2 util-linux                 # scripts/cluster.sh: network namespaces, unshare, nsenter
      strace)                             # bench/count_miss_syscalls.sh: system calls counted, not timed
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "clampi: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
