#!/usr/bin/env bash
# The engine's public surface in figures: `pub fn`, `pub(crate) fn`, `pub mod` against every
# module, and the `pub` items whose name nothing outside engine/src mentions (the harness,
# the examples, the engine's own integration tests and benches, fuzz/). Counts lines of
# engine/src as written (test modules included for the fn counts, as `grep` sees them).
#
#   bash ci/engine-surface.sh            # this checkout
#   bash ci/engine-surface.sh DIR        # another checkout (e.g. a `git archive` of a base)
#   bash ci/engine-surface.sh -v [DIR]   # also list the unused names
set -euo pipefail
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi
root="${1:-$(dirname "$0")/..}"
cd "$root"
VERBOSE=$verbose python3 - <<'PY'
import os, re, pathlib

src = pathlib.Path("engine/src")
files = sorted(src.rglob("*.rs"))

def is_test_file(p):
    rel = p.relative_to(src).as_posix()
    return (rel.endswith("/tests.rs") or rel == "tests.rs" or rel.endswith("_test.rs")
            or "/tests/" in rel or rel.startswith("tests/"))

def count(pattern):
    rx = re.compile(pattern)
    return sum(1 for f in files for line in f.read_text().splitlines() if rx.match(line))

pub_fn = count(r'^\s*pub\s+(const\s+|unsafe\s+|async\s+)*fn\s')
crate_fn = count(r'^\s*pub\(crate\)\s+(const\s+|unsafe\s+|async\s+)*fn\s')
super_fn = count(r'^\s*pub\(super\)\s+(const\s+|unsafe\s+|async\s+)*fn\s')
pub_mod = count(r'^\s*pub\s+mod\s')

def non_test_lines(f):
    """The lines of a non-test file outside `#[cfg(test)]` items (by brace depth)."""
    out, skip_depth, depth, pending = [], None, 0, False
    for line in f.read_text().splitlines():
        s = line.strip()
        if skip_depth is None and pending and s and not s.startswith("#"):
            if s.endswith(";") and "{" not in s:
                pending = False
                continue
            skip_depth = depth
            pending = False
        opened, closed = line.count("{"), line.count("}")
        if skip_depth is not None:
            depth += opened - closed
            if depth <= skip_depth and (opened or closed):
                skip_depth = None
            continue
        if re.match(r'^\s*#\[cfg\((test|all\(test.*)\)\]', line):
            pending = True
            continue
        depth += opened - closed
        out.append(line)
    return out

modules = 1  # the crate root
pub_items = []
item_rx = re.compile(r'^\s*pub\s+(?:const\s+|unsafe\s+|async\s+)*(fn|struct|enum|trait|type|const|static|mod)\s+([A-Za-z_][A-Za-z0-9_]*)')
for f in files:
    if is_test_file(f):
        continue
    for line in non_test_lines(f):
        if re.match(r'^\s*(pub(\([a-z]+\))?\s+)?mod\s+[a-z_0-9]+', line):
            modules += 1
        m = item_rx.match(line)
        if m:
            pub_items.append((m.group(1), m.group(2), f.relative_to(src).as_posix()))

outside = []
for d in ["bench-harness", "examples", "engine/tests", "engine/benches", "fuzz"]:
    p = pathlib.Path(d)
    if p.exists():
        outside += [q for q in p.rglob("*.rs") if "target" not in q.parts]
words = set()
for q in outside:
    words.update(re.findall(r'[A-Za-z_][A-Za-z0-9_]*', q.read_text()))
unused = [(k, n, f) for (k, n, f) in pub_items if n not in words]
unused_fn = sorted({n for (k, n, f) in unused if k == "fn"})
unused_mod = sorted({n for (k, n, f) in unused if k == "mod"})
unused_other = sorted({n for (k, n, f) in unused if k not in ("fn", "mod")})

print(f"pub fn                               {pub_fn}")
print(f"pub(crate) fn                        {crate_fn}")
print(f"pub(super) fn                        {super_fn}")
print(f"pub mod / modules                    {pub_mod} / {modules}")
print(f"pub items (non-test)                 {len(pub_items)}")
print(f"pub fn names unused outside          {len(unused_fn)}")
print(f"pub mod names unused outside         {len(unused_mod)}")
print(f"other pub item names unused outside  {len(unused_other)}")
if os.environ.get("VERBOSE") == "1":
    for k, n, f in sorted(unused, key=lambda t: (t[2], t[1])):
        print(f"  unused outside: {k} {n} ({f})")
PY
