"""scripts/bench_report.py renders what was measured, and says which build it measured.

BENCHMARKS.md's generated block is the reference table; a block that does not name its commit
cannot be told apart from a stale one, and a memory bound needs the peak of every repeat, not the
median run's. Rendered here from a small results directory written by hand, so no build or
benchmark runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def analyzer_run(spans: int, rss: list[float]) -> dict:
    check = {"wall_secs": 10.0, "ok": True, "peak_rss_mib": rss[0], "peak_rss_mib_all": rss,
             "wall_secs_all": [10.0] * len(rss), "findings_by_rule": {"TL004": 7}}
    return {
        "spans": spans,
        "store": {"bytes_per_span": 60.0},
        "build": {"ingest_spans_per_sec": 50000.0, "generator": "test"},
        "tripline_check": check,
        "tripline_report_tools": {"wall_secs": 5.0, "ok": True},
        "duckdb_tl002": {"wall_secs": 1.0, "rows": 0},
        "duckdb_tl004": {"wall_secs": 4.0, "rows": 7},
        "ratio_check_over_duckdb_tl002_tl004": 2.0,
    }


def test_block_names_the_build_and_the_peak_rss(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "build.json").write_text(json.dumps(
        {"commit": "0123456789ab", "profile": "release", "built_at": "2026-12-05 02:00 UTC",
         "tripline_bytes": 78_969_424}))
    (results / "analyzer.json").write_text(json.dumps(
        {"duckdb_version": "2.0.1", "runs": [analyzer_run(1_000_000, [700.0, 812.4, 790.0])]}))
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# Benchmarks\n\nprose\n\n<!-- bench:generated:begin -->\nold\n"
                   "<!-- bench:generated:end -->\n\nafter\n")
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "bench_report.py"),
                    "--results", str(results), "--benchmarks", str(doc)],
                   check=True, capture_output=True)
    text = doc.read_text()
    assert "old" not in text and text.startswith("# Benchmarks\n\nprose") and "after" in text
    assert "commit `0123456789ab`, cargo profile `release`" in text
    assert ("The `tripline` binary: 78,969,424 bytes (75.3 MiB); goal under 60,000,000 bytes: "
            "**not met** (18,969,424 bytes over).") in text
    row = next(line for line in text.splitlines() if line.startswith("| 1,000,000 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # spans, bytes/span, ingest, check s, check peak RSS: the largest repeat, not the median's
    assert cells[3] == "10.0" and cells[4] == "812", cells
    assert cells[-1] == "7 / 7", cells
    # sections whose results are missing say so instead of rendering empty tables
    assert "collector results missing" in text


def test_a_table_measured_alone_names_its_own_build(tmp_path: Path) -> None:
    """`scripts/bench analyzer` after a whole run: the block keeps the whole run's build for the
    other tables and names the analyzer table's own build above it."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "build.json").write_text(json.dumps(
        {"commit": "0123456789ab", "profile": "release", "built_at": "2026-12-05 02:00 UTC"}))
    (results / "build-analyzer.json").write_text(json.dumps(
        {"commit": "ba9876543210", "profile": "release", "built_at": "2026-12-07 13:00 UTC",
         "tripline_bytes": 59_000_000}))
    (results / "analyzer.json").write_text(json.dumps(
        {"duckdb_version": "2.0.1", "runs": [analyzer_run(1_000_000, [700.0])]}))
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# B\n\n<!-- bench:generated:begin -->\n<!-- bench:generated:end -->\n")
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "bench_report.py"),
                    "--results", str(results), "--benchmarks", str(doc)],
                   check=True, capture_output=True)
    text = doc.read_text()
    assert "Measured build: commit `0123456789ab`" in text
    analyzer = text[text.index("### Analyzer"):]
    collector = text[text.index("### Collector"):text.index("### Analyzer")]
    assert "This table alone was measured later, with commit `ba9876543210`" in analyzer
    assert "ba9876543210" not in collector
    assert analyzer.index("ba9876543210") < analyzer.index("| 1,000,000 |")


def peak_run(receiver: str, per_cpu_sec: float, every: list[float], readable: bool) -> dict:
    return {
        "receiver": receiver, "protocol": "http",
        "load": {"latency": {"p50_ms": 10.0, "p99_ms": 40.0}, "spans_acked": 1000},
        "acked_spans_per_sec": 50_000.0, "spans_per_cpu_sec": per_cpu_sec,
        "spans_per_cpu_sec_all": every, "all_runs_acked_readable": readable,
        "peak_rss_mib": 300.0, "bytes_per_span": 40.0, "parquet_files": 1,
        "all_acked_readable": True, "duckdb": {"rows": 1000},
    }


def render_collector(tmp_path: Path, collector: dict) -> str:
    """The generated block rendered from `collector` as the only results file."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "collector.json").write_text(json.dumps(collector))
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# B\n\n<!-- bench:generated:begin -->\n<!-- bench:generated:end -->\n")
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "bench_report.py"),
                    "--results", str(results), "--benchmarks", str(doc)],
                   check=True, capture_output=True)
    return doc.read_text()


def test_alternated_pairs_give_the_median_of_the_pair_ratios(tmp_path: Path) -> None:
    """With `--pairs`, the ratio is the median of the per-pair ratios (not the ratio of the two
    medians), every run's figure is shown, and one unreadable run marks the row NO."""
    text = render_collector(tmp_path, {
        "secs": 20, "batch": 512, "concurrency": 8,
        "tripline_http": peak_run("tripline", 100_000.0, [90_000.0, 100_000.0, 120_000.0],
                                  readable=False),
        "otlp2parquet_http": peak_run("otlp2parquet", 50_000.0, [60_000.0, 50_000.0, 40_000.0],
                                      readable=True),
        # the ratio of the two medians would be 2.00: the pairs' median, 1.80, is the figure
        "pairs": {"count": 3, "ratios": [1.5, 1.8, 3.0], "median_ratio": 1.8},
    })
    assert "ratio per pair 1.50×, 1.80×, 3.00×" in text, text
    assert "90,000, 100,000, 120,000 (tripline)" in text, text
    row = next(line for line in text.splitlines() if line.startswith("| spans per CPU-second"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "1.80×" and cells[5] == "**not met**", cells
    tripline_row = next(line for line in text.splitlines()
                        if line.startswith("| tripline collect (HTTP)"))
    assert "| NO (" in tripline_row, tripline_row


def test_latency_row_says_how_the_load_was_made(tmp_path: Path) -> None:
    """The p99 row is only comparable between blocks that built their load the same way, so the
    block says whether the requests were built before the run, and where tripline's own
    histogram put its p99."""
    stages = {"body_read": {"p99_bound_ms": 0.5}, "total": {"p99_bound_ms": 10.0},
              "decode": {"p99_bound_ms": 5.0}}
    text = render_collector(tmp_path, {
        "secs": 20, "batch": 1000, "concurrency": 16,
        "tripline_http": peak_run("tripline", 100_000.0, [100_000.0], readable=True),
        "otlp2parquet_http": peak_run("otlp2parquet", 50_000.0, [50_000.0], readable=True),
        "tripline_latency": {"p99_ms": 12.5, "offered_spans_per_sec": 80_000.0, "prebuilt": 4,
                             "ack_stages": stages},
        "otlp2parquet_latency": {"p99_ms": 60.0, "offered_spans_per_sec": 40_000.0,
                                 "prebuilt": 4},
    })
    row = next(line for line in text.splitlines() if line.startswith("| p99 ack latency"))
    assert "12.5 (at 80,000 spans/s)" in row and "| met |" in row, row
    assert "`tripline-load send --prebuilt 4`" in text, text
    assert "`body_read` ≤ 0.5, `total` ≤ 10.0" in text, text


def test_latency_rows_give_the_settled_and_the_whole_run_p99(tmp_path: Path) -> None:
    """A receiver's first second (memory growing, caches cold) can hold the whole tail: the
    block gives the p99 after the warm-up and the whole run's, each with its own verdict."""
    text = render_collector(tmp_path, {
        "secs": 20, "batch": 1000, "concurrency": 16,
        "tripline_http": peak_run("tripline", 100_000.0, [100_000.0], readable=True),
        "otlp2parquet_http": peak_run("otlp2parquet", 50_000.0, [50_000.0], readable=True),
        "tripline_latency": {"p99_ms": 84.0, "settled_p99_ms": 21.1, "warmup_secs": 2.0,
                             "offered_spans_per_sec": 80_000.0, "prebuilt": 4},
        "otlp2parquet_latency": {"p99_ms": 30.0, "settled_p99_ms": 25.0, "warmup_secs": 2.0,
                                 "offered_spans_per_sec": 40_000.0, "prebuilt": 4},
    })
    lines = text.splitlines()
    settled = next(line for line in lines if line.startswith("| p99 ack latency") and
                   "after a 2 s warm-up" in line)
    assert "| 21.1 (at 80,000 spans/s) | 25.0 (at 40,000 spans/s) |" in settled, settled
    assert settled.endswith("| < 50 ms | met |"), settled
    whole = next(line for line in lines if line.startswith("| p99 ack latency") and
                 "whole run" in line)
    assert "| 84.0 | 30.0 |" in whole and whole.endswith("| **not met** |"), whole
    assert "first 2 s of the step" in text, text


def test_binary_size_verdict_is_strict_at_the_goal() -> None:
    """The release binary's verdict against issue 12's "< 60 MB", read as decimal megabytes:
    one byte short of the goal is met, the goal itself is not."""
    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    import bench_report

    assert bench_report.binary_size_text(59_996_944) == (
        "The `tripline` binary: 59,996,944 bytes (57.2 MiB); goal under 60,000,000 bytes: "
        "met (3,056 bytes to spare).")
    assert bench_report.binary_size_text(59_999_999).endswith("met (1 bytes to spare).")
    assert bench_report.binary_size_text(60_000_000).endswith("**not met** (0 bytes over).")


def test_criterion_ceilings_survive_a_build_directory_without_them(tmp_path: Path) -> None:
    # Criterion keeps its estimates in the build directory: a new machine has none, and the
    # block must keep the last measured ceilings instead of dropping the table.
    results = tmp_path / "results"
    results.mkdir()
    new = tmp_path / "criterion" / "otlp_protobuf_to_arrow" / "decode" / "512spans" / "new"
    new.mkdir(parents=True)
    (new / "estimates.json").write_text(json.dumps({"mean": {
        "point_estimate": 500_000.0,
        "confidence_interval": {"lower_bound": 490_000.0, "upper_bound": 510_000.0}}}))
    (new / "benchmark.json").write_text(json.dumps({
        "group_id": "otlp_protobuf_to_arrow", "function_id": "decode", "value_str": "512spans",
        "throughput": {"Elements": 512}}))
    doc = tmp_path / "BENCHMARKS.md"
    row = "| otlp_protobuf_to_arrow | decode | 512spans | 512 | 0.500 ms (95% CI 0.490–0.510) | 1,024,000 |"

    def render(*criterion: str) -> str:
        doc.write_text("<!-- bench:generated:begin -->\n<!-- bench:generated:end -->\n")
        subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "bench_report.py"),
                        "--results", str(results), "--benchmarks", str(doc), *criterion],
                       check=True, capture_output=True)
        return doc.read_text()

    assert row in render("--criterion", str(tmp_path / "criterion"))
    assert json.loads((results / "criterion.json").read_text())["rows"][0]["elements"] == 512
    # A fresh machine: no criterion directory at all, then an empty one.
    assert row in render()
    assert row in render("--criterion", str(tmp_path / "elsewhere"))
    assert "criterion results missing" not in render()
    (results / "criterion.json").unlink()
    assert "criterion results missing" in render()
