//! The CLI fits a person's terminal: every `--help` page wraps at 100 columns, and the shell
//! completions and the man page come out of the same argument definitions.

mod common;

use common::*;

const SUBCOMMANDS: &[&[&str]] = &[
    &[],
    &["collect"],
    &["ingest"],
    &["check"],
    &["rules"],
    &["explain"],
    &["report"],
    &["query"],
    &["trace"],
    &["diff"],
    &["verify"],
    &["demo"],
    &["completions"],
    &["man"],
];

#[test]
fn help_lines_fit_in_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    for sub in SUBCOMMANDS {
        let mut args: Vec<&str> = sub.to_vec();
        args.push("--help");
        let out = tripline(dir.path(), &args);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Usage:"), "{args:?}: {text}");
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "`tripline {}` help line of {} columns: {line}",
                args.join(" "),
                line.chars().count()
            );
        }
    }
}

#[test]
fn completions_and_man_page_cover_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = tripline(dir.path(), &["completions", "bash"]);
    assert!(out.status.success());
    let bash = String::from_utf8(out.stdout).unwrap();
    let out = tripline(dir.path(), &["man"]);
    assert!(out.status.success());
    let man = String::from_utf8(out.stdout).unwrap();
    assert!(
        man.starts_with(".ie") || man.contains(".TH tripline"),
        "{}",
        &man[..200.min(man.len())]
    );
    for sub in [
        "collect", "ingest", "check", "verify", "query", "trace", "diff",
    ] {
        assert!(bash.contains(sub), "bash completion lacks {sub}");
        assert!(man.contains(sub), "man page lacks {sub}");
    }
    let out = tripline(dir.path(), &["completions", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
}
