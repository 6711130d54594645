//! f16 and bf16: decoding to f64 (exact) and rounding from f64 (the one rounding routine).
//!
//! Every half-precision result is computed as an f64 value and rounded once. For f16
//! add/sub/mul the f64 value is exact; for f16 fma it is exact whenever the result is finite
//! (the exponent span of `a*b + c` fits in 53 bits), so one rounding gives the correctly
//! rounded result.

use super::float::CANONICAL_NAN_F32;
use crate::frontend::checked::Rounding;

/// The bits of an IEEE-style binary format narrower than f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HalfFormat {
    pub mant_bits: u32,
    pub exp_bits: u32,
}

pub const F16: HalfFormat = HalfFormat {
    mant_bits: 10,
    exp_bits: 5,
};
pub const BF16: HalfFormat = HalfFormat {
    mant_bits: 7,
    exp_bits: 8,
};

/// The NaN every half-precision arithmetic result uses (CUDART_NAN_FP16 / CUDART_NAN_BF16).
pub const CANONICAL_NAN: u16 = 0x7FFF;

/// What rounding sees: the kept significand, the `shift` bits below it (`shift` may pass
/// 64 for a value far below the quantum: then `rem` is the whole significand), the sign.
struct Discarded {
    kept: u64,
    rem: u64,
    shift: u32,
    negative: bool,
}

impl HalfFormat {
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    /// Smallest normal exponent.
    pub const fn emin(self) -> i32 {
        1 - self.bias()
    }

    /// Below this magnitude an exact result is tiny after rounding to nearest: rounded with
    /// the exponent unbounded, it is below the smallest normal (a tie rounds up to it, its
    /// even neighbour).
    pub fn tiny_bound(self) -> f64 {
        2f64.powi(self.emin()) * (1.0 - 2f64.powi(-(self.mant_bits as i32 + 2)))
    }

    /// `.ftz` on `r`, an arithmetic result rounded to nearest from `exact`: zero of its sign
    /// where `exact` is tiny after rounding ([`tiny_bound`](Self::tiny_bound)), as IEEE 754's
    /// "tininess after rounding" and an H200 (measured) have it; a result that rounded up to
    /// the smallest normal from below it is flushed too.
    pub fn flush_tiny(self, exact: f64, r: u16) -> u16 {
        if exact.abs() < self.tiny_bound() {
            r & 0x8000
        } else {
            r
        }
    }

    /// The bits of the smallest normal.
    pub const fn min_normal_bits(self) -> u16 {
        1 << self.mant_bits
    }

    pub fn inf_bits(self) -> u16 {
        (((1u32 << self.exp_bits) - 1) << self.mant_bits) as u16
    }

    pub fn is_nan(self, bits: u16) -> bool {
        bits & 0x7FFF > self.inf_bits()
    }

    /// The exact value of `bits`. A NaN decodes to a quiet f64 NaN.
    pub fn to_f64(self, bits: u16) -> f64 {
        let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exp = ((bits & 0x7FFF) >> self.mant_bits) as i32;
        let frac = (bits & ((1 << self.mant_bits) - 1)) as f64;
        let max_exp = (1 << self.exp_bits) - 1;
        if exp == max_exp {
            return if frac == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        let (significand, e) = if exp == 0 {
            (frac, self.emin())
        } else {
            (frac + (1u32 << self.mant_bits) as f64, exp - self.bias())
        };
        sign * significand * 2f64.powi(e - self.mant_bits as i32)
    }

    /// The f32 bits of the exact value (`cvt.f32.f16`, `cvt.f32.bf16`), NaNs as an H200
    /// converts them: an f16 NaN gives the canonical f32 NaN (the conversion is an f32 add,
    /// `HADD2.F32`); a bf16 is the top half of an f32, so its NaN keeps every bit, a
    /// signalling one stays signalling.
    pub fn to_f32_bits(self, bits: u16) -> u32 {
        if self.exp_bits == 8 {
            return (bits as u32) << 16;
        }
        if self.is_nan(bits) {
            return CANONICAL_NAN_F32;
        }
        (self.to_f64(bits) as f32).to_bits()
    }

    /// The f64 bits of the exact value, NaNs as in [`to_f32_bits`](Self::to_f32_bits).
    pub fn to_f64_bits(self, bits: u16) -> u64 {
        if self.is_nan(bits) {
            let sign = (bits as u64 & 0x8000) << 48;
            let frac = bits as u64 & ((1 << self.mant_bits) - 1);
            return sign | 0x7FF8_0000_0000_0000 | frac << (52 - self.mant_bits);
        }
        self.to_f64(bits).to_bits()
    }

    /// Rounds `x` to this format with `mode`. NaN gives [`CANONICAL_NAN`]; overflow gives
    /// infinity or the largest finite value as the mode says.
    pub fn round(self, x: f64, mode: Rounding) -> u16 {
        self.round_by(x, |d| {
            // Past 64 bits (a value far below the quantum) the half is above any `rem`.
            let half = 1u64.checked_shl(d.shift - 1).unwrap_or(u64::MAX);
            let up = match mode {
                Rounding::Rn => d.rem > half || (d.rem == half && d.kept & 1 == 1),
                Rounding::Rna => d.rem >= half,
                Rounding::Rz => false,
                Rounding::Rp => d.rem != 0 && !d.negative,
                Rounding::Rm => d.rem != 0 && d.negative,
            };
            let to_inf = match mode {
                Rounding::Rn | Rounding::Rna => true,
                Rounding::Rz => false,
                Rounding::Rp => !d.negative,
                Rounding::Rm => d.negative,
            };
            (up, to_inf)
        })
    }

    /// `cvt.rs` (stochastic rounding) of an f32: away from zero when adding `rbits` to the
    /// discarded bits carries out, toward zero otherwise (ISA, "Rounding Modifiers"). The
    /// random field is as wide as what f32 discards for a normal result (13 bits for f16,
    /// 16 for bf16; higher bits of `rbits` are ignored) and is added to the top of the
    /// discarded bits; below an f16 subnormal result's quantum the lower discarded bits go
    /// by truncation. A result past the largest finite value is infinity if the random bits
    /// carried, the largest finite value if not.
    pub fn round_stochastic(self, x: f32, rbits: u32) -> u16 {
        let width = 23 - self.mant_bits;
        let random = (rbits & ((1 << width) - 1)) as u64;
        self.round_by(x as f64, |d| {
            let top = d.rem.checked_shr(d.shift - width).unwrap_or(0);
            let up = (top + random) >> width != 0;
            (up, up)
        })
    }

    /// Rounds `x`, asking `decide` whether to round the magnitude up and whether an
    /// overflowing result is infinity (else the largest finite value).
    fn round_by(self, x: f64, decide: impl FnOnce(Discarded) -> (bool, bool)) -> u16 {
        if x.is_nan() {
            return CANONICAL_NAN;
        }
        let raw = x.to_bits();
        let negative = raw >> 63 != 0;
        let sign = if negative { 0x8000u16 } else { 0 };
        let a = raw & !(1 << 63);
        if a == 0 {
            return sign;
        }
        if x.is_infinite() {
            return sign | self.inf_bits();
        }
        // x = m * 2^(e-52), m the 53-bit significand (f64 subnormals are far below the
        // smallest half subnormal; treating them as normal changes nothing but the sticky bits).
        let e = (a >> 52) as i32 - 1023;
        let m = (a & ((1 << 52) - 1)) | (1 << 52);
        // Drop the bits below the result's quantum 2^(max(e, emin) - mant_bits).
        let shift = (52 - self.mant_bits as i32 + (self.emin() - e).max(0)) as u32;
        let mut kept = m.checked_shr(shift).unwrap_or(0);
        let (up, to_inf) = decide(Discarded {
            kept,
            rem: m - (kept << shift.min(63)),
            shift,
            negative,
        });
        kept += up as u64;
        // One formula for normal and subnormal results; a carry out of the significand
        // increments the exponent field by itself.
        let bits = (((e.max(self.emin()) + self.bias() - 1) as u64) << self.mant_bits) + kept;
        if bits >= self.inf_bits() as u64 {
            return sign
                | if to_inf {
                    self.inf_bits()
                } else {
                    self.inf_bits() - 1
                };
        }
        sign | bits as u16
    }
}

/// f16/bf16 `add`, `sub`, `mul`, `fma` with `.rn`: exact in f64, then one rounding.
pub fn add(fmt: HalfFormat, a: u16, b: u16) -> u16 {
    fmt.round(fmt.to_f64(a) + fmt.to_f64(b), Rounding::Rn)
}

pub fn sub(fmt: HalfFormat, a: u16, b: u16) -> u16 {
    fmt.round(fmt.to_f64(a) - fmt.to_f64(b), Rounding::Rn)
}

pub fn mul(fmt: HalfFormat, a: u16, b: u16) -> u16 {
    fmt.round(fmt.to_f64(a) * fmt.to_f64(b), Rounding::Rn)
}

/// `a*b + c` as an f64 that rounds to the format as the exact value does, and is below
/// [`HalfFormat::tiny_bound`] exactly where the exact value is. f16: `a*b + c` in f64 is exact
/// for every finite f16 result. bf16: it is not (the exponent range is too wide), and rounding
/// it to nearest twice can err; rounding to odd first cannot (53 ≥ 8 + 2).
pub fn fma_exact(fmt: HalfFormat, a: u16, b: u16, c: u16) -> f64 {
    let (x, y, z) = (fmt.to_f64(a), fmt.to_f64(b), fmt.to_f64(c));
    if fmt == F16 {
        x.mul_add(y, z)
    } else {
        round_to_odd_sum(x * y, z)
    }
}

/// `fma.rn.f16` (no `.ftz`).
pub fn fma_f16(a: u16, b: u16, c: u16) -> u16 {
    fma(F16, false, a, b, c)
}

/// `fma.rn.bf16`.
pub fn fma_bf16(a: u16, b: u16, c: u16) -> u16 {
    fma(BF16, false, a, b, c)
}

/// `fma.rn{.ftz}` of halves already flushed as `.ftz` asks, rounded once: `.ftz` on the
/// result as [`HalfFormat::flush_tiny`] says.
pub fn fma(fmt: HalfFormat, ftz: bool, a: u16, b: u16, c: u16) -> u16 {
    let exact = fma_exact(fmt, a, b, c);
    let r = fmt.round(exact, Rounding::Rn);
    if ftz { fmt.flush_tiny(exact, r) } else { r }
}

/// `p + c` rounded to odd in f64 (`p`, `c` finite or not; the sum is exact or sticky).
pub fn round_to_odd_sum(p: f64, c: f64) -> f64 {
    let s = p + c;
    // TwoSum: s + e == p + c exactly.
    let bb = s - p;
    let e = (p - (s - bb)) + (c - bb);
    if e == 0.0 || e.is_nan() {
        return s;
    }
    let mut bits = s.to_bits();
    if (s < 0.0) != (e < 0.0) {
        bits -= 1; // truncate toward zero
    }
    f64::from_bits(bits | 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn next_rand(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn decoding_every_f16_matches_the_half_crate() {
        for bits in 0..=u16::MAX {
            let want = f16::from_bits(bits).to_f64();
            let got = F16.to_f64(bits);
            assert!(
                got == want || (got.is_nan() && want.is_nan()),
                "{bits:#06x}"
            );
        }
    }

    #[test]
    fn rn_from_f32_matches_the_half_crate_on_every_f32_exponent() {
        // half::f16::from_f32 rounds f32 → f16 once, to nearest even.
        let mut s = 0x1234_5678_9abc_def0u64;
        for _ in 0..400_000 {
            let x = f32::from_bits(next_rand(&mut s) as u32);
            let want = f16::from_f32(x).to_bits();
            let got = F16.round(x as f64, Rounding::Rn);
            if x.is_nan() {
                assert_eq!(got, CANONICAL_NAN);
            } else {
                assert_eq!(got, want, "{x:e} ({:#010x})", x.to_bits());
            }
        }
    }

    #[test]
    fn ties_round_to_even() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
        assert_eq!(F16.round(1.0 + 2f64.powi(-11), Rounding::Rn), 0x3C00);
        assert_eq!(F16.round(1.0 + 3.0 * 2f64.powi(-11), Rounding::Rn), 0x3C02);
        // Halfway between 0 and the smallest subnormal rounds to zero.
        assert_eq!(F16.round(2f64.powi(-25), Rounding::Rn), 0x0000);
        assert_eq!(F16.round(2f64.powi(-25) * 1.0001, Rounding::Rn), 0x0001);
    }

    #[test]
    fn directed_modes_and_overflow() {
        let x = 1.0 + 2f64.powi(-12);
        assert_eq!(F16.round(x, Rounding::Rz), 0x3C00);
        assert_eq!(F16.round(x, Rounding::Rp), 0x3C01);
        assert_eq!(F16.round(-x, Rounding::Rm), 0xBC01);
        assert_eq!(F16.round(-x, Rounding::Rp), 0xBC00);
        assert_eq!(F16.round(65520.0, Rounding::Rn), 0x7C00);
        assert_eq!(F16.round(65519.0, Rounding::Rn), 0x7BFF);
        assert_eq!(F16.round(1e9, Rounding::Rz), 0x7BFF);
        assert_eq!(F16.round(-1e9, Rounding::Rp), 0xFBFF);
        assert_eq!(F16.round(f64::INFINITY, Rounding::Rz), 0x7C00);
        assert_eq!(F16.round(1e-30, Rounding::Rp), 0x0001);
        assert_eq!(F16.round(-1e-30, Rounding::Rp), 0x8000);
        assert_eq!(F16.round(-0.0, Rounding::Rn), 0x8000);
    }

    #[test]
    fn nan_results_are_canonical() {
        assert_eq!(add(F16, 0x7C00, 0xFC00), CANONICAL_NAN);
        assert_eq!(mul(F16, 0x7E01, 0x3C00), CANONICAL_NAN);
        assert_eq!(BF16.round(f64::NAN, Rounding::Rn), CANONICAL_NAN);
    }

    #[test]
    fn bf16_rn_matches_the_half_crate() {
        let mut s = 0xdead_beef_1234_5678u64;
        for _ in 0..200_000 {
            let x = f32::from_bits(next_rand(&mut s) as u32);
            if x.is_nan() {
                continue;
            }
            assert_eq!(
                BF16.round(x as f64, Rounding::Rn),
                half::bf16::from_f32(x).to_bits(),
                "{x:e}"
            );
        }
    }

    #[test]
    fn bf16_fma_rounds_once_even_across_a_wide_exponent_gap() {
        // fma(7, 37, -2^-133) = 259 - 2^-133. bf16 spacing near 259 is 2, so 259 is the
        // midpoint of 258 and 260 and the exact value lies just below it: 258 (0x4381).
        // Rounding through f64 lands on the midpoint and ties to even: 260 (0x4382).
        let seven = BF16.round(7.0, Rounding::Rn);
        let thirty_seven = BF16.round(37.0, Rounding::Rn);
        let tiny_neg = 0x8001; // -2^-133, the smallest bf16 subnormal
        assert_eq!(fma_bf16(seven, thirty_seven, tiny_neg), 0x4381);
        assert_eq!(
            BF16.round(7.0f64.mul_add(37.0, -(2f64.powi(-133))), Rounding::Rn),
            0x4382
        );
    }

    #[test]
    fn f16_fma_rounds_once() {
        // (1 + 2^-10) * (1 + 2^-10) = 1 + 2^-9 + 2^-20: separately rounded it would lose 2^-20;
        // with c = -(1 + 2^-9) the exact result is 2^-20.
        let a = 0x3C01;
        let c = 0xBC02;
        assert_eq!(fma_f16(a, a, c), F16.round(2f64.powi(-20), Rounding::Rn));
        assert_ne!(fma_f16(a, a, c), add(F16, mul(F16, a, a), c));
    }
}
