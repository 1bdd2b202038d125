//! Tool results recorded as a Python `repr` instead of JSON.
//!
//! Some Python instrumentations (the AWS Distro for OpenTelemetry's MCP instrumentation on `mcp`
//! 1.x) put `str(result)` of the SDK's pydantic `CallToolResult` into `gen_ai.tool.call.result`:
//! `meta=None content=[TextContent(type='text', text='...', annotations=None, meta=None)]
//! structuredContent=None isError=False`. That is not JSON, but its fields come in a fixed order
//! and every value is a Python literal, so it can be read exactly: this parser accepts only that
//! whole shape (every value skipped or decoded, nothing left over) and returns the equivalent
//! `CallToolResult` JSON. Anything else returns `None`, and the result stays *not observable*
//! rather than guessed from a substring.

use serde_json::{json, Map, Value};

/// The `CallToolResult` a repr shows, as JSON (`structuredContent` is a placeholder string when
/// present: rules only ask whether it is there), or `None` when `text` is not exactly that shape.
pub(crate) fn call_tool_result(text: &str) -> Option<Value> {
    let mut p = Parser {
        s: text.trim(),
        i: 0,
    };
    if p.eat("meta=") {
        p.skip_value()?;
        p.expect(" ")?;
    }
    p.expect("content=[")?;
    let mut blocks = Vec::new();
    if !p.eat("]") {
        loop {
            blocks.push(p.block()?);
            if p.eat("]") {
                break;
            }
            p.expect(", ")?;
        }
    }
    p.expect(" structuredContent=")?;
    let start = p.i;
    p.skip_value()?;
    let structured = &p.s[start..p.i];
    p.expect(" isError=")?;
    let is_error = if p.eat("True") {
        true
    } else if p.eat("False") {
        false
    } else {
        return None;
    };
    if p.i != p.s.len() {
        return None;
    }
    let structured = if structured == "None" {
        Value::Null
    } else {
        Value::String(structured.to_string())
    };
    Some(json!({"content": blocks, "structuredContent": structured, "isError": is_error}))
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.i..]
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.rest().starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, lit: &str) -> Option<()> {
        self.eat(lit).then_some(())
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// `TextContent(type='text', text='...', annotations=None, meta=None)` -> `{"type", "text"}`.
    fn block(&mut self) -> Option<Value> {
        let name_len = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        if name_len == 0 {
            return None;
        }
        self.i += name_len;
        self.expect("(")?;
        let mut out = Map::new();
        if !self.eat(")") {
            loop {
                let key_len = self.rest().find('=')?;
                let key = self.s[self.i..self.i + key_len].to_string();
                if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return None;
                }
                self.i += key_len + 1;
                if (key == "type" || key == "text") && matches!(self.peek(), Some('\'' | '"')) {
                    out.insert(key, Value::String(self.string()?));
                } else {
                    self.skip_value()?;
                }
                if self.eat(")") {
                    break;
                }
                self.expect(", ")?;
            }
        }
        out.contains_key("type").then_some(Value::Object(out))
    }

    /// A Python string literal (`'...'` or `"..."`, with backslash escapes), decoded.
    fn string(&mut self) -> Option<String> {
        let mut chars = self.rest().char_indices();
        let (_, quote) = chars.next()?;
        let mut out = String::new();
        while let Some((at, c)) = chars.next() {
            match c {
                '\\' => {
                    let (_, e) = chars.next()?;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        '0' => out.push('\0'),
                        '\\' | '\'' | '"' => out.push(e),
                        'x' | 'u' | 'U' => {
                            let n = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let mut code = 0u32;
                            for _ in 0..n {
                                code = code * 16 + chars.next()?.1.to_digit(16)?;
                            }
                            out.push(char::from_u32(code)?);
                        }
                        _ => return None,
                    }
                }
                c if c == quote => {
                    self.i += at + c.len_utf8();
                    return Some(out);
                }
                c => out.push(c),
            }
        }
        None
    }

    /// Skips one Python literal or constructor call: a string, `None` / `True` / `False`, a
    /// number, or anything bracketed (`{...}`, `[...]`, `Name(...)`), strings inside respected.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            '\'' | '"' => self.string().map(|_| ()),
            '{' | '[' | '(' => self.skip_bracketed(),
            _ => {
                let len = self
                    .rest()
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-+".contains(c)))
                    .unwrap_or(self.rest().len());
                if len == 0 {
                    return None;
                }
                self.i += len;
                if self.peek() == Some('(') {
                    self.skip_bracketed()?;
                }
                Some(())
            }
        }
    }

    fn skip_bracketed(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                '\'' | '"' => {
                    self.string()?;
                    continue;
                }
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        self.i += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.i += self.peek()?.len_utf8();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_repr_of_a_call_tool_result() {
        let v = call_tool_result(
            r#"meta=None content=[TextContent(type='text', text='{"sku": "SKU-1001", "on_hand": 42}', annotations=None, meta=None)] structuredContent=None isError=False"#,
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"content": [{"type": "text", "text": "{\"sku\": \"SKU-1001\", \"on_hand\": 42}"}],
                   "structuredContent": null, "isError": false})
        );
        let v = call_tool_result(
            r#"meta=None content=[TextContent(type='text', text='{\n  "sku": "it\'s"\n}', annotations=None, meta=None)] structuredContent={'sku': 'SKU-1001', 'n': 42} isError=False"#,
        )
        .unwrap();
        assert_eq!(v["content"][0]["text"], "{\n  \"sku\": \"it's\"\n}");
        assert!(v["structuredContent"].is_string());
        let v = call_tool_result(
            "meta=None content=[TextContent(type='text', text=\"Unknown SKU: 'x'\", annotations=None, meta=None), ImageContent(type='image', data='AAA', mimeType='image/png', annotations=None, meta=None)] structuredContent=None isError=True",
        )
        .unwrap();
        assert_eq!(v["isError"], true);
        assert_eq!(v["content"][1]["type"], "image");
    }

    #[test]
    fn anything_else_is_not_read() {
        for text in [
            "42 degrees",
            "",
            // cut at N characters
            "meta=None content=[TextContent(type='text', text='{\"sku\": \"SKU-1",
            // trailing text after the last field
            "meta=None content=[] structuredContent=None isError=False and more",
            // the field order differs
            "content=[] isError=False structuredContent=None",
            "meta=None content=[TextContent(type='text', text='x' structuredContent=None isError=False",
        ] {
            assert_eq!(call_tool_result(text), None, "{text}");
        }
        assert!(
            call_tool_result("meta=None content=[] structuredContent=None isError=False").is_some()
        );
    }
}
