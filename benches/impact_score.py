#!/usr/bin/env python3
"""Score speed's blast radius against a compiler-grade reference (run on demand).

For sampled definitions of a real Python project, compare the reference
sites speed finds (printed by `cargo bench --bench impact_worst` with
IMPACT_SITES=<project>) with the references jedi finds for the same
definition, and print precision and recall per project:

- confident: speed's exact and unique sites;
- all sites: those plus its ambiguous ones.

Sites are matched by file, line and the name's occurrences on that line:
jedi gives each reference's exact position, speed its line; on a line
holding the name twice, each tool's count of sites there is compared, so
two sites are never matched to one. The definition itself is not a site.

    pip install jedi
    python3 benches/impact_score.py flask requests   # projects under ~/corpus/py (see impact_worst.rs)

Options: --count N definitions per project (default 80), --corpus DIR,
--bin PATH (a built impact_worst bench binary).
Rust projects need rust-analyzer's LSIF or SCIP output; this script scores
Python only.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path


def speed_sites(project, count, corpus, binary):
    """speed's sites for `count` sampled definitions of `project`."""
    env = dict(os.environ, IMPACT_SITES=project, IMPACT_SITES_COUNT=str(count))
    if corpus:
        env["IMPACT_WORST_DIR"] = corpus
    command = [binary] if binary else ["cargo", "bench", "--quiet", "--bench", "impact_worst"]
    out = subprocess.run(
        command,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def jedi_sites(root, record):
    """jedi's references to the definition, as (file, line) relative to
    `root`'s parent (as speed's paths are), the definition itself left out."""
    import jedi

    path = root.parent / record["file"]
    text = path.read_text(encoding="utf-8", errors="replace")
    line = text.splitlines()[record["line"] - 1]
    m = re.search(r"\b(?:def|class)\s+(" + re.escape(record["name"]) + r")\b", line)
    if not m:
        return None
    sys_path = [str(root / "src")] if (root / "src").is_dir() else [str(root)]
    project = jedi.Project(path=str(root), added_sys_path=sys_path, smart_sys_path=False)
    script = jedi.Script(text, path=str(path), project=project)
    found = []
    for ref in script.get_references(record["line"], m.start(1), scope="project"):
        if ref.module_path is None:
            continue
        ref_path = Path(ref.module_path)
        try:
            rel = ref_path.relative_to(root.parent)
        except ValueError:
            continue
        if ref.is_definition() and str(rel) == record["file"] and ref.line == record["line"]:
            continue
        found.append((str(rel), ref.line))
    return found


def score(tp, speed, ref):
    precision = tp / speed if speed else 1.0
    recall = tp / ref if ref else 1.0
    return precision, recall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("projects", nargs="+")
    parser.add_argument("--count", type=int, default=80)
    parser.add_argument("--corpus", default=str(Path.home() / "corpus/py"))
    parser.add_argument("--bin", help="a built impact_worst bench binary, instead of cargo bench")
    parser.add_argument("--show", action="store_true", help="print each disagreement")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    for project in args.projects:
        records = speed_sites(project, args.count, args.corpus, args.bin)
        if not records:
            print(f"{project}: no definitions (is it under {corpus}?)")
            continue
        root = corpus / Path(records[0]["file"]).parts[0]
        totals = collections.Counter()
        for record in records:
            try:
                ref = jedi_sites(root, record)
            except Exception as e:  # jedi fails on a few inputs: not scored
                print(f"  {record['file']}:{record['line']}: jedi failed: {e!r}", file=sys.stderr)
                totals["jedi failed"] += 1
                continue
            if ref is None:
                continue
            totals["definitions"] += 1
            want = collections.Counter(ref)
            sure = collections.Counter((s["file"], s["line"]) for s in record["sites"])
            every = sure + collections.Counter(
                (s["file"], s["line"]) for s in record["ambiguous"]
            )
            totals["reference"] += sum(want.values())
            totals["confident"] += sum(sure.values())
            totals["all"] += sum(every.values())
            totals["confident_tp"] += sum((sure & want).values())
            if args.show:
                for kind, extra in (("speed only", sure - want), ("jedi only", want - sure)):
                    for (f, l), n in sorted(extra.items()):
                        print(f"  {record['name']} ({record['file']}:{record['line']}): {kind}: {f}:{l} x{n}")
            totals["all_tp"] += sum((every & want).values())
        p, r = score(totals["confident_tp"], totals["confident"], totals["reference"])
        ap, ar = score(totals["all_tp"], totals["all"], totals["reference"])
        print(
            f"{project}: {totals['definitions']} definitions ({totals['jedi failed']} more jedi failed on), "
            f"{totals['reference']} reference sites (jedi); "
            f"confident {totals['confident']} sites: precision {p:.2f}, recall {r:.2f}; "
            f"all {totals['all']} sites: precision {ap:.2f}, recall {ar:.2f}"
        )


if __name__ == "__main__":
    sys.exit(main())
