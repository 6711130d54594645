//! Parse, check and compile (both the one-thread and the lane-group form of every kernel,
//! confined): a diagnostic or code, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptxjit::{CompileOptions, LaneGroups};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(module) = ptxjit::check_ptx("fuzz.ptx", text) else {
        return;
    };
    for lane_groups in [LaneGroups::Off, LaneGroups::Always] {
        let opts = CompileOptions {
            lane_groups,
            ..CompileOptions::default()
        };
        if let Err(e) = ptxjit::jit::compile(&module, &opts) {
            let _ = e.to_string();
        }
    }
});
