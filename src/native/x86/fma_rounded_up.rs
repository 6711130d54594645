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

use std::arch::asm;
use std::arch::x86_64::*;
use std::mem::offset_of;

use super::{Mode, finish, mode, wide};
use crate::semantics::half::{self, CANONICAL_NAN, HalfFormat};

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
    /// What a NaN lane becomes before narrowing: f16, the f32 NaN that narrows to the
    /// canonical half NaN; bf16, the canonical NaN's bits.
    nan: [u32; 8],
    /// bf16 rounding to nearest even: bits + 0x7FFF + (the kept part's last bit).
    round: [u32; 8],
    one: [u32; 8],
}

/// The constants for halves of `format`, whose NaN lanes become `nan`.
const fn constants(format: HalfFormat, nan: u32) -> Constants {
    // The smallest normal, 2^emin, as f32 (whose exponent bias is 127).
    let min_normal = f32::from_bits(((format.emin() + 127) as u32) << 23);
    Constants {
        sign: [0x8000_0000; 8],
        magnitude: [0x7FFF_FFFF; 8],
        min_normal: [min_normal; 8],
        nan: [nan; 8],
        round: [0x7FFF; 8],
        one: [1; 8],
    }
}

/// f16: a quiet f32 NaN narrows to its top ten payload bits, the canonical NaN's.
static F16_CONSTANTS: Constants = constants(
    half::F16,
    0x7F80_0000 | (CANONICAL_NAN as u32 & 0x03FF) << 13,
);

static BF16_CONSTANTS: Constants = constants(half::BF16, CANONICAL_NAN as u32);

/// The `asm!` text that puts operand `k` of a step in register `y`: its broadcast value
/// (uniform), else the eight halves at `[p + i]` decoded (and flushed, with `.ftz`). Uses
/// ymm5 as scratch.
macro_rules! operand {
    ($u:literal, $p:literal, $x:literal, $y:literal) => {
        concat!(
            ".if {", $u, "}\n",
            "vmovaps ", $y, ", {", $x, "}\n",
            ".else\n",
            ".if {bf16}\n",
            "vpmovzxwd ", $y, ", xmmword ptr [{", $p, "} + {i}]\n",
            "vpslld ", $y, ", ", $y, ", 16\n",
            ".else\n",
            "vcvtph2ps ", $y, ", xmmword ptr [{", $p, "} + {i}]\n",
            ".endif\n",
            ".if {ftz}\n",
            "vandps ymm5, ", $y, ", ymmword ptr [{k} + {magnitude}]\n",
            "vcmpltps ymm5, ymm5, ymmword ptr [{k} + {min_normal}]\n",
            "vandps ymm5, ymm5, ymmword ptr [{k} + {magnitude}]\n",
            "vandnps ", $y, ", ymm5, ", $y, "\n",
            ".endif\n",
            ".endif\n",
        )
    };
}

/// The fma `CODE` (f16 or bf16, any of `.ftz .sat .relu`) on `halves` halves (a multiple of
/// 8) at `x`, results at `dst`; operand k is `uniform[k]` (decoded, flushed where `.ftz`, and
/// broadcast) where bit k of `UNIFORM` is set.
///
/// # Safety
/// Each pointer without a `UNIFORM` bit must have `halves` halves, and `dst` room for them;
/// the CPU must have AVX2, F16C and FMA.
#[target_feature(enable = "avx2,f16c,fma")]
pub(super) unsafe fn fma8<const CODE: u32, const UNIFORM: u32>(
    dst: *mut u16,
    x: [*const u16; 3],
    halves: usize,
    uniform: [__m256; 3],
) {
    let m: Mode = mode(CODE);
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
    // SAFETY: the loop reads `halves` halves at each pointer without a `UNIFORM` bit and
    // writes as many at `dst` (the caller's promise), reads `constants`, and leaves MXCSR as
    // it found it; the clobbered registers are declared.
    unsafe {
        asm!(
            "vstmxcsr dword ptr [{csr} + 4]",
            "vldmxcsr dword ptr [{csr}]",
            "2:",
            operand!("ua", "pa", "xa", "ymm0"),
            operand!("ub", "pb", "xb", "ymm1"),
            operand!("uc", "pc", "xc", "ymm2"),
            // Up in ymm3; −(down) in ymm0, then down.
            "vmovaps ymm3, ymm0",
            "vfmadd213ps ymm3, ymm1, ymm2",
            "vfnmsub213ps ymm0, ymm1, ymm2",
            "vxorps ymm0, ymm0, ymmword ptr [{k} + {sign}]",
            // The odd one (down where its last bit, moved to the sign, is set); NaN lanes.
            "vpslld ymm4, ymm0, 31",
            "vblendvps ymm4, ymm3, ymm0, ymm4",
            "vcmpunordps ymm5, ymm3, ymm3",
            ".if {bf16}",
            "vpsrld ymm0, ymm4, 16",
            "vpand ymm0, ymm0, ymmword ptr [{k} + {one}]",
            "vpaddd ymm0, ymm0, ymmword ptr [{k} + {round}]",
            "vpaddd ymm0, ymm0, ymm4",
            "vpsrld ymm0, ymm0, 16",
            "vblendvps ymm0, ymm0, ymmword ptr [{k} + {nan}], ymm5",
            "vextracti128 xmm1, ymm0, 1",
            "vpackusdw xmm0, xmm0, xmm1",
            "vmovdqu xmmword ptr [{dst} + {i}], xmm0",
            ".else",
            "vblendvps ymm4, ymm4, ymmword ptr [{k} + {nan}], ymm5",
            // (Narrowing to a register, then storing: the narrowing to memory measured
            // slower on AMD Zen 4.)
            "vcvtps2ph xmm4, ymm4, 0",
            "vmovdqu xmmword ptr [{dst} + {i}], xmm4",
            ".endif",
            "add {i}, 16",
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
            nan = const offset_of!(Constants, nan),
            round = const offset_of!(Constants, round),
            one = const offset_of!(Constants, one),
            out("ymm0") _,
            out("ymm1") _,
            out("ymm2") _,
            out("ymm3") _,
            out("ymm4") _,
            out("ymm5") _,
            options(nostack),
        );
    }
    if m.ftz || m.sat || m.relu {
        for i in (0..halves).step_by(8) {
            // SAFETY: `dst` has `halves` halves, written above.
            unsafe {
                let h = _mm_loadu_si128(dst.add(i).cast());
                let h = _mm256_castsi256_si128(finish(m, wide(h)));
                _mm_storeu_si128(dst.add(i).cast(), h);
            }
        }
    }
}
