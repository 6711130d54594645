//! The narrow formats of `cvt` and `mma` (PTX ISA "Alternate Floating Point Data Formats"):
//! fp8 `e4m3`/`e5m2`, fp6 `e2m3`/`e3m2`, fp4 `e2m1`, the scale format `ue8m0`, and `tf32`.
//!
//! Written from the values, not the bits: a rounding picks among the representable values of
//! the format (a sorted list), so it shares nothing with the bit-level lowering in
//! `lower::narrow`. `tests/lowp_conversions.rs` checks these against NVIDIA's own host
//! implementations (digests of every 16-bit input, `tests/oracles/nvidia_lowp.cpp`) and the
//! lowering against these, bit for bit.
//!
//! Rules (ISA `cvt`, with NVIDIA's host code deciding what the ISA leaves open):
//! - every conversion *to* fp8/fp6/fp4 carries `.satfinite`: a magnitude beyond the largest
//!   finite value (infinity included) gives that value with the input's sign;
//! - a NaN input gives the canonical NaN (`0x7F`) where the format has NaNs (fp8), +MAX_NORM
//!   where it has none (fp6, fp4), whatever its sign and payload;
//! - `.relu` makes a negative result +0 and a NaN the canonical NaN (`0x7F`);
//! - *from* a narrow format the value is exact in f16 and bf16; a NaN gives the canonical NaN
//!   (`0x7FFF`), `.relu` clamps negatives to +0.

use super::half::HalfFormat;
use crate::frontend::checked::Rounding;

/// fp8, fp6 and fp4: sign, exponent, mantissa, no infinities (but e5m2's), NaN only in fp8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mini {
    E4m3,
    E5m2,
    E2m3,
    E3m2,
    E2m1,
}

impl Mini {
    pub const ALL: [Mini; 5] = [Mini::E4m3, Mini::E5m2, Mini::E2m3, Mini::E3m2, Mini::E2m1];

    /// The format of a packed instruction type without its dot and `x2`/`x4` (`"e4m3"`).
    pub fn from_name(name: &str) -> Option<Mini> {
        Mini::ALL.into_iter().find(|m| m.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Mini::E4m3 => "e4m3",
            Mini::E5m2 => "e5m2",
            Mini::E2m3 => "e2m3",
            Mini::E3m2 => "e3m2",
            Mini::E2m1 => "e2m1",
        }
    }

    pub fn exp_bits(self) -> u32 {
        match self {
            Mini::E4m3 => 4,
            Mini::E5m2 => 5,
            Mini::E2m3 | Mini::E2m1 => 2,
            Mini::E3m2 => 3,
        }
    }

    pub fn mant_bits(self) -> u32 {
        match self {
            Mini::E4m3 | Mini::E2m3 => 3,
            Mini::E5m2 | Mini::E3m2 => 2,
            Mini::E2m1 => 1,
        }
    }

    /// Bits of one value (its sign is the top one).
    pub fn width(self) -> u32 {
        1 + self.exp_bits() + self.mant_bits()
    }

    /// Bits one value takes in a packed register: fp6 values sit in a byte each.
    pub fn slot_bits(self) -> u32 {
        if self == Mini::E2m1 { 4 } else { 8 }
    }

    pub fn sign_bit(self) -> u8 {
        1 << (self.width() - 1)
    }

    pub fn bias(self) -> i32 {
        (1 << (self.exp_bits() - 1)) - 1
    }

    /// The largest finite magnitude's bits.
    pub fn max_finite(self) -> u8 {
        match self {
            Mini::E4m3 => 0x7E,
            Mini::E5m2 => 0x7B,
            m => m.sign_bit() - 1,
        }
    }

    /// The canonical NaN, where the format has NaNs.
    pub fn canonical_nan(self) -> Option<u8> {
        matches!(self, Mini::E4m3 | Mini::E5m2).then_some(0x7F)
    }

    /// As an IEEE-style format of the same fields, for the lowering's rounding.
    pub fn fields(self) -> HalfFormat {
        HalfFormat {
            mant_bits: self.mant_bits(),
            exp_bits: self.exp_bits(),
        }
    }

    pub fn is_nan(self, bits: u8) -> bool {
        match self {
            Mini::E4m3 => bits & 0x7F == 0x7F,
            Mini::E5m2 => bits & 0x7F > 0x7C,
            _ => false,
        }
    }

    /// The exact value of `bits` (NaN for a NaN, ±∞ for e5m2's infinities).
    pub fn to_f64(self, bits: u8) -> f64 {
        let sign = if bits & self.sign_bit() != 0 {
            -1.0
        } else {
            1.0
        };
        if self.is_nan(bits) {
            return f64::NAN;
        }
        if self == Mini::E5m2 && bits & 0x7F == 0x7C {
            return sign * f64::INFINITY;
        }
        let mag = bits & (self.sign_bit() - 1);
        let exp = (mag >> self.mant_bits()) as i32;
        let frac = (mag & ((1 << self.mant_bits()) - 1)) as f64;
        let (significand, e) = if exp == 0 {
            (frac, 1 - self.bias())
        } else {
            (frac + (1 << self.mant_bits()) as f64, exp - self.bias())
        };
        sign * significand * 2f64.powi(e - self.mant_bits() as i32)
    }

    /// `cvt.frnd.satfinite{.relu}` of `x` to this format (`mode` `.rn` or `.rz`).
    pub fn round(self, x: f64, mode: Rounding, relu: bool) -> u8 {
        let negative = x.is_sign_negative();
        let sign = if negative { self.sign_bit() } else { 0 };
        let r = if x.is_nan() {
            self.canonical_nan().unwrap_or(self.max_finite())
        } else {
            sign | self.round_magnitude(x.abs(), mode)
        };
        if relu { self.relu(r) } else { r }
    }

    /// [`round`](Self::round) from f16 or bf16 bits (`cvt.frnd.satfinite{.relu}.T.{f16x2,bf16x2}`).
    pub fn round_half(self, fmt: HalfFormat, h: u16, mode: Rounding, relu: bool) -> u8 {
        self.round(fmt.to_f64(h), mode, relu)
    }

    /// `.relu` on a result: negatives (and −0) give +0, a NaN the canonical NaN.
    pub fn relu(self, r: u8) -> u8 {
        if self.is_nan(r) {
            0x7F
        } else if r & self.sign_bit() != 0 {
            0
        } else {
            r
        }
    }

    /// The magnitude's bits: the representable values are increasing in their bits, so the
    /// candidates are the last value not above `a` and the one after it.
    fn round_magnitude(self, a: f64, mode: Rounding) -> u8 {
        let max = self.max_finite();
        let below = (0..=max)
            .rev()
            .find(|&c| self.to_f64(c) <= a)
            .expect("0 is not above a magnitude");
        if below == max || self.to_f64(below) == a {
            return below;
        }
        let (lo, hi) = (self.to_f64(below), self.to_f64(below + 1));
        let up = match mode {
            Rounding::Rz => false,
            _ => a - lo > hi - a || (a - lo == hi - a && below & 1 == 1),
        };
        below + up as u8
    }
}

/// `ue8m0`: an unsigned power of two, 2^(bits − 127); `0xFF` is NaN. The sign of the input
/// is ignored (the format scales magnitudes).
pub mod ue8m0 {
    use super::Rounding;

    pub const NAN: u8 = 0xFF;

    pub fn to_f64(bits: u8) -> f64 {
        if bits == NAN {
            f64::NAN
        } else {
            2f64.powi(bits as i32 - 127)
        }
    }

    /// `cvt.frnd3{.satfinite}.ue8m0x2` (`mode` `.rz` or `.rp`): the power of two at or below
    /// (`.rz`) or at or above (`.rp`) the magnitude, clamped to 2^-127; beyond 2^127 (infinity
    /// included) NaN, or 2^127 with `.satfinite`.
    pub fn round(x: f64, mode: Rounding, satfinite: bool) -> u8 {
        if x.is_nan() {
            return NAN;
        }
        let a = x.abs();
        let code = match mode {
            Rounding::Rp => (0..=254u8).find(|&c| to_f64(c) >= a).unwrap_or(NAN),
            _ if a.is_infinite() => NAN,
            _ => (0..=254u8).rev().find(|&c| to_f64(c) <= a).unwrap_or(0),
        };
        if code == NAN && satfinite { 254 } else { code }
    }
}

/// `tf32`: an f32 with 10 mantissa bits, held in a `.b32` register with the low 13 bits zero.
pub mod tf32 {
    use super::Rounding;

    /// The largest finite tf32, 0x7F7FE000.
    pub const MAX: u32 = 0x7F7F_E000;
    /// What a NaN input gives: the canonical f32 NaN (the ISA does not fix the bits).
    pub const NAN: u32 = 0x7FFF_FFFF;

    /// `cvt.rna{.satfinite}.tf32.f32` and `cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32`.
    pub fn round(f: u32, mode: Rounding, satfinite: bool, relu: bool) -> u32 {
        let x = f32::from_bits(f);
        if x.is_nan() {
            return NAN;
        }
        if relu && (x < 0.0 || f == 0x8000_0000) {
            return 0;
        }
        let sign = f & 0x8000_0000;
        let a = x.abs() as f64;
        if a.is_infinite() {
            return sign | if satfinite { MAX } else { 0x7F80_0000 };
        }
        // The quantum at a's binade (subnormals: the f32 subnormal quantum times 2^13).
        let e = ((a.to_bits() >> 52) as i32 - 1023).max(-126);
        let q = 2f64.powi(e - 10);
        let lo = (a / q).floor() * q;
        let hi = lo + q;
        let r = match mode {
            Rounding::Rz => lo,
            Rounding::Rna => {
                if a - lo >= hi - a {
                    hi
                } else {
                    lo
                }
            }
            _ => {
                let even = ((lo / q) as u64) & 1 == 0;
                if a - lo > hi - a || (a - lo == hi - a && !even) {
                    hi
                } else {
                    lo
                }
            }
        };
        let max = f32::from_bits(MAX) as f64;
        if r > max {
            return sign | if satfinite { MAX } else { 0x7F80_0000 };
        }
        sign | (r as f32).to_bits()
    }
}
