//! Span kinds and status codes as the canonical `kind` / `status_code` columns spell them, declared
//! once for the converter (which writes them), the OTLP/JSON reader (which accepts them as enum
//! names), the round trip (which reads them back into OTLP numbers) and the analyzer's model.
//!
//! The stored spelling is the OTLP enum name without its prefix (`SERVER`, not
//! `SPAN_KIND_SERVER`); a number outside the enum is stored as its decimal text, so nothing is lost.

use std::borrow::Cow;

/// OTLP span kind. The discriminant is the OTLP number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpanKind {
    Unspecified = 0,
    Internal = 1,
    Server = 2,
    Client = 3,
    Producer = 4,
    Consumer = 5,
}

impl SpanKind {
    /// Every kind, indexed by its OTLP number.
    pub const ALL: [SpanKind; 6] = [
        Self::Unspecified,
        Self::Internal,
        Self::Server,
        Self::Client,
        Self::Producer,
        Self::Consumer,
    ];
    /// Stored names, indexed by OTLP number.
    pub const NAMES: [&'static str; 6] = [
        "UNSPECIFIED",
        "INTERNAL",
        "SERVER",
        "CLIENT",
        "PRODUCER",
        "CONSUMER",
    ];
    /// The OTLP/JSON enum name prefix (`SPAN_KIND_SERVER`).
    pub const OTLP_PREFIX: &'static str = "SPAN_KIND_";

    /// The stored name.
    pub const fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
    /// The kind of an OTLP number, if it is one.
    pub fn from_otlp(n: i32) -> Option<Self> {
        usize::try_from(n)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }
    /// The kind a stored name spells, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }
}

/// OTLP status code. The discriminant is the OTLP number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatusCode {
    Unset = 0,
    Ok = 1,
    Error = 2,
}

impl StatusCode {
    /// Every code, indexed by its OTLP number.
    pub const ALL: [StatusCode; 3] = [Self::Unset, Self::Ok, Self::Error];
    /// Stored names, indexed by OTLP number.
    pub const NAMES: [&'static str; 3] = ["UNSET", "OK", "ERROR"];
    /// The OTLP/JSON enum name prefix (`STATUS_CODE_ERROR`).
    pub const OTLP_PREFIX: &'static str = "STATUS_CODE_";

    /// The stored name.
    pub const fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
    /// The code of an OTLP number, if it is one.
    pub fn from_otlp(n: i32) -> Option<Self> {
        usize::try_from(n)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }
    /// The code a stored name spells, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }
}

/// Span kind as stored: the enum name without prefix, or the number for unknown kinds.
pub fn kind_name(kind: i32) -> Cow<'static, str> {
    SpanKind::from_otlp(kind).map_or_else(|| kind.to_string().into(), |k| k.as_str().into())
}

/// Status code as stored: `UNSET` | `OK` | `ERROR`, or the number for unknown codes.
pub fn status_name(code: i32) -> Cow<'static, str> {
    StatusCode::from_otlp(code).map_or_else(|| code.to_string().into(), |c| c.as_str().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_otlp_numbers() {
        for (i, k) in SpanKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
            assert_eq!(SpanKind::parse(k.as_str()), Some(*k));
            assert_eq!(kind_name(i as i32), k.as_str());
        }
        for (i, c) in StatusCode::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert_eq!(StatusCode::parse(c.as_str()), Some(*c));
            assert_eq!(status_name(i as i32), c.as_str());
        }
        assert_eq!(kind_name(9), "9");
        assert_eq!(status_name(-1), "-1");
        assert_eq!(SpanKind::parse("SPAN_KIND_SERVER"), None);
    }
}
