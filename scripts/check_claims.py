#!/usr/bin/env python3
"""Every measured figure in the README and docs names the committed results file it comes
from, and that file contains it. Usage: check_claims.py SOURCE_DIR [FILE.md ...]
       check_claims.py SOURCE_DIR --suggest FILE.md:LINE ...  (which results files hold
       the figures of the block starting at LINE)

Convention (docs/testing.md, "Figures name their results file"):
  A paragraph, list item or table that states measured figures (latency, ratio, speed-up,
  instruction or miss count, overhead, percentage of a measurement) carries
      Source: `path/to/results-file`
  ("Sources:" too; one or more backticked paths relative to the repository root, separated
  by commas or "and"). A table or list inherits the sources of the paragraph right above
  it when that paragraph ends with ":", or of a paragraph right below it that starts with
  "Source:". Consecutive tables (only headings between them) share the paragraph above
  the first one. A paragraph that starts with "Source:" right under a heading applies to
  every block of that section (up to the next heading of any level).

Blocks: each Markdown file is split into blocks: paragraphs (separated by blank lines),
list items (a line starting "- ", "* " or "1. " starts a new block; indented lines
continue it), and tables (consecutive lines starting "|"). Headings, fenced code and
HTML comments are no blocks. Inline code (`...`), link targets and URLs are ignored when
looking for figures.

What a figure is:
  * a number followed by a measurement unit: us, µs, ns, ms, s, sec, seconds, x, ×, %,
    instructions, instr, misses, cycles, MB/s, GB/s, Gbit/s, Mgets/s, ops/s, Mmsg/s ...
  * in a block that cites a file, also every number with a decimal point ("254.2"),
    since cited tables often put the unit in the header.
  "21 621" is read as 21621, "1.83×" as 1.83, "46.0 %" as 46.0; a sign is ignored.

(a) Blocks that cite files: every cited path must exist; every figure must be found in one
    of the cited files (text files; a cited .png only has to exist). A figure with k
    decimals matches a file number that rounds to it at k decimals (1.83 matches 1.8312;
    an integer 260 matches 259.6). A figure computed from file values is written with its
    derivation in parentheses right after it, e.g. "2.7x (0.40 / 0.15)" or
    "63 % (1 - 0.15 / 0.40)": numbers, + - * / and parentheses only; every operand with a
    decimal point must be in a cited file, and the expression must round to the figure.
    The target heuristics of (b) apply here too ("within 0.10" is a bound).
(b) Blocks that cite nothing must state no figure with a unit, except where it is plainly
    not a measurement. Heuristics (deliberately simple): a figure is skipped when its own
    clause before it (back to the nearest line break, table cell bar, comma, semicolon,
    colon, parenthesis, dash or sentence end; at most 40 characters) contains one of
    TARGET_WORDS (target, goal, at most, at least, up to, <=, ≤, <, >, ≥, default,
    timeout, limit, budget, every, each, within, sleep, wait, nap, period, interval,
    require, max, min, threshold, configur, set to, bound, tolerance; words of four
    letters or fewer only as whole words). A rule of the code such as "when 50 % of ..."
    is not caught by these: use the marker. Sizes (B, KiB, MiB), counts of
    ranks/threads/processes and versions carry no measurement unit and are never figures.
    Anything else is opted out explicitly with the marker <!-- not a measurement --> in
    the block (for targets, design constants, quoted numbers from papers).

Checked files: README.md, docs/**/*.md (design notes too), and the hand-written Markdown under bench/*/results/
(bench/coll/results/results.md). Markdown that a committed script writes next to its raw
data (GENERATED below) is itself a results file and is not checked.
"""
import ast
import math
import pathlib
import re
import sys

GENERATED = {
    "bench/coll/results/tables.md",        # bench/coll/tables.py
    "bench/rmaext/results/results.md",     # bench/rmaext/plot.py (and in any run directory below it)
    "bench/results/report/summary.md",     # bench/report/plot.py
    "bench/results/report-mpich/summary.md",
    # and bench/results/existing-*/summary.md, bench/results/performance/*/summary.md
    # (bench/existing_figures.py), matched in main()
}
OPT_OUT = "<!-- not a measurement -->"
UNITS = (r"µs|us|ns|ms|s|sec|secs|seconds|x|×|%|instructions|instruction|instr|misses|"
         r"cycles|MB/s|GB/s|GiB/s|MiB/s|Gbit/s|Mgets/s|gets/s|ops/s|Mops/s|Mmsg/s|msg/s")
NUM = r"\d{1,3}(?:[ \u2009\u202f]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[+-]?\d+)?"
FIG_UNIT = re.compile(r"(?<![\w.])(" + NUM + r")(?:\s?(?:" + UNITS + r"))(?![\w/<]|\.\.|\s?\d)")
VERSION = re.compile(r"(?:MPI|MPICH|OMB|binutils|UCX|Debian|Python|gcc|GCC|clang|v|version|libfabric|PMIx)\s?$")
FIG_DEC = re.compile(r"(?<![\w.])(\d+\.\d+)(?![\w.]|\.\d)")
DERIV = re.compile(r"\s?(?:" + UNITS + r")?\s*\(")
SOURCE = re.compile(r"Sources?:\s*((?:`[^`]+`[\s,;]*(?:and\s+)?)+)")
TARGET_WORDS = ("target", "goal", "at most", "at least", "up to", "<=", "≤", "<", ">", "≥",
                "default", "timeout", "limit", "budget", "every", "each", "within",
                "sleep", "wait", "nap", "period", "interval", "require", "max", "min",
                "threshold", "configur", "set to", "bound", "tolerance")


def target(text, i):
    """A target word in the same clause, before text[i]: the text back to the nearest line
    break, table cell, or , ; : ( ) — or sentence end, at most 40 characters."""
    before = re.split(r"[\n|,;:()—]|\.\s", text[max(0, i - 40):i])[-1].lower()
    return any(re.search(r"(?<!\w)" + re.escape(w) + (r"(?!\w)" if w.isalpha() and len(w) <= 4 else ""), before)
               for w in TARGET_WORDS)


def blocks(text):
    """Yields (first line number, kind, text) for each paragraph, list item and table."""
    out, cur, kind, start = [], [], None, 0
    in_code = in_comment = False

    def flush():
        nonlocal cur, kind
        if cur:
            out.append((start, kind, "\n".join(cur)))
        cur, kind = [], None

    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code:
            continue
        if in_comment or (s.startswith("<!--") and "-->" not in s):
            in_comment = "-->" not in s
            continue
        if not s or s.startswith("#"):
            flush()
            if s.startswith("#"):
                out.append((n, "heading", s))
            continue
        if s.startswith("|"):
            if kind != "table":
                flush()
                kind, start = "table", n
            cur.append(line)
            continue
        if re.match(r"([-*+]|\d+\.)\s", s) and not line.startswith("    "):
            flush()
            kind, start = "item", n
            cur.append(line)
            continue
        if kind == "table":
            flush()
        if kind is None:
            kind, start = "para", n
        cur.append(line)
    flush()
    return out


def cited(text):
    text = re.sub(r"``.*?``", " ", text, flags=re.S)  # an example of the syntax cites nothing
    paths = []
    for m in SOURCE.finditer(text):
        paths += re.findall(r"`([^`]+)`", m.group(1))
    return paths


def strip(text):
    text = re.sub(r"``.*?``", " ", text, flags=re.S)
    text = text.replace(OPT_OUT, "")
    text = re.sub(r"Sources?:\s*((?:`[^`]+`[\s,;]*(?:and\s+)?)+)", " ", text)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    return text


def value(s):
    return float(re.sub(r"[ \u2009\u202f]", "", s))


def decimals(s):
    s = re.sub(r"[ \u2009\u202f]", "", s)
    return len(s.split(".")[1]) if "." in s and "e" not in s else 0


def matches(fig, k, numbers):
    fig = abs(fig)
    tol = 0.5 * 10 ** -k + 1e-9
    return any(abs(abs(v) - fig) <= tol for v in numbers)


def file_numbers(root, paths, cache):
    numbers = []
    for p in paths:
        if p not in cache:
            f = root / p
            if f.suffix in (".png", ".svg", ".pdf"):
                cache[p] = []
            else:
                t = f.read_text(errors="replace")
                t = re.sub(r"(?<=\d)[\u2009\u202f](?=\d{3})", "", t)
                cache[p] = [float(x) for x in re.findall(r"(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?", t)]
        numbers += cache[p]
    return numbers


def balanced(text, i):
    """The text inside the parenthesis opening at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j].lstrip("= ")
    return ""


def derivation_ok(expr, fig, k, numbers):
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant,
                                 ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd)):
            return False
        if isinstance(node, ast.Constant) and "." in repr(node.value) and \
                not matches(node.value, len(repr(node.value).split(".")[1]), numbers):
            return False
    try:
        v = eval(compile(tree, "<derivation>", "eval"), {"__builtins__": {}})
    except ZeroDivisionError:
        return False
    return abs(abs(v) - abs(fig)) <= 0.5 * 10 ** -k + 1e-9


def check_file(root, rel, cache):
    errors = []
    text = (root / rel).read_text()
    bl = blocks(text)
    sources = [cited(b[2]) for b in bl]
    section = []  # sources of a "Source:" paragraph right under the block's heading
    cur = []
    for i, (line, kind, body) in enumerate(bl):
        if kind == "heading":
            nxt = bl[i + 1] if i + 1 < len(bl) else None
            cur = sources[i + 1] if nxt and nxt[1] == "para" and \
                re.match(r"\s*Sources?:", nxt[2]) else []
        section.append(cur)
    for i, (line, kind, body) in enumerate(bl):
        if kind == "heading":
            continue
        src = list(sources[i]) + section[i]
        if kind in ("table", "item"):
            j = i
            while j > 0 and (bl[j - 1][1] == kind or
                             (kind == "table" and bl[j - 1][1] == "heading")):
                j -= 1
            if j > 0 and bl[j - 1][1] == "para" and bl[j - 1][2].rstrip().endswith(":"):
                src += sources[j - 1]
            k = i
            while k + 1 < len(bl) and bl[k + 1][1] == kind and kind == "item":
                k += 1
            if k + 1 < len(bl) and bl[k + 1][1] == "para" and \
                    re.match(r"\s*Sources?:", bl[k + 1][2]):
                src += sources[k + 1]
        where = f"{rel}:{line}"
        if OPT_OUT in body:
            continue
        clean = strip(body)
        if src:
            missing = [p for p in src if not (root / p).is_file()]
            for p in missing:
                errors.append(f"{where}: cites `{p}`, which is not a committed file")
            if missing:
                continue
            numbers = file_numbers(root, src, cache)
            seen = set()
            for rx in (FIG_UNIT, FIG_DEC):
                for m in rx.finditer(clean):
                    if m.start(1) in seen:
                        continue
                    seen.add(m.start(1))
                    s = m.group(1)
                    if rx is FIG_DEC and VERSION.search(clean[max(0, m.start() - 12):m.start()]):
                        continue
                    fig, k = value(s), decimals(s)
                    if matches(fig, k, numbers) or target(clean, m.start()):
                        continue
                    d = DERIV.match(clean, m.end(1))
                    if d and derivation_ok(balanced(clean, d.end() - 1), fig, k, numbers):
                        continue
                    ctx = clean[max(0, m.start() - 30):m.end() + 10].replace("\n", " ")
                    errors.append(f"{where}: {s} is in none of {', '.join(src)}: ...{ctx}...")
        else:
            if kind == "table":
                decs = [m for m in FIG_DEC.finditer(clean)
                        if not VERSION.search(clean[max(0, m.start() - 12):m.start()])]
                if len(decs) >= 3:
                    errors.append(f"{where}: table with {len(decs)} decimal figures "
                                  f"({', '.join(m.group(1) for m in decs[:4])}, ...) cites no results file")
                    continue
            for m in FIG_UNIT.finditer(clean):
                if target(clean, m.start()):
                    continue
                ctx = clean[max(0, m.start() - 30):m.end() + 10].replace("\n", " ")
                errors.append(f"{where}: figure {m.group(0).strip()} cites no results file: ...{ctx}...")
    return errors


def suggest(root, rel, line_no, cache):
    """--suggest: for the block at rel:line, which results files hold its figures."""
    for line, kind, body in blocks((root / rel).read_text()):
        if line != line_no:
            continue
        clean = strip(body)
        figs = [(value(m.group(1)), decimals(m.group(1)), m.group(1))
                for rx in (FIG_UNIT, FIG_DEC) for m in rx.finditer(clean)]
        figs = list({f[2]: f for f in figs}.values())
        cands = [p.relative_to(root).as_posix() for p in sorted(root.glob("bench/**/results/**/*"))
                 if p.is_file() and p.suffix not in (".png", ".err")]
        scored = []
        for c in cands:
            nums = file_numbers(root, [c], cache)
            hit = [f[2] for f in figs if matches(f[0], f[1], nums)]
            if hit:
                scored.append((len(hit), c, hit))
        print(f"{rel}:{line}: {len(figs)} figures: {[f[2] for f in figs]}")
        for n, c, hit in sorted(scored, reverse=True)[:6]:
            print(f"  {n:3d} {c}: {hit}")


def main():
    root = pathlib.Path(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "--suggest":
        cache = {}
        for spec in sys.argv[3:]:
            rel, line = spec.rsplit(":", 1)
            suggest(root, rel, int(line), cache)
        return 0
    if len(sys.argv) > 2:
        files = [pathlib.Path(f).resolve().relative_to(root.resolve()).as_posix()
                 if pathlib.Path(f).is_absolute() or (root / f).exists() is False
                 else f for f in sys.argv[2:]]
    else:
        files = ["README.md"] + sorted(p.relative_to(root).as_posix()
                                       for p in (root / "docs").glob("**/*.md"))
        files += sorted(p.relative_to(root).as_posix()
                        for p in root.glob("bench/**/results/**/*.md"))
        # bench/existing_figures.py writes summary.md into each run directory
        files = [f for f in files if f not in GENERATED and not re.match(r"bench/rmaext/results/.+/results\.md$", f)
                 and not re.match(r"bench/results/(existing-[^/]+|performance/[^/]+)/summary\.md$", f)]
    cache, errors = {}, []
    for rel in files:
        errors += check_file(root, rel, cache)
    for e in errors:
        print(e)
    if errors:
        print(f"check_claims: {len(errors)} figure(s) without a committed source "
              "(convention: scripts/check_claims.py docstring)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
