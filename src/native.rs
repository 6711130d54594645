//! Precompiled helpers for the heaviest half instructions, used when the host has F16C and
//! FMA: one call computes both lanes of an `f16x2` `add`, `sub`, `mul` or `fma` with the
//! hardware's exact f16 ↔ f32 conversions, where the inline IR spends about thirty
//! instructions per lane. `ptxjit bench` compares both on f16x2 (the call wins: axpy
//! 1.6–1.9×, fma chain 1.2–1.3×); for scalar f16 the call measured 0.75–0.84× the inline
//! code, so scalar f16 stays inline. Same algorithm, same bits as the inline code and the
//! reference: `.ftz` on the inputs, exact decode, one f32 operation, round to nearest even
//! (fma falls back to the reference when the f32 result sits on a half midpoint), `.ftz` on
//! the result, then `.sat` and `.relu`; NaN results are canonical.

use crate::frontend::checked::{FloatMods, FloatOp, Rounding};
use crate::semantics::half::{CANONICAL_NAN, F16};

/// The one helper symbol.
pub const SYMBOL: &str = "ptxjit_f16_arith";

/// Whether the helpers can run on this host.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("f16c") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The helper's `code` argument for an f16 `add sub mul fma` with these modifiers, if the
/// helper does that form (everything but `.oob`).
pub fn code(op: FloatOp, mods: FloatMods) -> Option<u32> {
    let op_bits = match op {
        FloatOp::Add => 0,
        FloatOp::Sub => 1,
        FloatOp::Mul => 2,
        FloatOp::Fma => 3,
        _ => return None,
    };
    let others = FloatMods {
        rnd: mods.rnd,
        ftz: mods.ftz,
        sat: mods.sat,
        relu: mods.relu,
        ..FloatMods::default()
    };
    if mods != others || !matches!(mods.rnd, None | Some(Rounding::Rn)) {
        return None;
    }
    Some(op_bits | (mods.ftz as u32) << 4 | (mods.sat as u32) << 5 | (mods.relu as u32) << 6)
}

/// (name, address, number of i32 arguments) for the JIT's symbol table.
pub fn symbols() -> Vec<(&'static str, *const u8, usize)> {
    vec![(SYMBOL, f16_arith as *const u8, 4)]
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Both lanes of packed f16x2 `a`, `b`, `c` decoded to f32, combined by `op`, rounded to f16
    /// by the hardware (nearest even); returns the packed result and the f32 values.
    #[target_feature(enable = "f16c,fma")]
    pub unsafe fn lanes(a: u32, b: u32, c: u32, op: u32) -> (u32, [f32; 4]) {
        let va = _mm_cvtph_ps(_mm_cvtsi32_si128(a as i32));
        let vb = _mm_cvtph_ps(_mm_cvtsi32_si128(b as i32));
        let vc = _mm_cvtph_ps(_mm_cvtsi32_si128(c as i32));
        let r = match op {
            0 => _mm_add_ps(va, vb),
            1 => _mm_sub_ps(va, vb),
            2 => _mm_mul_ps(va, vb),
            _ => _mm_fmadd_ps(va, vb, vc),
        };
        let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r);
        let mut out = [0f32; 4];
        // SAFETY: `out` has room for four f32.
        unsafe { _mm_storeu_ps(out.as_mut_ptr(), r) };
        (_mm_cvtsi128_si32(h) as u32, out)
    }
}

/// `ptxjit_f16_arith(a, b, c, code)`: see [`code`].
extern "C" fn f16_arith(a: u32, b: u32, c: u32, code: u32) -> u32 {
    let op = code & 15;
    let (ftz, sat, relu) = (code & 16 != 0, code & 32 != 0, code & 64 != 0);
    let flush2 = |v: u32| {
        if ftz {
            F16.flush(v as u16) as u32 | (F16.flush((v >> 16) as u16) as u32) << 16
        } else {
            v
        }
    };
    let (a, b, c) = (flush2(a), flush2(b), flush2(c));
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the JIT only calls the helper when `available()` said so.
        let (packed, f) = unsafe { x86::lanes(a, b, c, op) };
        let mut result = 0u32;
        for (lane, &r) in f.iter().enumerate().take(2) {
            let mut h = (packed >> (16 * lane)) as u16;
            if r.is_nan() {
                h = CANONICAL_NAN;
            } else if op == 3 && r.to_bits() & 0xFFF == 0 && F16.to_f64(h) != r as f64 {
                // On a half midpoint: the exact fma decides.
                let l = |v: u32| (v >> (16 * lane)) as u16;
                h = crate::semantics::half::fma_f16(l(a), l(b), l(c));
            }
            if ftz {
                h = F16.flush(h);
            }
            if sat {
                h = F16.saturate(h);
            }
            if relu {
                h = F16.relu(h);
            }
            result |= (h as u32) << (16 * lane);
        }
        result
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (a, b, c, op, sat, relu);
        unreachable!("the native helper is only used on x86-64")
    }
}
