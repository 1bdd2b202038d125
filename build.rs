//! Link options for the shipped `tripline` binary.
//!
//! Why a build script: Cargo profiles cannot carry linker flags on stable, and `RUSTFLAGS` or
//! `.cargo/config.toml` would change every crate's fingerprint (a full rebuild of the test
//! builds for a flag only the release link uses). A build script's link arguments reach this
//! package's binaries alone.
//!
//! `--icf=all`: identical code folding. Whole-program LTO still leaves byte-identical machine
//! code in several functions (generic code monomorphised for types that compile to the same
//! instructions, after LLVM's own function merging, which works on IR); LLD keeps one copy of
//! each. It took the release binary from 60,009,168 to 59,503,248 bytes (BENCHMARKS.md, session
//! 38). Rust promises nothing about the uniqueness of function addresses, so folding changes no
//! program's meaning; `--icf=safe` would fold only where LLVM's address-significance table
//! allows, but rustc's objects carry none here and it folded nothing (same size to the byte).
//! Only in release-like builds (`release`, `profiling`) on x86_64 Linux with the GNU target,
//! where rustc links with its bundled LLD by default; other linkers may not know the flag.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let release = var("PROFILE") == "release";
    let lld_by_default = var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if release && lld_by_default {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
}
