//! When are two tool names "near duplicates" a model may confuse?
//!
//! The signal is *same verb and object, told apart only by a qualifier*: `add_interface` vs
//! `add_cs_interface` (the seed 002 case: a qualifier token inserted, same head noun), not
//! `get_order_summary` vs `get_invoice_summary` (the object itself differs: two tools for two
//! things). Names are split into lowercase word tokens (snake, kebab, dotted and camelCase), a
//! plural `s` is dropped, and trailing version tokens (`v2`, `2`, `new`, `legacy`, ...) are
//! qualifiers too. Two names are near duplicates when
//! 1. their tool parts are equal but the full names differ (`crm/add_note` vs `cs__add_note`:
//!    the same tool from two servers);
//! 2. their tokens are equal after that normalisation (`get_contacts` vs `getContact`,
//!    `search_tickets_v2` vs `search_tickets`), or equal as a set (`interface_add`);
//! 3. the shorter one (at least two tokens) is a subsequence of the longer one, the longer one
//!    has one or two extra tokens, and both end in the same token (the object);
//! 4. or both carry descriptions of at least five content words that are 80% alike (Jaccard)
//!    and the names share a token.
//!
//! A single substituted token (`get_order_summary` / `get_invoice_summary`, `get_item` /
//! `set_item`) never matches: a different object or a different verb is a different tool.

use std::collections::BTreeSet;

use crate::model::ToolDef;
use crate::policy::tool_part;

const VERSION_TOKENS: &[&str] = &[
    "new",
    "old",
    "legacy",
    "beta",
    "alpha",
    "alt",
    "tmp",
    "copy",
    "latest",
    "next",
    "deprecated",
];
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "for", "to", "in", "on", "by", "and", "or", "with", "from", "this",
    "that", "is", "are", "it", "its", "as", "at", "be", "one", "all",
];
const MIN_DESCRIPTION_WORDS: usize = 5;
const DESCRIPTION_SIMILARITY: f64 = 0.8;

/// Why two tools are near duplicates, or None.
pub fn near_duplicate(a: &ToolDef, b: &ToolDef) -> Option<String> {
    if a.name == b.name {
        return None;
    }
    let (pa, pb) = (tool_part(&a.name), tool_part(&b.name));
    if pa == pb {
        return Some(format!("the same tool name {pa} from two servers"));
    }
    let (ta, tb) = (core_tokens(pa), core_tokens(pb));
    if ta.is_empty() || tb.is_empty() {
        return None;
    }
    if ta == tb {
        return Some("the same words apart from case, separators, plural or version".into());
    }
    if ta.len() == tb.len() && set(&ta) == set(&tb) {
        return Some("the same words in another order".into());
    }
    let (short, long) = if ta.len() <= tb.len() {
        (&ta, &tb)
    } else {
        (&tb, &ta)
    };
    let extra = long.len() - short.len();
    if short.len() >= 2
        && (1..=2).contains(&extra)
        && short.last() == long.last()
        && is_subsequence(short, long)
    {
        let added = added_tokens(short, long);
        return Some(format!(
            "the same verb and object; {} only adds the qualifier {}",
            if ta.len() > tb.len() {
                &a.name
            } else {
                &b.name
            },
            added.join(" ")
        ));
    }
    let shares_token = ta.iter().any(|t| tb.contains(t));
    if shares_token {
        if let (Some(da), Some(db)) = (&a.description, &b.description) {
            let (wa, wb) = (words(da), words(db));
            if wa.len() >= MIN_DESCRIPTION_WORDS && wb.len() >= MIN_DESCRIPTION_WORDS {
                let inter = wa.intersection(&wb).count() as f64;
                let union = wa.union(&wb).count() as f64;
                let j = inter / union;
                if j >= DESCRIPTION_SIMILARITY {
                    return Some(format!(
                        "descriptions {:.0}% alike and a shared name token",
                        j * 100.0
                    ));
                }
            }
        }
    }
    None
}

/// Lowercase word tokens of a name (snake, kebab, dotted, camelCase), plural `s` dropped.
pub fn tokens(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if !ch.is_alphanumeric() {
            push(&mut out, &mut cur);
            prev_lower = false;
            continue;
        }
        if ch.is_uppercase() && prev_lower {
            push(&mut out, &mut cur);
        }
        prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
        cur.extend(ch.to_lowercase());
    }
    push(&mut out, &mut cur);
    out
}

fn push(out: &mut Vec<String>, cur: &mut String) {
    if cur.is_empty() {
        return;
    }
    let mut t = std::mem::take(cur);
    if t.len() > 3 && t.ends_with('s') && !t.ends_with("ss") {
        t.pop();
    }
    out.push(t);
}

/// Tokens without trailing version qualifiers (`v2`, `2`, `legacy`, ...).
fn core_tokens(name: &str) -> Vec<String> {
    let mut t = tokens(name);
    while t.len() > 1 && t.last().is_some_and(|x| is_version(x)) {
        t.pop();
    }
    t
}

fn is_version(t: &str) -> bool {
    let digits = t.strip_prefix('v').unwrap_or(t);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        || VERSION_TOKENS.contains(&t)
}

fn set(t: &[String]) -> BTreeSet<&str> {
    t.iter().map(String::as_str).collect()
}

fn is_subsequence(short: &[String], long: &[String]) -> bool {
    let mut it = long.iter();
    short.iter().all(|s| it.any(|l| l == s))
}

/// Tokens of `long` not matched by the subsequence `short` (greedy, in order).
fn added_tokens<'a>(short: &[String], long: &'a [String]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut si = 0;
    for l in long {
        if si < short.len() && short[si] == *l {
            si += 1;
        } else {
            out.push(l.as_str());
        }
    }
    out
}

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, description: Option<&str>) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: description.map(Into::into),
            ..ToolDef::default()
        }
    }

    fn dup(a: &str, b: &str) -> Option<String> {
        near_duplicate(&def(a, None), &def(b, None))
    }

    #[test]
    fn tokens_split_every_naming_style() {
        assert_eq!(tokens("add_cs_interface"), ["add", "cs", "interface"]);
        assert_eq!(tokens("getContacts"), ["get", "contact"]);
        assert_eq!(tokens("search-tickets.v2"), ["search", "ticket", "v2"]);
        assert_eq!(tokens("HTTPRequest"), ["httprequest"]);
        assert_eq!(tokens("address"), ["address"]);
    }

    #[test]
    fn seed_002_qualifier_fires() {
        assert_eq!(
            dup("add_interface", "add_cs_interface").as_deref(),
            Some("the same verb and object; add_cs_interface only adds the qualifier cs")
        );
        assert!(dup("add_cs_interface", "add_interface").is_some());
        assert!(dup("cs_add_interface", "add_interface").is_some());
    }

    #[test]
    fn different_objects_or_verbs_do_not_fire() {
        assert_eq!(dup("get_order_summary", "get_invoice_summary"), None);
        assert_eq!(dup("get_item", "set_item"), None);
        assert_eq!(dup("get_order", "get_order_summary"), None);
        assert_eq!(dup("add_interface", "list_interfaces"), None);
        assert_eq!(dup("get_ticket", "search_tickets"), None);
    }

    #[test]
    fn spelling_variants_servers_and_order_fire() {
        assert!(dup("get_contacts", "getContact").is_some());
        assert!(dup("search_tickets", "search_tickets_v2").is_some());
        assert_eq!(
            dup("crm/add_note", "cs__add_note").as_deref(),
            Some("the same tool name add_note from two servers")
        );
        assert_eq!(
            dup("interface_add", "add_interface").as_deref(),
            Some("the same words in another order")
        );
    }

    #[test]
    fn similar_descriptions_need_a_shared_name_token() {
        let d = "Create a new sender receiver interface element in the model";
        let a = def("add_interface", Some(d));
        let b = def("create_interface_element", Some(d));
        assert_eq!(
            near_duplicate(&a, &b).as_deref(),
            Some("descriptions 100% alike and a shared name token")
        );
        let c = def("frobnicate", Some(d));
        assert_eq!(near_duplicate(&a, &c), None);
        let e = def(
            "get_order_summary",
            Some("Get an order summary with items and totals"),
        );
        let f = def(
            "get_invoice_summary",
            Some("Get an invoice summary with items and totals"),
        );
        assert_eq!(near_duplicate(&e, &f), None);
    }
}
