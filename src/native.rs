//! Precompiled helpers for the heaviest half instructions, used when the host has F16C and
//! FMA: one call computes both lanes of an `.f16x2` operation with the hardware's exact f16 ↔
//! f32 conversions, where the inline IR spends about thirty instructions per lane. The
//! results are the same bits as the inline code and the reference (same algorithm: exact
//! decode, one f32 operation, round to nearest even; fma falls back to the reference when the
//! f32 result sits on a half midpoint; NaN results are canonical).

use crate::frontend::checked::FloatOp;
use crate::semantics::half::{CANONICAL_NAN, F16};

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

/// The helper symbol for a plain (`.rn`, no other modifier) `.f16x2` operation, if any.
pub fn f16x2_helper(op: FloatOp) -> Option<&'static str> {
    Some(match op {
        FloatOp::Add => "ptxjit_add_f16x2",
        FloatOp::Sub => "ptxjit_sub_f16x2",
        FloatOp::Mul => "ptxjit_mul_f16x2",
        FloatOp::Fma => "ptxjit_fma_f16x2",
        _ => return None,
    })
}

/// (name, address, sources) of every helper, for the JIT's symbol table.
pub fn symbols() -> Vec<(&'static str, *const u8, usize)> {
    vec![
        ("ptxjit_add_f16x2", add_f16x2 as *const u8, 2),
        ("ptxjit_sub_f16x2", sub_f16x2 as *const u8, 2),
        ("ptxjit_mul_f16x2", mul_f16x2 as *const u8, 2),
        ("ptxjit_fma_f16x2", fma_f16x2 as *const u8, 3),
    ]
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Both lanes of `a`, `b`, `c` (packed f16x2) as f32, computed by `f`, rounded to f16 by
    /// the hardware (round to nearest even); returns the packed result and the f32 values.
    #[target_feature(enable = "f16c,fma")]
    pub unsafe fn lanes(a: u32, b: u32, c: u32, op: u8) -> (u32, [f32; 4]) {
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

fn run(a: u32, b: u32, c: u32, op: u8) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the JIT only calls the helpers when `available()` said so.
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
            result |= (h as u32) << (16 * lane);
        }
        result
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (a, b, c, op);
        unreachable!("native helpers are only used on x86-64")
    }
}

extern "C" fn add_f16x2(a: u32, b: u32) -> u32 {
    run(a, b, 0, 0)
}
extern "C" fn sub_f16x2(a: u32, b: u32) -> u32 {
    run(a, b, 0, 1)
}
extern "C" fn mul_f16x2(a: u32, b: u32) -> u32 {
    run(a, b, 0, 2)
}
extern "C" fn fma_f16x2(a: u32, b: u32, c: u32) -> u32 {
    run(a, b, c, 3)
}
