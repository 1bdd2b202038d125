"""`tripline report html` opened in a real headless browser: Debian's Chromium, driven by Playwright.

Why a browser and not string checks: the page draws itself from its embedded JSON, so only a
browser shows whether it loads without an error, fetches nothing, shows every finding `check`
reports and marks the broken edge of a TL004 waterfall. Playwright's own browser download is not
used (`executable_path` points at the system Chromium; TRIPLINE_CHROMIUM overrides it). Screenshots
are kept under $TRIPLINE_ARTIFACTS (default tests/python/artifacts/, ignored by git).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TRIPLINE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("TRIPLINE_ARTIFACTS") or REPO_ROOT / "tests" / "python" / "artifacts")
HOSTILE = "</script><script>window.__pwned=1</script><!-- & \u2028"


def tripline(binary: str, data_dir: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(
        [binary, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    print(f"$ tripline {' '.join(args)}\n--- stdout ---\n{proc.stdout[:4000]}\n--- stderr ---\n{proc.stderr[:4000]}")
    assert proc.returncode in ok, f"tripline {' '.join(args)} exited {proc.returncode}: {proc.stderr}"
    return proc


def assert_self_contained(html: str) -> None:
    """No markup that fetches: the data block (JSON, never markup) may quote URLs from spans."""
    start = html.index('<script type="application/json" id="tripline-data">')
    end = html.index("</script>", start)
    markup = (html[:start] + html[end:]).lower()
    for needle in ("http://", "https://", "<link", "<script src", "@import", "url("):
        assert needle not in markup, needle
    assert html.count("<script") == 2 and html.count("</script>") == 2


class Browser:
    """One headless Chromium page that records console errors, page errors and every request."""

    def __init__(self, pw):
        if not os.access(CHROMIUM, os.X_OK):
            pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set TRIPLINE_CHROMIUM")
        self.browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        self.page: Page = self.browser.new_page(viewport={"width": 1400, "height": 900})
        self.errors: list[str] = []
        self.failed: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, path: Path) -> None:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=30_000)

    def assert_clean(self, page_file: Path) -> None:
        assert self.errors == [], self.errors
        assert self.failed == [], self.failed
        # The only request is the page itself: nothing fetched from the network or elsewhere.
        assert self.requests == [page_file.resolve().as_uri()], self.requests

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path

    def close(self) -> None:
        self.browser.close()


@pytest.fixture(scope="module")
def samples_store(tripline_bin: str, tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("html") / "data"
    tripline(tripline_bin, data, "ingest", str(REPO_ROOT / "samples" / "traces"))
    return data


def test_report_shows_every_finding_and_the_broken_edge(tripline_bin: str, samples_store: Path, tmp_path: Path):
    policy = str(REPO_ROOT / "samples" / "policy.toml")
    check = json.loads(
        tripline(tripline_bin, samples_store, "check", "--format", "json", "--policy", policy, ok=(0, 1)).stdout
    )
    assert any(f["rule"] == "TL004" for f in check["findings"]), "the samples hold a broken propagation"
    out = tmp_path / "report.html"
    proc = tripline(tripline_bin, samples_store, "report", "html", "--policy", policy, "--output", str(out))
    assert proc.stdout.strip() == str(out)
    assert_self_contained(out.read_text())

    with sync_playwright() as pw:
        b = Browser(pw)
        try:
            b.open(out)
            shown = b.page.eval_on_selector_all(
                "details.finding",
                "els => els.map(e => [e.dataset.rule, e.dataset.traceId, e.dataset.spanId])",
            )
            expected = sorted([f["rule"], f["trace_id"], f["span_id"]] for f in check["findings"])
            assert sorted(shown) == expected
            # Coverage: one row per rule that ran; the tools table has the samples' tools.
            assert b.page.locator("#coverage tbody tr").count() == len(check["coverage"])
            assert b.page.locator("#tools tbody tr").count() > 0
            assert b.page.locator("#conversations details.conversation").count() > 0
            # Nothing is built before a finding is opened.
            assert b.page.locator(".wf-row").count() == 0

            tl004 = next(f for f in check["findings"] if f["rule"] == "TL004")
            finding = b.page.locator(
                f'details.finding[data-rule="TL004"][data-trace-id="{tl004["trace_id"]}"][data-span-id="{tl004["span_id"]}"]'
            ).first
            finding.locator("summary").click()
            hit = finding.locator(f'.wf-row[data-finding-span][data-span-id="{tl004["span_id"]}"]')
            hit.wait_for(timeout=10_000)
            # The span of the finding (the server half of the call) is where the edge broke, and
            # the dashed connector from the host's client span is drawn.
            assert hit.get_attribute("data-broken-edge"), "broken edge not marked on the finding's span"
            edge = finding.locator(f'.wf-edge[data-broken-edge][data-edge-to="{tl004["span_id"]}"]')
            assert edge.count() == 1
            if tl004["related"]:
                assert edge.get_attribute("data-edge-from") in tl004["related"]
            # Two traces in one waterfall: the host's and the server's.
            assert "stitched" in finding.locator(".wf").inner_text()
            # Attributes on demand: the finding's span is selected; clicking another row shows its own.
            assert finding.locator(f'.span-attrs[data-span-id="{tl004["span_id"]}"]').count() == 1
            other = finding.locator(".wf-row").first
            other_id = other.get_attribute("data-span-id")
            other.click()
            attrs = finding.locator(f'.span-attrs[data-span-id="{other_id}"]')
            assert attrs.count() == 1 and other_id in attrs.inner_text()
            finding.scroll_into_view_if_needed()
            b.screenshot("html-report-tl004.png")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            finding.screenshot(path=str(ARTIFACTS / "html-report-tl004-waterfall.png"))
            print(f"screenshot: {ARTIFACTS / 'html-report-tl004-waterfall.png'}")
            # Printed: every finding opens with its waterfall around the finding's span; the PDF
            # (Chromium's print path, which fires beforeprint) and a print-media screenshot are kept.
            pdf = ARTIFACTS / "html-report.pdf"
            b.page.pdf(path=str(pdf))
            print(f"pdf: {pdf}")
            assert pdf.stat().st_size > 10_000
            b.page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
            b.page.emulate_media(media="print")
            assert b.page.locator("nav").is_hidden()
            assert b.page.locator("details.finding[open]").count() == len(check["findings"])
            assert b.page.locator("details.finding .wf-row[data-finding-span]").count() == len(check["findings"])
            b.screenshot("html-report-print.png")
            b.assert_clean(out)
        finally:
            b.close()


def otlp_span(trace: str, span: str, name: str, start: int, dur: int, parent: str = "", kind: int = 1, **attrs) -> dict:
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + dur),
        "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": str(v)}} for k, v in attrs.items()],
    }


def resource(service: str, spans: list[dict]) -> dict:
    return {
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}],
    }


def big_trace(calls: int, hostile: str = "") -> dict:
    """One agent run of `calls` MCP tool calls (execute_tool > client > server: 3 spans each) plus
    one call whose server span is the root of another trace (TL004)."""
    t0 = 1_795_996_800 * 1_000_000_000
    trace, other = "ab" * 16, "cd" * 16
    host, server = [], []
    host.append(
        otlp_span(trace, "%016x" % 1, "invoke_agent big", t0, calls * 2_000_000 + 10_000_000,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name=hostile or "big",
                  gen_ai__conversation__id=hostile or "conv-big")
    )
    for i in range(calls):
        base = 0x100000 + i * 4
        start = t0 + 1_000_000 + i * 2_000_000
        tool = f"tool_{i % 7}"
        ex, cl, sv = "%016x" % base, "%016x" % (base + 1), "%016x" % (base + 2)
        host.append(otlp_span(trace, ex, f"execute_tool {tool}", start, 1_500_000, "%016x" % 1,
                              gen_ai__operation__name="execute_tool", gen_ai__tool__name=tool))
        host.append(otlp_span(trace, cl, f"tools/call {tool}", start + 100_000, 1_200_000, ex, kind=3,
                              mcp__method__name="tools/call", gen_ai__tool__name=tool, jsonrpc__request__id=str(i + 10)))
        broken = i == calls // 2
        server.append(otlp_span(other if broken else trace, sv, f"tools/call {tool}", start + 200_000, 900_000,
                                "" if broken else cl, kind=2, mcp__method__name="tools/call",
                                gen_ai__tool__name=tool, jsonrpc__request__id=str(i + 10)))
    return {"resourceSpans": [resource("big-host", host), resource("big-mcp-server", server)]}


def test_a_10k_span_trace_stays_responsive(tripline_bin: str, tmp_path: Path):
    calls = 3_333  # 1 + 3 * 3333 = 10_000 spans
    rec = tmp_path / "big.json"
    rec.write_text(json.dumps(big_trace(calls)))
    data = tmp_path / "data"
    tripline(tripline_bin, data, "ingest", str(rec))
    out = tmp_path / "big.html"
    tripline(tripline_bin, data, "report", "html", "--output", str(out))
    print(f"page size: {out.stat().st_size} bytes")
    check = json.loads(tripline(tripline_bin, data, "check", "--format", "json", ok=(0, 1)).stdout)
    tl004 = [f for f in check["findings"] if f["rule"] == "TL004"]
    assert len(tl004) == 1, check["findings"][:3]

    with sync_playwright() as pw:
        b = Browser(pw)
        try:
            t = time.monotonic()
            b.open(out)
            loaded = time.monotonic() - t
            assert b.page.locator("details.finding").count() == len(check["findings"])
            finding = b.page.locator('details.finding[data-rule="TL004"]').first
            t = time.monotonic()
            finding.locator("summary").click()
            finding.locator(".wf-row[data-finding-span][data-broken-edge]").wait_for(timeout=10_000)
            opened = time.monotonic() - t
            assert finding.locator(".wf").get_attribute("data-spans") == "10000"
            # Only the rows in view (plus a margin) are in the DOM, wherever the scroller is.
            rows = finding.locator(".wf-row").count()
            assert 0 < rows < 200, rows
            b.page.eval_on_selector(f'details.finding[data-rule="TL004"] .wf-scroll', "s => { s.scrollTop = s.scrollHeight; }")
            last = finding.locator('.wf-row[data-row="9999"]')
            last.wait_for(timeout=10_000)
            assert finding.locator(".wf-row").count() < 200
            print(f"10k-span trace: page loaded in {loaded:.2f}s, waterfall opened in {opened:.2f}s, {rows} rows in the DOM")
            # Generous bounds for a shared 2-core CI machine; measured figures are printed above.
            assert loaded < 15 and opened < 10, (loaded, opened)
            b.screenshot("html-report-10k.png")
            b.assert_clean(out)
        finally:
            b.close()


def test_span_values_are_text_not_markup(tripline_bin: str, tmp_path: Path):
    rec = tmp_path / "hostile.json"
    rec.write_text(json.dumps(big_trace(3, hostile=HOSTILE)))
    data = tmp_path / "data"
    tripline(tripline_bin, data, "ingest", str(rec))
    out = tmp_path / "hostile.html"
    tripline(tripline_bin, data, "report", "html", "--output", str(out))
    assert_self_contained(out.read_text())
    with sync_playwright() as pw:
        b = Browser(pw)
        try:
            b.open(out)
            assert b.page.evaluate("window.__pwned") is None
            # The value is shown as written, in the conversations section.
            assert HOSTILE.replace("\u2028", "") in b.page.locator("#conversations").inner_text().replace("\u2028", "")
            b.assert_clean(out)
        finally:
            b.close()


def test_report_of_the_shared_recordings(tripline_bin: str, recordings: Path, tmp_path: Path):
    """The recordings of real SDKs (mcp2 native, Traceloop): the first 50 findings of each rule
    shown (--max-findings-per-rule's default; TL013 has more), the cap said on the page, every
    waterfall opens without an error."""
    data = tmp_path / "data"
    tripline(tripline_bin, data, "ingest", str(recordings))
    policy = str(recordings / "policy.toml")
    check = json.loads(
        tripline(tripline_bin, data, "check", "--format", "json", "--policy", policy, ok=(0, 1)).stdout
    )
    out = tmp_path / "recordings.html"
    tripline(tripline_bin, data, "report", "html", "--policy", policy, "--output", str(out))
    assert_self_contained(out.read_text())
    with sync_playwright() as pw:
        b = Browser(pw)
        try:
            b.open(out)
            shown = b.page.eval_on_selector_all(
                "details.finding",
                "els => els.map(e => [e.dataset.rule, e.dataset.traceId, e.dataset.spanId])",
            )
            # `check --format json` lists the findings in report order; the page the first 50 of each rule.
            limit, seen, listed = 50, {}, []
            for f in check["findings"]:
                seen[f["rule"]] = seen.get(f["rule"], 0) + 1
                if seen[f["rule"]] <= limit:
                    listed.append(f)
            assert sorted(shown) == sorted([f["rule"], f["trace_id"], f["span_id"]] for f in listed)
            for rule, n in seen.items():
                if n > limit:
                    note = f"showing {limit} of {n:,} {rule} findings"
                    assert note in b.page.locator("#capped").inner_text()
                    assert note in b.page.locator(f'section.rule-group[data-rule="{rule}"]').inner_text()
            # Open every finding: each gets its waterfall with the finding's span in it.
            b.page.eval_on_selector_all("details.finding", "els => els.forEach(e => { e.open = true; })")
            b.page.wait_for_function(
                "() => [...document.querySelectorAll('details.finding')].every(d => d.querySelector('.wf-row[data-finding-span]'))",
                timeout=30_000,
            )
            if any(f["rule"] == "TL004" for f in check["findings"]):
                assert b.page.locator('details.finding[data-rule="TL004"] .wf-row[data-finding-span][data-broken-edge]').count() > 0
            b.assert_clean(out)
        finally:
            b.close()
