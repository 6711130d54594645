//! Bits recorded on an NVIDIA GPU (issue 17): ptxjit must give the same.
//!
//! `tools/gpu-truth/gpu_truth.py record DIR` runs each instruction form's kernel on the CUDA
//! driver's device and writes `DIR/<form>.truth.gz` (one JSON line: the form, its PTX, the
//! launch; then the three input buffers and the output, each as byte planes) and
//! `DIR/MANIFEST.json` (the machine, the date, the command, the recordings). This test runs every recording's PTX on
//! its inputs and compares the output bit for bit.
//!
//! Where: `tests/hardware/h200/`, recorded on an NVIDIA H200 (its `MANIFEST.json` says how),
//! or the directory `PTXJIT_TRUTH_DIR` names — `tests/clients/gpu_truth.sh` records ptxjit
//! itself through its `libcuda.so.1` and checks the harness end to end that way.
//!
//! Every form must give the recorded bits, but the f32 functions of the GPU's multi-function
//! unit, which ptxjit models as correctly rounded inside the instruction sequences around it
//! (`semantics::mufu`): for those, [`APPROXIMATE`] bounds how many items differ and by how
//! much, at what ptxjit measured against these recordings, so that a change that makes any
//! of them worse fails.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use common::case::{elem_size, kernel_dirs, load_case};
use ptxjit::{Arg, CompileOptions, DeviceBuffer, Module};
use serde_json::Value;

/// One form's recording.
struct Recording {
    header: Value,
    inputs: Vec<Vec<u8>>,
    output: Vec<u8>,
}

fn read_recording(path: &Path) -> Recording {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let line_end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .expect("a header line");
    let header: Value = serde_json::from_slice(&bytes[..line_end]).expect("a JSON header");
    assert_eq!(header["layout"], "byte planes", "{}", path.display());
    let size = |key: &str| header[key].as_u64().unwrap_or_else(|| panic!("{key}")) as usize;
    let mut rest = &bytes[line_end + 1..];
    // `n` bytes of items of `item` bytes, stored as byte planes (byte 0 of every item, ...).
    let mut take = |n: usize, item: usize| {
        assert!(
            rest.len() >= n,
            "{}: shorter than its header says",
            path.display()
        );
        let (planes, r) = rest.split_at(n);
        rest = r;
        let items = n / item;
        (0..n)
            .map(|i| planes[(i % item) * items + i / item])
            .collect::<Vec<u8>>()
    };
    let inputs = header["in_bytes"]
        .as_array()
        .expect("in_bytes")
        .iter()
        .map(|n| take(n.as_u64().expect("a size") as usize, size("in_item_bytes")))
        .collect();
    let output = take(size("out_bytes"), size("out_item_bytes"));
    assert!(
        rest.is_empty(),
        "{}: longer than its header says",
        path.display()
    );
    Recording {
        header,
        inputs,
        output,
    }
}

/// Where the recordings are: `PTXJIT_TRUTH_DIR`, else `tests/hardware/h200`.
fn recordings_dir() -> PathBuf {
    match std::env::var_os("PTXJIT_TRUTH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hardware/h200"),
    }
}

/// A form ptxjit approximates: at most `differ` of its items differ from the recording,
/// each by at most `ulps` units in the last place or by at most `abs` in value.
struct Approximate {
    form: &'static str,
    differ: usize,
    ulps: u64,
    abs: f32,
}

const fn approx(form: &'static str, differ: usize, ulps: u64, abs: f32) -> Approximate {
    Approximate {
        form,
        differ,
        ulps,
        abs,
    }
}

/// The forms of the MUFU functions (`semantics::mufu`), as measured against
/// `tests/hardware/h200` (`cargo test --test hardware -- --nocapture` prints the figures).
/// The unit's reciprocal, square roots and powers of two are within one or two units of
/// correctly rounded; its sine, cosine and logarithm have an absolute error; `tanh` is
/// within the ISA's 2^-11 relative error.
const APPROXIMATE: &[Approximate] = &[
    approx("ex2.approx.f32", 534, 2, 0.0),
    approx("ex2.approx.ftz.f32", 556, 2, 0.0),
    approx("lg2.approx.f32", 3082, 2, 1.5258789e-5),
    approx("lg2.approx.ftz.f32", 3097, 2, 7.6293945e-6),
    approx("sin.approx.f32", 9207, 2, 3.2037497e-7),
    approx("sin.approx.ftz.f32", 9241, 2, 3.1292439e-7),
    approx("cos.approx.f32", 1490, 2, 2.9802322e-7),
    approx("cos.approx.ftz.f32", 1472, 2, 3.1292439e-7),
    approx("rsqrt.approx.f32", 2176, 2, 0.0),
    approx("rsqrt.approx.ftz.f32", 2155, 2, 0.0),
    approx("rcp.approx.f32", 1532, 1, 0.0),
    approx("rcp.approx.ftz.f32", 1548, 1, 0.0),
    approx("sqrt.approx.f32", 964, 1, 0.0),
    approx("sqrt.approx.ftz.f32", 934, 1, 0.0),
    approx("tanh.approx.f32", 690, 114, 0.0),
    approx("div.full.f32", 694, 2, 0.0),
    approx("div.full.ftz.f32", 641, 2, 0.0),
    approx("div.approx.f32", 624, 2, 0.0),
];

/// Distance in units in the last place between two f32s (bits), NaNs equal to each other.
fn ulps(a: u32, b: u32) -> u64 {
    let key = |x: u32| {
        if x & 0x8000_0000 != 0 {
            -((x & 0x7FFF_FFFF) as i64)
        } else {
            x as i64
        }
    };
    let nan = |x: u32| x & 0x7FFF_FFFF > 0x7F80_0000;
    if nan(a) && nan(b) {
        0
    } else {
        key(a).abs_diff(key(b))
    }
}

/// ptxjit's output for a recording's kernel and inputs, or its error.
fn run(r: &Recording) -> Result<Vec<u8>, String> {
    let h = &r.header;
    let module = Module::from_ptx(h["ptx"].as_str().expect("ptx")).map_err(|e| e.to_string())?;
    let kernel = module
        .kernel(h["kernel"].as_str().expect("kernel"))
        .map_err(|e| e.to_string())?;
    let buffers: Vec<DeviceBuffer> = r
        .inputs
        .iter()
        .map(|x| DeviceBuffer::from_slice(x))
        .chain([DeviceBuffer::zeroed(r.output.len())])
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let threads = h["threads"].as_u64().expect("threads") as u32;
    let block = h["block"].as_u64().expect("block") as u32;
    let mut args: Vec<Arg> = buffers.iter().map(Arg::buffer).collect();
    args.push(Arg::u32(threads));
    kernel
        .launch(threads.div_ceil(block), block, &args)
        .map_err(|e| e.to_string())?;
    Ok(buffers[3].to_bytes())
}

/// The items that differ, of `size` bytes: (index, recorded, ptxjit).
fn differences(recorded: &[u8], got: &[u8], size: usize) -> Vec<(usize, u64, u64)> {
    let item = |b: &[u8]| b.iter().rev().fold(0u64, |x, &y| x << 8 | y as u64);
    recorded
        .chunks(size)
        .zip(got.chunks(size))
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i, item(a), item(b)))
        .collect()
}

/// What is wrong with `diffs` of `form` (`items` in all), if anything: any difference for a
/// form not in [`APPROXIMATE`], else more differences, or larger ones, than it allows.
fn judge(form: &str, items: usize, diffs: &[(usize, u64, u64)]) -> Option<String> {
    let first = || {
        let f: Vec<String> = diffs
            .iter()
            .take(4)
            .map(|(i, a, b)| format!("item {i}: recorded {a:#x}, ptxjit {b:#x}"))
            .collect();
        f.join("; ")
    };
    let Some(bound) = APPROXIMATE.iter().find(|a| a.form == form) else {
        return (!diffs.is_empty())
            .then(|| format!("{form}: {} of {items} differ; {}", diffs.len(), first()));
    };
    let value = |x: u64| f32::from_bits(x as u32);
    let worst_ulps = diffs.iter().map(|&(_, a, b)| ulps(a as u32, b as u32));
    let worst_abs = diffs.iter().map(|&(_, a, b)| (value(a) - value(b)).abs());
    eprintln!(
        "{form}: {} of {items} differ, by at most {} ulps, {:e} in value",
        diffs.len(),
        worst_ulps.clone().max().unwrap_or(0),
        worst_abs.clone().fold(0f32, f32::max)
    );
    let beyond: Vec<&(usize, u64, u64)> = diffs
        .iter()
        .filter(|&&(_, a, b)| {
            ulps(a as u32, b as u32) > bound.ulps && (value(a) - value(b)).abs() > bound.abs
        })
        .collect();
    if diffs.len() > bound.differ || !beyond.is_empty() {
        Some(format!(
            "{form}: {} of {items} differ (at most {} allowed), {} beyond {} ulps and {:e}; {}",
            diffs.len(),
            bound.differ,
            beyond.len(),
            bound.ulps,
            bound.abs,
            first()
        ))
    } else {
        None
    }
}

#[test]
fn ptxjit_gives_the_recorded_bits_of_every_form() {
    let dir = recordings_dir();
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(dir.join("MANIFEST.json"))
            .unwrap_or_else(|e| panic!("{}/MANIFEST.json: {e}", dir.display())),
    )
    .expect("MANIFEST.json is JSON");
    let entries = manifest["recordings"].as_array().expect("recordings");
    assert!(!entries.is_empty(), "{}: no recordings", dir.display());
    let (mut compared, mut refused, mut failures) = (0, 0, Vec::new());
    for entry in entries {
        let form = entry["form"].as_str().expect("form");
        if !entry["error"].is_null() {
            // The device's driver refused the form: nothing to compare.
            refused += 1;
            continue;
        }
        let r = read_recording(&dir.join(entry["file"].as_str().expect("file")));
        assert_eq!(r.header["form"].as_str(), Some(form));
        compared += 1;
        match run(&r) {
            Err(e) => failures.push(format!("{form}: ptxjit fails: {e}")),
            Ok(got) => {
                let size = r.header["out_item_bytes"].as_u64().expect("item size") as usize;
                let diffs = differences(&r.output, &got, size);
                failures.extend(judge(form, r.output.len() / size, &diffs));
            }
        }
    }
    eprintln!(
        "{compared} forms compared, {refused} refused by the recording driver ({})",
        manifest["machine"]["gpu"]
    );
    assert!(
        failures.is_empty(),
        "{} of {compared} forms differ from {}:\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
}

/// The compiler kernels whose outputs differ from the GPU's only through the MUFU functions
/// (`APPROXIMATE`), and how many items of theirs differ on ptxjit (each within the kernel's own
/// check of its expected file, which `tests/corpus.rs` applies).
const APPROXIMATE_KERNELS: &[(&str, usize)] = &[
    ("tr_attention_sm80", 1),
    ("tr_attention_sm90", 1),
    ("tr_layer_norm_sm80", 7),
    ("tr_layer_norm_sm90", 7),
    ("tr_softmax_sm80", 18097),
    ("tr_softmax_sm90", 18097),
];

/// `tests/corpus` and `tests/compilers` ran on the H200 through its driver
/// (`gpu_truth.py corpus`; the outputs in `tests/hardware/h200/{corpus,compilers}`): ptxjit
/// gives every output buffer's bits, but where a kernel computes with the MUFU functions.
#[test]
fn ptxjit_gives_the_gpus_outputs_of_every_compiler_kernel() {
    let gpu = recordings_dir();
    let (mut compared, mut failures) = (0, Vec::new());
    for dir in kernel_dirs() {
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        let top = dir.parent().unwrap().file_name().unwrap();
        let recorded = gpu.join(top).join(&name);
        if !recorded.exists() {
            failures.push(format!("{name}: no GPU output in {}", recorded.display()));
            continue;
        }
        let case = load_case(&dir);
        let text = std::fs::read_to_string(&case.ptx).unwrap();
        let module = Module::from_ptx_named(&name, &text, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        module
            .kernel(&case.entry)
            .unwrap()
            .launch_with(&case.config, &case.args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut differ = 0;
        for (p, b) in case.spec["params"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&case.buffers)
        {
            if p.get("expected").is_none() {
                continue;
            }
            let file = recorded.join(format!("got_{}.bin", p["name"].as_str().unwrap()));
            let want = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let got = b.as_ref().unwrap().to_bytes();
            let size = elem_size(p["dtype"].as_str().unwrap());
            differ += differences(&want, &got, size).len();
        }
        compared += 1;
        let allowed = APPROXIMATE_KERNELS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |&(_, n)| n);
        eprintln!("{name}: {differ} items differ from the GPU's");
        if differ > allowed {
            failures.push(format!(
                "{name}: {differ} items differ from the GPU's (allowed {allowed})"
            ));
        }
    }
    eprintln!("{compared} kernels compared with the GPU's outputs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
