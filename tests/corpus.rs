//! Runs every compiler-generated kernel of `tests/corpus` (a copy of `../shared/corpus`) and
//! `tests/compilers` (more nvcc and clang output, same format) and checks its outputs as its
//! `launch.json` says; kernels that use instructions ptxjit does not support yet must be
//! listed in `NOT_YET_SUPPORTED` with their first such instruction.

use std::path::{Path, PathBuf};

use ptxjit::{Arg, DeviceBuffer, Dim3, LaunchConfig, Module};
use serde_json::Value;

/// (kernel folder, first unsupported opcode). Kept equal to the README's table.
const NOT_YET_SUPPORTED: &[(&str, &str)] = &[];

fn kernel_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for top in ["tests/corpus", "tests/compilers"] {
        let top = Path::new(env!("CARGO_MANIFEST_DIR")).join(top);
        for e in std::fs::read_dir(&top).unwrap_or_else(|e| panic!("{}: {e}", top.display())) {
            let p = e.unwrap().path();
            if p.join("launch.json").exists() {
                dirs.push(p);
            }
        }
    }
    dirs.sort();
    dirs
}

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
        "i16" => i16::from_le_bytes(take(2).try_into().unwrap()) as f64,
        "u16" => u16::from_le_bytes(take(2).try_into().unwrap()) as f64,
        "u8" => bytes[i] as f64,
        other => panic!("unknown dtype {other}"),
    }
}

fn elem_size(dtype: &str) -> usize {
    match dtype {
        "u8" | "i8" => 1,
        "f16" | "bf16" | "i16" | "u16" => 2,
        "f64" | "i64" | "u64" => 8,
        _ => 4,
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
fn run_kernel(dir: &Path) -> Result<Vec<String>, String> {
    let spec: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("launch.json")).unwrap()).unwrap();
    let module =
        Module::from_file(dir.join(spec["ptx"].as_str().unwrap())).map_err(|e| e.to_string())?;
    let kernel = module
        .kernel(spec["entry"].as_str().unwrap())
        .map_err(|e| e.to_string())?;
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    for p in spec["params"].as_array().unwrap() {
        let buffer = match p["kind"].as_str().unwrap() {
            "scalar" => {
                let hex = p["bytes_hex"].as_str().unwrap();
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                args.push(Arg::bytes(&bytes));
                None
            }
            "null_ptr" => {
                args.push(Arg::u64(0));
                None
            }
            "input" | "inout" => Some(
                DeviceBuffer::from_slice(
                    &std::fs::read(dir.join(p["file"].as_str().unwrap())).unwrap(),
                )
                .unwrap(),
            ),
            "output" => {
                let n =
                    p["count"].as_u64().unwrap() as usize * elem_size(p["dtype"].as_str().unwrap());
                Some(DeviceBuffer::zeroed(n).unwrap())
            }
            k => panic!("unknown param kind {k}"),
        };
        if let Some(b) = &buffer {
            args.push(Arg::buffer(b));
        }
        buffers.push(buffer);
    }
    let dim = |v: &Value| {
        let a: Vec<u32> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        Dim3::new(a[0], a[1], a[2])
    };
    let config = LaunchConfig {
        grid: dim(&spec["grid"]),
        block: dim(&spec["block"]),
        dynamic_shared_bytes: spec["dynamic_shared_bytes"].as_u64().unwrap_or(0) as u32,
    };
    kernel
        .launch_with(&config, &args)
        .map_err(|e| format!("launch failed: {e}"))?;
    let mut mismatches = Vec::new();
    for (p, b) in spec["params"].as_array().unwrap().iter().zip(&buffers) {
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
        match (run_kernel(dir), listed) {
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
