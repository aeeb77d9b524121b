#!/usr/bin/env python3
"""Git repositories of real projects with a one-function change (run on demand).

Each repository is one commit of the project's real source on `main` and a
branch `change` that changes one function's body, plus a one-section spec,
for timing a whole cold dry run:

    python3 benches/dry_run_repos.py --out /tmp/dry --corpus /tmp/py
    cd /tmp/dry/django && speed review --branch change --spec specs/spec.md --dry-run

Python projects come from unpacked sdists under --corpus (mypy-1.13.0,
Django-5.1.4, flask-3.1.0, requests-2.32.3); Rust ones from the cargo
registry (ripgrep-14.1.1, tokio-1.54.1).
"""

import argparse
import re
import shutil
import subprocess
from pathlib import Path

# project: (folder, file, the changed function's line)
CASES = {
    "ripgrep": ("ripgrep-14.1.1", "crates/core/flags/hiargs.rs", r"fn from_low_args\("),
    "tokio": ("tokio-1.54.1", "src/runtime/handle.rs", r"pub fn current\(\)"),
    "flask": ("flask-3.1.0", "src/flask/app.py", r"def make_response\("),
    "requests": ("requests-2.32.3", "src/requests/sessions.py", r"    def request\("),
    "mypy": ("mypy-1.13.0", "mypy/types.py", r"^def get_proper_type\(typ: Type \| None\)"),
    "django": ("Django-5.1.4", "django/db/models/query.py", r"    def filter\("),
}


def git(repo, *args):
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "-C", str(repo), *identity, *args], check=True, capture_output=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="/tmp/dry")
    parser.add_argument("--corpus", default=str(Path.home() / "corpus/py"))
    parser.add_argument("--registry", default=str(next(Path.home().glob(".cargo/registry/src/*"), "")))
    args = parser.parse_args()
    for name, (folder, rel, pattern) in CASES.items():
        src = next((Path(d) / folder for d in (args.corpus, args.registry) if (Path(d) / folder).is_dir()), None)
        if src is None:
            print(f"{name}: {folder} not found, skipped")
            continue
        repo = Path(args.out) / name
        if repo.exists():
            shutil.rmtree(repo)
        shutil.copytree(src, repo, symlinks=True)
        (repo / "specs").mkdir(exist_ok=True)
        (repo / "specs/spec.md").write_text("# Spec\n\n## Behaviour\n\nThe change keeps behaviour.\n")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        git(repo, "checkout", "-qb", "change")
        # A change of tokens inside the function: a statement at the top of
        # a Rust body, the first `return x` of a Python one as `return (x)`.
        path = repo / rel
        lines = path.read_text().split("\n")
        start = next(i for i, line in enumerate(lines) if re.search(pattern, line))
        if rel.endswith(".rs"):
            at = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("{"))
            indent = re.match(r"\s*", lines[at + 1]).group(0)
            lines.insert(at + 1, indent + "let _timing_probe = 0;")
        else:
            at = next(i for i in range(start + 1, len(lines)) if lines[i].strip().startswith("return "))
            lines[at] = re.sub(r"return (.*)$", r"return (\1)", lines[at])
        path.write_text("\n".join(lines))
        git(repo, "commit", "-qam", "one-function change")
        print(f"{name}: {repo} ({rel}:{at + 1})")


if __name__ == "__main__":
    main()
