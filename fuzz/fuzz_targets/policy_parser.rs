//! Policy files are written by hand: any text gives a policy or an error that names the problem,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = analyze::policy::Policy::parse(text, std::path::Path::new("fuzz.toml"));
    }
});
