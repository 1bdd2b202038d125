//! `tripline query`: result batches as a table, JSON (an array of objects) or CSV.
//!
//! The table fits the terminal: cells are cut at [`super::MAX_CELL_CHARS`] with `…` (whole with
//! `--wide`, or in JSON / CSV), and a result with more columns than fit side by side (`SELECT *`)
//! is printed one record at a time, column names down the left, like psql's expanded display.

use arrow::array::Array;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};

use super::{Format, Style};

/// Narrowest column worth showing side by side (borders and padding included); a result whose
/// columns cannot all get this much of the width is shown one record at a time.
const MIN_COLUMN_WIDTH: usize = 12;

/// Formatting a query result failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot format the result: {0}")]
    Format(#[from] arrow::error::ArrowError),
}

/// Renders batches as a table, JSON (array of objects) or CSV.
pub fn render_batches(
    batches: &[RecordBatch],
    format: Format,
    style: &Style,
) -> Result<String, RenderError> {
    match format {
        Format::Json => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::json::ArrayWriter::new(&mut buf);
                let refs: Vec<&RecordBatch> = batches.iter().collect();
                w.write_batches(&refs)?;
                w.finish()?;
            }
            let mut s = String::from_utf8_lossy(&buf).into_owned();
            if s.is_empty() {
                s.push_str("[]");
            }
            s.push('\n');
            Ok(s)
        }
        Format::Csv => {
            let mut out = String::new();
            let names = column_names(batches);
            if !names.is_empty() {
                let names: Vec<String> = names.iter().map(|n| csv_cell(n)).collect();
                out.push_str(&names.join(","));
                out.push('\n');
            }
            for_each_row(batches, |cells| {
                let row: Vec<String> = cells.iter().map(|c| csv_cell(c)).collect();
                out.push_str(&row.join(","));
                out.push('\n');
            })?;
            Ok(out)
        }
        Format::Table | Format::Sarif | Format::Markdown => table(batches, style),
    }
}

fn column_names(batches: &[RecordBatch]) -> Vec<String> {
    batches
        .first()
        .map(|b| {
            b.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        })
        .unwrap_or_default()
}

fn table(batches: &[RecordBatch], style: &Style) -> Result<String, RenderError> {
    let names = column_names(batches);
    let expanded = !style.wide && names.len() * MIN_COLUMN_WIDTH > usize::from(style.width);
    if !expanded {
        let header: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut t = style.table(&header);
        let mut rows = 0usize;
        for_each_row(batches, |cells| {
            rows += 1;
            t.add_row(cells.iter().map(|c| style.cell(c)).collect::<Vec<_>>());
        })?;
        return Ok(format!("{t}\n{rows} row(s)\n"));
    }
    let mut out = String::new();
    let mut rows = 0usize;
    for_each_row(batches, |cells| {
        rows += 1;
        let mut t = style.table(&["column", &format!("record {rows}")]);
        for (name, value) in names.iter().zip(&cells) {
            t.add_row(vec![name.clone(), style.cell(value)]);
        }
        out.push_str(&format!("{t}\n"));
    })?;
    out.push_str(&format!(
        "{rows} row(s), one table per record (--wide: a line per row)\n"
    ));
    Ok(out)
}

fn for_each_row(
    batches: &[RecordBatch],
    mut f: impl FnMut(Vec<String>),
) -> Result<(), RenderError> {
    let opts = FormatOptions::default().with_null("");
    for b in batches {
        let fmts = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..b.num_rows() {
            let cells = fmts
                .iter()
                .zip(b.columns())
                .map(|(fm, col)| {
                    if col.is_null(row) {
                        String::new()
                    } else {
                        fm.value(row).to_string()
                    }
                })
                .collect();
            f(cells);
        }
    }
    Ok(())
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
