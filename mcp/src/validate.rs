//! Checks a tool's `structuredContent` against its declared `outputSchema` before it is sent.
//!
//! Why at run time and not only in tests: a client (the official Python SDK does) rejects a
//! result that does not validate, so a drift between the analyzer's JSON and the schema would
//! break every call of that tool. Checked here, the drift becomes an `isError` result naming the
//! field, which tells the user what to report, and the tests in `tests/` run every tool through
//! the same check.
//!
//! Only the keywords the schemas in [`crate::schema`] use are understood: `type` (one name or a
//! list), `properties`, `required`, `additionalProperties`, `items`, `enum`, `anyOf` and a local
//! `$ref` into `$defs`. Annotation keywords (`description`, `title`, `minimum`, …) are ignored,
//! and any other keyword makes validation fail, so a schema cannot silently use one it ignores.

use serde_json::{Map, Value};

/// Keywords that only annotate (or hold definitions) and never constrain.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "$defs",
    "$schema",
    "minimum",
    "maximum",
    "default",
    "examples",
    "format",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// Deepest nesting followed (the trace tool's own depth limit is lower).
const MAX_DEPTH: usize = 512;

/// Validates `value` against `schema` (the root, which holds any `$defs`). The error names the
/// JSON pointer of the first mismatch and what was expected there.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    Validator { root: schema }.check(schema, value, "", 0)
}

struct Validator<'a> {
    root: &'a Value,
}

impl Validator<'_> {
    fn check(&self, schema: &Value, value: &Value, at: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("{}: nested deeper than {MAX_DEPTH}", pointer(at)));
        }
        let Some(schema) = schema.as_object() else {
            return match schema {
                Value::Bool(true) => Ok(()),
                Value::Bool(false) => Err(format!("{}: no value is allowed here", pointer(at))),
                _ => Err(format!("{}: the schema is not an object", pointer(at))),
            };
        };
        for key in schema.keys() {
            let known = matches!(
                key.as_str(),
                "type"
                    | "properties"
                    | "required"
                    | "additionalProperties"
                    | "items"
                    | "enum"
                    | "anyOf"
                    | "$ref"
            );
            if !known && !ANNOTATIONS.contains(&key.as_str()) {
                return Err(format!(
                    "{}: the schema uses keyword {key:?}, which this validator does not check",
                    pointer(at)
                ));
            }
        }
        if let Some(reference) = schema.get("$ref") {
            let target = self.resolve(reference)?;
            self.check(target, value, at, depth + 1)?;
        }
        if let Some(types) = schema.get("type") {
            check_type(types, value, at)?;
        }
        if let Some(Value::Array(allowed)) = schema.get("enum") {
            if !allowed.contains(value) {
                return Err(format!(
                    "{}: {value} is not one of {}",
                    pointer(at),
                    Value::Array(allowed.clone())
                ));
            }
        }
        if let Some(Value::Array(options)) = schema.get("anyOf") {
            let mut reasons = Vec::new();
            for option in options {
                match self.check(option, value, at, depth + 1) {
                    Ok(()) => {
                        reasons.clear();
                        break;
                    }
                    Err(e) => reasons.push(e),
                }
            }
            if !reasons.is_empty() {
                return Err(format!(
                    "{}: matches none of anyOf ({})",
                    pointer(at),
                    reasons.join("; ")
                ));
            }
        }
        if let Value::Object(object) = value {
            self.check_object(schema, object, at, depth)?;
        }
        if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
            for (i, item) in items.iter().enumerate() {
                self.check(item_schema, item, &format!("{at}/{i}"), depth + 1)?;
            }
        }
        Ok(())
    }

    fn check_object(
        &self,
        schema: &Map<String, Value>,
        object: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), String> {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    return Err(format!(
                        "{}: required property {name:?} is missing",
                        pointer(at)
                    ));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, v) in object {
            let child = format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"));
            match properties.and_then(|p| p.get(name)) {
                Some(s) => self.check(s, v, &child, depth + 1)?,
                None => match schema.get("additionalProperties") {
                    None | Some(Value::Bool(true)) => {}
                    Some(Value::Bool(false)) => {
                        return Err(format!("{}: property {name:?} is not allowed", pointer(at)))
                    }
                    Some(s) => self.check(s, v, &child, depth + 1)?,
                },
            }
        }
        Ok(())
    }

    fn resolve(&self, reference: &Value) -> Result<&Value, String> {
        let name = reference
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .ok_or_else(|| format!("unsupported $ref {reference}: only \"#/$defs/NAME\""))?;
        self.root
            .get("$defs")
            .and_then(|d| d.get(name))
            .ok_or_else(|| format!("$ref {reference} names no definition in $defs"))
    }
}

fn check_type(types: &Value, value: &Value, at: &str) -> Result<(), String> {
    let names: Vec<&str> = match types {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => return Err(format!("{}: `type` must be a name or a list", pointer(at))),
    };
    if names.iter().any(|t| has_type(t, value)) {
        Ok(())
    } else {
        Err(format!(
            "{}: expected {}, found {}",
            pointer(at),
            names.join(" or "),
            type_name(value)
        ))
    }
}

fn has_type(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn pointer(at: &str) -> &str {
    if at.is_empty() {
        "(root)"
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["n", "tags"],
            "additionalProperties": false,
            "properties": {
                "n": {"type": "integer", "minimum": 0},
                "ratio": {"type": ["number", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "level": {"enum": ["info", "error"]},
                "tree": {"$ref": "#/$defs/node"}
            },
            "$defs": {
                "node": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    }
                }
            }
        })
    }

    #[test]
    fn accepts_a_matching_value() {
        let v = json!({"n": 3, "ratio": null, "tags": ["a"], "level": "info",
                       "tree": {"id": "r", "children": [{"id": "c", "children": []}]}});
        assert_eq!(validate(&schema(), &v), Ok(()));
        assert_eq!(validate(&schema(), &json!({"n": 2.0, "tags": []})), Ok(()));
    }

    #[test]
    fn names_the_first_mismatch_by_pointer() {
        let e = |v: Value| validate(&schema(), &v).unwrap_err();
        assert_eq!(
            e(json!({"tags": []})),
            "(root): required property \"n\" is missing"
        );
        assert_eq!(
            e(json!({"n": 1.5, "tags": []})),
            "/n: expected integer, found number"
        );
        assert_eq!(
            e(json!({"n": 1, "tags": [1]})),
            "/tags/0: expected string, found integer"
        );
        assert_eq!(
            e(json!({"n": 1, "tags": [], "x": 1})),
            "(root): property \"x\" is not allowed"
        );
        assert_eq!(
            e(json!({"n": 1, "tags": [], "level": "fatal"})),
            "/level: \"fatal\" is not one of [\"info\",\"error\"]"
        );
        assert_eq!(
            e(json!({"n": 1, "tags": [], "tree": {"id": "r", "children": [{"id": 7}]}})),
            "/tree/children/0/id: expected string, found integer"
        );
    }

    #[test]
    fn any_of_passes_when_one_option_matches() {
        let s = json!({"anyOf": [{"type": "string"}, {"type": "object", "required": ["a"]}]});
        assert_eq!(validate(&s, &json!("x")), Ok(()));
        assert_eq!(validate(&s, &json!({"a": 1})), Ok(()));
        assert!(validate(&s, &json!({"b": 1}))
            .unwrap_err()
            .starts_with("(root): matches none of anyOf"));
    }

    #[test]
    fn unknown_keywords_and_dangling_refs_fail_instead_of_passing() {
        assert!(validate(&json!({"pattern": "^a"}), &json!("b"))
            .unwrap_err()
            .contains("does not check"));
        assert!(validate(&json!({"$ref": "#/$defs/missing"}), &json!(1))
            .unwrap_err()
            .contains("names no definition"));
    }
}
