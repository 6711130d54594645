//! Test helpers: run one PTX instruction elementwise over arrays of inputs.
#![allow(dead_code)]

pub mod case;

use ptxjit::{Arg, DeviceBuffer, Module};

/// A width of raw element bits, as a PTX register type.
#[derive(Clone, Copy)]
pub enum W {
    B8,
    B16,
    B32,
    B64,
}

impl W {
    fn name(self) -> &'static str {
        match self {
            W::B8 => "b8",
            W::B16 => "b16",
            W::B32 => "b32",
            W::B64 => "b64",
        }
    }
    pub fn bytes(self) -> usize {
        match self {
            W::B8 => 1,
            W::B16 => 2,
            W::B32 => 4,
            W::B64 => 8,
        }
    }
    fn reg(self) -> &'static str {
        match self {
            W::B8 | W::B16 => "b16",
            W::B32 => "b32",
            W::B64 => "b64",
        }
    }
}

/// Runs `inst` (with `{d}`, `{a}`, `{b}`, `{c}` standing for the destination and sources)
/// once per element: thread i reads element i of each source array and writes element i of
/// the result. Values are raw bits in u64.
/// Compiled in lane groups from the start (for its blocks of 128 threads: the widest groups
/// where the kernel allows), so that every form also runs in the group code (the default
/// compiles them only for kernels that have run long enough).
pub fn elementwise(inst: &str, dst: W, srcs: &[(W, &[u64])]) -> Vec<u64> {
    let opts = ptxjit::CompileOptions {
        lane_groups: ptxjit::LaneGroups::AlwaysForBlockX(128),
        ..ptxjit::CompileOptions::default()
    };
    elementwise_with(&opts, inst, dst, srcs)
}

/// [`elementwise`] compiled with `opts`.
pub fn elementwise_with(
    opts: &ptxjit::CompileOptions,
    inst: &str,
    dst: W,
    srcs: &[(W, &[u64])],
) -> Vec<u64> {
    let n = srcs[0].1.len();
    let names = ["a", "b", "c"];
    let mut params = vec![".param .u64 out".to_string()];
    let mut body = String::new();
    let mut text = inst.replace("{d}", "%d");
    for (i, (w, _)) in srcs.iter().enumerate() {
        params.push(format!(".param .u64 in_{}", names[i]));
        body += &format!(
            "ld.param.u64 %rd{i}, [in_{n}];\nmul.wide.u32 %rd9, %r4, {b};\nadd.s64 %rd{i}, %rd{i}, %rd9;\nld.global.{t} %{n}, [%rd{i}];\n",
            n = names[i],
            b = w.bytes(),
            t = w.name()
        );
        text = text.replace(&format!("{{{}}}", names[i]), &format!("%{}", names[i]));
    }
    let regs: String = srcs
        .iter()
        .enumerate()
        .map(|(i, (w, _))| format!(".reg .{} %{};\n", w.reg(), names[i]))
        .collect();
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k({params}, .param .u32 n)\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<10>;\n.reg .{dreg} %d;\n{regs}\
         mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.s32 %r4, %r1, %r2, %r3;\n\
         ld.param.u32 %r5, [n];\nsetp.ge.u32 %p1, %r4, %r5;\n@%p1 bra DONE;\n{body}{text};\n\
         ld.param.u64 %rd8, [out];\nmul.wide.u32 %rd9, %r4, {db};\nadd.s64 %rd8, %rd8, %rd9;\nst.global.{dt} [%rd8], %d;\n\
         DONE:\nret;\n}}\n",
        params = params.join(", "),
        dreg = dst.reg(),
        db = dst.bytes(),
        dt = dst.name(),
    );
    let module =
        Module::from_ptx_named("<ptx>", &ptx, opts).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let kernel = module.kernel("k").unwrap();
    let bufs: Vec<DeviceBuffer> = srcs
        .iter()
        .map(|(w, vals)| {
            let bytes: Vec<u8> = vals
                .iter()
                .flat_map(|v| v.to_le_bytes()[..w.bytes()].to_vec())
                .collect();
            DeviceBuffer::from_slice(&bytes).unwrap()
        })
        .collect();
    let out = DeviceBuffer::zeroed(n * dst.bytes()).unwrap();
    let mut args = vec![Arg::buffer(&out)];
    args.extend(bufs.iter().map(Arg::buffer));
    args.push(Arg::u32(n as u32));
    kernel.launch((n as u32).div_ceil(128), 128, &args).unwrap();
    let bytes = out.to_bytes();
    bytes
        .chunks(dst.bytes())
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// A deterministic xorshift stream.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// At least 40 half bit patterns worth testing, for a format with `mant` fraction bits and
/// `exp` exponent bits: ±0, ±min/max subnormal, ±min/max normal, ±1 and its neighbours, values
/// around 0.5, ±inf, quiet and signalling NaNs with payloads, rounding midpoints, the OOB NaN.
pub fn special_halves(mant: u32, exp: u32) -> Vec<u16> {
    let inf = (((1u32 << exp) - 1) << mant) as u16;
    let min_normal = 1u16 << mant;
    let one = (((1u32 << (exp - 1)) - 1) << mant) as u16;
    let half = one - min_normal;
    let quiet = 1u16 << (mant - 1);
    let positive = [
        0,
        1,
        2,
        3,
        min_normal - 1,
        min_normal,
        min_normal + 1,
        half - 1,
        half,
        half + 1,
        one - 1,
        one,
        one + 1,
        one | quiet,
        one + min_normal,
        inf - 1,
        inf,
        inf | 1,
        inf | quiet,
        inf | quiet | 5,
        0x7FFF,
        0x7FF7,
    ];
    let mut v: Vec<u16> = positive.to_vec();
    v.extend(positive.iter().map(|x| x | 0x8000));
    v
}

/// Runs kernel `k(.param .u64 out)` of `ptx` on one thread in the reference interpreter and
/// in the JIT: the two output buffers, `bytes` long.
pub fn interpreter_and_jit(ptx: &str, bytes: usize) -> (DeviceBuffer, DeviceBuffer) {
    use ptxjit::LaunchConfig;
    use ptxjit::interp::Interpreter;
    let config = LaunchConfig {
        grid: 1.into(),
        block: 1.into(),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative: false,
    };
    let interp_out = DeviceBuffer::zeroed(bytes).unwrap();
    Interpreter::from_ptx("k.ptx", ptx)
        .unwrap()
        .launch("k", &config, &[Arg::buffer(&interp_out)])
        .unwrap();
    let jit_out = DeviceBuffer::zeroed(bytes).unwrap();
    Module::from_ptx(ptx)
        .unwrap()
        .kernel("k")
        .unwrap()
        .launch_with(&config, &[Arg::buffer(&jit_out)])
        .unwrap();
    (interp_out, jit_out)
}

/// Runs `launch` on `ptx` compiled one thread at a time and in lane groups from the start
/// (for blocks `block_x` threads wide), asserts that both give the same (results, or the
/// same error), and returns it: so a test of cooperating threads checks the group form
/// (whose lanes meet the one-thread code at every synchronization point) against the
/// one-thread form.
pub fn in_both_forms<T: PartialEq + std::fmt::Debug>(
    ptx: &str,
    block_x: u32,
    launch: impl Fn(&Module) -> Result<T, String>,
) -> Result<T, String> {
    let run = |lane_groups| {
        let opts = ptxjit::CompileOptions {
            lane_groups,
            ..ptxjit::CompileOptions::default()
        };
        let module = Module::from_ptx_named("<ptx>", ptx, &opts).map_err(|e| e.to_string())?;
        launch(&module)
    };
    let one_thread = run(ptxjit::LaneGroups::Off);
    let groups = run(ptxjit::LaneGroups::AlwaysForBlockX(block_x));
    assert_eq!(
        one_thread, groups,
        "the lane-group form differs from the one-thread form on\n{ptx}"
    );
    one_thread
}

/// A launch of `grid` blocks of `block` threads, no dynamic shared memory, no clusters.
#[allow(dead_code)]
pub fn plain_launch(
    grid: impl Into<ptxjit::Dim3>,
    block: impl Into<ptxjit::Dim3>,
) -> ptxjit::LaunchConfig {
    ptxjit::LaunchConfig {
        grid: grid.into(),
        block: block.into(),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative: false,
    }
}

/// Launches kernel `k(.param .u64 out)` of `ptx` with `config` in both forms
/// ([`in_both_forms`]), `out` a buffer that starts as `initial`; returns it after the launch.
#[allow(dead_code)]
pub fn out_in_both_forms(
    ptx: &str,
    config: &ptxjit::LaunchConfig,
    initial: &[u32],
) -> Result<Vec<u32>, String> {
    in_both_forms(ptx, config.block.x, |module| {
        let out = DeviceBuffer::from_slice(initial).unwrap();
        module
            .kernel("k")
            .unwrap()
            .launch_with(config, &[Arg::buffer(&out)])
            .map_err(|e| e.to_string())?;
        Ok(out.to_vec())
    })
}
