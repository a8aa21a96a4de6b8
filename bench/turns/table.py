"""The table of bench/turns/run.sh: rimeflake's rows at a past commit (before) and at the working
tree (after), from one JSON file per turn (<turn>-<before|after>.json: row -> median wall and
CPU ns per ID of that process); with --write, put into bench/RESULTS.md under the language's
section (between <!-- <lang>-turns:begin --> and <!-- <lang>-turns:end -->).

    python3 bench/turns/table.py <lang> <runs dir> <before> <after> <turns> <load at start> <RESULTS.md> [--write]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

LIMIT = 1.05  # a binding's hot path is to stay within 5% of before

WHAT = {
    "node": (
        "Node",
        "bench/node/bench.js",
        "the process's CPU time (process.cpuUsage(): every thread's, V8's own included)",
        "the two Generator.shared rows are timed by the wall clock only (worker threads)",
    ),
    "python": (
        "Python",
        "bench/python/bench.py",
        "the thread's CPU time (time.thread_time_ns())",
        "",
    ),
}


def main() -> None:
    lang, runs, rev, here, turns, load0, results, *flags = sys.argv[1:]
    title, script, cpu_what, extra = WHAT[lang]
    # by[row][label][turn] = {"wall": ns, "cpu": ns or None}
    by: dict[str, dict[str, dict[int, dict[str, float | None]]]] = {}
    order: list[str] = []
    for f in sorted(Path(runs).glob("*.json"), key=lambda p: (int(p.stem.split("-")[0]), p.stem)):
        turn, label = f.stem.split("-")
        for row, v in json.loads(f.read_text()).items():
            if row not in by:
                by[row] = {}
                order.append(row)
            by[row].setdefault(label, {})[int(turn)] = v
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    load1 = " ".join(open("/proc/loadavg").read().split()[:3])
    lines = [
        f"{title}: rimeflake's rows of {script} (and the floors, as controls), the binding at {rev} "
        f"(before) and at {here} (after), built alike (release) and run in turns, one process "
        f"per turn, {turns} turns each ({model}, {os.cpu_count()} CPUs, load {load0} at the start, "
        f"{load1} at the end). Each figure is the median over the turns of one process's median "
        f"of its loops, per ID, timed by the wall clock and by {cpu_what}; ratios are after / "
        "before: of the medians over the turns, and the median of the per-turn ratios. The "
        f"verdict reads the CPU-time ratios (within {LIMIT:.2f}x: either one at most {LIMIT:.2f})"
        + (f"; {extra}." if extra else "."),
        "",
        f"| row | before ns/ID (wall, CPU) | after ns/ID (wall, CPU) | wall ratio of medians | CPU ratio of medians | CPU median per-turn ratio | within {LIMIT:.2f}x |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    missing = []
    for row in order:
        b, a = by[row].get("before", {}), by[row].get("after", {})
        if not b or not a:
            missing.append((row, "before" if not b else "after"))
            continue

        def med(d: dict[int, dict[str, float | None]], k: str) -> float | None:
            xs = [v[k] for v in d.values()]
            return None if None in xs else statistics.median(xs)  # type: ignore[type-var]

        wb, wa, cb, ca = med(b, "wall"), med(a, "wall"), med(b, "cpu"), med(a, "cpu")
        assert wb and wa
        if cb is None or ca is None:
            per = statistics.median(a[t]["wall"] / b[t]["wall"] for t in a if t in b)  # type: ignore[operator]
            ok = "yes (wall)" if min(wa / wb, per) <= LIMIT else "**no** (wall)"
            lines.append(f"| {row} | {wb:.2f}, - | {wa:.2f}, - | {wa / wb:.3f} | - | - (wall {per:.3f}) | {ok} |")
            continue
        per = statistics.median(a[t]["cpu"] / b[t]["cpu"] for t in a if t in b)  # type: ignore[operator]
        ok = "yes" if min(ca / cb, per) <= LIMIT else "**no**"
        lines.append(
            f"| {row} | {wb:.2f}, {cb:.2f} | {wa:.2f}, {ca:.2f} | {wa / wb:.3f} | {ca / cb:.3f} | {per:.3f} | {ok} |"
        )
    for row, build in missing:
        lines.append(f"| {row} | not in the {build} build's runs (it lacks what the row calls) | | | | | - |")
    lines += ["", f"Command: `make bench-{lang} BEFORE={rev}`."]
    text = "\n".join(lines)
    print(text)
    if "--write" in flags:
        path = Path(results)
        begin, end = f"<!-- {lang}-turns:begin -->", f"<!-- {lang}-turns:end -->"
        doc = path.read_text()
        block = f"{begin}\n{text}\n{end}"
        if begin in doc:
            doc = doc[: doc.index(begin)] + block + doc[doc.index(end) + len(end) :]
        else:  # after the language's own section, which its bench script rewrites
            section_end = f"<!-- {lang}:end -->"
            at = doc.index(section_end) + len(section_end)
            heading = f"### {title}: rimeflake's rows before and after a change"
            doc = doc[:at] + f"\n\n{heading}\n\n{block}\n\n" + doc[at:].lstrip("\n")
        path.write_text(doc)
        print(f"updated {path}")


if __name__ == "__main__":
    main()
