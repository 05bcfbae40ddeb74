# Sourced by the test harnesses: each rank's stdout in a file of its own. Open MPI's and
# Intel MPI's launchers forward the ranks' output in chunks that need not end at a line's
# end, so two ranks writing at the same moment can mix within a line, whole-line writes
# included (2 ranks writing 20,000 lines each: 40-200 mixed lines under Open MPI 4.1 and
# Intel MPI 2021.19, none under MPICH's launcher). A result line mixed so is lost to grep.
#   rank_output_args FLAVOR PREFIX      the launcher's arguments (FLAVOR: openmpi | mpich)
#   rank_output_collect PREFIX NP       every rank's stdout, rank 0 first
rank_output_args() {
  if [ "$1" = openmpi ]; then echo --output-filename "$2"; else echo -outfile-pattern "$2.%r.out"; fi
}
rank_output_collect() {
  local r f
  for ((r = 0; r < $2; r++)); do
    # MPICH and Intel MPI: PREFIX.R.out; Open MPI 4: PREFIX/JOB/rank.R/stdout;
    # Open MPI 5: PREFIX.JOB.R.out
    for f in "$1.$r.out" "$1"/*/rank."$r"/stdout "$1".*."$r".out; do
      if [ -f "$f" ]; then cat "$f"; break; fi
    done
  done
}
