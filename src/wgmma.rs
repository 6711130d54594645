//! Warpgroup MMA, `wgmma.mma_async.sync.aligned` (sm_90a): D = A·B + D over a warpgroup (four
//! consecutive warps, the first a multiple of four), M = 64.
//!
//! The instruction is a synchronization point of the cooperative model (`crate::sync`): once
//! the warpgroup's 128 threads have all issued it, [`run`] gathers A (from the threads'
//! registers, or from shared memory through a matrix descriptor) and B (through a
//! descriptor) and computes every thread's D registers. The product is complete at issue, as
//! an asynchronous operation may be: a program may not read D, write A's registers or change
//! the matrices before `wgmma.wait_group` says the product is done, so `wgmma.fence`,
//! `commit_group` and `wait_group` have nothing left to order.
//!
//! Register fragments (ISA "Register Fragments"): warp w of the group holds rows 16w to
//! 16w + 15; within them A is laid out as `mma.m16n8k*`'s A (`crate::mma::a_m16`) and D as
//! its C, repeated every 8 columns: D element i of lane 4g + t is at row g + 8·((i mod 4) div
//! 2), column 8·(i div 4) + 2t + (i mod 2).
//!
//! Shared-memory matrices (ISA "Shared Memory Matrix Layout", its canonical layouts): an
//! M×K A or an N×K B, K-major (`imm-trans` 0) or MN-major (1), in 16-byte units of T
//! elements ([`Descriptor::address`]), then swizzled by the shared address
//! (`crate::swizzle`), so a tile a swizzled TMA load wrote is read back in place.
//!
//! Arithmetic: that of `mma` (`crate::mma::sum`): the products of one instruction (its K:
//! 16 for f16 and bf16, 8 for tf32, 32 for fp8) and D as one block, aligned on the largest
//! exponent and truncated 25 bits below it, the sum rounded toward zero to f32 or to nearest
//! f16. Inferred from recordings of `mma.sync` on an H200 (the same tensor cores), not
//! measured on `wgmma`: its fp8 block especially (`mma.sync` runs fp8 as f16 products).

use crate::frontend::checked::{MmaType, WgmmaForm};
use crate::mma::sum::{Arith, Blocks};
use crate::mma::{Value, a_m16, accumulate, element, float_element};

/// Where the compiled code leaves the instruction's operands among a thread's synchronization
/// operand words (`crate::sync::frame::ARGS`); D stays in its registers' save slots.
pub mod args {
    pub const A_DESC: i32 = 0;
    pub const B_DESC: i32 = 1;
    pub const SCALE_D: i32 = 2;
    /// [`super::flags`].
    pub const FLAGS: i32 = 3;
    /// A's four registers, when A is in registers.
    pub const A_REGS: i32 = 4;
}

/// Bits of the flags word the compiled code passes with the descriptors: where A is, and the
/// instruction's immediates.
pub mod flags {
    pub const A_IN_REGISTERS: u64 = 1;
    /// `imm-scale-a` / `imm-scale-b` is -1.
    pub const NEGATE_A: u64 = 2;
    pub const NEGATE_B: u64 = 4;
    /// `imm-trans-a` / `imm-trans-b` is 1: the matrix is MN-major.
    pub const TRANSPOSE_A: u64 = 8;
    pub const TRANSPOSE_B: u64 = 16;
}

/// A shared-memory matrix descriptor (ISA "Matrix Descriptor Format"), its fields in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descriptor {
    /// The matrix's start in the shared window (bits 0–13, in 16-byte units).
    pub start: u64,
    /// Leading and stride dimension byte offsets (bits 16–29 and 32–45, in 16-byte units).
    pub leading: u64,
    pub stride: u64,
    /// The 128-byte row (mod 8) where the swizzle pattern starts (bits 49–51).
    pub base: u64,
    /// The swizzle span (bits 62–63: 1 is 128 bytes, 2 is 64, 3 is 32), 0 without.
    pub span: u64,
}

impl Descriptor {
    pub fn decode(bits: u64) -> Descriptor {
        let field = |lo: u32| (bits >> lo & 0x3FFF) * 16;
        Descriptor {
            start: field(0),
            leading: field(16),
            stride: field(32),
            base: bits >> 49 & 7,
            span: match bits >> 62 {
                1 => 128,
                2 => 64,
                3 => 32,
                _ => 0,
            },
        }
    }

    pub fn encode(&self) -> u64 {
        let field = |v: u64, lo: u32| ((v / 16) & 0x3FFF) << lo;
        let mode = match self.span {
            128 => 1,
            64 => 2,
            32 => 3,
            _ => 0,
        };
        field(self.start, 0)
            | field(self.leading, 16)
            | field(self.stride, 32)
            | (self.base & 7) << 49
            | mode << 62
    }

    /// The shared address of element (`row`, `k`) of `bytes`-byte elements: `row` counts M
    /// (A) or N (B). With T = 16 / bytes elements to a unit, c = span / 16 units to a swizzled
    /// row, LBO and SBO the descriptor's offsets (the canonical layouts):
    ///
    /// - K-major, unswizzled, `((8,m),(T,2k)):((1T,SBO),(1,LBO))`: rows of one unit, 8 rows a
    ///   core matrix, SBO between core matrices along M/N, LBO along K;
    /// - K-major, swizzled, `((8,m),(T,2k)):((cT,SBO),(1,T))`: rows of the span, K
    ///   contiguous, SBO between groups of 8 rows;
    /// - MN-major, unswizzled, `((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))`: units along M/N, SBO
    ///   between them, 8 K-rows a core matrix, LBO between core matrices along K;
    /// - MN-major, swizzled, `((T,c,m),(8,k)):((1,T,LBO),(cT,SBO))`: rows of the span along
    ///   M/N, LBO between spans, 8 K-rows of them, SBO between groups of 8 K-rows.
    pub fn address(&self, k_major: bool, row: u64, k: u64, bytes: u64) -> u64 {
        let t = 16 / bytes;
        let (lbo, sbo) = (self.leading, self.stride);
        let linear = match (k_major, self.span) {
            (true, 0) => (row % 8) * 16 + (row / 8) * sbo + (k % t) * bytes + (k / t) * lbo,
            (true, span) => (row % 8) * span + (row / 8) * sbo + k * bytes,
            (false, 0) => (row % t) * bytes + (row / t) * sbo + (k % 8) * 16 + (k / 8) * lbo,
            (false, span) => {
                let c = span / 16;
                let mn = (row % t) * bytes + (row / t % c) * 16 + (row / (c * t)) * lbo;
                mn + (k % 8) * span + (k / 8) * sbo
            }
        };
        crate::swizzle::swizzle(self.start + linear, self.span, self.base)
    }
}

/// What the warpgroup's threads gave at the instruction.
pub struct Issue {
    pub a_desc: u64,
    pub b_desc: u64,
    /// [`flags`].
    pub flags: u64,
    /// Per thread (128): `scale-d`, and A's four registers when A is in registers.
    pub scale_d: Vec<bool>,
    pub a: Vec<[u32; 4]>,
}

/// A matrix element outside the block's shared memory: its shared address and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outside {
    pub address: u64,
    pub bytes: u64,
}

/// Performs the product: `d[t]` holds thread t's D registers (`form.d_registers()` each),
/// read when its `scale-d` is true, and written. `shared` is the block's shared memory.
pub fn run(
    form: WgmmaForm,
    issue: &Issue,
    shared: &[u8],
    d: &mut [Vec<u32>],
) -> Result<(), Outside> {
    let (n, k) = (form.n as usize, form.k as usize);
    let has = |f: u64| issue.flags & f != 0;
    let load = |desc: &Descriptor, k_major: bool, row: usize, col: usize, ty: MmaType| {
        let bytes = ty.bits() as u64 / 8;
        let at = desc.address(k_major, row as u64, col as u64, bytes);
        let raw = shared
            .get(at as usize..(at + bytes) as usize)
            .ok_or(Outside { address: at, bytes })?;
        Ok(raw.iter().rev().fold(0u64, |v, b| v << 8 | *b as u64))
    };
    // A, 64 × K, and B, K × N (addressed as N rows of K), as each element's bits.
    let mut a = vec![0; 64 * k];
    if has(flags::A_IN_REGISTERS) {
        let bits = form.a.bits() as usize;
        let per = 32 / bits;
        for (t, regs) in issue.a.iter().enumerate() {
            for i in 0..16 * k / 32 {
                let (row, col) = a_m16(form.k, form.a, t % 32, i);
                let reg = regs[i / per] as u64 >> (bits * (i % per));
                a[(16 * (t / 32) + row) * k + col] = reg & ((1 << bits) - 1);
            }
        }
    } else {
        let desc = Descriptor::decode(issue.a_desc);
        for row in 0..64 {
            for col in 0..k {
                a[row * k + col] = load(&desc, !has(flags::TRANSPOSE_A), row, col, form.a)?;
            }
        }
    }
    let mut b = vec![0; k * n];
    let desc = Descriptor::decode(issue.b_desc);
    for col in 0..n {
        for kk in 0..k {
            b[kk * n + col] = load(&desc, !has(flags::TRANSPOSE_B), col, kk, form.b)?;
        }
    }
    let per_register = 32 / form.d.bits() as usize;
    // A float D's elements by the tensor cores' rule (`Arith::matrix`), D's old values as C
    // where scale-d is true (+0 where it is false); an integer one's by `accumulate`.
    let float_d = (form.d != MmaType::S32).then(|| {
        let value = |ty, x, negate: bool| {
            let x = float_element(ty, x, 0);
            if negate { -x } else { x }
        };
        let a: Vec<f64> = a
            .iter()
            .map(|&x| value(form.a, x, has(flags::NEGATE_A)))
            .collect();
        // (B as eight-column panels, each K rows.)
        let b: Vec<[f64; 8]> = (0..n / 8)
            .flat_map(|panel| (0..k).map(move |kk| (panel, kk)))
            .map(|(panel, kk)| {
                std::array::from_fn(|j| {
                    value(form.b, b[kk * n + 8 * panel + j], has(flags::NEGATE_B))
                })
            })
            .collect();
        let mut c = vec![0.0; 64 * n];
        for (t, regs) in d.iter().enumerate().filter(|&(t, _)| issue.scale_d[t]) {
            for i in 0..regs.len() * per_register {
                let (row, col) = d_at(t, i);
                let reg = regs[i / per_register] as u64;
                c[row * n + col] = float_element(form.d, reg, i % per_register);
            }
        }
        let arith = Arith {
            a: form.a,
            b: form.b,
            c: form.d,
            d: form.d,
            blocks: Blocks::Whole,
        };
        let mut bits = vec![0; 64 * n];
        arith.matrix((&a, &b, &c), (64, n, k), &mut bits);
        bits
    });
    for (t, regs) in d.iter_mut().enumerate() {
        for (r, reg) in regs.iter_mut().enumerate() {
            let old = *reg as u64;
            let mut new = 0;
            for j in 0..per_register {
                let (row, col) = d_at(t, r * per_register + j);
                let element_bits = match &float_d {
                    Some(bits) => bits[row * n + col],
                    None => {
                        let c = match issue.scale_d[t] {
                            true => element(form.d, old, j),
                            false => Value::Int(0),
                        };
                        let value = |ty, x| element(ty, x, 0);
                        let products = (0..k).map(|kk| {
                            (
                                value(form.a, a[row * k + kk]),
                                value(form.b, b[kk * n + col]),
                            )
                        });
                        accumulate(form.d, form.satfinite, products, c)
                    }
                };
                new |= element_bits << (form.d.bits() as usize * j);
            }
            *reg = new as u32;
        }
    }
    Ok(())
}

/// (row, column) of D element `i` of thread `t`: warp w = t div 32 holds rows 16w to 16w + 15,
/// lane 4g + t' row g + 8·((i mod 4) div 2), column 8·(i div 4) + 2t' + (i mod 2).
fn d_at(t: usize, i: usize) -> (usize, usize) {
    let (g, lane_t) = (t % 32 / 4, t % 4);
    (
        16 * (t / 32) + g + 8 * (i % 4 / 2),
        8 * (i / 4) + 2 * lane_t + i % 2,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_decodes_its_fields_in_bytes() {
        let bits = 0x40 | 1 << 16 | 64 << 32 | 3 << 49 | 1 << 62;
        let d = Descriptor::decode(bits);
        assert_eq!(
            d,
            Descriptor {
                start: 0x400,
                leading: 16,
                stride: 1024,
                base: 3,
                span: 128
            }
        );
        assert_eq!(d.encode(), bits);
    }

    /// The ISA's example "K-major, no-swizzling and tf32 type": exact layout
    /// `((8,2),(4,4)):((4,32),(1,64))` in elements, LBO 64 and SBO 32 elements.
    #[test]
    fn k_major_unswizzled_follows_the_isa_tf32_example() {
        let d = Descriptor {
            leading: 64 * 4,
            stride: 32 * 4,
            ..Default::default()
        };
        for row in 0..16 {
            for k in 0..8 {
                let element = (row % 8) * 4 + (row / 8) * 32 + k % 4 + (k / 4) * 64;
                assert_eq!(d.address(true, row, k, 4), element * 4, "({row}, {k})");
            }
        }
    }

    /// "K-major, 32B swizzling and tf32 type": `Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))`.
    #[test]
    fn k_major_swizzled_follows_the_isa_tf32_example() {
        let d = Descriptor {
            stride: 64 * 4,
            span: 32,
            ..Default::default()
        };
        for row in 0..16 {
            for k in 0..8 {
                let linear = ((row % 8) * 8 + (row / 8) * 64 + k) * 4;
                let swizzled = linear ^ ((linear >> 7 & 1) << 4);
                assert_eq!(d.address(true, row, k, 4), swizzled, "({row}, {k})");
            }
        }
    }

    /// "MN-major, no-swizzling and bf16 type": `((8,1,2),(8,2)):((1,8,64),(8,128))`, LBO 128
    /// and SBO 64 elements.
    #[test]
    fn mn_major_unswizzled_follows_the_isa_bf16_example() {
        let d = Descriptor {
            leading: 128 * 2,
            stride: 64 * 2,
            ..Default::default()
        };
        for row in 0..16 {
            for k in 0..16 {
                let element = row % 8 + (row / 8) * 64 + (k % 8) * 8 + (k / 8) * 128;
                assert_eq!(d.address(false, row, k, 2), element * 2, "({row}, {k})");
            }
        }
    }

    /// "MN-major, 32B swizzling and bf16 type": `Swizzle<1,4,3> o
    /// ((8,2,2),(8,2)):((1,8,128),(16,256))`; and the 64B example, `Swizzle<2,4,3> o
    /// ((8,4,2),(8,2)):((1,8,256),(32,512))`.
    #[test]
    fn mn_major_swizzled_follows_the_isa_bf16_examples() {
        for (span, c, lbo, sbo) in [(32u64, 2, 128, 256), (64, 4, 256, 512)] {
            let d = Descriptor {
                leading: lbo * 2,
                stride: sbo * 2,
                span,
                ..Default::default()
            };
            for row in 0..16 * c {
                for k in 0..16 {
                    let element = row % 8
                        + (row / 8 % c) * 8
                        + (row / (8 * c)) * lbo
                        + (k % 8) * 8 * c
                        + (k / 8) * sbo;
                    let linear = element * 2;
                    let swizzled = crate::swizzle::swizzle(linear, span, 0);
                    assert_eq!(
                        d.address(false, row, k, 2),
                        swizzled,
                        "{span}: ({row}, {k})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_start_address_moves_the_whole_matrix() {
        let d = Descriptor {
            start: 0x400,
            stride: 1024,
            span: 128,
            ..Default::default()
        };
        let at_zero = Descriptor { start: 0, ..d };
        // A 1024-byte-aligned start keeps the pattern: the same swizzled offsets.
        assert_eq!(
            d.address(true, 3, 5, 2),
            0x400 + at_zero.address(true, 3, 5, 2)
        );
    }
}
