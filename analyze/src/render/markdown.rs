//! `check --format markdown`: a CI job summary (GitHub `$GITHUB_STEP_SUMMARY` and friends).

use std::io::{self, Write};

use crate::rules::{find, Coverage, Finding, Report};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Markdown with a findings table grouped by rule and the coverage table.
pub fn render_markdown(report: &Report) -> String {
    let mut out = Vec::new();
    let mut findings = report
        .findings
        .iter()
        .cloned()
        .map(Ok::<Finding, std::convert::Infallible>);
    // Writing to a Vec cannot fail, and the findings are in memory.
    let _ = write_markdown_streamed(&mut out, &mut findings, &report.coverage);
    String::from_utf8(out).unwrap_or_default()
}

/// [`render_markdown`]'s bytes written to `out` (give it a buffered writer), the findings taken
/// from `findings` in report order, once: a rule's findings come together (report order is
/// severity, then rule), so each rule is tallied (its first finding and its count) as they come
/// and only one finding per rule is held; the table is written once the total is known. An
/// error reading a finding (a spilled run) is an I/O error.
pub fn write_markdown_streamed<I, E>(
    out: &mut impl Write,
    findings: &mut I,
    coverage: &[Coverage],
) -> io::Result<()>
where
    I: Iterator<Item = Result<Finding, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // Per rule: its first finding and its count.
    let mut groups: Vec<(Finding, u64)> = Vec::new();
    for f in findings {
        let f = f.map_err(io::Error::other)?;
        match groups.last_mut() {
            Some((first, n)) if first.rule == f.rule => *n += 1,
            _ => groups.push((f, 1)),
        }
    }
    let total: u64 = groups.iter().map(|(_, n)| n).sum();
    writeln!(out, "## tripline check\n")?;
    if total == 0 {
        writeln!(out, "No findings.\n")?;
    } else {
        writeln!(out, "{total} finding(s).\n")?;
        writeln!(
            out,
            "| rule | name | severity | count | example trace / span | tool | message |"
        )?;
        writeln!(out, "|---|---|---|---:|---|---|---|")?;
        for (first, n) in &groups {
            row(out, first, *n)?;
        }
        writeln!(out)?;
    }
    writeln!(out, "### Coverage\n")?;
    writeln!(out, "| rule | name | examined | not observable | reasons |")?;
    writeln!(out, "|---|---|---:|---:|---|")?;
    for c in coverage {
        let name = find(c.rule).map_or("", |r| r.name());
        writeln!(
            out,
            "| {} | {name} | {} | {} | {} |",
            c.rule,
            c.examined,
            c.not_observable,
            cell(&c.reasons.join("; "))
        )?;
    }
    Ok(())
}

/// One rule's row: its first finding as the example, and its count.
fn row(out: &mut impl Write, f: &Finding, n: u64) -> io::Result<()> {
    writeln!(
        out,
        "| {} | {} | {} | {n} | `{}` / `{}` | {} | {} |",
        f.rule,
        f.name,
        f.severity,
        f.trace_id,
        f.span_id,
        cell(f.tool.as_deref().unwrap_or("")),
        cell(&f.message)
    )
}
