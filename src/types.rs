//! The one table of PTX scalar types: name, size, class, and how a value of the type is held
//! in Cranelift IR.
//!
//! Half-precision values (f16, bf16 and their x2 pairs) are held as integer bits: Cranelift
//! cannot compute with F16 on x86-64, and PTX moves them through `.b16`/`.b32` registers anyway.

use cranelift_codegen::ir::Type;
use cranelift_codegen::ir::types;

/// A PTX fundamental type (the `.type` suffix of registers and instructions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PtxType {
    Pred,
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    F32,
    F64,
}

/// What kind of value a type holds; decides how instructions interpret the bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    Pred,
    Bits,
    Unsigned,
    Signed,
    /// f16/bf16 and their pairs: held as integer bits.
    Half,
    /// f32/f64: held as Cranelift floats.
    Float,
}

const TABLE: &[(PtxType, &str, u32, TypeClass)] = &[
    (PtxType::Pred, "pred", 1, TypeClass::Pred),
    (PtxType::B8, "b8", 1, TypeClass::Bits),
    (PtxType::B16, "b16", 2, TypeClass::Bits),
    (PtxType::B32, "b32", 4, TypeClass::Bits),
    (PtxType::B64, "b64", 8, TypeClass::Bits),
    (PtxType::B128, "b128", 16, TypeClass::Bits),
    (PtxType::U8, "u8", 1, TypeClass::Unsigned),
    (PtxType::U16, "u16", 2, TypeClass::Unsigned),
    (PtxType::U32, "u32", 4, TypeClass::Unsigned),
    (PtxType::U64, "u64", 8, TypeClass::Unsigned),
    (PtxType::S8, "s8", 1, TypeClass::Signed),
    (PtxType::S16, "s16", 2, TypeClass::Signed),
    (PtxType::S32, "s32", 4, TypeClass::Signed),
    (PtxType::S64, "s64", 8, TypeClass::Signed),
    (PtxType::F16, "f16", 2, TypeClass::Half),
    (PtxType::F16x2, "f16x2", 4, TypeClass::Half),
    (PtxType::BF16, "bf16", 2, TypeClass::Half),
    (PtxType::BF16x2, "bf16x2", 4, TypeClass::Half),
    (PtxType::F32, "f32", 4, TypeClass::Float),
    (PtxType::F64, "f64", 8, TypeClass::Float),
];

impl PtxType {
    fn row(self) -> &'static (PtxType, &'static str, u32, TypeClass) {
        TABLE
            .iter()
            .find(|r| r.0 == self)
            .expect("every type is in the table")
    }

    /// Parses a type name without its leading dot (`"f16x2"`).
    pub fn from_name(name: &str) -> Option<PtxType> {
        TABLE.iter().find(|r| r.1 == name).map(|r| r.0)
    }

    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// Size in bytes (a predicate counts as one byte when stored).
    pub fn size(self) -> u32 {
        self.row().2
    }

    pub fn bits(self) -> u32 {
        self.size() * 8
    }

    pub fn class(self) -> TypeClass {
        self.row().3
    }

    pub fn is_signed(self) -> bool {
        self.class() == TypeClass::Signed
    }

    pub fn is_float(self) -> bool {
        self.class() == TypeClass::Float
    }

    pub fn is_half(self) -> bool {
        self.class() == TypeClass::Half
    }

    /// Integer-like: bits, unsigned or signed.
    pub fn is_int(self) -> bool {
        matches!(
            self.class(),
            TypeClass::Bits | TypeClass::Unsigned | TypeClass::Signed
        )
    }

    /// The Cranelift type a value of this PTX type is held in.
    pub fn ir_type(self) -> Type {
        match self {
            PtxType::Pred => types::I8,
            PtxType::F32 => types::F32,
            PtxType::F64 => types::F64,
            PtxType::B128 => types::I128,
            t => Type::int(t.bits() as u16).expect("integer width"),
        }
    }

    /// The unsigned integer type of the same width (for bit moves between classes).
    pub fn bits_type(self) -> PtxType {
        match self.size() {
            1 => PtxType::B8,
            2 => PtxType::B16,
            4 => PtxType::B32,
            8 => PtxType::B64,
            _ => PtxType::B128,
        }
    }
}

impl std::fmt::Display for PtxType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, ".{}", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_round_trips_through_its_name() {
        for row in TABLE {
            assert_eq!(PtxType::from_name(row.1), Some(row.0));
            assert_eq!(row.0.name(), row.1);
        }
    }

    #[test]
    fn halves_are_held_as_integer_bits() {
        assert_eq!(PtxType::F16.ir_type(), types::I16);
        assert_eq!(PtxType::BF16x2.ir_type(), types::I32);
        assert_eq!(PtxType::F32.ir_type(), types::F32);
    }
}
