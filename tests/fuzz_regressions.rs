//! Inputs the fuzzers found (`fuzz/`), kept: each must compile, in both forms, to code or a
//! diagnostic — never a panic. `slow_lane_groups_many_guards.ptx` (many guarded loads, each a
//! block per lane and per address check) took over 10 s to compile in its lane-group form
//! under the fuzzer's sanitizers and debug checks; a release build compiles it in ~0.3 s.

use ptxjit::{CompileOptions, LaneGroups, Module};

#[test]
fn every_fuzzer_finding_compiles_or_gets_a_diagnostic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for lane_groups in [LaneGroups::Off, LaneGroups::Always] {
            let opts = CompileOptions {
                lane_groups,
                ..CompileOptions::default()
            };
            let name = path.display().to_string();
            if let Err(e) = Module::from_ptx_named(&name, &text, &opts) {
                assert!(e.to_string().contains("error"), "{name}: {e}");
            }
        }
        files += 1;
    }
    assert!(files >= 1);
}
