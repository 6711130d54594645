//! Mutated kernels compiled in their lane-group (hot) form and launched on 8,192 threads:
//! a diagnostic, a launch error or a result, never a panic, a crash or a hang.
//!
//! Every 8-byte parameter gets its own zeroed 64 KiB buffer, every other parameter the
//! input's first bytes; a launch ends at its timeout. The lane-group form is compiled with
//! the module (`LaneGroups::Always`), so that a failure of that compile is a finding here,
//! not the silent fallback to the one-thread form that launches get.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

const GRID: u32 = 32;
const BLOCK: u32 = 256;
const BUFFER_BYTES: usize = 64 << 10;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = CompileOptions {
        lane_groups: LaneGroups::Always,
        ..CompileOptions::default()
    };
    let Ok(module) = Module::from_ptx_named("fuzz.ptx", text, &opts) else {
        return;
    };
    for name in module.kernel_names().iter().take(2) {
        let Ok(kernel) = module.kernel(name) else {
            continue;
        };
        let kernel = kernel.with_timeout(Some(Duration::from_millis(200)));
        let mut buffers = Vec::new();
        let mut args = Vec::new();
        for p in kernel.params() {
            if p.size == 8 && p.array.is_none() {
                let Ok(b) = DeviceBuffer::zeroed(BUFFER_BYTES) else {
                    return;
                };
                args.push(Arg::buffer(&b));
                buffers.push(b);
            } else {
                let bytes: Vec<u8> = (0..p.size as usize)
                    .map(|i| data.get(i).copied().unwrap_or(0))
                    .collect();
                args.push(Arg::bytes(&bytes));
            }
        }
        if let Err(e) = kernel.launch(GRID, BLOCK, &args) {
            let _ = e.to_string();
        }
    }
});
