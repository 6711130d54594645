//! The group helpers' fma on CPUs without AVX-512 (AVX2, F16C, FMA): the exact fma of halves
//! from two f32 fmas under the SSE rounding mode *up*, set once a call.
//!
//! Rounded to odd in f32, a sum rounds to a half as the exact fma does (f32 keeps at least
//! two bits more than either half format: see `fma_to_odd16`); the odd one of the roundings
//! down and up of `a × b + c` is that. Without AVX-512's rounding per instruction, both come
//! from the one mode: up is `fma(a, b, c)`, down is `−fma(−a, b, −c)`, since rounding `−x`
//! up is rounding `x` down, negated. (TwoSum on a sum rounded to nearest, the way this helper
//! went before, takes about twice the instructions; changing the mode costs tens of cycles,
//! so it is changed once a call, not once a step.)
//!
//! Rust's compiled code assumes the default floating-point environment, so everything that
//! runs under the other mode is in one `asm!` block, which restores the mode before it
//! ends: the loop over the call's steps, from loading the halves to storing them. The mode
//! set is a whole MXCSR: round up, every exception masked, no FTZ or DAZ.
//!
//! A step is eight halves; the loop does two a turn (a call's halves are a multiple of 16).
//! NaN results are made canonical after the loop, not a step at a time: each step adds its
//! rounding up (a NaN exactly where the result is) into a sum, and where a sum ends NaN a
//! pass replaces the NaN halves the narrowing left. One add a step instead of a compare and
//! a blend: the f16x2 fma chain 9% faster on AMD Zen 4, and with the two steps a turn
//! (uniform operands read from their registers, not copied) 15%. bf16's rounding by integer
//! addition keeps a NaN a NaN: the fma's NaN is an operand's, quieted, or the default NaN,
//! so its low 16 bits are zero, like every decoded bf16's, and the addition carries nothing
//! out of them.

use std::arch::asm;
use std::arch::x86_64::*;
use std::mem::offset_of;

use super::{Format, Mode, any_nan, broadcast8, mode, settle8, uniform_pairs};
use crate::semantics::half::{self, HalfFormat};

/// MXCSR for the loop: exceptions masked (bits 7–12), rounding up (bits 13–14 = 10b).
const ROUND_UP: u32 = 0x1F80 | 0x4000;

/// The loop's constants, eight lanes each, read from memory by the `asm!` block.
#[repr(C, align(32))]
struct Constants {
    /// The f32 sign bit.
    sign: [u32; 8],
    /// All but the sign bit.
    magnitude: [u32; 8],
    /// The format's smallest normal, as f32 (`.ftz` flushes what is below it).
    min_normal: [f32; 8],
    /// bf16 rounding to nearest even: bits + 0x7FFF + (the kept part's last bit).
    round: [u32; 8],
    one: [u32; 8],
    /// Below this a result is tiny after rounding (`.ftz` flushes it: `super::flush_tiny8`).
    tiny: [f32; 8],
}

/// The constants for halves of `format` (`f`: the same format's).
const fn constants(format: HalfFormat, f: Format) -> Constants {
    // The smallest normal, 2^emin, as f32 (whose exponent bias is 127).
    let min_normal = f32::from_bits(((format.emin() + 127) as u32) << 23);
    Constants {
        sign: [0x8000_0000; 8],
        magnitude: [0x7FFF_FFFF; 8],
        min_normal: [min_normal; 8],
        round: [0x7FFF; 8],
        one: [1; 8],
        tiny: [f.tiny; 8],
    }
}

static F16_CONSTANTS: Constants = constants(half::F16, super::F16);
static BF16_CONSTANTS: Constants = constants(half::BF16, super::BF16);

/// The `asm!` text that decodes the eight halves at `[p + i + off]` into register `y` (and
/// flushes them, with `.ftz`). Uses ymm5 as scratch.
#[rustfmt::skip]
macro_rules! load {
    ($p:literal, $off:literal, $y:literal) => {
        concat!(
            ".if {bf16}\n",
            "vpmovzxwd ", $y, ", xmmword ptr [{", $p, "} + {i} + ", $off, "]\n",
            "vpslld ", $y, ", ", $y, ", 16\n",
            ".else\n",
            "vcvtph2ps ", $y, ", xmmword ptr [{", $p, "} + {i} + ", $off, "]\n",
            ".endif\n",
            ".if {ftz}\n",
            "vandps ymm5, ", $y, ", ymmword ptr [{k} + {magnitude}]\n",
            "vcmpltps ymm5, ymm5, ymmword ptr [{k} + {min_normal}]\n",
            "vandps ymm5, ymm5, ymmword ptr [{k} + {magnitude}]\n",
            "vandnps ", $y, ", ymm5, ", $y, "\n",
            ".endif\n",
        )
    };
}

/// The `asm!` text of `fma` (a form `213`: `ymm = b × ymm + c`) with `b` and `c` where they
/// are: a uniform operand's own register (never written), else ymm1 and ymm2.
#[rustfmt::skip]
macro_rules! fma213 {
    ($fma:literal) => {
        concat!(
            ".if {ub}\n",
            ".if {uc}\n", $fma, ", {xb}, {xc}\n", ".else\n", $fma, ", {xb}, ymm2\n", ".endif\n",
            ".else\n",
            ".if {uc}\n", $fma, ", ymm1, {xc}\n", ".else\n", $fma, ", ymm1, ymm2\n", ".endif\n",
            ".endif\n",
        )
    };
}

/// The `asm!` text of one step: the eight halves at byte `off` past `{i}`. Adds the rounding
/// up to `acc`, a NaN from the first NaN result on.
#[rustfmt::skip]
macro_rules! step {
    ($off:literal, $acc:literal) => {
        concat!(
            ".if {ua}\n",
            "vmovaps ymm0, {xa}\n",
            ".else\n",
            load!("pa", $off, "ymm0"),
            ".endif\n",
            ".if {ub} == 0\n",
            load!("pb", $off, "ymm1"),
            ".endif\n",
            ".if {uc} == 0\n",
            load!("pc", $off, "ymm2"),
            ".endif\n",
            // Up in ymm3; −(down) in ymm0, then down.
            "vmovaps ymm3, ymm0\n",
            fma213!("vfmadd213ps ymm3"),
            fma213!("vfnmsub213ps ymm0"),
            "vxorps ymm0, ymm0, ymmword ptr [{k} + {sign}]\n",
            // The odd one (down where its last bit, moved to the sign, is set).
            "vpslld ymm4, ymm0, 31\n",
            "vblendvps ymm4, ymm3, ymm0, ymm4\n",
            "vaddps {", $acc, "}, {", $acc, "}, ymm3\n",
            // `.ftz`: a tiny result (its rounding to odd is below the bound exactly where the
            // exact value is) becomes zero of its sign.
            ".if {ftz}\n",
            "vandps ymm5, ymm4, ymmword ptr [{k} + {magnitude}]\n",
            "vcmpltps ymm5, ymm5, ymmword ptr [{k} + {tiny}]\n",
            "vandps ymm5, ymm5, ymmword ptr [{k} + {magnitude}]\n",
            "vandnps ymm4, ymm5, ymm4\n",
            ".endif\n",
            ".if {bf16}\n",
            "vpsrld ymm0, ymm4, 16\n",
            "vpand ymm0, ymm0, ymmword ptr [{k} + {one}]\n",
            "vpaddd ymm0, ymm0, ymmword ptr [{k} + {round}]\n",
            "vpaddd ymm0, ymm0, ymm4\n",
            "vpsrld ymm0, ymm0, 16\n",
            "vextracti128 xmm1, ymm0, 1\n",
            "vpackusdw xmm0, xmm0, xmm1\n",
            "vmovdqu xmmword ptr [{dst} + {i} + ", $off, "], xmm0\n",
            ".else\n",
            // (Narrowing to a register, then storing: the narrowing to memory measured
            // slower on AMD Zen 4.)
            "vcvtps2ph xmm4, ymm4, 0\n",
            "vmovdqu xmmword ptr [{dst} + {i} + ", $off, "], xmm4\n",
            ".endif\n",
        )
    };
}

/// The group helper's fma `CODE` (f16 or bf16, any of `.ftz .sat .relu`) with AVX2 on
/// `halves` halves (a multiple of 16) at `a`, `b`, `c`, results at `dst`; where bit k of
/// `UNIFORM` is set, operand k is a pair's value ([`uniform_pairs`], broadcast).
///
/// # Safety
/// Each pointer without a `UNIFORM` bit must have `halves` halves, and `dst` room for them;
/// the CPU must have AVX2, F16C and FMA.
#[target_feature(enable = "avx2,f16c,fma")]
pub(super) unsafe extern "C" fn fma8<const CODE: u32, const UNIFORM: u32>(
    dst: *mut u16,
    a: *const u16,
    b: *const u16,
    c: *const u16,
    halves: u32,
) {
    let (x, halves) = ([a, b, c], halves as usize);
    let uniform =
        uniform_pairs::<CODE, UNIFORM>(x).map(|u| u.map_or(_mm256_setzero_ps(), |p| broadcast8(p)));
    let m: Mode = mode(CODE);
    debug_assert!(
        halves.is_multiple_of(16),
        "{halves} halves: the loop takes 16 a turn"
    );
    if halves == 0 {
        // (The loop below runs its body before its test.)
        return;
    }
    let constants = if m.bf16 {
        &BF16_CONSTANTS
    } else {
        &F16_CONSTANTS
    };
    // The mode to set, then the caller's, kept for the end.
    let mut csr = [ROUND_UP, 0];
    let mut acc = [_mm256_setzero_ps(); 2];
    // SAFETY: the loop reads `halves` halves at each pointer without a `UNIFORM` bit and
    // writes as many at `dst` (the caller's promise), reads `constants`, and leaves MXCSR as
    // it found it; the clobbered registers are declared.
    unsafe {
        asm!(
            "vstmxcsr dword ptr [{csr} + 4]",
            "vldmxcsr dword ptr [{csr}]",
            "2:",
            step!("0", "acc0"),
            step!("16", "acc1"),
            "add {i}, 32",
            "cmp {i}, {end}",
            "jb 2b",
            "vldmxcsr dword ptr [{csr} + 4]",
            csr = in(reg) csr.as_mut_ptr(),
            k = in(reg) constants,
            pa = in(reg) x[0],
            pb = in(reg) x[1],
            pc = in(reg) x[2],
            dst = in(reg) dst,
            i = inout(reg) 0usize => _,
            end = in(reg) halves * 2,
            acc0 = inout(ymm_reg) acc[0],
            acc1 = inout(ymm_reg) acc[1],
            xa = in(ymm_reg) uniform[0],
            xb = in(ymm_reg) uniform[1],
            xc = in(ymm_reg) uniform[2],
            ua = const UNIFORM & 1,
            ub = const UNIFORM >> 1 & 1,
            uc = const UNIFORM >> 2 & 1,
            bf16 = const mode(CODE).bf16 as u32,
            ftz = const mode(CODE).ftz as u32,
            sign = const offset_of!(Constants, sign),
            magnitude = const offset_of!(Constants, magnitude),
            min_normal = const offset_of!(Constants, min_normal),
            round = const offset_of!(Constants, round),
            one = const offset_of!(Constants, one),
            tiny = const offset_of!(Constants, tiny),
            out("ymm0") _,
            out("ymm1") _,
            out("ymm2") _,
            out("ymm3") _,
            out("ymm4") _,
            out("ymm5") _,
            options(nostack),
        );
    }
    // SAFETY: `dst` has `halves` halves, written above.
    unsafe { settle8(m, dst, halves, any_nan(acc)) };
}
