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

/// The fields of a pydantic model's `str()` as a JSON object, each value converted from its
/// Python literal (`None` -> null, `True` -> true, `{'k': 1}` -> `{"k": 1}`, a nested model
/// `ToolAnnotations(readOnlyHint=True, ...)` -> an object of its keyword arguments), or `None`
/// when `text` is not exactly that shape (every field `name=value`, separated by one space,
/// nothing left over). OpenLIT's Python MCP instrumentation records a `tools/list` result's tools
/// and a tool result's content blocks this way inside its JSON payloads:
/// `name='adjust_stock' title=None inputSchema={...} annotations=ToolAnnotations(...)`,
/// `type='text' text='...' annotations=None meta=None`.
pub(crate) fn pydantic_fields(text: &str) -> Option<Map<String, Value>> {
    let mut p = Parser {
        s: text.trim(),
        i: 0,
    };
    p.entries(0, Parser::ident_key, "=", " ", None)
}

/// Deepest nesting [`Parser::literal`] follows.
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
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

    /// A Python identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    fn ident(&mut self) -> Option<&'a str> {
        let rest = &self.s[self.i..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let start = self.i;
        self.i += len;
        Some(&self.s[start..start + len])
    }

    /// One Python literal as JSON: a string, `None` / `True` / `False`, a number, a dict, a list
    /// or tuple, or a constructor call with keyword arguments (an object of them).
    fn literal(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            '\'' | '"' => self.string().map(Value::String),
            '{' => {
                self.i += 1;
                self.entries(depth + 1, Parser::dict_key, ": ", ", ", Some("}"))
                    .map(Value::Object)
            }
            '[' | '(' => {
                let (close, trailing) = if self.peek()? == '[' {
                    ("]", ",]")
                } else {
                    (")", ",)")
                };
                self.i += 1;
                let mut out = Vec::new();
                if self.eat(close) {
                    return Some(Value::Array(out));
                }
                loop {
                    out.push(self.literal(depth + 1)?);
                    if self.eat(close) || self.eat(trailing) {
                        return Some(Value::Array(out));
                    }
                    self.expect(", ")?;
                }
            }
            c if c.is_ascii_digit() || c == '-' => {
                let rest = self.rest();
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-+".contains(c)))
                    .unwrap_or(rest.len());
                let text = &rest[..len];
                let number = match text.parse::<i64>() {
                    Ok(n) => Value::from(n),
                    Err(_) => serde_json::Number::from_f64(text.parse::<f64>().ok()?)?.into(),
                };
                self.i += len;
                Some(number)
            }
            _ => {
                let name = self.ident()?;
                match name {
                    "None" => return Some(Value::Null),
                    "True" => return Some(Value::Bool(true)),
                    "False" => return Some(Value::Bool(false)),
                    _ => {}
                }
                self.expect("(")?;
                self.entries(depth + 1, Parser::ident_key, "=", ", ", Some(")"))
                    .map(Value::Object)
            }
        }
    }

    /// `key`, `assign`, value entries separated by `sep` up to `close` (consumed; `None`: up to
    /// the end of the text, which holds at least one entry) as an object, values read at
    /// `depth`: a dict's `'k': v, ...}`, a call's `k=v, ...)`, a model's `k=v k=v`.
    fn entries(
        &mut self,
        depth: usize,
        key: fn(&mut Self, usize) -> Option<String>,
        assign: &str,
        sep: &str,
        close: Option<&str>,
    ) -> Option<Map<String, Value>> {
        let mut out = Map::new();
        if close.is_some_and(|c| self.eat(c)) {
            return Some(out);
        }
        loop {
            let k = key(self, depth)?;
            self.expect(assign)?;
            let value = self.literal(depth)?;
            out.insert(k, value);
            let closed = match close {
                Some(c) => self.eat(c),
                None => self.i == self.s.len(),
            };
            if closed {
                return Some(out);
            }
            self.expect(sep)?;
        }
    }

    /// A keyword argument's or a model field's name.
    fn ident_key(&mut self, _depth: usize) -> Option<String> {
        self.ident().map(str::to_string)
    }

    /// A dict key: a string, or a number or bool written as its text.
    fn dict_key(&mut self, depth: usize) -> Option<String> {
        match self.literal(depth)? {
            Value::String(k) => Some(k),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(if b { "True" } else { "False" }.to_string()),
            _ => None,
        }
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
    fn pydantic_str_of_a_tool_and_of_a_content_block() {
        let tool = pydantic_fields(
            "name='adjust_stock' title=None description='Books a correction. It\\'s checked.' inputSchema={'properties': {'delta': {'title': 'Delta', 'type': 'integer'}}, 'required': ['delta'], 'type': 'object'} outputSchema=None icons=None annotations=ToolAnnotations(title=None, readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False) meta=None execution=None",
        )
        .unwrap();
        assert_eq!(tool["name"], "adjust_stock");
        assert_eq!(tool["description"], "Books a correction. It's checked.");
        assert_eq!(
            tool["inputSchema"],
            json!({"properties": {"delta": {"title": "Delta", "type": "integer"}},
                   "required": ["delta"], "type": "object"})
        );
        assert_eq!(tool["outputSchema"], Value::Null);
        assert_eq!(tool["annotations"]["destructiveHint"], true);
        assert_eq!(tool["annotations"]["readOnlyHint"], false);
        let block =
            pydantic_fields("type='text' text='{\"sku\": 1}' annotations=None meta=None").unwrap();
        assert_eq!(block["type"], "text");
        assert_eq!(block["text"], "{\"sku\": 1}");
        let nums =
            pydantic_fields("a=-3 b=1.5e-05 c=(1,) d=[] e={} f=['x', 2, None] g=(1, 2)").unwrap();
        assert_eq!(nums["a"], -3);
        assert_eq!(nums["b"], 1.5e-05);
        assert_eq!(nums["c"], json!([1]));
        assert_eq!(nums["f"], json!(["x", 2, null]));
        assert_eq!(nums["g"], json!([1, 2]));
        for text in [
            "",
            "name='x' =None",
            "name='x'  title=None",
            "name='x' title=Foo",
            "name='unterminated",
            "42 degrees",
            "{\"name\": \"json, not a str()\"}",
            "name={'a': 1",
        ] {
            assert_eq!(pydantic_fields(text), None, "{text}");
        }
        let deep = format!("a={}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(pydantic_fields(&deep), None, "nesting is bounded");
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
