//! The frontend on any text: a diagnostic or a checked module, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(e) = ptxjit::check_ptx("fuzz.ptx", text)
    {
        // Formatting the diagnostic (line, caret) must not panic either.
        let _ = e.to_string();
    }
});
