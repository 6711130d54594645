//! Group E's integer instructions, one rule per test, in both compiled forms (lane groups and
//! one thread at a time), against the reference written from the ISA's semantics blocks
//! (`ptxjit::semantics::int`): edge values crossed with each other, then random inputs.

mod common;

use common::{Rng, W, elementwise_with};
use ptxjit::frontend::checked::{HalvesOp, PrmtMode};
use ptxjit::semantics::int as reference;
use ptxjit::{CompileOptions, LaneGroups};

/// Values where the rules change: zero, ones, sign and byte and 24-bit boundaries, shifts
/// of 31, 32 and 33.
const EDGES: [u64; 16] = [
    0,
    1,
    2,
    31,
    32,
    33,
    0x7F,
    0x80,
    0xFF,
    0x7F_FFFF,
    0x80_0000,
    0xFF_FFFF,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFE,
    0xFFFF_FFFF,
];

/// `sources` operand columns: every pair (or triple) of edge values, then random words.
fn columns(sources: usize, bits: u32) -> Vec<Vec<u64>> {
    let mut cols = vec![Vec::new(); sources];
    let edges: Vec<u64> = EDGES
        .iter()
        .flat_map(|&e| [e, e << 32 | e, e << 32, !e])
        .map(|e| if bits == 64 { e } else { e & 0xFFFF_FFFF })
        .collect();
    let n = edges.len();
    for i in 0..n * n {
        cols[0].push(edges[i % n]);
        cols[1 % sources].push(edges[i / n]);
        if sources == 3 {
            cols[2].push(edges[(i * 7) % n]);
        }
    }
    let mut rng = Rng(0xE1E1);
    for _ in 0..4096 {
        for c in cols.iter_mut() {
            let v = rng.next();
            c.push(if bits == 64 { v } else { v & 0xFFFF_FFFF });
        }
    }
    cols
}

/// Runs `inst` over the columns in both compiled forms; each result must be `expect`'s.
fn agrees(inst: &str, bits: u32, sources: usize, expect: impl Fn(&[u64]) -> u64) {
    let w = if bits == 64 { W::B64 } else { W::B32 };
    let cols = columns(sources, bits);
    let srcs: Vec<(W, &[u64])> = cols.iter().map(|c| (w, c.as_slice())).collect();
    for lanes in [LaneGroups::Always, LaneGroups::Off] {
        let opts = CompileOptions {
            lane_groups: lanes,
            ..CompileOptions::default()
        };
        let got = elementwise_with(&opts, inst, w, &srcs);
        for (i, g) in got.iter().enumerate() {
            let x: Vec<u64> = cols.iter().map(|c| c[i]).collect();
            assert_eq!(*g, expect(&x), "{inst} {x:x?} ({lanes:?})");
        }
    }
}

#[test]
fn add_cc_sets_the_carry_that_addc_adds() {
    // The carry out of a+b, read back by an addc of zeros (in lane groups, neighbouring
    // lanes carry differently: each thread has its own flag).
    agrees(
        "add.cc.u32 %r0, {a}, {b};\naddc.u32 {d}, 0, 0",
        32,
        2,
        |x| reference::add_carry(32, x[0], x[1], false).1 as u64,
    );
    agrees(
        "add.cc.u64 %rd9, {a}, {b};\naddc.u64 {d}, 0, 0",
        64,
        2,
        |x| reference::add_carry(64, x[0], x[1], false).1 as u64,
    );
}

#[test]
fn addc_cc_adds_the_carry_in_and_carries_out() {
    // Carry in from a+b, then c + a + carry, whose carry out a final addc reads.
    let inst = ".reg .b32 %s<2>;\nadd.cc.u32 %s0, {a}, {b};\naddc.cc.u32 %s1, {c}, {a};\naddc.u32 {d}, %s1, 0";
    agrees(inst, 32, 3, |x| {
        let (_, c0) = reference::add_carry(32, x[0], x[1], false);
        let (s1, c1) = reference::add_carry(32, x[2], x[0], c0);
        reference::add_carry(32, s1, 0, c1).0
    });
}

#[test]
fn sub_cc_and_subc_chain_their_borrows() {
    let inst = ".reg .b64 %s<2>;\nsub.cc.u64 %s0, {a}, {b};\nsubc.cc.u64 %s1, {c}, {a};\nsubc.u64 {d}, %s1, 0";
    agrees(inst, 64, 3, |x| {
        let (_, c0) = reference::sub_carry(64, x[0], x[1], true);
        let (s1, c1) = reference::sub_carry(64, x[2], x[0], c0);
        reference::sub_carry(64, s1, 0, c1).0
    });
}

#[test]
fn sub_cc_leaves_the_carry_not_the_borrow_in_cf() {
    // addc after sub.cc adds 1 exactly when a >= b (no borrow), as on the GPU.
    agrees(
        "sub.cc.u32 %r0, {a}, {b};\naddc.u32 {d}, 0, 0",
        32,
        2,
        |x| (x[0] >= x[1]) as u64,
    );
    // subc after add.cc takes one more exactly when the addition did not carry.
    agrees(
        "add.cc.u32 %r0, {a}, {b};\nsubc.u32 {d}, 0, 0",
        32,
        2,
        |x| {
            if x[0] + x[1] > 0xFFFF_FFFF {
                0
            } else {
                0xFFFF_FFFF
            }
        },
    );
}

#[test]
fn mad_cc_adds_the_product_half_and_madc_the_carry() {
    for (ty, signed) in [("u32", false), ("s32", true)] {
        for mode in ["lo", "hi"] {
            let inst = format!(
                ".reg .b32 %s<2>;\nmad.{mode}.cc.{ty} %s0, {{a}}, {{b}}, {{c}};\n\
                 madc.{mode}.{ty} {{d}}, {{a}}, {{c}}, %s0"
            );
            agrees(&inst, 32, 3, |x| {
                let p = reference::mul_half(32, signed, mode == "hi", x[0], x[1]);
                let (s0, c0) = reference::add_carry(32, p, x[2], false);
                let q = reference::mul_half(32, signed, mode == "hi", x[0], x[2]);
                reference::add_carry(32, q, s0, c0).0
            });
        }
    }
}

#[test]
fn mul24_and_mad24_keep_48_bits_of_24_bit_operands() {
    for (ty, signed) in [("u32", false), ("s32", true)] {
        for hi in [false, true] {
            let mode = if hi { "hi" } else { "lo" };
            agrees(
                &format!("mul24.{mode}.{ty} {{d}}, {{a}}, {{b}}"),
                32,
                2,
                |x| reference::mul24(signed, hi, x[0] as u32, x[1] as u32) as u64,
            );
            agrees(
                &format!("mad24.{mode}.{ty} {{d}}, {{a}}, {{b}}, {{c}}"),
                32,
                3,
                |x| {
                    let p = reference::mul24(signed, hi, x[0] as u32, x[1] as u32);
                    p.wrapping_add(x[2] as u32) as u64
                },
            );
        }
    }
}

#[test]
fn sad_adds_the_absolute_difference() {
    for (ty, bits, signed) in [("u32", 32, false), ("s32", 32, true), ("s64", 64, true)] {
        agrees(
            &format!("sad.{ty} {{d}}, {{a}}, {{b}}, {{c}}"),
            bits,
            3,
            |x| reference::sad(bits, signed, x[0], x[1], x[2]),
        );
    }
}

#[test]
fn bfind_finds_the_top_bit_that_differs_from_the_sign() {
    let types = [
        ("u32", 32, false),
        ("s32", 32, true),
        ("u64", 64, false),
        ("s64", 64, true),
    ];
    for (ty, bits, signed) in types {
        for shiftamt in [false, true] {
            let q = if shiftamt { ".shiftamt" } else { "" };
            // The result is a .u32 whatever the source's width.
            let inst =
                format!(".reg .b32 %s;\nbfind{q}.{ty} %s, {{a}};\ncvt.u{bits}.u32 {{d}}, %s");
            agrees(&inst, bits, 1, |x| {
                reference::bfind(bits, signed, shiftamt, x[0]) as u64
            });
        }
    }
}

#[test]
fn bmsk_follows_the_isa_semantics_block() {
    for clamp in [false, true] {
        let mode = if clamp { "clamp" } else { "wrap" };
        agrees(
            &format!("bmsk.{mode}.b32 {{d}}, {{a}}, {{b}}"),
            32,
            2,
            |x| reference::bmsk(clamp, x[0] as u32, x[1] as u32) as u64,
        );
    }
}

#[test]
fn dp4a_and_dp2a_sum_products_of_parts() {
    for (at, a_signed) in [("u32", false), ("s32", true)] {
        for (bt, b_signed) in [("u32", false), ("s32", true)] {
            agrees(
                &format!("dp4a.{at}.{bt} {{d}}, {{a}}, {{b}}, {{c}}"),
                32,
                3,
                |x| {
                    reference::dp4a(a_signed, b_signed, x[0] as u32, x[1] as u32, x[2] as u32)
                        as u64
                },
            );
            for hi in [false, true] {
                let mode = if hi { "hi" } else { "lo" };
                let inst = format!("dp2a.{mode}.{at}.{bt} {{d}}, {{a}}, {{b}}, {{c}}");
                agrees(&inst, 32, 3, |x| {
                    let (a, b, c) = (x[0] as u32, x[1] as u32, x[2] as u32);
                    reference::dp2a(hi, a_signed, b_signed, a, b, c) as u64
                });
            }
        }
    }
}

#[test]
fn prmt_modes_pick_the_bytes_of_their_tables() {
    for (name, mode) in [
        ("f4e", PrmtMode::F4e),
        ("b4e", PrmtMode::B4e),
        ("rc8", PrmtMode::Rc8),
        ("ecl", PrmtMode::Ecl),
        ("ecr", PrmtMode::Ecr),
        ("rc16", PrmtMode::Rc16),
    ] {
        agrees(
            &format!("prmt.b32.{name} {{d}}, {{a}}, {{b}}, {{c}}"),
            32,
            3,
            |x| reference::prmt_mode(mode, x[0] as u32, x[1] as u32, x[2] as u32) as u64,
        );
    }
    agrees("prmt.b32 {d}, {a}, {b}, {c}", 32, 3, |x| {
        reference::prmt(x[0] as u32, x[1] as u32, x[2] as u32) as u64
    });
}

#[test]
fn fns_finds_the_nth_set_bit_up_or_down_from_base() {
    // base = b & 31 (the ISA leaves a larger one undefined), offset = c rem 40 (signed).
    let inst = ".reg .b32 %t<2>;\nand.b32 %t0, {b}, 31;\nrem.s32 %t1, {c}, 40;\nfns.b32 {d}, {a}, %t0, %t1";
    agrees(inst, 32, 3, |x| {
        let offset = (x[2] as u32 as i32) % 40;
        reference::fns(x[0] as u32, x[1] as u32 & 31, offset) as u64
    });
}

#[test]
fn lop3_computes_the_function_whose_table_is_immlut() {
    // The ISA's examples, the tables nvcc's headers use, the constants, and a spread of others.
    let luts = [
        0x80, 0xFE, 0x40, 0x1A, 0x00, 0xFF, 0x96, 0xE8, 0x8E, 0xB2, 0x4D, 0xCA, 0xF0, 0xCC, 0xAA,
        0x3C, 0x01, 0x7F,
    ];
    for lut in luts {
        agrees(
            &format!("lop3.b32 {{d}}, {{a}}, {{b}}, {{c}}, {lut:#x}"),
            32,
            3,
            |x| reference::lop3(lut, x[0] as u32, x[1] as u32, x[2] as u32) as u64,
        );
    }
}

#[test]
fn lop3_boolop_sets_p_from_d_being_nonzero() {
    // q is a < b (unsigned); p = (d != 0) BoolOp q comes back as d inverted when p is set.
    for (op, f) in [
        ("or", (|d, q| d || q) as fn(bool, bool) -> bool),
        ("and", |d, q| d && q),
    ] {
        let inst = format!(
            ".reg .pred %q<2>;\n.reg .b32 %t<2>;\nsetp.lo.u32 %q1, {{a}}, {{b}};\n\
             lop3.{op}.b32 %t0|%q0, {{a}}, {{b}}, {{c}}, 0x80, %q1;\n\
             selp.b32 %t1, -1, 0, %q0;\nxor.b32 {{d}}, %t0, %t1"
        );
        agrees(&inst, 32, 3, |x| {
            let (a, b, c) = (x[0] as u32, x[1] as u32, x[2] as u32);
            let d = reference::lop3(0x80, a, b, c);
            (if f(d != 0, a < b) { !d } else { d }) as u64
        });
    }
    // `_` takes d when only p is wanted.
    agrees(
        ".reg .pred %q<2>;\nsetp.lo.u32 %q1, {a}, {b};\n\
         lop3.and.b32 _|%q0, {a}, {b}, {c}, 0xFE, %q1;\nselp.b32 {d}, 1, 0, %q0",
        32,
        3,
        |x| {
            let (a, b, c) = (x[0] as u32, x[1] as u32, x[2] as u32);
            (reference::lop3(0xFE, a, b, c) != 0 && a < b) as u64
        },
    );
}

#[test]
fn packed_16x2_add_sub_min_max_work_on_each_half() {
    for (name, op) in [
        ("add", HalvesOp::Add),
        ("sub", HalvesOp::Sub),
        ("min", HalvesOp::Min),
        ("max", HalvesOp::Max),
    ] {
        for (ty, signed) in [("u16x2", false), ("s16x2", true)] {
            agrees(&format!("{name}.{ty} {{d}}, {{a}}, {{b}}"), 32, 2, |x| {
                reference::halves(op, signed, false, x[0] as u32, x[1] as u32) as u64
            });
        }
    }
    for (name, op) in [("min", HalvesOp::Min), ("max", HalvesOp::Max)] {
        agrees(
            &format!("{name}.relu.s16x2 {{d}}, {{a}}, {{b}}"),
            32,
            2,
            |x| reference::halves(op, true, true, x[0] as u32, x[1] as u32) as u64,
        );
    }
}

#[test]
fn min_max_relu_s32_clamp_a_negative_result_to_zero() {
    agrees("min.relu.s32 {d}, {a}, {b}", 32, 2, |x| {
        (x[0] as i32).min(x[1] as i32).max(0) as u64
    });
    agrees("max.relu.s32 {d}, {a}, {b}", 32, 2, |x| {
        (x[0] as i32).max(x[1] as i32).max(0) as u64
    });
}

#[test]
fn cvt_pack_sat_saturates_both_sources_and_packs_them_above_c() {
    for bits in [2u32, 4, 8] {
        for signed in [false, true] {
            let t = format!("{}{bits}", if signed { 's' } else { 'u' });
            let inst = format!("cvt.pack.sat.{t}.s32.b32 {{d}}, {{a}}, {{b}}, {{c}}");
            agrees(&inst, 32, 3, |x| {
                reference::pack_sat(bits, signed, x[0] as i32, x[1] as i32, x[2] as u32) as u64
            });
        }
    }
    for t in ["u16", "s16"] {
        let inst = format!("cvt.pack.sat.{t}.s32 {{d}}, {{a}}, {{b}}");
        agrees(&inst, 32, 2, |x| {
            reference::pack_sat(16, t == "s16", x[0] as i32, x[1] as i32, 0) as u64
        });
    }
}

#[test]
fn cvt_sat_clamps_to_the_destination_range_from_and_to_64_bits() {
    let clamp = |v: i128, signed: bool, bits: u32| -> u64 {
        let (lo, hi) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        (v.clamp(lo, hi) as u64)
            & if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            }
    };
    let cols = columns(1, 64);
    for (dst, src) in [
        ("u64", "s64"),
        ("s64", "u64"),
        ("s32", "s64"),
        ("u32", "u64"),
        ("u32", "s64"),
        ("s8", "u64"),
        ("u16", "s64"),
        ("u64", "s32"),
    ] {
        let (dbits, sbits): (u32, u32) = (dst[1..].parse().unwrap(), src[1..].parse().unwrap());
        let wide = |bits: u32| if bits == 64 { W::B64 } else { W::B32 };
        let input: Vec<u64> = cols[0]
            .iter()
            .map(|&v| if sbits == 64 { v } else { v & 0xFFFF_FFFF })
            .collect();
        let inst = format!("cvt.sat.{dst}.{src} {{d}}, {{a}}");
        for lanes in [LaneGroups::Always, LaneGroups::Off] {
            let opts = CompileOptions {
                lane_groups: lanes,
                ..CompileOptions::default()
            };
            let got = elementwise_with(&opts, &inst, wide(dbits), &[(wide(sbits), &input)]);
            for (g, &x) in got.iter().zip(&input) {
                let v = if src.starts_with('s') {
                    (x << (64 - sbits)) as i64 as i128 >> (64 - sbits)
                } else {
                    x as i128
                };
                let mask = if dbits >= 32 {
                    u64::MAX >> (64 - dbits.max(32))
                } else {
                    u64::MAX >> 32
                };
                let want = clamp(v, dst.starts_with('s'), dbits);
                // Narrow destinations land sign- or zero-extended in a 32-bit register.
                let want = if dbits < 32 && dst.starts_with('s') {
                    (want << (64 - dbits)) as i64 >> (64 - dbits)
                } else {
                    want as i64
                } as u64
                    & mask;
                assert_eq!(*g & mask, want, "{inst} {x:#x} ({lanes:?})");
            }
        }
    }
}
