//! The video instructions, one rule per test, in both compiled forms against the reference
//! (`ptxjit::semantics::video`, written from the ISA's semantics blocks): each test spells
//! the instruction in PTX (selectors, negations and all) and builds the `Video` it must
//! decode to by hand, so decoding is checked as well as arithmetic. Known values from
//! elsewhere anchor it: ZLUDA's GPU-validated `vshr_clamp`, and the CUDA SIMD intrinsics'
//! documented meaning for the forms CUDA's headers emit.

mod common;

use common::{Rng, W, elementwise_with};
use ptxjit::semantics::video::{Part, Second, Shape, VIDEO_CMPS, Video, VideoOp, video};
use ptxjit::{CompileOptions, LaneGroups, Module};

/// Edge words (signs, byte and half boundaries) crossed, then random words.
fn columns() -> Vec<Vec<u64>> {
    let edges: [u64; 12] = [
        0,
        1,
        0x7f,
        0x80,
        0xff,
        0x7fff,
        0x8000,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
    ];
    let mut rng = Rng(0x71DE0);
    let mut words: Vec<u64> = edges.to_vec();
    words.extend((0..8).map(|_| rng.next() & 0xffff_ffff));
    let n = words.len();
    let mut cols = vec![Vec::new(); 3];
    for i in 0..n * n * n {
        cols[0].push(words[i % n]);
        cols[1].push(words[i / n % n]);
        cols[2].push(words[i / n / n]);
    }
    cols
}

/// Runs `inst` (on `{a}`, `{b}`, `{c}` into `{d}`) in both compiled forms: `d` must be
/// `expect(a, b, c)`.
fn agrees_with(inst: &str, expect: impl Fn(u32, u32, u32) -> u32) {
    let cols = columns();
    let srcs: Vec<(W, &[u64])> = cols.iter().map(|c| (W::B32, c.as_slice())).collect();
    for lanes in [LaneGroups::Always, LaneGroups::Off] {
        let opts = CompileOptions {
            lane_groups: lanes,
            ..CompileOptions::default()
        };
        let got = elementwise_with(&opts, inst, W::B32, &srcs);
        for (i, &g) in got.iter().enumerate() {
            let [a, b, c] = [0, 1, 2].map(|k| cols[k][i] as u32);
            assert_eq!(
                g as u32,
                expect(a, b, c),
                "{inst}: a={a:#x} b={b:#x} c={c:#x} ({lanes:?})"
            );
        }
    }
}

fn agrees(inst: &str, v: Video) {
    agrees_with(inst, |a, b, c| video(&v, a, b, c));
}

fn scalar(op: VideoOp, signs: &str, sat: bool, asel: Part, bsel: Part, second: Second) -> Video {
    let s: Vec<bool> = signs.chars().map(|c| c == 's').collect();
    Video {
        op,
        d_signed: s[0],
        a_signed: s[1],
        b_signed: s[2],
        sat,
        shape: Shape::Scalar { asel, bsel, second },
    }
}

fn simd(op: VideoOp, signs: &str, sat: bool, shape: Shape) -> Video {
    Video {
        shape,
        ..scalar(op, signs, sat, Part::Word, Part::Word, Second::None)
    }
}

fn load_error(ptx_body: &str) -> String {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<4>;\n{ptx_body}\nret;\n}}\n"
    );
    match Module::from_ptx_named("k.ptx", &ptx, &CompileOptions::default()) {
        Ok(_) => panic!("accepted: {ptx_body}"),
        Err(e) => e.to_string(),
    }
}

const W32: Part = Part::Word;

#[test]
fn each_scalar_operation_on_whole_words_of_each_sign() {
    let ops = [
        ("vadd", VideoOp::Add),
        ("vsub", VideoOp::Sub),
        ("vabsdiff", VideoOp::Absdiff),
        ("vmin", VideoOp::Min),
        ("vmax", VideoOp::Max),
    ];
    for (name, op) in ops {
        for signs in ["uuu", "sss", "uss", "sus"] {
            let t: Vec<&str> = signs
                .chars()
                .map(|c| if c == 's' { "s32" } else { "u32" })
                .collect();
            let inst = format!("{name}.{}.{}.{} {{d}}, {{a}}, {{b}}", t[0], t[1], t[2]);
            agrees(&inst, scalar(op, signs, false, W32, W32, Second::None));
        }
    }
}

#[test]
fn operand_parts_are_extended_by_their_own_type() {
    agrees(
        "vadd.s32.s32.u32 {d}, {a}.b1, {b}.h1",
        scalar(
            VideoOp::Add,
            "ssu",
            false,
            Part::Byte(1),
            Part::Half(1),
            Second::None,
        ),
    );
    agrees(
        "vsub.u32.u32.s32 {d}, {a}.h0, {b}.b3",
        scalar(
            VideoOp::Sub,
            "uus",
            false,
            Part::Half(0),
            Part::Byte(3),
            Second::None,
        ),
    );
}

#[test]
fn sat_clamps_to_the_destination_type() {
    for (inst, signs) in [
        ("vadd.u32.u32.u32.sat", "uuu"),
        ("vsub.s32.s32.s32.sat", "sss"),
        ("vsub.u32.s32.s32.sat", "uss"),
    ] {
        let op = if inst.starts_with("vadd") {
            VideoOp::Add
        } else {
            VideoOp::Sub
        };
        agrees(
            &format!("{inst} {{d}}, {{a}}, {{b}}"),
            scalar(op, signs, true, W32, W32, Second::None),
        );
    }
}

#[test]
fn the_secondary_operation_combines_with_c() {
    for (op2, second) in [
        ("add", Second::Add),
        ("min", Second::Min),
        ("max", Second::Max),
    ] {
        agrees(
            &format!("vabsdiff.s32.u32.u32.{op2} {{d}}, {{a}}, {{b}}.b0, {{c}}"),
            scalar(VideoOp::Absdiff, "suu", false, W32, Part::Byte(0), second),
        );
        agrees(
            &format!("vmax.u32.s32.s32.sat.{op2} {{d}}, {{a}}.h1, {{b}}, {{c}}"),
            scalar(VideoOp::Max, "uss", true, Part::Half(1), W32, second),
        );
    }
}

#[test]
fn a_destination_part_merges_the_result_into_c() {
    for (sel, part) in [
        ("b0", Part::Byte(0)),
        ("b3", Part::Byte(3)),
        ("h1", Part::Half(1)),
    ] {
        agrees(
            &format!("vadd.s32.s32.s32.sat {{d}}.{sel}, {{a}}, {{b}}, {{c}}"),
            scalar(VideoOp::Add, "sss", true, W32, W32, Second::Merge(part)),
        );
    }
    // Without a part, the merge form writes the whole word (ptxas takes it so).
    agrees(
        "vmin.u32.u32.u32 {d}, {a}, {b}, {c}",
        scalar(VideoOp::Min, "uuu", false, W32, W32, Second::Merge(W32)),
    );
}

#[test]
fn shifts_clamp_or_wrap_their_count() {
    for (inst, op) in [
        ("vshl.u32.u32.u32.clamp", VideoOp::Shl { clamp: true }),
        ("vshl.s32.s32.u32.wrap.sat", VideoOp::Shl { clamp: false }),
        ("vshr.s32.s32.u32.clamp", VideoOp::Shr { clamp: true }),
        ("vshr.u32.s32.u32.wrap", VideoOp::Shr { clamp: false }),
    ] {
        let signs = match &inst[5..12] {
            "u32.u32" => "uuu",
            "s32.s32" => "ssu",
            _ => "usu",
        };
        let sat = inst.ends_with(".sat");
        agrees(
            &format!("{inst} {{d}}, {{a}}, {{b}}"),
            scalar(op, signs, sat, W32, W32, Second::None),
        );
    }
}

#[test]
fn vshr_clamp_add_gives_zludas_gpu_validated_results() {
    // ZLUDA's `vshr_clamp` test: inputs and outputs recorded on an NVIDIA GPU.
    let v = |a, b, c| {
        video(
            &scalar(
                VideoOp::Shr { clamp: true },
                "uuu",
                false,
                W32,
                W32,
                Second::Add,
            ),
            a,
            b,
            c,
        )
    };
    assert_eq!(v(0x8e2d_a590, 16, 0x248a_9f70), 613_100_957);
    assert_eq!(v(0x8e2d_a590, 32, 0x248a_9f70), 613_064_560);
    agrees(
        "vshr.u32.u32.u32.clamp.add {d}, {a}, {b}, {c}",
        scalar(
            VideoOp::Shr { clamp: true },
            "uuu",
            false,
            W32,
            W32,
            Second::Add,
        ),
    );
}

#[test]
fn vmad_negates_the_product_or_c_adds_one_with_po_and_scales() {
    let mad = |neg_product, neg_c, po, scale| VideoOp::Mad {
        neg_product,
        neg_c,
        po,
        scale,
    };
    for (inst, op, signs, sat) in [
        (
            "vmad.u32.u32.u32 {d}, {a}.h0, {b}.h0, {c}",
            mad(false, false, false, 0),
            "uuu",
            false,
        ),
        (
            "vmad.s32.s32.s32.sat {d}, -{a}, {b}, {c}",
            mad(true, false, false, 0),
            "sss",
            true,
        ),
        (
            "vmad.s32.u32.u32 {d}, -{a}, -{b}, -{c}",
            mad(false, true, false, 0),
            "suu",
            false,
        ),
        (
            "vmad.u32.u32.u32.po.shr7 {d}, {a}.b0, {b}.b1, {c}",
            mad(false, false, true, 7),
            "uuu",
            false,
        ),
        (
            "vmad.s32.s32.u32.sat.shr15 {d}, {a}, {b}, {c}",
            mad(false, false, false, 15),
            "ssu",
            true,
        ),
    ] {
        let (asel, bsel) = match inst {
            i if i.contains(".h0") => (Part::Half(0), Part::Half(0)),
            i if i.contains(".b0") => (Part::Byte(0), Part::Byte(1)),
            _ => (W32, W32),
        };
        agrees(inst, scalar(op, signs, sat, asel, bsel, Second::None));
    }
}

#[test]
fn vset_compares_and_combines_as_unsigned() {
    for (k, cmp) in ["eq", "ne", "lt", "le", "gt", "ge"].iter().enumerate() {
        agrees(
            &format!("vset.s32.u32.{cmp} {{d}}, {{a}}, {{b}}"),
            scalar(
                VideoOp::Set(VIDEO_CMPS[k]),
                "usu",
                false,
                W32,
                W32,
                Second::None,
            ),
        );
    }
    agrees(
        "vset.s32.s32.lt.add {d}, {a}.b2, {b}.b2, {c}",
        scalar(
            VideoOp::Set(ptxjit::frontend::checked::CmpOp::Lt),
            "uss",
            false,
            Part::Byte(2),
            Part::Byte(2),
            Second::Add,
        ),
    );
    agrees(
        "vset.u32.u32.ge {d}.b1, {a}, {b}, {c}",
        scalar(
            VideoOp::Set(ptxjit::frontend::checked::CmpOp::Ge),
            "uuu",
            false,
            W32,
            W32,
            Second::Merge(Part::Byte(1)),
        ),
    );
}

#[test]
fn simd_operations_take_default_lanes_of_a_and_b() {
    let ops = [
        ("vadd", VideoOp::Add),
        ("vsub", VideoOp::Sub),
        ("vavrg", VideoOp::Avrg),
        ("vabsdiff", VideoOp::Absdiff),
        ("vmin", VideoOp::Min),
        ("vmax", VideoOp::Max),
    ];
    for lanes in [2u8, 4] {
        for (name, op) in ops {
            for (types, signs, sat) in [
                ("u32.u32.u32", "uuu", false),
                ("s32.s32.s32.sat", "sss", true),
                ("u32.s32.s32.sat", "uss", true),
            ] {
                agrees(
                    &format!("{name}{lanes}.{types} {{d}}, {{a}}, {{b}}, {{c}}"),
                    simd(op, signs, sat, Shape::simd(lanes, false)),
                );
            }
            agrees(
                &format!("{name}{lanes}.s32.s32.u32.add {{d}}, {{a}}, {{b}}, {{c}}"),
                simd(op, "ssu", false, Shape::simd(lanes, true)),
            );
        }
    }
}

#[test]
fn simd_selectors_pick_elements_of_b_colon_a_and_masks_pick_lanes() {
    let shape = |lanes, asel, bsel, mask, add| Shape::Simd {
        lanes,
        asel,
        bsel,
        mask,
        add,
    };
    agrees(
        "vsub2.s32.s32.s32.sat {d}.h0, {a}.h13, {b}.h20, {c}",
        simd(
            VideoOp::Sub,
            "sss",
            true,
            shape(2, [3, 1, 0, 0], [0, 2, 0, 0], 0b01, false),
        ),
    );
    agrees(
        "vmin2.s32.u32.u32.add {d}.h1, {a}.h00, {b}.h22, {c}",
        simd(
            VideoOp::Min,
            "suu",
            false,
            shape(2, [0, 0, 0, 0], [2, 2, 0, 0], 0b10, true),
        ),
    );
    agrees(
        "vadd4.u32.u32.u32.sat {d}.b31, {a}.b7654, {b}.b0123, {c}",
        simd(
            VideoOp::Add,
            "uuu",
            true,
            shape(4, [4, 5, 6, 7], [3, 2, 1, 0], 0b1010, false),
        ),
    );
}

#[test]
fn vset2_and_vset4_compare_lanes() {
    for (k, cmp) in ["eq", "ne", "lt", "le", "gt", "ge"].iter().enumerate() {
        let set = VideoOp::Set(VIDEO_CMPS[k]);
        agrees(
            &format!("vset2.s32.u32.{cmp} {{d}}, {{a}}, {{b}}, {{c}}"),
            simd(set, "usu", false, Shape::simd(2, false)),
        );
        agrees(
            &format!("vset4.s32.s32.{cmp}.add {{d}}, {{a}}, {{b}}, {{c}}"),
            simd(set, "uss", false, Shape::simd(4, true)),
        );
    }
}

#[test]
fn vabsdiff4_is_cudas_per_byte_absolute_difference() {
    // `__vabsdiffu4` as CUDA documents it (crt/device_functions.h), the form its headers emit:
    // `vabsdiff4.u32.u32.u32 d, a, b, c` (c unused: every lane is written).
    agrees_with("vabsdiff4.u32.u32.u32 {d}, {a}, {b}, {c}", |a, b, _| {
        (0..4).fold(0, |d, k| {
            let (x, y) = ((a >> (8 * k)) & 0xff, (b >> (8 * k)) & 0xff);
            d | x.abs_diff(y) << (8 * k)
        })
    });
    // And as a sum of absolute differences (`.add`): `c` plus the four differences.
    agrees_with("vabsdiff4.u32.s32.s32.add {d}, {a}, {b}, {c}", |a, b, c| {
        (0..4).fold(c, |d, k| {
            let (x, y) = ((a >> (8 * k)) as i8, (b >> (8 * k)) as i8);
            d.wrapping_add((x as i32 - y as i32).unsigned_abs())
        })
    });
}

#[test]
fn bad_selectors_and_negations_are_errors_naming_them() {
    let cases = [
        ("vadd.u32.u32.u32 %r0, %r1.b4, %r2;", "'.b4' is not a part"),
        (
            "vadd.u32.u32.u32.add %r0.b1, %r1, %r2, %r3;",
            "takes no selector",
        ),
        (
            "vadd.u32.u32.u32.add %r0, %r1, %r2, %r3.h0;",
            "operand c takes no selector",
        ),
        (
            "vadd2.u32.u32.u32 %r0, %r1.h4, %r2, %r3;",
            "elements of b:a",
        ),
        (
            "vadd2.u32.u32.u32 %r0.h01, %r1, %r2, %r3;",
            "a mask of 2 lanes",
        ),
        (
            "vadd4.u32.u32.u32 %r0, %r1.b012, %r2, %r3;",
            "4 elements of b:a",
        ),
        ("vadd.u32.u32.u32 %r0, -%r1, %r2;", "negates only vmad"),
        (
            "vmad.u32.u32.u32.po %r0, -%r1, %r2, %r3;",
            "vmad.po takes no negated",
        ),
        ("add.u32 %r0, -%r1, %r2;", "negates only vmad"),
        (
            "vadd2.u32.u32.u32.sat.add %r0, %r1, %r2, %r3;",
            "unsupported instruction",
        ),
    ];
    for (body, want) in cases {
        let e = load_error(body);
        assert!(e.contains(want), "{body}: {e}");
        assert!(e.contains("k.ptx:"), "{body}: no location in {e}");
    }
}
