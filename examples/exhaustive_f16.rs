//! Exhaustive check: all 2^32 input pairs of f16 `add sub mul min max` (with and without
//! `.ftz`) through the JIT, compiled one thread at a time and in lane groups, and the
//! reference; prints the mismatch count of each form in each. The group helpers are the
//! widest this CPU has; `PTXJIT_HELPERS=avx2` checks the AVX2 ones on an AVX-512 CPU.
//!
//! cargo run --release --example exhaustive_f16 [FORM...]   (e.g. `add.ftz.f16`)

use std::time::Instant;

use ptxjit::frontend::checked::{FloatOp, Op};
use ptxjit::frontend::isa::decode;
use ptxjit::semantics::half::F16;
use ptxjit::semantics::half_ops;
use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

/// `a` values per launch: 256 × 65,536 pairs.
const CHUNK: u32 = 256;

fn kernel(form: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 out, .param .u32 abase)\n{{\n\
         .reg .b32 %r<8>;\n.reg .b16 %h<4>;\n.reg .b64 %rd<4>;\n\
         mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.s32 %r4, %r1, %r2, %r3;\n\
         ld.param.u32 %r5, [abase];\nshr.u32 %r6, %r4, 16;\nadd.u32 %r6, %r6, %r5;\n\
         cvt.u16.u32 %h1, %r6;\ncvt.u16.u32 %h2, %r4;\n{form} %h3, %h1, %h2;\n\
         ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r4, 2;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u16 [%rd3], %h3;\nret;\n}}\n"
    )
}

fn reference(form: &str) -> impl Fn(u16, u16) -> u16 + Sync {
    let Ok(Op::Float { op, mods, .. }) = decode(form) else {
        panic!("{form} is not a half instruction")
    };
    move |a, b| match op {
        FloatOp::Min | FloatOp::Max => half_ops::min_max(F16, op == FloatOp::Max, mods, a, b),
        _ => half_ops::arith(F16, op, mods, a, b, 0),
    }
}

fn check(form: &str, lane_groups: LaneGroups) -> u64 {
    let opts = CompileOptions {
        lane_groups,
        ..CompileOptions::default()
    };
    let module = Module::from_ptx_named(form, &kernel(form), &opts).expect("kernel compiles");
    let k = module.kernel("k").expect("kernel k");
    let reference = reference(form);
    let out = DeviceBuffer::zeroed(CHUNK as usize * 65536 * 2).expect("buffer");
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut mismatches = 0u64;
    for base in (0..65536u32).step_by(CHUNK as usize) {
        k.launch(
            CHUNK * 65536 / 256,
            256,
            &[Arg::buffer(&out), Arg::u32(base)],
        )
        .expect("launch");
        let got: Vec<u16> = out.to_vec();
        let per = got.len().div_ceil(workers);
        mismatches += std::thread::scope(|s| {
            let handles: Vec<_> = got
                .chunks(per)
                .enumerate()
                .map(|(w, part)| {
                    let reference = &reference;
                    s.spawn(move || {
                        let mut bad = 0u64;
                        for (j, &g) in part.iter().enumerate() {
                            let i = w * per + j;
                            let (a, b) = ((base + (i >> 16) as u32) as u16, i as u16);
                            if g != reference(a, b) {
                                if bad == 0 {
                                    eprintln!(
                                        "{form}: {a:#06x}, {b:#06x}: got {g:#06x}, want {:#06x}",
                                        reference(a, b)
                                    );
                                }
                                bad += 1;
                            }
                        }
                        bad
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("worker"))
                .sum::<u64>()
        });
    }
    mismatches
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let forms: Vec<String> = if args.is_empty() {
        ["add", "sub", "mul", "min", "max"]
            .iter()
            .flat_map(|op| [format!("{op}.f16"), format!("{op}.ftz.f16")])
            .collect()
    } else {
        args
    };
    for form in &forms {
        for (compiled, lane_groups) in [
            ("one thread", LaneGroups::Off),
            ("lane groups", LaneGroups::Always),
        ] {
            let start = Instant::now();
            let bad = check(form, lane_groups);
            println!(
                "{form:<14} {compiled:<11} 4294967296 pairs, {bad} mismatches ({:.0} s)",
                start.elapsed().as_secs_f64()
            );
        }
    }
}
