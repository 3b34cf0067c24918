#!/usr/bin/env bash
# jobs/study.py end to end on the host: the CI-sized weak and strong studies
# (1, 2, 4 ranks, 2 repeats) run with mpirun; the CSV has one row per run
# with the right grids, the summary's efficiencies are recomputed from the
# rows, the plots are PNGs, the Markdown has the table; a bad study is refused.
# Then the ping-pong measures this machine and jobs/model.py compares against
# the weak study and projects the GPU cases.
#   study_test.sh HEATWAVE SOURCE_DIR HEATWAVE_PINGPONG
set -eu
heatwave=$(realpath "$1")
src=$(realpath "$2")
pingpong=$(realpath "$3")
work=$(mktemp -d /tmp/heatwave-study.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for kind in weak strong; do
  timeout 300 /usr/bin/python3 "$src/jobs/study.py" run "$src/configs/studies/host-$kind.yaml" --heatwave "$heatwave" \
    --output "$work/$kind" >"$work/$kind.log" 2>&1 || { cat "$work/$kind.log"; echo "FAIL: the $kind study failed"; exit 1; }
  grep -E "^\| [0-9]" "$work/$kind.log"
done

/usr/bin/python3 - "$work" <<'PY'
import csv, sys
from pathlib import Path
work = Path(sys.argv[1])
for kind, per_rank_grid, global_grid in (("weak", (192, 192), None), ("strong", None, (384, 384))):
    out = work / kind
    rows = list(csv.DictReader(open(out / "runs.csv")))
    assert len(rows) == 6, f"{kind}: {len(rows)} rows, expected 3 rank counts x 2 repeats"
    assert sorted((int(r["ranks"]), int(r["repeat"])) for r in rows) == [(p, k) for p in (1, 2, 4) for k in (0, 1)]
    expected_dims = {1: (1, 1), 2: (2, 1), 4: (2, 2)}
    for r in rows:
        p = int(r["ranks"])
        grid = tuple(int(n) for n in r["grid"].split("x"))
        dims = tuple(int(n) for n in r["decomposition"].split("x"))
        assert dims == expected_dims[p], (kind, p, dims)
        want = tuple(n * d for n, d in zip(per_rank_grid, dims)) if kind == "weak" else global_grid
        assert grid == want, f"{kind}: {p} ranks ran {grid}, expected {want}"
        assert int(r["steps"]) == 200 and r["backend"] == "host" and r["kind"] == kind
        rate = float(r["gcells_per_second"])
        cells = grid[0] * grid[1]
        assert rate > 0 and abs(float(r["cells"]) - cells) < 0.5
        # The rate is the cell updates over the run's wall time.
        assert abs(rate * 1e9 * float(r["wall_seconds"]) - cells * 200) <= 1e-6 * cells * 200, (rate, r["wall_seconds"])
        for phase in ("compute", "pack", "communicate", "unpack", "diagnostics", "io"):
            assert float(r[f"{phase}_seconds"]) >= 0
    summary = list(csv.DictReader(open(out / "summary.csv")))
    assert [int(s["ranks"]) for s in summary] == [1, 2, 4]
    median = {p: sorted(float(r["gcells_per_second"]) for r in rows if int(r["ranks"]) == p) for p in (1, 2, 4)}
    median = {p: (v[0] + v[1]) / 2 for p, v in median.items()}
    for s in summary:
        p = int(s["ranks"])
        assert abs(float(s["gcells_per_second"]) - median[p]) <= 1e-12 * median[p]
        efficiency = (median[p] / p) / median[1]
        assert abs(float(s["efficiency"]) - efficiency) <= 1e-12, (kind, p, s["efficiency"], efficiency)
    assert float(summary[0]["efficiency"]) == 1.0
    for png in ("gcells.png", "efficiency.png", "phases.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, f"{kind}: {png} is not a plot"
    md = (out / "summary.md").read_text()
    rows_md = [l for l in md.splitlines() if l[:3] in ("| 1", "| 2", "| 4")]
    assert f"# host-{kind}: {kind} scaling" in md and len(rows_md) == 3, md
    print(f"{kind}: 6 rows, grids and ranks per axis right, median rates and efficiencies recomputed, 3 PNGs, summary.md")
PY

# A study with a wrong kind is refused with the key named.
sed 's/^kind: weak/kind: sideways/' "$src/configs/studies/host-weak.yaml" >"$work/bad.yaml"
sed -i "s|^case: |case: $src/configs/studies/|" "$work/bad.yaml"
code=0
/usr/bin/python3 "$src/jobs/study.py" run "$work/bad.yaml" --heatwave "$heatwave" >"$work/bad.log" 2>&1 || code=$?
[[ $code -eq 1 ]] && grep -q "'kind' is 'sideways', expected one of ('weak', 'strong')" "$work/bad.log" ||
  { cat "$work/bad.log"; echo "FAIL: a bad study gave exit $code"; exit 1; }
timeout 60 mpirun --allow-run-as-root --oversubscribe -n 2 "$pingpong" "$work/pp.json" || { echo "FAIL: heatwave_pingpong"; exit 1; }
/usr/bin/python3 "$src/jobs/model.py" compare "$work/weak" --pingpong "$work/pp.json" --cores 2 | tee "$work/model.txt"
/usr/bin/python3 "$src/jobs/model.py" project --rate-2d 4e11 --rate-3d 3.5e11 --cluster-rate-2d 9.9e11 \
  --cluster-rate-3d 3.3e11 --intra 3e-6,1.5e11 --inter "$work/pp.json" --out "$work/projection" >/dev/null
/usr/bin/python3 - "$work" "$src/jobs" <<'PY'
import json, math, sys
from pathlib import Path
work = Path(sys.argv[1])
sys.path.insert(0, sys.argv[2])
import model
# A chunk by hand: 1000^2 on 2 ranks (500 x 1000 each, x split), 1e9 cells/s, radius 1, 4 B, 10 us + 1 GB/s.
# k 4: a 16000 B message each way, 26 us, 2 per chunk; no overlap: 5e-4 s compute and 13 us exchange a step.
link = model.Link.from_text("1e-5,1e9")
c, e = model.step_time([1000, 1000], 2, 1e9, 1, 4, link, model.Plan("", 4, False))
assert math.isclose(c, 5e-4) and math.isclose(e, 1.3e-5), (c, e)
# Overlapped, rims 10 deep: inner (5e5 - 2e4 cells) x 4 / 1e9 = 1.92 ms hides the 52 us exchange; rims 80 us.
c, e = model.step_time([1000, 1000], 2, 1e9, 1, 4, link, model.Plan("", 4, True, 10))
assert math.isclose(c, 5e-4) and e == 0, (c, e)
# An exchange longer than the inner part shows by the difference: 100 us + 16 us, twice, against 1.92 ms less.
c, e = model.step_time([1000, 1000], 2, 1e9, 1, 4, model.Link.from_text("1.1e-3,1e9"), model.Plan("", 4, True, 10))
assert math.isclose(e, (2 * (1.1e-3 + 1.6e-5) - 1.92e-3) / 4), e
pp = json.loads((work / "pp.json").read_text())
sizes = [m["bytes"] for m in pp["messages"]]
assert sizes[0] == 8 and sizes[-1] == 8 << 20 and all(m["one_way_seconds"] > 0 for m in pp["messages"])
assert pp["latency_seconds"] > 0 and pp["bandwidth_bytes_per_second"] > 1e6, pp
rows = [l.split("|")[1:-1] for l in (work / "model.txt").read_text().splitlines()[2:]]
assert [int(r[0]) for r in rows] == [1, 2, 4] and rows[0][5].strip() == "100%", rows
proj = (work / "projection" / "projection.md").read_text().splitlines()
assert sum(l.startswith("| 1024 |") for l in proj) == 2 and (work / "projection" / "projection.png").stat().st_size > 5000
assert any(l.startswith("cuda-cluster (rates per GPU: 2D 9.9e+11") for l in proj), proj
print("ping-pong", len(sizes), "sizes; model: step times by hand, compare 3 rows, projection to 1024 ranks (cuda, cuda-cluster)")
PY
echo "PASS"
