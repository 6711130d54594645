//! The reference interpreter: runs a checked module instruction by instruction with the
//! semantics in `crate::semantics`, on the same device memory as the JIT. It is the baseline
//! of the JIT's speed measurements and an independent oracle for differential tests.
//!
//! It runs every thread of a block to completion, one after another, so it does not support
//! barriers, warp collectives, atomics or calls (those report an error naming the
//! instruction).

use std::collections::HashMap;

use ptxjit_runtime::{DeviceBuffer, LaunchConfig};

use crate::error::{Error, Result};
use crate::frontend::ast::{FunctionKind, Immediate, StateSpace};
use crate::frontend::check::immediate_bits;
use crate::frontend::checked::{
    self, AddrBase, Arg, BoolOp, CmpOp, CvtMods, Dim, FloatMods, FloatOp, IntOp, MulMode,
    NarrowCvt, Op, Rounding, Special, Symbol,
};
use crate::jit::{CompileOptions, place_variables};
use crate::kernel::{Arg as KernelArg, check_ptx};
use crate::lower::Env;
use crate::semantics::directed;
use crate::semantics::float as fl;
use crate::semantics::half::{BF16, F16, HalfFormat};
use crate::semantics::int as si;
use crate::semantics::minifloat::{tf32, ue8m0};
use crate::semantics::{half_approx, half_ops, mufu};
use crate::types::PtxType;

pub struct Interpreter {
    module: checked::Module,
    env: Env,
    _data: Option<DeviceBuffer>,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn sign_extend(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        ((v << (64 - bits)) as i64 >> (64 - bits)) as u64
    }
}

/// Bits of a `from`-typed value as a `to`-typed value: truncation or extension (signed when
/// either type is signed, as the JIT does).
fn convert_bits(v: u64, from: PtxType, to: PtxType) -> u64 {
    let (fb, tb) = (from.bits().min(64), to.bits().min(64));
    let v = v & mask(fb);
    if tb <= fb {
        v & mask(tb)
    } else if from.is_signed() || to.is_signed() {
        sign_extend(v, fb) & mask(tb)
    } else {
        v
    }
}

fn half_format(ty: PtxType) -> (HalfFormat, u32) {
    match ty {
        PtxType::F16 => (F16, 1),
        PtxType::F16x2 => (F16, 2),
        PtxType::BF16 => (BF16, 1),
        _ => (BF16, 2),
    }
}

struct Thread<'a> {
    regs: Vec<u64>,
    tid: [u32; 3],
    local: Vec<u64>,
    local_offsets: &'a HashMap<usize, usize>,
}

struct Block<'a> {
    f: &'a checked::Function,
    params: &'a [u8],
    shared: *mut u8,
    ctaid: [u32; 3],
    /// What the `%cluster*` registers read.
    cluster: ptxjit_runtime::ClusterPlace,
    config: &'a LaunchConfig,
}

impl Interpreter {
    pub fn from_ptx(name: &str, text: &str) -> Result<Interpreter> {
        let module = check_ptx(name, text)?;
        let (env, data) = place_variables(&module, CompileOptions::default().max_module_data)?;
        Ok(Interpreter {
            module,
            env,
            _data: data,
        })
    }

    pub fn launch(&self, kernel: &str, config: &LaunchConfig, args: &[KernelArg]) -> Result<()> {
        config.validate()?;
        let (fi, f) = self
            .module
            .functions
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == kernel && f.kind == FunctionKind::Entry && f.body.is_some())
            .ok_or_else(|| Error::NoSuchKernel {
                name: kernel.into(),
                available: String::new(),
            })?;
        let fail = |message: String| Error::Launch {
            kernel: kernel.into(),
            message,
        };
        if args.len() != f.params.len() {
            return Err(fail(format!(
                "takes {} arguments, {} given",
                f.params.len(),
                args.len()
            )));
        }
        let mut params = vec![0u8; f.params_size as usize + 8];
        for (p, a) in f.params.iter().zip(args) {
            let b = a.as_bytes();
            if b.len() != p.size as usize {
                return Err(fail(format!(
                    "argument '{}' needs {} bytes, got {}",
                    p.name,
                    p.size,
                    b.len()
                )));
            }
            params[p.offset as usize..p.offset as usize + b.len()].copy_from_slice(b);
        }
        // Per-thread storage for `.local` variables.
        let mut local_offsets = HashMap::new();
        let mut local_bytes = 0usize;
        for (i, v) in f.vars.iter().enumerate() {
            if v.space != StateSpace::Shared {
                local_bytes = local_bytes.div_ceil(16) * 16;
                local_offsets.insert(i, local_bytes);
                local_bytes += v.size as usize;
            }
        }
        let shared_bytes =
            self.env.dynamic_shared_offset as usize + config.dynamic_shared_bytes as usize;
        let mut shared = vec![0u64; shared_bytes.div_ceil(8) + 1];
        let (g, b) = (config.grid, config.block);
        for bz in 0..g.z {
            for by in 0..g.y {
                for bx in 0..g.x {
                    shared.iter_mut().for_each(|w| *w = 0);
                    let block = Block {
                        f,
                        params: &params,
                        shared: shared.as_mut_ptr() as *mut u8,
                        ctaid: [bx, by, bz],
                        cluster: config.cluster_place([bx, by, bz]),
                        config,
                    };
                    for tz in 0..b.z {
                        for ty in 0..b.y {
                            for tx in 0..b.x {
                                let mut t = Thread {
                                    regs: vec![0; f.regs.len()],
                                    tid: [tx, ty, tz],
                                    local: vec![0; local_bytes.div_ceil(8) + 1],
                                    local_offsets: &local_offsets,
                                };
                                self.run_thread(fi, &block, &mut t).map_err(|(i, msg)| {
                                    let inst = &f.body.as_ref().expect("defined")[i];
                                    Error::Runtime {
                                        kernel: kernel.into(),
                                        kind: None,
                                        what: format!("{msg} in block ({bx}, {by}, {bz})"),
                                        location: self.module.source.location(inst.span),
                                        instruction: inst.opcode.clone(),
                                    }
                                })?;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs one thread to its end; an error carries the instruction index and what happened.
    fn run_thread(
        &self,
        _fi: usize,
        blk: &Block,
        t: &mut Thread,
    ) -> std::result::Result<(), (usize, String)> {
        let body = blk.f.body.as_ref().expect("defined");
        let mut pc = 0;
        while pc < body.len() {
            let inst = &body[pc];
            let here = pc;
            pc += 1;
            if let Some(g) = inst.guard
                && (t.regs[g.reg as usize] & 1 == 1) == g.negated
            {
                continue;
            }
            let err = |m: &str| (here, m.to_string());
            match inst.op {
                Op::Bra => match inst.args.first() {
                    Some(Arg::Label(l)) => pc = blk.f.labels[*l],
                    _ => return Err(err("indirect branch")),
                },
                Op::Ret | Op::Exit => return Ok(()),
                Op::Trap => return Err(err("trap")),
                _ => self.exec(blk, t, inst).map_err(|m| (here, m))?,
            }
        }
        Ok(())
    }

    // ---- operands ---------------------------------------------------------------------------

    fn special(&self, blk: &Block, t: &Thread, s: Special) -> u64 {
        let d = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        let ntid = [blk.config.block.x, blk.config.block.y, blk.config.block.z];
        let nctaid = [blk.config.grid.x, blk.config.grid.y, blk.config.grid.z];
        let linear = t.tid[0] + ntid[0] * (t.tid[1] + ntid[1] * t.tid[2]);
        (match s {
            Special::Tid(x) => t.tid[d(x)],
            Special::Ntid(x) => ntid[d(x)],
            Special::Ctaid(x) => blk.ctaid[d(x)],
            Special::Nctaid(x) => nctaid[d(x)],
            Special::LaneId => linear & 31,
            Special::WarpId => linear >> 5,
            Special::NWarpId => (ntid[0] * ntid[1] * ntid[2]).div_ceil(32),
            Special::DynamicSmemSize => blk.config.dynamic_shared_bytes,
            Special::LaneMask(c) => {
                let lane = linear & 31;
                let bit = 1u32 << lane;
                match c {
                    CmpOp::Eq => bit,
                    CmpOp::Lt => bit - 1,
                    CmpOp::Le => (bit - 1) | bit,
                    CmpOp::Gt => !((bit - 1) | bit),
                    _ => !(bit - 1),
                }
            }
            Special::ClusterId(x) => blk.cluster.clusterid[d(x)],
            Special::NClusterId(x) => blk.cluster.nclusterid[d(x)],
            Special::ClusterCtaId(x) => blk.cluster.cluster_ctaid[d(x)],
            Special::ClusterNCtaId(x) => blk.cluster.cluster_nctaid[d(x)],
            Special::ClusterCtaRank => blk.cluster.cluster_ctarank,
            Special::ClusterNCtaRank => blk.cluster.cluster_nctarank,
            Special::IsExplicitCluster => blk.cluster.is_explicit_cluster,
            Special::TotalSmemSize => {
                self.env.dynamic_shared_offset + blk.config.dynamic_shared_bytes
            }
            Special::Constant(v) => v,
            Special::SmId | Special::GridId => 0,
            Special::NSmId => 1,
            Special::Clock | Special::Clock64 | Special::GlobalTimer => 0,
        }) as u64
    }

    /// A variable's value as an operand: its address in its state space.
    fn symbol_value(&self, blk: &Block, t: &Thread, sym: Symbol) -> u64 {
        if let Some(off) = self.shared_offset(blk, sym) {
            return off as u64;
        }
        self.symbol_host(blk, t, sym)
    }

    fn shared_offset(&self, blk: &Block, sym: Symbol) -> Option<u32> {
        match sym {
            Symbol::Global(g) => self.env.global_shared_offsets[g],
            Symbol::Local(v) if blk.f.vars[v].space == StateSpace::Shared => {
                Some(if blk.f.vars[v].is_extern {
                    self.env.dynamic_shared_offset
                } else {
                    let fi = self
                        .module
                        .functions
                        .iter()
                        .position(|f| std::ptr::eq(f, blk.f))
                        .expect("own function");
                    self.env.local_shared_offsets[&(fi, v)]
                })
            }
            _ => None,
        }
    }

    fn symbol_host(&self, blk: &Block, t: &Thread, sym: Symbol) -> u64 {
        if let Some(off) = self.shared_offset(blk, sym) {
            return blk.shared as u64 + off as u64;
        }
        match sym {
            Symbol::Global(g) => self.env.global_addresses[g].expect("storage"),
            Symbol::Local(v) => t.local.as_ptr() as u64 + t.local_offsets[&v] as u64,
            Symbol::Param(i) => blk.params.as_ptr() as u64 + blk.f.params[i].offset as u64,
            Symbol::Return(_) => 0,
        }
    }

    fn read(
        &self,
        blk: &Block,
        t: &Thread,
        arg: &Arg,
        ty: PtxType,
    ) -> std::result::Result<u64, String> {
        Ok(match arg {
            Arg::Reg(r) => convert_bits(t.regs[*r as usize], blk.f.regs[*r as usize].ty, ty),
            Arg::Imm(imm) => immediate_bits(*imm, ty) & mask(ty.bits()),
            Arg::Special(s) => convert_bits(self.special(blk, t, *s), PtxType::U32, ty),
            Arg::SymbolAddr(sym, off) => convert_bits(
                self.symbol_value(blk, t, *sym).wrapping_add(*off as u64),
                PtxType::U64,
                ty,
            ),
            Arg::Not(r) => (t.regs[*r as usize] & 1) ^ 1,
            Arg::Vector(v) if v.len() == 1 => self.read(blk, t, &v[0], ty)?,
            _ => return Err("operand form not supported by the interpreter".into()),
        })
    }

    fn write(
        &self,
        blk: &Block,
        t: &mut Thread,
        arg: &Arg,
        v: u64,
        ty: PtxType,
    ) -> std::result::Result<(), String> {
        match arg {
            Arg::Reg(r) => {
                t.regs[*r as usize] = convert_bits(v, ty, blk.f.regs[*r as usize].ty);
                Ok(())
            }
            Arg::Sink => Ok(()),
            Arg::Vector(v1) if v1.len() == 1 => self.write(blk, t, &v1[0], v, ty),
            _ => Err("destination form not supported by the interpreter".into()),
        }
    }

    fn address(
        &self,
        blk: &Block,
        t: &Thread,
        arg: &Arg,
        space: StateSpace,
    ) -> std::result::Result<u64, String> {
        let Arg::Addr { base, offset } = arg else {
            return Err("expected an address".into());
        };
        // Blocks run alone here, without their cluster.
        if space == StateSpace::SharedCluster {
            return Err("not supported by the interpreter (.shared::cluster)".into());
        }
        let window = |v: u64| {
            if space == StateSpace::Shared {
                blk.shared as u64 + (v & 0xFFFF_FFFF)
            } else {
                v
            }
        };
        let base = match base {
            AddrBase::Symbol(s) => self.symbol_host(blk, t, *s),
            AddrBase::Absolute => window(0),
            AddrBase::Reg(r) => window(self.read(blk, t, &Arg::Reg(*r), PtxType::U64)?),
        };
        Ok(base.wrapping_add(*offset as u64))
    }

    // ---- instructions -----------------------------------------------------------------------

    fn exec(
        &self,
        blk: &Block,
        t: &mut Thread,
        inst: &checked::Inst,
    ) -> std::result::Result<(), String> {
        let a = &inst.args;
        let elems = |arg: &Arg| -> Vec<Arg> {
            match arg {
                Arg::Vector(v) => v.clone(),
                other => vec![other.clone()],
            }
        };
        match inst.op {
            Op::Mov(ty) => match (&a[0], &a[1]) {
                (Arg::Vector(d), src) if d.len() > 1 => {
                    let w = ty.bits() / d.len() as u32;
                    let v = self.read(blk, t, src, ty.bits_type())?;
                    for (i, e) in d.iter().enumerate() {
                        self.write(
                            blk,
                            t,
                            e,
                            (v >> (w * i as u32)) & mask(w),
                            PtxType::from_name(&format!("b{w}")).expect("b"),
                        )?;
                    }
                }
                (d, Arg::Vector(s)) if s.len() > 1 => {
                    let w = ty.bits() / s.len() as u32;
                    let et = PtxType::from_name(&format!("b{w}")).expect("b");
                    let mut v = 0u64;
                    for (i, e) in s.iter().enumerate() {
                        v |= self.read(blk, t, e, et)? << (w * i as u32);
                    }
                    self.write(blk, t, d, v, ty.bits_type())?;
                }
                (d, s) => {
                    let v = self.read(blk, t, s, ty)?;
                    self.write(blk, t, d, v, ty)?;
                }
            },
            Op::MovVec { ty, .. } => {
                let values = elems(&a[1])
                    .iter()
                    .map(|s| self.read(blk, t, s, ty))
                    .collect::<Result<Vec<_>, _>>()?;
                for (d, v) in elems(&a[0]).iter().zip(values) {
                    self.write(blk, t, d, v, ty)?;
                }
            }
            Op::Selp(ty) => {
                let c = self.read(blk, t, &a[3], PtxType::Pred)?;
                let v = self.read(blk, t, if c & 1 == 1 { &a[1] } else { &a[2] }, ty)?;
                self.write(blk, t, &a[0], v, ty)?;
            }
            Op::Ld { space, ty, .. } => {
                let addr = self.address(blk, t, &a[1], space)?;
                for (i, d) in elems(&a[0]).iter().enumerate() {
                    let p = addr + (i as u32 * ty.size()) as u64;
                    let mut buf = [0u8; 8];
                    // SAFETY: the kernel's address, as the JIT would dereference it.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            p as *const u8,
                            buf.as_mut_ptr(),
                            ty.size() as usize,
                        )
                    };
                    self.write(blk, t, d, u64::from_le_bytes(buf), ty)?;
                }
            }
            Op::St { space, ty, .. } => {
                let addr = self.address(blk, t, &a[0], space)?;
                for (i, s) in elems(&a[1]).iter().enumerate() {
                    let v = self.read(blk, t, s, ty)?.to_le_bytes();
                    let p = addr + (i as u32 * ty.size()) as u64;
                    // SAFETY: as for loads.
                    unsafe {
                        std::ptr::copy_nonoverlapping(v.as_ptr(), p as *mut u8, ty.size() as usize)
                    };
                }
            }
            Op::Cvta {
                to_generic,
                space,
                ty,
            } => {
                let v = self.read(blk, t, &a[1], PtxType::U64)?;
                let r = match (space, to_generic) {
                    (StateSpace::SharedCluster, _) => {
                        return Err("not supported by the interpreter (.shared::cluster)".into());
                    }
                    (StateSpace::Shared, true) => blk.shared as u64 + (v & 0xFFFF_FFFF),
                    (StateSpace::Shared, false) => v.wrapping_sub(blk.shared as u64),
                    _ => v,
                };
                self.write(blk, t, &a[0], r, ty)?;
            }
            Op::Int { op, ty } => self.int(blk, t, op, ty, a)?,
            Op::Float { op, ty, mods } if ty.is_half() => self.half(blk, t, op, ty, mods, a)?,
            Op::Float { op, ty, mods } => self.float(blk, t, op, ty, mods, a)?,
            Op::Setp {
                cmp,
                bool_op,
                ty,
                ftz,
            } => {
                let r = self.compare_lanes(blk, t, cmp, ty, ftz, a)?;
                let c = self.bool_operand(blk, t, bool_op, a)?;
                let (p, q) = a[0].split_pair();
                let (pv, qv) = if r.len() == 2 {
                    (r[0], r[1])
                } else {
                    (r[0], !r[0])
                };
                self.write(
                    blk,
                    t,
                    p,
                    half_ops::bool_op(bool_op, pv, c) as u64,
                    PtxType::Pred,
                )?;
                if let Some(q) = q {
                    self.write(
                        blk,
                        t,
                        q,
                        half_ops::bool_op(bool_op, qv, c) as u64,
                        PtxType::Pred,
                    )?;
                }
            }
            Op::Set {
                cmp,
                bool_op,
                dst,
                src,
                ftz,
            } => {
                let r = self.compare_lanes(blk, t, cmp, src, ftz, a)?;
                let c = self.bool_operand(blk, t, bool_op, a)?;
                let on: u64 = match dst {
                    PtxType::F16 | PtxType::F16x2 => F16.one() as u64,
                    PtxType::BF16 | PtxType::BF16x2 => BF16.one() as u64,
                    PtxType::F32 => 1.0f32.to_bits() as u64,
                    _ if r.len() == 2 || dst.size() == 2 => 0xFFFF,
                    _ => 0xFFFF_FFFF,
                };
                let mut v = 0u64;
                for (i, x) in r.iter().enumerate() {
                    if half_ops::bool_op(bool_op, *x, c) {
                        v |= on << (16 * i);
                    }
                }
                self.write(blk, t, &a[0], v, dst.bits_type())?;
            }
            Op::Cvt { dst, src, mods } => self.cvt(blk, t, dst, src, mods, a)?,
            Op::CvtNarrow(form) => self.cvt_narrow(blk, t, form, a)?,
            Op::Fence | Op::GridDepControl => {}
            Op::CreatePolicy => self.write(blk, t, &a[0], 0, PtxType::B64)?,
            Op::Video(v) => {
                let mut x = [0u32; 3];
                for (k, arg) in a[1..].iter().enumerate() {
                    x[k] = self.read(blk, t, arg, PtxType::B32)? as u32;
                }
                let d = crate::semantics::video::video(&v, x[0], x[1], x[2]);
                self.write(blk, t, &a[0], d as u64, PtxType::B32)?;
            }
            _ => return Err("not supported by the interpreter".into()),
        }
        Ok(())
    }

    /// The predicate `{!}c` a `.BoolOp` combines with (false when there is none).
    fn bool_operand(
        &self,
        blk: &Block,
        t: &Thread,
        bool_op: Option<BoolOp>,
        a: &[Arg],
    ) -> std::result::Result<bool, String> {
        match bool_op {
            Some(_) => Ok(self.read(blk, t, &a[3], PtxType::Pred)? & 1 == 1),
            None => Ok(false),
        }
    }

    fn compare_lanes(
        &self,
        blk: &Block,
        t: &Thread,
        cmp: CmpOp,
        ty: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> std::result::Result<Vec<bool>, String> {
        let x = self.read(blk, t, &a[1], ty)?;
        let y = self.read(blk, t, &a[2], ty)?;
        if ty.is_half() {
            let (fmt, lanes) = half_format(ty);
            return Ok((0..lanes)
                .map(|l| {
                    half_ops::compare_half(
                        fmt,
                        cmp,
                        ftz,
                        (x >> (16 * l)) as u16,
                        (y >> (16 * l)) as u16,
                    )
                })
                .collect());
        }
        if ty.is_float() {
            let (fx, fy) = self.floats(ty, x, y, ftz);
            return Ok(vec![half_ops::compare(cmp, fx, fy)]);
        }
        let bits = ty.bits();
        let (sx, sy) = (sign_extend(x, bits) as i64, sign_extend(y, bits) as i64);
        let signed = ty.is_signed();
        Ok(vec![match cmp {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt if signed => sx < sy,
            CmpOp::Le if signed => sx <= sy,
            CmpOp::Gt if signed => sx > sy,
            CmpOp::Ge if signed => sx >= sy,
            CmpOp::Lt | CmpOp::Lo => x < y,
            CmpOp::Le | CmpOp::Ls => x <= y,
            CmpOp::Gt | CmpOp::Hi => x > y,
            CmpOp::Ge | CmpOp::Hs => x >= y,
            _ => return Err("comparison not defined on integers".into()),
        }])
    }

    /// Two float operands as f64 (f32 flushed first with `.ftz`).
    fn floats(&self, ty: PtxType, x: u64, y: u64, ftz: bool) -> (f64, f64) {
        if ty == PtxType::F32 {
            let f = |v: u64| {
                let v = f32::from_bits(v as u32);
                (if ftz { fl::flush_f32(v) } else { v }) as f64
            };
            (f(x), f(y))
        } else {
            let f = |v: u64| {
                let v = f64::from_bits(v);
                if ftz { fl::flush_f64(v) } else { v }
            };
            (f(x), f(y))
        }
    }

    fn int(
        &self,
        blk: &Block,
        t: &mut Thread,
        op: IntOp,
        ty: PtxType,
        a: &[Arg],
    ) -> std::result::Result<(), String> {
        let bits = ty.bits();
        let m = mask(bits);
        let signed = ty.is_signed();
        let sx = |v: u64| sign_extend(v, bits) as i64;
        let x = self.read(blk, t, &a[1], ty)?;
        let wide = |ty: PtxType| match ty {
            PtxType::S16 => PtxType::S32,
            PtxType::U16 => PtxType::U32,
            PtxType::S32 => PtxType::S64,
            _ => PtxType::U64,
        };
        let src = |k: usize| self.read(blk, t, &a[k], ty);
        let (r, rty) = match op {
            IntOp::AddCarry(c) | IntOp::SubCarry(c) | IntOp::MadCarry { carry: c, .. } => {
                let flag = a.last().expect("the checker adds the carry flag");
                let cf = c.carry_in && self.read(blk, t, flag, PtxType::U32)? & 1 == 1;
                let (r, out) = match op {
                    IntOp::AddCarry(_) => si::add_carry(bits, x, src(2)?, cf),
                    IntOp::SubCarry(c) => si::sub_carry(bits, x, src(2)?, cf || !c.carry_in),
                    IntOp::MadCarry { hi, .. } => {
                        let p = si::mul_half(bits, signed, hi, x, src(2)?);
                        si::add_carry(bits, p, src(3)?, cf)
                    }
                    _ => unreachable!(),
                };
                if c.carry_out {
                    self.write(blk, t, flag, out as u64, PtxType::U32)?;
                }
                (r, ty)
            }
            IntOp::Mul24 { hi } | IntOp::Mad24 { hi } => {
                let p = si::mul24(signed, hi, x as u32, src(2)? as u32);
                let c = if matches!(op, IntOp::Mad24 { .. }) {
                    src(3)? as u32
                } else {
                    0
                };
                (p.wrapping_add(c) as u64, ty)
            }
            IntOp::Sad => (si::sad(bits, signed, x, src(2)?, src(3)?), ty),
            IntOp::Bfind { shiftamt } => {
                (si::bfind(bits, signed, shiftamt, x) as u64, PtxType::U32)
            }
            IntOp::Bmsk { clamp } => (si::bmsk(clamp, x as u32, src(2)? as u32) as u64, ty),
            IntOp::Dp4a { a_signed, b_signed } => {
                let r = si::dp4a(a_signed, b_signed, x as u32, src(2)? as u32, src(3)? as u32);
                (r as u64, ty)
            }
            IntOp::Dp2a {
                hi,
                a_signed,
                b_signed,
            } => {
                let (y, c) = (src(2)? as u32, src(3)? as u32);
                (si::dp2a(hi, a_signed, b_signed, x as u32, y, c) as u64, ty)
            }
            IntOp::Fns => {
                let offset = self.read(blk, t, &a[3], PtxType::S32)? as i32;
                (si::fns(x as u32, src(2)? as u32, offset) as u64, ty)
            }
            IntOp::Relu { max } => {
                let (x, y) = (sx(x), sx(src(2)?));
                let r = if max { x.max(y) } else { x.min(y) };
                (r.max(0) as u64, ty)
            }
            IntOp::Halves { op, signed, relu } => {
                let r = si::halves(op, signed, relu, x as u32, src(2)? as u32);
                (r as u64, ty)
            }
            IntOp::Lop3 { bool_op } => {
                let Arg::Imm(Immediate::Int(lut)) = a[4] else {
                    return Err("lop3's immLut must be an integer constant".into());
                };
                let d = si::lop3(lut as u8, x as u32, src(2)? as u32, src(3)? as u32);
                let (d_dst, p_dst) = a[0].split_pair();
                if let Some(p_dst) = p_dst {
                    let q = self.read(blk, t, &a[5], PtxType::Pred)? & 1 == 1;
                    let p = half_ops::bool_op(bool_op, d != 0, q);
                    self.write(blk, t, p_dst, p as u64, PtxType::Pred)?;
                }
                self.write(blk, t, d_dst, d as u64, PtxType::B32)?;
                return Ok(());
            }
            IntOp::PrmtMode(mode) => {
                let r = si::prmt_mode(mode, x as u32, src(2)? as u32, src(3)? as u32);
                (r as u64, ty)
            }
            IntOp::Mul(MulMode::Wide) | IntOp::Mad(MulMode::Wide) => {
                let y = self.read(blk, t, &a[2], ty)?;
                let p = if signed {
                    (sx(x).wrapping_mul(sx(y))) as u64
                } else {
                    x.wrapping_mul(y)
                };
                let p = if matches!(op, IntOp::Mad(_)) {
                    p.wrapping_add(self.read(blk, t, &a[3], wide(ty))?)
                } else {
                    p
                };
                (p, wide(ty))
            }
            IntOp::Abs => ((sx(x).wrapping_abs()) as u64 & m, ty),
            IntOp::Neg => ((x as i64).wrapping_neg() as u64 & m, ty),
            IntOp::Not if ty == PtxType::Pred => ((x & 1) ^ 1, ty),
            IntOp::Not => (!x & m, ty),
            IntOp::CNot => ((x == 0) as u64, ty),
            IntOp::Popc => (x.count_ones() as u64, PtxType::U32),
            IntOp::Clz => ((x.leading_zeros() - (64 - bits)) as u64, PtxType::U32),
            IntOp::Brev => (x.reverse_bits() >> (64 - bits), ty),
            IntOp::Shl | IntOp::Shr => {
                let n = self.read(blk, t, &a[2], PtxType::U32)?;
                let r = match (op, signed) {
                    (IntOp::Shl, _) => {
                        if n >= bits as u64 {
                            0
                        } else {
                            (x << n) & m
                        }
                    }
                    (_, true) => (sx(x) >> n.min(bits as u64 - 1)) as u64 & m,
                    _ => {
                        if n >= bits as u64 {
                            0
                        } else {
                            x >> n
                        }
                    }
                };
                (r, ty)
            }
            _ => {
                let y = self.read(blk, t, &a[2], ty)?;
                let r = match op {
                    IntOp::Add { sat: true } => {
                        (sx(x) + sx(y)).clamp(i32::MIN as i64, i32::MAX as i64) as u64
                    }
                    IntOp::Sub { sat: true } => {
                        (sx(x) - sx(y)).clamp(i32::MIN as i64, i32::MAX as i64) as u64
                    }
                    IntOp::Add { .. } => x.wrapping_add(y),
                    IntOp::Sub { .. } => x.wrapping_sub(y),
                    IntOp::Mul(MulMode::Lo) => x.wrapping_mul(y),
                    IntOp::Mul(MulMode::Hi) | IntOp::Mad(MulMode::Hi) => {
                        let hi = si::mul_half(bits, signed, true, x, y);
                        if op == IntOp::Mad(MulMode::Hi) {
                            hi.wrapping_add(self.read(blk, t, &a[3], ty)?)
                        } else {
                            hi
                        }
                    }
                    IntOp::Mad(_) => x
                        .wrapping_mul(y)
                        .wrapping_add(self.read(blk, t, &a[3], ty)?),
                    IntOp::Div | IntOp::Rem => {
                        if y == 0 {
                            if op == IntOp::Div { m } else { x }
                        } else if signed {
                            let (a1, b1) = (sx(x), sx(y));
                            if op == IntOp::Div {
                                a1.wrapping_div(b1) as u64
                            } else {
                                a1.wrapping_rem(b1) as u64
                            }
                        } else if op == IntOp::Div {
                            x / y
                        } else {
                            x % y
                        }
                    }
                    IntOp::Min if signed => sx(x).min(sx(y)) as u64,
                    IntOp::Max if signed => sx(x).max(sx(y)) as u64,
                    IntOp::Min => x.min(y),
                    IntOp::Max => x.max(y),
                    IntOp::And => x & y,
                    IntOp::Or => x | y,
                    IntOp::Xor => x ^ y,
                    _ => return Err("not supported by the interpreter".into()),
                };
                (r & m, ty)
            }
        };
        self.write(blk, t, &a[0], r, rty)
    }

    fn float(
        &self,
        blk: &Block,
        t: &mut Thread,
        op: FloatOp,
        ty: PtxType,
        mods: FloatMods,
        a: &[Arg],
    ) -> std::result::Result<(), String> {
        let n = op.sources();
        let mut x = [0f64; 3];
        for (i, arg) in a[1..=n].iter().enumerate() {
            let v = self.read(blk, t, arg, ty)?;
            x[i] = self.floats(ty, v, v, mods.ftz).0;
        }
        let f32op = ty == PtxType::F32;
        // f32 arithmetic rounds in f32: the same operations on f32 values.
        macro_rules! compute {
            ($y:expr, $min_max:path) => {{
                let y = $y;
                match op {
                    FloatOp::Add => y[0] + y[1],
                    FloatOp::Sub => y[0] - y[1],
                    FloatOp::Mul => y[0] * y[1],
                    FloatOp::Fma => y[0].mul_add(y[1], y[2]),
                    FloatOp::Div => y[0] / y[1],
                    FloatOp::Sqrt => y[0].sqrt(),
                    FloatOp::Rcp => 1.0 / y[0],
                    FloatOp::Rsqrt => 1.0 / y[0].sqrt(),
                    FloatOp::Neg => -y[0],
                    FloatOp::Abs => y[0].abs(),
                    FloatOp::Min | FloatOp::Max => $min_max(op == FloatOp::Max, y[0], y[1]),
                    FloatOp::Ex2 => y[0].exp2(),
                    FloatOp::Lg2 => y[0].log2(),
                    FloatOp::Sin => y[0].sin(),
                    FloatOp::Cos => y[0].cos(),
                    FloatOp::Tanh => y[0].tanh(),
                    FloatOp::Copysign => y[1].copysign(y[0]),
                }
            }};
        }
        let directed = mods
            .rnd
            .filter(|&r| r != Rounding::Rn)
            .zip(directed::Arith::of(op));
        let r: f64 = if let Some((rnd, arith)) = directed {
            if f32op {
                let [a, b, c] = x.map(|v| v as f32);
                directed::f32_op(arith, rnd, a, b, c) as f64
            } else {
                directed::f64_op(arith, rnd, x[0], x[1], x[2])
            }
        } else if f32op && let Some(r) = mufu::of(op, mods, x.map(|v| v as f32)) {
            r as f64
        } else if f32op {
            compute!(x.map(|v| v as f32), fl::min_max_f32) as f64
        } else if matches!(
            op,
            FloatOp::Ex2 | FloatOp::Lg2 | FloatOp::Sin | FloatOp::Cos | FloatOp::Tanh
        ) {
            return Err("not defined on .f64".into());
        } else {
            compute!(x, fl::min_max_f64)
        };
        let mut r = if mods.sat && !r.is_nan() {
            fl::saturate(r)
        } else if mods.sat {
            0.0
        } else {
            r
        };
        let bits = if f32op {
            let mut v = r as f32;
            if mods.ftz {
                v = match directed::Arith::of(op) {
                    Some(arith) => {
                        let rnd = mods.rnd.unwrap_or(Rounding::Rn);
                        fl::flush_result_f32(arith, rnd, x.map(|v| v as f32), v)
                    }
                    None => fl::flush_f32(v),
                };
            }
            if !op.is_sign_operation() {
                v = fl::canonical_f32(v);
            }
            v.to_bits() as u64
        } else {
            if mods.ftz {
                r = fl::flush_f64(r);
            }
            r.to_bits()
        };
        self.write(blk, t, &a[0], bits, ty)
    }

    fn half(
        &self,
        blk: &Block,
        t: &mut Thread,
        op: FloatOp,
        ty: PtxType,
        mods: FloatMods,
        a: &[Arg],
    ) -> std::result::Result<(), String> {
        let (fmt, lanes) = half_format(ty);
        let n = op.sources();
        let mut src = [0u64; 3];
        for (i, arg) in a[1..=n].iter().enumerate() {
            src[i] = self.read(blk, t, arg, ty)?;
        }
        let mut r = 0u64;
        for l in 0..lanes {
            let x: Vec<u16> = src.iter().map(|v| (v >> (16 * l)) as u16).collect();
            let v = match op {
                FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma => {
                    half_ops::arith(fmt, op, mods, x[0], x[1], x[2])
                }
                FloatOp::Neg | FloatOp::Abs => {
                    half_ops::neg_abs(fmt, op == FloatOp::Abs, mods.ftz, x[0])
                }
                FloatOp::Min | FloatOp::Max => {
                    half_ops::min_max(fmt, op == FloatOp::Max, mods, x[0], x[1])
                }
                FloatOp::Tanh => half_approx::tanh_approx(fmt, x[0]),
                FloatOp::Ex2 => half_approx::ex2_approx(fmt, x[0]),
                _ => return Err("not defined on half types".into()),
            };
            r |= (v as u64) << (16 * l);
        }
        self.write(blk, t, &a[0], r, ty)
    }

    /// `cvt` to and from the narrow formats, per `semantics::minifloat`.
    fn cvt_narrow(
        &self,
        blk: &Block,
        t: &mut Thread,
        form: NarrowCvt,
        a: &[Arg],
    ) -> std::result::Result<(), String> {
        // The sources of a pair conversion as f64, upper slot first.
        let pair = |src: PtxType, t: &Thread| -> std::result::Result<[f64; 2], String> {
            if src == PtxType::F32 {
                let f = |k: usize| -> std::result::Result<f64, String> {
                    Ok(f32::from_bits(self.read(blk, t, &a[k], PtxType::B32)? as u32) as f64)
                };
                return Ok([f(1)?, f(2)?]);
            }
            let fmt = if src == PtxType::F16x2 { F16 } else { BF16 };
            let w = self.read(blk, t, &a[1], PtxType::B32)?;
            Ok([fmt.to_f64((w >> 16) as u16), fmt.to_f64(w as u16)])
        };
        let (r, ty) = match form {
            NarrowCvt::ToMini {
                fmt,
                src,
                rnd,
                relu,
            } => {
                let [hi, lo] = pair(src, t)?;
                let r = (fmt.round(hi, rnd, relu) as u64) << fmt.slot_bits()
                    | fmt.round(lo, rnd, relu) as u64;
                (r, PtxType::B16)
            }
            NarrowCvt::Stochastic {
                dst,
                relu,
                satfinite,
            } => {
                let w = |k: usize| -> std::result::Result<u32, String> {
                    Ok(self.read(blk, t, &a[k], PtxType::B32)? as u32)
                };
                let bf16 = dst == PtxType::BF16x2;
                let r = half_ops::stochastic_pair(w(1)?, w(2)?, w(3)?, bf16, relu, satfinite);
                (r as u64, dst)
            }
            NarrowCvt::FromMini { fmt, dst, relu } => {
                let half = if dst == PtxType::F16x2 { F16 } else { BF16 };
                let w = self.read(blk, t, &a[1], PtxType::B16)?;
                let widen = |s: u64| {
                    let bits = (s & ((1 << fmt.width()) - 1)) as u8;
                    let h = half.round(fmt.to_f64(bits), Rounding::Rn);
                    (if relu { half.relu(h) } else { h }) as u64
                };
                (widen(w >> fmt.slot_bits()) << 16 | widen(w), dst)
            }
            NarrowCvt::ToUe8m0 {
                src,
                rnd,
                satfinite,
            } => {
                let [hi, lo] = pair(src, t)?;
                let r = |x| ue8m0::round(x, rnd, satfinite) as u64;
                (r(hi) << 8 | r(lo), PtxType::B16)
            }
            NarrowCvt::FromUe8m0 => {
                let w = self.read(blk, t, &a[1], PtxType::B16)?;
                let b = |c: u64| BF16.round(ue8m0::to_f64(c as u8), Rounding::Rn) as u64;
                (b(w >> 8) << 16 | b(w & 0xFF), PtxType::BF16x2)
            }
            NarrowCvt::ToTf32 {
                rnd,
                satfinite,
                relu,
            } => {
                let f = self.read(blk, t, &a[1], PtxType::B32)? as u32;
                (tf32::round(f, rnd, satfinite, relu) as u64, PtxType::B32)
            }
            NarrowCvt::PackSat { bits, signed } => {
                let c = if bits == 16 {
                    0
                } else {
                    self.read(blk, t, &a[3], PtxType::B32)? as u32
                };
                let x = self.read(blk, t, &a[1], PtxType::S32)? as i32;
                let y = self.read(blk, t, &a[2], PtxType::S32)? as i32;
                (si::pack_sat(bits, signed, x, y, c) as u64, PtxType::B32)
            }
        };
        self.write(blk, t, &a[0], r, ty)
    }

    fn cvt(
        &self,
        blk: &Block,
        t: &mut Thread,
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
        a: &[Arg],
    ) -> std::result::Result<(), String> {
        let mode = mods.rnd.unwrap_or(if dst.is_int() && !src.is_int() {
            Rounding::Rz
        } else {
            Rounding::Rn
        });
        // The exact value of the source as f64 (or the integer itself).
        let exact = |this: &Self, t: &Thread, arg: &Arg| -> std::result::Result<f64, String> {
            let v = this.read(blk, t, arg, src)?;
            Ok(match src {
                PtxType::F32 => {
                    let f = f32::from_bits(v as u32);
                    (if mods.ftz { fl::flush_f32(f) } else { f }) as f64
                }
                PtxType::F64 => f64::from_bits(v),
                t if t.is_half() => half_format(t).0.to_f64(v as u16),
                t if t.is_signed() => sign_extend(v, t.bits()) as i64 as f64,
                _ => v as f64,
            })
        };
        let to_half = |fmt: HalfFormat, x: f64| -> u64 {
            let x = if mods.sat {
                if x.is_nan() { 0.0 } else { fl::saturate(x) }
            } else {
                x
            };
            half_ops::convert(fmt, x, mode, mods.relu, mods.satfinite) as u64
        };
        let r = if src.is_half()
            && matches!(dst, PtxType::F32 | PtxType::F64)
            && !mods.integral
            && !mods.sat
        {
            // Widening is exact; NaNs keep their payload.
            let (fmt, _) = half_format(src);
            let h = self.read(blk, t, &a[1], src)? as u16;
            if dst == PtxType::F32 {
                let v = f32::from_bits(fmt.to_f32_bits(h));
                (if mods.ftz { fl::flush_f32(v) } else { v }).to_bits() as u64
            } else {
                fmt.to_f64_bits(h)
            }
        } else if matches!(dst, PtxType::F16x2 | PtxType::BF16x2) {
            let (fmt, _) = half_format(dst);
            let hi = to_half(fmt, exact(self, t, &a[1])?);
            let lo = to_half(fmt, exact(self, t, &a[2])?);
            lo | hi << 16
        } else if dst.is_int() && src.is_int() {
            let v = self.read(blk, t, &a[1], src)?;
            let v = convert_bits(
                v,
                src,
                if src.is_signed() {
                    PtxType::S64
                } else {
                    PtxType::U64
                },
            );
            if mods.sat {
                let (lo, hi) = if dst.is_signed() {
                    (
                        -(1i128 << (dst.bits() - 1)),
                        (1i128 << (dst.bits() - 1)) - 1,
                    )
                } else {
                    (0, (1i128 << dst.bits()) - 1)
                };
                let val = if src.is_signed() {
                    v as i64 as i128
                } else {
                    v as i128
                };
                val.clamp(lo, hi) as u64 & mask(dst.bits())
            } else {
                v & mask(dst.bits())
            }
        } else if !mods.integral
            && !matches!(mode, Rounding::Rn | Rounding::Rna)
            && matches!(dst, PtxType::F32 | PtxType::F64)
            && (src.is_int() || src == PtxType::F64 && dst == PtxType::F32)
        {
            // Rounded in a direction: exact integer arithmetic (`semantics::directed`).
            let raw = self.read(blk, t, &a[1], src)?;
            let wide =
                |signed| convert_bits(raw, src, if signed { PtxType::S64 } else { PtxType::U64 });
            let x = match (src, dst) {
                (PtxType::F64, _) => directed::f64_to_f32(f64::from_bits(raw), mode) as f64,
                (_, PtxType::F32) => {
                    directed::int_to_f32(wide(src.is_signed()), src.is_signed(), mode) as f64
                }
                _ => directed::int_to_f64(wide(src.is_signed()), src.is_signed(), mode),
            };
            let x = match (mods.sat, x.is_nan()) {
                (true, true) => 0.0,
                (true, false) => fl::saturate(x),
                _ => x,
            };
            if dst == PtxType::F32 {
                let v = x as f32; // exact: already an f32
                let v = match (mods.ftz, src) {
                    (true, PtxType::F64) => fl::flush_narrowed_f32(f64::from_bits(raw), mode, v),
                    (true, _) => fl::flush_f32(v),
                    _ => v,
                };
                fl::canonical_f32(v).to_bits() as u64
            } else {
                x.to_bits()
            }
        } else if src.is_int() && (src.size() == 8) && dst.is_half() {
            return Err(
                "cvt from 64-bit integers to halves is not supported by the interpreter".into(),
            );
        } else {
            let x = exact(self, t, &a[1])?;
            let rounded = |x: f64| match mode {
                Rounding::Rn => x.round_ties_even(),
                Rounding::Rz => x.trunc(),
                Rounding::Rm => x.floor(),
                Rounding::Rp => x.ceil(),
                Rounding::Rna => x.round(),
            };
            if dst.is_int() {
                let r = rounded(x);
                let (lo, hi) = if dst.is_signed() {
                    (
                        -(2f64.powi(dst.bits() as i32 - 1)),
                        2f64.powi(dst.bits() as i32 - 1) - 1.0,
                    )
                } else {
                    (0.0, 2f64.powi(dst.bits() as i32) - 1.0)
                };
                if r.is_nan() {
                    0
                } else {
                    (r.clamp(lo, hi) as i128 as u64) & mask(dst.bits())
                }
            } else if dst.is_half() {
                let (fmt, _) = half_format(dst);
                let x = if mods.integral { rounded(x) } else { x };
                if mods.integral {
                    let x = if mods.sat { fl::saturate(x) } else { x };
                    fmt.round(x, Rounding::Rn) as u64
                } else {
                    to_half(fmt, x)
                }
            } else {
                let x = if mods.integral { rounded(x) } else { x };
                let x = if mods.sat {
                    if x.is_nan() { 0.0 } else { fl::saturate(x) }
                } else {
                    x
                };
                if dst == PtxType::F32 {
                    let mut v = x as f32;
                    if mods.ftz && src == PtxType::F64 {
                        v = fl::flush_narrowed_f32(x, Rounding::Rn, v);
                    } else if mods.ftz {
                        v = fl::flush_f32(v);
                    }
                    if src == PtxType::F64 || src == dst {
                        v = fl::canonical_f32(v);
                    }
                    v.to_bits() as u64
                } else {
                    x.to_bits()
                }
            }
        };
        self.write(blk, t, &a[0], r, dst)
    }
}
