#!/usr/bin/env python3
"""Test of report.py, the GPU check's table (run by packaging/gpu-check.sh, dry run too):
sample stage results -> table -> rows parsed back, equal cell by cell; a stage stopped at its
limit and a skipped stage get their own rows; '|' in a cell cannot break the columns; the JSON
holds the same rows. Ends with the plain 'N passed, N failed' line."""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

passed = failed = 0


def expect(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}")


def stage(letter, name, rows, ran=(), skipped=(), notes=()):
    return {"stage": letter, "name": name, "title": report.TITLES[name], "mode": "gpu", "ran": list(ran),
            "skipped": list(skipped), "notes": list(notes), "rows": rows}


def row(letter, item, **kw):
    r = {"stage": letter, "item": item, "setting": "", "measured": "", "reference": "", "predicted": "",
         "error": "", "status": "ok"}
    r.update(kw)
    return r


with tempfile.TemporaryDirectory() as d:
    work = Path(d)
    (work / "results").mkdir()
    meta = {"mode": "gpu", "host": "h200", "device": "NVIDIA H200, 143771 MiB", "torch": "2.11.0+cu130",
            "commit": "abc1234", "budget_s": 560, "seconds": 512.3,
            "stages": {"build": {"rc": 0, "seconds": 201, "limit_s": 300},
                       "tests": {"rc": 0, "seconds": 30, "limit_s": 45},
                       "correctness": {"rc": 0, "seconds": 41, "limit_s": 60},
                       "memory": {"rc": 124, "seconds": 150, "limit_s": 150},
                       "speed": {"skipped": "no time left"}}}
    (work / "results" / "meta.json").write_text(json.dumps(meta))
    results = {
        "build": stage("a", "build", [row("a", "build", setting="headless + CUDA, -j16", measured="built halo",
                                          reference="201 s", status="pass")], ran=["build"]),
        "tests": stage("b", "tests", [row("b", "nccl.allreduce", setting="halo_gpu_probe",
                                          measured="world size 1, CUDA tensors", status="pass")]),
        "correctness": stage("c", "correctness", [
            row("c", "launch sp2", setting="cuda: sp2 (Gloo) vs sp1", measured="max rel loss diff 3.1e-07",
                reference="<= 1e-04", status="pass"),
            row("c", "forced overflow", measured="skipped | per step [[False, False], [True, True]]",
                status="fail")], skipped=["fp16: needs CUDA"]),
        "memory": stage("d", "memory", [
            row("d", "memory none", setting="fp32, 7x(3,512,2048), AdamW, 1 rank(s) on 1 GPU",
                measured="44.10 / 46.02", reference="43.28", predicted="43.90 / 45.80", error="-0.5% / -0.5%",
                values={"peak": 47351111111})], notes=["measured = max_memory_allocated / reserved"]),
    }
    for name, data in results.items():
        (work / "results" / f"{name}.json").write_text(json.dumps(data))

    m, stages = report.load(work)
    text, rows = report.render(m, stages)
    parsed = report.parse(text)
    expect(len(parsed) == len(rows) == 7, f"7 rows (5 results, a stopped stage, a skipped one): {len(parsed)}")
    for want, got in zip(rows, parsed):
        for c in report.COLUMNS:
            expect(report.cell(want[c]) == got[c], f"cell {c}: {want[c]!r} -> {got[c]!r}")
    expect(parsed[4]["err"] == "-0.5% / -0.5%" and parsed[4]["predicted"] == "43.90 / 45.80", "memory row")
    expect("|" not in parsed[2 + 1]["measured"].replace("/", ""), "a '|' in a cell is escaped")
    expect(any(r["item"] == "stage d memory" and "stopped at its limit (150 s)" in r["measured"]
               and r["status"] == "fail" for r in parsed), "a stage stopped at its limit is a failed row")
    expect(any(r["item"] == "stage e speed" and r["status"] == "skip" for r in parsed), "a skipped stage row")
    expect("d memory: 150 s of 150 s (exit 124, stopped at the limit)" in text, "stage summary line")
    expect("    skipped fp16: needs CUDA" in text, "skipped lines under the table")
    expect("e speed: skipped (no time left)" in text, "a skipped stage's summary line")
    expect(text.splitlines()[0].startswith("Halo GPU check (gpu run) on h200: NVIDIA H200"), "title line")
    widths = {len(l) for l in text.splitlines() if l.startswith("|")}
    expect(len(widths) == 1, f"every table line has the same width: {widths}")
    expect(report.cell("x" * 500) == "x" * (report.WIDEST - 3) + "..." and max(widths) < 8 * report.WIDEST,
           "long cells are cut in the text (the JSON keeps them)")
    # main(): writes text and JSON, exit 1 because a row failed.
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        rc = report.main(["report.py", str(work), "--text", str(work / "t.txt"), "--json", str(work / "t.json")])
    expect(printed.getvalue() == text, "main() prints the table")
    expect(rc == 1, "exit 1 when a row failed")
    j = json.loads((work / "t.json").read_text())
    expect(j["rows"] == rows and j["meta"]["mode"] == "gpu", "JSON holds the same rows")
    expect(report.parse((work / "t.txt").read_text()) == parsed, "the text file parses to the same rows")
    # --fail-on a,b: a failed row of stage c alone does not fail; a stopped stage does.
    with contextlib.redirect_stdout(io.StringIO()):
        rc_ab = report.main(["report.py", str(work), "--fail-on", "a,b"])
    expect(rc_ab == 1, "a stage stopped at its limit fails under --fail-on a,b")
    fr = [r for r in rows if r["status"] == "fail"]
    expect([r["item"] for r in report.failing(rows, "a,b")] == ["stage d memory"] and len(fr) == 2,
           "--fail-on a,b keeps only the stopped stage")
    text_ab, _ = report.render(m, stages, "a,b")
    expect("1 not failing this run, engine findings: c forced overflow" in text_ab, "engine findings listed")
    try:
        report.parse("| a | b |\n|---|---|\n| 1 | 2 |\n")
        expect(False, "a table with other columns is refused")
    except ValueError:
        expect(True, "")

print(f"report: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
