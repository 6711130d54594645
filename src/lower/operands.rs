//! Operand access: reading an argument as a value of the instruction's type, writing a result
//! to a register of possibly another type, and computing addresses.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};

use super::{LResult, Translator, VarLoc, ctx};
use crate::frontend::ast::{Immediate, StateSpace};
use crate::frontend::check::immediate_bits;
use crate::frontend::checked::{AddrBase, Arg, CmpOp, Dim, Special, Symbol};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// Converts `v` (held as `from`) to IR type `to`: bit casts between same-width classes,
    /// truncation or extension (signed per `signed`) between widths.
    pub fn coerce(&mut self, v: Value, to: Type, signed: bool) -> Value {
        let from = self.b.func.dfg.value_type(v);
        if from == to {
            return v;
        }
        let mut v = v;
        let mut from = from;
        if from.is_float() {
            let it = Type::int(from.bits() as u16).expect("float width");
            v = self.b.ins().bitcast(it, MemFlagsData::new(), v);
            from = it;
        }
        let int_to = if to.is_float() {
            Type::int(to.bits() as u16).expect("float width")
        } else {
            to
        };
        if from.bits() > int_to.bits() {
            v = self.b.ins().ireduce(int_to, v);
        } else if from.bits() < int_to.bits() {
            v = if signed {
                self.b.ins().sextend(int_to, v)
            } else {
                self.b.ins().uextend(int_to, v)
            };
        }
        if to.is_float() {
            v = self.b.ins().bitcast(to, MemFlagsData::new(), v);
        }
        v
    }

    /// A constant of PTX type `ty` from raw bits.
    pub fn const_bits(&mut self, ty: PtxType, bits: u64) -> Value {
        match ty {
            PtxType::F32 => self.b.ins().f32const(f32::from_bits(bits as u32)),
            PtxType::F64 => self.b.ins().f64const(f64::from_bits(bits)),
            PtxType::Pred => self.b.ins().iconst(types::I8, (bits != 0) as i64),
            _ => {
                let it = ty.ir_type();
                let masked = if it.bits() >= 64 {
                    bits
                } else {
                    bits & ((1u64 << it.bits()) - 1)
                };
                if it == types::I128 {
                    let lo = self.b.ins().iconst(types::I64, bits as i64);
                    self.b.ins().uextend(types::I128, lo)
                } else {
                    self.b.ins().iconst(it, masked as i64)
                }
            }
        }
    }

    /// Reads `arg` as a value of PTX type `ty`.
    pub fn read(&mut self, arg: &Arg, ty: PtxType) -> LResult<Value> {
        let want = ty.ir_type();
        match arg {
            Arg::Reg(r) => {
                let v = self.b.use_var(self.regs[*r as usize]);
                let reg_ty = self.func.regs[*r as usize].ty;
                if reg_ty == PtxType::Pred && ty != PtxType::Pred {
                    return Err(self.err(format!("predicate register used as a {ty} operand")));
                }
                Ok(self.coerce(v, want, ty.is_signed() || reg_ty.is_signed()))
            }
            Arg::Imm(imm) => {
                if ty.is_half() && !matches!(imm, Immediate::Int(_)) {
                    return Err(
                        self.err(format!("a {ty} operand cannot be a floating-point literal"))
                    );
                }
                Ok(self.const_bits(ty, immediate_bits(*imm, ty)))
            }
            Arg::Special(s) => {
                let v = self.special(*s);
                Ok(self.coerce(v, want, false))
            }
            Arg::SymbolAddr(sym, off) => {
                let v = self.symbol_value(*sym)?;
                let v = self.b.ins().iadd_imm_s(v, *off);
                Ok(self.coerce(v, want, false))
            }
            Arg::Vector(items) if items.len() == 1 => self.read(&items[0], ty),
            Arg::Not(r) => {
                let v = self.b.use_var(self.regs[*r as usize]);
                Ok(self.b.ins().bxor_imm_u(v, 1))
            }
            _ => Err(self.err(format!(
                "unexpected operand {} for a {ty} source",
                describe(arg)
            ))),
        }
    }

    /// Writes `v` (a value of PTX type `ty`) to the destination `arg`.
    pub fn write(&mut self, arg: &Arg, v: Value, ty: PtxType) -> LResult {
        match arg {
            Arg::Reg(r) => {
                let reg_ty = self.func.regs[*r as usize].ty;
                if (reg_ty == PtxType::Pred) != (ty == PtxType::Pred) {
                    return Err(self.err(format!(
                        "cannot write a {ty} result to '{}' of type {reg_ty}",
                        self.func.regs[*r as usize].name
                    )));
                }
                let v = self.coerce(v, reg_ty.ir_type(), ty.is_signed());
                self.b.def_var(self.regs[*r as usize], v);
                Ok(())
            }
            Arg::Sink => Ok(()),
            Arg::Vector(items) if items.len() == 1 => self.write(&items[0], v, ty),
            _ => Err(self.err(format!(
                "destination must be a register, found {}",
                describe(arg)
            ))),
        }
    }

    /// The value of a special register, as u32 (u64 for the 64-bit clocks).
    pub fn special(&mut self, s: Special) -> Value {
        let flags = super::invariant();
        let dim = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        match s {
            Special::Tid(d) => self.b.use_var(self.tid[dim(d)]),
            Special::Ntid(d) => {
                self.b
                    .ins()
                    .load(types::I32, flags, self.ctx, ctx::NTID + 4 * dim(d) as i32)
            }
            Special::Ctaid(d) => {
                self.b
                    .ins()
                    .load(types::I32, flags, self.ctx, ctx::CTAID + 4 * dim(d) as i32)
            }
            Special::Nctaid(d) => {
                self.b
                    .ins()
                    .load(types::I32, flags, self.ctx, ctx::NCTAID + 4 * dim(d) as i32)
            }
            Special::DynamicSmemSize => {
                self.b
                    .ins()
                    .load(types::I32, flags, self.ctx, ctx::DYNAMIC_SHARED)
            }
            Special::LaneId => {
                let linear = self.linear_tid();
                self.b.ins().band_imm_u(linear, 31)
            }
            Special::WarpId => {
                let linear = self.linear_tid();
                self.b.ins().ushr_imm_u(linear, 5)
            }
            Special::NWarpId => {
                let n = self.threads_per_block();
                let n = self.b.ins().iadd_imm_s(n, 31);
                self.b.ins().ushr_imm_u(n, 5)
            }
            Special::LaneMask(cmp) => {
                let linear = self.linear_tid();
                let lane = self.b.ins().band_imm_u(linear, 31);
                let one = self.b.ins().iconst(types::I32, 1);
                let bit = self.b.ins().ishl(one, lane);
                let below = self.b.ins().iadd_imm_s(bit, -1);
                match cmp {
                    CmpOp::Eq => bit,
                    CmpOp::Lt => below,
                    CmpOp::Le => self.b.ins().bor(below, bit),
                    CmpOp::Gt => {
                        let le = self.b.ins().bor(below, bit);
                        self.b.ins().bnot(le)
                    }
                    _ => self.b.ins().bnot(below),
                }
            }
            Special::ClusterId(d) => self.ctx_u32(ctx::CLUSTERID + 4 * dim(d) as i32),
            Special::NClusterId(d) => self.ctx_u32(ctx::NCLUSTERID + 4 * dim(d) as i32),
            Special::ClusterCtaId(d) => self.ctx_u32(ctx::CLUSTER_CTAID + 4 * dim(d) as i32),
            Special::ClusterNCtaId(d) => self.ctx_u32(ctx::CLUSTER_NCTAID + 4 * dim(d) as i32),
            Special::ClusterCtaRank => self.ctx_u32(ctx::CLUSTER_CTARANK),
            Special::ClusterNCtaRank => self.ctx_u32(ctx::CLUSTER_NCTARANK),
            Special::IsExplicitCluster => self.ctx_u32(ctx::IS_EXPLICIT_CLUSTER),
            Special::TotalSmemSize => {
                let dynamic = self
                    .b
                    .ins()
                    .load(types::I32, flags, self.ctx, ctx::DYNAMIC_SHARED);
                let static_bytes = self.env.dynamic_shared_offset as i64;
                self.b.ins().iadd_imm_s(dynamic, static_bytes)
            }
            Special::Constant(v) => self.b.ins().iconst(types::I32, v as i64),
            Special::SmId | Special::GridId => self.b.ins().iconst(types::I32, 0),
            Special::NSmId => self.b.ins().iconst(types::I32, 1),
            Special::Clock | Special::Clock64 | Special::GlobalTimer => {
                let f = self.helper_ref("ptxjit_clock_ns");
                let call = self.b.ins().call(f, &[]);
                let ns = self.b.inst_results(call)[0];
                if s == Special::Clock {
                    self.b.ins().ireduce(types::I32, ns)
                } else {
                    ns
                }
            }
        }
    }

    pub(super) fn threads_per_block(&mut self) -> Value {
        let flags = super::invariant();
        let nx = self.b.ins().load(types::I32, flags, self.ctx, ctx::NTID);
        let ny = self
            .b
            .ins()
            .load(types::I32, flags, self.ctx, ctx::NTID + 4);
        let nz = self
            .b
            .ins()
            .load(types::I32, flags, self.ctx, ctx::NTID + 8);
        let nxy = self.b.ins().imul(nx, ny);
        self.b.ins().imul(nxy, nz)
    }

    /// tid.x + ntid.x * (tid.y + ntid.y * tid.z): the thread's rank in its block.
    pub(super) fn linear_tid(&mut self) -> Value {
        let tid = self.tid.map(|t| self.b.use_var(t));
        self.linear_id(tid)
    }

    /// x + ntid.x * (y + ntid.y * z): the rank of thread (x, y, z) in its block.
    pub(super) fn linear_id(&mut self, [x, y, z]: [Value; 3]) -> Value {
        let flags = super::invariant();
        let nx = self.b.ins().load(types::I32, flags, self.ctx, ctx::NTID);
        let ny = self
            .b
            .ins()
            .load(types::I32, flags, self.ctx, ctx::NTID + 4);
        let zy = self.b.ins().imul(z, ny);
        let yz = self.b.ins().iadd(y, zy);
        let row = self.b.ins().imul(yz, nx);
        self.b.ins().iadd(x, row)
    }

    /// The value of a variable's name used as an operand: its address in its own state space
    /// (a shared variable gives its shared-window offset), as i64.
    pub fn symbol_value(&mut self, sym: Symbol) -> LResult<Value> {
        if let Some(off) = self.shared_offset(sym) {
            return Ok(self.b.ins().iconst(types::I64, off as i64));
        }
        // A kernel parameter's address is its offset in the parameter space (Triton takes it
        // in 32 bits, then `cvta.param`); a called function's stays its host address.
        if let Symbol::Param(i) = sym
            && self.is_entry()
        {
            let off = self.func.params[i].offset as i64;
            return Ok(self.b.ins().iconst(types::I64, off));
        }
        self.symbol_host_address(sym)
    }

    fn shared_offset(&self, sym: Symbol) -> Option<u32> {
        match sym {
            Symbol::Global(g) => self.env.global_shared_offsets[g],
            Symbol::Local(v) => match self.vars[v] {
                VarLoc::Shared(off) => Some(off),
                VarLoc::Stack(..) | VarLoc::Frame(_) => None,
            },
            _ => None,
        }
    }

    /// The host address of a variable.
    pub fn symbol_host_address(&mut self, sym: Symbol) -> LResult<Value> {
        if let Some(off) = self.shared_offset(sym) {
            return Ok(self.b.ins().iadd_imm_s(self.shared_base, off as i64));
        }
        Ok(match sym {
            Symbol::Global(g) => {
                let addr = self.env.global_addresses[g].expect("non-shared globals have storage");
                self.b.ins().iconst(types::I64, addr as i64)
            }
            Symbol::Local(v) => match self.vars[v] {
                VarLoc::Stack(slot, off) => self.b.ins().stack_addr(types::I64, slot, off),
                VarLoc::Frame(off) => {
                    let frame = self.b.use_var(
                        self.coop
                            .as_ref()
                            .expect("frame locals are cooperative")
                            .frame,
                    );
                    self.b.ins().iadd_imm_s(frame, off as i64)
                }
                VarLoc::Shared(_) => unreachable!("handled above"),
            },
            Symbol::Param(i) => match self.thread_end {
                // Entry parameters live in the launch's parameter buffer.
                Some(_) => {
                    let off = self.func.params[i].offset as i64;
                    self.b.ins().iadd_imm_s(self.params[0], off)
                }
                None => self.params[i],
            },
            Symbol::Return(i) => self.returns[i],
        })
    }

    /// The host address of a memory operand `[base+offset]` accessed in `space`.
    pub fn address(&mut self, arg: &Arg, space: StateSpace) -> LResult<Value> {
        let Arg::Addr { base, offset } = arg else {
            return Err(self.err(format!("expected an address [..], found {}", describe(arg))));
        };
        let base = match *base {
            AddrBase::Symbol(sym) => self.symbol_host_address(sym)?,
            AddrBase::Absolute => {
                let zero = self.b.ins().iconst(types::I64, 0);
                self.space_to_host(zero, space)
            }
            AddrBase::Reg(r) => {
                let reg_ty = self.func.regs[r as usize].ty;
                if !(reg_ty.is_int() && reg_ty.size() >= 4) {
                    return Err(self.err(format!(
                        "address register '{}' must be 32 or 64 bits wide, not {reg_ty}",
                        self.func.regs[r as usize].name
                    )));
                }
                let v = self.read(&Arg::Reg(r), PtxType::U64)?;
                self.space_to_host(v, space)
            }
        };
        Ok(if *offset == 0 {
            base
        } else {
            self.b.ins().iadd_imm_s(base, *offset)
        })
    }

    /// A u32 field of the block context (fixed for the launch).
    pub fn ctx_u32(&mut self, offset: i32) -> Value {
        self.b
            .ins()
            .load(types::I32, super::invariant(), self.ctx, offset)
    }

    /// Converts an address in `space` to a host address.
    pub fn space_to_host(&mut self, addr: Value, space: StateSpace) -> Value {
        match space {
            StateSpace::SharedCluster => self.cluster_window_to_host(addr),
            StateSpace::Shared => {
                let off = self.b.ins().band_imm_u(addr, 0xFFFF_FFFF);
                self.b.ins().iadd(self.shared_base, off)
            }
            StateSpace::Param if self.is_entry() => {
                let off = self.b.ins().band_imm_u(addr, 0xFFFF_FFFF);
                self.b.ins().iadd(self.params[0], off)
            }
            _ => addr,
        }
    }

    /// Converts a host address to an address in `space` (`cvta.to`).
    pub fn host_to_space(&mut self, addr: Value, space: StateSpace) -> Value {
        match space {
            StateSpace::Shared => self.b.ins().isub(addr, self.shared_base),
            StateSpace::SharedCluster => self.host_to_cluster_window(addr),
            StateSpace::Param if self.is_entry() => self.b.ins().isub(addr, self.params[0]),
            _ => addr,
        }
    }

    /// The elements of a vector operand (a plain operand counts as one).
    pub fn elements<'x>(&self, arg: &'x Arg) -> &'x [Arg] {
        arg.elements()
    }
}

pub fn describe(arg: &Arg) -> &'static str {
    match arg {
        Arg::Reg(_) => "a register",
        Arg::Imm(_) => "an immediate",
        Arg::Special(_) => "a special register",
        Arg::Addr { .. } => "an address",
        Arg::SymbolAddr(..) => "a variable name",
        Arg::Vector(_) => "a vector",
        Arg::List(_) => "a list",
        Arg::Pair(..) => "a predicate pair",
        Arg::Not(_) => "a negated predicate",
        Arg::Label(_) => "a label",
        Arg::Func(_) => "a function name",
        Arg::Callees(_) => "a call prototype",
        Arg::Sink => "'_'",
    }
}
