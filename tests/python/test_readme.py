"""README.md stays true to the code: its opening commands, the subcommands and flags it names, and
the DuckDB / Spark one-liners it shows (run here against a real store).

Why: READMEs that contradict their code are the most common documentation bug in the collectors we
studied; a test is the only thing that keeps ours honest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

import genai_scenario as sc
import otlp_http
from conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()
FENCE = re.compile(r"```(?:sh|bash)?\n(.*?)```", re.S)
VENV_PYTHON = "~/.cache/tripline-venv/bin/python"


def code_blocks() -> list[str]:
    return FENCE.findall(README)


def test_readme_opens_with_exactly_two_commands():
    first = code_blocks()[0].strip().splitlines()
    assert first == ["cargo run --release -- collect", "scripts/test"]
    assert README.index("```") < README.index("## "), "the two commands come before any section"


def test_every_subcommand_and_flag_named_exists(run_tripline):
    subcommands = set(re.findall(r"`tripline ([a-z]+)", README))
    assert {"collect", "ingest", "check", "demo", "query"} <= subcommands
    for sub in sorted(subcommands):
        proc = run_tripline(sub, "--help")
        assert proc.returncode == 0, f"README names `tripline {sub}`, which does not exist"
    collect_help = run_tripline("collect", "--help").stdout
    for flag in ("--http", "--grpc", "--auth-token-file", "--fsync", "--max-body-bytes"):
        assert flag in collect_help, f"README names `collect {flag}`"
    check_help = run_tripline("check", "--help").stdout
    for flag in ("--policy", "--format", "--fail-on"):
        assert flag in check_help, f"README names `check {flag}`"


def test_the_query_one_liners_run_on_a_real_store(start_collector, tmp_path):
    collector = start_collector(tmp_path / "tripline-data")
    assert otlp_http.export(collector.traces_url, encode_spans(sc.scenario_spans())).status == 200
    assert collector.stop() == 0
    one_liners = [line for block in code_blocks() for line in block.splitlines() if line.startswith(VENV_PYTHON)]
    assert len(one_liners) == 2, "README shows a DuckDB and a Spark one-liner"
    duck, spark = one_liners
    env = dict(os.environ)

    out = subprocess.run(
        duck.replace(VENV_PYTHON, sys.executable), shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    # the host's MCP client span and the server span of the same tools/call
    assert out.stdout.count(sc.TOOL) == 2, out.stdout
    assert sc.SERVER_SERVICE in out.stdout and sc.HOST_SERVICE in out.stdout

    out = subprocess.run(
        spark.replace(VENV_PYTHON, sys.executable), shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert re.search(rf"\|\s*{sc.HOST_SERVICE}\s*\|", out.stdout), out.stdout
    assert re.search(rf"\|\s*{sc.SERVER_SERVICE}\s*\|[^|]*\|[^|]*\|\s*1\s*\|", out.stdout), out.stdout
