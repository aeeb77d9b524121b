#!/usr/bin/env python3
"""Score speed's blast radius against compiler-grade references (run on demand).

For sampled definitions of a real project, compare the reference sites speed
finds (printed by `cargo bench --bench impact_worst` with
IMPACT_SITES=<project>) with the references a reference tool finds for the
same definition, and print precision and recall per project:

- confident: speed's exact and unique sites;
- all sites: those plus its ambiguous ones.

Sites are matched by the name's exact position: file, line and column
(1-based, in characters). The definition itself is not a site.

Reference tools:

- Python: jedi (`pip install jedi`), asked for the references of the name at
  the definition's position, over the project's folder.
- Rust: rust-analyzer's SCIP index of a Cargo workspace whose members are
  the project's crate folders under the same names as in speed's paths
  (`rust-analyzer scip <workspace> --output x.scip --config-path c.json`,
  with `{"cargo": {"features": "all"}}` so that feature-gated code is
  analyzed too); `--scip ripgrep=x.scip`. The script decodes SCIP's
  protobuf itself: no package needed.

Where the tools disagree by convention rather than by error, the sites are
counted apart, named, with examples, and left out of both precision and
recall:

- `implementations` (Rust): speed lists the implementations of a changed
  trait item (form `impl`) and the calls that resolve to them; rust-analyzer
  lists references to the trait item itself only.
- `other definitions` (Python): jedi lists every definition of the name it
  reaches (the `@overload` siblings of a function, a redefinition) among its
  references; speed treats them as definitions.
- a class called (Python): speed counts `Flask(...)` as a call of
  `Flask.__init__`, jedi as a use of the class.
- a property's setter (Python): speed counts the uses of a property for its
  getter and its setter, jedi for the getter only.

A site speed lists that jedi's project-wide search missed but jedi's `goto`
at the site resolves to the definition counts as a reference (jedi's search
skips some files: `flask.Flask(...)` in flask's tests).

    python3 benches/impact_score.py flask requests mypy
    python3 benches/impact_score.py --scip ripgrep=/tmp/ripgrep.scip ripgrep

Options: --count N definitions per project (default 80), --corpus DIR
(Python projects; default ~/corpus/py), --bin PATH (a built impact_worst
bench binary), --sites FILE (speed's sites as printed, instead of running
the bench), --show (print each disagreement).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# --- speed ------------------------------------------------------------------


def speed_sites(project, count, corpus, binary, sites_file):
    """speed's sites for `count` sampled definitions of `project`."""
    if sites_file:
        lines = Path(sites_file).read_text().splitlines()
    else:
        env = dict(os.environ, IMPACT_SITES=project, IMPACT_SITES_COUNT=str(count))
        if corpus:
            env["IMPACT_WORST_DIR"] = os.pathsep.join(corpus)
        command = [binary] if binary else ["cargo", "bench", "--quiet", "--bench", "impact_worst"]
        lines = subprocess.run(
            command, env=env, check=True, capture_output=True, text=True
        ).stdout.splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def place(site):
    return (site["file"], site["line"], site["column"])


# --- SCIP (rust-analyzer) ---------------------------------------------------


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(buf):
    """(field number, value) of a protobuf message: ints for varints,
    bytes for length-delimited fields."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        wire = key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            value = buf[i : i + size]
            i += size
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wire} unsupported")
        yield key >> 3, value


def _packed(buf):
    out, i = [], 0
    while i < len(buf):
        v, i = _varint(buf, i)
        out.append(v)
    return out


DEFINITION = 1  # SCIP SymbolRole.Definition


class Scip:
    """The occurrences and relationships of a SCIP index, positions in
    characters (1-based line and column)."""

    name = "rust-analyzer"
    blind_label = "names rust-analyzer resolves to nothing (code its cfg leaves out, macros)"

    def __init__(self, path, root):
        self.root = Path(root)
        self.occurrences = collections.defaultdict(list)  # symbol -> [(file, line, col, roles)]
        self.at = {}  # (file, line, col) -> [(symbol, roles)]
        self.implements = collections.defaultdict(set)  # symbol -> symbols it implements
        self.resolved = set()  # (file, line, col) of every occurrence, locals too
        self.implementations = set()
        data = Path(path).read_bytes()
        for field, value in _fields(data):
            if field == 2:
                self._document(bytes(value))
        self._implements_by_name()

    def _implements_by_name(self):
        """rust-analyzer leaves out the `is_implementation` relationship of
        some impl items (hyper's crate-private `Http1Transaction`), but its
        symbol names say it: `…/impl#[Server][Http1Transaction]parse().`
        implements the item `parse` of a trait `Http1Transaction` of the
        same crate."""
        items = collections.defaultdict(list)  # (crate, trait, item) -> symbols
        for symbol in self.occurrences:
            m = re.match(r"(.* \S+ \S+ )(?:.*/)?([A-Za-z_]\w*)#([A-Za-z_]\w*)\(\)\.$", symbol)
            if m and "impl#" not in symbol:
                items[(m.group(1), m.group(2), m.group(3))].append(symbol)
        for symbol in self.occurrences:
            if self.implements.get(symbol):
                continue
            m = re.match(r"(.* \S+ \S+ ).*impl#\[[^\]]*\]\[(\w+)\](\w+)\(\)\.$", symbol)
            if m:
                for trait_item in items.get((m.group(1), m.group(2), m.group(3)), []):
                    self.implements[symbol].add(trait_item)

    def _document(self, buf):
        rel, occs, encoding = None, [], 0
        for field, value in _fields(buf):
            if field == 1:
                rel = bytes(value).decode()
            elif field == 2:
                occs.append(value)
            elif field == 3:
                self._symbol(bytes(value))
            elif field == 6:
                encoding = value
        lines = None
        for occ in occs:
            rng, symbol, roles = [], "", 0
            for field, value in _fields(occ):
                if field == 1:
                    rng = _packed(value) if isinstance(value, (bytes, bytearray, memoryview)) else [value]
                elif field == 2:
                    symbol = bytes(value).decode()
                elif field == 3:
                    roles = value
            if not symbol or len(rng) < 3:
                continue
            line, col = rng[0], rng[1]
            # UTF-8 (1) or UTF-16 (2) offsets become characters.
            if encoding in (0, 1, 2):
                if lines is None:
                    try:
                        lines = (self.root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
                    except OSError:
                        lines = []
                text = lines[line] if line < len(lines) else ""
                if not text.isascii():
                    if encoding == 2:
                        units = text.encode("utf-16-le")[: 2 * col]
                        col = len(units.decode("utf-16-le", errors="ignore"))
                    else:
                        col = len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))
            key = (rel, line + 1, col + 1)
            self.resolved.add(key)
            if symbol.startswith("local "):
                continue
            self.occurrences[symbol].append((rel, line + 1, col + 1, roles))
            self.at.setdefault(key, []).append((symbol, roles))

    def _symbol(self, buf):
        symbol, implemented = "", []
        for field, value in _fields(buf):
            if field == 1:
                symbol = bytes(value).decode()
            elif field == 4:
                other, is_impl = "", False
                for f2, v2 in _fields(value):
                    if f2 == 1:
                        other = bytes(v2).decode()
                    elif f2 == 3:
                        is_impl = bool(v2)
                if is_impl and other:
                    implemented.append(other)
        for other in implemented:
            self.implements[symbol].add(other)

    def references(self, record):
        """The references of the definition at the record's position (a
        set of places) and the places of its implementations (for a
        trait's item); None when rust-analyzer has no definition there."""
        key = place(record)
        symbols = [s for s, roles in self.at.get(key, []) if roles & DEFINITION]
        if not symbols:
            return None
        symbol = symbols[0]
        refs = {
            (f, l, c)
            for f, l, c, roles in self.occurrences[symbol]
            if not roles & DEFINITION and (f, l, c) != key
        }
        implementations = set()
        for other, targets in self.implements.items():
            if symbol in targets:
                implementations.update((f, l, c) for f, l, c, _ in self.occurrences[other])
        self.implementations = implementations - refs
        return refs

    def reference_only(self):
        """Places rust-analyzer lists by a convention speed does not
        follow: none."""
        return set()

    def confirms(self, record, site):
        """rust-analyzer's index lists every reference it resolved."""
        return False

    def convention(self, record, site):
        """The convention a site speed lists and rust-analyzer does not
        follows, if any."""
        if site["form"] == "impl" or place(site) in self.implementations:
            return "implementations of a trait item and the calls resolving to them"
        if _word_at(self.root, place(site)) == "Self":
            return "`Self` inside the type's own impl"
        return None

    def blind(self, site):
        """Whether rust-analyzer resolved no name at all at the site:
        code its configuration leaves out (`#[cfg(loom)]`,
        `cfg(tokio_unstable)`, another platform) or a macro it could not
        expand. Where it resolved the name to something else, the site is
        a disagreement like any other."""
        return place(site) not in self.resolved


# --- jedi ---------------------------------------------------------------------


class Jedi:
    """jedi over a Python project's folder."""

    name = "jedi"
    blind_label = "receivers jedi cannot type (pytest fixtures, proxies, untyped values)"

    def __init__(self, root):
        import jedi

        self.jedi = jedi
        self.root = root
        self.base = root.parent
        sys_path = [str(root / "src")] if (root / "src").is_dir() else [str(root)]
        # The project's source first: an installed copy of the same package
        # (flask, requests in site-packages) must not take its place.
        installed = jedi.get_default_environment().get_sys_path()
        self.project = jedi.Project(
            path=str(root),
            sys_path=sys_path + [p for p in installed if p not in sys_path],
            smart_sys_path=False,
        )
        self.scripts = {}
        self.siblings = set()

    def script(self, rel):
        if rel not in self.scripts:
            path = self.base / rel
            text = path.read_text(encoding="utf-8", errors="replace")
            self.scripts[rel] = self.jedi.Script(text, path=str(path), project=self.project)
        return self.scripts[rel]

    def references(self, record):
        """jedi's references to the definition, as places relative to the
        project's parent (as speed's paths are), the definition itself
        left out. The other `def` and `class` statements of the name it
        lists (`@overload` siblings) are kept apart as a convention."""
        line, column = record["line"], record["column"] - 1
        refs, self.siblings = set(), set()
        found = self.script(record["file"]).get_references(line, column, scope="project")
        for ref in found:
            if ref.module_path is None:
                continue
            try:
                rel = Path(ref.module_path).relative_to(self.base)
            except ValueError:
                continue
            at = (str(rel), ref.line, ref.column + 1)
            if at == place(record):
                continue
            if ref.is_definition() and _defines(self.base, at):
                self.siblings.add(at)
            else:
                refs.add(at)
        return refs

    def reference_only(self):
        return self.siblings

    def confirms(self, record, site):
        """Whether jedi, asked where the name at the site goes, lands on
        the definition: its project-wide reference search misses some
        (`flask.Flask(...)` in flask's tests), its goto does not."""
        f, line, col = place(site)
        try:
            found = self.script(f).goto(line, col - 1, follow_imports=True)
        except Exception:  # jedi fails on a few inputs: not confirmed
            return False
        want = (self.base / record["file"]).resolve()
        return any(
            d.module_path is not None
            and Path(d.module_path).resolve() == want
            and d.line == record["line"]
            for d in found
        )

    def convention(self, record, site):
        # speed takes a class called for a call of its `__init__`; jedi
        # lists such calls under the class.
        if record["name"] == "__init__" and _word_at(self.base, place(site)) != "__init__":
            return "a class called, counted as a call of its `__init__`"
        # A property's setter (`@debug.setter def debug`): speed counts
        # the uses of the property for each of its methods, jedi under
        # the getter only.
        above = _line(self.base / record["file"], record["line"] - 1).strip()
        if re.fullmatch(rf"@{re.escape(record['name'])}\.(setter|deleter)", above):
            return "a property's setter or deleter, whose uses jedi lists under the getter"
        return None

    def blind(self, site):
        """Whether jedi cannot type the receiver of an attribute or method
        call speed lists (`app.teardown_request` on a pytest fixture
        `app`): it cannot tell whether the site is a reference."""
        if site["form"] not in ("method_call", "attribute"):
            return False
        f, line, col = place(site)
        text = _line(self.base / f, line)
        dot = col - 2  # the `.` before the name, 0-based
        if dot < 1 or dot >= len(text) or text[dot] != ".":
            return False
        try:
            inferred = self.script(f).infer(line, dot)
        except Exception:  # jedi fails on a few inputs: it cannot tell
            return True
        return not inferred


def _defines(base, at):
    """Whether the name at `at` is a `def` or `class` statement's, not an
    assignment's or an import's."""
    line = _line(base / at[0], at[1])
    return re.match(r"\s*((async\s+)?def|class)\s+$", line[: at[2] - 1]) is not None


def _word_at(base, at):
    """The identifier starting at `at`."""
    m = re.match(r"\w+", _line(base / at[0], at[1])[at[2] - 1 :])
    return m.group(0) if m else ""


_lines = {}


def _line(path, n):
    """Line `n` (1-based) of a file, cached."""
    if path not in _lines:
        try:
            _lines[path] = path.read_text(encoding="utf-8", errors="replace").split("\n")
        except OSError:
            _lines[path] = []
    lines = _lines[path]
    return lines[n - 1] if 0 < n <= len(lines) else ""


# --- scoring ------------------------------------------------------------------


class Tally:
    def __init__(self):
        self.n = collections.Counter()
        self.examples = collections.defaultdict(list)

    def example(self, kind, text):
        if len(self.examples[kind]) < 4:
            self.examples[kind].append(text)


def score_record(record, tool, tally, show):
    """Score one definition's sites against the tool's references."""
    refs = tool.references(record)
    if refs is None:
        tally.n["unanswered"] += 1
        return
    name = f"{record['name']} ({record['file']}:{record['line']})"
    sure, every = set(), set()
    for confident, sites in ((True, record["sites"]), (False, record["ambiguous"])):
        for site in sites:
            at = place(site)
            if at not in refs and tool.confirms(record, site):
                # A reference the tool's search missed but its resolution
                # of the name at the site confirms.
                refs = refs | {at}
                tally.n["confirmed"] += 1
            if at not in refs:
                # Not a reference to the tool: a convention it does not
                # follow, a name it cannot resolve, or a false site.
                kind = tool.convention(record, site)
                if kind is None and tool.blind(site):
                    kind = tool.blind_label
                if kind is not None:
                    tally.n[("apart", kind)] += 1
                    tally.example(kind, f"{name}: {at[0]}:{at[1]}:{at[2]}")
                    continue
            every.add(at)
            if confident:
                sure.add(at)
    for at in sorted(tool.reference_only() - every):
        kind = f"{tool.name} only, by its convention"
        tally.n[("apart", kind)] += 1
        tally.example(kind, f"{name}: {at[0]}:{at[1]}:{at[2]}")
    refs = refs - tool.reference_only()
    tally.n["definitions"] += 1
    tally.n["reference"] += len(refs)
    tally.n["confident"] += len(sure)
    tally.n["all"] += len(every)
    tally.n["confident_tp"] += len(sure & refs)
    tally.n["all_tp"] += len(every & refs)
    if show:
        for kind, extra in (
            ("speed only", sure - refs),
            ("ambiguous only", (every - sure) - refs),
            ("missed", refs - every),
            ("only ambiguous", (every - sure) & refs),
        ):
            for f, l, c in sorted(extra):
                print(f"  {name}: {kind}: {f}:{l}:{c}")


def ratio(a, b):
    return a / b if b else 1.0


def report(project, tool, tally):
    n = tally.n
    p, r = ratio(n["confident_tp"], n["confident"]), ratio(n["confident_tp"], n["reference"])
    ap, ar = ratio(n["all_tp"], n["all"]), ratio(n["all_tp"], n["reference"])
    print(
        f"{project} ({tool.name}): {n['definitions']} definitions ({n['unanswered']} more "
        f"{tool.name} has no definition for), {n['reference']} reference sites; "
        f"confident {n['confident']} sites: precision {p:.3f}, recall {r:.3f}; "
        f"all {n['all']} sites: precision {ap:.3f}, recall {ar:.3f}"
        + (f" ({n['confirmed']} sites its search missed, confirmed by its goto)" if n["confirmed"] else "")
    )
    for key, count in sorted(n.items(), key=lambda kv: str(kv[0])):
        if isinstance(key, tuple):
            kind = key[1]
            print(f"  apart, {kind}: {count} sites, e.g. " + "; ".join(tally.examples[kind]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("projects", nargs="+")
    parser.add_argument("--count", type=int, default=80)
    parser.add_argument("--corpus", default=str(Path.home() / "corpus/py"))
    parser.add_argument("--bin", help="a built impact_worst bench binary, instead of cargo bench")
    parser.add_argument("--sites", help="speed's sites, as IMPACT_SITES printed them")
    parser.add_argument(
        "--scip",
        action="append",
        default=[],
        help="<project>=<index.scip>: rust-analyzer's index of the project's workspace",
    )
    parser.add_argument("--show", action="store_true", help="print each disagreement")
    args = parser.parse_args()
    scips = dict(s.split("=", 1) for s in args.scip)
    for project in args.projects:
        if project in scips:
            records = speed_sites(project, args.count, None, args.bin, args.sites)
            if not records:
                print(f"{project}: no definitions")
                continue
            tool = Scip(scips[project], _workspace_of(scips[project]))
        else:
            records = speed_sites(project, args.count, [args.corpus], args.bin, args.sites)
            if not records:
                print(f"{project}: no definitions (is it under {args.corpus}?)")
                continue
            tool = Jedi(Path(args.corpus) / Path(records[0]["file"]).parts[0])
        tally = Tally()
        for record in records:
            try:
                score_record(record, tool, tally, args.show)
            except Exception as e:  # a reference tool failing on an input: not scored
                print(f"  {record['file']}:{record['line']}: failed: {e!r}", file=sys.stderr)
                tally.n["unanswered"] += 1
        report(project, tool, tally)


def _workspace_of(scip_path):
    """The workspace the SCIP index was made of: its metadata's project
    root (a file:// URL)."""
    data = Path(scip_path).read_bytes()
    for field, value in _fields(data):
        if field == 1:
            for f2, v2 in _fields(value):
                if f2 == 3:
                    root = bytes(v2).decode()
                    return root[len("file://") :] if root.startswith("file://") else root
    return str(Path(scip_path).parent)


if __name__ == "__main__":
    sys.exit(main())
