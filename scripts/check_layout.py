#!/usr/bin/env python3
"""The README's Layout section is never stale: every path it names exists, and every
folder directly under src/ (and src/backends/) is named. Usage: check_layout.py SOURCE_DIR"""
import pathlib
import re
import sys


def main():
    root = pathlib.Path(sys.argv[1])
    text = (root / "README.md").read_text()
    m = re.search(r"^## Layout\n(.*?)^```\n(.*?)^```", text, re.S | re.M)
    if not m:
        print("check_layout: README.md has no Layout section with a code block")
        return 1
    named = set()
    bad = []
    for line in m.group(2).splitlines():
        for token in line.split("  ")[0].replace(",", " ").split():
            path = token.rstrip("/")
            if "{" in path or not path:
                continue
            named.add(path)
            if not (root / path).exists():
                bad.append(f"README Layout names {token}, which does not exist")
    folders = [p for p in (root / "src").iterdir() if p.is_dir()]
    folders += [p for p in (root / "src" / "backends").iterdir() if p.is_dir()]
    for p in sorted(folders):
        rel = str(p.relative_to(root))
        if rel not in named and not any(n.startswith(rel + "/") for n in named):
            if not any(rel.startswith(n + "/") for n in named):
                bad.append(f"{rel}/ is not in the README's Layout section")
    for b in bad:
        print(b)
    print(f"check_layout: {len(named)} paths named, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
