#!/usr/bin/env python3
"""The one table of packaging/gpu-check.sh: reads WORK/results/{meta,build,tests,correctness,
memory,speed}.json and prints a Markdown table (one row per check or measurement) with each
stage's summary under it; writes the same as JSON.

  report.py WORK [--json FILE] [--text FILE] [--fail-on all|STAGES]
  report.py --parse FILE.txt          print the rows parsed back from a printed table (JSON)

Columns: stage | item | setting | measured | reference | predicted | err | status
status: pass/fail (a check), ok (a measurement), dry (measured on the CPU with tiny shapes),
plan (the planner's prediction only), skip, fail.
Exit code 1 when a row failed; with --fail-on a,b only when a row of those stages failed or a
stage itself broke or ran out of time (the dry run in CI: the other stages' failures are engine
findings on tiny CPU shapes, listed under the table, which `make test` is there to guard).
"""
import json
import sys
from pathlib import Path

COLUMNS = ["stage", "item", "setting", "measured", "reference", "predicted", "err", "status"]
STAGES = ["build", "tests", "correctness", "memory", "speed"]
TITLES = {"build": "a build", "tests": "b CUDA tests", "correctness": "c correctness", "memory": "d memory",
          "speed": "e speed"}


WIDEST = 110  # characters of a cell in the printed table (the JSON keeps every word)


def cell(v):
    text = str(v if v is not None else "").replace("|", "/").replace("\n", " ").strip()
    return text if len(text) <= WIDEST else text[:WIDEST - 3] + "..."


def load(work):
    work = Path(work)
    meta = {}
    if (work / "results" / "meta.json").exists():
        meta = json.loads((work / "results" / "meta.json").read_text())
    stages = {}
    for s in STAGES:
        p = work / "results" / f"{s}.json"
        if p.exists():
            try:
                stages[s] = json.loads(p.read_text())
            except ValueError:
                stages[s] = {"rows": [], "ran": [], "skipped": [], "notes": ["results file unreadable"]}
        runs = meta.get("stages", {}).get(s)
        if runs:
            stages.setdefault(s, {"rows": [], "ran": [], "skipped": [], "notes": []})
            stages[s]["run"] = runs
    return meta, stages


def rows_of(stages):
    rows = []
    for s in STAGES:
        st = stages.get(s)
        if not st:
            continue
        for r in st.get("rows", []):
            rows.append({"stage": r.get("stage", s[0]), "item": r.get("item"), "setting": r.get("setting"),
                         "measured": r.get("measured"), "reference": r.get("reference"),
                         "predicted": r.get("predicted"), "err": r.get("error"), "status": r.get("status")})
        run = st.get("run", {})
        if run.get("rc") == 124:
            rows.append({"stage": TITLES[s][0], "item": f"stage {TITLES[s]}", "setting": "",
                         "measured": f"stopped at its limit ({run.get('limit_s')} s)", "reference": "",
                         "predicted": "", "err": "", "status": "fail"})
        elif run.get("skipped"):
            rows.append({"stage": TITLES[s][0], "item": f"stage {TITLES[s]}", "setting": "",
                         "measured": run["skipped"], "reference": "", "predicted": "", "err": "", "status": "skip"})
    return rows


def failing(rows, fail_on):
    """The failed rows that decide the exit code."""
    bad = [r for r in rows if r["status"] == "fail"]
    if fail_on == "all":
        return bad
    letters = set(fail_on.split(","))
    return [r for r in bad if r["stage"] in letters or str(r["item"]).startswith("stage ")]


def render(meta, stages, fail_on="all"):
    rows = rows_of(stages)
    table = [[cell(r[c]) for c in COLUMNS] for r in rows]
    widths = [max([len(c)] + [len(t[i]) for t in table]) for i, c in enumerate(COLUMNS)]
    line = lambda cells: "| " + " | ".join(v.ljust(widths[i]) for i, v in enumerate(cells)) + " |"  # noqa: E731
    out = []
    m = meta
    out.append(f"Halo GPU check ({m.get('mode', '?')} run) on {m.get('host', '?')}: {m.get('device', '?')}; "
               f"torch {m.get('torch', '?')}; {m.get('commit', '?')}; {m.get('seconds', 0):.0f} s of "
               f"{m.get('budget_s', '?')} s")
    out.append("")
    out.append(line(COLUMNS))
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out += [line(t) for t in table]
    out.append("")
    for s in STAGES:
        st = stages.get(s)
        if not st:
            out.append(f"{TITLES[s]}: not run")
            continue
        run = st.get("run", {})
        if run.get("skipped"):
            out.append(f"{TITLES[s]}: skipped ({run['skipped']})")
            continue
        head = f"{TITLES[s]}: {run.get('seconds', 0):.0f} s of {run.get('limit_s', '?')} s"
        if run.get("rc") not in (None, 0):
            head += f" (exit {run['rc']}{', stopped at the limit' if run['rc'] == 124 else ''})"
        out.append(head + (f"; ran: {'; '.join(st.get('ran', []))}" if st.get("ran") else ""))
        for sk in st.get("skipped", []):
            out.append(f"    skipped {sk}")
        for n in st.get("notes", []):
            out.append(f"    note: {n}")
    fails = [r for r in rows if r["status"] == "fail"]
    decisive = failing(rows, fail_on)
    out.append("")
    line = f"{len(rows)} rows, {len(fails)} failed"
    if len(decisive) < len(fails):
        others = [f"{r['stage']} {r['item']}" for r in fails if r not in decisive]
        line += f" ({len(others)} not failing this run, engine findings: {', '.join(others)})"
    out.append(line + (": see the rows marked fail" if decisive else ""))
    return "\n".join(out) + "\n", rows


def parse(text):
    """Rows of a table printed by render()."""
    lines = [l for l in text.splitlines() if l.startswith("| ")]
    if not lines:
        return []
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    if header != COLUMNS:
        raise ValueError(f"unexpected columns {header}")
    rows = []
    for l in lines[1:]:
        cells = [c.strip() for c in l.strip()[1:-1].split("|")]
        if len(cells) != len(COLUMNS):
            raise ValueError(f"row with {len(cells)} cells: {l}")
        rows.append(dict(zip(COLUMNS, cells)))
    return rows


def main(argv):
    if len(argv) == 3 and argv[1] == "--parse":
        print(json.dumps(parse(Path(argv[2]).read_text()), indent=1))
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    work = argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    meta, stages = load(work)
    fail_on = opts.get("--fail-on", "all")
    text, rows = render(meta, stages, fail_on)
    sys.stdout.write(text)
    if "--text" in opts:
        Path(opts["--text"]).write_text(text)
    if "--json" in opts:
        Path(opts["--json"]).write_text(json.dumps({"meta": meta, "rows": rows, "stages": stages}, indent=1,
                                                   default=str))
    return 1 if failing(rows, fail_on) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
