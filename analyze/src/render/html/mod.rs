//! `tripline report html --output FILE`: one self-contained HTML page of a check — findings by
//! severity and rule with their `explain` text, the coverage table, the tools report, the agent
//! runs of every conversation, and a waterfall per finding — to attach to a ticket or a CI run.
//!
//! Self-contained: inline CSS (`page.css`), a small inline vanilla script (`page.js`) and the data
//! as one `<script type="application/json">` block; nothing is fetched when the page is opened.
//! The data is the document [`windows::build_windowed`] makes window by window as `check` runs
//! (or [`data::build`] from one model): no rule is re-implemented here. On a large store the
//! lists are capped ([`PageLimits`]) and the page says what it leaves out; the totals count
//! everything. Escaping happens once, in
//! [`script_json`]: every `<`, `>` and `&` in the JSON (they can only occur inside strings) is
//! written as a `\u` escape, so a span attribute holding `</script>` cannot end the block, and the
//! script puts every value into the DOM with `textContent`.

pub mod data;
pub mod waterfall;
pub mod windows;

use serde::Serialize;

pub use data::{Document, PageContext, PageLimits};

use crate::model::Model;
use crate::rules::Report;
use crate::store::Scanned;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// Rendering the page failed.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// Serialising the page data failed (not expected for these plain structs).
    #[error("cannot serialise the report data for the HTML page: {0}; try `tripline check --format json`")]
    Json(#[from] serde_json::Error),
}

/// The page for a check of one model: `model` and `report` as `check_store` returned them,
/// `scanned` what the scan read (None for in-memory data), lists capped at `limits`.
pub fn render_html(
    model: &Model,
    report: &Report,
    scanned: Option<&Scanned>,
    context: &PageContext,
    limits: &PageLimits,
) -> Result<String, HtmlError> {
    render_document(&data::build(model, report, scanned, context, limits))
}

/// The page for a document (one model's, or made window by window).
pub fn render_document(doc: &Document) -> Result<String, HtmlError> {
    let json = script_json(doc)?;
    let mut page = String::with_capacity(json.len() + CSS.len() + JS.len() + 1024);
    page.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <title>tripline report</title>\n<style>\n",
    );
    page.push_str(CSS);
    page.push_str(
        "</style>\n</head>\n<body>\n<main id=\"app\">\
         <noscript><p>This report draws itself with JavaScript; the same data is in \
         <code>tripline check --format json</code>.</p></noscript></main>\n\
         <script type=\"application/json\" id=\"tripline-data\">",
    );
    page.push_str(&json);
    page.push_str("</script>\n<script>\n");
    page.push_str(JS);
    page.push_str("</script>\n</body>\n</html>\n");
    Ok(page)
}

/// `value` as JSON that is safe inside a `<script>` element: `<`, `>`, `&` and the line
/// separators U+2028 / U+2029 are written as `\u` escapes (JSON allows them in strings, the only
/// place they can occur), so no sequence in the data can close the element or open a comment.
pub fn script_json<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let raw = serde_json::to_string(value)?;
    let mut out = String::with_capacity(raw.len() + raw.len() / 16);
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
