//! Span kinds and status codes as the canonical `kind` / `status_code` columns spell them, declared
//! once for the converter (which writes them), the OTLP/JSON reader (which accepts them as enum
//! names), the round trip (which reads them back into OTLP numbers) and the analyzer's model.
//!
//! The stored spelling is the OTLP enum name without its prefix (`SERVER`, not
//! `SPAN_KIND_SERVER`); a number outside the enum is stored as its decimal text, so nothing is lost.

use std::borrow::Cow;

/// Declares an OTLP enum as the columns store it: the variants (discriminant = OTLP number),
/// their stored names, the OTLP/JSON enum-name prefix, and the lookups by number and by name.
/// Span kind and status code are both declared with it, so the lookups are written once.
macro_rules! otlp_enum {
    (
        $(#[$meta:meta])*
        $name:ident ($what:literal, prefix $prefix:literal, $len:literal) {
            $($variant:ident = $n:literal => $stored:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant = $n),+
        }

        impl $name {
            #[doc = concat!("Every ", $what, ", indexed by its OTLP number.")]
            pub const ALL: [$name; $len] = [$(Self::$variant),+];
            /// Stored names, indexed by OTLP number.
            pub const NAMES: [&'static str; $len] = [$($stored),+];
            #[doc = concat!("The OTLP/JSON enum name prefix (`", $prefix, "…`).")]
            pub const OTLP_PREFIX: &'static str = $prefix;

            /// The stored name.
            pub const fn as_str(self) -> &'static str {
                Self::NAMES[self as usize]
            }
            #[doc = concat!("The ", $what, " of an OTLP number, if it is one.")]
            pub fn from_otlp(n: i32) -> Option<Self> {
                usize::try_from(n)
                    .ok()
                    .and_then(|i| Self::ALL.get(i).copied())
            }
            #[doc = concat!("The ", $what, " a stored name spells, if it is one.")]
            pub fn parse(name: &str) -> Option<Self> {
                Self::NAMES
                    .iter()
                    .position(|n| *n == name)
                    .map(|i| Self::ALL[i])
            }
        }
    };
}

otlp_enum! {
    /// OTLP span kind. The discriminant is the OTLP number.
    SpanKind("kind", prefix "SPAN_KIND_", 6) {
        Unspecified = 0 => "UNSPECIFIED",
        Internal = 1 => "INTERNAL",
        Server = 2 => "SERVER",
        Client = 3 => "CLIENT",
        Producer = 4 => "PRODUCER",
        Consumer = 5 => "CONSUMER",
    }
}

otlp_enum! {
    /// OTLP status code. The discriminant is the OTLP number.
    StatusCode("code", prefix "STATUS_CODE_", 3) {
        Unset = 0 => "UNSET",
        Ok = 1 => "OK",
        Error = 2 => "ERROR",
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
        assert_eq!(SpanKind::from_otlp(6), None);
        assert_eq!(StatusCode::from_otlp(-1), None);
        assert_eq!(
            (SpanKind::OTLP_PREFIX, StatusCode::OTLP_PREFIX),
            ("SPAN_KIND_", "STATUS_CODE_")
        );
    }
}
