//! The tensor map: ptxjit's layout of the ISA's opaque 128-byte (`.b1024`) object that
//! describes a tensor in global memory for `cp.async.bulk.tensor`, and its rules.
//!
//! The ISA leaves the encoding to the implementation; three writers must agree on it:
//! `cuTensorMapEncodeTiled` in the C library and the command line's `tensormap:` argument
//! (both through [`TensorMap::encode`]), and `tensormap.replace` on the device (through
//! [`replace`]). Triton builds device-side maps by zeroing 128 bytes and replacing the fields
//! it needs, so all-zero fields are the defaults: rank 1, `.u8`, no interleave, no swizzle,
//! zero fill. Little-endian fields:
//!
//! | offset | field |
//! |--------|-------|
//! | 0   | global address (u64) |
//! | 8   | global strides of dimensions 1–4 in bytes (4 × u64) |
//! | 40  | global dimensions 0–4 in elements (5 × u32) |
//! | 60  | box dimensions 0–4 in elements (5 × u16) |
//! | 70  | element (traversal) strides 0–4 (5 × u8) |
//! | 75  | rank − 1 |
//! | 76  | element type, the ISA's `.elemtype` numbering (Table 33, not the driver's enum) |
//! | 77  | interleave layout (0 none, 1 16B, 2 32B) |
//! | 78  | swizzle mode (0 none, 1 32B, 2 64B, 3 128B, 4 96B) |
//! | 79  | swizzle atomicity (0 16B, 1 32B, 2 32B + 8B flip, 3 64B) |
//! | 80  | fill mode (0 zeros, 1 OOB-NaN) |
//! | 81  | L2 promotion (the driver's enum; no effect on a CPU) |
//! | 82–127 | zero |
//!
//! [`TensorMap::check`] holds the driver's rules for a map (`cuTensorMapEncodeTiled`'s
//! requirements); a copy through a map that breaks them, or uses a mode ptxjit does not run,
//! ends the launch naming the instruction and the rule.

/// The bytes of a tensor map.
pub const SIZE: usize = 128;
/// The ISA's alignment of a tensor map in memory.
pub const ALIGN: u64 = 64;
pub const MAX_RANK: usize = 5;

/// Element types, as `tensormap.replace.elemtype` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    U8,
    U16,
    U32,
    S32,
    U64,
    S64,
    F16,
    F32,
    F32Ftz,
    F64,
    Bf16,
    Tf32,
    Tf32Ftz,
}

impl ElemType {
    const ALL: [ElemType; 13] = [
        ElemType::U8,
        ElemType::U16,
        ElemType::U32,
        ElemType::S32,
        ElemType::U64,
        ElemType::S64,
        ElemType::F16,
        ElemType::F32,
        ElemType::F32Ftz,
        ElemType::F64,
        ElemType::Bf16,
        ElemType::Tf32,
        ElemType::Tf32Ftz,
    ];

    /// The type of the ISA's `.elemtype` value `code`.
    pub fn from_code(code: u32) -> Option<ElemType> {
        Self::ALL.get(code as usize).copied()
    }

    /// The type a PTX type name names (`f16`, `s32`).
    pub fn from_name(name: &str) -> Option<ElemType> {
        use ElemType::*;
        Some(match name {
            "u8" => U8,
            "u16" => U16,
            "u32" => U32,
            "s32" => S32,
            "u64" => U64,
            "s64" => S64,
            "f16" => F16,
            "f32" => F32,
            "f64" => F64,
            "bf16" => Bf16,
            "tf32" => Tf32,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        Self::ALL.iter().position(|&t| t == self).expect("listed") as u8
    }

    /// The type of the driver's `CUtensorMapDataType` value (its order differs from the ISA's).
    pub fn from_driver(code: u32) -> Option<ElemType> {
        use ElemType::*;
        Some(match code {
            0 => U8,
            1 => U16,
            2 => U32,
            3 => S32,
            4 => U64,
            5 => S64,
            6 => F16,
            7 => F32,
            8 => F64,
            9 => Bf16,
            10 => F32Ftz,
            11 => Tf32,
            12 => Tf32Ftz,
            _ => return None,
        })
    }

    pub fn size(self) -> u64 {
        use ElemType::*;
        match self {
            U8 => 1,
            U16 | F16 | Bf16 => 2,
            U32 | S32 | F32 | F32Ftz | Tf32 | Tf32Ftz => 4,
            U64 | S64 | F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        use ElemType::*;
        matches!(self, F16 | F32 | F32Ftz | F64 | Bf16 | Tf32 | Tf32Ftz)
    }

    /// The OOB-NaN of this type: ptxjit fills with the positive NaN whose payload bits are all
    /// ones (the bits a GPU writes are not documented).
    pub fn oob_nan(self) -> u64 {
        match self.size() {
            2 => 0x7FFF,
            4 => 0x7FFF_FFFF,
            _ => 0x7FFF_FFFF_FFFF_FFFF,
        }
    }
}

/// A tensor map's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub address: u64,
    pub rank: usize,
    pub elem: ElemType,
    /// Elements in each dimension, innermost first.
    pub dims: [u64; MAX_RANK],
    /// Bytes between consecutive indices of dimensions 1.. (`strides[i]` is dimension i + 1's).
    pub strides: [u64; MAX_RANK - 1],
    /// The box a copy moves, in elements of each dimension.
    pub box_dims: [u32; MAX_RANK],
    /// Traversal strides: a copy takes every `element_strides[i]`-th element of dimension i
    /// (dimension 0's only with an interleaved layout).
    pub element_strides: [u32; MAX_RANK],
    /// 0 none, 1 16B, 2 32B.
    pub interleave: u8,
    /// 0 none, 1 32B, 2 64B, 3 128B, 4 96B.
    pub swizzle: u8,
    /// 0 16B, 1 32B, 2 32B with 8B flip, 3 64B.
    pub swizzle_atomicity: u8,
    pub nan_fill: bool,
    pub l2_promotion: u8,
}

/// A rule of the tensor map that a map breaks, or a mode ptxjit does not run: a code and
/// two numbers, so that a launch can report it from its fault words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapError {
    pub rule: Rule,
    /// The dimension the rule is about (0 when none).
    pub dim: u8,
    /// The value that breaks it.
    pub value: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Rank,
    InterleaveLayout,
    InterleaveRank,
    Address,
    GlobalDim,
    BoxDim,
    ElementStride,
    GlobalStride,
    InnerBoxBytes,
    SwizzleMode,
    InterleaveSwizzle,
    SwizzleSpan,
    NanFill,
    SwizzleAtomicity,
    /// The instruction's `.dim` differs from the map's rank.
    InstructionDims,
    /// Not supported by ptxjit: packed element types, the 96B swizzle, swizzle atomicity.
    UnsupportedElemType,
    Unsupported96B,
    UnsupportedAtomicity,
}

impl Rule {
    const ALL: [Rule; 18] = [
        Rule::Rank,
        Rule::InterleaveLayout,
        Rule::InterleaveRank,
        Rule::Address,
        Rule::GlobalDim,
        Rule::BoxDim,
        Rule::ElementStride,
        Rule::GlobalStride,
        Rule::InnerBoxBytes,
        Rule::SwizzleMode,
        Rule::InterleaveSwizzle,
        Rule::SwizzleSpan,
        Rule::NanFill,
        Rule::SwizzleAtomicity,
        Rule::InstructionDims,
        Rule::UnsupportedElemType,
        Rule::Unsupported96B,
        Rule::UnsupportedAtomicity,
    ];
}

impl MapError {
    /// `(value, rule | dim << 5)`: the error as a fault's address and width byte, and back.
    pub fn to_words(self) -> (u64, u64) {
        let rule = Rule::ALL
            .iter()
            .position(|&r| r == self.rule)
            .expect("listed");
        (self.value, rule as u64 | (self.dim as u64 & 7) << 5)
    }

    pub fn from_words(value: u64, byte: u64) -> Option<MapError> {
        Some(MapError {
            rule: *Rule::ALL.get((byte & 31) as usize)?,
            dim: (byte >> 5 & 7) as u8,
            value,
        })
    }

    pub fn is_unsupported(self) -> bool {
        matches!(
            self.rule,
            Rule::UnsupportedElemType | Rule::Unsupported96B | Rule::UnsupportedAtomicity
        )
    }
}

impl std::fmt::Display for MapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (d, v) = (self.dim, self.value);
        match self.rule {
            Rule::Rank => write!(f, "rank {v} is not 1 to 5"),
            Rule::InterleaveLayout => write!(f, "interleave layout {v} is not 0 to 2"),
            Rule::InterleaveRank => {
                write!(f, "an interleaved layout needs rank 3 or more, not {v}")
            }
            Rule::Address => write!(
                f,
                "global address {v:#x} is not 16-byte aligned (32 with the 32B interleave)"
            ),
            Rule::GlobalDim => write!(f, "dimension {d} has {v} elements (1 to 2^31)"),
            Rule::BoxDim => write!(f, "box dimension {d} is {v} (1 to 256)"),
            Rule::ElementStride => write!(f, "traversal stride {d} is {v} (1 to 8)"),
            Rule::GlobalStride => write!(
                f,
                "the stride of dimension {} is {v} bytes (a multiple of 16, of 32 with the 32B \
                 interleave, below 2^40)",
                d + 1
            ),
            Rule::InnerBoxBytes => {
                write!(
                    f,
                    "the box's inner dimension is {v} bytes, not a multiple of 16"
                )
            }
            Rule::SwizzleMode => write!(f, "swizzle mode {v} is not 0 to 4"),
            Rule::InterleaveSwizzle => write!(f, "the 32B interleave needs the 32B swizzle"),
            Rule::SwizzleSpan => write!(
                f,
                "the box's inner dimension is {v} bytes, more than the {}-byte swizzle span",
                16 << d
            ),
            Rule::NanFill => write!(
                f,
                "OOB-NaN fill needs a floating-point element type, not {:?}",
                ElemType::from_code(v as u32).map_or("?".into(), |t| format!("{t:?}"))
            ),
            Rule::SwizzleAtomicity => write!(f, "swizzle atomicity {v} is not 0 to 3"),
            Rule::InstructionDims => {
                write!(
                    f,
                    "the instruction copies a {d}-d box, the map has rank {v}"
                )
            }
            Rule::UnsupportedElemType => {
                write!(
                    f,
                    "element type {v} (packed types) is not supported by ptxjit"
                )
            }
            Rule::Unsupported96B => write!(f, "the 96B swizzle is not supported by ptxjit"),
            Rule::UnsupportedAtomicity => write!(
                f,
                "swizzle atomicity {} is not supported by ptxjit",
                ["16B", "32B", "32B + 8B flip", "64B"][v as usize % 4]
            ),
        }
    }
}

fn broken(rule: Rule, dim: usize, value: u64) -> Result<(), MapError> {
    Err(MapError {
        rule,
        dim: dim as u8,
        value,
    })
}

const ADDRESS: usize = 0;
const STRIDES: usize = 8;
const DIMS: usize = 40;
const BOX: usize = 60;
const ELEMENT_STRIDES: usize = 70;
const RANK: usize = 75;
const ELEMTYPE: usize = 76;
const INTERLEAVE: usize = 77;
const SWIZZLE: usize = 78;
const ATOMICITY: usize = 79;
const FILL: usize = 80;
const L2_PROMOTION: usize = 81;

fn get(bytes: &[u8; SIZE], at: usize, width: usize) -> u64 {
    let mut word = [0u8; 8];
    word[..width].copy_from_slice(&bytes[at..at + width]);
    u64::from_le_bytes(word)
}

fn put(bytes: &mut [u8; SIZE], at: usize, width: usize, v: u64) {
    bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

impl TensorMap {
    /// A map of a packed tensor (`dims` innermost first) whose box is the whole of `box_dims`
    /// with unit traversal strides, no interleave, no swizzle, zero fill.
    pub fn tiled(address: u64, elem: ElemType, dims: &[u64], box_dims: &[u32]) -> TensorMap {
        let mut m = TensorMap {
            address,
            rank: dims.len(),
            elem,
            dims: [1; MAX_RANK],
            strides: [0; MAX_RANK - 1],
            box_dims: [1; MAX_RANK],
            element_strides: [1; MAX_RANK],
            interleave: 0,
            swizzle: 0,
            swizzle_atomicity: 0,
            nan_fill: false,
            l2_promotion: 0,
        };
        m.dims[..dims.len()].copy_from_slice(dims);
        m.box_dims[..box_dims.len()].copy_from_slice(box_dims);
        let mut stride = elem.size();
        for i in 1..dims.len() {
            stride *= dims[i - 1];
            m.strides[i - 1] = stride;
        }
        m
    }

    pub fn encode(&self) -> [u8; SIZE] {
        let mut b = [0u8; SIZE];
        put(&mut b, ADDRESS, 8, self.address);
        for i in 0..MAX_RANK {
            put(&mut b, DIMS + 4 * i, 4, self.dims[i]);
            put(&mut b, BOX + 2 * i, 2, self.box_dims[i] as u64);
            put(
                &mut b,
                ELEMENT_STRIDES + i,
                1,
                self.element_strides[i] as u64,
            );
        }
        for i in 0..MAX_RANK - 1 {
            put(&mut b, STRIDES + 8 * i, 8, self.strides[i]);
        }
        b[RANK] = (self.rank as u8).wrapping_sub(1);
        b[ELEMTYPE] = self.elem.code();
        b[INTERLEAVE] = self.interleave;
        b[SWIZZLE] = self.swizzle;
        b[ATOMICITY] = self.swizzle_atomicity;
        b[FILL] = self.nan_fill as u8;
        b[L2_PROMOTION] = self.l2_promotion;
        b
    }

    /// The map the bytes hold, checked against every rule.
    pub fn decode(b: &[u8; SIZE]) -> Result<TensorMap, MapError> {
        let elem = ElemType::from_code(b[ELEMTYPE] as u32).ok_or(MapError {
            rule: Rule::UnsupportedElemType,
            dim: 0,
            value: b[ELEMTYPE] as u64,
        })?;
        let mut m = TensorMap {
            address: get(b, ADDRESS, 8),
            rank: b[RANK] as usize + 1,
            elem,
            dims: std::array::from_fn(|i| get(b, DIMS + 4 * i, 4)),
            strides: std::array::from_fn(|i| get(b, STRIDES + 8 * i, 8)),
            box_dims: std::array::from_fn(|i| get(b, BOX + 2 * i, 2) as u32),
            element_strides: std::array::from_fn(|i| b[ELEMENT_STRIDES + i] as u32),
            interleave: b[INTERLEAVE],
            swizzle: b[SWIZZLE],
            swizzle_atomicity: b[ATOMICITY],
            nan_fill: b[FILL] != 0,
            l2_promotion: b[L2_PROMOTION],
        };
        m.check()?;
        // Fields past the rank are not part of the map.
        for d in m.rank..MAX_RANK {
            (m.dims[d], m.box_dims[d], m.element_strides[d]) = (1, 1, 1);
            if d > 0 {
                m.strides[d - 1] = 0;
            }
        }
        Ok(m)
    }

    /// The swizzle mode named `32B`, `64B` or `128B`.
    pub fn swizzle_from_name(name: &str) -> Option<u8> {
        ["32B", "64B", "128B"]
            .iter()
            .position(|&n| n == name)
            .map(|i| i as u8 + 1)
    }

    /// The bytes a swizzle mode permutes 16-byte chunks within (0: none).
    pub fn swizzle_span(&self) -> u64 {
        [0, 32, 64, 128, 96][self.swizzle as usize % 5]
    }

    /// Elements a copy takes in dimension `d`: ceil(box / traversal stride).
    pub fn box_count(&self, d: usize) -> u64 {
        if d >= self.rank {
            return 1;
        }
        (self.box_dims[d] as u64).div_ceil(self.traversal_stride(d))
    }

    /// The traversal stride of dimension `d` (dimension 0's is 1 unless interleaved).
    pub fn traversal_stride(&self, d: usize) -> u64 {
        if d == 0 && self.interleave == 0 {
            1
        } else {
            self.element_strides[d] as u64
        }
    }

    /// The bytes one copy moves: the box as traversed, out-of-bounds elements included.
    pub fn box_bytes(&self) -> u64 {
        (0..self.rank).map(|d| self.box_count(d)).product::<u64>() * self.elem.size()
    }

    /// The driver's rules for a tiled map (`cuTensorMapEncodeTiled`), and ptxjit's limits.
    pub fn check(&self) -> Result<(), MapError> {
        if !(1..=MAX_RANK).contains(&self.rank) {
            return broken(Rule::Rank, 0, self.rank as u64);
        }
        if self.interleave > 2 {
            return broken(Rule::InterleaveLayout, 0, self.interleave as u64);
        }
        if self.interleave != 0 && self.rank < 3 {
            return broken(Rule::InterleaveRank, 0, self.rank as u64);
        }
        let align = if self.interleave == 2 { 32 } else { 16 };
        if !self.address.is_multiple_of(align) {
            return broken(Rule::Address, 0, self.address);
        }
        for d in 0..self.rank {
            if !(1..=1 << 31).contains(&self.dims[d]) {
                return broken(Rule::GlobalDim, d, self.dims[d]);
            }
            if !(1..=256).contains(&self.box_dims[d]) {
                return broken(Rule::BoxDim, d, self.box_dims[d] as u64);
            }
            if !(1..=8).contains(&self.element_strides[d]) {
                return broken(Rule::ElementStride, d, self.element_strides[d] as u64);
            }
        }
        for (i, &s) in self.strides[..self.rank - 1].iter().enumerate() {
            if !s.is_multiple_of(align) || s >= 1 << 40 {
                return broken(Rule::GlobalStride, i, s);
            }
        }
        let inner = self.box_dims[0] as u64 * self.elem.size();
        if self.interleave == 0 && !inner.is_multiple_of(16) {
            return broken(Rule::InnerBoxBytes, 0, inner);
        }
        match self.swizzle {
            0..=3 => {}
            4 => return broken(Rule::Unsupported96B, 0, 4),
            s => return broken(Rule::SwizzleMode, 0, s as u64),
        }
        if self.interleave == 2 && self.swizzle != 1 {
            return broken(Rule::InterleaveSwizzle, 0, self.swizzle as u64);
        }
        if self.interleave == 0 && self.swizzle != 0 && inner > self.swizzle_span() {
            return broken(Rule::SwizzleSpan, self.swizzle as usize, inner);
        }
        match self.swizzle_atomicity {
            0 => {}
            a @ 1..=3 => return broken(Rule::UnsupportedAtomicity, 0, a as u64),
            a => return broken(Rule::SwizzleAtomicity, 0, a as u64),
        }
        if self.nan_fill && !self.elem.is_float() {
            return broken(Rule::NanFill, 0, self.elem.code() as u64);
        }
        Ok(())
    }
}

/// `tensormap.replace`'s fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    GlobalAddress,
    Rank,
    BoxDim,
    GlobalDim,
    GlobalStride,
    ElementStride,
    ElemType,
    InterleaveLayout,
    SwizzleMode,
    SwizzleAtomicity,
    FillMode,
}

impl Field {
    pub const ALL: [Field; 11] = [
        Field::GlobalAddress,
        Field::Rank,
        Field::BoxDim,
        Field::GlobalDim,
        Field::GlobalStride,
        Field::ElementStride,
        Field::ElemType,
        Field::InterleaveLayout,
        Field::SwizzleMode,
        Field::SwizzleAtomicity,
        Field::FillMode,
    ];

    /// The field a `tensormap.replace` qualifier names (`box_dim`).
    pub fn from_name(name: &str) -> Option<Field> {
        const NAMES: [&str; 11] = [
            "global_address",
            "rank",
            "box_dim",
            "global_dim",
            "global_stride",
            "element_stride",
            "elemtype",
            "interleave_layout",
            "swizzle_mode",
            "swizzle_atomicity",
            "fill_mode",
        ];
        NAMES.iter().position(|&n| n == name).map(|i| Self::ALL[i])
    }

    /// Whether the field is one of a dimension (`.field2`: an `ord` operand).
    pub fn has_ordinal(self) -> bool {
        matches!(
            self,
            Field::BoxDim | Field::GlobalDim | Field::GlobalStride | Field::ElementStride
        )
    }

    /// The largest value Table 33 admits for a `.field3` field (its value is an immediate).
    pub fn largest_code(self) -> Option<u64> {
        match self {
            Field::ElemType => Some(15),
            Field::InterleaveLayout => Some(2),
            Field::SwizzleMode => Some(4),
            Field::SwizzleAtomicity => Some(3),
            Field::FillMode => Some(1),
            _ => None,
        }
    }
}

/// `tensormap.replace`: writes `value` into field `field` (dimension `ord`) of the map's bytes.
/// The ISA's ranges of `ord` and of the `.field3` codes are checked here; whether the whole
/// map is valid is checked when a copy uses it.
pub fn replace(b: &mut [u8; SIZE], field: Field, ord: u32, value: u64) -> Result<(), String> {
    let dims = if field == Field::GlobalStride {
        MAX_RANK - 1
    } else {
        MAX_RANK
    };
    if field.has_ordinal() && ord as usize >= dims {
        return Err(format!("ordinal {ord} of {field:?} is not below {dims}"));
    }
    if let Some(max) = field.largest_code()
        && value > max
    {
        return Err(format!("{field:?} value {value} is not 0 to {max}"));
    }
    let ord = ord as usize;
    match field {
        Field::GlobalAddress => put(b, ADDRESS, 8, value),
        Field::Rank => put(b, RANK, 1, value.min(255)),
        Field::BoxDim => put(b, BOX + 2 * ord, 2, value.min(u16::MAX as u64)),
        Field::GlobalDim => put(b, DIMS + 4 * ord, 4, value),
        Field::GlobalStride => put(b, STRIDES + 8 * ord, 8, value),
        Field::ElementStride => put(b, ELEMENT_STRIDES + ord, 1, value.min(255)),
        Field::ElemType => b[ELEMTYPE] = value as u8,
        Field::InterleaveLayout => b[INTERLEAVE] = value as u8,
        Field::SwizzleMode => b[SWIZZLE] = value as u8,
        Field::SwizzleAtomicity => b[ATOMICITY] = value as u8,
        Field::FillMode => b[FILL] = value as u8,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> TensorMap {
        TensorMap::tiled(0x1000, ElemType::F16, &[64, 32], &[32, 8])
    }

    #[test]
    fn encode_then_decode_is_the_same_map() {
        let mut m = map();
        m.swizzle = 2;
        m.nan_fill = true;
        assert_eq!(TensorMap::decode(&m.encode()), Ok(m));
    }

    #[test]
    fn zero_bytes_with_replaced_fields_are_a_valid_map() {
        // Triton's device-side maps: zeroed, then these fields replaced.
        let mut b = [0u8; SIZE];
        replace(&mut b, Field::GlobalAddress, 0, 0x2000).unwrap();
        replace(&mut b, Field::Rank, 0, 1).unwrap();
        for (ord, (dim, boxd)) in [(64u64, 32u64), (32, 8)].into_iter().enumerate() {
            replace(&mut b, Field::BoxDim, ord as u32, boxd).unwrap();
            replace(&mut b, Field::GlobalDim, ord as u32, dim).unwrap();
            replace(&mut b, Field::ElementStride, ord as u32, 1).unwrap();
        }
        replace(&mut b, Field::GlobalStride, 0, 128).unwrap();
        replace(&mut b, Field::ElemType, 0, 6).unwrap();
        let m = TensorMap::decode(&b).unwrap();
        assert_eq!(
            m,
            TensorMap::tiled(0x2000, ElemType::F16, &[64, 32], &[32, 8])
        );
    }

    #[test]
    fn elemtype_numbers_follow_the_isa_not_the_driver() {
        assert_eq!(ElemType::from_code(8), Some(ElemType::F32Ftz));
        assert_eq!(ElemType::from_driver(8), Some(ElemType::F64));
        assert_eq!(ElemType::from_code(10), Some(ElemType::Bf16));
        assert_eq!(ElemType::from_driver(9), Some(ElemType::Bf16));
    }

    #[test]
    fn replace_checks_ordinals_and_table_33_codes() {
        let mut b = [0u8; SIZE];
        assert!(replace(&mut b, Field::GlobalStride, 4, 16).is_err());
        assert!(replace(&mut b, Field::BoxDim, 5, 16).is_err());
        assert!(replace(&mut b, Field::SwizzleMode, 0, 5).is_err());
        assert!(replace(&mut b, Field::FillMode, 0, 1).is_ok());
    }

    #[test]
    fn the_box_inner_dimension_is_a_multiple_of_16_bytes() {
        let mut m = map();
        m.box_dims[0] = 4;
        assert_eq!(m.check().unwrap_err().rule, Rule::InnerBoxBytes);
    }

    #[test]
    fn a_swizzled_box_row_fits_the_swizzle_span() {
        let mut m = map();
        m.swizzle = 1; // 32B: 32 f16 are 64 bytes
        assert!(m.check().is_err());
        m.swizzle = 2;
        assert!(m.check().is_ok());
    }

    #[test]
    fn strides_are_multiples_of_16_bytes() {
        let mut m = map();
        m.strides[0] = 120;
        assert!(m.check().is_err());
    }

    #[test]
    fn oob_nan_fill_needs_a_float_type() {
        let mut m = TensorMap::tiled(0x1000, ElemType::U32, &[64], &[16]);
        m.nan_fill = true;
        assert!(m.check().is_err());
    }

    #[test]
    fn traversal_strides_shrink_the_box_but_not_dimension_0_without_interleave() {
        let mut m = TensorMap::tiled(0x1000, ElemType::F32, &[64, 64, 4], &[16, 10, 4]);
        m.element_strides = [4, 3, 2, 1, 1];
        assert_eq!([m.box_count(0), m.box_count(1), m.box_count(2)], [16, 4, 2]);
        assert_eq!(m.box_bytes(), 16 * 4 * 2 * 4);
    }

    #[test]
    fn ptxjit_refuses_swizzle_atomicity_and_the_96b_swizzle() {
        let mut m = map();
        m.swizzle = 3;
        m.swizzle_atomicity = 1;
        assert!(m.check().unwrap_err().is_unsupported());
        m.swizzle_atomicity = 0;
        m.swizzle = 4;
        assert!(m.check().unwrap_err().is_unsupported());
    }

    #[test]
    fn map_errors_survive_the_fault_words() {
        let e = MapError {
            rule: Rule::BoxDim,
            dim: 3,
            value: 300,
        };
        let (a, b) = e.to_words();
        assert_eq!(MapError::from_words(a, b), Some(e));
    }
}
