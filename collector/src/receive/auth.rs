//! Optional bearer-token authentication. The token is compared in constant time so response
//! timing does not reveal how many leading bytes of a guess were right.

use std::path::Path;

/// The configured token could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("cannot read the auth token file {path}: {source}; check the path given to --auth-token-file")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the auth token file {path} is empty; put the token on its first line")]
    Empty { path: String },
}

/// Read the token: the file's content with surrounding whitespace removed.
pub fn load_token(path: &Path) -> Result<String, AuthError> {
    let text = std::fs::read_to_string(path).map_err(|source| AuthError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let token = text.trim().to_string();
    if token.is_empty() {
        return Err(AuthError::Empty {
            path: path.display().to_string(),
        });
    }
    Ok(token)
}

/// Whether an `Authorization` header value carries `expected` as a bearer token.
/// With no token configured every request is allowed.
pub fn authorized(expected: Option<&str>, header: Option<&[u8]>) -> bool {
    let Some(expected) = expected else {
        return true;
    };
    let Some(header) = header else {
        return false;
    };
    let Some(presented) = strip_bearer(header) else {
        return false;
    };
    constant_time_eq(presented, expected.as_bytes())
}

fn strip_bearer(header: &[u8]) -> Option<&[u8]> {
    const PREFIX: &[u8] = b"bearer ";
    if header.len() < PREFIX.len() || !header[..PREFIX.len()].eq_ignore_ascii_case(PREFIX) {
        return None;
    }
    Some(header[PREFIX.len()..].trim_ascii())
}

/// Compare without an early exit on the first differing byte (length is not secret).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_token_configured_allows_everything() {
        assert!(authorized(None, None));
    }

    #[test]
    fn bearer_token_must_match_exactly() {
        assert!(authorized(Some("s3cret"), Some(b"Bearer s3cret")));
        assert!(authorized(Some("s3cret"), Some(b"bearer s3cret ")));
        assert!(!authorized(Some("s3cret"), Some(b"Bearer s3cre")));
        assert!(!authorized(Some("s3cret"), Some(b"Bearer s3cret2")));
        assert!(!authorized(Some("s3cret"), Some(b"Basic s3cret")));
        assert!(!authorized(Some("s3cret"), None));
    }

    #[test]
    fn token_file_is_trimmed_and_must_not_be_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tok");
        std::fs::write(&p, "abc\n").unwrap();
        assert_eq!(load_token(&p).unwrap(), "abc");
        std::fs::write(&p, "  \n").unwrap();
        assert!(matches!(load_token(&p), Err(AuthError::Empty { .. })));
    }
}
