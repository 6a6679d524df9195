#!/usr/bin/env python3
"""Markdown table of upstream-topics.sh's output folder: per root and topic, the test cases,
the integration-test workloads, how many ran, which were unsupported (grouped by reason) and
which failed (with the error)."""
import collections
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1])
print("| source | topic | test cases | integration workloads | ran | unsupported (reason: count) | failed |")
print("|---|---|---|---|---|---|---|")
for root in sorted(p for p in out.iterdir() if p.is_dir()):
    for lst in sorted(root.glob("*.list.txt")):
        topic = lst.name[: -len(".list.txt")]
        run = root / f"{topic}.run.txt"
        ltext = lst.read_text().splitlines()
        rtext = run.read_text().splitlines() if run.exists() else []
        # A topic without integration-test workloads runs nothing (as kube's would).
        err = [l for l in ltext + rtext if l.startswith("error:") and "no workload matches" not in l]
        rows = [l for l in ltext[1:] if re.match(r"^\S+/\S+\s", l)]
        cases = {l.split("/", 1)[0] for l in rows}
        unsupported = collections.Counter()
        for l in rows:
            if "skipped: unsupported: " in l:
                why = l.split("skipped: unsupported: ", 1)[1]
                why = re.sub(r"^(feature gate [A-Za-z0-9]+=[a-z]+).*", r"\1", why)
                why = re.sub(r", used by .*", "", why)
                unsupported[why[:110]] += 1
        ran = sum(1 for l in rtext if re.match(r"^\S+/\S+\s+(\d+|-)\s", l) and l.rstrip().endswith(" ok"))
        failed = [l for l in rtext if " FAILED: " in l]
        failed += [l for l in rtext if re.match(r"^\S+/\S+\s+(\d+|-)\s", l) and not l.rstrip().endswith(" ok")]
        fail_txt = "; ".join(f"`{f.split()[0]}`: {f.split('FAILED: ', 1)[-1][:140]}" for f in failed)
        if err:
            fail_txt = (fail_txt + "; " if fail_txt else "") + f"config: {err[0][:200]}"
        uns = "; ".join(f"{k}: {v}" for k, v in unsupported.items())
        print(f"| {root.name} | {topic} | {len(cases)} | {len(rows)} | {ran} | {uns or '-'} | {fail_txt or '-'} |")
