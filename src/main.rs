//! The `ptxjit` command: run, check, or show the Cranelift IR of PTX kernels.

mod bench;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ptxjit::cli::{
    ArgSpec, MAX_PTX_BYTES, TensorData, check_spec, parse_dim, parse_spec, read_regular_file,
};
use ptxjit::{Arg, CompileOptions, DeviceBuffer, Dim3, LaunchConfig, Module, OptLevel};

#[derive(Parser)]
#[command(
    name = "ptxjit",
    version,
    about = "Run NVIDIA PTX half-precision kernels on the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Opt {
    None,
    Speed,
}

#[derive(Clone, Copy, ValueEnum)]
enum Elem {
    F16,
    Bf16,
    F32,
    F64,
    U8,
    U16,
    U32,
    U64,
    S32,
    S64,
}

/// `ptxjit run`'s arguments.
#[derive(clap::Args)]
struct RunArgs {
    file: String,
    /// The kernel; may be left out when the module has exactly one .entry.
    #[arg(long)]
    kernel: Option<String>,
    /// Grid size X[,Y[,Z]].
    #[arg(long)]
    grid: String,
    /// Block size X[,Y[,Z]].
    #[arg(long)]
    block: String,
    /// Blocks per cluster X[,Y[,Z]] (sm_90 thread block clusters).
    #[arg(long)]
    cluster: Option<String>,
    /// One per kernel parameter, in order: TYPE:V, file:PATH, zeros:NBYTES, or a tensor
    /// map tensormap:TYPE:DIMS:BOX{:key=value} (DIMS, BOX innermost first: 64x32; keys
    /// strides=, steps=, interleave=, swizzle=32B/64B/128B, fill=nan, file=PATH, of=N).
    #[arg(long = "arg", value_name = "SPEC")]
    args: Vec<String>,
    /// After the launch, write the buffer of parameter N (0-based) to PATH.
    #[arg(long = "out", value_name = "N=PATH")]
    outs: Vec<String>,
    /// After the launch, print the buffer of parameter N as elements of TYPE.
    #[arg(long = "print", value_name = "N:TYPE")]
    prints: Vec<String>,
    /// Bytes of dynamic (.extern .shared) memory per block.
    #[arg(long, default_value_t = 0)]
    shared_bytes: u32,
    /// Stop the kernel with an error after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Launch N times and report the first launch's time (compile included) and the fastest
    /// and median of the others; every launch sees the inputs as given (buffers are restored
    /// between launches, untimed), so --out and --print show one launch's results.
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Launch a kernel.
    Run(RunArgs),
    /// Parse, check and compile every entry; print diagnostics.
    Check { file: String },
    /// Measure speed against native code and the machine's limits; one BENCH line each.
    Bench {
        /// Smaller sizes: under a minute on 2 cores.
        #[arg(long)]
        quick: bool,
        /// Only these groups (streaming, compute, features, interpreter, compile, launch,
        /// scaling); all when absent.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
    /// Print the Cranelift IR of the module's functions.
    Clif {
        file: String,
        #[arg(long)]
        kernel: Option<String>,
        #[arg(long, value_enum, default_value = "speed")]
        opt: Opt,
        /// Show the lane-group form of plain kernels (what hot kernels run).
        #[arg(long)]
        lane_groups: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Check { file } => check(&file),
        Command::Bench { quick, only } => bench(quick, only),
        Command::Clif {
            file,
            kernel,
            opt,
            lane_groups,
        } => clif(&file, kernel.as_deref(), opt, lane_groups),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            // Diagnostics already read `file:line:col: error: …`.
            if msg.contains(": error: ") {
                eprintln!("{msg}");
            } else {
                eprintln!("error: {msg}");
            }
            ExitCode::FAILURE
        }
    }
}

fn load(file: &str, opts: &CompileOptions) -> Result<Module, String> {
    // Bytes that are not UTF-8 (a Latin-1 comment, say) become U+FFFD: harmless in a comment,
    // a located diagnostic anywhere else.
    let text = String::from_utf8_lossy(&read_regular_file(file, MAX_PTX_BYTES)?).into_owned();
    Module::from_ptx_named(file, &text, opts).map_err(|e| e.to_string())
}

fn pick_kernel(module: &Module, name: Option<&str>) -> Result<String, String> {
    match name {
        Some(n) => Ok(n.to_string()),
        None => {
            let names = module.kernel_names();
            match names.as_slice() {
                [one] => Ok(one.clone()),
                [] => Err("the module has no .entry".into()),
                many => Err(format!(
                    "the module has several kernels ({}): choose one with --kernel",
                    many.join(", ")
                )),
            }
        }
    }
}

fn parse_index_pair<'a>(s: &'a str, sep: char, what: &str) -> Result<(usize, &'a str), String> {
    let (n, rest) = s
        .split_once(sep)
        .ok_or_else(|| format!("'{s}' is not {what}"))?;
    let n = n.parse().map_err(|_| format!("'{s}' is not {what}"))?;
    Ok((n, rest))
}

fn run(a: &RunArgs) -> Result<(), String> {
    let (specs, outs, prints) = (&a.args, &a.outs, &a.prints);
    if a.repeat == 0 {
        return Err("--repeat 0: launch at least once".into());
    }
    let timeout = a
        .timeout
        .map(|t| {
            std::time::Duration::try_from_secs_f64(t).map_err(|_| {
                format!("--timeout {t:e}: not a number of seconds from 0 to about 1.8e19")
            })
        })
        .transpose()?;
    let compile_start = std::time::Instant::now();
    let module = load(&a.file, &CompileOptions::default())?;
    let compile = compile_start.elapsed();
    let name = pick_kernel(&module, a.kernel.as_deref())?;
    let kernel = module
        .kernel(&name)
        .map_err(|e| e.to_string())?
        .with_timeout(timeout);
    let params = kernel.params();
    if specs.len() != params.len() {
        return Err(format!(
            "kernel '{name}' takes {} arguments, {} --arg given",
            params.len(),
            specs.len()
        ));
    }
    let mut parsed = Vec::new();
    for (i, (spec, p)) in specs.iter().zip(&params).enumerate() {
        let s = parse_spec(spec).map_err(|e| format!("--arg {i}: {e}"))?;
        check_spec(&s, p).map_err(|e| format!("--arg {i} ('{spec}'): {e}"))?;
        parsed.push(s);
    }
    // Buffers first (a tensor map may describe another argument's), then the arguments.
    let mut buffers: Vec<Option<DeviceBuffer>> = Vec::new();
    for (i, s) in parsed.iter().enumerate() {
        let file = |path: &str| -> Result<DeviceBuffer, String> {
            let data = read_regular_file(path, u64::MAX).map_err(|e| format!("--arg {i}: {e}"))?;
            DeviceBuffer::from_slice(&data).map_err(|e| e.to_string())
        };
        let zeros = |n: usize| DeviceBuffer::zeroed(n).map_err(|e| e.to_string());
        buffers.push(match s {
            ArgSpec::Scalar(_) => None,
            ArgSpec::File(path) => Some(file(path)?),
            ArgSpec::Zeros(n) => Some(zeros(*n)?),
            ArgSpec::TensorMap(t) => match &t.data {
                TensorData::File(path) => Some(file(path)?),
                TensorData::Zeros => Some(zeros(t.extent() as usize)?),
                TensorData::Of(_) => None,
            },
        });
    }
    let mut args = Vec::new();
    for (i, s) in parsed.iter().enumerate() {
        match s {
            ArgSpec::Scalar(bytes) => args.push(Arg::bytes(bytes)),
            ArgSpec::File(_) | ArgSpec::Zeros(_) => {
                args.push(Arg::buffer(buffers[i].as_ref().expect("made above")))
            }
            ArgSpec::TensorMap(t) => {
                let of = match t.data {
                    TensorData::Of(n) => n,
                    _ => i,
                };
                let data = buffers
                    .get(of)
                    .and_then(|b| b.as_ref())
                    .ok_or_else(|| format!("--arg {i}: argument {of} is not a buffer"))?;
                if (data.len() as u64) < t.extent() {
                    return Err(format!(
                        "--arg {i}: the tensor spans {} bytes, its buffer has {}",
                        t.extent(),
                        data.len()
                    ));
                }
                let mut map = t.map.clone();
                map.address = data.address();
                map.check().map_err(|e| format!("--arg {i}: {e}"))?;
                args.push(Arg::bytes(&map.encode()));
            }
        }
    }
    let g = parse_dim(&a.grid).map_err(|e| format!("--grid: {e}"))?;
    let b = parse_dim(&a.block).map_err(|e| format!("--block: {e}"))?;
    let cluster = a
        .cluster
        .as_deref()
        .map(|c| parse_dim(c).map_err(|e| format!("--cluster: {e}")))
        .transpose()?;
    let config = LaunchConfig {
        grid: Dim3::new(g[0], g[1], g[2]),
        block: Dim3::new(b[0], b[1], b[2]),
        dynamic_shared_bytes: a.shared_bytes,
        cluster: cluster.map(|c| Dim3::new(c[0], c[1], c[2])),
        cooperative: false,
    };
    let buffer_of = |n: usize| -> Result<&DeviceBuffer, String> {
        buffers
            .get(n)
            .and_then(|b| b.as_ref())
            .ok_or_else(|| format!("parameter {n} is not a buffer"))
    };
    // Validate the output requests before running.
    for o in outs {
        buffer_of(parse_index_pair(o, '=', "N=PATH")?.0)?;
    }
    for p in prints {
        let (n, ty) = parse_index_pair(p, ':', "N:TYPE")?;
        buffer_of(n)?;
        Elem::from_str(ty, true)
            .map_err(|_| format!("--print {p}: unknown element type '{ty}'"))?;
    }
    // The inputs, to restore between repeated launches.
    let inputs: Vec<Option<Vec<u8>>> = match a.repeat {
        1 => Vec::new(),
        _ => buffers
            .iter()
            .map(|b| b.as_ref().map(|b| b.to_bytes()))
            .collect(),
    };
    let restore = || {
        for (b, bytes) in buffers.iter().zip(&inputs) {
            if let (Some(b), Some(bytes)) = (b, bytes) {
                b.write_at(0, bytes).expect("the same size");
            }
        }
    };
    let times = kernel
        .launch_repeated(&config, &args, a.repeat, restore)
        .map_err(|e| e.to_string())?;
    for o in outs {
        let (n, path) = parse_index_pair(o, '=', "N=PATH")?;
        std::fs::write(path, buffer_of(n)?.to_bytes())
            .map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    for p in prints {
        let (n, ty) = parse_index_pair(p, ':', "N:TYPE")?;
        let elem = Elem::from_str(ty, true).expect("validated above");
        println!(
            "{} ({ty}): {}",
            params[n].name,
            format_buffer(buffer_of(n)?, elem)
        );
    }
    eprintln!(
        "ran {name} on grid {:?} x block {:?} in {:.3} ms",
        g,
        b,
        times.first().as_secs_f64() * 1e3
    );
    if let Some((min, median)) = times.min_and_median_after_first() {
        eprintln!(
            "repeat {}: first launch {} (with the module's compile, {}: {}); the other {}: \
             min {}, median {}",
            a.repeat,
            duration(times.first()),
            duration(compile),
            duration(compile + times.first()),
            a.repeat - 1,
            duration(min),
            duration(median)
        );
    }
    Ok(())
}

/// A duration with four significant digits in a fitting unit.
fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    let (v, unit) = match s {
        s if s >= 1.0 => (s, "s"),
        s if s >= 1e-3 => (s * 1e3, "ms"),
        s => (s * 1e6, "µs"),
    };
    let decimals = match v {
        v if v >= 100.0 => 1,
        v if v >= 10.0 => 2,
        _ => 3,
    };
    format!("{v:.decimals$} {unit}")
}

fn format_buffer(buf: &DeviceBuffer, elem: Elem) -> String {
    let items: Vec<String> = match elem {
        Elem::F16 => buf
            .to_vec::<u16>()
            .into_iter()
            .map(|b| half::f16::from_bits(b).to_string())
            .collect(),
        Elem::Bf16 => buf
            .to_vec::<u16>()
            .into_iter()
            .map(|b| half::bf16::from_bits(b).to_string())
            .collect(),
        Elem::F32 => buf
            .to_vec::<f32>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::F64 => buf
            .to_vec::<f64>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::U8 => buf
            .to_vec::<u8>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::U16 => buf
            .to_vec::<u16>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::U32 => buf
            .to_vec::<u32>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::U64 => buf
            .to_vec::<u64>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::S32 => buf
            .to_vec::<i32>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
        Elem::S64 => buf
            .to_vec::<i64>()
            .into_iter()
            .map(|v| v.to_string())
            .collect(),
    };
    format!("[{}]", items.join(", "))
}

fn bench(quick: bool, only: Vec<String>) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!(
            "note: this is an unoptimized build; run `cargo run --release -- bench` for real figures"
        );
    }
    if let Some(bad) = only.iter().find(|g| !bench::GROUPS.contains(&g.as_str())) {
        return Err(format!(
            "unknown bench group '{bad}' (groups: {})",
            bench::GROUPS.join(", ")
        ));
    }
    bench::print_report(&bench::Options { quick, only });
    Ok(())
}

/// How many kernel names `check` prints: a module may have thousands.
const LISTED_KERNELS: usize = 20;

fn check(file: &str) -> Result<(), String> {
    let module = load(file, &CompileOptions::default())?;
    let names = module.kernel_names();
    match names.len() {
        0 => println!("{file}: ok, but it defines no kernel (no .entry)"),
        1 => println!("{file}: ok (1 kernel: {})", names[0]),
        n if n <= LISTED_KERNELS => println!("{file}: ok ({n} kernels: {})", names.join(", ")),
        n => println!(
            "{file}: ok ({n} kernels: {}, and {} more)",
            names[..LISTED_KERNELS].join(", "),
            n - LISTED_KERNELS
        ),
    }
    Ok(())
}

fn clif(file: &str, kernel: Option<&str>, opt: Opt, lane_groups: bool) -> Result<(), String> {
    let opt_level = match opt {
        Opt::None => OptLevel::None,
        Opt::Speed => OptLevel::Speed,
    };
    let module = load(
        file,
        &CompileOptions {
            opt_level,
            keep_clif: true,
            lane_groups: if lane_groups {
                ptxjit::LaneGroups::Always
            } else {
                ptxjit::LaneGroups::Off
            },
            ..CompileOptions::default()
        },
    )?;
    if let Some(k) = kernel {
        module.kernel(k).map_err(|e| e.to_string())?;
    }
    for (name, text) in module.clif() {
        if kernel.is_none_or(|k| k == name) {
            println!("; function {name}\n{text}");
        }
    }
    Ok(())
}
