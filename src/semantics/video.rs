//! The video instructions (ISA "Video Instructions"): the scalar `vadd vsub vabsdiff vmin
//! vmax vshl vshr vmad vset` and the SIMD `vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2`
//! (and their 4-way forms), as the ISA's semantics blocks and helper functions write them
//! (`partSelectSignExtend`, `optSaturate`, `optSecondaryOp`, `optMerge`,
//! `extractAndSignExt_2/4`). Inputs are exact integers, intermediates unbounded (i128).
//!
//! No GPU has these instructions natively any more: ptxas expands them into integer
//! sequences, and ptxas 13.5 for sm_80 departs from the ISA's text in overflow corners (its
//! `vadd.u32.u32.u32.sat` wraps above U32_MAX; `vmad.u32.u32.u32` multiplies signed; a
//! secondary `.min/.max` compares the intermediate truncated to 32 bits). ptxjit follows the
//! ISA's text; the README lists these differences until a GPU measures them.
//!
//! A [`Video`] is the whole instruction (operand selectors included); it packs into a u64 so
//! that compiled code can pass it to the one runtime helper that calls [`video`].

use crate::frontend::checked::CmpOp;

/// What the primary operation does with its two extracted operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoOp {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    /// SIMD only: the average, rounded away from zero at .5.
    Avrg,
    /// `vshl`/`vshr`: `.clamp` limits the shift to 32, `.wrap` takes it modulo 32.
    Shl {
        clamp: bool,
    },
    Shr {
        clamp: bool,
    },
    /// `vset`: 1 when the comparison holds.
    Set(CmpOp),
    /// `vmad`: `{-}a * {-}b + {-}c` (`.po`: `a * b + c + 1`), then `>> scale` (0, 7, 15).
    Mad {
        neg_product: bool,
        neg_c: bool,
        po: bool,
        scale: u8,
    },
}

/// The comparisons `vset` takes, in the order their packed code counts them.
pub const VIDEO_CMPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];

fn holds(cmp: CmpOp, a: i128, b: i128) -> bool {
    match cmp {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        _ => a >= b,
    }
}

/// A scalar operand's part (`.b0 .. .b3`, `.h0`, `.h1`, or the whole word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Word,
    Byte(u8),
    Half(u8),
}

impl Part {
    /// `b2` → `Byte(2)`, `h1` → `Half(1)` (the selector's name without its dot).
    pub fn parse(s: &str) -> Option<Part> {
        match s.as_bytes() {
            [b'b', k @ b'0'..=b'3'] => Some(Part::Byte(k - b'0')),
            [b'h', k @ b'0'..=b'1'] => Some(Part::Half(k - b'0')),
            _ => None,
        }
    }

    fn bits(self) -> u32 {
        match self {
            Part::Word => 32,
            Part::Byte(_) => 8,
            Part::Half(_) => 16,
        }
    }

    fn shift(self) -> u32 {
        match self {
            Part::Word => 0,
            Part::Byte(k) => 8 * k as u32,
            Part::Half(k) => 16 * k as u32,
        }
    }
}

/// What happens after the primary operation (and its saturation), for the scalar forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Second {
    None,
    /// `.op2` with `c` (extended by the destination type's sign).
    Add,
    Min,
    Max,
    /// `d.dsel`: the result's low bits replace that part of `c`.
    Merge(Part),
}

/// How the operands are taken apart and the result put together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Scalar {
        asel: Part,
        bsel: Part,
        second: Second,
    },
    /// `lanes` (2 or 4) of 16 or 8 bits. `asel[i]`/`bsel[i]`: which element of `b:a` (halves
    /// 0–3 or bytes 0–7) lane `i` takes; `mask` bit `i`: lane `i` is written (merge) or
    /// added (`.add`, which adds the lanes' results to `c`); other lanes keep `c`'s.
    Simd {
        lanes: u8,
        asel: [u8; 4],
        bsel: [u8; 4],
        mask: u8,
        add: bool,
    },
}

impl Shape {
    /// The ISA's defaults: `.h10`/`.b3210` from `a`, `.h32`/`.b7654` from `b`, every lane.
    pub fn simd(lanes: u8, add: bool) -> Shape {
        let l = lanes;
        Shape::Simd {
            lanes,
            asel: [0, 1, 2, 3].map(|k| k.min(l - 1)),
            bsel: [l, l + 1, l + 2, l + 3].map(|k| k.min(2 * l - 1)),
            mask: (1 << lanes) - 1,
            add,
        }
    }
}

/// A video instruction: its operation, the signedness of `d` (for `vset` unsigned), `a`
/// and `b` (for `vshl`/`vshr`, `b` is `.u32`), `.sat`, and its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Video {
    pub op: VideoOp,
    pub d_signed: bool,
    pub a_signed: bool,
    pub b_signed: bool,
    pub sat: bool,
    pub shape: Shape,
}

/// Bits of an integer in a u64 (packing a [`Video`]).
struct Bits {
    word: u64,
    at: u32,
}

impl Bits {
    fn put(&mut self, v: u64, n: u32) {
        debug_assert!(v < 1 << n);
        self.word |= v << self.at;
        self.at += n;
    }

    fn take(&mut self, n: u32) -> u64 {
        let v = (self.word >> self.at) & ((1 << n) - 1);
        self.at += n;
        v
    }
}

fn part_code(p: Part) -> u64 {
    match p {
        Part::Word => 0,
        Part::Byte(k) => 1 + k as u64,
        Part::Half(k) => 5 + k as u64,
    }
}

fn part_of(code: u64) -> Part {
    match code {
        0 => Part::Word,
        1..=4 => Part::Byte(code as u8 - 1),
        _ => Part::Half(code as u8 - 5),
    }
}

impl Video {
    /// The instruction in 64 bits (for the JIT's helper); [`Video::from_bits`] inverts it.
    pub fn to_bits(&self) -> u64 {
        let mut b = Bits { word: 0, at: 0 };
        let (op, extra) = match self.op {
            VideoOp::Add => (0, 0),
            VideoOp::Sub => (1, 0),
            VideoOp::Absdiff => (2, 0),
            VideoOp::Min => (3, 0),
            VideoOp::Max => (4, 0),
            VideoOp::Avrg => (5, 0),
            VideoOp::Shl { clamp } => (6, clamp as u64),
            VideoOp::Shr { clamp } => (7, clamp as u64),
            VideoOp::Set(c) => (
                8,
                VIDEO_CMPS.iter().position(|&k| k == c).unwrap_or(0) as u64,
            ),
            VideoOp::Mad {
                neg_product,
                neg_c,
                po,
                scale,
            } => {
                let scale = match scale {
                    0 => 0,
                    7 => 1,
                    _ => 2,
                };
                (
                    9,
                    neg_product as u64 | (neg_c as u64) << 1 | (po as u64) << 2 | scale << 3,
                )
            }
        };
        b.put(op, 4);
        b.put(extra, 5);
        for flag in [self.d_signed, self.a_signed, self.b_signed, self.sat] {
            b.put(flag as u64, 1);
        }
        match self.shape {
            Shape::Scalar { asel, bsel, second } => {
                b.put(0, 1);
                b.put(part_code(asel), 3);
                b.put(part_code(bsel), 3);
                let (kind, part) = match second {
                    Second::None => (0, Part::Word),
                    Second::Add => (1, Part::Word),
                    Second::Min => (2, Part::Word),
                    Second::Max => (3, Part::Word),
                    Second::Merge(p) => (4, p),
                };
                b.put(kind, 3);
                b.put(part_code(part), 3);
            }
            Shape::Simd {
                lanes,
                asel,
                bsel,
                mask,
                add,
            } => {
                b.put(1, 1);
                b.put((lanes == 4) as u64, 1);
                for k in asel.into_iter().chain(bsel) {
                    b.put(k as u64, 3);
                }
                b.put(mask as u64, 4);
                b.put(add as u64, 1);
            }
        }
        b.word
    }

    pub fn from_bits(word: u64) -> Video {
        let mut b = Bits { word, at: 0 };
        let (op, extra) = (b.take(4), b.take(5));
        let op = match op {
            0 => VideoOp::Add,
            1 => VideoOp::Sub,
            2 => VideoOp::Absdiff,
            3 => VideoOp::Min,
            4 => VideoOp::Max,
            5 => VideoOp::Avrg,
            6 => VideoOp::Shl { clamp: extra != 0 },
            7 => VideoOp::Shr { clamp: extra != 0 },
            8 => VideoOp::Set(VIDEO_CMPS[extra as usize]),
            _ => VideoOp::Mad {
                neg_product: extra & 1 != 0,
                neg_c: extra & 2 != 0,
                po: extra & 4 != 0,
                scale: [0, 7, 15][(extra >> 3) as usize],
            },
        };
        let [d_signed, a_signed, b_signed, sat] = [0; 4].map(|_| b.take(1) != 0);
        let shape = if b.take(1) == 0 {
            let asel = part_of(b.take(3));
            let bsel = part_of(b.take(3));
            let (kind, part) = (b.take(3), part_of(b.take(3)));
            let second = match kind {
                0 => Second::None,
                1 => Second::Add,
                2 => Second::Min,
                3 => Second::Max,
                _ => Second::Merge(part),
            };
            Shape::Scalar { asel, bsel, second }
        } else {
            let lanes = if b.take(1) != 0 { 4 } else { 2 };
            let asel = [0; 4].map(|_| b.take(3) as u8);
            let bsel = [0; 4].map(|_| b.take(3) as u8);
            Shape::Simd {
                lanes,
                asel,
                bsel,
                mask: b.take(4) as u8,
                add: b.take(1) != 0,
            }
        };
        Video {
            op,
            d_signed,
            a_signed,
            b_signed,
            sat,
            shape,
        }
    }
}

/// `bits` bits of `x` from bit `at`, sign- or zero-extended.
fn field(x: u64, at: u32, bits: u32, signed: bool) -> i128 {
    let v = (x >> at) & ((1u64 << bits) - 1);
    if signed && v >> (bits - 1) == 1 {
        v as i128 - (1i128 << bits)
    } else {
        v as i128
    }
}

/// `CLAMP` to the range of a `bits`-bit integer of that sign.
fn clamp(v: i128, bits: u32, signed: bool) -> i128 {
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    v.clamp(lo, hi)
}

/// The primary operation on two extracted operands (not `vmad`, which has its own block).
fn primary(op: VideoOp, a: i128, b: i128) -> i128 {
    match op {
        VideoOp::Add => a + b,
        VideoOp::Sub => a - b,
        VideoOp::Absdiff => (a - b).abs(),
        VideoOp::Min => a.min(b),
        VideoOp::Max => a.max(b),
        VideoOp::Avrg if a + b >= 0 => (a + b + 1) >> 1,
        VideoOp::Avrg => (a + b) >> 1,
        VideoOp::Shl { clamp } | VideoOp::Shr { clamp } => {
            let shift = if clamp { b.min(32) } else { b & 0x1f };
            match op {
                VideoOp::Shl { .. } => a << shift,
                _ => a >> shift,
            }
        }
        VideoOp::Set(cmp) => holds(cmp, a, b) as i128,
        VideoOp::Mad { .. } => unreachable!("vmad is computed by `mad`"),
    }
}

/// `vmad`'s semantics block: the product (complemented for a negated product, or `c`
/// complemented for a negated `c`, with 1 added back), plus `c`, shifted, saturated to 32
/// bits of the final sign.
fn mad(v: &Video, ta: i128, tb: i128, c: u32) -> u32 {
    let VideoOp::Mad {
        neg_product,
        neg_c,
        po,
        scale,
    } = v.op
    else {
        unreachable!()
    };
    let signed = v.a_signed || v.b_signed || neg_product || neg_c;
    let mut tmp = ta * tb;
    let mut c = c;
    let lsb = if po {
        1
    } else if neg_product {
        tmp = !tmp;
        1
    } else if neg_c {
        c = !c;
        1
    } else {
        0
    };
    let c = if signed { c as i32 as i128 } else { c as i128 };
    let result = ((tmp + c + lsb) >> scale) as u64;
    let result = if !v.sat {
        result as i128
    } else if signed {
        clamp(result as i64 as i128, 32, true)
    } else {
        clamp(result as i128, 32, false)
    };
    result as u32
}

/// `d` of the video instruction `v` on `a`, `b` and `c` (0 for the forms without `c`).
pub fn video(v: &Video, a: u32, b: u32, c: u32) -> u32 {
    match v.shape {
        Shape::Scalar { asel, bsel, second } => {
            let ta = field(a as u64, asel.shift(), asel.bits(), v.a_signed);
            let tb = field(b as u64, bsel.shift(), bsel.bits(), v.b_signed);
            if let VideoOp::Mad { .. } = v.op {
                return mad(v, ta, tb, c);
            }
            let mut tmp = primary(v.op, ta, tb);
            // optSaturate: to the destination's sign and the merged part's width.
            if v.sat {
                let bits = match second {
                    Second::Merge(p) => p.bits(),
                    _ => 32,
                };
                tmp = clamp(tmp, bits, v.d_signed);
            }
            let c_ext = if v.d_signed {
                c as i32 as i128
            } else {
                c as i128
            };
            let d = match second {
                Second::None => tmp,
                Second::Add => tmp + c_ext,
                Second::Min => tmp.min(c_ext),
                Second::Max => tmp.max(c_ext),
                Second::Merge(p) => {
                    let mask = ((1u64 << p.bits()) - 1) << p.shift();
                    let placed = ((tmp as u64) << p.shift()) & mask;
                    (placed | (c as u64 & !mask)) as i128
                }
            };
            d as u32
        }
        Shape::Simd {
            lanes,
            asel,
            bsel,
            mask,
            add,
        } => {
            let bits = 32 / lanes as u32;
            let ab = (b as u64) << 32 | a as u64;
            let mut merged = 0u32;
            let mut sum = c;
            for i in 0..lanes as usize {
                let va = field(ab, asel[i] as u32 * bits, bits, v.a_signed);
                let vb = field(ab, bsel[i] as u32 * bits, bits, v.b_signed);
                let mut t = primary(v.op, va, vb);
                if v.sat {
                    t = clamp(t, bits, v.d_signed);
                }
                let at = i as u32 * bits;
                let written = mask >> i & 1 == 1;
                let lane = if written { t as u32 } else { c >> at };
                merged |= (lane & ((1 << bits) - 1)) << at;
                if written {
                    sum = sum.wrapping_add(t as u32);
                }
            }
            if add { sum } else { merged }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(op: VideoOp, signs: [bool; 3], sat: bool, second: Second) -> Video {
        Video {
            op,
            d_signed: signs[0],
            a_signed: signs[1],
            b_signed: signs[2],
            sat,
            shape: Shape::Scalar {
                asel: Part::Word,
                bsel: Part::Word,
                second,
            },
        }
    }

    const U: [bool; 3] = [false; 3];
    const S: [bool; 3] = [true; 3];

    #[test]
    fn a_video_instruction_packs_into_64_bits_and_back() {
        let mut all = vec![];
        for op in [
            VideoOp::Absdiff,
            VideoOp::Shr { clamp: true },
            VideoOp::Set(CmpOp::Ge),
            VideoOp::Mad {
                neg_product: true,
                neg_c: false,
                po: false,
                scale: 15,
            },
        ] {
            for second in [Second::Max, Second::Merge(Part::Half(1))] {
                let mut v = scalar(op, [true, false, true], true, second);
                v.shape = match v.shape {
                    Shape::Scalar { second, .. } => Shape::Scalar {
                        asel: Part::Byte(3),
                        bsel: Part::Half(0),
                        second,
                    },
                    s => s,
                };
                all.push(v);
            }
            all.push(Video {
                shape: Shape::Simd {
                    lanes: 4,
                    asel: [7, 0, 3, 5],
                    bsel: [1, 2, 6, 4],
                    mask: 0b1010,
                    add: true,
                },
                ..scalar(op, U, false, Second::None)
            });
        }
        for v in all {
            assert_eq!(Video::from_bits(v.to_bits()), v);
        }
    }

    #[test]
    fn simd_defaults_take_a_then_b() {
        assert_eq!(
            Shape::simd(2, false),
            Shape::Simd {
                lanes: 2,
                asel: [0, 1, 1, 1],
                bsel: [2, 3, 3, 3],
                mask: 0b11,
                add: false
            }
        );
        let Shape::Simd { asel, bsel, .. } = Shape::simd(4, true) else {
            unreachable!()
        };
        assert_eq!((asel, bsel), ([0, 1, 2, 3], [4, 5, 6, 7]));
    }

    #[test]
    fn parts_are_sign_or_zero_extended_by_the_operand_type() {
        let mut v = scalar(VideoOp::Add, [true, true, false], false, Second::None);
        v.shape = Shape::Scalar {
            asel: Part::Byte(1),
            bsel: Part::Half(1),
            second: Second::None,
        };
        // a.b1 = 0xff as s8 = -1; b.h1 = 0x8000 as u16.
        assert_eq!(video(&v, 0x0000_ff00, 0x8000_0000, 0), 0x7fff);
    }

    #[test]
    fn saturation_clamps_to_the_destination_sign_and_merged_width() {
        let v = scalar(VideoOp::Add, U, true, Second::None);
        assert_eq!(video(&v, u32::MAX, 1, 0), u32::MAX);
        let v = scalar(VideoOp::Sub, [false, false, false], true, Second::None);
        assert_eq!(video(&v, 1, 2, 0), 0);
        let v = scalar(VideoOp::Add, S, true, Second::None);
        assert_eq!(video(&v, i32::MAX as u32, 1, 0), i32::MAX as u32);
        let v = scalar(VideoOp::Sub, S, true, Second::Merge(Part::Byte(2)));
        assert_eq!(video(&v, -200i32 as u32, 0, 0x1122_3344), 0x1180_3344);
        let v = scalar(VideoOp::Add, U, false, Second::Merge(Part::Half(1)));
        assert_eq!(video(&v, 0x1_2345, 0, 0x1122_3344), 0x2345_3344);
    }

    #[test]
    fn the_secondary_operation_takes_c_by_the_destination_sign() {
        let v = scalar(VideoOp::Add, S, false, Second::Min);
        assert_eq!(video(&v, 5, 5, -3i32 as u32), -3i32 as u32);
        let v = scalar(VideoOp::Add, U, false, Second::Min);
        assert_eq!(video(&v, 5, 5, -3i32 as u32), 10);
        let v = scalar(VideoOp::Absdiff, U, false, Second::Add);
        assert_eq!(video(&v, 3, 10, 100), 107);
        // The unsaturated intermediate is exact: 2^32 is not below 5.
        let v = scalar(VideoOp::Add, U, false, Second::Min);
        assert_eq!(video(&v, u32::MAX, 1, 5), 5);
    }

    #[test]
    fn shifts_clamp_at_32_or_wrap_mod_32() {
        let clamp = scalar(VideoOp::Shr { clamp: true }, U, false, Second::Add);
        // ZLUDA's GPU-validated vshr_clamp.
        assert_eq!(video(&clamp, 0x8e2d_a590, 16, 0x248a_9f70), 613_100_957);
        assert_eq!(video(&clamp, 0x8e2d_a590, 32, 0x248a_9f70), 613_064_560);
        let wrap = scalar(VideoOp::Shl { clamp: false }, U, false, Second::None);
        assert_eq!(video(&wrap, 1, 33, 0), 2);
        let signed = scalar(
            VideoOp::Shr { clamp: true },
            [true, true, false],
            false,
            Second::None,
        );
        assert_eq!(video(&signed, 0x8000_0000, 40, 0), u32::MAX);
    }

    #[test]
    fn vset_gives_one_or_zero() {
        let v = scalar(
            VideoOp::Set(CmpOp::Lt),
            [false, true, false],
            false,
            Second::None,
        );
        assert_eq!(video(&v, -1i32 as u32, 0, 0), 1);
        let v = scalar(VideoOp::Set(CmpOp::Lt), U, false, Second::None);
        assert_eq!(video(&v, -1i32 as u32, 0, 0), 0);
    }

    #[test]
    fn vmad_negates_the_product_or_c_and_scales() {
        let mad = |neg_product, neg_c, po, scale, signs, sat| {
            scalar(
                VideoOp::Mad {
                    neg_product,
                    neg_c,
                    po,
                    scale,
                },
                signs,
                sat,
                Second::None,
            )
        };
        assert_eq!(video(&mad(false, false, false, 0, U, false), 6, 7, 1), 43);
        assert_eq!(
            video(&mad(true, false, false, 0, U, false), 6, 7, 1),
            -41i32 as u32
        );
        assert_eq!(video(&mad(false, true, false, 0, U, false), 6, 7, 1), 41);
        assert_eq!(video(&mad(false, false, true, 0, U, false), 6, 7, 1), 44);
        assert_eq!(
            video(&mad(false, false, false, 7, U, false), 256, 256, 0),
            512
        );
        // u32 × u32 saturates to U32_MAX; a negated product makes the result signed.
        assert_eq!(
            video(&mad(false, false, false, 0, U, true), 1 << 20, 1 << 20, 0),
            u32::MAX
        );
        assert_eq!(
            video(&mad(true, false, false, 0, U, true), 1 << 20, 1 << 20, 0),
            i32::MIN as u32
        );
    }

    #[test]
    fn simd_lanes_select_from_b_colon_a_and_merge_into_c() {
        let v = Video {
            op: VideoOp::Add,
            d_signed: false,
            a_signed: false,
            b_signed: false,
            sat: false,
            shape: Shape::Simd {
                lanes: 2,
                asel: [3, 0, 0, 0],
                bsel: [1, 1, 0, 0],
                mask: 0b01,
                add: false,
            },
        };
        // lane 0: b.h1 + a.h1 = 0x0003 + 0x0002; lane 1 keeps c's.
        assert_eq!(
            video(&v, 0x0002_0001, 0x0003_0004, 0xabcd_0000),
            0xabcd_0005
        );
    }

    #[test]
    fn simd_saturates_per_lane_and_accumulates_with_add() {
        let mut v = Video {
            op: VideoOp::Sub,
            d_signed: true,
            a_signed: true,
            b_signed: true,
            sat: true,
            shape: Shape::simd(4, false),
        };
        // bytes: -128 - 1 → -128; 127 - (-1) → 127; 5 - 3 = 2; 0 - 0.
        assert_eq!(video(&v, 0x0005_7f80, 0x0003_ff01, 0), 0x0002_7f80);
        v.op = VideoOp::Absdiff;
        v.sat = false;
        v.shape = Shape::simd(4, true);
        v.a_signed = false;
        v.b_signed = false;
        assert_eq!(
            video(&v, 0x0a00_ff01, 0x0100_00ff, 1000),
            1000 + 9 + 255 + 254
        );
    }

    #[test]
    fn vavrg_rounds_half_away_from_zero() {
        let v = Video {
            op: VideoOp::Avrg,
            d_signed: true,
            a_signed: true,
            b_signed: true,
            sat: false,
            shape: Shape::simd(2, false),
        };
        // lane 0: (3 + 4) / 2 = 3.5 → 4; lane 1: (-3 + -4) / 2 = -3.5 → -4.
        assert_eq!(video(&v, 0xfffd_0003, 0xfffc_0004, 0), 0xfffc_0004);
    }
}
