//! Which policy files a caller may name. The `check` and `trace` tools take a policy path from
//! the MCP client, and a path built from an untrusted value must not reach an arbitrary file
//! (the policy parser's error quotes the line it failed on). So the file must resolve, after
//! symlinks, to a regular file under one of the server's policy roots: its working directory by
//! default, or the directories given with `--policy-root`.
//!
//! A path that does not exist and a path outside the roots get the same answer, so a remote
//! caller cannot probe which files exist on the machine.

use std::path::{Path, PathBuf};

use crate::error::ToolError;

/// Resolves `requested` (relative paths against the working directory) to a policy file under
/// one of `roots` (each already canonical).
pub fn vet(roots: &[PathBuf], requested: &str) -> Result<PathBuf, ToolError> {
    let refuse = || {
        let listed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        ToolError::BadArgument(format!(
            "policy {requested:?} is not a readable file under the server's policy roots ({}); name a file under one of them, or start `tripline mcp` with --policy-root DIR",
            listed.join(", ")
        ))
    };
    if requested.trim().is_empty() {
        return Err(refuse());
    }
    let resolved = Path::new(requested).canonicalize().map_err(|_| refuse())?;
    if !resolved.is_file() || !roots.iter().any(|root| resolved.starts_with(root)) {
        return Err(refuse());
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_under_a_root_pass() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let roots = vec![root.path().canonicalize().unwrap()];
        let inside = root.path().join("policy.toml");
        std::fs::write(&inside, "").unwrap();
        let other = outside.path().join("policy.toml");
        std::fs::write(&other, "").unwrap();

        assert_eq!(
            vet(&roots, inside.to_str().unwrap()).unwrap(),
            inside.canonicalize().unwrap()
        );
        let escape = root.path().join("..").join(
            outside
                .path()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
                + "/policy.toml",
        );
        for bad in [
            other.to_str().unwrap(),
            escape.to_str().unwrap(),
            root.path().to_str().unwrap(),
            "/etc/passwd",
            "",
        ] {
            let e = vet(&roots, bad).unwrap_err().to_string();
            assert!(e.contains("is not a readable file under"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_symlink_out_of_the_root_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("secret.toml");
        std::fs::write(&target, "").unwrap();
        let link = root.path().join("policy.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let roots = vec![root.path().canonicalize().unwrap()];
        assert!(vet(&roots, link.to_str().unwrap()).is_err());
    }

    #[test]
    fn missing_and_outside_files_get_the_same_message() {
        let root = tempfile::tempdir().unwrap();
        let roots = vec![root.path().canonicalize().unwrap()];
        let missing = vet(&roots, "/nonexistent/p.toml").unwrap_err().to_string();
        let outside = vet(&roots, "/etc/hostname").unwrap_err().to_string();
        assert_eq!(
            missing.replace("/nonexistent/p.toml", "X"),
            outside.replace("/etc/hostname", "X")
        );
    }
}
