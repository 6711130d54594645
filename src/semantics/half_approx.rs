//! `tanh.approx` and `ex2.approx` on halves: the bits an NVIDIA H200 gives.
//!
//! Each form runs one hardware function a half (MUFU.TANH.F16, MUFU.TANH.BF16, MUFU.EX2.F16,
//! MUFU.EX2.BF16; an x2 form runs it on each lane). Recorded on all 65,536 inputs, the
//! scalar form and both lanes of the pair form give the same function, and each result is
//! either the correctly rounded one or its bit pattern minus one (one ulp nearer zero, never
//! across zero, infinity or NaN). So a hardware function is its correctly rounded result,
//! computed here, less one bit an input read from a table that
//! `tools/gpu-truth/half_tables.py` writes from the recordings (`half_approx/*.bin`).
//!
//! The ISA has one `ex2` form a format, f16 without `.ftz` and bf16 with it, so the format
//! alone names the hardware function.

use super::half::{BF16, HalfFormat};
use crate::frontend::checked::{FloatOp, Rounding};

/// A hardware function of halves, named as in SASS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mufu {
    TanhF16,
    TanhBf16,
    Ex2F16,
    /// Flushes subnormal inputs and results to zero (`ex2.approx.ftz.bf16`).
    Ex2Bf16,
}

/// Bit h (byte h >> 3, bit h & 7): the hardware's result for the half h is one below the
/// correctly rounded one.
type Below = [u8; (1 << 16) / 8];

static TANH_F16: &Below = include_bytes!("half_approx/mufu_tanh_f16.bin");
static TANH_BF16: &Below = include_bytes!("half_approx/mufu_tanh_bf16.bin");
static EX2_F16: &Below = include_bytes!("half_approx/mufu_ex2_f16.bin");
static EX2_BF16: &Below = include_bytes!("half_approx/mufu_ex2_bf16.bin");

impl Mufu {
    pub const ALL: [Mufu; 4] = [Mufu::TanhF16, Mufu::TanhBf16, Mufu::Ex2F16, Mufu::Ex2Bf16];

    /// The function `tanh.approx` (`Tanh`) or `ex2.approx` (`Ex2`) runs on halves of `fmt`;
    /// `None` for other operations.
    pub fn of(op: FloatOp, fmt: HalfFormat) -> Option<Mufu> {
        let bf16 = fmt == BF16;
        match op {
            FloatOp::Tanh if bf16 => Some(Mufu::TanhBf16),
            FloatOp::Tanh => Some(Mufu::TanhF16),
            FloatOp::Ex2 if bf16 => Some(Mufu::Ex2Bf16),
            FloatOp::Ex2 => Some(Mufu::Ex2F16),
            _ => None,
        }
    }

    /// Its SASS name.
    pub fn name(self) -> &'static str {
        match self {
            Mufu::TanhF16 => "MUFU.TANH.F16",
            Mufu::TanhBf16 => "MUFU.TANH.BF16",
            Mufu::Ex2F16 => "MUFU.EX2.F16",
            Mufu::Ex2Bf16 => "MUFU.EX2.BF16",
        }
    }

    pub fn format(self) -> HalfFormat {
        match self {
            Mufu::TanhF16 | Mufu::Ex2F16 => super::half::F16,
            Mufu::TanhBf16 | Mufu::Ex2Bf16 => BF16,
        }
    }

    /// The hardware's result for the half `h`.
    pub fn eval(self, h: u16) -> u16 {
        self.correctly_rounded(h) - u16::from(self.below(h))
    }

    /// The exact result rounded once to nearest even (NaN → canonical NaN): what the table
    /// is relative to, and what `half_tables.py` computes the same way.
    pub fn correctly_rounded(self, h: u16) -> u16 {
        let fmt = self.format();
        match self {
            Mufu::TanhF16 | Mufu::TanhBf16 => fmt.round(fmt.to_f64(h).tanh(), Rounding::Rn),
            Mufu::Ex2F16 => fmt.round(fmt.to_f64(h).exp2(), Rounding::Rn),
            Mufu::Ex2Bf16 => {
                let r = fmt.round(fmt.to_f64(fmt.flush(h)).exp2(), Rounding::Rn);
                fmt.flush(r)
            }
        }
    }

    /// Whether the hardware's result for `h` is one below the correctly rounded one.
    pub fn below(self, h: u16) -> bool {
        let table = match self {
            Mufu::TanhF16 => TANH_F16,
            Mufu::TanhBf16 => TANH_BF16,
            Mufu::Ex2F16 => EX2_F16,
            Mufu::Ex2Bf16 => EX2_BF16,
        };
        table[usize::from(h >> 3)] >> (h & 7) & 1 == 1
    }
}

/// `tanh.approx` of the half `h` in `fmt`.
pub fn tanh_approx(fmt: HalfFormat, h: u16) -> u16 {
    Mufu::of(FloatOp::Tanh, fmt).expect("tanh").eval(h)
}

/// `ex2.approx` (f16) or `ex2.approx.ftz` (bf16) of the half `h`.
pub fn ex2_approx(fmt: HalfFormat, h: u16) -> u16 {
    Mufu::of(FloatOp::Ex2, fmt).expect("ex2").eval(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::half::{CANONICAL_NAN, F16};

    fn all_halves() -> impl Iterator<Item = u16> {
        0..=u16::MAX
    }

    /// Inputs and outputs read from the H200 recordings (`<form>.truth.gz`): most where the
    /// hardware is one below the correctly rounded result, some where it is not.
    #[test]
    fn the_tables_give_recorded_h200_results() {
        let recorded = [
            // tanh.approx.f16: 0x1c08 is the first input the hardware rounds down.
            (Mufu::TanhF16, 0x1c07, 0x1c07),
            (Mufu::TanhF16, 0x1c08, 0x1c07),
            (Mufu::TanhF16, 0x3c00, 0x3a17),
            (Mufu::TanhF16, 0xb800, 0xb764),
            (Mufu::TanhF16, 0x4400, 0x3bfe),
            (Mufu::TanhBf16, 0x3b81, 0x3b80),
            (Mufu::TanhBf16, 0x3f3f, 0x3f21),
            (Mufu::TanhBf16, 0xbf80, 0xbf42),
            (Mufu::Ex2F16, 0x11c5, 0x3c00),
            (Mufu::Ex2F16, 0x83ff, 0x3bff),
            (Mufu::Ex2F16, 0x3c00, 0x4000),
            (Mufu::Ex2F16, 0xcc00, 0x0100),
            (Mufu::Ex2Bf16, 0x3bb9, 0x3f80),
            (Mufu::Ex2Bf16, 0x3f00, 0x3fb5),
            // 2^-126, the smallest normal; 2^-127 flushed to zero.
            (Mufu::Ex2Bf16, 0xc2fc, 0x0080),
            (Mufu::Ex2Bf16, 0xc2fe, 0x0000),
        ];
        for (f, input, output) in recorded {
            assert_eq!(f.eval(input), output, "{} of {input:#06x}", f.name());
        }
    }

    #[test]
    fn one_below_never_crosses_zero_infinity_or_nan() {
        for f in Mufu::ALL {
            let fmt = f.format();
            for h in all_halves().filter(|&h| f.below(h)) {
                let r = f.correctly_rounded(h);
                assert!(
                    r & 0x7FFF != 0 && !fmt.is_nan(r) && r & 0x7FFF != fmt.inf_bits(),
                    "{} of {h:#06x}: {r:#06x}",
                    f.name()
                );
            }
        }
    }

    #[test]
    fn nan_inputs_give_the_canonical_nan() {
        for f in Mufu::ALL {
            for h in all_halves().filter(|&h| f.format().is_nan(h)) {
                assert_eq!(f.eval(h), CANONICAL_NAN, "{} of {h:#06x}", f.name());
            }
        }
    }

    #[test]
    fn tanh_is_odd_and_saturates_to_one() {
        for f in [Mufu::TanhF16, Mufu::TanhBf16] {
            let fmt = f.format();
            for h in all_halves().filter(|&h| !fmt.is_nan(h)) {
                assert_eq!(f.eval(h ^ 0x8000), f.eval(h) ^ 0x8000, "{h:#06x}");
            }
            assert_eq!(f.eval(0), 0);
            assert_eq!(f.eval(0x8000), 0x8000);
            assert_eq!(f.eval(fmt.inf_bits()), fmt.one());
            assert_eq!(f.eval(fmt.inf_bits() | 0x8000), fmt.one() | 0x8000);
        }
    }

    #[test]
    fn ex2_of_zero_is_one_and_of_infinities_is_infinity_and_zero() {
        for f in [Mufu::Ex2F16, Mufu::Ex2Bf16] {
            let fmt = f.format();
            assert_eq!(f.eval(0), fmt.one());
            assert_eq!(f.eval(0x8000), fmt.one());
            assert_eq!(f.eval(fmt.inf_bits()), fmt.inf_bits());
            assert_eq!(f.eval(fmt.inf_bits() | 0x8000), 0);
        }
    }

    #[test]
    fn bf16_ex2_flushes_subnormal_inputs_to_one_and_never_gives_a_subnormal() {
        let f = Mufu::Ex2Bf16;
        for h in all_halves() {
            let r = f.eval(h);
            if BF16.flush(h) & 0x7FFF == 0 {
                assert_eq!(r, BF16.one(), "{h:#06x}");
            }
            assert_eq!(BF16.flush(r), r, "{h:#06x} gives {r:#06x}");
        }
    }

    #[test]
    fn f16_ex2_keeps_subnormal_results() {
        // 2^-24, the smallest subnormal, from -24 (0xce00); 2^-15 from -15 (0xcb80).
        assert_eq!(Mufu::Ex2F16.eval(0xce00), 0x0001);
        assert_eq!(Mufu::Ex2F16.eval(0xcb80), 0x0200);
    }

    #[test]
    fn each_format_and_operation_names_its_hardware_function() {
        assert_eq!(Mufu::of(FloatOp::Tanh, F16), Some(Mufu::TanhF16));
        assert_eq!(Mufu::of(FloatOp::Tanh, BF16), Some(Mufu::TanhBf16));
        assert_eq!(Mufu::of(FloatOp::Ex2, F16), Some(Mufu::Ex2F16));
        assert_eq!(Mufu::of(FloatOp::Ex2, BF16), Some(Mufu::Ex2Bf16));
        assert_eq!(Mufu::of(FloatOp::Add, F16), None);
        for f in Mufu::ALL {
            assert_eq!(
                f.format(),
                if f.name().ends_with("BF16") {
                    BF16
                } else {
                    F16
                }
            );
        }
    }
}
