//! Atomics: `atom` and `red` on global, shared and generic memory. Integer operations use the
//! host's atomic instructions; the others (`inc`, `dec`, float and half `add`) are
//! compare-and-swap loops, so they are atomic across blocks running on different cores.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AtomicRmwOp, InstBuilder, MemFlagsData, Value, types};

use super::half::format_of;
use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{Arg, AtomOp, FloatMods, FloatOp, Rounding};
use crate::types::PtxType;

impl Translator<'_, '_> {
    pub fn atom(
        &mut self,
        space: StateSpace,
        op: AtomOp,
        ty: PtxType,
        red: bool,
        a: &[Arg],
    ) -> LResult {
        let (addr_arg, srcs) = if red {
            (&a[0], &a[1..])
        } else {
            (&a[1], &a[2..])
        };
        let addr = self.access_address(addr_arg, space, ty.size(), true)?;
        let b = self.read(&srcs[0], ty)?;
        let flags = MemFlagsData::new();
        let it = ty.bits_type().ir_type();
        let old = match op {
            AtomOp::Cas => {
                let c = self.read(&srcs[1], ty)?;
                self.b.ins().atomic_cas(flags, addr, b, c)
            }
            AtomOp::Add if ty.is_int() => {
                self.b
                    .ins()
                    .atomic_rmw(it, flags, AtomicRmwOp::Add, addr, b)
            }
            AtomOp::Min | AtomOp::Max => {
                let rmw = match (op, ty.is_signed()) {
                    (AtomOp::Min, true) => AtomicRmwOp::Smin,
                    (AtomOp::Min, false) => AtomicRmwOp::Umin,
                    (_, true) => AtomicRmwOp::Smax,
                    (_, false) => AtomicRmwOp::Umax,
                };
                self.b.ins().atomic_rmw(it, flags, rmw, addr, b)
            }
            AtomOp::And => self
                .b
                .ins()
                .atomic_rmw(it, flags, AtomicRmwOp::And, addr, b),
            AtomOp::Or => self.b.ins().atomic_rmw(it, flags, AtomicRmwOp::Or, addr, b),
            AtomOp::Xor => self
                .b
                .ins()
                .atomic_rmw(it, flags, AtomicRmwOp::Xor, addr, b),
            AtomOp::Exch => self
                .b
                .ins()
                .atomic_rmw(it, flags, AtomicRmwOp::Xchg, addr, b),
            // Everything else: a compare-and-swap loop on the raw bits.
            _ => {
                let b_bits = self.coerce(b, it, false);
                self.cas_loop(addr, it, |t, old| {
                    t.atomic_update(op, ty, space, old, b_bits)
                })
            }
        };
        if red {
            return Ok(());
        }
        let old = self.coerce(old, ty.ir_type(), false);
        self.write(&a[0], old, ty)
    }

    /// The new bits of an atomic read-modify-write that has no host instruction.
    fn atomic_update(
        &mut self,
        op: AtomOp,
        ty: PtxType,
        space: StateSpace,
        old: Value,
        b: Value,
    ) -> Value {
        let it = self.b.func.dfg.value_type(old);
        match op {
            // inc: old >= b ? 0 : old + 1;  dec: old == 0 || old > b ? b : old - 1
            AtomOp::Inc => {
                let wrap = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, old, b);
                let zero = self.b.ins().iconst(it, 0);
                let next = self.b.ins().iadd_imm_s(old, 1);
                self.b.ins().select(wrap, zero, next)
            }
            AtomOp::Dec => {
                let is_zero = self.b.ins().icmp_imm_u(IntCC::Equal, old, 0);
                let above = self.b.ins().icmp(IntCC::UnsignedGreaterThan, old, b);
                let wrap = self.b.ins().bor(is_zero, above);
                let prev = self.b.ins().iadd_imm_s(old, -1);
                self.b.ins().select(wrap, b, prev)
            }
            AtomOp::Add if ty.is_float() => {
                let x = self.coerce(old, ty.ir_type(), false);
                let y = self.coerce(b, ty.ir_type(), false);
                let sum = if ty == PtxType::F32 {
                    // CUDA: f32 atomic adds on global memory flush subnormals (FADD.FTZ.RN),
                    // on shared memory they keep them. Generic addresses count as global.
                    let ftz = !matches!(space, StateSpace::Shared | StateSpace::SharedCluster);
                    let (x, y) = if ftz {
                        (
                            softfloat::flush_subnormal(self.b, x),
                            softfloat::flush_subnormal(self.b, y),
                        )
                    } else {
                        (x, y)
                    };
                    let s = self.b.ins().fadd(x, y);
                    let s = if ftz {
                        softfloat::flush_subnormal(self.b, s)
                    } else {
                        s
                    };
                    softfloat::canonicalize_f32(self.b, s)
                } else {
                    self.b.ins().fadd(x, y)
                };
                self.coerce(sum, it, false)
            }
            _ => {
                // Half add (.noftz): lane by lane, as add.rn on that type.
                let (_, lanes) = format_of(ty);
                let mods = FloatMods {
                    rnd: Some(Rounding::Rn),
                    ..FloatMods::default()
                };
                let sums: Vec<Value> = (0..lanes)
                    .map(|l| {
                        let (x, y) = (self.lane(old, l), self.lane(b, l));
                        let (fmt, _) = format_of(ty);
                        self.half_arith_lane(fmt, FloatOp::Add, mods, &[x, y])
                    })
                    .collect();
                self.pack(&sums)
            }
        }
    }

    /// `loop { new = update(old); if cas(addr, old, new) == old { break } }`; returns old.
    fn cas_loop(
        &mut self,
        addr: Value,
        it: types::Type,
        update: impl Fn(&mut Self, Value) -> Value,
    ) -> Value {
        let flags = MemFlagsData::new();
        let first = self.b.ins().atomic_load(it, flags, addr);
        let retry = self.b.create_block();
        let old = self.b.append_block_param(retry, it);
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, it);
        self.b.ins().jump(retry, &[first.into()]);
        self.b.switch_to_block(retry);
        let new = update(self, old);
        let seen = self.b.ins().atomic_cas(flags, addr, old, new);
        let ok = self.b.ins().icmp(IntCC::Equal, seen, old);
        self.b
            .ins()
            .brif(ok, done, &[old.into()], retry, &[seen.into()]);
        self.b.switch_to_block(done);
        result
    }
}
