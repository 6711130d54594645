//! The JIT against the reference interpreter, bit for bit: every compiler-generated kernel the
//! interpreter can run (no barriers, collectives, atomics or calls), and random straight-line
//! half-precision programs (a fixed seed here; a long campaign as an ignored test).

mod common;

use common::Rng;
use common::case::{kernel_dirs, load_case};
use ptxjit::interp::Interpreter;
use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

/// The compiled forms: one thread at a time, lane groups for any block, and lane groups for
/// launches of `block_x` threads in x (64 lanes a group where that allows).
fn forms(block_x: u32) -> [CompileOptions; 3] {
    [
        LaneGroups::Off,
        LaneGroups::Always,
        LaneGroups::AlwaysForBlockX(block_x),
    ]
    .map(|lane_groups| CompileOptions {
        lane_groups,
        ..CompileOptions::default()
    })
}

#[test]
fn compiler_kernels_give_the_same_bits_in_the_jit_and_the_interpreter() {
    let mut compared = 0;
    for dir in kernel_dirs() {
        let interp = load_case(&dir);
        let text = std::fs::read_to_string(&interp.ptx).unwrap();
        let interpreter = Interpreter::from_ptx("k.ptx", &text).unwrap();
        match interpreter.launch(&interp.entry, &interp.config, &interp.args) {
            Err(e) if e.to_string().contains("not supported by the interpreter") => continue,
            Err(e) => panic!("{}: {e}", dir.display()),
            Ok(()) => {}
        }
        for opts in forms(interp.config.block.x) {
            let jit = load_case(&dir);
            let module = Module::from_ptx_named("k.ptx", &text, &opts).unwrap();
            module
                .kernel(&jit.entry)
                .unwrap()
                .launch_with(&jit.config, &jit.args)
                .unwrap();
            for (i, (a, b)) in jit.buffers.iter().zip(&interp.buffers).enumerate() {
                if let (Some(a), Some(b)) = (a, b) {
                    assert!(
                        a.to_bytes() == b.to_bytes(),
                        "{} ({:?}): parameter {i} differs",
                        dir.display(),
                        opts.lane_groups
                    );
                }
            }
        }
        compared += 1;
    }
    assert!(
        compared >= 15,
        "only {compared} kernels ran in the interpreter"
    );
}

/// A random program of `len` half-precision instructions over 8 `.b32` and 8 `.b16` registers
/// loaded from the input, all stored back to the output.
fn random_program(rng: &mut Rng, len: usize) -> String {
    let x2 = ["f16x2", "bf16x2"];
    let forms = [
        "add{m}.{t} %w{a}, %w{b}, %w{c};",
        "sub{m}.{t} %w{a}, %w{b}, %w{c};",
        "mul{m}.{t} %w{a}, %w{b}, %w{c};",
        "fma.rn{f}.{t} %w{a}, %w{b}, %w{c}, %w{d};",
        "min{n}.{t} %w{a}, %w{b}, %w{c};",
        "max{n}.{t} %w{a}, %w{b}, %w{c};",
        "neg.{t} %w{a}, %w{b};",
        "abs.{t} %w{a}, %w{b};",
        "set.{cmp}.{t}.{t} %w{a}, %w{b}, %w{c};",
        "mov.b32 {%h{a}, %h{b}}, %w{c};",
        "mov.b32 %w{a}, {%h{b}, %h{c}};",
        "cvt.rn.f16.f32 %h{a}, %f{b};",
        "cvt.f32.f16 %f{a}, %h{b};",
        "cvt.rn.f16x2.f32 %w{a}, %f{b}, %f{c};",
        "add.f32 %f{a}, %f{b}, %f{c};",
        "fma.rn.f16 %h{a}, %h{b}, %h{c}, %h{d};",
        "min.NaN.xorsign.abs.f16 %h{a}, %h{b}, %h{c};",
        "mul.ftz.sat.f16 %h{a}, %h{b}, %h{c};",
        "tanh.approx.{t} %w{a}, %w{b};",
    ];
    let cmps = [
        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    ];
    let mut body = String::new();
    for _ in 0..len {
        let r = rng.next();
        let form = forms[(r % forms.len() as u64) as usize];
        let t = x2[((r >> 8) & 1) as usize];
        let f16 = t == "f16x2";
        let m = if f16 {
            ["", ".rn", ".ftz", ".sat", ".ftz.sat"][((r >> 9) % 5) as usize]
        } else {
            ""
        };
        let f = if f16 {
            ["", ".ftz", ".sat", ".relu", ".oob"][((r >> 12) % 5) as usize]
        } else {
            [""; 3][0]
        };
        let f = if !f16 && (r >> 12) % 3 == 1 {
            ".relu"
        } else {
            f
        };
        let n = ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"][((r >> 15) % 4) as usize];
        let n = if f16 && (r >> 17) & 1 == 1 {
            format!(".ftz{n}")
        } else {
            n.to_string()
        };
        body += &form
            .replace("{m}", m)
            .replace("{f}", f)
            .replace("{n}", &n)
            .replace("{t}", t)
            .replace("{cmp}", cmps[((r >> 20) % 14) as usize])
            .replace("{a}", &((r >> 24) % 8).to_string())
            .replace("{b}", &((r >> 28) % 8).to_string())
            .replace("{c}", &((r >> 32) % 8).to_string())
            .replace("{d}", &((r >> 36) % 8).to_string());
        body.push('\n');
    }
    let mut loads = String::new();
    let mut stores = String::new();
    for i in 0..8 {
        loads += &format!(
            "ld.global.b32 %w{i}, [%rd1+{}];\nld.global.b16 %h{i}, [%rd1+{}];\ncvt.f32.f16 %f{i}, %h{i};\n",
            4 * i,
            32 + 2 * i
        );
        stores += &format!(
            "st.global.b32 [%rd2+{}], %w{i};\nst.global.b16 [%rd2+{}], %h{i};\nst.global.f32 [%rd2+{}], %f{i};\n",
            4 * i,
            32 + 2 * i,
            48 + 4 * i
        );
    }
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 inp, .param .u64 out)\n{{\n\
         .reg .b32 %w<8>;\n.reg .b16 %h<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<6>;\n.reg .b32 %t;\n\
         ld.param.u64 %rd3, [inp];\nld.param.u64 %rd4, [out];\nmov.u32 %t, %tid.x;\nmul.wide.u32 %rd5, %t, 96;\n\
         add.s64 %rd1, %rd3, %rd5;\nadd.s64 %rd2, %rd4, %rd5;\n{loads}{body}{stores}ret;\n}}\n"
    )
}

fn run_campaign(programs: usize, seed: u64) {
    let mut rng = Rng(seed);
    let specials: Vec<u16> = common::special_halves(10, 5)
        .into_iter()
        .chain(common::special_halves(7, 8))
        .collect();
    for p in 0..programs {
        let text = random_program(&mut rng, 24);
        let threads = 64;
        let input: Vec<u8> = (0..threads * 96)
            .map(|i| {
                let r = rng.next();
                // Mostly special values, some random bits.
                let h = if r.is_multiple_of(3) {
                    r as u16
                } else {
                    specials[(r >> 8) as usize % specials.len()]
                };
                (h >> (8 * (i % 2))) as u8
            })
            .collect();
        // Each form in turn.
        let opts = &forms(threads as u32)[p % 3];
        let module =
            Module::from_ptx_named("k.ptx", &text, opts).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let (inp, out_jit, out_interp) = (
            DeviceBuffer::from_slice(&input).unwrap(),
            DeviceBuffer::zeroed(threads * 96).unwrap(),
            DeviceBuffer::zeroed(threads * 96).unwrap(),
        );
        module
            .kernel("k")
            .unwrap()
            .launch(
                1,
                threads as u32,
                &[Arg::buffer(&inp), Arg::buffer(&out_jit)],
            )
            .unwrap();
        let interp = Interpreter::from_ptx("k.ptx", &text).unwrap();
        let config = ptxjit::LaunchConfig {
            grid: 1.into(),
            block: (threads as u32).into(),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        interp
            .launch("k", &config, &[Arg::buffer(&inp), Arg::buffer(&out_interp)])
            .unwrap();
        let (a, b) = (out_jit.to_bytes(), out_interp.to_bytes());
        if a != b {
            let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap();
            panic!("program {p} (seed {seed}) differs at byte {at}:\n{text}");
        }
    }
}

#[test]
fn random_half_programs_agree_between_jit_and_interpreter() {
    run_campaign(60, 0xD1FF);
}

#[test]
#[ignore = "long campaign: cargo test --release --test differential -- --ignored"]
fn random_half_programs_agree_long_campaign() {
    run_campaign(20_000, 0xC0DE);
}
