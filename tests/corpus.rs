//! Runs every compiler-generated kernel of `tests/corpus` (a copy of `../shared/corpus`) and
//! `tests/compilers` (more nvcc and clang output, same format) and checks its outputs as its
//! `launch.json` says; kernels that use instructions ptxjit does not support yet must be
//! listed in `NOT_YET_SUPPORTED` with their first such instruction.

use std::path::Path;

mod common;

use common::case::{elem_size, kernel_dirs, load_case};
use ptxjit::{CompileOptions, LaneGroups, Module, OptLevel};
use serde_json::Value;

/// (kernel folder, first unsupported opcode). Kept equal to the README's table.
const NOT_YET_SUPPORTED: &[(&str, &str)] = &[];

/// Decodes element `i` of a little-endian buffer of `dtype` to f64 (exactly).
fn element(bytes: &[u8], dtype: &str, i: usize) -> f64 {
    let take = |n: usize| &bytes[i * n..(i + 1) * n];
    match dtype {
        "f16" => half::f16::from_bits(u16::from_le_bytes(take(2).try_into().unwrap())).to_f64(),
        "bf16" => half::bf16::from_bits(u16::from_le_bytes(take(2).try_into().unwrap())).to_f64(),
        "f32" => f32::from_le_bytes(take(4).try_into().unwrap()) as f64,
        "f64" => f64::from_le_bytes(take(8).try_into().unwrap()),
        "i32" => i32::from_le_bytes(take(4).try_into().unwrap()) as f64,
        "u32" => u32::from_le_bytes(take(4).try_into().unwrap()) as f64,
        // (Shown as f64 in messages only: exact checks compare the bytes.)
        "i64" => i64::from_le_bytes(take(8).try_into().unwrap()) as f64,
        "u64" => u64::from_le_bytes(take(8).try_into().unwrap()) as f64,
        "i16" => i16::from_le_bytes(take(2).try_into().unwrap()) as f64,
        "u16" => u16::from_le_bytes(take(2).try_into().unwrap()) as f64,
        "u8" => bytes[i] as f64,
        "i8" => bytes[i] as i8 as f64,
        other => panic!("unknown dtype {other}"),
    }
}

/// The spacing of `dtype` values near `x`.
fn ulp(dtype: &str, x: f64) -> f64 {
    let (mant, emin) = match dtype {
        "f16" => (10, -14),
        "bf16" => (7, -126),
        "f32" => (23, -126),
        _ => (52, -1022),
    };
    let e = if x == 0.0 {
        emin
    } else {
        (x.abs().log2().floor() as i32).max(emin)
    };
    2f64.powi(e - mant)
}

/// Compares one output; returns a description of the first mismatches.
fn check_output(dir: &Path, p: &Value, got: &[u8]) -> Result<(), String> {
    let dtype = p["dtype"].as_str().unwrap();
    let check = &p["check"];
    let expected = std::fs::read(dir.join(p["expected"].as_str().unwrap())).unwrap();
    let n = p["count"].as_u64().unwrap() as usize;
    let size = elem_size(dtype);
    let nan_any = check["nan"].as_str() == Some("any");
    let zero_sign_any = check["zero_sign"].as_str() == Some("any");
    let exact_f64 = p["expected_f64"]
        .as_str()
        .map(|f| std::fs::read(dir.join(f)).unwrap());
    let mut errors = Vec::new();
    for i in 0..n {
        let g = &got[i * size..(i + 1) * size];
        let e = &expected[i * size..(i + 1) * size];
        let (gv, ev) = (element(got, dtype, i), element(&expected, dtype, i));
        let ok = if check["mode"].as_str() == Some("approx") {
            let exact = exact_f64.as_ref().map_or(ev, |b| element(b, "f64", i));
            let atol = check["atol"].as_f64().unwrap_or(0.0);
            let rtol = check["rtol"].as_f64().unwrap_or(0.0);
            let ulps = check["ulps"].as_f64().unwrap_or(0.0);
            if exact.is_nan() {
                gv.is_nan()
            } else if exact.is_infinite() {
                gv == exact
            } else {
                (gv - exact).abs() <= atol + rtol * exact.abs() + ulps * ulp(dtype, exact)
            }
        } else {
            g == e
                || (nan_any && gv.is_nan() && ev.is_nan())
                || (zero_sign_any && gv == 0.0 && ev == 0.0)
        };
        if !ok && errors.len() < 5 {
            errors.push(format!(
                "[{i}] got {g:02x?} ({gv}), expected {e:02x?} ({ev})"
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {}", p["name"], errors.join("; ")))
    }
}

/// Runs one corpus kernel: Err(message) if compiling fails, Ok(mismatches) otherwise.
fn run_kernel(dir: &Path, opts: &CompileOptions) -> Result<Vec<String>, String> {
    let case = load_case(dir);
    let text = std::fs::read_to_string(&case.ptx).map_err(|e| e.to_string())?;
    let module = Module::from_ptx_named(&case.ptx.display().to_string(), &text, opts)
        .map_err(|e| e.to_string())?;
    let kernel = module.kernel(&case.entry).map_err(|e| e.to_string())?;
    kernel
        .launch_with(&case.config, &case.args)
        .map_err(|e| format!("launch failed: {e}"))?;
    let mut mismatches = Vec::new();
    for (p, b) in case.spec["params"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&case.buffers)
    {
        if p.get("expected").is_some()
            && let Err(m) = check_output(dir, p, &b.as_ref().unwrap().to_bytes())
        {
            mismatches.push(m);
        }
    }
    Ok(mismatches)
}

#[test]
fn every_corpus_kernel_passes_or_is_listed_as_not_yet_supported() {
    let dirs = kernel_dirs();
    assert!(
        dirs.len() >= 22,
        "expected the 15 corpus and 7 compiler kernels, found {}",
        dirs.len()
    );
    let mut failures = Vec::new();
    let mut passed = 0;
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_str().unwrap();
        let listed = NOT_YET_SUPPORTED.iter().find(|(n, _)| *n == name);
        match (run_kernel(dir, &CompileOptions::default()), listed) {
            (Ok(m), None) if m.is_empty() => passed += 1,
            (Ok(m), None) => failures.push(format!("{name}: wrong output: {}", m.join(" | "))),
            (Ok(_), Some(_)) => failures.push(format!(
                "{name} now compiles: remove it from NOT_YET_SUPPORTED and the README"
            )),
            (Err(e), Some((_, op))) if e.contains(&format!("unsupported instruction '{op}'")) => {
                println!("not yet supported: {name}: {op}");
            }
            (Err(e), _) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "{passed} kernels pass their checks, {} not yet supported",
        NOT_YET_SUPPORTED.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every supported kernel passes compiled with `opts`.
fn all_pass_with(opts: &CompileOptions) {
    for dir in kernel_dirs() {
        let name = dir.file_name().unwrap().to_str().unwrap();
        if NOT_YET_SUPPORTED.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let mismatches = run_kernel(&dir, opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(mismatches.is_empty(), "{name}: {}", mismatches.join(" | "));
    }
}

#[test]
fn every_supported_kernel_also_passes_in_lane_groups() {
    all_pass_with(&CompileOptions {
        lane_groups: LaneGroups::Always,
        ..CompileOptions::default()
    });
}

#[test]
fn every_supported_kernel_also_passes_one_thread_at_a_time() {
    all_pass_with(&CompileOptions {
        lane_groups: LaneGroups::Off,
        ..CompileOptions::default()
    });
}

#[test]
fn every_supported_kernel_also_passes_without_optimization_or_native_helpers() {
    // opt_level none also switches to the single-pass register allocator; without the
    // native helpers, the inline code of every f16x2 form runs too (in lane groups).
    all_pass_with(&CompileOptions {
        opt_level: OptLevel::None,
        native_helpers: None,
        lane_groups: LaneGroups::Always,
        ..CompileOptions::default()
    });
}
