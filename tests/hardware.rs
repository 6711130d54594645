//! Bits recorded on an NVIDIA GPU (issue 17): ptxjit must give the same.
//!
//! `tools/gpu-truth/gpu_truth.py record DIR` runs each instruction form's kernel on the CUDA
//! driver's device and writes `DIR/<form>.truth.gz` (one JSON line: the form, its PTX, the
//! launch; then the three input buffers and the output, each as byte planes) and
//! `DIR/MANIFEST.json` (the machine, the date, the command, the recordings). This test runs every recording's PTX on
//! its inputs and compares the output bit for bit.
//!
//! Where: `tests/hardware/` once a GPU recording is committed there (none yet: no GPU has been
//! available), or the directory `PTXJIT_TRUTH_DIR` names — `tests/clients/gpu_truth.sh`
//! records ptxjit itself through its `libcuda.so.1` and checks the harness end to end that way.

use std::io::Read;
use std::path::{Path, PathBuf};

use ptxjit::{Arg, DeviceBuffer, Module};
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

/// Where the recordings are: `PTXJIT_TRUTH_DIR`, else `tests/hardware` if it has any.
fn recordings_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PTXJIT_TRUTH_DIR") {
        return Some(PathBuf::from(dir));
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hardware");
    dir.join("MANIFEST.json").exists().then_some(dir)
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

/// How the output differs: the differing items' count and the first few (index, recorded,
/// ptxjit), items of `size` bytes.
fn differences(recorded: &[u8], got: &[u8], size: usize) -> (usize, Vec<String>) {
    let item = |b: &[u8]| b.iter().rev().fold(0u64, |x, &y| x << 8 | y as u64);
    let diffs: Vec<(usize, u64, u64)> = recorded
        .chunks(size)
        .zip(got.chunks(size))
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i, item(a), item(b)))
        .collect();
    let first = diffs
        .iter()
        .take(4)
        .map(|(i, a, b)| format!("item {i}: recorded {a:#x}, ptxjit {b:#x}"))
        .collect();
    (diffs.len(), first)
}

#[test]
fn ptxjit_gives_the_recorded_bits_of_every_form() {
    let Some(dir) = recordings_dir() else {
        eprintln!("no GPU recordings in tests/hardware (and PTXJIT_TRUTH_DIR unset)");
        return;
    };
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
                let (n, first) = differences(&r.output, &got, size);
                if n > 0 {
                    let items = r.output.len() / size;
                    failures.push(format!(
                        "{form}: {n} of {items} differ; {}",
                        first.join("; ")
                    ));
                }
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
