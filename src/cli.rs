//! The command line's argument specs (`u32:8`, `f16:0.5`, `file:x.bin`, `zeros:64`,
//! `tensormap:f16:64x32:32x8:swizzle=64B:file=a.bin`): parsing them into kernel arguments,
//! checked against the parameter they are for.

use crate::frontend::checked::Rounding;
use crate::kernel::ParamInfo;
use crate::semantics::half::{BF16, F16};
use crate::tensor_map::{ElemType, TensorMap};

/// What one `--arg SPEC` asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A scalar passed by value: its little-endian bytes.
    Scalar(Vec<u8>),
    /// A device buffer initialised from a file.
    File(String),
    /// A zero-filled device buffer of this many bytes.
    Zeros(usize),
    /// A tensor map (`.param .align 64 .b8 [128]`) of a buffer; its address is filled in when
    /// the buffer exists.
    TensorMap(TensorMapSpec),
}

/// `tensormap:TYPE:DIMS:BOX{:key=value}`: DIMS and BOX innermost first (`64x32`), as
/// `cuTensorMapEncodeTiled` takes them. Keys: `strides=` (bytes of dimensions 1.., packed by
/// default), `steps=` (traversal strides), `interleave=16B|32B`, `swizzle=32B|64B|128B`,
/// `fill=nan`; and the tensor's data: `file=PATH`, `of=N` (argument N's buffer) or, with
/// neither, zeros.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMapSpec {
    /// The map, its address still 0.
    pub map: TensorMap,
    pub data: TensorData,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    File(String),
    Of(usize),
    Zeros,
}

impl TensorMapSpec {
    /// Bytes from the map's address to the tensor's last element, plus one element.
    pub fn extent(&self) -> u64 {
        let m = &self.map;
        let last = (1..m.rank)
            .map(|d| (m.dims[d] - 1) * m.strides[d - 1])
            .sum::<u64>();
        last + m.dims[0] * m.elem.size()
    }
}

fn parse_tensor_map(value: &str) -> Result<TensorMapSpec, String> {
    let mut parts = value.split(':');
    let (Some(ty), Some(dims), Some(boxes)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("a tensor map is tensormap:TYPE:DIMS:BOX{:key=value}".into());
    };
    let list = |s: &str| -> Result<Vec<u64>, String> {
        s.split('x')
            .map(parse_uint)
            .collect::<Result<Vec<u64>, String>>()
    };
    let elem =
        ElemType::from_name(ty).ok_or_else(|| format!("'{ty}' is not a tensor element type"))?;
    let dims = list(dims)?;
    let boxes = list(boxes)?;
    if dims.is_empty() || dims.len() > 5 || boxes.len() != dims.len() {
        return Err("DIMS and BOX name the same 1 to 5 dimensions".into());
    }
    let boxes: Vec<u32> = boxes
        .iter()
        .map(|&b| b.min(u32::MAX as u64) as u32)
        .collect();
    let mut map = TensorMap::tiled(0, elem, &dims, &boxes);
    let mut data = TensorData::Zeros;
    for kv in parts {
        let (key, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("'{kv}' is not key=value"))?;
        let bytes = |v: &str| match v {
            "16B" => Ok(1),
            "32B" => Ok(2),
            _ => Err(format!("interleave '{v}' is 16B or 32B")),
        };
        match key {
            "strides" => {
                let s = list(v)?;
                if s.len() + 1 != map.rank {
                    return Err(format!(
                        "{} dimensions take {} strides",
                        map.rank,
                        map.rank - 1
                    ));
                }
                map.strides[..s.len()].copy_from_slice(&s);
            }
            "steps" => {
                let s = list(v)?;
                if s.len() != map.rank {
                    return Err(format!("{} dimensions take {0} steps", map.rank));
                }
                for (d, step) in s.into_iter().enumerate() {
                    map.element_strides[d] = step.min(u32::MAX as u64) as u32;
                }
            }
            "interleave" => map.interleave = bytes(v)?,
            "swizzle" => {
                map.swizzle = TensorMap::swizzle_from_name(v)
                    .ok_or_else(|| format!("swizzle '{v}' is 32B, 64B or 128B"))?
            }
            "fill" if v == "nan" => map.nan_fill = true,
            "file" => data = TensorData::File(v.to_string()),
            "of" => data = TensorData::Of(parse_uint(v)? as usize),
            _ => return Err(format!("unknown tensor map key in '{kv}'")),
        }
    }
    // Every rule but the address's, known only at launch.
    let mut probe = map.clone();
    probe.address = 1 << 12;
    probe.check().map_err(|e| e.to_string())?;
    Ok(TensorMapSpec { map, data })
}

fn parse_uint(v: &str) -> Result<u64, String> {
    let r = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse::<u64>(),
    };
    r.map_err(|_| format!("'{v}' is not a number (decimal or 0x hex)"))
}

fn parse_int(v: &str, bits: u32, signed: bool) -> Result<u64, String> {
    let value = if signed && v.starts_with('-') {
        let n: i64 = v.parse().map_err(|_| format!("'{v}' is not a number"))?;
        if bits < 64 && n < -(1i64 << (bits - 1)) {
            return Err(format!("{v} does not fit in {bits} bits"));
        }
        return Ok((n as u64) & mask(bits));
    } else {
        parse_uint(v)?
    };
    let max = if signed && !v.starts_with("0x") {
        mask(bits) >> 1
    } else {
        mask(bits)
    };
    if value > max {
        return Err(format!("{v} does not fit in {bits} bits"));
    }
    Ok(value)
}

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Parses one spec (without checking it against a parameter).
pub fn parse_spec(spec: &str) -> Result<ArgSpec, String> {
    let (kind, value) = spec
        .split_once(':')
        .ok_or_else(|| format!("'{spec}' is not KIND:VALUE"))?;
    let int = |bits: u32, signed: bool| -> Result<ArgSpec, String> {
        let v = parse_int(value, bits, signed)?;
        Ok(ArgSpec::Scalar(
            v.to_le_bytes()[..bits as usize / 8].to_vec(),
        ))
    };
    let is_hex = value.starts_with("0x") || value.starts_with("0X");
    let float = |v: &str| {
        v.parse::<f64>()
            .map_err(|_| format!("'{v}' is not a number"))
    };
    match kind {
        "u8" | "b8" => int(8, false),
        "u16" | "b16" => int(16, false),
        "u32" | "b32" => int(32, false),
        "u64" | "b64" => int(64, false),
        "s8" => int(8, true),
        "s16" => int(16, true),
        "s32" => int(32, true),
        "s64" => int(64, true),
        "f32" if is_hex => int(32, false),
        "f64" if is_hex => int(64, false),
        "f16" | "bf16" if is_hex => int(16, false),
        "f32" => Ok(ArgSpec::Scalar(
            (float(value)? as f32).to_le_bytes().to_vec(),
        )),
        "f64" => Ok(ArgSpec::Scalar(float(value)?.to_le_bytes().to_vec())),
        "f16" => Ok(ArgSpec::Scalar(
            F16.round(float(value)?, Rounding::Rn)
                .to_le_bytes()
                .to_vec(),
        )),
        "bf16" => Ok(ArgSpec::Scalar(
            BF16.round(float(value)?, Rounding::Rn)
                .to_le_bytes()
                .to_vec(),
        )),
        "file" => Ok(ArgSpec::File(value.to_string())),
        "zeros" => Ok(ArgSpec::Zeros(parse_uint(value)? as usize)),
        "tensormap" => Ok(ArgSpec::TensorMap(parse_tensor_map(value)?)),
        _ => Err(format!("unknown argument kind '{kind}' in '{spec}'")),
    }
}

/// Checks that a spec fits the parameter it is passed for.
pub fn check_spec(spec: &ArgSpec, param: &ParamInfo) -> Result<(), String> {
    match spec {
        ArgSpec::Scalar(bytes) if bytes.len() != param.size as usize => Err(format!(
            "parameter '{}' ({}{}) takes {} bytes, the spec gives {}",
            param.name,
            param.ty,
            param.array.map(|k| format!("[{k}]")).unwrap_or_default(),
            param.size,
            bytes.len()
        )),
        ArgSpec::File(_) | ArgSpec::Zeros(_) if param.size != 8 => Err(format!(
            "parameter '{}' ({}) is not a 64-bit pointer: a buffer cannot be passed to it",
            param.name, param.ty
        )),
        ArgSpec::TensorMap(_) if param.size != crate::tensor_map::SIZE as u32 => Err(format!(
            "parameter '{}' ({}) is not a 128-byte tensor map",
            param.name, param.ty
        )),
        _ => Ok(()),
    }
}

/// Parses `X[,Y[,Z]]`.
/// Largest PTX file the command line reads.
pub const MAX_PTX_BYTES: u64 = 1 << 30;

/// The bytes of the regular file `path`, at most `limit` of them. Devices, pipes and other
/// endless sources are refused, and a file is read only to the length it had when opened.
pub fn read_regular_file(path: &str, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read {path}: not a regular file"));
    }
    if meta.len() > limit {
        return Err(format!(
            "cannot read {path}: {} bytes is more than the limit of {limit}",
            meta.len()
        ));
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    file.take(meta.len())
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    Ok(data)
}

pub fn parse_dim(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("'{s}' is not X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (slot, p) in d.iter_mut().zip(&parts) {
        *slot = p
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not X[,Y[,Z]] of positive integers"))?;
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::PtxType;

    #[test]
    fn scalar_specs() {
        assert_eq!(
            parse_spec("u32:8").unwrap(),
            ArgSpec::Scalar(vec![8, 0, 0, 0])
        );
        assert_eq!(
            parse_spec("s16:-2").unwrap(),
            ArgSpec::Scalar(vec![0xFE, 0xFF])
        );
        assert_eq!(
            parse_spec("b32:0x42003800").unwrap(),
            ArgSpec::Scalar(vec![0x00, 0x38, 0x00, 0x42])
        );
        assert_eq!(
            parse_spec("f16:0.5").unwrap(),
            ArgSpec::Scalar(vec![0x00, 0x38])
        );
        assert_eq!(
            parse_spec("bf16:1").unwrap(),
            ArgSpec::Scalar(vec![0x80, 0x3F])
        );
        assert_eq!(
            parse_spec("f16:0x7BFF").unwrap(),
            ArgSpec::Scalar(vec![0xFF, 0x7B])
        );
        assert_eq!(
            parse_spec("f32:1.5").unwrap(),
            ArgSpec::Scalar(1.5f32.to_le_bytes().to_vec())
        );
        assert_eq!(parse_spec("zeros:16").unwrap(), ArgSpec::Zeros(16));
    }

    #[test]
    fn f16_decimal_rounds_to_nearest_even() {
        // 1 + 2^-11 is a tie between 1.0 and the next f16: even wins.
        assert_eq!(
            parse_spec("f16:1.00048828125").unwrap(),
            ArgSpec::Scalar(vec![0x00, 0x3C])
        );
    }

    #[test]
    fn bad_specs_are_errors() {
        assert!(parse_spec("u8:256").is_err());
        assert!(parse_spec("s8:-129").is_err());
        assert!(parse_spec("q32:1").is_err());
        assert!(parse_spec("u32").is_err());
        assert!(parse_spec("f16:abc").is_err());
    }

    #[test]
    fn by_value_b8_array_takes_a_scalar_of_its_size() {
        let p = ParamInfo {
            name: "s".into(),
            ty: PtxType::B8,
            size: 2,
            offset: 0,
            array: Some(2),
        };
        assert!(check_spec(&parse_spec("f16:0.5").unwrap(), &p).is_ok());
        assert!(check_spec(&parse_spec("u32:1").unwrap(), &p).is_err());
        assert!(check_spec(&parse_spec("zeros:4").unwrap(), &p).is_err());
    }

    #[test]
    fn tensor_map_specs() {
        let ArgSpec::TensorMap(t) =
            parse_spec("tensormap:f16:64x32:32x8:swizzle=64B:file=a.bin").unwrap()
        else {
            panic!()
        };
        assert_eq!(t.map.dims[..2], [64, 32]);
        assert_eq!(t.map.box_dims[..2], [32, 8]);
        assert_eq!(t.map.strides[0], 128);
        assert_eq!(t.map.swizzle, 2);
        assert_eq!(t.data, TensorData::File("a.bin".into()));
        assert_eq!(t.extent(), 64 * 32 * 2);
        // The driver's rules hold at parse time: 64 f16 are more than a 32B swizzle's span.
        let e = parse_spec("tensormap:f16:64x32:64x8:swizzle=32B").unwrap_err();
        assert!(e.contains("swizzle span"), "{e}");
        assert!(parse_spec("tensormap:f16:64x32:32").is_err());
        assert!(parse_spec("tensormap:f16:64x32:32x8:strides=100").is_err());
    }

    #[test]
    fn dims() {
        assert_eq!(parse_dim("8").unwrap(), [8, 1, 1]);
        assert_eq!(parse_dim("2,3,4").unwrap(), [2, 3, 4]);
        assert!(parse_dim("1,2,3,4").is_err());
        assert!(parse_dim("x").is_err());
    }

    #[test]
    fn only_regular_files_are_read_and_only_up_to_the_limit() {
        let e = read_regular_file("/dev/zero", u64::MAX).unwrap_err();
        assert!(e.ends_with("not a regular file"), "{e}");
        let path = std::env::temp_dir().join(format!("ptxjit-cli-read-{}", std::process::id()));
        std::fs::write(&path, [1, 2, 3]).unwrap();
        let p = path.to_str().unwrap();
        assert_eq!(read_regular_file(p, 3).unwrap(), [1, 2, 3]);
        let e = read_regular_file(p, 2).unwrap_err();
        assert!(e.ends_with("3 bytes is more than the limit of 2"), "{e}");
        let _ = std::fs::remove_file(&path);
    }
}
