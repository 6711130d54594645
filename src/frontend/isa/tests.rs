//! The table decodes as the ISA's lines read; a case per rule of the notation.

use super::*;
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::*;
use crate::types::PtxType;

#[test]
fn an_opcode_no_line_has_is_unsupported_by_its_whole_name() {
    assert_eq!(
        decode("tex.2d.v4.f32.f32").unwrap_err(),
        "unsupported instruction 'tex.2d.v4.f32.f32'"
    );
}

#[test]
fn unsupported_names_the_closest_form_and_its_section() {
    assert_eq!(
        decode("ld.global.v3.f32").unwrap_err(),
        "unsupported instruction 'ld.global.v3.f32' (the closest form ptxjit runs is \
         'ld{.weak}{.ss}{.cop}{.level::cache_hint}{.level::prefetch_size}{.vec}.type', \
         Data Movement and Conversion Instructions: ld)"
    );
    let msg = decode("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32").unwrap_err();
    assert!(
        msg.contains("'mma.sync.aligned.shape.row.col.dtype.f16.f16.ctype'"),
        "{msg}"
    );
}

#[test]
fn loads_and_stores_take_their_own_cache_operators() {
    for store in [
        "st.global.wb.b32",
        "st.global.wt.b32",
        "st.global.cs.b32",
        "st.global.cg.b32",
    ] {
        assert!(decode(store).is_ok(), "{store}");
    }
    for load in ["ld.global.ca.b32", "ld.global.lu.b32", "ld.global.cv.b32"] {
        assert!(decode(load).is_ok(), "{load}");
    }
    assert!(
        decode("st.global.ca.b32").is_err(),
        "ld's .ca is no store operator"
    );
    assert!(
        decode("ld.global.wt.b32").is_err(),
        "st's .wt is no load operator"
    );
}

#[test]
fn every_combination_a_line_allows_decodes() {
    for line in &table().lines {
        let mut decoded = 0;
        for opcode in examples(line).take(20_000) {
            // Panics in a builder surface here; an earlier line may take the opcode.
            assert!(decode(&opcode).is_ok(), "{opcode} ({})", line.form.syntax);
            decoded += 1;
        }
        assert!(decoded > 0, "{}", line.form.syntax);
    }
}

/// The opcodes a line spells, in its order: each base name, each optional group absent or
/// present, each set at each member.
fn examples(line: &syntax::Line) -> impl Iterator<Item = String> + '_ {
    line.bases
        .iter()
        .flat_map(move |base| spellings(line, base))
}

fn spellings<'l>(line: &'l syntax::Line, base: &'l str) -> impl Iterator<Item = String> + 'l {
    // Choices per element: None (absent, optional only) or a member.
    let choices: Vec<Vec<Option<&str>>> = line
        .elements
        .iter()
        .map(|e| {
            let members = e.members.iter().map(|m| Some(m.as_str()));
            match e.group {
                Some(_) => std::iter::once(None).chain(members).collect(),
                None => members.collect(),
            }
        })
        .collect();
    let total: usize = choices.iter().map(Vec::len).product();
    (0..total).filter_map(move |mut n| {
        let mut words = vec![base.to_string()];
        let mut groups: Vec<(usize, bool)> = Vec::new();
        for (e, c) in choices.iter().enumerate() {
            let pick = c[n % c.len()];
            n /= c.len();
            if let Some(g) = line.elements[e].group {
                match groups.iter().find(|(id, _)| *id == g) {
                    Some(&(_, present)) if present != pick.is_some() => return None,
                    Some(_) => {}
                    None => groups.push((g, pick.is_some())),
                }
            }
            words.extend(pick.map(str::to_string));
        }
        Some(words.join("."))
    })
}

#[test]
fn a_base_name_set_is_a_line_for_each_member() {
    use crate::semantics::video::VideoOp;
    let op = |opcode| match decode(opcode) {
        Ok(Op::Video(v)) => v.op,
        other => panic!("{opcode}: {other:?}"),
    };
    assert_eq!(op("vadd.u32.u32.u32"), VideoOp::Add);
    assert_eq!(op("vabsdiff.s32.u32.s32.sat"), VideoOp::Absdiff);
    assert_eq!(op("vshr.u32.u32.u32.clamp"), VideoOp::Shr { clamp: true });
    assert!(decode("vop.u32.u32.u32").is_err());
    assert!(decode("vshl.u32.u32.s32.wrap").is_err());
}

#[test]
fn qualifiers_come_in_any_order_as_ptxas_takes_them() {
    // nvcc 13 writes the first; the ISA's line orders `.scope` before `.space`.
    assert_eq!(
        decode("atom.global.cta.add.u32"),
        decode("atom.cta.global.add.u32")
    );
    assert_eq!(
        decode("ld.global.volatile.u32"),
        decode("ld.volatile.global.u32")
    );
}

#[test]
fn elements_that_could_take_the_same_word_keep_the_line_order() {
    let Ok(Op::Cvt { dst, src, .. }) = decode("cvt.f32.f16") else {
        panic!()
    };
    assert_eq!((dst, src), (PtxType::F32, PtxType::F16));
    let Ok(Op::Cvt { dst, src, .. }) = decode("cvt.f16.f32") else {
        panic!()
    };
    assert_eq!((dst, src), (PtxType::F16, PtxType::F32));
    let Ok(Op::Set { dst, src, .. }) = decode("set.lt.u32.f32") else {
        panic!()
    };
    assert_eq!((dst, src), (PtxType::U32, PtxType::F32));
}

#[test]
fn an_optional_group_is_all_or_nothing() {
    assert!(decode("min.xorsign.abs.f16").is_ok());
    assert!(decode("min.xorsign.f16").is_err());
    assert!(decode("min.abs.f16").is_err());
}

#[test]
fn a_required_element_must_be_present() {
    // `fma.rnd.f32`: the rounding is not optional (ptxas: "rounding modifier required").
    assert!(decode("fma.f32").is_err());
    assert!(decode("div.f32").is_err());
    assert!(decode("fma.rn.f32").is_ok());
}

#[test]
fn a_word_appears_once() {
    assert!(decode("add.sat.sat.s32").is_err());
    assert!(decode("ld.global.global.u32").is_err());
}

#[test]
fn types_are_those_the_line_lists() {
    // ptxas: "Unexpected instruction types specified for 'add'" (and for `and`, `shl`).
    for bad in [
        "add.b32", "and.u32", "shl.u32", "neg.u32", "popc.u32", "selp.f16",
    ] {
        assert!(decode(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_sub_qualified_member_stands_for_both_spellings() {
    for (opcode, space) in [
        ("ld.shared.u32", StateSpace::Shared),
        ("ld.shared::cta.u32", StateSpace::Shared),
        ("ld.shared::cluster.u32", StateSpace::SharedCluster),
    ] {
        assert!(
            matches!(decode(opcode), Ok(Op::Ld { space: s, .. }) if s == space),
            "{opcode}"
        );
    }
}

#[test]
fn operand_counts_come_from_the_line() {
    let count = |opcode: &str, n: usize| decode_instruction(opcode, n).is_ok();
    assert!(count("bar.sync", 1) && count("bar.sync", 2) && !count("bar.sync", 3));
    assert!(count("ld.global.u32", 2) && count("ld.global.L2::cache_hint.u32", 3));
    assert!(count("atom.global.cas.b32", 4) && !count("atom.global.add.u32", 4));
    assert!(count("exit", 0) && !count("exit", 1));
    let Err(DecodeError::Operands(msg)) = decode_instruction("bar.sync", 3) else {
        panic!()
    };
    assert_eq!(msg, "'bar.sync' takes 1 or 2 operands, found 3");
}

#[test]
fn addresses_are_the_operands_the_line_writes_in_brackets() {
    let at = |opcode: &str, n: usize| {
        let d = decode_instruction(opcode, n).ok().unwrap();
        (0..n).filter(|&k| d.is_address(k)).collect::<Vec<_>>()
    };
    assert_eq!(at("ld.global.u32", 2), [1]);
    assert_eq!(at("st.global.u32", 2), [0]);
    assert_eq!(at("red.global.add.u32", 2), [0]);
    assert_eq!(at("atom.global.cas.b32", 4), [1]);
    assert_eq!(at("mov.u64", 2), Vec::<usize>::new());
}

#[test]
fn decode_memory_forms() {
    assert_eq!(
        decode("ld.global.nc.v2.f32").unwrap(),
        Op::Ld {
            space: StateSpace::Global,
            ty: PtxType::F32,
            vec: 2
        }
    );
    assert_eq!(
        decode("st.u16").unwrap(),
        Op::St {
            space: StateSpace::Generic,
            ty: PtxType::U16,
            vec: 1
        }
    );
    assert_eq!(
        decode("ld.global.L1::no_allocate.b32").unwrap(),
        Op::Ld {
            space: StateSpace::Global,
            ty: PtxType::B32,
            vec: 1
        }
    );
    assert_eq!(
        decode("cvta.to.global.u64").unwrap(),
        Op::Cvta {
            to_generic: false,
            space: StateSpace::Global,
            ty: PtxType::U64
        }
    );
}

#[test]
fn decode_families_by_type() {
    assert_eq!(
        decode("mul.wide.s32").unwrap(),
        Op::Int {
            op: IntOp::Mul(MulMode::Wide),
            ty: PtxType::S32
        }
    );
    let Op::Float { op, ty, mods } = decode("fma.rn.ftz.sat.f16x2").unwrap() else {
        panic!()
    };
    assert_eq!((op, ty), (FloatOp::Fma, PtxType::F16x2));
    assert!(mods.ftz && mods.sat && mods.rnd == Some(Rounding::Rn));
    let Op::Float { mods, .. } = decode("min.ftz.NaN.xorsign.abs.f16").unwrap() else {
        panic!()
    };
    assert!(mods.nan && mods.xorsign_abs && mods.ftz);
    let Op::Cvt { dst, src, mods } = decode("cvt.rni.s32.f16").unwrap() else {
        panic!()
    };
    assert_eq!(
        (dst, src, mods.rnd, mods.integral),
        (PtxType::S32, PtxType::F16, Some(Rounding::Rn), true)
    );
    let Op::Setp { cmp, bool_op, .. } = decode("setp.gt.and.f32").unwrap() else {
        panic!()
    };
    assert_eq!((cmp, bool_op), (CmpOp::Gt, Some(BoolOp::And)));
}

#[test]
fn a_word_no_element_takes_is_unsupported_not_ignored() {
    assert!(decode("add.wrap.u32").is_err());
    assert!(decode("add.cc.u16").is_err());
    assert!(decode("mul.lo.hi.s32").is_err());
}

#[test]
fn decode_narrow_conversions_by_direction() {
    use crate::semantics::minifloat::Mini;
    assert_eq!(
        decode("cvt.rn.satfinite.relu.e4m3x2.f16x2").unwrap(),
        Op::CvtNarrow(NarrowCvt::ToMini {
            fmt: Mini::E4m3,
            src: PtxType::F16x2,
            rnd: Rounding::Rn,
            relu: true
        })
    );
    assert_eq!(
        decode("cvt.rn.bf16x2.e2m1x2").unwrap(),
        Op::CvtNarrow(NarrowCvt::FromMini {
            fmt: Mini::E2m1,
            dst: PtxType::BF16x2,
            relu: false
        })
    );
    assert_eq!(
        decode("cvt.pack.sat.s4.s32.b32").unwrap(),
        Op::CvtNarrow(NarrowCvt::PackSat {
            bits: 4,
            signed: true
        })
    );
    // .satfinite is part of every line to a narrow format; ue8m0 has no .rn.
    assert!(decode("cvt.rn.e4m3x2.f32").is_err());
    assert!(decode("cvt.rn.satfinite.ue8m0x2.f32").is_err());
    assert!(decode("cvt.rm.tf32.f32").is_err());
}

#[test]
fn matrix_layouts_keep_their_positions() {
    // `.row.col` is A's layout then B's: swapped, it is another form, not a reordering.
    assert!(decode("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32").is_err());
    let Ok(Op::Mma(form)) = decode("mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f32") else {
        panic!("m8n8k4 takes every layout pair");
    };
    assert!(!form.a_row && !form.b_col);
    let Ok(Op::Mma(form)) = decode("mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16") else {
        panic!("m8n8k4 takes every layout pair");
    };
    assert!(form.a_row && !form.b_col);
}
