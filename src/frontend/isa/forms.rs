//! The forms ptxjit runs, one row per PTX ISA syntax line (see the module above for the
//! notation). A form absent here is an `unsupported instruction` diagnostic naming the closest
//! row; a row's lowering may still refuse a combination its comment names.

use super::{Form, Match};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::*;
use crate::semantics::minifloat::Mini;
use crate::semantics::video::{Part, Second, Shape, VIDEO_CMPS, Video, VideoOp};
use crate::types::PtxType;

macro_rules! forms {
    ($( $syntax:literal, $sets:expr, $section:literal, $build:expr; )*) => {
        &[$( Form { syntax: $syntax, sets: $sets, section: $section, build: $build }, )*]
    };
}

/// The `.shape` sets of `wgmma.mma_async`'s lines (M is 64; K is 32 bytes of the inputs).
macro_rules! wgmma_shapes {
    (k16) => {
        ".shape = { .m64n8k16, .m64n16k16, .m64n24k16, .m64n32k16, .m64n40k16, .m64n48k16,
        .m64n56k16, .m64n64k16, .m64n72k16, .m64n80k16, .m64n88k16, .m64n96k16,
        .m64n104k16, .m64n112k16, .m64n120k16, .m64n128k16, .m64n136k16, .m64n144k16,
        .m64n152k16, .m64n160k16, .m64n168k16, .m64n176k16, .m64n184k16, .m64n192k16,
        .m64n200k16, .m64n208k16, .m64n216k16, .m64n224k16, .m64n232k16, .m64n240k16,
        .m64n248k16, .m64n256k16 }"
    };
    (k8) => {
        ".shape = { .m64n8k8, .m64n16k8, .m64n24k8, .m64n32k8, .m64n40k8, .m64n48k8, .m64n56k8,
        .m64n64k8, .m64n72k8, .m64n80k8, .m64n88k8, .m64n96k8, .m64n104k8, .m64n112k8,
        .m64n120k8, .m64n128k8, .m64n136k8, .m64n144k8, .m64n152k8, .m64n160k8,
        .m64n168k8, .m64n176k8, .m64n184k8, .m64n192k8, .m64n200k8, .m64n208k8,
        .m64n216k8, .m64n224k8, .m64n232k8, .m64n240k8, .m64n248k8, .m64n256k8 }"
    };
    (k32) => {
        ".shape = { .m64n8k32, .m64n16k32, .m64n24k32, .m64n32k32, .m64n40k32, .m64n48k32,
        .m64n56k32, .m64n64k32, .m64n72k32, .m64n80k32, .m64n88k32, .m64n96k32,
        .m64n104k32, .m64n112k32, .m64n120k32, .m64n128k32, .m64n136k32, .m64n144k32,
        .m64n152k32, .m64n160k32, .m64n168k32, .m64n176k32, .m64n184k32, .m64n192k32,
        .m64n200k32, .m64n208k32, .m64n216k32, .m64n224k32, .m64n232k32, .m64n240k32,
        .m64n248k32, .m64n256k32 }"
    };
    (k32_int) => {
        ".shape = { .m64n8k32, .m64n16k32, .m64n24k32, .m64n32k32, .m64n48k32, .m64n64k32,
        .m64n80k32, .m64n96k32, .m64n112k32, .m64n128k32, .m64n144k32, .m64n160k32,
        .m64n176k32, .m64n192k32, .m64n208k32, .m64n224k32, .m64n240k32, .m64n256k32 }"
    };
}

pub const FORMS: &[Form] = forms![
    // ---- Integer arithmetic -------------------------------------------------------------
    "add.type d, a, b", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: add", |m| int(IntOp::Add { sat: m.has(".sat") }, m);
    "add{.sat}.s32 d, a, b", "",
        "Integer Arithmetic Instructions: add", |m| int_s32(IntOp::Add { sat: m.has(".sat") });
    "sub.type d, a, b", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: sub", |m| int(IntOp::Sub { sat: false }, m);
    "sub{.sat}.s32 d, a, b", "",
        "Integer Arithmetic Instructions: sub", |m| int_s32(IntOp::Sub { sat: m.has(".sat") });
    "mul.mode.type d, a, b", ".mode = { .hi, .lo }; .type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: mul", |m| int(IntOp::Mul(mul_mode(m)), m);
    "mul.wide.type d, a, b", ".type = { .u16, .u32, .s16, .s32 }",
        "Integer Arithmetic Instructions: mul", |m| int(IntOp::Mul(MulMode::Wide), m);
    "mad.mode.type d, a, b, c", ".mode = { .hi, .lo }; .type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: mad", |m| int(IntOp::Mad(mul_mode(m)), m);
    "mad.wide.type d, a, b, c", ".type = { .u16, .u32, .s16, .s32 }",
        "Integer Arithmetic Instructions: mad", |m| int(IntOp::Mad(MulMode::Wide), m);
    "div.type d, a, b", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: div", |m| int(IntOp::Div, m);
    "rem.type d, a, b", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: rem", |m| int(IntOp::Rem, m);
    "abs.type d, a", ".type = { .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: abs", |m| int(IntOp::Abs, m);
    "neg.type d, a", ".type = { .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: neg", |m| int(IntOp::Neg, m);
    "min.type d, a, b", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: min", |m| int(IntOp::Min, m);
    "min.relu.s32 d, a, b", "",
        "Integer Arithmetic Instructions: min", |_| int_s32(IntOp::Relu { max: false });
    "max.type d, a, b", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: max", |m| int(IntOp::Max, m);
    "max.relu.s32 d, a, b", "",
        "Integer Arithmetic Instructions: max", |_| int_s32(IntOp::Relu { max: true });
    // The packed forms: `d`, `a`, `b` are .b32 words of two halves.
    "add.type d, a, b", ".type = { .u16x2, .s16x2 }",
        "Integer Arithmetic Instructions: add", |m| halves(HalvesOp::Add, m);
    "sub.type d, a, b", ".type = { .u16x2, .s16x2 }",
        "Integer Arithmetic Instructions: sub", |m| halves(HalvesOp::Sub, m);
    "min.u16x2 d, a, b", "",
        "Integer Arithmetic Instructions: min", |m| halves(HalvesOp::Min, m);
    "min{.relu}.s16x2 d, a, b", "",
        "Integer Arithmetic Instructions: min", |m| halves(HalvesOp::Min, m);
    "max.u16x2 d, a, b", "",
        "Integer Arithmetic Instructions: max", |m| halves(HalvesOp::Max, m);
    "max{.relu}.s16x2 d, a, b", "",
        "Integer Arithmetic Instructions: max", |m| halves(HalvesOp::Max, m);
    "popc.type d, a", ".type = { .b32, .b64 }",
        "Integer Arithmetic Instructions: popc", |m| int(IntOp::Popc, m);
    "clz.type d, a", ".type = { .b32, .b64 }",
        "Integer Arithmetic Instructions: clz", |m| int(IntOp::Clz, m);
    "brev.type d, a", ".type = { .b32, .b64 }",
        "Integer Arithmetic Instructions: brev", |m| int(IntOp::Brev, m);
    "bfe.type d, a, b, c", ".type = { .u32, .u64, .s32, .s64 }",
        "Integer Arithmetic Instructions: bfe", |m| int(IntOp::Bfe, m);
    "bfi.type f, a, b, c, d", ".type = { .b32, .b64 }",
        "Integer Arithmetic Instructions: bfi", |m| int(IntOp::Bfi, m);
    "mul24.mode.type d, a, b", ".mode = { .hi, .lo }; .type = { .u32, .s32 }",
        "Integer Arithmetic Instructions: mul24", |m| int(IntOp::Mul24 { hi: m.word(".mode") == Some("hi") }, m);
    "mad24.mode.type d, a, b, c", ".mode = { .hi, .lo }; .type = { .u32, .s32 }",
        "Integer Arithmetic Instructions: mad24", |m| int(IntOp::Mad24 { hi: m.word(".mode") == Some("hi") }, m);
    "sad.type d, a, b, c", ".type = { .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Integer Arithmetic Instructions: sad", |m| int(IntOp::Sad, m);
    "bfind{.shiftamt}.type d, a", ".type = { .u32, .u64, .s32, .s64 }",
        "Integer Arithmetic Instructions: bfind", |m| int(IntOp::Bfind { shiftamt: m.has(".shiftamt") }, m);
    "fns.b32 d, mask, base, offset", "",
        "Integer Arithmetic Instructions: fns", |_| int_b32(IntOp::Fns);
    "bmsk.mode.b32 d, a, b", ".mode = { .clamp, .wrap }",
        "Integer Arithmetic Instructions: bmsk", |m| int_b32(IntOp::Bmsk { clamp: m.word(".mode") == Some("clamp") });
    "dp4a.atype.btype d, a, b, c", ".atype = { .u32, .s32 }; .btype = { .u32, .s32 }",
        "Integer Arithmetic Instructions: dp4a", |m| int_b32(IntOp::Dp4a { a_signed: m.word(".atype") == Some("s32"), b_signed: m.word(".btype") == Some("s32") });
    "dp2a.mode.atype.btype d, a, b, c", ".mode = { .lo, .hi }; .atype = { .u32, .s32 }; .btype = { .u32, .s32 }",
        "Integer Arithmetic Instructions: dp2a", |m| int_b32(IntOp::Dp2a { hi: m.word(".mode") == Some("hi"), a_signed: m.word(".atype") == Some("s32"), b_signed: m.word(".btype") == Some("s32") });
    // ---- Extended-precision integer arithmetic --------------------------------------------
    "add.cc.type d, a, b", ".type = { .u32, .s32, .u64, .s64 }",
        "Extended-Precision Integer Arithmetic Instructions: add.cc", |m| int(IntOp::AddCarry(carry(false, true)), m);
    "addc{.cc}.type d, a, b", ".type = { .u32, .s32, .u64, .s64 }",
        "Extended-Precision Integer Arithmetic Instructions: addc", |m| int(IntOp::AddCarry(carry(true, m.has(".cc"))), m);
    "sub.cc.type d, a, b", ".type = { .u32, .s32, .u64, .s64 }",
        "Extended-Precision Integer Arithmetic Instructions: sub.cc", |m| int(IntOp::SubCarry(carry(false, true)), m);
    "subc{.cc}.type d, a, b", ".type = { .u32, .s32, .u64, .s64 }",
        "Extended-Precision Integer Arithmetic Instructions: subc", |m| int(IntOp::SubCarry(carry(true, m.has(".cc"))), m);
    "mad.mode.cc.type d, a, b, c", ".mode = { .hi, .lo }; .type = { .u32, .s32, .u64, .s64 }",
        "Extended-Precision Integer Arithmetic Instructions: mad.cc", |m| int(IntOp::MadCarry { hi: m.word(".mode") == Some("hi"), carry: carry(false, true) }, m);
    "madc.mode{.cc}.type d, a, b, c", ".mode = { .hi, .lo }; .type = { .u32, .s32, .u64, .s64 }",
        "Extended-Precision Integer Arithmetic Instructions: madc", |m| int(IntOp::MadCarry { hi: m.word(".mode") == Some("hi"), carry: carry(true, m.has(".cc")) }, m);
    // ---- Logic and shift ------------------------------------------------------------------
    "and.type d, a, b", ".type = { .pred, .b16, .b32, .b64 }",
        "Logic and Shift Instructions: and", |m| int(IntOp::And, m);
    "or.type d, a, b", ".type = { .pred, .b16, .b32, .b64 }",
        "Logic and Shift Instructions: or", |m| int(IntOp::Or, m);
    "xor.type d, a, b", ".type = { .pred, .b16, .b32, .b64 }",
        "Logic and Shift Instructions: xor", |m| int(IntOp::Xor, m);
    "not.type d, a", ".type = { .pred, .b16, .b32, .b64 }",
        "Logic and Shift Instructions: not", |m| int(IntOp::Not, m);
    "cnot.type d, a", ".type = { .b16, .b32, .b64 }",
        "Logic and Shift Instructions: cnot", |m| int(IntOp::CNot, m);
    "lop3.b32 d, a, b, c, immLut", "",
        "Logic and Shift Instructions: lop3", |_| int_b32(IntOp::Lop3 { bool_op: None });
    "lop3.BoolOp.b32 d|p, a, b, c, immLut, q", ".BoolOp = { .or, .and }",
        "Logic and Shift Instructions: lop3", |m| int_b32(IntOp::Lop3 { bool_op: Some(if m.word(".BoolOp") == Some("or") { BoolOp::Or } else { BoolOp::And }) });
    "shf.l.mode.b32 d, a, b, c", ".mode = { .clamp, .wrap }",
        "Logic and Shift Instructions: shf", |m| shf(true, m);
    "shf.r.mode.b32 d, a, b, c", ".mode = { .clamp, .wrap }",
        "Logic and Shift Instructions: shf", |m| shf(false, m);
    "shl.type d, a, b", ".type = { .b16, .b32, .b64 }",
        "Logic and Shift Instructions: shl", |m| int(IntOp::Shl, m);
    "shr.type d, a, b",
        ".type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64 }",
        "Logic and Shift Instructions: shr", |m| int(IntOp::Shr, m);
    // ---- Floating point (f32, f64) ----------------------------------------------------------
    "testp.op.type p, a", ".op = { .finite, .infinite, .number, .notanumber, .normal, .subnormal }; .type = { .f32, .f64 }",
        "Floating Point Instructions: testp", |m| testp(m);
    "copysign.type d, a, b", ".type = { .f32, .f64 }",
        "Floating Point Instructions: copysign", |m| float(FloatOp::Copysign, m.ty(".type"), m);
    // Directed roundings are decoded; the lowering refuses them (see `lower::float`).
    "add{.rnd}{.ftz}{.sat}.f32 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: add", |m| float(FloatOp::Add, PtxType::F32, m);
    "add{.rnd}.f64 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: add", |m| float(FloatOp::Add, PtxType::F64, m);
    "sub{.rnd}{.ftz}{.sat}.f32 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: sub", |m| float(FloatOp::Sub, PtxType::F32, m);
    "sub{.rnd}.f64 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: sub", |m| float(FloatOp::Sub, PtxType::F64, m);
    "mul{.rnd}{.ftz}{.sat}.f32 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: mul", |m| float(FloatOp::Mul, PtxType::F32, m);
    "mul{.rnd}.f64 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: mul", |m| float(FloatOp::Mul, PtxType::F64, m);
    "fma.rnd{.ftz}{.sat}.f32 d, a, b, c", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: fma", |m| float(FloatOp::Fma, PtxType::F32, m);
    "fma.rnd.f64 d, a, b, c", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: fma", |m| float(FloatOp::Fma, PtxType::F64, m);
    "mad.rnd{.ftz}{.sat}.f32 d, a, b, c", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: mad", |m| float(FloatOp::Fma, PtxType::F32, m);
    "mad.rnd.f64 d, a, b, c", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: mad", |m| float(FloatOp::Fma, PtxType::F64, m);
    // The sm_1x form: computed as fma (its one rounding is within the old form's bounds).
    "mad{.ftz}{.sat}.f32 d, a, b, c", "",
        "Floating Point Instructions: mad", |m| float(FloatOp::Fma, PtxType::F32, m);
    "div.approx{.ftz}.f32 d, a, b", "",
        "Floating Point Instructions: div", |m| float(FloatOp::Div, PtxType::F32, m);
    "div.full{.ftz}.f32 d, a, b", "",
        "Floating Point Instructions: div", |m| float(FloatOp::Div, PtxType::F32, m);
    "div.rnd{.ftz}.f32 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: div", |m| float(FloatOp::Div, PtxType::F32, m);
    "div.rnd.f64 d, a, b", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: div", |m| float(FloatOp::Div, PtxType::F64, m);
    "abs{.ftz}.f32 d, a", "",
        "Floating Point Instructions: abs", |m| float(FloatOp::Abs, PtxType::F32, m);
    "abs.f64 d, a", "",
        "Floating Point Instructions: abs", |m| float(FloatOp::Abs, PtxType::F64, m);
    "neg{.ftz}.f32 d, a", "",
        "Floating Point Instructions: neg", |m| float(FloatOp::Neg, PtxType::F32, m);
    "neg.f64 d, a", "",
        "Floating Point Instructions: neg", |m| float(FloatOp::Neg, PtxType::F64, m);
    "min{.ftz}.f32 d, a, b", "",
        "Floating Point Instructions: min", |m| float(FloatOp::Min, PtxType::F32, m);
    "min.f64 d, a, b", "",
        "Floating Point Instructions: min", |m| float(FloatOp::Min, PtxType::F64, m);
    "max{.ftz}.f32 d, a, b", "",
        "Floating Point Instructions: max", |m| float(FloatOp::Max, PtxType::F32, m);
    "max.f64 d, a, b", "",
        "Floating Point Instructions: max", |m| float(FloatOp::Max, PtxType::F64, m);
    "rcp.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: rcp", |m| float(FloatOp::Rcp, PtxType::F32, m);
    "rcp.rnd{.ftz}.f32 d, a", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: rcp", |m| float(FloatOp::Rcp, PtxType::F32, m);
    "rcp.rnd.f64 d, a", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: rcp", |m| float(FloatOp::Rcp, PtxType::F64, m);
    "rcp.approx.ftz.f64 d, a", "",
        "Floating Point Instructions: rcp.approx.ftz.f64", |m| float(FloatOp::Rcp, PtxType::F64, m);
    "sqrt.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: sqrt", |m| float(FloatOp::Sqrt, PtxType::F32, m);
    "sqrt.rnd{.ftz}.f32 d, a", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: sqrt", |m| float(FloatOp::Sqrt, PtxType::F32, m);
    "sqrt.rnd.f64 d, a", ".rnd = { .rn, .rz, .rm, .rp }",
        "Floating Point Instructions: sqrt", |m| float(FloatOp::Sqrt, PtxType::F64, m);
    "rsqrt.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: rsqrt", |m| float(FloatOp::Rsqrt, PtxType::F32, m);
    "rsqrt.approx.f64 d, a", "",
        "Floating Point Instructions: rsqrt", |m| float(FloatOp::Rsqrt, PtxType::F64, m);
    "rsqrt.approx.ftz.f64 d, a", "",
        "Floating Point Instructions: rsqrt.approx.ftz.f64", |m| float(FloatOp::Rsqrt, PtxType::F64, m);
    "sin.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: sin", |m| float(FloatOp::Sin, PtxType::F32, m);
    "cos.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: cos", |m| float(FloatOp::Cos, PtxType::F32, m);
    "lg2.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: lg2", |m| float(FloatOp::Lg2, PtxType::F32, m);
    "ex2.approx{.ftz}.f32 d, a", "",
        "Floating Point Instructions: ex2", |m| float(FloatOp::Ex2, PtxType::F32, m);
    "tanh.approx.f32 d, a", "",
        "Floating Point Instructions: tanh", |m| float(FloatOp::Tanh, PtxType::F32, m);
    // ---- Half precision ----------------------------------------------------------------------
    "add{.rnd}{.ftz}{.sat}.type d, a, b", ".rnd = { .rn }; .type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: add", |m| half(FloatOp::Add, m);
    "add{.rnd}.type d, a, b", ".rnd = { .rn }; .type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: add", |m| half(FloatOp::Add, m);
    "sub{.rnd}{.ftz}{.sat}.type d, a, b", ".rnd = { .rn }; .type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: sub", |m| half(FloatOp::Sub, m);
    "sub{.rnd}.type d, a, b", ".rnd = { .rn }; .type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: sub", |m| half(FloatOp::Sub, m);
    "mul{.rnd}{.ftz}{.sat}.type d, a, b", ".rnd = { .rn }; .type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: mul", |m| half(FloatOp::Mul, m);
    "mul{.rnd}.type d, a, b", ".rnd = { .rn }; .type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: mul", |m| half(FloatOp::Mul, m);
    "fma.rnd{.ftz}{.sat}.type d, a, b, c", ".rnd = { .rn }; .type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: fma", |m| half(FloatOp::Fma, m);
    "fma.rnd{.ftz}.relu.type d, a, b, c", ".rnd = { .rn }; .type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: fma", |m| half(FloatOp::Fma, m);
    "fma.rnd{.relu}.type d, a, b, c", ".rnd = { .rn }; .type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: fma", |m| half(FloatOp::Fma, m);
    "fma.rnd.oob{.relu}.type d, a, b, c",
        ".rnd = { .rn }; .type = { .f16, .f16x2, .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: fma", |m| half(FloatOp::Fma, m);
    "neg{.ftz}.type d, a", ".type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: neg", |m| half(FloatOp::Neg, m);
    "neg.type d, a", ".type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: neg", |m| half(FloatOp::Neg, m);
    "abs{.ftz}.type d, a", ".type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: abs", |m| half(FloatOp::Abs, m);
    "abs.type d, a", ".type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: abs", |m| half(FloatOp::Abs, m);
    "min{.ftz}{.NaN}{.xorsign.abs}.type d, a, b", ".type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: min", |m| half(FloatOp::Min, m);
    "min{.NaN}{.xorsign.abs}.type d, a, b", ".type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: min", |m| half(FloatOp::Min, m);
    "max{.ftz}{.NaN}{.xorsign.abs}.type d, a, b", ".type = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: max", |m| half(FloatOp::Max, m);
    "max{.NaN}{.xorsign.abs}.type d, a, b", ".type = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: max", |m| half(FloatOp::Max, m);
    "tanh.approx.type d, a", ".type = { .f16, .f16x2, .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: tanh", |m| half(FloatOp::Tanh, m);
    "ex2.approx.atype d, a", ".atype = { .f16, .f16x2 }",
        "Half Precision Floating Point Instructions: ex2", |m| half(FloatOp::Ex2, m);
    "ex2.approx.ftz.btype d, a", ".btype = { .bf16, .bf16x2 }",
        "Half Precision Floating Point Instructions: ex2", |m| half(FloatOp::Ex2, m);
    // ---- Comparison and selection -------------------------------------------------------------
    "setp.CmpOp{.ftz}.type p{|q}, a, b", CMP_TYPES,
        "Comparison and Selection Instructions: setp", |m| setp(m);
    "setp.CmpOp.BoolOp{.ftz}.type p{|q}, a, b, {!}c", CMP_TYPES,
        "Comparison and Selection Instructions: setp", |m| setp(m);
    "setp.CmpOp{.ftz}.type p{|q}, a, b", HALF_CMP_F16,
        "Half Precision Comparison Instructions: setp", |m| setp(m);
    "setp.CmpOp.BoolOp{.ftz}.type p{|q}, a, b, {!}c", HALF_CMP_F16,
        "Half Precision Comparison Instructions: setp", |m| setp(m);
    "setp.CmpOp.type p{|q}, a, b", HALF_CMP_BF16,
        "Half Precision Comparison Instructions: setp", |m| setp(m);
    "setp.CmpOp.BoolOp.type p{|q}, a, b, {!}c", HALF_CMP_BF16,
        "Half Precision Comparison Instructions: setp", |m| setp(m);
    "set.CmpOp{.ftz}.dtype.stype d, a, b", SET_TYPES,
        "Comparison and Selection Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp{.ftz}.dtype.stype d, a, b, {!}c", SET_TYPES,
        "Comparison and Selection Instructions: set", |m| set(m);
    "set.CmpOp{.ftz}.f16.stype d, a, b", SET_HALF_RESULT,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp{.ftz}.f16.stype d, a, b, {!}c", SET_HALF_RESULT,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.bf16.stype d, a, b", SET_BF16_RESULT,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp.bf16.stype d, a, b, {!}c", SET_BF16_RESULT,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp{.ftz}.dtype.f16 d, a, b", SET_FROM_HALF,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp{.ftz}.dtype.f16 d, a, b, {!}c", SET_FROM_HALF,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.dtype.bf16 d, a, b", SET_FROM_HALF,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp.dtype.bf16 d, a, b, {!}c", SET_FROM_HALF,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp{.ftz}.dtype.f16x2 d, a, b", SET_FROM_F16X2,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp{.ftz}.dtype.f16x2 d, a, b, {!}c", SET_FROM_F16X2,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.dtype.bf16x2 d, a, b", SET_FROM_BF16X2,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "set.CmpOp.BoolOp.dtype.bf16x2 d, a, b, {!}c", SET_FROM_BF16X2,
        "Half Precision Comparison Instructions: set", |m| set(m);
    "selp.type d, a, b, c",
        ".type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }",
        "Comparison and Selection Instructions: selp", |m| Op::Selp(m.ty(".type"));
    // ---- Data movement and conversion ----------------------------------------------------------
    "mov.type d, a",
        ".type = { .pred, .b16, .b32, .b64, .b128, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }",
        "Data Movement and Conversion Instructions: mov", |m| Op::Mov(m.ty(".type"));
    // A vector register or `{a, b}` as a whole ("Vectors ... may be used in mov").
    "mov.vec.type d, a",
        ".vec = { .v2, .v4 }; .type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }",
        "Data Movement and Conversion Instructions: mov", |m| Op::MovVec { ty: m.ty(".type"), vec: vec(m) };
    "ld{.weak}{.ss}{.cop}{.level::cache_hint}{.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}",
        LD_SETS, "Data Movement and Conversion Instructions: ld", |m| ld(m);
    "ld{.weak}{.ss}{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}",
        LD_SETS, "Data Movement and Conversion Instructions: ld", |m| ld(m);
    "ld.volatile{.ss}{.level::prefetch_size}{.vec}.type d, [a]",
        LD_SETS, "Data Movement and Conversion Instructions: ld", |m| ld(m);
    "ld.relaxed.scope{.ss}{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}",
        LD_SETS, "Data Movement and Conversion Instructions: ld", |m| ld(m);
    "ld.acquire.scope{.ss}{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}",
        LD_SETS, "Data Movement and Conversion Instructions: ld", |m| ld(m);
    "ld.mmio.relaxed.sys{.global}.type d, [a]",
        LD_SETS, "Data Movement and Conversion Instructions: ld", |m| ld(m);
    "ld.global{.cop}.nc{.level::cache_hint}{.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}",
        LD_NC_SETS, "Data Movement and Conversion Instructions: ld.global.nc", |m| ld(m);
    "ld.global.nc{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.level::prefetch_size}{.vec}.type d, [a]{, cache-policy}",
        LD_NC_SETS, "Data Movement and Conversion Instructions: ld.global.nc", |m| ld(m);
    "ldu{.ss}{.vec}.type d, [a]", ".ss = { .global }; .vec = { .v2, .v4 }; .type = { .b8, .b16, .b32, .b64, .b128, .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .f32, .f64 }",
        "Data Movement and Conversion Instructions: ldu", |m| ld(m);
    "st{.weak}{.ss}{.cop}{.level::cache_hint}{.vec}.type [a], b{, cache-policy}",
        ST_SETS, "Data Movement and Conversion Instructions: st", |m| st(m);
    "st{.weak}{.ss}{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.vec}.type [a], b{, cache-policy}",
        ST_SETS, "Data Movement and Conversion Instructions: st", |m| st(m);
    "st.volatile{.ss}{.vec}.type [a], b",
        ST_SETS, "Data Movement and Conversion Instructions: st", |m| st(m);
    "st.relaxed.scope{.ss}{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.vec}.type [a], b{, cache-policy}",
        ST_SETS, "Data Movement and Conversion Instructions: st", |m| st(m);
    "st.release.scope{.ss}{.level1::eviction_priority}{.level2::eviction_priority}{.level::cache_hint}{.vec}.type [a], b{, cache-policy}",
        ST_SETS, "Data Movement and Conversion Instructions: st", |m| st(m);
    "st.mmio.relaxed.sys{.global}.type [a], b",
        ST_SETS, "Data Movement and Conversion Instructions: st", |m| st(m);
    "cvta.space.size p, a", CVTA_SETS,
        "Data Movement and Conversion Instructions: cvta", |m| cvta(true, m);
    "cvta.to.space.size p, a", CVTA_SETS,
        "Data Movement and Conversion Instructions: cvta", |m| cvta(false, m);
    "isspacep.space p, a", ".space = { .const, .global, .local, .shared{::cta}, .shared{::cluster}, .param{::entry} }",
        "Data Movement and Conversion Instructions: isspacep", |m| Op::Isspacep(space(m.word(".space")));
    "cvt{.irnd}{.ftz}{.sat}.dtype.atype d, a", CVT_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| cvt(m);
    "cvt{.frnd}{.ftz}{.sat}.dtype.atype d, a", CVT_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| cvt(m);
    "cvt.frnd2{.relu}{.satfinite}.dtype.f32 d, a", ".frnd2 = { .rn, .rz }; .dtype = { .f16, .bf16 }",
        "Data Movement and Conversion Instructions: cvt", |m| cvt(m);
    "cvt.frnd2{.relu}{.satfinite}.dtype.f32 d, a, b", ".frnd2 = { .rn, .rz }; .dtype = { .f16x2, .bf16x2 }",
        "Data Movement and Conversion Instructions: cvt", |m| cvt(m);
    "cvt.rs{.relu}{.satfinite}.dtype.f32 d, a, b, rbits", ".dtype = { .f16x2, .bf16x2 }",
        "Data Movement and Conversion Instructions: cvt", |m| Op::CvtNarrow(NarrowCvt::Stochastic {
            dst: m.ty(".dtype"),
            relu: m.has(".relu"),
            satfinite: m.has(".satfinite"),
        });
    "cvt.frnd.satfinite{.relu}.f8x2type.f32 d, a, b", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| to_mini(".f8x2type", PtxType::F32, m);
    "cvt.frnd.satfinite{.relu}.f8x2type.stype d, a", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| to_mini(".f8x2type", m.ty(".stype"), m);
    "cvt.rn{.relu}.dtype.f8x2type d, a", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| from_mini(".f8x2type", m);
    "cvt.frnd.satfinite{.relu}.f6x2type.f32 d, a, b", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| to_mini(".f6x2type", PtxType::F32, m);
    "cvt.frnd.satfinite{.relu}.f6x2type.stype d, a", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| to_mini(".f6x2type", m.ty(".stype"), m);
    "cvt.rn{.relu}.dtype.f6x2type d, a", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| from_mini(".f6x2type", m);
    "cvt.frnd.satfinite{.relu}.f4x2type.f32 d, a, b", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| to_mini(".f4x2type", PtxType::F32, m);
    "cvt.frnd.satfinite{.relu}.f4x2type.stype d, a", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| to_mini(".f4x2type", m.ty(".stype"), m);
    "cvt.rn{.relu}.dtype.f4x2type d, a", NARROW_SETS,
        "Data Movement and Conversion Instructions: cvt", |m| from_mini(".f4x2type", m);
    "cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b", ".frnd3 = { .rz, .rp }",
        "Data Movement and Conversion Instructions: cvt", |m| to_ue8m0(PtxType::F32, m);
    "cvt.frnd3{.satfinite}.ue8m0x2.bf16x2 d, a", ".frnd3 = { .rz, .rp }",
        "Data Movement and Conversion Instructions: cvt", |m| to_ue8m0(PtxType::BF16x2, m);
    "cvt.rn.bf16x2.ue8m0x2 d, a", "",
        "Data Movement and Conversion Instructions: cvt", |_| Op::CvtNarrow(NarrowCvt::FromUe8m0);
    "cvt.rna{.satfinite}.tf32.f32 d, a", "",
        "Data Movement and Conversion Instructions: cvt", |m| to_tf32(m);
    "cvt.frnd2{.satfinite}{.relu}.tf32.f32 d, a", ".frnd2 = { .rn, .rz }",
        "Data Movement and Conversion Instructions: cvt", |m| to_tf32(m);
    "cvt.pack.sat.convertType.abType d, a, b", ".convertType = { .u16, .s16 }; .abType = { .s32 }",
        "Data Movement and Conversion Instructions: cvt.pack", |m| pack_sat(m);
    "cvt.pack.sat.convertType.abType.cType d, a, b, c", ".convertType = { .u2, .s2, .u4, .s4, .u8, .s8 }; .abType = { .s32 }; .cType = { .b32 }",
        "Data Movement and Conversion Instructions: cvt.pack", |m| pack_sat(m);
    "shfl.sync.mode.b32 d{|p}, a, b, c, membermask", ".mode = { .up, .down, .bfly, .idx }",
        "Data Movement and Conversion Instructions: shfl.sync", |m| Op::Shfl(shfl_mode(m));
    // ---- Video (operand selectors `a.b0`, `d.h1`, `a.h10`, `b.b7654` are the checker's) --------
    "vop.dtype.atype.btype{.sat} d, a, b", VOP_SETS,
        "Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax", |m| video(m, Second::None);
    "vop.dtype.atype.btype{.sat}.op2 d, a, b, c", VOP_SETS,
        "Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax", |m| video(m, op2(m));
    "vop.dtype.atype.btype{.sat} d, a, b, c", VOP_SETS,
        "Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax", |m| video(m, Second::Merge(Part::Word));
    "vop.dtype.atype.u32{.sat}.mode d, a, b", VSHIFT_SETS,
        "Scalar Video Instructions: vshl, vshr", |m| video(m, Second::None);
    "vop.dtype.atype.u32{.sat}.mode.op2 d, a, b, c", VSHIFT_SETS,
        "Scalar Video Instructions: vshl, vshr", |m| video(m, op2(m));
    "vop.dtype.atype.u32{.sat}.mode d, a, b, c", VSHIFT_SETS,
        "Scalar Video Instructions: vshl, vshr", |m| video(m, Second::Merge(Part::Word));
    "vmad.dtype.atype.btype{.sat}{.scale} d, a, b, c", VMAD_SETS,
        "Scalar Video Instructions: vmad", |m| video(m, Second::None);
    "vmad.dtype.atype.btype.po{.sat}{.scale} d, a, b, c", VMAD_SETS,
        "Scalar Video Instructions: vmad", |m| video(m, Second::None);
    "vset.atype.btype.cmp d, a, b", VSET_SETS,
        "Scalar Video Instructions: vset", |m| video(m, Second::None);
    "vset.atype.btype.cmp.op2 d, a, b, c", VSET_SETS,
        "Scalar Video Instructions: vset", |m| video(m, op2(m));
    "vset.atype.btype.cmp d, a, b, c", VSET_SETS,
        "Scalar Video Instructions: vset", |m| video(m, Second::Merge(Part::Word));
    "vop2.dtype.atype.btype{.sat} d, a, b, c", VOP2_SETS,
        "SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2", |m| simd(m, 2);
    "vop2.dtype.atype.btype.add d, a, b, c", VOP2_SETS,
        "SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2", |m| simd(m, 2);
    "vset2.atype.btype.cmp d, a, b, c", VSET_SETS,
        "SIMD Video Instructions: vset2", |m| simd(m, 2);
    "vset2.atype.btype.cmp.add d, a, b, c", VSET_SETS,
        "SIMD Video Instructions: vset2", |m| simd(m, 2);
    "vop4.dtype.atype.btype{.sat} d, a, b, c", VOP4_SETS,
        "SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4", |m| simd(m, 4);
    "vop4.dtype.atype.btype.add d, a, b, c", VOP4_SETS,
        "SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4", |m| simd(m, 4);
    "vset4.atype.btype.cmp d, a, b, c", VSET_SETS,
        "SIMD Video Instructions: vset4", |m| simd(m, 4);
    "vset4.atype.btype.cmp.add d, a, b, c", VSET_SETS,
        "SIMD Video Instructions: vset4", |m| simd(m, 4);
    "prmt.b32 d, a, b, c", "",
        "Data Movement and Conversion Instructions: prmt", |_| int_b32(IntOp::Prmt);
    "prmt.b32.mode d, a, b, c", ".mode = { .f4e, .b4e, .rc8, .ecl, .ecr, .rc16 }",
        "Data Movement and Conversion Instructions: prmt", |m| int_b32(IntOp::PrmtMode(prmt_mode(m)));
    // ---- Control flow ----------------------------------------------------------------------------
    "bra{.uni} tgt", "", "Control Flow Instructions: bra", |_| Op::Bra;
    "call{.uni} func", "", "Control Flow Instructions: call", |_| Op::Call;
    "call{.uni} func, (param-list)", "", "Control Flow Instructions: call", |_| Op::Call;
    "call{.uni} (ret-param), func, (param-list)", "", "Control Flow Instructions: call", |_| Op::Call;
    "call{.uni} fptr, flist", "", "Control Flow Instructions: call", |_| Op::Call;
    "call{.uni} fptr, (param-list), flist", "", "Control Flow Instructions: call", |_| Op::Call;
    "call{.uni} (ret-param), fptr, (param-list), flist", "", "Control Flow Instructions: call", |_| Op::Call;
    "ret{.uni}", "", "Control Flow Instructions: ret", |_| Op::Ret;
    "exit", "", "Control Flow Instructions: exit", |_| Op::Exit;
    // ---- Parallel synchronization and communication -----------------------------------------
    "bar{.cta}.sync a{, b}", "",
        "Parallel Synchronization and Communication Instructions: bar", |_| Op::Bar(BarKind::Sync);
    "bar{.cta}.arrive a, b", "",
        "Parallel Synchronization and Communication Instructions: bar", |_| Op::Bar(BarKind::Arrive);
    "bar{.cta}.red.popc.u32 d, a{, b}, {!}c", "",
        "Parallel Synchronization and Communication Instructions: bar", |_| Op::Bar(BarKind::Red(BarRed::Popc));
    "bar{.cta}.red.op.pred p, a{, b}, {!}c", ".op = { .and, .or }",
        "Parallel Synchronization and Communication Instructions: bar", |m| bar_red(m);
    "barrier{.cta}.sync{.aligned} a{, b}", "",
        "Parallel Synchronization and Communication Instructions: bar", |_| Op::Bar(BarKind::Sync);
    "barrier{.cta}.arrive{.aligned} a, b", "",
        "Parallel Synchronization and Communication Instructions: bar", |_| Op::Bar(BarKind::Arrive);
    "barrier{.cta}.red.popc{.aligned}.u32 d, a{, b}, {!}c", "",
        "Parallel Synchronization and Communication Instructions: bar", |_| Op::Bar(BarKind::Red(BarRed::Popc));
    "barrier{.cta}.red.op{.aligned}.pred p, a{, b}, {!}c", ".op = { .and, .or }",
        "Parallel Synchronization and Communication Instructions: bar", |m| bar_red(m);
    "barrier.cluster.arrive{.sem}{.aligned}", ".sem = { .release, .relaxed }",
        "Parallel Synchronization and Communication Instructions: barrier.cluster", |_| Op::ClusterBarrier { wait: false };
    "barrier.cluster.wait{.acquire}{.aligned}", "",
        "Parallel Synchronization and Communication Instructions: barrier.cluster", |_| Op::ClusterBarrier { wait: true };
    "mapa{.space}.type d, a, b", ".space = { .shared::cluster }; .type = { .u32, .u64 }",
        "Data Movement and Conversion Instructions: mapa", |m| Op::Mapa { space: space(m.word(".space")), ty: m.ty(".type") };
    "getctarank{.space}.type d, a", ".space = { .shared::cluster }; .type = { .u32, .u64 }",
        "Data Movement and Conversion Instructions: getctarank", |m| Op::GetCtaRank { space: space(m.word(".space")), ty: m.ty(".type") };
    "bar.warp.sync membermask", "",
        "Parallel Synchronization and Communication Instructions: bar.warp.sync", |_| Op::WarpSync;
    // One thread's view of memory is ordered already; the pool's joins order the rest.
    "membar.level", ".level = { .cta, .gl, .sys }",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence{.sem}.scope", ".sem = { .sc, .acq_rel, .acquire, .release }",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence.sem.sync_restrict::space.scope", FENCE_RESTRICT_SETS,
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    // Proxies order one thread's generic accesses with the asynchronous copies and tensor maps
    // it issues; those complete at issue here, so there is nothing left to order.
    "fence.mbarrier_init.release.cluster", "",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence.proxy.alias", "",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence.proxy.async{.space}", ".space = { .global, .shared{::cta}, .shared::cluster }",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence.proxy.async::generic.sem.sync_restrict::space.scope", FENCE_RESTRICT_SETS,
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence.proxy.tensormap::generic.release.scope", "",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "fence.proxy.tensormap::generic.acquire.scope [addr], size", "",
        "Parallel Synchronization and Communication Instructions: membar / fence", |_| Op::Fence;
    "atom{.sem}{.scope}{.space}.op.type d, [a], b", ATOM_BITS,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "atom{.sem}{.scope}{.space}.add.type d, [a], b", ATOM_ADD,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "atom{.sem}{.scope}{.space}.op.type d, [a], b", ATOM_INC_DEC,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "atom{.sem}{.scope}{.space}.op.type d, [a], b", ATOM_MIN_MAX,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "atom{.sem}{.scope}{.space}.exch.type d, [a], b", ATOM_EXCH_CAS,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "atom{.sem}{.scope}{.space}.cas.type d, [a], b, c", ATOM_EXCH_CAS,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "atom{.sem}{.scope}{.space}.add.noftz.type d, [a], b", ATOM_HALF,
        "Parallel Synchronization and Communication Instructions: atom", |m| atom(false, m);
    "red{.sem}{.scope}{.space}.op.type [a], b", ATOM_BITS,
        "Parallel Synchronization and Communication Instructions: red", |m| atom(true, m);
    "red{.sem}{.scope}{.space}.add.type [a], b", ATOM_ADD,
        "Parallel Synchronization and Communication Instructions: red", |m| atom(true, m);
    "red{.sem}{.scope}{.space}.op.type [a], b", ATOM_INC_DEC,
        "Parallel Synchronization and Communication Instructions: red", |m| atom(true, m);
    "red{.sem}{.scope}{.space}.op.type [a], b", ATOM_MIN_MAX,
        "Parallel Synchronization and Communication Instructions: red", |m| atom(true, m);
    "red{.sem}{.scope}{.space}.add.noftz.type [a], b", ATOM_HALF,
        "Parallel Synchronization and Communication Instructions: red", |m| atom(true, m);
    "vote.sync.mode.pred d, {!}a, membermask", ".mode = { .all, .any, .uni }",
        "Parallel Synchronization and Communication Instructions: vote.sync", |m| vote(m);
    "vote.sync.ballot.b32 d, {!}a, membermask", "",
        "Parallel Synchronization and Communication Instructions: vote.sync", |_| Op::Vote(VoteMode::Ballot);
    // The deprecated forms of sm_6x and before: the checker adds the whole warp as the mask.
    "vote.mode.pred d, {!}a", ".mode = { .all, .any, .uni }",
        "Parallel Synchronization and Communication Instructions: vote (deprecated)", |m| vote(m);
    "vote.ballot.b32 d, {!}a", "",
        "Parallel Synchronization and Communication Instructions: vote (deprecated)", |_| Op::Vote(VoteMode::Ballot);
    "match.any.sync.type d, a, membermask", ".type = { .b32, .b64 }",
        "Parallel Synchronization and Communication Instructions: match.sync", |m| Op::Match { all: false, ty: m.ty(".type") };
    "match.all.sync.type d{|p}, a, membermask", ".type = { .b32, .b64 }",
        "Parallel Synchronization and Communication Instructions: match.sync", |m| Op::Match { all: true, ty: m.ty(".type") };
    "redux.sync.op.type d, a, membermask", ".op = { .add, .min, .max }; .type = { .u32, .s32 }",
        "Parallel Synchronization and Communication Instructions: redux.sync", |m| redux(m);
    "redux.sync.op.b32 d, a, membermask", ".op = { .and, .or, .xor }",
        "Parallel Synchronization and Communication Instructions: redux.sync", |m| redux(m);
    // The ISA writes `{.abs.}`; the value's bits go through as .b32.
    "redux.sync.op{.abs}{.NaN}.f32 d, a, membermask", ".op = { .min, .max }",
        "Parallel Synchronization and Communication Instructions: redux.sync", |m| Op::Redux {
            op: ReduxOp::Float { max: m.word(".op") == Some("max"), abs: m.has(".abs"), nan: m.has(".NaN") },
            ty: PtxType::B32,
        };
    "mbarrier.init{.ss}.b64 [addr], count", MBARRIER_CTA,
        "Parallel Synchronization and Communication Instructions: mbarrier.init", |m| mbarrier(MbarrierOp::Init, m);
    "mbarrier.inval{.ss}.b64 [addr]", MBARRIER_CTA,
        "Parallel Synchronization and Communication Instructions: mbarrier.inval", |m| mbarrier(MbarrierOp::Inval, m);
    // `.shared::cluster` (a remote arrive, destination `_`) is the CTA's own here.
    "mbarrier.arrive{.sem.scope}{.ss}.b64 state, [addr]{, count}", MBARRIER_ARRIVE,
        "Parallel Synchronization and Communication Instructions: mbarrier.arrive", |m| mbarrier(MbarrierOp::Arrive { drop: false, expect_tx: false }, m);
    "mbarrier.arrive.expect_tx{.sem.scope}{.ss}.b64 state, [addr], txCount", MBARRIER_ARRIVE,
        "Parallel Synchronization and Communication Instructions: mbarrier.arrive", |m| mbarrier(MbarrierOp::Arrive { drop: false, expect_tx: true }, m);
    // A `.noComplete` arrival that completes the phase is undefined: it is an arrival.
    "mbarrier.arrive.noComplete{.release.cta}{.ss}.b64 state, [addr], count", MBARRIER_CTA,
        "Parallel Synchronization and Communication Instructions: mbarrier.arrive", |m| mbarrier(MbarrierOp::Arrive { drop: false, expect_tx: false }, m);
    "mbarrier.arrive_drop{.sem.scope}{.ss}.b64 state, [addr]{, count}", MBARRIER_ARRIVE,
        "Parallel Synchronization and Communication Instructions: mbarrier.arrive_drop", |m| mbarrier(MbarrierOp::Arrive { drop: true, expect_tx: false }, m);
    "mbarrier.arrive_drop.expect_tx{.sem.scope}{.ss}.b64 state, [addr], txCount", MBARRIER_ARRIVE,
        "Parallel Synchronization and Communication Instructions: mbarrier.arrive_drop", |m| mbarrier(MbarrierOp::Arrive { drop: true, expect_tx: true }, m);
    "mbarrier.arrive_drop.noComplete{.release.cta}{.ss}.b64 state, [addr], count", MBARRIER_CTA,
        "Parallel Synchronization and Communication Instructions: mbarrier.arrive_drop", |m| mbarrier(MbarrierOp::Arrive { drop: true, expect_tx: false }, m);
    "mbarrier.expect_tx{.sem.scope}{.ss}.b64 [addr], txCount", MBARRIER_TX,
        "Parallel Synchronization and Communication Instructions: mbarrier.expect_tx", |m| mbarrier(MbarrierOp::ExpectTx, m);
    "mbarrier.complete_tx{.sem.scope}{.ss}.b64 [addr], txCount", MBARRIER_TX,
        "Parallel Synchronization and Communication Instructions: mbarrier.complete_tx", |m| mbarrier(MbarrierOp::CompleteTx, m);
    "mbarrier.test_wait{.sem.scope}{.ss}.b64 waitComplete, [addr], state", MBARRIER_WAIT,
        "Parallel Synchronization and Communication Instructions: mbarrier.test_wait / mbarrier.try_wait", |m| mbarrier(MbarrierOp::Wait { test: true, parity: false }, m);
    "mbarrier.test_wait.parity{.sem.scope}{.ss}.b64 waitComplete, [addr], phaseParity", MBARRIER_WAIT,
        "Parallel Synchronization and Communication Instructions: mbarrier.test_wait / mbarrier.try_wait", |m| mbarrier(MbarrierOp::Wait { test: true, parity: true }, m);
    "mbarrier.try_wait{.sem.scope}{.ss}.b64 waitComplete, [addr], state{, suspendTimeHint}", MBARRIER_WAIT,
        "Parallel Synchronization and Communication Instructions: mbarrier.test_wait / mbarrier.try_wait", |m| mbarrier(MbarrierOp::Wait { test: false, parity: false }, m);
    "mbarrier.try_wait.parity{.sem.scope}{.ss}.b64 waitComplete, [addr], phaseParity{, suspendTimeHint}", MBARRIER_WAIT,
        "Parallel Synchronization and Communication Instructions: mbarrier.test_wait / mbarrier.try_wait", |m| mbarrier(MbarrierOp::Wait { test: false, parity: true }, m);
    "mbarrier.pending_count.b64 count, state", "",
        "Parallel Synchronization and Communication Instructions: mbarrier.pending_count", |m| mbarrier(MbarrierOp::PendingCount, m);
    "cp.async.mbarrier.arrive{.noinc}{.ss}.b64 [addr]", MBARRIER_CTA,
        "Parallel Synchronization and Communication Instructions: cp.async.mbarrier.arrive", |m| mbarrier(MbarrierOp::CpAsyncArrive { noinc: m.has(".noinc") }, m);
    "elect.sync d{|p}, membermask", "",
        "Parallel Synchronization and Communication Instructions: elect.sync", |_| Op::Elect;
    "activemask.b32 d", "",
        "Parallel Synchronization and Communication Instructions: activemask", |_| Op::Activemask;
    // ---- Warp-level matrix ---------------------------------------------------------------------------
    // Without `.ss` the address is generic and must point into shared memory.
    // Expanded by the checker into shuffles (see `check::movmatrix`).
    "movmatrix.sync.aligned.m8n8.trans.b16 d, a", "",
        "Warp Level Matrix Instructions: movmatrix", |_| Op::Movmatrix;
    "ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p]",
        ".shape = { .m8n8 }; .num = { .x1, .x2, .x4 }; .ss = { .shared{::cta} }; .type = { .b16 }",
        "Warp Level Matrix Instructions: ldmatrix", |m| warp_matrix(false, m);
    "stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r",
        ".shape = { .m8n8 }; .num = { .x1, .x2, .x4 }; .ss = { .shared{::cta} }; .type = { .b16 }",
        "Warp Level Matrix Instructions: stmatrix", |m| warp_matrix(true, m);
    "mma.sync.aligned.shape.row.col.dtype.f16.f16.ctype d, a, b, c", ".shape = { .m16n8k8, .m16n8k16 }; .dtype = { .f16, .f32 }; .ctype = { .f16, .f32 }",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "f16", "f16");
    "mma.sync.aligned.shape.row.col.f32.bf16.bf16.f32 d, a, b, c", ".shape = { .m16n8k8, .m16n8k16 }",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "bf16", "bf16");
    "mma.sync.aligned.shape.row.col.f32.tf32.tf32.f32 d, a, b, c", ".shape = { .m16n8k4, .m16n8k8 }",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "tf32", "tf32");
    "mma.sync.aligned.shape.row.col.f32.atype.btype.f32 d, a, b, c", ".shape = { .m16n8k16, .m16n8k32 }; .atype = { .e4m3, .e5m2 }; .btype = { .e4m3, .e5m2 }",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "", "");
    "mma.sync.aligned.shape.row.col{.satfinite}.s32.atype.btype.s32 d, a, b, c", ".shape = { .m8n8k16, .m16n8k16, .m16n8k32 }; .atype = { .u8, .s8 }; .btype = { .u8, .s8 }",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "", "");
    "mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype d, a, b, c", ".alayout = { .row, .col }; .blayout = { .row, .col }; .dtype = { .f16, .f32 }; .ctype = { .f16, .f32 }",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "f16", "f16");
    "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 d, a, b, c", "",
        "Warp Level Matrix Instructions: mma", |m| mma(m, "f64", "f64");
    // ---- Warpgroup-level matrix (sm_90a) -------------------------------------------------------
    "wgmma.fence.sync.aligned", "",
        "Asynchronous Warpgroup Level Matrix Instructions: wgmma.fence", |_| Op::Hint;
    "wgmma.commit_group.sync.aligned", "",
        "Asynchronous Warpgroup Level Matrix Instructions: wgmma.commit_group", |_| Op::Hint;
    "wgmma.wait_group.sync.aligned N", "",
        "Asynchronous Warpgroup Level Matrix Instructions: wgmma.wait_group", |_| Op::Hint;
    "wgmma.mma_async.sync.aligned.shape.dtype.f16.f16 d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b",
        concat!(wgmma_shapes!(k16), "; .dtype = { .f16, .f32 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "f16");
    "wgmma.mma_async.sync.aligned.shape.dtype.f16.f16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b",
        concat!(wgmma_shapes!(k16), "; .dtype = { .f16, .f32 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "f16");
    "wgmma.mma_async.sync.aligned.shape.dtype.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b",
        concat!(wgmma_shapes!(k16), "; .dtype = { .f32 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "bf16");
    "wgmma.mma_async.sync.aligned.shape.dtype.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b",
        concat!(wgmma_shapes!(k16), "; .dtype = { .f32 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "bf16");
    "wgmma.mma_async.sync.aligned.shape.dtype.tf32.tf32 d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b",
        concat!(wgmma_shapes!(k8), "; .dtype = { .f32 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "tf32");
    "wgmma.mma_async.sync.aligned.shape.dtype.tf32.tf32 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b",
        concat!(wgmma_shapes!(k8), "; .dtype = { .f32 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "tf32");
    "wgmma.mma_async.sync.aligned.shape.dtype.atype.btype d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b",
        concat!(wgmma_shapes!(k32), "; .dtype = { .f16, .f32 }; .atype = { .e4m3, .e5m2 }; .btype = { .e4m3, .e5m2 }"),
        "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "");
    "wgmma.mma_async.sync.aligned.shape.dtype.atype.btype d, a, b-desc, scale-d, imm-scale-a, imm-scale-b",
        concat!(wgmma_shapes!(k32), "; .dtype = { .f16, .f32 }; .atype = { .e4m3, .e5m2 }; .btype = { .e4m3, .e5m2 }"),
        "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "");
    "wgmma.mma_async.sync.aligned.shape{.satfinite}.s32.atype.btype d, a-desc, b-desc, scale-d",
        concat!(wgmma_shapes!(k32_int), "; .atype = { .s8, .u8 }; .btype = { .s8, .u8 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "");
    "wgmma.mma_async.sync.aligned.shape{.satfinite}.s32.atype.btype d, a, b-desc, scale-d",
        concat!(wgmma_shapes!(k32_int), "; .atype = { .s8, .u8 }; .btype = { .s8, .u8 }"), "Asynchronous Warpgroup Level Matrix Instructions: wgmma.mma_async", |m| wgmma(m, "");
    // ---- Miscellaneous -----------------------------------------------------------------------------
    "trap", "", "Miscellaneous Instructions: trap", |_| Op::Trap;
    // With no debugger attached a breakpoint stops the kernel as `trap` does.
    "brkpt", "", "Miscellaneous Instructions: brkpt", |_| Op::Trap;
    "nanosleep.u32 t", "", "Miscellaneous Instructions: nanosleep", |_| Op::Nanosleep;
    "griddepcontrol.action", ".action = { .launch_dependents, .wait }",
        "Parallel Synchronization and Communication Instructions: griddepcontrol", |_| Op::GridDepControl;
    "cp.async.ca.ss.global{.level::cache_hint}{.level::prefetch_size} [dst], [src], cp-size{, src-size}{, cache-policy}", CP_ASYNC_SETS,
        "Data Movement and Conversion Instructions: cp.async", |m| Op::CpAsync { cg: false, hint: m.has(".level::cache_hint") };
    "cp.async.cg.ss.global{.level::cache_hint}{.level::prefetch_size} [dst], [src], 16{, src-size}{, cache-policy}", CP_ASYNC_SETS,
        "Data Movement and Conversion Instructions: cp.async", |m| Op::CpAsync { cg: true, hint: m.has(".level::cache_hint") };
    "cp.async.commit_group", "",
        "Data Movement and Conversion Instructions: cp.async.commit_group", |_| Op::CpAsyncGroup;
    "cp.async.wait_group N", "",
        "Data Movement and Conversion Instructions: cp.async.wait_group / cp.async.wait_all", |_| Op::CpAsyncGroup;
    "cp.async.wait_all", "",
        "Data Movement and Conversion Instructions: cp.async.wait_group / cp.async.wait_all", |_| Op::CpAsyncGroup;
    "cp.async.bulk.dst.global.mbarrier::complete_tx::bytes{.level::cache_hint} [dstMem], [srcMem], size, [mbar]{, cache-policy}",
        ".dst = { .shared::cta, .shared::cluster }",
        "Data Movement and Conversion Instructions: cp.async.bulk", |m| Op::CpAsyncBulk { to_global: false, from_shared: false, hint: m.has(".level::cache_hint") };
    "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dstMem], [srcMem], size, [mbar]", "",
        "Data Movement and Conversion Instructions: cp.async.bulk", |_| Op::CpAsyncBulk { to_global: false, from_shared: true, hint: false };
    "cp.async.bulk.global.shared::cta.bulk_group{.level::cache_hint} [dstMem], [srcMem], size{, cache-policy}", "",
        "Data Movement and Conversion Instructions: cp.async.bulk", |m| Op::CpAsyncBulk { to_global: true, from_shared: true, hint: m.has(".level::cache_hint") };
    "cp.async.bulk.tensor.dim.dst.global{.tile}.mbarrier::complete_tx::bytes{.level::cache_hint} [dstMem], [tensorMap, tensorCoords], [mbar]{, cache-policy}",
        ".dim = { .1d, .2d, .3d, .4d, .5d }; .dst = { .shared::cta, .shared::cluster }",
        "Data Movement and Conversion Instructions: cp.async.bulk.tensor", |m| tensor_copy(false, m);
    "cp.async.bulk.tensor.dim.global.shared::cta{.tile}.bulk_group{.level::cache_hint} [tensorMap, tensorCoords], [srcMem]{, cache-policy}",
        ".dim = { .1d, .2d, .3d, .4d, .5d }",
        "Data Movement and Conversion Instructions: cp.async.bulk.tensor", |m| tensor_copy(true, m);
    "tensormap.replace.tile.field1{.ss}.b1024.type [addr], new_val", TENSORMAP_SETS,
        "Data Movement and Conversion Instructions: tensormap.replace", |m| tensormap_replace(".field1", m);
    "tensormap.replace.tile.field2{.ss}.b1024.type [addr], ord, new_val", TENSORMAP_SETS,
        "Data Movement and Conversion Instructions: tensormap.replace", |m| tensormap_replace(".field2", m);
    "tensormap.replace.tile.field3{.ss}.b1024.type [addr], new_val", TENSORMAP_SETS,
        "Data Movement and Conversion Instructions: tensormap.replace", |m| tensormap_replace(".field3", m);
    "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], size", "",
        "Parallel Synchronization and Communication Instructions: tensormap.cp_fenceproxy", |_| Op::TensormapCopy;
    "cp.async.bulk.commit_group", "",
        "Data Movement and Conversion Instructions: cp.async.bulk.commit_group", |_| Op::CpAsyncGroup;
    "cp.async.bulk.wait_group{.read} N", "",
        "Data Movement and Conversion Instructions: cp.async.bulk.wait_group", |_| Op::CpAsyncGroup;
    "cp.async.bulk.prefetch.L2.global{.level::cache_hint} [srcMem], size{, cache-policy}", "",
        "Data Movement and Conversion Instructions: cp.async.bulk.prefetch", |_| Op::Hint;
    "prefetch{.space}.level [a]", ".space = { .global, .local }; .level = { .L1, .L2 }",
        "Data Movement and Conversion Instructions: prefetch, prefetchu", |_| Op::Hint;
    "prefetch.global.level::eviction_priority [a]", ".level::eviction_priority = { .L2::evict_last, .L2::evict_normal }",
        "Data Movement and Conversion Instructions: prefetch, prefetchu", |_| Op::Hint;
    // Moves registers between a warpgroup's warps on a GPU; a CPU thread's budget is its own.
    "setmaxnreg.action.sync.aligned.u32 imm-reg-count", ".action = { .inc, .dec }",
        "Miscellaneous Instructions: setmaxnreg", |_| Op::Hint;
    "prefetchu.L1 [a]", "",
        "Data Movement and Conversion Instructions: prefetch, prefetchu", |_| Op::Hint;
    "createpolicy.range{.global}.level::primary_priority{.level::secondary_priority}.b64 cache-policy, [a], primary-size, total-size",
        POLICY_SETS, "Data Movement and Conversion Instructions: createpolicy", |_| Op::CreatePolicy;
    "createpolicy.fractional.level::primary_priority{.level::secondary_priority}.b64 cache-policy{, fraction}",
        POLICY_SETS, "Data Movement and Conversion Instructions: createpolicy", |_| Op::CreatePolicy;
    "createpolicy.cvt.L2.b64 cache-policy, access-property",
        "", "Data Movement and Conversion Instructions: createpolicy", |_| Op::CreatePolicy;
];

const TENSORMAP_SETS: &str = ".field1 = { .global_address, .rank };
    .field2 = { .box_dim, .global_dim, .global_stride, .element_stride };
    .field3 = { .elemtype, .interleave_layout, .swizzle_mode, .swizzle_atomicity, .fill_mode };
    .ss = { .global, .shared::cta }; .type = { .b32, .b64 }";

const POLICY_SETS: &str = ".level::primary_priority = { .L2::evict_last, .L2::evict_normal, .L2::evict_first, .L2::evict_unchanged };
    .level::secondary_priority = { .L2::evict_first, .L2::evict_unchanged }";
const CMP_TYPES: &str = ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .lo, .ls, .hi, .hs, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor };
    .type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }";
const HALF_CMP_F16: &str =
    ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor }; .type = { .f16, .f16x2 }";
const HALF_CMP_BF16: &str =
    ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor }; .type = { .bf16, .bf16x2 }";
const SET_TYPES: &str = ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .lo, .ls, .hi, .hs, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor }; .dtype = { .u32, .s32, .f32 };
    .stype = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }";
const SET_HALF_RESULT: &str = ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .lo, .ls, .hi, .hs, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor };
    .stype = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f16, .f32, .f64 }";
const SET_BF16_RESULT: &str = ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .lo, .ls, .hi, .hs, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor };
    .stype = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f16, .bf16, .f32, .f64 }";
const SET_FROM_HALF: &str =
    ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor }; .dtype = { .u16, .s16, .u32, .s32 }";
const SET_FROM_F16X2: &str =
    ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor }; .dtype = { .f16x2, .u32, .s32 }";
const SET_FROM_BF16X2: &str =
    ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan };
    .BoolOp = { .and, .or, .xor }; .dtype = { .bf16x2, .u32, .s32 }";
const LD_SETS: &str = ".ss = { .const, .global, .local, .param{::entry}, .param{::func}, .shared{::cta}, .shared{::cluster} };
    .vec = { .v2, .v4, .v8 };
    .type = { .b8, .b16, .b32, .b64, .b128, .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .f32, .f64 }";
const LD_NC_SETS: &str = ".vec = { .v2, .v4, .v8 };
    .type = { .b8, .b16, .b32, .b64, .b128, .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .f32, .f64 }";
const ST_SETS: &str = ".ss = { .global, .local, .param{::func}, .shared{::cta}, .shared{::cluster} };
    .cop = { .wb, .cg, .cs, .wt };
    .vec = { .v2, .v4, .v8 };
    .type = { .b8, .b16, .b32, .b64, .b128, .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .f32, .f64 }";
const CP_ASYNC_SETS: &str = ".ss = { .shared{::cta} }";
const FENCE_RESTRICT_SETS: &str = ".sem = { .acquire, .release };
    .sync_restrict::space = { .sync_restrict::shared::cta, .sync_restrict::shared::cluster };
    .scope = { .cluster }";
const MBARRIER_CTA: &str = ".ss = { .shared{::cta} }";
const MBARRIER_ARRIVE: &str = ".sem = { .release, .relaxed }; .scope = { .cta, .cluster };
    .ss = { .shared{::cta}, .shared::cluster }";
const MBARRIER_TX: &str = ".sem = { .relaxed }; .scope = { .cta, .cluster };
    .ss = { .shared{::cta}, .shared::cluster }";
const MBARRIER_WAIT: &str = ".sem = { .acquire, .relaxed }; .scope = { .cta, .cluster };
    .ss = { .shared{::cta} }";
const CVTA_SETS: &str =
    ".space = { .const, .global, .local, .shared{::cta}, .shared{::cluster}, .param{::entry} };
    .size = { .u32, .u64 }";
/// The narrow formats by family; `.stype`/`.dtype` the packed halves they convert from/to.
const NARROW_SETS: &str = ".frnd = { .rn, .rz }; .f8x2type = { .e4m3x2, .e5m2x2 };
    .f6x2type = { .e2m3x2, .e3m2x2 }; .f4x2type = { .e2m1x2 }; .stype = { .f16x2, .bf16x2 };
    .dtype = { .f16x2, .bf16x2 }";

/// The video instructions' sets (the ISA writes `.dtype = .atype = .btype = { .u32, .s32 }`).
macro_rules! video_sets {
    ($sets:literal) => {
        concat!(
            $sets,
            "; .dtype = { .u32, .s32 }; .atype = { .u32, .s32 }; .btype = { .u32, .s32 };
            .op2 = { .add, .min, .max }; .cmp = { .eq, .ne, .lt, .le, .gt, .ge }"
        )
    };
}
const VOP_SETS: &str = video_sets!("vop = { vadd, vsub, vabsdiff, vmin, vmax }");
const VSHIFT_SETS: &str = video_sets!("vop = { vshl, vshr }; .mode = { .clamp, .wrap }");
const VMAD_SETS: &str = video_sets!(".scale = { .shr7, .shr15 }");
const VSET_SETS: &str = video_sets!("");
const VOP2_SETS: &str = video_sets!("vop2 = { vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2 }");
const VOP4_SETS: &str = video_sets!("vop4 = { vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4 }");

const CVT_SETS: &str = ".irnd = { .rni, .rzi, .rmi, .rpi }; .frnd = { .rn, .rz, .rm, .rp };
    .dtype = { .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .bf16, .f16, .f32, .f64 };
    .atype = { .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64, .bf16, .f16, .f32, .f64 }";
/// The space and semantics qualifiers every `atom`/`red` line takes.
macro_rules! atom_sets {
    ($sets:literal) => {
        concat!(
            $sets,
            "; .space = { .global, .shared{::cta}, .shared{::cluster} };
            .sem = { .relaxed, .acquire, .release, .acq_rel }"
        )
    };
}

const ATOM_BITS: &str = atom_sets!(".op = { .and, .or, .xor }; .type = { .b32, .b64 }");
const ATOM_ADD: &str = atom_sets!(".type = { .u32, .u64, .s32, .s64, .f32, .f64 }");
const ATOM_INC_DEC: &str = atom_sets!(".op = { .inc, .dec }; .type = { .u32 }");
const ATOM_MIN_MAX: &str = atom_sets!(".op = { .min, .max }; .type = { .u32, .u64, .s32, .s64 }");
const ATOM_EXCH_CAS: &str = atom_sets!(".type = { .b16, .b32, .b64 }");
const ATOM_HALF: &str = atom_sets!(".type = { .f16, .f16x2, .bf16, .bf16x2 }");

// ---- builders --------------------------------------------------------------------------------

fn int(op: IntOp, m: &Match) -> Op {
    Op::Int {
        op,
        ty: m.ty(".type"),
    }
}

/// A `.u16x2`/`.s16x2` form (the word's type is .b32; the halves' sign is the op's).
fn halves(op: HalvesOp, m: &Match) -> Op {
    let ty = m
        .word(".type")
        .unwrap_or(if m.has(".s16x2") { "s16x2" } else { "u16x2" });
    int_b32(IntOp::Halves {
        op,
        signed: ty == "s16x2",
        relu: m.has(".relu"),
    })
}

fn int_b32(op: IntOp) -> Op {
    Op::Int {
        op,
        ty: PtxType::B32,
    }
}

fn carry(carry_in: bool, carry_out: bool) -> Carry {
    Carry {
        carry_in,
        carry_out,
    }
}

/// A video instruction as its opcode says; the checker adds the operands' selectors and
/// `vmad`'s negations.
fn video(m: &Match, second: Second) -> Op {
    let signed = |e| m.word(e) == Some("s32");
    let base = ["vop", "vmad", "vset"]
        .iter()
        .find_map(|b| m.word(b))
        .unwrap_or("");
    let op = match base {
        "vadd" => VideoOp::Add,
        "vsub" => VideoOp::Sub,
        "vabsdiff" => VideoOp::Absdiff,
        "vmin" => VideoOp::Min,
        "vmax" => VideoOp::Max,
        "vshl" => VideoOp::Shl {
            clamp: m.word(".mode") == Some("clamp"),
        },
        "vshr" => VideoOp::Shr {
            clamp: m.word(".mode") == Some("clamp"),
        },
        "vmad" => VideoOp::Mad {
            neg_product: false,
            neg_c: false,
            po: m.has(".po"),
            scale: match m.word(".scale") {
                Some("shr7") => 7,
                Some("shr15") => 15,
                _ => 0,
            },
        },
        _ => VideoOp::Set(video_cmp(m)),
    };
    Op::Video(Video {
        op,
        d_signed: signed(".dtype"),
        a_signed: signed(".atype"),
        b_signed: signed(".btype"),
        sat: m.has(".sat"),
        shape: Shape::Scalar {
            asel: Part::Word,
            bsel: Part::Word,
            second,
        },
    })
}

fn op2(m: &Match) -> Second {
    match m.word(".op2") {
        Some("add") => Second::Add,
        Some("min") => Second::Min,
        _ => Second::Max,
    }
}

fn video_cmp(m: &Match) -> CmpOp {
    let names = ["eq", "ne", "lt", "le", "gt", "ge"];
    let k = names.iter().position(|&n| m.word(".cmp") == Some(n));
    VIDEO_CMPS[k.unwrap_or(0)]
}

/// `vop2`/`vop4`/`vset2`/`vset4` with the ISA's default selectors.
fn simd(m: &Match, lanes: u8) -> Op {
    let base = ["vop2", "vop4"].iter().find_map(|b| m.word(b));
    let op = match base.map(|b| b.trim_end_matches(['2', '4'])) {
        Some("vadd") => VideoOp::Add,
        Some("vsub") => VideoOp::Sub,
        Some("vavrg") => VideoOp::Avrg,
        Some("vabsdiff") => VideoOp::Absdiff,
        Some("vmin") => VideoOp::Min,
        Some("vmax") => VideoOp::Max,
        _ => VideoOp::Set(video_cmp(m)),
    };
    Op::Video(Video {
        op,
        d_signed: m.word(".dtype") == Some("s32"),
        a_signed: m.word(".atype") == Some("s32"),
        b_signed: m.word(".btype") == Some("s32"),
        sat: m.has(".sat"),
        shape: Shape::simd(lanes, m.has(".add")),
    })
}

fn prmt_mode(m: &Match) -> PrmtMode {
    match m.word(".mode") {
        Some("f4e") => PrmtMode::F4e,
        Some("b4e") => PrmtMode::B4e,
        Some("rc8") => PrmtMode::Rc8,
        Some("ecl") => PrmtMode::Ecl,
        Some("ecr") => PrmtMode::Ecr,
        _ => PrmtMode::Rc16,
    }
}

fn testp(m: &Match) -> Op {
    let op = match m.word(".op") {
        Some("finite") => TestOp::Finite,
        Some("infinite") => TestOp::Infinite,
        Some("number") => TestOp::Number,
        Some("notanumber") => TestOp::NotANumber,
        Some("normal") => TestOp::Normal,
        _ => TestOp::Subnormal,
    };
    Op::Testp {
        op,
        ty: m.ty(".type"),
    }
}

fn redux(m: &Match) -> Op {
    let op = match m.word(".op") {
        Some("add") => ReduxOp::Add,
        Some("min") => ReduxOp::Min,
        Some("max") => ReduxOp::Max,
        Some("and") => ReduxOp::And,
        Some("or") => ReduxOp::Or,
        _ => ReduxOp::Xor,
    };
    let ty = m
        .word(".type")
        .map_or(PtxType::B32, |t| PtxType::from_name(t).expect("u32 or s32"));
    Op::Redux { op, ty }
}

fn int_s32(op: IntOp) -> Op {
    Op::Int {
        op,
        ty: PtxType::S32,
    }
}

fn mul_mode(m: &Match) -> MulMode {
    match m.word(".mode") {
        Some("hi") => MulMode::Hi,
        _ => MulMode::Lo,
    }
}

fn shf(left: bool, m: &Match) -> Op {
    Op::Int {
        op: IntOp::Shf {
            left,
            clamp: m.word(".mode") == Some("clamp"),
        },
        ty: PtxType::B32,
    }
}

fn rounding(word: Option<&str>) -> Option<Rounding> {
    Some(match word? {
        "rn" | "rni" => Rounding::Rn,
        "rz" | "rzi" => Rounding::Rz,
        "rm" | "rmi" => Rounding::Rm,
        "rp" | "rpi" => Rounding::Rp,
        _ => Rounding::Rna,
    })
}

fn float_mods(m: &Match) -> FloatMods {
    FloatMods {
        rnd: rounding(m.word(".rnd")),
        ftz: m.has(".ftz"),
        sat: m.has(".sat"),
        approx: m.has(".approx"),
        full: m.has(".full"),
        relu: m.has(".relu"),
        nan: m.has(".NaN"),
        xorsign_abs: m.has(".xorsign"),
        oob: m.has(".oob"),
    }
}

fn float(op: FloatOp, ty: PtxType, m: &Match) -> Op {
    Op::Float {
        op,
        ty,
        mods: float_mods(m),
    }
}

fn half(op: FloatOp, m: &Match) -> Op {
    let ty = [".type", ".atype", ".btype"]
        .iter()
        .find_map(|n| m.word(n))
        .and_then(PtxType::from_name)
        .expect("every half row names its type");
    float(op, ty, m)
}

fn cmp_op(m: &Match) -> CmpOp {
    use CmpOp::*;
    match m.word(".CmpOp").expect("a comparison row") {
        "eq" => Eq,
        "ne" => Ne,
        "lt" => Lt,
        "le" => Le,
        "gt" => Gt,
        "ge" => Ge,
        "lo" => Lo,
        "ls" => Ls,
        "hi" => Hi,
        "hs" => Hs,
        "equ" => Equ,
        "neu" => Neu,
        "ltu" => Ltu,
        "leu" => Leu,
        "gtu" => Gtu,
        "geu" => Geu,
        "num" => Num,
        _ => Nan,
    }
}

fn bool_op(m: &Match) -> Option<BoolOp> {
    Some(match m.word(".BoolOp")? {
        "and" => BoolOp::And,
        "or" => BoolOp::Or,
        _ => BoolOp::Xor,
    })
}

fn setp(m: &Match) -> Op {
    Op::Setp {
        cmp: cmp_op(m),
        bool_op: bool_op(m),
        ty: m.ty(".type"),
        ftz: m.has(".ftz"),
    }
}

/// `set`: the `.dtype`/`.stype` sets, one of them written as a literal half type in the
/// half-precision lines.
fn set(m: &Match) -> Op {
    let literal = [".f16", ".bf16", ".f16x2", ".bf16x2"]
        .iter()
        .find(|n| m.has(n))
        .and_then(|n| PtxType::from_name(&n[1..]));
    let of = |set: &str| m.word(set).and_then(PtxType::from_name).or(literal);
    Op::Set {
        cmp: cmp_op(m),
        bool_op: bool_op(m),
        dst: of(".dtype").expect("a set line names its destination type"),
        src: of(".stype").expect("a set line names its source type"),
        ftz: m.has(".ftz"),
    }
}

/// A state space by its qualified name (`.shared::cta` is the CTA's shared memory,
/// `.shared::cluster` the cluster's).
fn space(word: Option<&str>) -> StateSpace {
    if word == Some("shared::cluster") {
        return StateSpace::SharedCluster;
    }
    let name = word.map(|w| w.split("::").next().unwrap_or(w));
    name.and_then(StateSpace::from_name)
        .unwrap_or(StateSpace::Generic)
}

fn tensor_copy(store: bool, m: &Match) -> Op {
    let dim = m.word(".dim").expect("the line has .dim");
    Op::CpAsyncBulkTensor {
        dims: dim[..1].parse().expect("a digit"),
        store,
        hint: m.has(".level::cache_hint"),
    }
}

fn tensormap_replace(field: &str, m: &Match) -> Op {
    let name = m.word(field).expect("the line has its field");
    Op::TensormapReplace {
        field: crate::tensor_map::Field::from_name(name).expect("the set names fields"),
        space: space(m.word(".ss")),
        ty: m.ty(".type"),
    }
}

fn mbarrier(op: MbarrierOp, m: &Match) -> Op {
    Op::Mbarrier {
        op,
        space: space(m.word(".ss")),
    }
}

fn vec(m: &Match) -> u8 {
    m.word(".vec")
        .and_then(|v| v[1..].parse().ok())
        .unwrap_or(1)
}

/// The space of a memory line: its `.ss`, or the `.global` that `ld.global.nc` and the
/// `.mmio` lines write as a literal.
fn memory_space(m: &Match) -> StateSpace {
    match m.word(".ss") {
        Some(s) => space(Some(s)),
        None if m.has(".global") => StateSpace::Global,
        None => StateSpace::Generic,
    }
}

fn ld(m: &Match) -> Op {
    Op::Ld {
        space: memory_space(m),
        ty: m.ty(".type"),
        vec: vec(m),
    }
}

fn st(m: &Match) -> Op {
    Op::St {
        space: memory_space(m),
        ty: m.ty(".type"),
        vec: vec(m),
    }
}

fn cvta(to_generic: bool, m: &Match) -> Op {
    Op::Cvta {
        to_generic,
        space: space(m.word(".space")),
        ty: m.ty(".size"),
    }
}

fn cvt(m: &Match) -> Op {
    let dst = m.ty(".dtype");
    let src = m
        .word(".atype")
        .map_or(PtxType::F32, |t| PtxType::from_name(t).expect("types"));
    let irnd = m.word(".irnd");
    Op::Cvt {
        dst,
        src,
        mods: CvtMods {
            rnd: rounding(irnd.or(m.word(".frnd")).or(m.word(".frnd2"))),
            integral: irnd.is_some(),
            ftz: m.has(".ftz"),
            sat: m.has(".sat"),
            relu: m.has(".relu"),
            satfinite: m.has(".satfinite"),
        },
    }
}

fn mini(set: &str, m: &Match) -> Mini {
    let name = m.word(set).expect("the row names the format");
    Mini::from_name(name.trim_end_matches("x2")).expect("the set holds formats")
}

fn to_mini(set: &str, src: PtxType, m: &Match) -> Op {
    Op::CvtNarrow(NarrowCvt::ToMini {
        fmt: mini(set, m),
        src,
        rnd: rounding(m.word(".frnd")).expect(".frnd is required"),
        relu: m.has(".relu"),
    })
}

fn from_mini(set: &str, m: &Match) -> Op {
    Op::CvtNarrow(NarrowCvt::FromMini {
        fmt: mini(set, m),
        dst: m.ty(".dtype"),
        relu: m.has(".relu"),
    })
}

fn to_ue8m0(src: PtxType, m: &Match) -> Op {
    Op::CvtNarrow(NarrowCvt::ToUe8m0 {
        src,
        rnd: rounding(m.word(".frnd3")).expect(".frnd3 is required"),
        satfinite: m.has(".satfinite"),
    })
}

fn to_tf32(m: &Match) -> Op {
    Op::CvtNarrow(NarrowCvt::ToTf32 {
        rnd: rounding(m.word(".frnd2")).unwrap_or(Rounding::Rna),
        satfinite: m.has(".satfinite"),
        relu: m.has(".relu"),
    })
}

fn pack_sat(m: &Match) -> Op {
    let ty = m.word(".convertType").expect("required");
    Op::CvtNarrow(NarrowCvt::PackSat {
        bits: ty[1..].parse().expect("a width"),
        signed: ty.starts_with('s'),
    })
}

/// An `mma` row's form; `a`/`b` name the input types the row spells out (empty: the row's
/// `.atype`/`.btype` sets).
fn mma(m: &Match, a: &str, b: &str) -> Op {
    let (m_, n, k) = match m.word(".shape").unwrap_or("m8n8k4") {
        "m16n8k4" => (16, 8, 4),
        "m16n8k8" => (16, 8, 8),
        "m16n8k16" => (16, 8, 16),
        "m16n8k32" => (16, 8, 32),
        "m8n8k16" => (8, 8, 16),
        _ => (8, 8, 4),
    };
    let ty = |name: &str| MmaType::from_name(name).expect("the row's types are mma types");
    let (a, b) = match (a, b) {
        ("", _) => (
            ty(m.word(".atype").expect("set")),
            ty(m.word(".btype").expect("set")),
        ),
        _ => (ty(a), ty(b)),
    };
    let acc = match a {
        MmaType::S8 | MmaType::U8 => MmaType::S32,
        MmaType::F64 => MmaType::F64,
        _ => MmaType::F32,
    };
    Op::Mma(MmaForm {
        m: m_,
        n,
        k,
        d: m.word(".dtype").map_or(acc, ty),
        a,
        b,
        c: m.word(".ctype").map_or(acc, ty),
        satfinite: m.has(".satfinite"),
        a_row: m.word(".alayout") != Some("col"),
        b_col: m.word(".blayout") != Some("row"),
    })
}

/// A `wgmma.mma_async` row's form; `ab` names the input type the row spells out (empty: the
/// row's `.atype`/`.btype` sets, and an s32 D for the integer rows).
fn wgmma(m: &Match, ab: &str) -> Op {
    let shape = m.word(".shape").expect("required");
    let (n, k) = shape["m64n".len()..]
        .split_once('k')
        .expect("the set's shapes are m64nNkK");
    let ty = |name: &str| MmaType::from_name(name).expect("the row's types are mma types");
    let (a, b) = match ab {
        "" => (
            ty(m.word(".atype").expect("set")),
            ty(m.word(".btype").expect("set")),
        ),
        _ => (ty(ab), ty(ab)),
    };
    Op::Wgmma(WgmmaForm {
        n: n.parse().expect("a number"),
        k: k.parse().expect("a number"),
        d: m.word(".dtype").map_or(MmaType::S32, ty),
        a,
        b,
        satfinite: m.has(".satfinite"),
    })
}

fn shfl_mode(m: &Match) -> ShflMode {
    match m.word(".mode") {
        Some("up") => ShflMode::Up,
        Some("down") => ShflMode::Down,
        Some("bfly") => ShflMode::Bfly,
        _ => ShflMode::Idx,
    }
}

fn bar_red(m: &Match) -> Op {
    Op::Bar(BarKind::Red(match m.word(".op") {
        Some("and") => BarRed::And,
        _ => BarRed::Or,
    }))
}

fn atom(red: bool, m: &Match) -> Op {
    let op = match m.word(".op") {
        Some("and") => AtomOp::And,
        Some("or") => AtomOp::Or,
        Some("xor") => AtomOp::Xor,
        Some("inc") => AtomOp::Inc,
        Some("dec") => AtomOp::Dec,
        Some("min") => AtomOp::Min,
        Some("max") => AtomOp::Max,
        Some(_) => AtomOp::Add,
        None if m.has(".exch") => AtomOp::Exch,
        None if m.has(".cas") => AtomOp::Cas,
        None => AtomOp::Add,
    };
    Op::Atom {
        space: space(m.word(".space")),
        op,
        ty: m.ty(".type"),
        red,
    }
}

fn vote(m: &Match) -> Op {
    Op::Vote(match m.word(".mode") {
        Some("all") => VoteMode::All,
        Some("any") => VoteMode::Any,
        _ => VoteMode::Uni,
    })
}

fn warp_matrix(store: bool, m: &Match) -> Op {
    Op::WarpMatrix {
        store,
        num: m
            .word(".num")
            .and_then(|n| n[1..].parse().ok())
            .unwrap_or(1),
        trans: m.has(".trans"),
        space: match m.word(".ss") {
            Some(_) => StateSpace::Shared,
            None => StateSpace::Generic,
        },
    }
}
