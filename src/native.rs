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

/// The helper for one `f16x2` operation.
pub const SYMBOL: &str = "ptxjit_f16_arith";

/// The helper for eight halves at once: one vector of a lane group (`lower::lanes`), four
/// `f16x2` or `bf16x2` lanes or eight scalar ones. Arguments and result are 128-bit vectors
/// (`i32x4`), plus the same `code`. bf16 works the same way:
/// exact decode (a shift), one f32 operation, one rounding to nearest even (integer bit
/// arithmetic), the exact fma where the f32 fma landed on a bf16 midpoint.
pub const SYMBOL_X8: &str = "ptxjit_f16_arith_x8";

/// Whether the helpers can run on this host.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("f16c")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Bit of `code` that selects bf16 (the eight-half helper only).
const BF16: u32 = 1 << 7;

/// The helper's `code` argument for an `add sub mul fma` of format `ty` (the eight-half
/// helper also does bf16) with these modifiers, if the helpers do that form (all but `.oob`).
pub fn code(op: FloatOp, mods: FloatMods, ty: crate::types::PtxType) -> Option<u32> {
    use crate::types::PtxType;
    let format = match ty {
        PtxType::F16 | PtxType::F16x2 => 0,
        PtxType::BF16 | PtxType::BF16x2 => BF16,
        _ => return None,
    };
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
    Some(
        op_bits
            | (mods.ftz as u32) << 4
            | (mods.sat as u32) << 5
            | (mods.relu as u32) << 6
            | format,
    )
}

/// An argument or result of a helper.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Slot {
    I32,
    I32x4,
}

/// (name, address, arguments, result) for the JIT's symbol table.
pub fn symbols() -> Vec<(&'static str, *const u8, Vec<Slot>, Slot)> {
    use Slot::*;
    vec![
        (SYMBOL, f16_arith as *const u8, vec![I32; 4], I32),
        #[cfg(target_arch = "x86_64")]
        (
            SYMBOL_X8,
            f16_arith_x8 as *const u8,
            vec![I32x4, I32x4, I32x4, I32],
            I32x4,
        ),
    ]
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CANONICAL_NAN;
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

    /// The constants of a half format: smallest normal, infinity, one.
    #[derive(Clone, Copy)]
    struct Format {
        min_normal: i16,
        inf: i16,
        one: i16,
    }
    const F16: Format = Format {
        min_normal: 0x0400,
        inf: 0x7C00,
        one: 0x3C00,
    };
    const BF16: Format = Format {
        min_normal: 0x0080,
        inf: 0x7F80,
        one: 0x3F80,
    };

    /// `.ftz` on eight halves: subnormals become zero of the same sign.
    #[target_feature(enable = "avx2")]
    fn flush(x: __m128i, f: Format) -> __m128i {
        let mag = _mm_and_si128(x, _mm_set1_epi16(0x7FFF));
        let subnormal = _mm_cmplt_epi16(mag, _mm_set1_epi16(f.min_normal));
        let signed_zero = _mm_and_si128(x, _mm_set1_epi16(0x8000u16 as i16));
        _mm_blendv_epi8(x, signed_zero, subnormal)
    }

    /// Which of eight halves are NaN (all ones) or not (zero).
    #[target_feature(enable = "avx2")]
    fn nan(x: __m128i, f: Format) -> __m128i {
        let mag = _mm_and_si128(x, _mm_set1_epi16(0x7FFF));
        _mm_cmpgt_epi16(mag, _mm_set1_epi16(f.inf))
    }

    /// Eight bf16 values, exactly, as f32.
    #[target_feature(enable = "avx2")]
    fn bf16_to_f32(x: __m128i) -> __m256 {
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(x)))
    }

    /// Eight f32 values rounded to bf16, nearest even (NaNs give the canonical NaN).
    #[target_feature(enable = "avx2")]
    fn f32_to_bf16(r: __m256) -> __m128i {
        let bits = _mm256_castps_si256(r);
        let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(bits), _mm256_set1_epi32(1));
        let rounded = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), odd);
        let h = _mm256_srli_epi32::<16>(rounded);
        let nan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(r, r));
        let h = _mm256_blendv_epi8(h, _mm256_set1_epi32(CANONICAL_NAN as i32), nan);
        _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h))
    }

    /// The eight-half form of the scalar helper: same steps, same order, same bits.
    #[target_feature(enable = "avx2,f16c,fma")]
    pub fn arith8(a: __m128i, b: __m128i, c: __m128i, code: u32) -> __m128i {
        let op = code & 15;
        let (ftz, sat, relu) = (code & 16 != 0, code & 32 != 0, code & 64 != 0);
        let bf16 = code & super::BF16 != 0;
        let f = if bf16 { BF16 } else { F16 };
        let (a, b, c) = if ftz {
            (flush(a, f), flush(b, f), flush(c, f))
        } else {
            (a, b, c)
        };
        let decode = |x| {
            if bf16 {
                bf16_to_f32(x)
            } else {
                _mm256_cvtph_ps(x)
            }
        };
        let (fa, fb, fc) = (decode(a), decode(b), decode(c));
        let r = match op {
            0 => _mm256_add_ps(fa, fb),
            1 => _mm256_sub_ps(fa, fb),
            2 => _mm256_mul_ps(fa, fb),
            _ => _mm256_fmadd_ps(fa, fb, fc),
        };
        let mut h = if bf16 {
            f32_to_bf16(r)
        } else {
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r);
            _mm_blendv_epi8(h, _mm_set1_epi16(CANONICAL_NAN as i16), nan(h, f))
        };
        if op == 3 {
            // The f32 fma rounded once already; where it landed on a midpoint of the half
            // format, the exact fma decides. (Off a midpoint, both roundings agree: the
            // midpoints are f32 values, so the f32 rounding cannot cross one.)
            let bits = _mm256_castps_si256(r);
            let on_midpoint = if bf16 {
                _mm256_cmpeq_epi32(
                    _mm256_and_si256(bits, _mm256_set1_epi32(0xFFFF)),
                    _mm256_set1_epi32(0x8000),
                )
            } else {
                let low_zero = _mm256_cmpeq_epi32(
                    _mm256_and_si256(bits, _mm256_set1_epi32(0xFFF)),
                    _mm256_setzero_si256(),
                );
                let moved = _mm256_cmp_ps::<_CMP_NEQ_OQ>(_mm256_cvtph_ps(h), r);
                _mm256_and_si256(low_zero, _mm256_castps_si256(moved))
            };
            // Only an inexact f32 result can be wrong there. The product is exact in f32
            // (f16: always; bf16: unless it leaves the normal range), so the error of the
            // sum (TwoSum, exact) is the fma's.
            let p = _mm256_mul_ps(fa, fb);
            let sum = _mm256_add_ps(p, fc);
            let bb = _mm256_sub_ps(sum, p);
            let err = _mm256_add_ps(
                _mm256_sub_ps(p, _mm256_sub_ps(sum, bb)),
                _mm256_sub_ps(fc, bb),
            );
            let mut exact = _mm256_cmp_ps::<_CMP_EQ_OQ>(err, _mm256_setzero_ps());
            if bf16 {
                let mag = _mm256_andnot_ps(_mm256_set1_ps(-0.0), p);
                let normal = _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(mag, _mm256_set1_ps(f32::MIN_POSITIVE)),
                    _mm256_cmp_ps::<_CMP_LT_OQ>(mag, _mm256_set1_ps(f32::INFINITY)),
                );
                let zero_factor = _mm256_or_ps(
                    _mm256_cmp_ps::<_CMP_EQ_OQ>(fa, _mm256_setzero_ps()),
                    _mm256_cmp_ps::<_CMP_EQ_OQ>(fb, _mm256_setzero_ps()),
                );
                exact = _mm256_and_ps(exact, _mm256_or_ps(normal, zero_factor));
            }
            let hazard =
                _mm256_movemask_ps(_mm256_andnot_ps(exact, _mm256_castsi256_ps(on_midpoint)));
            if hazard != 0 {
                let mut out = [0u16; 8];
                let (mut la, mut lb, mut lc) = ([0u16; 8], [0u16; 8], [0u16; 8]);
                // SAFETY: each array has room for eight halves.
                unsafe {
                    _mm_storeu_si128(out.as_mut_ptr().cast(), h);
                    _mm_storeu_si128(la.as_mut_ptr().cast(), a);
                    _mm_storeu_si128(lb.as_mut_ptr().cast(), b);
                    _mm_storeu_si128(lc.as_mut_ptr().cast(), c);
                }
                let exact = if bf16 {
                    crate::semantics::half::fma_bf16
                } else {
                    crate::semantics::half::fma_f16
                };
                for i in (0..8).filter(|i| hazard >> i & 1 == 1) {
                    out[i] = exact(la[i], lb[i], lc[i]);
                }
                // SAFETY: as above.
                h = unsafe { _mm_loadu_si128(out.as_ptr().cast()) };
            }
        }
        if ftz {
            h = flush(h, f);
        }
        let zero = _mm_setzero_si128();
        if sat {
            // NaN and negatives (−0 too) give +0, then clamp to 1.0.
            let out = _mm_or_si128(nan(h, f), _mm_cmplt_epi16(h, zero));
            h = _mm_min_epu16(_mm_andnot_si128(out, h), _mm_set1_epi16(f.one));
        }
        if relu {
            let nan = nan(h, f);
            h = _mm_andnot_si128(_mm_cmplt_epi16(h, zero), h);
            h = _mm_blendv_epi8(h, _mm_set1_epi16(CANONICAL_NAN as i16), nan);
        }
        h
    }
}

/// Whether `p + c` is exact in f32 (TwoSum's error term is zero). With `p` an exact product
/// of two halves (always, for f16), that says whether the f32 fma was exact.
fn sum_is_exact(p: f32, c: f32) -> bool {
    let s = p + c;
    let bb = s - p;
    (p - (s - bb)) + (c - bb) == 0.0
}

/// `ptxjit_f16_arith_x8(a, b, c, code)`: [`f16_arith`] on eight halves.
// A 128-bit vector goes in an xmm register in the x86-64 C ABI, as Cranelift passes I32X4.
#[allow(improper_ctypes_definitions)]
#[cfg(target_arch = "x86_64")]
extern "C" fn f16_arith_x8(
    a: std::arch::x86_64::__m128i,
    b: std::arch::x86_64::__m128i,
    c: std::arch::x86_64::__m128i,
    code: u32,
) -> std::arch::x86_64::__m128i {
    // SAFETY: the JIT only calls the helper when `available()` said so.
    unsafe { x86::arith8(a, b, c, code) }
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
                // On a half midpoint: if the f32 fma was inexact, the exact fma decides.
                let l = |v: u32| (v >> (16 * lane)) as u16;
                let x = |v: u32| F16.to_f64(l(v)) as f32;
                if !sum_is_exact(x(a) * x(b), x(c)) {
                    h = crate::semantics::half::fma_f16(l(a), l(b), l(c));
                }
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
