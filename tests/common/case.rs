//! A compiler-generated test kernel as its `launch.json` describes it: the PTX, the launch
//! configuration, and fresh argument buffers.

use std::path::{Path, PathBuf};

use ptxjit::tensor_map::{ElemType, TensorMap};
use ptxjit::{Arg, DeviceBuffer, Dim3, LaunchConfig};
use serde_json::Value;

pub struct Case {
    pub dir: PathBuf,
    pub spec: Value,
    pub ptx: PathBuf,
    pub entry: String,
    pub config: LaunchConfig,
    /// One per parameter: the buffer passed for it, if any.
    pub buffers: Vec<Option<DeviceBuffer>>,
    pub args: Vec<Arg>,
}

pub fn elem_size(dtype: &str) -> usize {
    match dtype {
        "u8" | "i8" => 1,
        "f16" | "bf16" | "i16" | "u16" => 2,
        "f64" | "i64" | "u64" => 8,
        _ => 4,
    }
}

/// Every kernel folder (with a `launch.json`) under `tests/corpus` and `tests/compilers`.
pub fn kernel_dirs() -> Vec<PathBuf> {
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

/// Loads a case with freshly initialised buffers.
///
/// Besides buffers and scalars, a param may be a `tensormap`: the 128-byte map of another
/// param's buffer (`buffer`), built as `cuTensorMapEncodeTiled` would from `dtype`, `dims` and
/// `box` (innermost first), optional `strides` (bytes, dimensions 1..; packed by default) and
/// `swizzle` ("32B", "64B", "128B"). A buffer with `"argument": false` is not passed itself.
pub fn load_case(dir: &Path) -> Case {
    let spec: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("launch.json")).unwrap()).unwrap();
    let params = spec["params"].as_array().unwrap();
    let buffers: Vec<Option<DeviceBuffer>> = params
        .iter()
        .map(|p| match p["kind"].as_str().unwrap() {
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
            _ => None,
        })
        .collect();
    let mut args = Vec::new();
    for (p, buffer) in params.iter().zip(&buffers) {
        match p["kind"].as_str().unwrap() {
            "scalar" => {
                let hex = p["bytes_hex"].as_str().unwrap();
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                args.push(Arg::bytes(&bytes));
            }
            "null_ptr" => args.push(Arg::u64(0)),
            "tensormap" => {
                let name = p["buffer"].as_str().unwrap();
                let i = params.iter().position(|q| q["name"] == name).unwrap();
                let map = tensor_map(p, buffers[i].as_ref().unwrap().address());
                args.push(Arg::bytes(&map.encode()));
            }
            "input" | "inout" | "output" => {
                if p["argument"].as_bool() != Some(false) {
                    args.push(Arg::buffer(buffer.as_ref().unwrap()));
                }
            }
            k => panic!("unknown param kind {k}"),
        }
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
        cluster: spec.get("cluster").map(dim),
        cooperative: false,
    };
    Case {
        dir: dir.to_path_buf(),
        ptx: dir.join(spec["ptx"].as_str().unwrap()),
        entry: spec["entry"].as_str().unwrap().to_string(),
        spec,
        config,
        buffers,
        args,
    }
}

fn tensor_map(p: &Value, address: u64) -> TensorMap {
    let list = |key: &str| -> Vec<u64> {
        p[key]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_u64().unwrap()).collect())
            .unwrap_or_default()
    };
    // launch.json names signed types i32, i64; PTX s32, s64.
    let dtype = p["dtype"].as_str().unwrap().replace('i', "s");
    let elem = ElemType::from_name(&dtype).unwrap_or_else(|| panic!("no tensor type {dtype}"));
    let boxes: Vec<u32> = list("box").iter().map(|&b| b as u32).collect();
    let mut map = TensorMap::tiled(address, elem, &list("dims"), &boxes);
    for (i, s) in list("strides").into_iter().enumerate() {
        map.strides[i] = s;
    }
    map.swizzle = p["swizzle"].as_str().map_or(0, |s| {
        TensorMap::swizzle_from_name(s).unwrap_or_else(|| panic!("unknown swizzle {s}"))
    });
    map.check().unwrap();
    map
}
