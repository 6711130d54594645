//! Integer instructions on parts of words: `mul24`/`mad24`, `sad`, `bfind`, `bmsk`,
//! `dp4a`/`dp2a`, `prmt`'s modes (reference: `semantics::int`, tested against it) and the
//! video instructions (`semantics::video`, which compiled code calls).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::{LResult, Translator};
use crate::frontend::ast::Immediate;
use crate::frontend::checked::{Arg, BoolOp, HalvesOp, IntOp, PrmtMode};
use crate::semantics::int::prmt_mode_selector;
use crate::semantics::video::Video;
use crate::types::PtxType;

impl Translator<'_, '_> {
    pub fn int_parts(&mut self, op: IntOp, ty: PtxType, a: &[Arg]) -> LResult {
        let x = self.read(&a[1], ty)?;
        let r = match op {
            IntOp::Mul24 { hi } | IntOp::Mad24 { hi } => {
                let y = self.read(&a[2], ty)?;
                let p = self.mul24(ty.is_signed(), hi, x, y);
                match op {
                    IntOp::Mad24 { .. } => {
                        let c = self.read(&a[3], ty)?;
                        self.b.ins().iadd(p, c)
                    }
                    _ => p,
                }
            }
            IntOp::Sad => {
                let y = self.read(&a[2], ty)?;
                let c = self.read(&a[3], ty)?;
                let (big, small) = if ty.is_signed() {
                    (self.b.ins().smax(x, y), self.b.ins().smin(x, y))
                } else {
                    (self.b.ins().umax(x, y), self.b.ins().umin(x, y))
                };
                let diff = self.b.ins().isub(big, small);
                self.b.ins().iadd(c, diff)
            }
            IntOp::Bfind { shiftamt } => return self.bfind(shiftamt, ty, x, &a[0]),
            IntOp::Bmsk { clamp } => {
                let y = self.read(&a[2], ty)?;
                self.bmsk(clamp, x, y)
            }
            IntOp::Dp4a { a_signed, b_signed }
            | IntOp::Dp2a {
                a_signed, b_signed, ..
            } => {
                let y = self.read(&a[2], ty)?;
                let mut acc = self.read(&a[3], ty)?;
                // (width of a's parts, which bytes of b)
                let (width, first) = match op {
                    IntOp::Dp2a { hi, .. } => (16, if hi { 2 } else { 0 }),
                    _ => (8, 0),
                };
                for k in 0..32 / width {
                    let pa = self.part(x, k * width, width, a_signed);
                    let pb = self.part(y, (first + k) * 8, 8, b_signed);
                    let p = self.b.ins().imul(pa, pb);
                    acc = self.b.ins().iadd(acc, p);
                }
                acc
            }
            IntOp::PrmtMode(mode) => {
                let y = self.read(&a[2], ty)?;
                let c = self.read(&a[3], ty)?;
                let sel = self.prmt_mode_selector(mode, c);
                self.prmt(x, y, sel)
            }
            IntOp::Relu { max } => {
                let y = self.read(&a[2], ty)?;
                let r = if max {
                    self.b.ins().smax(x, y)
                } else {
                    self.b.ins().smin(x, y)
                };
                let zero = self.b.ins().iconst(types::I32, 0);
                self.b.ins().smax(r, zero)
            }
            IntOp::Halves { op, signed, relu } => {
                let y = self.read(&a[2], ty)?;
                let [lo, hi] = [0, 1].map(|k| {
                    let (xk, yk) = (self.half_lane(x, k), self.half_lane(y, k));
                    let r = match (op, signed) {
                        (HalvesOp::Add, _) => self.b.ins().iadd(xk, yk),
                        (HalvesOp::Sub, _) => self.b.ins().isub(xk, yk),
                        (HalvesOp::Min, true) => self.b.ins().smin(xk, yk),
                        (HalvesOp::Min, false) => self.b.ins().umin(xk, yk),
                        (HalvesOp::Max, true) => self.b.ins().smax(xk, yk),
                        (HalvesOp::Max, false) => self.b.ins().umax(xk, yk),
                    };
                    let r = if relu {
                        let zero = self.b.ins().iconst(types::I16, 0);
                        self.b.ins().smax(r, zero)
                    } else {
                        r
                    };
                    self.b.ins().uextend(types::I32, r)
                });
                let hi = self.b.ins().ishl_imm_u(hi, 16);
                self.b.ins().bor(lo, hi)
            }
            IntOp::Lop3 { bool_op } => return self.lop3(bool_op, x, a),
            // A search along the bits, rare enough for the reference to do it.
            IntOp::Fns => {
                let base = self.read(&a[2], PtxType::B32)?;
                let offset = self.read(&a[3], PtxType::S32)?;
                let f = self.helper_ref("ptxjit_fns");
                let call = self.b.ins().call(f, &[x, base, offset]);
                self.b.inst_results(call)[0]
            }
            _ => unreachable!("not a part-of-word op: {op:?}"),
        };
        self.write(&a[0], r, ty)
    }

    /// A video instruction: its packed description and operands go to the runtime helper
    /// that runs `semantics::video` (these are rare; on a GPU too ptxas expands each into a
    /// sequence of integer instructions).
    pub fn video(&mut self, v: Video, a: &[Arg]) -> LResult {
        let mut x = vec![self.b.ins().iconst(types::I64, v.to_bits() as i64)];
        for k in 1..4 {
            x.push(match a.get(k) {
                Some(arg) => self.read(arg, PtxType::B32)?,
                None => self.b.ins().iconst(types::I32, 0),
            });
        }
        let f = self.helper_ref("ptxjit_video");
        let call = self.b.ins().call(f, &x);
        let d = self.b.inst_results(call)[0];
        self.write(&a[0], d, PtxType::B32)
    }

    /// Half `k` of the word `x`, as an I16.
    fn half_lane(&mut self, x: Value, k: i64) -> Value {
        let h = self.b.ins().ushr_imm_u(x, 16 * k);
        self.b.ins().ireduce(types::I16, h)
    }

    /// `lop3`: the OR of the minterms `immLut` sets (bit `4a + 2b + c` for the inputs' bits
    /// `a b c`), so any table is a handful of ands and ors; `immLut` must be a constant.
    fn lop3(&mut self, bool_op: Option<BoolOp>, x: Value, a: &[Arg]) -> LResult {
        let Arg::Imm(Immediate::Int(lut)) = a[4] else {
            return Err(self.err("lop3's immLut must be an integer constant".to_string()));
        };
        if lut > 0xFF {
            return Err(self.err(format!("lop3's immLut {lut:#x} is not in 0..=255")));
        }
        let inputs = [
            x,
            self.read(&a[2], PtxType::B32)?,
            self.read(&a[3], PtxType::B32)?,
        ];
        let mut d = self.b.ins().iconst(types::I32, 0);
        for k in (0..8).filter(|k| lut >> k & 1 == 1) {
            let mut term = self.b.ins().iconst(types::I32, -1);
            for (i, &v) in inputs.iter().enumerate() {
                // Input i is bit 2 - i of the minterm's index: a is its top bit.
                term = if k >> (2 - i) & 1 == 1 {
                    self.b.ins().band(term, v)
                } else {
                    self.b.ins().band_not(term, v)
                };
            }
            d = self.b.ins().bor(d, term);
        }
        let (d_dst, p_dst) = a[0].split_pair();
        if let (Some(p_dst), Some(op)) = (p_dst, bool_op) {
            let q = self.read(&a[5], PtxType::Pred)?;
            let nonzero = self.b.ins().icmp_imm_u(IntCC::NotEqual, d, 0);
            let p = self.combine(Some(op), nonzero, Some(q));
            self.write(p_dst, p, PtxType::Pred)?;
        }
        self.write(d_dst, d, PtxType::B32)
    }

    /// Bits `at..at + width` of `x`, extended to 32 bits.
    fn part(&mut self, x: Value, at: i64, width: i64, signed: bool) -> Value {
        let up = self.b.ins().ishl_imm_u(x, 32 - at - width);
        if signed {
            self.b.ins().sshr_imm_u(up, 32 - width)
        } else {
            self.b.ins().ushr_imm_u(up, 32 - width)
        }
    }

    /// The 48-bit product of the low 24 bits of `x` and `y`: its bits 0..32 or 16..48.
    fn mul24(&mut self, signed: bool, hi: bool, x: Value, y: Value) -> Value {
        let x = self.part(x, 0, 24, signed);
        let y = self.part(y, 0, 24, signed);
        let (x, y) = if signed {
            (
                self.b.ins().sextend(types::I64, x),
                self.b.ins().sextend(types::I64, y),
            )
        } else {
            (
                self.b.ins().uextend(types::I64, x),
                self.b.ins().uextend(types::I64, y),
            )
        };
        let p = self.b.ins().imul(x, y);
        let p = if hi {
            self.b.ins().ushr_imm_u(p, 16)
        } else {
            p
        };
        self.b.ins().ireduce(types::I32, p)
    }

    /// `bfind`: for a signed type, a negative value's bits are inverted first; then the
    /// position of the top 1 (or `.shiftamt`: its distance from the top), 0xffffffff for 0.
    fn bfind(&mut self, shiftamt: bool, ty: PtxType, x: Value, d: &Arg) -> LResult {
        let bits = ty.bits() as i64;
        let x = if ty.is_signed() {
            let sign = self.b.ins().sshr_imm_u(x, bits - 1);
            self.b.ins().bxor(x, sign)
        } else {
            x
        };
        let lz = self.b.ins().clz(x);
        let lz = self.extend(lz, types::I64, false);
        let lz = self.b.ins().ireduce(types::I32, lz);
        let r = if shiftamt {
            lz
        } else {
            let top = self.b.ins().iconst(types::I32, bits - 1);
            self.b.ins().isub(top, lz)
        };
        let zero = self.b.ins().icmp_imm_u(IntCC::Equal, x, 0);
        let none = self.b.ins().iconst(types::I32, u32::MAX as i64);
        let r = self.b.ins().select(zero, none, r);
        self.write(d, r, PtxType::U32)
    }

    /// `bmsk`, as the ISA's semantics block computes it (shifts done in 64 bits, so a shift
    /// by 32 or more gives 0).
    fn bmsk(&mut self, clamp: bool, a: Value, b: Value) -> Value {
        let ones = self.b.ins().iconst(types::I64, u32::MAX as i64);
        let a1 = self.b.ins().band_imm_u(a, 0x1F);
        let b1 = self.b.ins().band_imm_u(b, 0x1F);
        let sum = self.b.ins().iadd(a1, b1);
        let sum64 = self.b.ins().uextend(types::I64, sum);
        let a64 = self.b.ins().uextend(types::I64, a1);
        let mask0 = self.b.ins().ishl(ones, a64);
        let mut mask0 = self.b.ins().ireduce(types::I32, mask0);
        let mask1 = self.b.ins().ishl(ones, sum64);
        let mask1 = self.b.ins().ireduce(types::I32, mask1);
        let mut overflow = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, sum, 32);
        if clamp {
            let a_over = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, a, 32);
            let b_over = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, b, 32);
            let zero = self.b.ins().iconst(types::I32, 0);
            mask0 = self.b.ins().select(a_over, zero, mask0);
            overflow = self.b.ins().bor(overflow, a_over);
            overflow = self.b.ins().bor(overflow, b_over);
        }
        let zero = self.b.ins().iconst(types::I32, 0);
        let all = self.b.ins().iconst(types::I32, u32::MAX as i64);
        let b_zero = self.b.ins().icmp_imm_u(IntCC::Equal, b1, 0);
        let mask1 = self.b.ins().select(b_zero, all, mask1);
        let mask1 = self.b.ins().select(overflow, zero, mask1);
        self.b.ins().band_not(mask0, mask1)
    }

    /// The selector nibbles a mode picks for `c & 3` (the reference's table, four 16-bit
    /// entries packed in one constant).
    fn prmt_mode_selector(&mut self, mode: PrmtMode, c: Value) -> Value {
        let table = (0..4).fold(0u64, |t, s| {
            t | (prmt_mode_selector(mode, s) as u64) << (16 * s)
        });
        let table = self.b.ins().iconst(types::I64, table as i64);
        let s = self.b.ins().band_imm_u(c, 3);
        let shift = self.b.ins().imul_imm_u(s, 16);
        let shift = self.b.ins().uextend(types::I64, shift);
        let entry = self.b.ins().ushr(table, shift);
        let entry = self.b.ins().ireduce(types::I32, entry);
        self.b.ins().band_imm_u(entry, 0xFFFF)
    }
}
