#!/usr/bin/env bash
# Open MPI 5's launcher fails before it starts any rank when its PMIx server cannot set up
# the listener it hands the ranks ("The PMIx server's listener thread failed to start"): the
# server writes /tmp/ompi.PID/pmix.HOST.tool.PID and refuses one that exists, so a
# launcher killed before it cleaned up leaves a file that fails the launch that next gets
# its process id (ids wrap at 32,768 on the CI machine; one whole CI run failed so). Such a
# launch says nothing about the program under test: it is made again, at most twice. Every other outcome passes through unchanged.
# Usage: launcher_retry.sh LAUNCHER [ARGS...]   (stdin, stdout and the exit code are the
# launcher's; its stderr is copied through)
set -u
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for attempt in 1 2 3; do
  { "$@" 2>&1 1>&3 3>&- | tee "$err" >&2 3>&-; } 3>&1  # stderr copied, stdout untouched
  rc=${PIPESTATUS[0]}
  if [ $rc -eq 0 ] || [ $attempt -eq 3 ] ||
    ! grep -Eq "listener thread failed to start|unable to setup a rendezvous point" "$err"; then
    exit $rc
  fi
  echo "launcher_retry: the launcher failed to start its PMIx server (attempt $attempt); launching again" >&2
done
