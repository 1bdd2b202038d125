//! What the seed servers' tools do: small, fixed business data (synthetic, like the seeds'
//! training data), returned the MCP way — `structuredContent` plus a back-compat text block, or,
//! for expected business failures (unknown ticket, unknown order), an `isError: true` tool result
//! rather than a protocol error (seed 004: a tool-execution error is not a transport failure).

use serde_json::{json, Map, Value};

use crate::catalog::{ServerKind, ServerVariant};

/// A tool's answer as MCP `CallToolResult` JSON.
pub fn call(
    server: ServerKind,
    variant: ServerVariant,
    tool: &str,
    args: &Map<String, Value>,
) -> Value {
    let s = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match (server, tool) {
        (ServerKind::Crm, "find_contact_by_email") => {
            let email = s("email");
            let found = email.starts_with("dana.lee@");
            let object = if found {
                json!({"ok": true, "contact_id": "C-1001", "name": "Dana Lee", "company": "Northwind GmbH", "tier": "gold"})
            } else {
                json!({"ok": false, "error": "no contact with that address"})
            };
            if variant.dict_result {
                // `-> dict`: no outputSchema, so the SDK returns the dict as a JSON text block only.
                unstructured(&object)
            } else {
                structured(object)
            }
        }
        (ServerKind::Crm, "add_timeline_note") => {
            structured(json!({"result": format!("note N-39038 added to {}", s("contact_id"))}))
        }
        (ServerKind::AtlasTickets, "search_tickets") => structured(json!({"tickets": [
            {"ticket_id": "SR-20031", "model_variant": s("model_variant"), "fault_code": "F-101",
             "symptom": "compressor overheats after 20 min", "part_fitted": "AC-250-S-TXV", "repair_minutes": 95},
            {"ticket_id": "SR-19877", "model_variant": s("model_variant"), "fault_code": "F-104",
             "symptom": "fan noise at start", "part_fitted": "AC-250-S-FAN", "repair_minutes": 40}
        ]})),
        (ServerKind::AtlasTickets, "get_ticket") => match s("ticket_id").as_str() {
            "SR-20031" => structured(json!({
                "ticket_id": "SR-20031", "customer": "Northwind GmbH", "site": "Plant 2, cold store B",
                "notes": "TXV stuck half-open; superheat 14 K. Replaced valve.",
                "resolution": "fitted AC-250-S-TXV"})),
            other => tool_error(&format!("ticket {other} not found")),
        },
        (ServerKind::AtlasTickets, "post_ticket_update") => {
            structured(json!({"result": format!("note appended to {}", s("ticket_id"))}))
        }
        (ServerKind::AtlasTickets, "export_service_records") => structured(json!({
            "result": format!("records for {} queued in the sandbox outbox", s("model_variant"))})),
        (ServerKind::AtlasParts, "find_part") => structured(json!({"parts": [
            {"part_no": "AC-250-S-TXV", "component": s("component"), "price_eur": 184.0, "in_stock": 3, "lead_time_days": 2}
        ]})),
        (ServerKind::AtlasParts, "check_availability") => structured(json!({
            "part_no": s("part_no"), "in_stock": 3, "lead_time_days": 2})),
        (ServerKind::AtlasParts, "raise_parts_order") => {
            let qty = args.get("quantity").and_then(Value::as_i64).unwrap_or(1);
            structured(
                json!({"result": format!("parts order PO-25876 placed: {qty} x {} for {}", s("part_no"), s("ticket_id"))}),
            )
        }
        (ServerKind::AtlasManuals, "search_manual") => structured(json!({"passages": [
            {"document": "AC-250 field maintenance manual", "revision": "C", "page": 88,
             "text": "Thermostatic expansion valve: recover refrigerant, replace valve, torque flare nuts to 18 Nm."}
        ]})),
        (ServerKind::AcmeSupport, "get_order_summary") => match s("order_id").as_str() {
            "ACME-1007" => structured(
                json!({"order_id": "ACME-1007", "placed_on": "2026-08-03", "paid_amount": 249.0, "currency": "EUR", "status": "delivered"}),
            ),
            other => tool_error(&format!("unknown order {other}")),
        },
        (ServerKind::AcmeSupport, "get_shipment_status") => match s("order_id").as_str() {
            "ACME-1007" => structured(
                json!({"order_id": "ACME-1007", "shipment_status": "delivered", "delivered_on": "2026-08-07"}),
            ),
            other => tool_error(&format!("unknown order {other}")),
        },
        (ServerKind::AcmeSupport, "get_invoice_summary") => match s("order_id").as_str() {
            "ACME-1007" => structured(
                json!({"order_id": "ACME-1007", "invoice_id": "INV-4471", "amount": 249.0, "paid": true}),
            ),
            other => tool_error(&format!("unknown order {other}")),
        },
        (ServerKind::AcmeSupport, "create_support_case") => {
            structured(json!({"case_id": "CASE-5120", "status": "open"}))
        }
        (ServerKind::SwCraft, "add_interface") => structured(json!({
            "result": format!("sender-receiver interface {} added with element {}", s("name"), s("element_name"))})),
        (ServerKind::SwCraft, "add_cs_interface") => structured(json!({
            "result": format!("client-server interface {} added with operation {}", s("name"), s("operation_name"))})),
        (ServerKind::SwCraft, "list_interfaces") => structured(json!({"interfaces": [
            {"name": "IVehicleSpeed", "kind": "sender-receiver", "elements": ["Speed"]}
        ]})),
        (ServerKind::SwCraft, "validate_model") => {
            structured(json!({"valid": true, "findings": []}))
        }
        (_, other) => tool_error(&format!("unknown tool {other}")),
    }
}

fn structured(object: Value) -> Value {
    let text = serde_json::to_string_pretty(&object).unwrap_or_default();
    json!({"content": [{"type": "text", "text": text}], "structuredContent": object, "isError": false})
}

fn unstructured(object: &Value) -> Value {
    let text = serde_json::to_string_pretty(object).unwrap_or_default();
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

fn tool_error(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

/// Text of a guide resource (`acme-support://guide/{topic}`).
pub fn guide(topic: &str) -> Option<&'static str> {
    match topic {
        "refund-evidence" => Some(
            "Refunds need the order date, the paid amount and proof of delivery or non-delivery.",
        ),
        "returns" => {
            Some("Returns are accepted within 30 days of delivery in the original packaging.")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn dict_variant_returns_json_text_without_structured_content() {
        let a = args(json!({"email": "dana.lee@example.com"}));
        let healthy = call(
            ServerKind::Crm,
            ServerVariant::default(),
            "find_contact_by_email",
            &a,
        );
        assert_eq!(healthy["structuredContent"]["contact_id"], json!("C-1001"));
        let dict = call(
            ServerKind::Crm,
            ServerVariant {
                dict_result: true,
                ..Default::default()
            },
            "find_contact_by_email",
            &a,
        );
        assert!(dict.get("structuredContent").is_none());
        let text = dict["content"][0]["text"].as_str().unwrap_or_default();
        let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        assert_eq!(parsed["contact_id"], json!("C-1001"));
    }

    #[test]
    fn unknown_business_ids_are_tool_errors() {
        let r = call(
            ServerKind::AcmeSupport,
            ServerVariant::default(),
            "get_order_summary",
            &args(json!({"order_id": "ACME-9999"})),
        );
        assert_eq!(r["isError"], json!(true));
        assert_eq!(r["content"][0]["text"], json!("unknown order ACME-9999"));
        let ok = call(
            ServerKind::AtlasTickets,
            ServerVariant::default(),
            "get_ticket",
            &args(json!({"ticket_id": "SR-20031"})),
        );
        assert_eq!(ok["isError"], json!(false));
    }
}
