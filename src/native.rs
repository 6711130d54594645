//! Precompiled helpers for the heaviest half instructions, used when the host has F16C, FMA
//! and AVX2, with the hardware's exact f16 ↔ f32 conversions where the inline IR spends about
//! thirty instructions a lane:
//! - [`SYMBOL`]: both lanes of one `f16x2` `add`, `sub`, `mul` or `fma`, or a scalar `f16`
//!   one in the low lane (one-thread code; faster than the inline IR for both since session
//!   28: see `lower::half`);
//! - [`GroupHelpers`]: the same operation on every lane of a lane group (`lower::simd`), f16
//!   or bf16, through memory: sixteen halves a step with AVX-512, eight with AVX2, the
//!   implementation the widest this CPU has (checked when the JIT starts) that
//!   `CompileOptions::native_helpers` allows ([`Isa`]). One function per operation code (op,
//!   format, modifiers: [`CODES`] of them) and set of uniform operands, compiled with both as
//!   constants, so that a call tests neither; the JIT calls it by its address.
//!
//! Same bits as the inline code and the reference: `.ftz` on the inputs, exact decode, one
//! f32 operation, round to nearest even, `.ftz` on the result, then `.sat` and `.relu`; NaN
//! results are canonical. An f32 `add`, `sub` or `mul` of halves rounds to the half's bits
//! (f32 keeps more than twice their precision), an f32 fma does not always: the group
//! helpers round it to odd in f32 first (`fma_to_odd16` with AVX-512's rounding per
//! instruction, `fma_rounded_up` with AVX2), which makes the second rounding exact; the
//! one-pair helper rounds the lanes whose f32 result lands exactly on a half midpoint
//! inexactly towards the exact value (TwoSum's error term says which way it lies).

use crate::frontend::checked::{FloatMods, FloatOp, Rounding};
use crate::semantics::half::{CANONICAL_NAN, F16};
use crate::semantics::half_ops::exact;

/// The helper for one `f16x2` operation.
pub const SYMBOL: &str = "ptxjit_f16_arith";

/// The instruction sets the group helpers are built for, narrowest first. The JIT calls the
/// widest that both the CPU (checked at run time) and `CompileOptions::native_helpers` allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// AVX2, F16C and FMA: eight halves a step.
    Avx2,
    /// AVX-512 F, BW and VL as well: sixteen halves a step.
    Avx512,
}

impl Isa {
    /// A `PTXJIT_HELPERS` value: `avx512`, `avx2`, or `off` (`None`: no helpers).
    pub fn parse(name: &str) -> Option<Option<Isa>> {
        match name.trim().to_ascii_lowercase().as_str() {
            "avx512" => Some(Some(Isa::Avx512)),
            "avx2" => Some(Some(Isa::Avx2)),
            "off" => Some(None),
            _ => None,
        }
    }
}

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

/// Bit of `code` that selects bf16 (the group helper only).
const BF16: u32 = 1 << 7;

/// The helper's `code` argument for an `add sub mul fma` of format `ty` (the group helper
/// also does bf16) with these modifiers, if the helpers do that form (all but `.oob`).
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

/// How many operation codes there are: 4 operations × `.ftz .sat .relu` × f16/bf16.
pub const CODES: usize = 64;

/// The operation code at `index` (0..[`CODES`]): the inverse of [`index`].
const fn code_at(index: usize) -> u32 {
    let i = index as u32;
    (i & 3) | (i >> 2 & 7) << 4 | (i >> 5 & 1) << 7
}

/// Where an operation code sits among the [`CODES`].
fn index(code: u32) -> usize {
    ((code & 3) | (code >> 4 & 7) << 2 | (code >> 7 & 1) << 5) as usize
}

/// The widest instruction set this CPU runs the group helpers with (`None`: none).
pub fn widest() -> Option<Isa> {
    group_helpers().first().map(|g| g.isa)
}

/// The address of the one-pair helper, [`SYMBOL`]: `(a, b, c, code: u32) -> u32`.
pub fn pair_helper() -> *const u8 {
    f16_arith as *const u8
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CANONICAL_NAN;
    use std::arch::x86_64::*;

    mod fma_rounded_up;

    /// Both lanes of packed f16x2 `a`, `b`, `c` decoded to f32, combined by `op`, rounded to f16
    /// to nearest even as the exact operation rounds; returns the packed result and a bit for
    /// each lane whose result is a NaN (to be made canonical).
    ///
    /// An f32 `add`, `sub` or `mul` of halves rounds to the half's bits. An f32 fma rounds
    /// twice, wrongly where its result `r` lands exactly on a half midpoint while the exact
    /// value was not there: such a lane (found in two steps, the first cheap: low 12 bits
    /// zero and no half) rounds towards the exact value instead, whose side TwoSum's error
    /// term tells (`a × b` is exact in f32).
    #[target_feature(enable = "f16c,fma")]
    pub fn lanes(a: u32, b: u32, c: u32, op: u32) -> (u32, u32) {
        let va = _mm_cvtph_ps(_mm_cvtsi32_si128(a as i32));
        let vb = _mm_cvtph_ps(_mm_cvtsi32_si128(b as i32));
        let vc = _mm_cvtph_ps(_mm_cvtsi32_si128(c as i32));
        let r = match op {
            0 => _mm_add_ps(va, vb),
            1 => _mm_sub_ps(va, vb),
            2 => _mm_mul_ps(va, vb),
            _ => _mm_fmadd_ps(va, vb, vc),
        };
        let mut h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r);
        let nan = _mm_movemask_ps(_mm_cmpunord_ps(r, r)) as u32 & 3;
        if op == 3 {
            let low_zero = _mm_cmpeq_epi32(
                _mm_and_si128(_mm_castps_si128(r), _mm_set1_epi32(0xFFF)),
                _mm_setzero_si128(),
            );
            let no_half = _mm_cmpneq_ps(r, _mm_cvtph_ps(h));
            let maybe = _mm_and_ps(_mm_castsi128_ps(low_zero), no_half);
            if _mm_movemask_ps(maybe) & 3 != 0 {
                h = midpoints_towards_exact(va, vb, vc, r, h);
            }
        }
        (_mm_cvtsi128_si32(h) as u32, nan)
    }

    /// [`lanes`]' fma results `h` (of f32 results `r` of `a × b + c`), with the lanes where
    /// `r` is a half midpoint and inexact rounded towards the exact value: the half below `r`
    /// in magnitude, or the one above where the exact value is farther from zero than `r`
    /// (the half above the largest finite one being infinity).
    #[target_feature(enable = "f16c,fma")]
    fn midpoints_towards_exact(a: __m128, b: __m128, c: __m128, r: __m128, h: __m128i) -> __m128i {
        // TwoSum of the exact product and c: `error` = exact − r.
        let p = _mm_mul_ps(a, b);
        let bb = _mm_sub_ps(r, p);
        let error = _mm_add_ps(_mm_sub_ps(p, _mm_sub_ps(r, bb)), _mm_sub_ps(c, bb));
        let inexact = _mm_cmpneq_ps(error, _mm_setzero_ps());
        // The halves either side: `r` truncated, and the next one out (its magnitude + 1).
        let below = _mm_cvtps_ph::<_MM_FROUND_TO_ZERO>(r);
        let above = _mm_add_epi16(below, _mm_set1_epi16(1));
        let above_value = _mm_cvtph_ps(above);
        // (Above the largest finite half: 65536, for the midpoint 65520.)
        let magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7FFF_FFFF));
        let infinite = _mm_cmpeq_ps(
            _mm_and_ps(above_value, magnitude),
            _mm_set1_ps(f32::INFINITY),
        );
        let above_value = _mm_blendv_ps(
            above_value,
            _mm_or_ps(_mm_andnot_ps(magnitude, r), _mm_set1_ps(65536.0)),
            infinite,
        );
        let midpoint = _mm_cmpeq_ps(
            _mm_add_ps(_mm_cvtph_ps(below), above_value),
            _mm_add_ps(r, r),
        );
        let fix = _mm_and_ps(inexact, midpoint);
        // Away from zero where the error has `r`'s sign.
        let away = _mm_castps_si128(_mm_xor_ps(error, r));
        let away = _mm_cmpgt_epi32(away, _mm_set1_epi32(-1));
        let towards = _mm_blendv_epi8(below, above, _mm_packs_epi32(away, away));
        let fix = _mm_packs_epi32(_mm_castps_si128(fix), _mm_castps_si128(fix));
        _mm_blendv_epi8(h, towards, fix)
    }

    /// The constants of a half format: smallest normal, infinity, one; and the f32 below
    /// which a result is tiny after rounding (`HalfFormat::tiny_bound`).
    #[derive(Clone, Copy)]
    pub(super) struct Format {
        min_normal: i16,
        inf: i16,
        one: i16,
        pub(super) tiny: f32,
    }
    pub(super) const F16: Format = Format {
        min_normal: 0x0400,
        inf: 0x7C00,
        one: 0x3C00,
        tiny: f32::from_bits(0x387F_F000),
    };
    pub(super) const BF16: Format = Format {
        min_normal: 0x0080,
        inf: 0x7F80,
        one: 0x3F80,
        tiny: f32::from_bits(0x007F_C000),
    };

    /// A helper's `code`, taken apart.
    #[derive(Clone, Copy)]
    struct Mode {
        op: u32,
        ftz: bool,
        sat: bool,
        relu: bool,
        bf16: bool,
        f: Format,
    }

    const fn mode(code: u32) -> Mode {
        let bf16 = code & super::BF16 != 0;
        Mode {
            op: code & 15,
            ftz: code & 16 != 0,
            sat: code & 32 != 0,
            relu: code & 64 != 0,
            bf16,
            f: if bf16 { BF16 } else { F16 },
        }
    }

    // The 16-bit steps work on sixteen halves (a ymm register); the eight-half form passes
    // its xmm register in the low half.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn wide(x: __m128i) -> __m256i {
        _mm256_castsi128_si256(x)
    }

    /// `.ftz` on sixteen halves: subnormals become zero of the same sign.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn flush(x: __m256i, f: Format) -> __m256i {
        let mag = _mm256_and_si256(x, _mm256_set1_epi16(0x7FFF));
        let subnormal = _mm256_cmpgt_epi16(_mm256_set1_epi16(f.min_normal), mag);
        let signed_zero = _mm256_and_si256(x, _mm256_set1_epi16(0x8000u16 as i16));
        _mm256_blendv_epi8(x, signed_zero, subnormal)
    }

    /// Which of sixteen halves are NaN (all ones) or not (zero).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn nan(x: __m256i, f: Format) -> __m256i {
        let mag = _mm256_and_si256(x, _mm256_set1_epi16(0x7FFF));
        _mm256_cmpgt_epi16(mag, _mm256_set1_epi16(f.inf))
    }

    /// `.ftz` on eight f32 results before their rounding to halves: zero of their sign
    /// where tiny after rounding (below `f.tiny`; an exact result or one rounded to odd lies
    /// on the same side of it as the exact value).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn flush_tiny8(r: __m256, f: Format) -> __m256 {
        let magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
        let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_and_ps(r, magnitude), _mm256_set1_ps(f.tiny));
        _mm256_andnot_ps(_mm256_and_ps(tiny, magnitude), r)
    }

    /// [`flush_tiny8`] on sixteen f32 results.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn flush_tiny16(r: __m512, f: Format) -> __m512 {
        let magnitude = _mm512_set1_epi32(0x7FFF_FFFF);
        let bits = _mm512_castps_si512(r);
        let tiny = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(
            _mm512_castsi512_ps(_mm512_and_si512(bits, magnitude)),
            _mm512_set1_ps(f.tiny),
        );
        let sign = _mm512_set1_epi32(0x8000_0000u32 as i32);
        _mm512_castsi512_ps(_mm512_mask_and_epi32(bits, tiny, bits, sign))
    }

    /// The result's `.sat` and `.relu`, in that order (its `.ftz` came before its rounding:
    /// [`flush_tiny8`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn finish(m: Mode, mut h: __m256i) -> __m256i {
        let zero = _mm256_setzero_si256();
        if m.sat {
            // NaN and negatives (−0 too) give +0, then clamp to 1.0.
            let out = _mm256_or_si256(nan(h, m.f), _mm256_cmpgt_epi16(zero, h));
            h = _mm256_min_epu16(_mm256_andnot_si256(out, h), _mm256_set1_epi16(m.f.one));
        }
        if m.relu {
            let nan = nan(h, m.f);
            h = _mm256_andnot_si256(_mm256_cmpgt_epi16(zero, h), h);
            h = _mm256_blendv_epi8(h, _mm256_set1_epi16(CANONICAL_NAN as i16), nan);
        }
        h
    }

    /// Eight bf16 values, exactly, as f32.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bf16_to_f32(x: __m128i) -> __m256 {
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(x)))
    }

    /// Eight f32 values rounded to bf16, nearest even. A NaN stays a NaN where its low 16 bits
    /// are zero (a decoded bf16's, and so an operation's NaN result on them): the addition
    /// then carries nothing out of them.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn f32_to_bf16(r: __m256) -> __m128i {
        let bits = _mm256_castps_si256(r);
        let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(bits), _mm256_set1_epi32(1));
        let rounded = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), odd);
        let h = _mm256_srli_epi32::<16>(rounded);
        _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h))
    }

    /// Whether either of two sums of a loop's results has a NaN lane: then one of the results
    /// was NaN (or, rarely, a sum met infinities of both signs).
    #[inline]
    #[target_feature(enable = "avx")]
    fn any_nan(sums: [__m256; 2]) -> bool {
        _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(sums[0], sums[1])) != 0
    }

    /// The end of the helpers' loops, over the `halves` halves at `dst`, which they narrowed
    /// without looking at NaNs: where `nan_seen`, NaN halves become the canonical NaN (a pass
    /// when a result was NaN, where a compare and a blend a step cost every call); then
    /// `.sat .relu` ([`finish`]).
    ///
    /// # Safety
    /// `dst` must have `halves` halves, a multiple of 8.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn settle8(m: Mode, dst: *mut u16, halves: usize, nan_seen: bool) {
        if !(nan_seen || m.sat || m.relu) {
            return;
        }
        for i in (0..halves).step_by(8) {
            // SAFETY: by the caller's promise.
            unsafe {
                let mut h = wide(_mm_loadu_si128(dst.add(i).cast()));
                if nan_seen {
                    let canonical = _mm256_set1_epi16(CANONICAL_NAN as i16);
                    h = _mm256_blendv_epi8(h, canonical, nan(h, m.f));
                }
                let h = _mm256_castsi256_si128(finish(m, h));
                _mm_storeu_si128(dst.add(i).cast(), h);
            }
        }
    }

    /// Eight halves of format `m` as f32, exactly (after the inputs' `.ftz`, if asked for).
    #[inline]
    #[target_feature(enable = "avx2,f16c")]
    fn decode8(m: Mode, x: __m128i) -> __m256 {
        let x = if m.ftz {
            _mm256_castsi256_si128(flush(wide(x), m.f))
        } else {
            x
        };
        if m.bf16 {
            bf16_to_f32(x)
        } else {
            _mm256_cvtph_ps(x)
        }
    }

    /// Sixteen halves of format `m` as f32, exactly (after the inputs' `.ftz`, if asked for).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c")]
    fn decode16(m: Mode, x: __m256i) -> __m512 {
        let x = if m.ftz { flush(x, m.f) } else { x };
        if m.bf16 {
            _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(x)))
        } else {
            _mm512_cvtph_ps(x)
        }
    }

    /// `a × b + c` rounded once to f32 *to odd*: toward zero, with the last bit set where that
    /// dropped anything. Rounding that to a half (nearest even) gives the exact fma's half,
    /// since f32 keeps at least two bits more than either half format at every magnitude
    /// (round-to-odd's rule; Boldo and Melquiond, 2008), so no result needs a second look.
    /// The roundings down and up are the same value when the fma is exact, else neighbours,
    /// of which one is odd: that one is the result. Also returns the rounding up, a NaN
    /// exactly where the result is, known an instruction earlier.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn fma_to_odd16(a: __m512, b: __m512, c: __m512) -> (__m512, __m512) {
        let down = _mm512_fmadd_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a, b, c);
        let up = _mm512_fmadd_round_ps::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(a, b, c);
        // (Where both are even they are equal, or they are −0 and +0, an exact zero sum,
        // whose sign the rounding up shares with the rounding to nearest.)
        let down_odd = _mm512_test_epi32_mask(_mm512_castps_si512(down), _mm512_set1_epi32(1));
        (_mm512_mask_blend_ps(down_odd, up, down), up)
    }

    /// Sixteen lanes at once with AVX-512 on operands [`decode16`] made: one f32 operation
    /// (the fma rounded to odd in f32: [`fma_to_odd16`]), one rounding to the half, then
    /// [`finish`]; and f32 values that are NaN where a result is, which the caller sums to
    /// find the NaN results it makes canonical after its loop ([`settle8`]: a NaN result
    /// rounds to a NaN half, whose payload the rounding keeps or truncates).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c,fma")]
    pub fn arith16<const CODE: u32>(fa: __m512, fb: __m512, fc: __m512) -> (__m256i, __m512) {
        let m = mode(CODE);
        let only = |r| (r, r);
        let (r, nan_like) = match m.op {
            0 => only(_mm512_add_ps(fa, fb)),
            1 => only(_mm512_sub_ps(fa, fb)),
            2 => only(_mm512_mul_ps(fa, fb)),
            _ => fma_to_odd16(fa, fb, fc),
        };
        let r = if m.ftz { flush_tiny16(r, m.f) } else { r };
        let h = if m.bf16 {
            // (A NaN's low 16 bits are zero here, those of a decoded bf16 or the default
            // NaN: the addition carries nothing out of them, as in [`f32_to_bf16`].)
            let bits = _mm512_castps_si512(r);
            let odd = _mm512_and_si512(_mm512_srli_epi32::<16>(bits), _mm512_set1_epi32(1));
            let rounded = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), odd);
            _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(rounded))
        } else {
            _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r)
        };
        (finish(m, h), nan_like)
    }

    /// Operand `k` of a group helper's call at half `i`, decoded ([`decode16`]): the sixteen
    /// halves there, or, where bit `k` of `UNIFORM` is set, `given[k]`.
    ///
    /// # Safety
    /// As for [`group16`].
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c")]
    unsafe fn operand16<const UNIFORM: u32>(
        m: Mode,
        x: [*const u16; 3],
        given: [__m512; 3],
        k: usize,
        i: usize,
    ) -> __m512 {
        if UNIFORM >> k & 1 == 1 {
            return given[k];
        }
        // One 32-byte load: a chain's operand is mostly a register's home, which this helper
        // stored 32 bytes at a time. (Where the JIT stored it as 16-byte vectors the load
        // misses store-to-load forwarding, as two 16-byte loads did not; the fma chains took
        // 0.93× the time of those, the axpys the same.)
        // SAFETY: in bounds, by the caller's promise.
        let halves = unsafe { _mm256_loadu_si256(x[k].add(i).cast()) };
        decode16(m, halves)
    }

    /// The group helper ([`super::GroupHelper`]) with AVX-512: [`arith16`] over `halves`
    /// halves (a multiple of 16) at `a`, `b`, `c`, results at `dst`, NaN results made
    /// canonical after the loop ([`settle8`]); the operands with a bit in `UNIFORM` are one
    /// 32-bit value each, decoded once a call ([`operand16`]). Only an fma reads its third
    /// operand.
    ///
    /// # Safety
    /// Each pointer without a bit in `UNIFORM` must have `halves` halves and be 16-byte
    /// aligned; the CPU must have what this function enables.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,f16c,fma")]
    pub unsafe extern "C" fn group16<const CODE: u32, const UNIFORM: u32>(
        dst: *mut u16,
        a: *const u16,
        b: *const u16,
        c: *const u16,
        halves: u32,
    ) {
        let x = [a, b, c];
        let given = uniform_pairs::<CODE, UNIFORM>(x).map(|u| {
            u.map_or(_mm512_setzero_ps(), |pair| {
                _mm512_castpd_ps(_mm512_broadcastsd_pd(pair))
            })
        });
        let m = mode(CODE);
        // Sixteen halves at `i`; returns what [`arith16`] gives to sum.
        let step = |i: usize| {
            // SAFETY: by the caller's promise.
            let operand = |k| unsafe { operand16::<UNIFORM>(m, x, given, k, i) };
            let third = if m.op == 3 {
                operand(2)
            } else {
                _mm512_setzero_ps()
            };
            let (h, nan_like) = arith16::<CODE>(operand(0), operand(1), third);
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(dst.add(i).cast(), h) };
            nan_like
        };
        // Two sums, so that their additions' latency is apart. (NaN results found by a sum,
        // where a compare and a masked narrowing a step had made them canonical: the f16x2
        // chain 0.510–0.527 → 0.539–0.543 × its ceiling, the `f16` and bf16x2 chains 1–5%
        // faster: an addition issues beside the fma pipes, a compare that writes a mask to
        // them, as measured on Zen 4: README, where the chain's gap goes.)
        let halves = halves as usize;
        let mut sums = [_mm512_setzero_ps(); 2];
        let mut i = 0;
        while i + 32 <= halves {
            sums[0] = _mm512_add_ps(sums[0], step(i));
            sums[1] = _mm512_add_ps(sums[1], step(i + 16));
            i += 32;
        }
        if i < halves {
            sums[0] = _mm512_add_ps(sums[0], step(i));
        }
        let nan_seen = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(sums[0], sums[1]) != 0;
        // (`.sat .relu` are done: [`arith16`].)
        let m = Mode {
            sat: false,
            relu: false,
            ..m
        };
        // SAFETY: as above.
        unsafe { settle8(m, dst, halves, nan_seen) };
    }

    /// [`operand16`] for eight halves.
    ///
    /// # Safety
    /// As for [`group16`].
    #[inline]
    #[target_feature(enable = "avx2,f16c")]
    unsafe fn operand8(
        m: Mode,
        x: [*const u16; 3],
        uniform: [Option<__m256>; 3],
        k: usize,
        i: usize,
    ) -> __m256 {
        match uniform[k] {
            Some(v) => v,
            // SAFETY: in bounds, by the caller's promise.
            None => decode8(m, unsafe { _mm_loadu_si128(x[k].add(i).cast()) }),
        }
    }

    /// Each operand with a bit in `UNIFORM` (its 32-bit value, which the caller passes in
    /// place of its pointer; an fma alone has a third operand), its pair of halves decoded
    /// once a call as one 64-bit lane, for the helper to repeat. Decoded in a 128-bit
    /// register: a different instruction from the loop's decoding, which the compiler would
    /// otherwise merge with it and repeat every step, and on AVX-512 half the conversion
    /// unit's time (the loop's bottleneck) of a 512-bit conversion.
    #[inline]
    #[target_feature(enable = "avx2,f16c")]
    fn uniform_pairs<const CODE: u32, const UNIFORM: u32>(
        x: [*const u16; 3],
    ) -> [Option<__m128d>; 3] {
        let m = mode(CODE);
        let sources = if m.op == 3 { 3 } else { 2 };
        std::array::from_fn(|k| {
            (k < sources && UNIFORM >> k & 1 == 1).then(|| {
                let value = _mm_cvtsi32_si128(x[k].addr() as i32);
                let mut pair = _mm_castps_pd(_mm256_castps256_ps128(decode8(m, value)));
                // SAFETY: an empty instruction, which LLVM cannot see through: else it
                // broadcasts the halves first and decodes 512 bits (the loop's bottleneck).
                unsafe {
                    std::arch::asm!("/* {0} */", inout(xmm_reg) pair,
                        options(pure, nomem, nostack, preserves_flags));
                }
                pair
            })
        })
    }

    /// A uniform operand's pair of halves ([`uniform_pairs`]) in every pair of eight lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn broadcast8(pair: __m128d) -> __m256 {
        _mm256_castpd_ps(_mm256_broadcastsd_pd(pair))
    }

    /// [`group16`] with AVX2, eight halves a step (the fma: [`fma_rounded_up::fma8`]); NaN
    /// results made canonical after the loop ([`settle8`]).
    ///
    /// # Safety
    /// As for [`group16`].
    #[target_feature(enable = "avx2,f16c,fma")]
    pub unsafe extern "C" fn group8<const CODE: u32, const UNIFORM: u32>(
        dst: *mut u16,
        a: *const u16,
        b: *const u16,
        c: *const u16,
        halves: u32,
    ) {
        let m = mode(CODE);
        if m.op == 3 {
            // (A call of the same signature: a jump.)
            // SAFETY: by the caller's promise.
            return unsafe { fma_rounded_up::fma8::<CODE, UNIFORM>(dst, a, b, c, halves) };
        }
        let (x, halves) = ([a, b, c], halves as usize);
        let values = uniform_pairs::<CODE, UNIFORM>(x).map(|u| u.map(|p| broadcast8(p)));
        // (The sum of the results: see [`settle8`].)
        let mut sum = _mm256_setzero_ps();
        for i in (0..halves).step_by(8) {
            // SAFETY: by the caller's promise.
            let operand = |k| unsafe { operand8(m, x, values, k, i) };
            let (a, b) = (operand(0), operand(1));
            let r = match m.op {
                0 => _mm256_add_ps(a, b),
                1 => _mm256_sub_ps(a, b),
                _ => _mm256_mul_ps(a, b),
            };
            let r = if m.ftz { flush_tiny8(r, m.f) } else { r };
            sum = _mm256_add_ps(sum, r);
            let h = if m.bf16 {
                f32_to_bf16(r)
            } else {
                _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r)
            };
            // SAFETY: as above.
            unsafe { _mm_storeu_si128(dst.add(i).cast(), h) };
        }
        // SAFETY: as above.
        unsafe { settle8(m, dst, halves, any_nan([sum, sum])) };
    }
}

/// A group helper, `helper(dst, a, b, c, halves)`: its operation code's ([`code`]) on `halves`
/// halves (a multiple of 16) at `a`, `b`, `c` (16-byte aligned), written to `dst`; a source
/// the instance has as uniform is not a pointer but one 32-bit value (a pair of halves,
/// zero-extended) that every pair of halves has: passed in a register, where a store and a
/// load through memory each call cost the chain a step.
///
/// # Safety
/// The pointers as above, on a CPU on which [`group_helpers`] found the instance's
/// instruction set.
pub type GroupHelper = unsafe extern "C" fn(*mut u16, *const u16, *const u16, *const u16, u32);

/// One implementation of the group helper: its instruction set and its function for each
/// operation code ([`code`]) and set of uniform sources (bit k: source k).
pub struct GroupHelpers {
    pub isa: Isa,
    table: Vec<[GroupHelper; 8]>,
}

impl GroupHelpers {
    /// The function for operation `code` with the sources in `uniform` the same in every lane.
    pub fn get(&self, code: u32, uniform: u32) -> GroupHelper {
        self.table[index(code)][uniform as usize & 7]
    }
}

/// The group helper's implementations this CPU can run, widest first (checked at run time,
/// never assumed from the build machine; made once).
pub fn group_helpers() -> &'static [GroupHelpers] {
    static ALL: std::sync::LazyLock<Vec<GroupHelpers>> = std::sync::LazyLock::new(|| {
        #[cfg(target_arch = "x86_64")]
        {
            x86_group_helpers()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Vec::new()
        }
    });
    &ALL
}

/// The group helpers the JIT calls where `CompileOptions::native_helpers` is `widest`: the
/// widest implementation this CPU has up to it.
pub fn group_helpers_up_to(widest: Isa) -> Option<&'static GroupHelpers> {
    group_helpers().iter().find(|g| g.isa <= widest)
}

#[cfg(target_arch = "x86_64")]
fn x86_group_helpers() -> Vec<GroupHelpers> {
    // One instance of `$f::<CODE, UNIFORM>` for each operation code and set of uniform
    // sources.
    macro_rules! row {
        ($f:ident, $i:literal) => {
            [
                x86::$f::<{ code_at($i) }, 0> as GroupHelper,
                x86::$f::<{ code_at($i) }, 1>,
                x86::$f::<{ code_at($i) }, 2>,
                x86::$f::<{ code_at($i) }, 3>,
                x86::$f::<{ code_at($i) }, 4>,
                x86::$f::<{ code_at($i) }, 5>,
                x86::$f::<{ code_at($i) }, 6>,
                x86::$f::<{ code_at($i) }, 7>,
            ]
        };
    }
    macro_rules! table {
        ($f:ident: $($i:literal)*) => { vec![$(row!($f, $i)),*] };
    }
    macro_rules! every_code {
        ($f:ident) => {
            table!($f: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26
                27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53
                54 55 56 57 58 59 60 61 62 63)
        };
    }
    let mut all = Vec::new();
    if available()
        && std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
    {
        all.push(GroupHelpers {
            isa: Isa::Avx512,
            table: every_code!(group16),
        });
    }
    if available() {
        all.push(GroupHelpers {
            isa: Isa::Avx2,
            table: every_code!(group8),
        });
    }
    all
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
        let (packed, nan) = unsafe { x86::lanes(a, b, c, op) };
        if nan == 0 && !(ftz || sat || relu) {
            return packed;
        }
        let mut result = 0u32;
        for lane in 0..2 {
            let mut h = (packed >> (16 * lane)) as u16;
            if nan >> lane & 1 == 1 {
                h = CANONICAL_NAN;
            }
            if ftz && h & 0x7FFF <= F16.min_normal_bits() {
                // Tiny after rounding or not (rare): the exact value says.
                let op = [FloatOp::Add, FloatOp::Sub, FloatOp::Mul, FloatOp::Fma][op as usize];
                let lane_of = |v: u32| (v >> (16 * lane)) as u16;
                let exact = exact(F16, op, lane_of(a), lane_of(b), lane_of(c));
                h = F16.flush_tiny(exact, h);
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

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::semantics::half::{BF16, F16 as HALF};
    use crate::semantics::half_ops::arith;
    use crate::types::PtxType;

    /// The helpers' operands are 16-byte aligned.
    #[repr(align(16))]
    struct Aligned([u16; 32]);

    /// Special values of a format (its bits for 1.0 is `one`), each with both signs.
    fn specials(one: u16, min_normal: u16, inf: u16) -> Vec<u16> {
        let magnitudes = [
            0,
            1,
            min_normal - 1,
            min_normal,
            one,
            one + 1,
            inf - 1,
            inf,
            inf + 1,
            0x7FFF,
        ];
        magnitudes.iter().flat_map(|&m| [m, m | 0x8000]).collect()
    }

    /// (a, b, c) triples: f16 fmas whose f32 result lands on a half midpoint inexactly
    /// (where only the exact fma gives the right bits), specials, a fixed random sample.
    fn triples(bf16: bool) -> Vec<[u16; 3]> {
        let s = if bf16 {
            specials(0x3F80, 0x0080, 0x7F80)
        } else {
            specials(0x3C00, 0x0400, 0x7C00)
        };
        // First (the test's first chunk has no uniform operand): f16 fmas whose f32 result
        // lands on a half midpoint inexactly.
        let mut out: Vec<[u16; 3]> = Vec::new();
        if !bf16 {
            // Found by an exact search: between normal halves, then below 2⁻¹⁴ (between
            // subnormal ones).
            out.extend([
                [0x3E10, 0x6D20, 0x0B03],
                [0x5555, 0xB9EB, 0x0B07],
                [0x3A00, 0x736E, 0x09EE],
                [0x1471, 0x6ADE, 0xDB95],
            ]);
            out.extend([
                [0x87C9, 0xA4F2, 0x83BE],
                [0x048B, 0xA646, 0x82A4],
                [0x04F9, 0xA16E, 0x0230],
                [0x0501, 0xA0FF, 0x013F],
            ]);
            // 1008 × 65 = 65520, the midpoint between the largest half and the next (∞),
            // plus or minus 2⁻²⁴.
            out.extend([
                [0x63E0, 0x5410, 0x8001],
                [0x63E0, 0x5410, 0x0001],
                [0xE3E0, 0x5410, 0x0001],
                [0xE3E0, 0x5410, 0x8001],
            ]);
        }
        for &a in &s {
            for &b in &s {
                out.push([a, b, s[(a ^ b) as usize % s.len()]]);
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u16
        };
        out.extend((0..8192).map(|_| [next(), next(), next()]));
        out
    }

    /// `group`'s helper for `code` on sixteen-half chunks of `triples` (a multiple of 16 of
    /// them), operands in memory or (bits of `uniform`) the chunk's first pair for all,
    /// passed as the value; each result with the operands it had.
    fn call(
        group: &GroupHelpers,
        code: u32,
        triples: &[[u16; 3]],
        uniform: u32,
    ) -> Vec<(u16, [u16; 3])> {
        let helper = group.get(code, uniform);
        let mut out = Vec::new();
        for chunk in triples.chunks(32) {
            let n = chunk.len() / 16 * 16;
            let memory = |k: usize| {
                let mut x = Aligned([0; 32]);
                for (i, t) in chunk[..n].iter().enumerate() {
                    x.0[i] = t[k];
                }
                x
            };
            let [a, b, c] = [0, 1, 2].map(memory);
            let mut got = Aligned([0u16; 32]);
            // A uniform operand: its first pair, in place of the pointer.
            let source = |k: usize, x: &Aligned| {
                if uniform >> k & 1 == 1 {
                    std::ptr::without_provenance(x.0[0] as usize | (x.0[1] as usize) << 16)
                } else {
                    x.0.as_ptr()
                }
            };
            let (pa, pb, pc) = (source(0, &a), source(1, &b), source(2, &c));
            // SAFETY: as `GroupHelper` asks, on a CPU `group_helpers` found able.
            unsafe { helper(got.0.as_mut_ptr(), pa, pb, pc, n as u32) };
            out.extend(got.0[..n].iter().enumerate().map(|(i, &h)| {
                let operands = [0, 1, 2].map(|k| {
                    let lane = if uniform >> k & 1 == 1 { i % 2 } else { i };
                    chunk[lane][k]
                });
                (h, operands)
            }));
        }
        out
    }

    /// Every operation the helpers do, with every set of `.ftz .sat .relu`.
    fn every_form() -> impl Iterator<Item = (FloatOp, FloatMods)> {
        let ops = [FloatOp::Add, FloatOp::Sub, FloatOp::Mul, FloatOp::Fma];
        ops.into_iter().flat_map(|op| {
            (0..8).map(move |flags| {
                let mods = FloatMods {
                    ftz: flags & 1 != 0,
                    sat: flags & 2 != 0,
                    relu: flags & 4 != 0,
                    ..FloatMods::default()
                };
                (op, mods)
            })
        })
    }

    #[test]
    fn every_group_helper_gives_the_reference_bits_for_every_operation_and_modifier() {
        let helpers = group_helpers();
        assert!(!available() || !helpers.is_empty());
        for group in helpers {
            let isa = group.isa;
            for ty in [PtxType::F16, PtxType::BF16] {
                let fmt = if ty == PtxType::BF16 { BF16 } else { HALF };
                let triples = triples(ty == PtxType::BF16);
                for (op, mods) in every_form() {
                    let code = code(op, mods, ty).expect("a helper form");
                    // Every set of uniform operands (an instance for each).
                    let patterns = (0..8).cycle();
                    for (chunk, uniform) in triples.chunks(32).zip(patterns) {
                        for (got, [a, b, c]) in call(group, code, chunk, uniform) {
                            let want = arith(fmt, op, mods, a, b, c);
                            assert_eq!(
                                got, want,
                                "{isa:?} {ty:?} {op:?} {mods:?} on {a:#06x} {b:#06x} {c:#06x} \
                                 (uniform {uniform:#b})"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Fmas whose product lies exactly on a midpoint between two halves, plus an addend of
    /// either sign far below the product's last bit: the exact sum leaves the midpoint by a
    /// little, so one rounding goes the addend's way, while an f32 sum rounded to nearest
    /// lands back on the midpoint and ties to even (wrong for half of them). The product is
    /// `3k × 2^s` with `3k` an odd number of one bit more than the format keeps.
    fn products_on_a_midpoint_plus_a_little(bf16: bool) -> Vec<[u16; 3]> {
        let fmt = if bf16 { BF16 } else { HALF };
        let half = |x: f64| fmt.round(x, Rounding::Rn);
        let (bits, tiny) = if bf16 { (8, -133) } else { (11, -24) };
        let mut out = Vec::new();
        for k in ((1 << bits) / 3 + 1..=(2 << bits) / 3).filter(|k| k % 2 == 1) {
            for shift in [-8, 0, 3] {
                let a = half(k as f64 * 2f64.powi(shift - bits));
                let b = half(3.0 * 2f64.powi(-shift));
                for exponent in [tiny, tiny + 5, -bits - 8] {
                    for sign in [1.0, -1.0] {
                        out.push([a, b, half(sign * 2f64.powi(exponent))]);
                    }
                }
            }
        }
        out.truncate(out.len() / 16 * 16);
        out
    }

    #[test]
    fn fma_on_a_midpoint_rounds_once_toward_the_addend() {
        for group in group_helpers() {
            for ty in [PtxType::F16, PtxType::BF16] {
                let bf16 = ty == PtxType::BF16;
                let fmt = if bf16 { BF16 } else { HALF };
                let triples = products_on_a_midpoint_plus_a_little(bf16);
                let code = code(FloatOp::Fma, FloatMods::default(), ty).unwrap();
                let mut ties_would_err = 0;
                for (got, [a, b, c]) in call(group, code, &triples, 0) {
                    let want = arith(fmt, FloatOp::Fma, FloatMods::default(), a, b, c);
                    let tie = fmt.round(fmt.to_f64(a) * fmt.to_f64(b), Rounding::Rn);
                    ties_would_err += (tie != want) as usize;
                    let isa = group.isa;
                    assert_eq!(got, want, "{isa:?} {ty:?} fma {a:#06x} {b:#06x} {c:#06x}");
                }
                // The family is what it says: a rounding to nearest of the product alone
                // (where an f32 sum lands) errs on about half of them.
                assert!(
                    ties_would_err * 3 > triples.len(),
                    "{ty:?}: {ties_would_err}"
                );
            }
        }
    }

    /// The one-pair helper ([`f16_arith`]): the reference's bits for every operation and
    /// modifier on the specials, the sample and the midpoint families, either lane; an fma
    /// on a midpoint rounds once, towards the addend, with no call of the reference.
    #[test]
    fn the_pair_helper_gives_the_reference_bits_and_rounds_midpoints_once() {
        if !available() {
            return;
        }
        let mut all = triples(false);
        all.extend(products_on_a_midpoint_plus_a_little(false));
        for (op, mods) in every_form() {
            let code = code(op, mods, PtxType::F16x2).expect("a helper form");
            for pair in all.chunks_exact(2) {
                let packed = |k: usize| pair[0][k] as u32 | (pair[1][k] as u32) << 16;
                let got = f16_arith(packed(0), packed(1), packed(2), code);
                for (lane, [a, b, c]) in pair.iter().enumerate() {
                    let want = arith(HALF, op, mods, *a, *b, *c);
                    assert_eq!(
                        (got >> (16 * lane)) as u16,
                        want,
                        "{op:?} {mods:?} lane {lane} on {a:#06x} {b:#06x} {c:#06x}"
                    );
                }
            }
        }
    }

    /// A NaN result anywhere in a call, alone among numbers, comes out as the canonical NaN:
    /// the AVX2 helpers narrow without looking at NaNs and mend them after the loop, so each
    /// position of a call (both steps of a turn, every turn) is tried, with an operand NaN of
    /// another payload and sign, and with the operation's own NaN (∞ × 0, ∞ − ∞).
    #[test]
    fn a_nan_result_at_any_position_of_a_call_is_the_canonical_nan() {
        for group in group_helpers() {
            for ty in [PtxType::F16, PtxType::BF16] {
                let (fmt, one, inf, nan) = if ty == PtxType::BF16 {
                    (BF16, 0x3F80, 0x7F80, 0xFF81)
                } else {
                    (HALF, 0x3C00, 0x7C00, 0xFC01)
                };
                for op in [FloatOp::Add, FloatOp::Mul, FloatOp::Fma] {
                    let code = code(op, FloatMods::default(), ty).unwrap();
                    for at in 0..32 {
                        // (An add's own NaN is ∞ − ∞.)
                        let invalid = if op == FloatOp::Add { inf | 0x8000 } else { 0 };
                        for odd in [[nan, one, one], [inf, invalid, one]] {
                            let mut triples = vec![[one, one, one]; 32];
                            triples[at] = odd;
                            for (i, (got, [a, b, c])) in
                                call(group, code, &triples, 0).into_iter().enumerate()
                            {
                                let want = arith(fmt, op, FloatMods::default(), a, b, c);
                                let isa = group.isa;
                                assert_eq!(
                                    got, want,
                                    "{isa:?} {ty:?} {op:?}, NaN at {at}, half {i}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
