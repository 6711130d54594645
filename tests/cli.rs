//! The `ptxjit` command line, as other tools call it.

use std::process::Command;

fn ptxjit(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxjit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `ptxjit run` of the bundled example with its inputs.
const AXPY_RUN: [&str; 14] = [
    "run",
    "examples/h2_axpy/h2_axpy.ptx",
    "--grid",
    "1",
    "--block",
    "4",
    "--arg",
    "u32:8",
    "--arg",
    "b32:0x42003800",
    "--arg",
    "file:examples/h2_axpy/x.bin",
    "--arg",
    "file:examples/h2_axpy/y.bin",
];

#[test]
fn run_writes_outputs_and_prints_buffers() {
    let dir = std::env::temp_dir().join(format!("ptxjit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("y.bin");
    let out_arg = format!("3={}", out.display());
    let (ok, stdout, stderr) =
        ptxjit(&[&AXPY_RUN[..], &["--out", &out_arg, "--print", "3:f16"]].concat());
    assert!(ok, "{stderr}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read("examples/h2_axpy/expected_y.bin").unwrap()
    );
    assert!(
        stdout.starts_with("h2_axpy_param_3 (f16): [1.5, 7, 0.75, 10.75,"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn repeat_times_each_launch_and_every_launch_sees_the_inputs_as_given() {
    // h2_axpy updates y in place: after three launches y is still one launch's result.
    let dir = std::env::temp_dir().join(format!("ptxjit-cli-repeat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("y.bin");
    let out_arg = format!("3={}", out.display());
    let (ok, _, stderr) = ptxjit(&[&AXPY_RUN[..], &["--out", &out_arg, "--repeat", "3"]].concat());
    assert!(ok, "{stderr}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read("examples/h2_axpy/expected_y.bin").unwrap()
    );
    assert!(stderr.contains("repeat 3: first launch "), "{stderr}");
    assert!(stderr.contains("the other 2: min "), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
    let (ok, _, stderr) = ptxjit(&[
        "run", "x.ptx", "--grid", "1", "--block", "1", "--repeat", "0",
    ]);
    assert!(!ok && stderr.contains("--repeat 0"), "{stderr}");
}

#[test]
fn by_value_f16_scalar_takes_an_f16_spec() {
    let (ok, stdout, stderr) = ptxjit(&[
        "run",
        "examples/f16_scale/f16_scale.ptx",
        "--grid",
        "1",
        "--block",
        "8",
        "--arg",
        "file:examples/f16_scale/x.bin",
        "--arg",
        "f16:0.5",
        "--arg",
        "u32:8",
        "--print",
        "0:f16",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.trim(),
        "f16_scale_param_0 (f16): [0.5, 1, -0.25, 1.625, 0, -3.5, 0, 0.00000011920929]"
    );
}

#[test]
fn bad_arguments_fail_with_error_on_stderr() {
    let (ok, _, stderr) = ptxjit(&[
        "run",
        "examples/f16_scale/f16_scale.ptx",
        "--grid",
        "1",
        "--block",
        "8",
        "--arg",
        "file:examples/f16_scale/x.bin",
        "--arg",
        "u32:1",
        "--arg",
        "u32:8",
    ]);
    assert!(!ok);
    assert!(
        stderr.starts_with(
            "error: --arg 1 ('u32:1'): parameter 'f16_scale_param_1' (.b8[2]) takes 2 bytes"
        ),
        "{stderr}"
    );
    let (ok, _, stderr) = ptxjit(&[
        "run",
        "examples/f16_scale/f16_scale.ptx",
        "--grid",
        "1",
        "--block",
        "8",
    ]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: kernel 'f16_scale' takes 3 arguments, 0 --arg given"),
        "{stderr}"
    );
}

#[test]
fn check_reports_diagnostics_with_location() {
    let (ok, stdout, _) = ptxjit(&["check", "examples/h2_axpy/h2_axpy.ptx"]);
    assert!(ok);
    assert_eq!(
        stdout.trim(),
        "examples/h2_axpy/h2_axpy.ptx: ok (1 kernel: h2_axpy)"
    );
    let (ok, _, stderr) = ptxjit(&["check", "tests/fixtures/texture.ptx"]);
    assert!(!ok);
    assert!(
        stderr.starts_with(
            "tests/fixtures/texture.ptx:13:2: error: unsupported instruction 'tex.2d.v4.f32.f32'"
        ),
        "{stderr}"
    );
}

#[test]
fn clif_prints_the_cranelift_ir() {
    let (ok, stdout, stderr) = ptxjit(&[
        "clif",
        "examples/f16_scale/f16_scale.ptx",
        "--kernel",
        "f16_scale",
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.starts_with("; function f16_scale\nfunction "),
        "{stdout}"
    );
    // (The kernel's `mul.f16` calls a half helper where the host has one, else is inline.)
    assert!(
        stdout.contains(" = load.") && stdout.contains("return"),
        "{stdout}"
    );
}

#[test]
fn shared_bytes_sizes_dynamic_shared_memory() {
    let (ok, stdout, stderr) = ptxjit(&[
        "run",
        "tests/fixtures/dynamic_shared.ptx",
        "--grid",
        "2",
        "--block",
        "1",
        "--arg",
        "zeros:4",
        "--shared-bytes",
        "256",
        "--print",
        "0:u32",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout.trim(), "out (u32): [256]");
}

/// The recursion guard relies on the stacks of ptxjit's own workers, whatever the host's
/// default thread stack (`RUST_MIN_STACK`) is: endless recursion is an error, not an abort.
#[test]
fn endless_recursion_is_an_error_whatever_the_default_thread_stack() {
    let dir = std::env::temp_dir().join(format!("ptxjit-cli-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("rec.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .func f() { call f, (); ret; }\n\
         .visible .entry k() { call f, (); ret; }\n",
    )
    .unwrap();
    for stack in ["262144", "1048576"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ptxjit"))
            .args(["run", ptx.to_str().unwrap(), "--grid", "2", "--block", "32"])
            .env("RUST_MIN_STACK", stack)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "RUST_MIN_STACK={stack}: {stderr}"
        );
        assert!(stderr.contains("calls nested too deeply"), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ptxjit check FILE` of a PTX text written to a fresh temporary file.
fn check_text(name: &str, text: &[u8]) -> (bool, String, String) {
    let dir = std::env::temp_dir().join(format!("ptxjit-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.ptx"));
    std::fs::write(&path, text).unwrap();
    let result = ptxjit(&["check", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[test]
fn endless_or_special_files_are_refused_not_read() {
    let (ok, _, stderr) = ptxjit(&["check", "/dev/zero"]);
    assert!(
        !ok && stderr.contains("cannot read /dev/zero: not a regular file"),
        "{stderr}"
    );
    let (ok, _, stderr) = ptxjit(&[
        "run",
        "examples/h2_axpy/h2_axpy.ptx",
        "--grid",
        "1",
        "--block",
        "1",
        "--arg",
        "u32:1",
        "--arg",
        "b32:0",
        "--arg",
        "file:/dev/zero",
        "--arg",
        "zeros:4",
    ]);
    assert!(
        !ok && stderr.contains("--arg 2: cannot read /dev/zero: not a regular file"),
        "{stderr}"
    );
}

#[test]
fn cr_only_line_endings_locate_diagnostics_on_their_lines() {
    let text = b".version 8.0\r.target sm_80\r.address_size 64\r// a comment\r\
        .visible .entry k()\r{\r  bogus.op %r1;\r}\r";
    let (ok, _, stderr) = check_text("cr", text);
    assert!(!ok);
    assert!(
        stderr.contains("cr.ptx:7:3: error: unsupported instruction 'bogus.op'"),
        "{stderr}"
    );
    assert!(stderr.contains("7 |   bogus.op %r1;"), "{stderr}");
}

#[test]
fn bytes_that_are_not_utf8_in_a_comment_are_ignored_and_elsewhere_located() {
    let (ok, stdout, stderr) = check_text(
        "latin1",
        b".version 8.0\n.target sm_80\n.address_size 64\n// caf\xe9\n.visible .entry k()\n{\nret;\n}\n",
    );
    assert!(ok, "{stderr}");
    assert!(stdout.ends_with("ok (1 kernel: k)\n"), "{stdout}");
    let (ok, _, stderr) = check_text(
        "latin1_code",
        b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nr\xe9t;\n}\n",
    );
    assert!(!ok);
    assert!(
        stderr.contains("latin1_code.ptx:6:2: error: unexpected character"),
        "{stderr}"
    );
}

#[test]
fn a_file_without_kernels_checks_and_says_so() {
    let (ok, stdout, _) = check_text("empty", b"");
    assert!(ok);
    assert!(
        stdout.ends_with("ok, but it defines no kernel (no .entry)\n"),
        "{stdout}"
    );
}

#[test]
fn an_absurd_timeout_is_refused_briefly() {
    let (ok, _, stderr) = ptxjit(&[
        "run",
        "examples/h2_axpy/h2_axpy.ptx",
        "--grid",
        "1",
        "--block",
        "1",
        "--timeout",
        "1e300",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("--timeout 1e300: not a number of seconds"),
        "{stderr}"
    );
    assert!(stderr.len() < 200, "{stderr}");
}

/// `tensormap:` builds a map of a file's tensor, or of zeros (written out with `--out`): Triton's
/// host-side descriptor kernel, as its launcher would call it.
#[test]
fn run_passes_tensor_maps_built_from_a_spec() {
    let dir = "tests/compilers/tr_tma_host_sm90";
    let out = std::env::temp_dir().join(format!("ptxjit-cli-tma-{}.bin", std::process::id()));
    let map = |data: &str| format!("tensormap:f16:72x100:64x32:swizzle=128B{data}");
    let (a, b, c) = (
        map(&format!(":file={dir}/in_a.bin")),
        map(&format!(":file={dir}/in_b.bin")),
        map(""),
    );
    let mut args = vec!["run", "tests/compilers/tr_tma_host_sm90/kernel.ptx"];
    args.extend(["--grid", "4,2", "--block", "128", "--shared-bytes", "4104"]);
    let shape = [
        "--arg", "s32:100", "--arg", "s32:72", "--arg", "s64:72", "--arg", "s64:1",
    ];
    for m in [&a, &b, &c] {
        args.extend(["--arg", m.as_str()]);
        args.extend(shape);
    }
    let out_spec = format!("10={}", out.display());
    args.extend(["--arg", "zeros:8", "--arg", "u64:0", "--out", &out_spec]);
    let (ok, _, stderr) = ptxjit(&args);
    assert!(ok, "{stderr}");
    let got = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(got, std::fs::read(format!("{dir}/expected_c.bin")).unwrap());
    // A map the driver would refuse is refused before the launch.
    let bad = "tensormap:f16:72x100:128x32:swizzle=128B";
    let at = args.iter().position(|a| *a == c.as_str()).unwrap();
    args[at] = bad;
    let (ok, _, stderr) = ptxjit(&args);
    assert!(!ok && stderr.contains("swizzle span"), "{stderr}");
}

#[test]
fn run_launches_clusters_with_the_cluster_flag() {
    // The nvcc cluster histogram: input 6000 i32, hist and ring 512 u32 each.
    let dir = "tests/compilers/nv_cluster_dsmem_sm90";
    let run = |cluster: &[&str]| {
        let mut args = vec![
            "run",
            "tests/compilers/nv_cluster_dsmem_sm90/kernel.ptx",
            "--grid",
            "8",
            "--block",
            "64",
            "--arg",
            "file:tests/compilers/nv_cluster_dsmem_sm90/in_in.bin",
            "--arg",
            "s32:3000",
            "--arg",
            "zeros:2048",
            "--arg",
            "zeros:2048",
            "--print",
            "2:u32",
        ];
        args.extend(cluster);
        ptxjit(&args)
    };
    let (ok, stdout, stderr) = run(&["--cluster", "4"]);
    assert!(ok, "{stderr}");
    let expected = std::fs::read(format!("{dir}/expected_hist.bin")).unwrap();
    let first = u32::from_le_bytes(expected[..4].try_into().unwrap());
    assert!(stdout.contains(&format!("(u32): [{first}, ")), "{stdout}");
    let (ok, _, stderr) = run(&["--cluster", "3"]);
    assert!(
        !ok && stderr.contains("not a whole number of clusters"),
        "{stderr}"
    );
}

#[test]
fn device_printf_prints_each_call_whole_on_standard_output() {
    // tests/fixtures/printf.ptx: nvcc 13 -arch=sm_80 of
    //   printf("thread %d of %u: x=%.3f %s big=%lld hex=%#06x char=%c%%\n", t, blockDim.x,
    //          x[t], names[t & 1], big + t, t * 255, 'A' + t);
    let dir = std::env::temp_dir().join(format!("ptxjit-printf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let x = dir.join("x.bin");
    let values: Vec<u8> = [1.5f32, -2.25, 3.125, 0.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&x, values).unwrap();
    let x = format!("file:{}", x.display());
    let (ok, stdout, stderr) = ptxjit(&[
        "run",
        "tests/fixtures/printf.ptx",
        "--grid",
        "1",
        "--block",
        "4",
        "--arg",
        &x,
        "--arg",
        "u64:1000000000000",
    ]);
    assert!(ok, "{stderr}");
    let mut lines: Vec<&str> = stdout.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "thread 0 of 4: x=1.500 even big=1000000000000 hex=000000 char=A%",
            "thread 1 of 4: x=-2.250 odd big=1000000000001 hex=0x00ff char=B%",
            "thread 2 of 4: x=3.125 even big=1000000000002 hex=0x01fe char=C%",
            "thread 3 of 4: x=0.000 odd big=1000000000003 hex=0x02fd char=D%",
        ]
    );
    std::fs::remove_dir_all(&dir).ok();
}
