//! The MCP servers of the seed systems and the tool contracts they publish.
//!
//! Names, descriptions, schemas and annotations follow the seed documents (CRM assistant, Atlas
//! field service, SWCraft, Tiny-Agent support). A server *variant* changes what a server publishes
//! the way the seeds' failure modes do: a `-> dict` tool without `outputSchema`, annotations left at
//! the pessimistic defaults, a catalog that grew a near-duplicate tool.

use serde_json::{json, Value};

/// One MCP server process the generator can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Crm,
    AtlasTickets,
    AtlasParts,
    AtlasManuals,
    AcmeSupport,
    SwCraft,
}

impl ServerKind {
    pub const ALL: [ServerKind; 6] = [
        ServerKind::Crm,
        ServerKind::AtlasTickets,
        ServerKind::AtlasParts,
        ServerKind::AtlasManuals,
        ServerKind::AcmeSupport,
        ServerKind::SwCraft,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Crm => "crm",
            ServerKind::AtlasTickets => "atlas-tickets",
            ServerKind::AtlasParts => "atlas-parts",
            ServerKind::AtlasManuals => "atlas-manuals",
            ServerKind::AcmeSupport => "acme-support",
            ServerKind::SwCraft => "swcraft",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// `service.name` of the server process (the MCP server's own name in the seeds).
    pub fn service_name(self) -> &'static str {
        match self {
            ServerKind::Crm => "crm-mcp-server",
            ServerKind::AtlasTickets => "atlas.field-service.tickets",
            ServerKind::AtlasParts => "atlas.field-service.parts",
            ServerKind::AtlasManuals => "atlas.field-service.manuals",
            ServerKind::AcmeSupport => "acme-support-mcp",
            ServerKind::SwCraft => "swcraft-mcp",
        }
    }
}

/// How a server deviates from its healthy contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerVariant {
    /// CRM: `find_contact_by_email` is declared `-> dict`: no `outputSchema`, result as a JSON text
    /// block and no `structuredContent` (seed 000).
    pub dict_result: bool,
    /// Atlas: tools published with the seed's original annotations (`raise_parts_order` left
    /// unannotated, so the pessimistic defaults say *prohibited* while the host says
    /// *requires_approval*) instead of annotations aligned with the host registry.
    pub seed_annotations: bool,
    /// SWCraft: catalog v2, which added `add_cs_interface` beside `add_interface` (seed 002).
    pub catalog_v2: bool,
    /// The server returns `isError` results but does not mark its span (no `error.type`, status
    /// left unset): the masked tool error.
    pub mask_errors: bool,
}

impl ServerVariant {
    /// Flags as command-line words, for passing the variant to a server subprocess.
    pub fn to_args(self) -> Vec<String> {
        let mut v = Vec::new();
        if self.dict_result {
            v.push("dict-result".to_string());
        }
        if self.seed_annotations {
            v.push("seed-annotations".to_string());
        }
        if self.catalog_v2 {
            v.push("catalog-v2".to_string());
        }
        if self.mask_errors {
            v.push("mask-errors".to_string());
        }
        v
    }

    pub fn from_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut v = ServerVariant::default();
        for w in words {
            match w {
                "dict-result" => v.dict_result = true,
                "seed-annotations" => v.seed_annotations = true,
                "catalog-v2" => v.catalog_v2 = true,
                "mask-errors" => v.mask_errors = true,
                other => return Err(other.to_string()),
            }
        }
        Ok(v)
    }
}

fn read_only() -> Value {
    json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
}

/// A write that is neither destructive nor open-world: the class *requires_approval*.
fn additive_write() -> Value {
    json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn result_schema() -> Value {
    object(json!({"result": {"type": "string"}}), &["result"])
}

fn tool(
    name: &str,
    description: &str,
    input: Value,
    output: Option<Value>,
    annotations: Option<Value>,
) -> Value {
    let mut t = json!({"name": name, "description": description, "inputSchema": input});
    if let Some(o) = output {
        t["outputSchema"] = o;
    }
    if let Some(a) = annotations {
        t["annotations"] = a;
    }
    t
}

/// The `tools/list` entries (MCP `Tool` JSON) a server publishes in a variant.
pub fn tools(server: ServerKind, variant: ServerVariant) -> Vec<Value> {
    match server {
        ServerKind::Crm => vec![
            tool(
                "find_contact_by_email",
                "Look up a CRM contact by e-mail address.",
                object(json!({"email": {"type": "string"}}), &["email"]),
                (!variant.dict_result).then(|| {
                    json!({"type": "object", "properties": {
                        "ok": {"type": "boolean"}, "contact_id": {"type": "string"},
                        "name": {"type": "string"}, "company": {"type": "string"},
                        "tier": {"type": "string"}, "error": {"type": "string"}},
                        "required": ["ok"]})
                }),
                Some(read_only()),
            ),
            tool(
                "add_timeline_note",
                "Append a note to the contact's CRM timeline (write).",
                object(json!({"contact_id": {"type": "string"}, "note": {"type": "string", "maxLength": 2000}}), &["contact_id", "note"]),
                Some(result_schema()),
                Some(additive_write()),
            ),
        ],
        ServerKind::AtlasTickets => vec![
            tool(
                "search_tickets",
                "Search closed service-ticket history for one specific machine variant. Use this FIRST when you need to know how a fault was diagnosed and repaired before on the same equipment. Pass the reported symptom in the `symptom` argument; results are ranked by how closely previous symptoms match it.",
                object(json!({"model_variant": {"type": "string"}, "symptom": {"type": "string"}}), &["model_variant", "symptom"]),
                Some(object(json!({"tickets": {"type": "array", "items": {"type": "object"}}}), &["tickets"])),
                Some(read_only()),
            ),
            tool(
                "get_ticket",
                "Fetch one complete service ticket by its identifier, for example 'SR-20031'. Returns a single ticket or an error if the identifier does not exist.",
                object(json!({"ticket_id": {"type": "string", "pattern": "^SR-\\d{5}$"}}), &["ticket_id"]),
                Some(object(json!({"ticket_id": {"type": "string"}, "customer": {"type": "string"}, "site": {"type": "string"}, "notes": {"type": "string"}, "resolution": {"type": "string"}}), &["ticket_id"])),
                Some(read_only()),
            ),
            tool(
                "post_ticket_update",
                "Append a diagnostic note to an open service ticket. Additive only: it never edits or deletes an existing note.",
                object(json!({"ticket_id": {"type": "string", "pattern": "^SR-\\d{5}$"}, "note": {"type": "string", "maxLength": 2000}}), &["ticket_id", "note"]),
                Some(result_schema()),
                Some(if variant.seed_annotations {
                    json!({"destructiveHint": false, "openWorldHint": false})
                } else {
                    additive_write()
                }),
            ),
            tool(
                "export_service_records",
                "Send a bundle of service records, including site contacts, to an external recipient outside the organisation. Use only when a customer has formally requested their records in writing and a service manager approved it.",
                object(json!({"recipient": {"type": "string", "maxLength": 200}, "model_variant": {"type": "string"}, "include_site_contacts": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 500}}), &["recipient", "model_variant"]),
                Some(result_schema()),
                // Unannotated in the seed: the pessimistic defaults (prohibited) match the registry.
                None,
            ),
        ],
        ServerKind::AtlasParts => vec![
            tool(
                "find_part",
                "Look up spare parts in the catalogue for one specific machine variant, turning a component category such as 'thermostatic-valve' into a real part number with price, stock and lead time.",
                object(json!({"model_variant": {"type": "string"}, "component": {"type": "string"}}), &["model_variant", "component"]),
                Some(object(json!({"parts": {"type": "array", "items": {"type": "object"}}}), &["parts"])),
                Some(read_only()),
            ),
            tool(
                "check_availability",
                "Return current stock quantity and supplier lead time in days for one part number. Read only.",
                object(json!({"part_no": {"type": "string"}}), &["part_no"]),
                Some(object(json!({"part_no": {"type": "string"}, "in_stock": {"type": "integer"}, "lead_time_days": {"type": "integer"}}), &["part_no", "in_stock", "lead_time_days"])),
                Some(read_only()),
            ),
            tool(
                "raise_parts_order",
                "Raise a chargeable parts order against a customer account. This commits spend and cannot be recalled once the supplier accepts it. Requires explicit human approval.",
                object(json!({"part_no": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}, "ticket_id": {"type": "string"}}), &["part_no", "quantity", "ticket_id"]),
                Some(result_schema()),
                (!variant.seed_annotations).then(additive_write),
            ),
        ],
        ServerKind::AtlasManuals => vec![tool(
            "search_manual",
            "Search operator and field-maintenance manuals for a procedure, specification or torque figure. Pass product_family such as 'AC-250' to keep results on the right machine.",
            object(json!({"product_family": {"type": "string"}, "query": {"type": "string"}}), &["product_family", "query"]),
            Some(object(json!({"passages": {"type": "array", "items": {"type": "object"}}}), &["passages"])),
            Some(read_only()),
        )],
        ServerKind::AcmeSupport => vec![
            tool(
                "get_order_summary",
                "Return the order date, paid amount and status of one order, e.g. 'ACME-1007'.",
                object(json!({"order_id": {"type": "string"}}), &["order_id"]),
                Some(object(json!({"order_id": {"type": "string"}, "placed_on": {"type": "string"}, "paid_amount": {"type": "number"}, "currency": {"type": "string"}, "status": {"type": "string"}}), &["order_id"])),
                Some(read_only()),
            ),
            tool(
                "get_shipment_status",
                "Return the shipment status and delivery date of one order.",
                object(json!({"order_id": {"type": "string"}}), &["order_id"]),
                Some(object(json!({"order_id": {"type": "string"}, "shipment_status": {"type": "string"}, "delivered_on": {"type": "string"}}), &["order_id"])),
                Some(read_only()),
            ),
            tool(
                "get_invoice_summary",
                "Return the invoice number, amount and payment state of one order.",
                object(json!({"order_id": {"type": "string"}}), &["order_id"]),
                Some(object(json!({"order_id": {"type": "string"}, "invoice_id": {"type": "string"}, "amount": {"type": "number"}, "paid": {"type": "boolean"}}), &["order_id"])),
                Some(read_only()),
            ),
            tool(
                "create_support_case",
                "Open a support case for an order. State-changing: creates a case record that support staff will work on.",
                object(json!({"order_id": {"type": "string"}, "reason": {"type": "string"}}), &["order_id", "reason"]),
                Some(object(json!({"case_id": {"type": "string"}, "status": {"type": "string"}}), &["case_id", "status"])),
                Some(additive_write()),
            ),
        ],
        ServerKind::SwCraft => {
            let mut v = vec![
                tool(
                    "add_interface",
                    "Create a sender-receiver interface with one data element in the AUTOSAR model.",
                    object(json!({"name": {"type": "string"}, "element_name": {"type": "string"}, "element_type": {"type": "string"}}), &["name", "element_name", "element_type"]),
                    Some(result_schema()),
                    Some(additive_write()),
                ),
                tool(
                    "list_interfaces",
                    "List the interfaces defined in the model with their kind and elements.",
                    object(json!({}), &[]),
                    Some(object(json!({"interfaces": {"type": "array", "items": {"type": "object"}}}), &["interfaces"])),
                    Some(read_only()),
                ),
                tool(
                    "validate_model",
                    "Run the deterministic model validators and return the findings.",
                    object(json!({}), &[]),
                    Some(object(json!({"valid": {"type": "boolean"}, "findings": {"type": "array", "items": {"type": "string"}}}), &["valid", "findings"])),
                    Some(read_only()),
                ),
            ];
            if variant.catalog_v2 {
                v.insert(
                    1,
                    tool(
                        "add_cs_interface",
                        "Create a client-server interface with one operation in the AUTOSAR model.",
                        object(json!({"name": {"type": "string"}, "operation_name": {"type": "string"}, "arguments": {"type": "array", "items": {"type": "object"}}}), &["name", "operation_name"]),
                        Some(result_schema()),
                        Some(additive_write()),
                    ),
                );
            }
            v
        }
    }
}

/// Resource templates a server publishes (`uriTemplate`, name, description).
pub fn resource_templates(server: ServerKind) -> Vec<Value> {
    match server {
        ServerKind::AcmeSupport => vec![json!({
            "uriTemplate": "acme-support://guide/{topic}",
            "name": "support-guide",
            "description": "Support guide pages (refund-evidence, returns, overheating)."
        })],
        _ => Vec::new(),
    }
}

/// Prompts a server publishes.
pub fn prompts(server: ServerKind) -> Vec<Value> {
    match server {
        ServerKind::AcmeSupport => vec![json!({
            "name": "prepare_case_summary",
            "description": "Summarise an order's facts for a support case.",
            "arguments": [
                {"name": "order_id", "required": true},
                {"name": "audience", "required": false}
            ]
        })],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dict_variant_drops_only_the_output_schema_of_find_contact() {
        let healthy = tools(ServerKind::Crm, ServerVariant::default());
        let dict = tools(
            ServerKind::Crm,
            ServerVariant {
                dict_result: true,
                ..Default::default()
            },
        );
        assert!(healthy[0].get("outputSchema").is_some());
        assert!(dict[0].get("outputSchema").is_none());
        assert_eq!(healthy[1], dict[1]);
    }

    #[test]
    fn catalog_v2_adds_the_near_duplicate_beside_add_interface() {
        let names = |v: ServerVariant| -> Vec<String> {
            tools(ServerKind::SwCraft, v)
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                .collect()
        };
        assert_eq!(
            names(ServerVariant::default()),
            ["add_interface", "list_interfaces", "validate_model"]
        );
        assert_eq!(
            names(ServerVariant {
                catalog_v2: true,
                ..Default::default()
            }),
            [
                "add_interface",
                "add_cs_interface",
                "list_interfaces",
                "validate_model"
            ]
        );
    }

    #[test]
    fn seed_annotations_leave_raise_parts_order_unannotated() {
        let seed = tools(
            ServerKind::AtlasParts,
            ServerVariant {
                seed_annotations: true,
                ..Default::default()
            },
        );
        assert!(seed[2].get("annotations").is_none());
        let aligned = tools(ServerKind::AtlasParts, ServerVariant::default());
        assert_eq!(aligned[2]["annotations"]["readOnlyHint"], json!(false));
        assert_eq!(aligned[2]["annotations"]["destructiveHint"], json!(false));
    }

    #[test]
    fn variant_words_round_trip() {
        let v = ServerVariant {
            dict_result: true,
            mask_errors: true,
            ..Default::default()
        };
        let words = v.to_args();
        assert_eq!(
            ServerVariant::from_words(words.iter().map(String::as_str)),
            Ok(v)
        );
        assert_eq!(
            ServerVariant::from_words(["bogus"]),
            Err("bogus".to_string())
        );
    }
}
