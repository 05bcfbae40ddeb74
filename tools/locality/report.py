"""clampi-locality report: placeholder until the report module is built.

`clampi-locality report DIR [--nodes MAP] [-o OUTDIR]` runs this file as a
script with those arguments (python3 report.py DIR ...). The real report
(locality, first-touch correctness, lambda, plots, HTML) replaces this file.
"""
import sys


def main(argv=None):
    print("clampi-locality report: not built: tools/locality/report.py is still a placeholder "
          "in this build", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
