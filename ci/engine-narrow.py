#!/usr/bin/env python3
"""Narrows the engine's `pub` items to what its users need; re-runnable after any merge.

    python3 ci/engine-narrow.py            # narrow, check, report
    python3 ci/engine-narrow.py --dry-run  # report what it would narrow, change nothing

`engine/src/lib.rs` is the engine's public face: it re-exports the surface and keeps every
other module private. Two passes then narrow what is left `pub` behind it:

1. **Unreachable** (rustc decides): every item the `unreachable_pub` lint flags (`pub` but
   not reachable from the crate root: inside a private module and not re-exported) becomes
   `pub(crate)`, from the lint's own suggestions (`cargo check --message-format=json`).
2. **Unused outside** (this script decides, the compiler checks): a reachable `pub` item
   whose name nothing outside `engine/src` mentions (the harness, the examples, the engine's
   integration tests and benches, fuzz/) becomes `pub(crate)`, unless it is on the
   documented surface: an item `lib.rs` re-exports by name, or a field or method of a type in
   `SURFACE_TYPES` (what a plugin author works with, the configuration's schema: their whole
   API is the surface, used outside or not, but the engine-side methods of `SURFACE_EXCEPT`),
   or anything in `api/` but its free functions. Then
   `cargo check --workspace --all-targets` runs; an item an error says is private
   (E0603, E0616, E0624, E0451, E0364, E0365) goes back to `pub`, and again until it builds.

It reports what it changed, the `private_interfaces`/`private_bounds` warnings (a reachable
signature naming a narrowed type: re-export the type in `lib.rs`, or narrow the signature),
and the `dead_code` warnings narrowing reveals (code that only `pub` kept alive: delete it,
or make it `#[cfg(test)]`). Exit status 0 when the engine builds clean of those, 1 otherwise.
`ci/engine-surface.sh` prints the counts.
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "engine" / "src"
OUTSIDE = ["bench-harness", "examples", "engine/tests", "engine/benches", "fuzz"]

# The documented surface's types: each of these, and every field and method of it, stays
# `pub` (the plugin author's types, the configuration's schema).
SURFACE_TYPES = {
    "Status", "Code", "CycleState", "NodeInfo", "NodeRow", "NodeTraits", "Snapshot",
    "ImageStateSummary", "QueuedPodInfo", "Nominating", "WaitingPods", "WaitingPod",
    "Registry", "PluginContext", "PreFilterResult", "PostFilterResult", "Diagnosis",
    "ClusterEvent", "ActionType", "EventResource", "EventObject", "QueueingHint",
    "SignFragments", "NoopClient", "PodList",
    # A profile's plugin configuration (kube's `KubeSchedulerProfile`, `Plugins`, `PluginSet`).
    "Profile", "Plugins", "PluginSet",
    # The configuration file's schema (kube's `kubescheduler.config.k8s.io/v1` types).
    "KubeSchedulerConfiguration", "ProfileConfig", "PluginsConfig", "PluginSetConfig",
    "PluginConfigEntry", "PluginConfig",
    # The scheduler's own configuration (built with `..Default::default()` outside) and the
    # error a workload's feature gates may give.
    "SchedulerConfig", "QueueConfig", "UnsupportedGate",
}
# The engine's own side of surface types: what the scheduler, not a plugin, calls on them.
SURFACE_EXCEPT = {
    "WaitingPods::with_manual_clock", "WaitingPods::reject_all", "WaitingPods::stop",
    "WaitingPods::next_deadline", "WaitingPods::fire_due",
    "NodeInfo::set_node", "NodeInfo::prefetch",
}
# Files this script leaves alone: the loom shims (`cfg(loom)` code no plain build checks).
# Whole files on the surface: kube's metric names (`metrics::names`) are public as kube's are.
SKIP_FILES = {"sync.rs", "names.rs"}
PRIVATE_ERRORS = {"E0603", "E0616", "E0624", "E0451", "E0364", "E0365"}

ITEM_RX = re.compile(
    r"^(\s*)pub\s+((?:const\s+|unsafe\s+|async\s+|extern\s+\"C\"\s+)*)"
    r"(fn|struct|enum|trait|type|const|static|mod|union)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
FIELD_RX = re.compile(r"^(\s*)pub\s+([a-z_][A-Za-z0-9_]*)\s*:")
IMPL_RX = re.compile(r"^\s*impl\b(?:\s*<[^{]*?>)?\s+([A-Za-z_][A-Za-z0-9_:]*)")
STRUCT_RX = re.compile(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:struct|union|enum)\s+([A-Za-z_][A-Za-z0-9_]*)")
TEST_ATTR_RX = re.compile(r"^\s*#\[cfg\((?:test|all\(test.*)\)\]")


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True, **kw)


def cargo_messages(args):
    """The compiler's JSON messages of `cargo <args> --message-format=json`."""
    out = run(["cargo", *args, "--message-format=json"])
    msgs = []
    for line in out.stdout.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") == "compiler-message":
            msgs.append(m["message"])
    return msgs, out


def code_of(msg):
    return (msg.get("code") or {}).get("code", "")


def rel(path):
    return pathlib.Path(path).resolve().relative_to(ROOT).as_posix()


# ---- pass 1: what rustc finds unreachable ------------------------------------------------


def record_at(p, line_no):
    """`(file, line index, name, kind, owner)` of the item declared on line `line_no`."""
    text = p.read_text().splitlines()[line_no - 1]
    text = re.sub(r"^(\s*)pub\(crate\)", r"\1pub", text)
    m = ITEM_RX.match(text) or re.match(r"^(\s*)pub\s+()(use)\s+(.*)", text)
    f = FIELD_RX.match(text)
    if m:
        return (p, line_no - 1, m.group(4), m.group(3), None)
    if f:
        return (p, line_no - 1, f.group(2), "field", None)
    return (p, line_no - 1, text.strip(), "?", None)


def narrow_unreachable(dry_run, keep=()):
    """Applies every `unreachable_pub` suggestion but on the `(file, line index)`s in `keep`
    (items a build needs `pub`: they belong in `lib.rs`); returns the items changed."""
    changed = []
    keep = {(rel(p), i) for p, i, *_ in keep}
    for _ in range(5):
        msgs, _ = cargo_messages(["check", "-p", "tidegate-engine", "--lib"])
        edits = {}
        for m in msgs:
            if code_of(m) != "unreachable_pub":
                continue
            for child in m.get("children", []):
                for s in child.get("spans", []):
                    if s.get("suggested_replacement") is None:
                        continue
                    if (rel(ROOT / s["file_name"]), s["line_start"] - 1) in keep:
                        continue
                    edits.setdefault(s["file_name"], set()).add(
                        (s["byte_start"], s["byte_end"], s["suggested_replacement"])
                    )
        if not edits:
            break
        for f, spans in edits.items():
            p = ROOT / f
            data = p.read_bytes()
            lines = []
            for start, end, repl in sorted(spans, reverse=True):
                lines.append(data[:start].count(b"\n") + 1)
                data = data[:start] + repl.encode() + data[end:]
            if not dry_run:
                p.write_bytes(data)
            changed += [record_at(p, n) for n in lines]
        if dry_run:
            break
    return changed


# ---- pass 2: reachable, but nothing outside names it ---------------------------------------


def strip(src):
    """`src` with comments, strings and char literals blanked (same length, same lines)."""
    out = list(src)
    i, n = 0, len(src)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            depth, j = 0, i
            while j < n:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                    if depth == 0:
                        break
                else:
                    j += 1
            blank(i, j)
            i = j
        elif re.match(r'b?r(#*)"', src[i:i + 20]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', src[i:])
            close = '"' + m.group(1)
            j = src.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            blank(i + 1, j - 1)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", src[i:])
            if m:
                blank(i + 1, i + m.end() - 1)
                i += m.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def outside_words():
    words = set()
    for d in OUTSIDE:
        p = ROOT / d
        if not p.exists():
            continue
        for f in p.rglob("*.rs"):
            if "target" in f.parts:
                continue
            words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read_text()))
    return words


def facade_names():
    """Every name a `pub use` re-exports: `lib.rs`'s (the documented surface) and those of
    the public modules (`api/mod.rs`); after pass 1 every `pub use` left is reachable."""
    names = set()
    for p in SRC.rglob("*.rs"):
        text = strip(p.read_text())
        for m in re.finditer(r"(?<![A-Za-z_(])pub\s+use\s+([^;]*);", text):
            for leaf in re.split(r"[{},]", m.group(1)):
                leaf = leaf.strip()
                if leaf:
                    names.add(re.split(r"\s+as\s+|::", leaf)[-1].strip())
    return names


def is_test_file(p):
    r = p.relative_to(SRC).as_posix()
    return r.endswith("/tests.rs") or r == "tests.rs" or r.endswith("_test.rs") or "/tests/" in r


def candidates(words, surface):
    """`(file, line index, name, kind, owner)` of each reachable `pub` item to narrow."""
    found = []
    for p in sorted(SRC.rglob("*.rs")):
        r = p.relative_to(SRC).as_posix()
        if is_test_file(p) or p.name in SKIP_FILES or r == "lib.rs":
            continue
        in_api = r.startswith("api/")
        lines = p.read_text().splitlines()
        code = strip(p.read_text()).splitlines()
        depth = 0
        # (depth at which the block closes, kind, name): impl / struct / test.
        stack = []
        pending_test = False
        for i, line in enumerate(code):
            skipping = any(k == "test" for _, k, _ in stack)
            if TEST_ATTR_RX.match(line):
                pending_test = True
            opened = line.count("{")
            closed = line.count("}")
            owner_impl = next((n for _, k, n in reversed(stack) if k == "impl"), None)
            owner_struct = next((n for _, k, n in reversed(stack) if k == "struct"), None)
            if not skipping and not pending_test:
                m = ITEM_RX.match(line)
                f = FIELD_RX.match(line)
                if m and m.group(3) != "mod":
                    kind, name = m.group(3), m.group(4)
                    owner = owner_impl
                    keep = (
                        name in words
                        or name in surface
                        or name in SURFACE_TYPES
                        or (
                            owner in SURFACE_TYPES
                            and f"{owner}::{name}" not in SURFACE_EXCEPT
                        )
                        or (in_api and (owner is not None or kind != "fn"))
                    )
                    if not keep:
                        found.append((p, i, name, kind, owner))
                elif f and owner_struct is not None and opened == 0:
                    name = f.group(2)
                    keep = name in words or owner_struct in SURFACE_TYPES or in_api
                    if not keep:
                        found.append((p, i, name, "field", owner_struct))
            # Open blocks this line starts.
            if opened > closed:
                if pending_test and line.strip() and not line.strip().startswith("#"):
                    stack.append((depth, "test", ""))
                    pending_test = False
                else:
                    im = IMPL_RX.match(line)
                    sm = STRUCT_RX.match(line)
                    if im and " for " not in line.split("{")[0]:
                        stack.append((depth, "impl", im.group(1).split("::")[-1]))
                    elif im:
                        stack.append((depth, "trait-impl", ""))
                    elif sm:
                        stack.append((depth, "struct", sm.group(1)))
                    else:
                        stack.append((depth, "block", ""))
                    # Blocks opened and closed on the same line need no entry.
                    for _ in range(opened - closed - 1):
                        stack.append((depth, "block", ""))
            elif pending_test and line.strip().endswith(";"):
                pending_test = False
            depth += opened - closed
            while stack and depth <= stack[-1][0]:
                stack.pop()
            if pending_test and opened and opened == closed:
                pending_test = False
    return found


def set_vis(p, i, vis):
    lines = p.read_text().split("\n")
    old = lines[i]
    new = re.sub(r"^(\s*)pub(\(crate\))?\s", lambda m: f"{m.group(1)}{vis} ", old, count=1)
    lines[i] = new
    p.write_text("\n".join(lines))


def private_names(msgs):
    """The names the compiler's privacy errors point at."""
    names = set()
    for m in msgs:
        if m.get("level") != "error":
            continue
        if code_of(m) not in PRIVATE_ERRORS and "private" not in m.get("message", ""):
            continue
        for n in re.findall(r"`([A-Za-z_][A-Za-z0-9_:]*)`", m.get("message", "")):
            names.add(n.split("::")[-1])
    return names


def narrow_unused(dry_run):
    """Pass 2: the reachable items nothing outside names, narrowed (or, dry, listed)."""
    found = candidates(outside_words(), facade_names())
    if not dry_run:
        for p, i, *_ in found:
            set_vis(p, i, "pub(crate)")
    return found


def interface_types(msgs):
    """The types `private_interfaces`/`private_bounds` say a reachable item exposes."""
    names = set()
    for m in msgs:
        if code_of(m) in ("private_interfaces", "private_bounds"):
            t = re.search(r"`([A-Za-z_][A-Za-z0-9_:]*)`", m.get("message", ""))
            if t:
                names.add(t.group(1).split("::")[-1])
    return names


def build_and_widen(narrowed, reverted):
    """Builds the workspace; every narrowed item a privacy error names, and every narrowed
    type a reachable signature exposes, goes back to `pub`, until it builds clean of both."""
    for _ in range(12):
        msgs, _ = cargo_messages(["check", "--workspace", "--all-targets"])
        bad = private_names(msgs) | interface_types(msgs)
        back = [c for c in narrowed if c[2] in bad and c not in reverted]
        if back:
            for c in back:
                set_vis(c[0], c[1], "pub")
                reverted.append(c)
            continue
        errors = [m for m in msgs if m.get("level") == "error"]
        if errors:
            for m in errors[:20]:
                print(m.get("rendered", m.get("message")), file=sys.stderr)
            sys.exit("engine-narrow: the workspace does not build, and not for privacy")
        return


# ---- report -------------------------------------------------------------------------------


def show(c):
    p, i, name, kind, owner = c
    where = f"{owner}::" if owner else ""
    return f"{rel(p)}:{i + 1}: {kind} {where}{name}"


def main():
    dry_run = "--dry-run" in sys.argv
    one = narrow_unreachable(dry_run)
    two = narrow_unused(dry_run)
    if dry_run:
        print(f"pass 1 (unreachable_pub) would narrow {len(one)} item(s)")
        print(f"pass 2 (unused outside engine/src) would narrow {len(two)} item(s), among them")
        print("items pass 1 narrows as well:")
        for c in two:
            print("  " + show(c))
        return 0
    reverted = []
    build_and_widen(one + two, reverted)
    # A type narrowed in pass 2 leaves its fields and methods unreachable.
    more = narrow_unreachable(False, keep=reverted)
    build_and_widen(one + two + more, reverted)
    one += more
    one = [c for c in one if c not in reverted]
    two = [c for c in two if c not in reverted]
    if one or two:
        run(["cargo", "fmt", "-p", "tidegate-engine"])
    print(f"pass 1 (unreachable_pub): {len(one)} item(s) narrowed to pub(crate)")
    print(f"pass 2 (unused outside engine/src): {len(two)} item(s) narrowed to pub(crate)")
    for c in two:
        print("  " + show(c))
    if reverted:
        print("back to pub, needed outside: " + ", ".join(sorted({c[2] for c in reverted})))
    msgs, _ = cargo_messages(["check", "-p", "tidegate-engine", "--lib"])
    status = 0
    for m in msgs:
        c = code_of(m)
        if c in ("private_interfaces", "private_bounds", "dead_code", "unreachable_pub"):
            status = 1
            span = next((s for s in m.get("spans", []) if s.get("is_primary")), None)
            at = f"{span['file_name']}:{span['line_start']}" if span else "?"
            print(f"  {c}: {at}: {m.get('message')}")
    if status:
        print("engine-narrow: fix the warnings above by hand (unreachable_pub: an item the")
        print("harness or a test needs; re-export it in lib.rs or bench_support), then rerun")
    return status


if __name__ == "__main__":
    sys.exit(main())
