//! Secret and personal-data detectors for captured content.
//!
//! Each detector is a regular expression plus, where a format has one, a checksum (Luhn for card
//! numbers, ISO 13616 mod-97 for IBANs) so random digit runs, ids and timestamps do not count.
//! Matches are only counted, never returned: a finding must not copy the secret it found into
//! yet another report.

use std::sync::LazyLock;

use regex::Regex;

/// What was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    ApiKey,
    CreditCard,
    Iban,
    Email,
    Phone,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Self::ApiKey => "API key / bearer token",
            Self::CreditCard => "credit card number",
            Self::Iban => "IBAN",
            Self::Email => "e-mail address",
            Self::Phone => "phone number",
        }
    }
}

fn re(p: &str) -> Regex {
    // The patterns are constants checked by the tests below.
    Regex::new(p).unwrap_or_else(|e| panic!("invalid built-in pattern {p}: {e}"))
}

static API_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",
        r"|\bAKIA[0-9A-Z]{16}\b",
        r"|\bgh[pousr]_[A-Za-z0-9]{36,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{40,}",
        r"|\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"|(?i:\bbearer)\s+[A-Za-z0-9\-._~+/]{20,}=*",
        r"|-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----",
    ))
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
});
static CARD: LazyLock<Regex> = LazyLock::new(|| re(r"\b\d(?:[ \-]?\d){12,18}\b"));
static IBAN: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"));
/// International (`+49 30 1234567`, `+14155550123`) or grouped national (`(415) 555-0123`,
/// `030-1234-5678`) numbers.
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?:^|[^\w+\-])(\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)[ .\-]?)?\d{2,4}(?:[ .\-]?\d{2,4}){1,4})",
        r"|(?:^|[^\w\-])(\(\d{3}\) ?\d{3}[ .\-]\d{4}|\d{3}[.\-]\d{3}[.\-]\d{4})(?:[^\w\-]|$)",
    ))
});

/// The fewest ASCII digits a counted card number has ([`is_card_number`]).
const CARD_DIGITS: usize = 13;
/// The fewest ASCII digits a counted phone number has.
const PHONE_DIGITS: usize = 10;

/// Counts of each kind found in `text`.
///
/// A detector whose every counted match needs something `text` lacks is not run: an e-mail
/// address needs an `@`, a card number [`CARD_DIGITS`] ASCII digits and a phone number
/// [`PHONE_DIGITS`] (the checks below count ASCII digits of the match), so the counts are the
/// same, and most captured payloads (tool arguments and results of ids, dates and words) skip
/// two or three of the five scans (TL013 was 2.6% of a 1M-span `check`, session 24).
pub fn scan(text: &str) -> Vec<(Kind, usize)> {
    let ascii_digits = text.bytes().filter(u8::is_ascii_digit).count();
    let mut out = Vec::new();
    let mut add = |k: Kind, n: usize| {
        if n > 0 {
            out.push((k, n));
        }
    };
    add(Kind::ApiKey, API_KEY.find_iter(text).count());
    if ascii_digits >= CARD_DIGITS {
        add(
            Kind::CreditCard,
            CARD.find_iter(text)
                .filter(|m| is_card_number(m.as_str()))
                .count(),
        );
    }
    add(
        Kind::Iban,
        IBAN.find_iter(text)
            .filter(|m| iban_valid(m.as_str()))
            .count(),
    );
    if text.contains('@') {
        add(Kind::Email, EMAIL.find_iter(text).count());
    }
    if ascii_digits >= PHONE_DIGITS {
        add(
            Kind::Phone,
            PHONE
                .captures_iter(text)
                .filter_map(|c| c.get(1).or_else(|| c.get(2)))
                .filter(|m| (PHONE_DIGITS..=15).contains(&digits(m.as_str()).len()))
                .count(),
        );
    }
    out
}

fn digits(s: &str) -> Vec<u32> {
    s.chars().filter_map(|c| c.to_digit(10)).collect()
}

/// 13-19 digits, a card network prefix (Visa, Mastercard, Amex, Discover, JCB, UnionPay, Diners)
/// and a valid Luhn check digit.
pub fn is_card_number(s: &str) -> bool {
    let d = digits(s);
    if !(CARD_DIGITS..=19).contains(&d.len()) {
        return false;
    }
    let prefix2 = d[0] * 10 + d[1];
    let network = matches!(d[0], 4 | 6)
        || (51..=55).contains(&prefix2)
        || (22..=27).contains(&prefix2)
        || matches!(prefix2, 34 | 37 | 35 | 36 | 30);
    network && luhn(&d)
}

pub fn luhn(d: &[u32]) -> bool {
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 1 {
                let y = x * 2;
                if y > 9 {
                    y - 9
                } else {
                    y
                }
            } else {
                x
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// ISO 13616: move the first four characters to the end, letters to 10..35, mod 97 == 1.
pub fn iban_valid(s: &str) -> bool {
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if !(15..=34).contains(&compact.len()) {
        return false;
    }
    let (Some(head), Some(tail)) = (compact.get(..4), compact.get(4..)) else {
        return false;
    };
    let mut rem: u64 = 0;
    for c in tail.chars().chain(head.chars()) {
        let v = match c.to_digit(36) {
            Some(v) => u64::from(v),
            None => return false,
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, usize)> {
        scan(text)
    }

    #[test]
    fn finds_each_kind() {
        assert_eq!(
            kinds("mail sam.ortiz@example.com now"),
            vec![(Kind::Email, 1)]
        );
        assert_eq!(
            kinds("key sk-proj-abcdefghijklmnopqrstuvwx and AKIAIOSFODNN7EXAMPLE"),
            vec![(Kind::ApiKey, 2)]
        );
        assert_eq!(
            kinds("token ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            vec![(Kind::ApiKey, 1)]
        );
        assert_eq!(
            kinds("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"),
            vec![(Kind::ApiKey, 1)]
        );
        assert_eq!(
            kinds("card 4111 1111 1111 1111"),
            vec![(Kind::CreditCard, 1)]
        );
        assert_eq!(
            kinds("iban DE89 3704 0044 0532 0130 00"),
            vec![(Kind::Iban, 1)]
        );
        assert_eq!(kinds("iban GB82WEST12345698765432"), vec![(Kind::Iban, 1)]);
        assert_eq!(kinds("call +49 30 1234567 today"), vec![(Kind::Phone, 1)]);
        assert_eq!(kinds("call (415) 555-0123 today"), vec![(Kind::Phone, 1)]);
    }

    #[test]
    fn ignores_lookalikes() {
        // Luhn fails / no network prefix / a nanosecond timestamp / a bad IBAN checksum.
        assert!(kinds("card 4111 1111 1111 1112").is_empty());
        assert!(kinds("ts 1796019652296512447").is_empty());
        assert!(kinds("iban GB82WEST12345698765433").is_empty());
        assert!(kinds("order O-9001 ticket T-4712 on 2026-11-30 08:46").is_empty());
        assert!(kinds("trace 9458bb77ffeddd4f11225b9b436b904e").is_empty());
        assert!(kinds("uuid 123e4567-e89b-12d3-a456-426614174000").is_empty());
        assert!(kinds("sk-short").is_empty());
    }

    /// At the prefilters' bounds: the shortest card number (13 digits, Visa, Luhn-valid) and
    /// the shortest phone number (10 digits) are still found, and one digit fewer of either is
    /// not a card or phone number at all.
    #[test]
    fn the_shortest_numbers_pass_the_prefilters() {
        assert_eq!(kinds("card 4222222222222"), vec![(Kind::CreditCard, 1)]);
        assert_eq!(kinds("call (415) 555-0123"), vec![(Kind::Phone, 1)]);
        assert!(kinds("card 422222222222").is_empty());
        assert!(kinds("call (415) 555-012").is_empty());
        assert_eq!(kinds("a@b.co"), vec![(Kind::Email, 1)]);
    }

    #[test]
    fn checksums() {
        assert!(luhn(&digits("79927398713")));
        assert!(!luhn(&digits("79927398710")));
        assert!(is_card_number("378282246310005"));
        assert!(iban_valid("FR1420041010050500013M02606"));
    }
}
