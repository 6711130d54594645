//! Bad input gets a clear error, never a panic: PTX errors name `file:line:col` and show the
//! line; launch errors name the kernel (and, at run time, the instruction).

use ptxjit::{Arg, CompileOptions, DeviceBuffer, Error, Module};

fn compile_err(text: &str) -> String {
    match Module::from_ptx_named("k.ptx", text, &CompileOptions::default()) {
        Ok(_) => panic!("compiled:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

#[test]
fn syntax_error_names_file_line_col_and_shows_the_line() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n  add.s32 %r1, %r2 %r3;\n}}\n"
    ));
    assert!(
        msg.starts_with("k.ptx:6:20: error: expected ',' or ';'"),
        "{msg}"
    );
    assert!(msg.contains("6 |   add.s32 %r1, %r2 %r3;"), "{msg}");
    assert!(
        msg.lines().last().unwrap().trim_end().ends_with('^'),
        "{msg}"
    );
}

#[test]
fn unsupported_instruction_is_named_precisely() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .f32 %f<5>;\n.reg .b64 %rd1;\n    tex.2d.v4.f32.f32 {{%f1, %f2, %f3, %f4}}, [%rd1, {{%f1, %f2}}];\n}}\n"
    ));
    assert!(
        msg.starts_with("k.ptx:8:5: error: unsupported instruction 'tex.2d.v4.f32.f32'"),
        "{msg}"
    );
}

#[test]
fn unsupported_form_found_while_lowering_is_named_too() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b16 %h<3>;\ncvt.f16.f16 %h1, %h2;\nret;\n}}\n"
    ));
    assert!(
        msg.starts_with("k.ptx:7:1: error: unsupported instruction 'cvt.f16.f16' (half to itself needs .rni/.rzi/.rmi/.rpi)"),
        "{msg}"
    );
}

#[test]
fn undefined_register_and_label() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<2>;\nadd.s32 %r1, %r1, %r9;\n}}\n"
    ));
    assert!(
        msg.contains("k.ptx:7:19: error: undefined register '%r9'"),
        "{msg}"
    );
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\nbra NOWHERE;\n}}\n"
    ));
    assert!(msg.contains("error: undefined name 'NOWHERE'"), "{msg}");
}

#[test]
fn register_scope_ends_with_its_block() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n{{ .reg .b32 %t; mov.u32 %t, 1; }}\nmov.u32 %t, 2;\n}}\n"
    ));
    assert!(
        msg.contains("k.ptx:7:9: error: undefined register '%t'"),
        "{msg}"
    );
}

#[test]
fn wrong_operand_count() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<3>;\nadd.s32 %r1, %r2;\n}}\n"
    ));
    assert!(
        msg.contains("k.ptx:7:1: error: 'add.s32' takes 3 operands, found 2"),
        "{msg}"
    );
}

#[test]
fn unterminated_body_and_garbage_do_not_panic() {
    for text in [
        format!("{HEAD}.visible .entry k(\n"),
        format!("{HEAD}.visible .entry k()\n{{\nret;\n"),
        "\u{1F600}".to_string(),
        format!("{HEAD}.visible .entry k()\n{{\nld.global.u32 %r1, [;\n}}\n"),
        format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<99999999999>;\n}}\n"),
        format!("{HEAD}.visible .entry k()\n{{\nmov.u32 %r1, 0f123;\n}}\n"),
        format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<2>;\nld.global.u32 %r1, [%r1+99999999999999999999];\n}}\n"
        ),
        String::new(),
    ] {
        let msg = compile_err_or_empty(&text);
        assert!(msg.is_empty() || msg.contains("error"), "{text:?} → {msg}");
    }
}

fn compile_err_or_empty(text: &str) -> String {
    Module::from_ptx_named("k.ptx", text, &CompileOptions::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

fn one_param_kernel() -> Module {
    Module::from_ptx(&format!(
        "{HEAD}.visible .entry k(.param .u64 p, .param .align 2 .b8 s[2])\n{{\n.reg .pred %p;\n.reg .b32 %r;\n\
         mov.u32 %r, %tid.x;\nsetp.eq.u32 %p, %r, 3;\n@%p trap;\nret;\n}}\n"
    ))
    .unwrap()
}

#[test]
fn launch_errors_name_the_kernel() {
    let m = one_param_kernel();
    let k = m.kernel("k").unwrap();
    let msg = k.launch(1, 1, &[Arg::u64(0)]).unwrap_err().to_string();
    assert_eq!(msg, "kernel 'k': takes 2 arguments, 1 given");
    let msg = k
        .launch(1, 1, &[Arg::u64(0), Arg::u32(1)])
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "kernel 'k': argument 1 ('s', .b8[2]) needs 2 bytes, got 4"
    );
    let msg = k
        .launch(1, 2000, &[Arg::u64(0), Arg::u16(1)])
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("kernel 'k': invalid launch configuration: 2000 threads per block"),
        "{msg}"
    );
    assert!(matches!(m.kernel("nope"), Err(Error::NoSuchKernel { .. })));
}

#[test]
fn trap_ends_the_launch_with_the_kernel_the_instruction_and_the_block() {
    let m = one_param_kernel();
    let buf = DeviceBuffer::zeroed(4).unwrap();
    let msg = m
        .kernel("k")
        .unwrap()
        .launch(2, 8, &[Arg::buffer(&buf), Arg::u16(1)])
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("kernel 'k': trap in block ("), "{msg}");
    assert!(msg.ends_with("at <ptx>:10:1: `@%p trap;`"), "{msg}");
    // No thread below 3 traps: fine to launch with 3 threads.
    m.kernel("k")
        .unwrap()
        .launch(2, 3, &[Arg::buffer(&buf), Arg::u16(1)])
        .unwrap();
}

#[test]
fn a_failed_assert_ends_the_launch_naming_the_call() {
    // nvcc's form of `assert(i != 5)`: the message strings and the call of the runtime's
    // `__assertfail`, which the module declares but does not define.
    let ptx = format!(
        "{HEAD}.extern .func __assertfail\n(\n.param .b64 p0,\n.param .b64 p1,\n.param .b32 p2,\n\
         .param .b64 p3,\n.param .b64 p4\n)\n;\n\
         .global .align 1 .b8 $str[7] = {{105, 32, 33, 61, 32, 53, 0}};\n\
         .visible .entry k(.param .u32 bad)\n{{\n.reg .pred %p;\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
         mov.u32 %r1, %tid.x;\nld.param.u32 %r2, [bad];\nsetp.ne.u32 %p, %r1, %r2;\n@%p bra OK;\n\
         mov.u64 %rd1, $str;\ncvta.global.u64 %rd1, %rd1;\n\
         {{\n.param .b64 a0;\nst.param.b64 [a0], %rd1;\n.param .b64 a1;\nst.param.b64 [a1], %rd1;\n\
         .param .b32 a2;\nst.param.b32 [a2], 12;\n.param .b64 a3;\nst.param.b64 [a3], %rd1;\n\
         .param .b64 a4;\nst.param.b64 [a4], 1;\ncall.uni __assertfail, (a0, a1, a2, a3, a4);\n}}\n\
         OK:\nret;\n}}\n"
    );
    let m = Module::from_ptx(&ptx).unwrap();
    let msg = m
        .kernel("k")
        .unwrap()
        .launch(1, 8, &[Arg::u32(5)])
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("kernel 'k': assertion failed (CUDA's assert: __assertfail) in block ("),
        "{msg}"
    );
    assert!(msg.contains("call.uni __assertfail"), "{msg}");
    // No thread fails the assertion: the launch completes.
    m.kernel("k")
        .unwrap()
        .launch(1, 8, &[Arg::u32(99)])
        .unwrap();
}

#[test]
fn oversized_variables_and_shared_memory_are_errors_not_aborts() {
    let msg = compile_err(&format!(
        "{HEAD}.shared .align 4 .b8 huge[4000000000];\n.visible .entry k()\n{{\nret;\n}}\n"
    ));
    assert!(msg.contains("variable 'huge' is too large"), "{msg}");
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n.local .b8 big[100000000];\nret;\n}}\n"
    ));
    assert!(msg.contains("variable 'big' is too large"), "{msg}");
    let m = Module::from_ptx(&format!("{HEAD}.visible .entry k()\n{{\nret;\n}}\n")).unwrap();
    let config = ptxjit::LaunchConfig {
        grid: 1.into(),
        block: 1.into(),
        dynamic_shared_bytes: u32::MAX,
        cluster: None,
        cooperative: false,
    };
    let msg = m
        .kernel("k")
        .unwrap()
        .launch_with(&config, &[])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("dynamic shared memory exceeds the limit"),
        "{msg}"
    );
}

#[test]
fn types_an_instruction_does_not_take_are_unsupported_not_a_codegen_panic() {
    for (inst, op) in [
        ("setp.eq.pred %p1, %p2, %p3;", "setp.eq.pred"),
        ("cvt.f32.b128 %f1, %q1;", "cvt.f32.b128"),
        ("add.b128 %q1, %q1, %q1;", "add.b128"),
    ] {
        let msg = compile_err(&format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .pred %p<4>;\n.reg .f32 %f<2>;\n.reg .b128 %q<2>;\n{inst}\nret;\n}}\n"
        ));
        assert!(
            msg.contains(&format!("unsupported instruction '{op}'")),
            "{msg}"
        );
    }
}

#[test]
fn a_global_variable_declared_twice_in_a_body_scope_is_reported() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\n.const .u32 c = 5;\n.global .u32 c;\nret;\n}}\n"
    ));
    assert!(
        msg.contains("k.ptx:7:1: error: 'c' is already declared in this scope"),
        "{msg}"
    );
}

#[test]
fn a_register_declared_twice_in_one_scope_is_an_error() {
    for decls in [
        ".reg .b32 %r1;\n.reg .b32 %r1;",
        ".reg .b32 %r<4>;\n.reg .b32 %r2;",
        ".reg .b32 %r<4>;\n.reg .b64 %r<8>;",
    ] {
        let msg = compile_err(&format!(
            "{HEAD}.visible .entry k()\n{{\n{decls}\nret;\n}}\n"
        ));
        assert!(msg.starts_with("k.ptx:7:"), "{msg}");
        assert!(msg.contains("already declared in this scope"), "{msg}");
    }
}

#[test]
fn a_register_may_shadow_one_of_an_outer_scope() {
    let text = format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n{{ .reg .b64 %r1; mov.b64 %r1, 5; }}\nmov.b32 %r1, 5;\nret;\n}}\n"
    );
    Module::from_ptx_named("k.ptx", &text, &CompileOptions::default()).unwrap();
}

#[test]
fn more_registers_than_the_limit_are_reported_where_the_first_one_past_it_is_used() {
    let mut body = String::from(".reg .b32 %v<70000>;\nmov.b32 %v0, 1;\n");
    for i in 1..60_005 {
        body += &format!("add.u32 %v{i}, %v{}, 1;\n", i - 1);
    }
    let msg = compile_err(&format!("{HEAD}.visible .entry k()\n{{\n{body}ret;\n}}\n"));
    // %v60000 is the 60,001st register, first used on the line defining it.
    assert!(
        msg.starts_with("k.ptx:60007:9: error: the function uses more than 60000 registers"),
        "{msg}"
    );
    assert_eq!(msg.matches("error:").count(), 1, "{msg}");
}

/// Every nesting form, far deeper than the limit: a located diagnostic, never a stack overflow.
#[test]
fn nesting_deeper_than_the_limit_is_an_error_at_the_level_past_it() {
    let n = 20_000;
    let (open, close) = ("{\n".repeat(n), "}\n".repeat(n));
    let cases = [
        format!("{HEAD}.visible .entry k()\n{{\n{open}ret;\n{close}}}\n"),
        format!(
            "{HEAD}.global .u32 g[1] = {}1{};\n",
            "{".repeat(n),
            "}".repeat(n)
        ),
        format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r1;\nmov.b32 %r1, {}%r1{};\n}}\n",
            "{".repeat(n),
            "}".repeat(n)
        ),
        format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .pred %p<2>;\nand.pred %p0, %p1, {}%p1;\n}}\n",
            "!".repeat(n)
        ),
        format!(
            "{HEAD}.visible .entry k()\n{{\ncall f, {}{};\n}}\n",
            "(".repeat(n),
            ")".repeat(n)
        ),
    ];
    for text in cases {
        let msg = compile_err(&text);
        assert!(
            msg.contains("error: nested more than 64 levels deep"),
            "{msg}"
        );
    }
}

/// The deepest nesting accepted compiles and runs on a host thread with a small stack (the
/// driver API runs on its caller's thread).
#[test]
fn the_deepest_nesting_accepted_compiles_on_a_256_kib_stack() {
    let depth = 63; // the function body is the first level
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n{}.reg .b64 %rd1;\nld.param.u64 %rd1, [out];\n\
         st.global.u64 [%rd1], {};\nret;\n{}}}\n",
        "{\n".repeat(depth),
        depth,
        "}\n".repeat(depth)
    );
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let m = Module::from_ptx_named("k.ptx", &text, &CompileOptions::default()).unwrap();
            let out = DeviceBuffer::zeroed(8).unwrap();
            m.kernel("k")
                .unwrap()
                .launch(1, 1, &[Arg::buffer(&out)])
                .unwrap();
            assert_eq!(out.to_vec::<u64>(), [63]);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn qualifiers_come_in_any_order_as_ptxas_takes_them() {
    let body = |op: &str| {
        format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<3>;\n{op} %r1, %r2, -1;\nret;\n}}\n")
    };
    // ptxas 12.8 assembles both spellings (the ISA writes the first).
    for op in [
        "match.any.sync.b32",
        "match.sync.any.b32",
        "match.all.sync.b32",
    ] {
        Module::from_ptx_named("k.ptx", &body(op), &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{op}: {e}"));
    }
    let msg = compile_err(&body("match.any.b32"));
    assert!(
        msg.contains("error: unsupported instruction 'match.any.b32'"),
        "{msg}"
    );
}

#[test]
fn a_barrier_id_past_15_is_an_error() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k()\n{{\nbar.sync 16;\nret;\n}}\n"
    ));
    assert!(
        msg.starts_with("k.ptx:6:10: error: barrier 16 does not exist"),
        "{msg}"
    );
}

#[test]
fn a_mov_operand_holds_exactly_the_bits_moved() {
    let body = |mov: &str| {
        format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n\
             .reg .pred %p;\n{mov}\nret;\n}}\n"
        )
    };
    for (mov, wanted) in [
        (
            "mov.b64 %r1, %rd1;",
            "k.ptx:9:9: error: '%r1' is a .b32 register, but 'mov.b64' moves 64 bits",
        ),
        (
            "mov.b32 %rd1, %r1;",
            "k.ptx:9:9: error: '%rd1' is a .b64 register, but 'mov.b32' moves 32 bits",
        ),
        (
            "mov.u32 %r1, %rd1;",
            "k.ptx:9:14: error: '%rd1' is a .b64 register, but 'mov.u32' moves 32 bits",
        ),
        (
            "mov.b64 {%r1, %rd2}, %rd1;",
            "k.ptx:9:15: error: '%rd2' is a .b64 register, but 'mov.b64' moves 2 parts of 32 bits",
        ),
        (
            "mov.pred %p, %r1;",
            "k.ptx:9:14: error: '%r1' is a .b32 register, but 'mov.pred' moves 8 bits",
        ),
    ] {
        let msg = compile_err(&body(mov));
        assert!(msg.starts_with(wanted), "{mov}: {msg}");
    }
    for mov in [
        "mov.b64 {%r1, %r2}, %rd1;",
        "mov.b64 %rd2, {%r2, %r1};",
        "mov.b64 {_, %r1}, %rd1;",
        "mov.f32 %r1, 0f3F800000;",
        "mov.u32 %r1, %tid.x;",
        "mov.pred %p, 1;",
    ] {
        Module::from_ptx_named("k.ptx", &body(mov), &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{mov}: {e}"));
    }
}

#[test]
fn a_parameter_declared_twice_is_an_error() {
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k(.param .u32 a, .param .u64 a)\n{{\nret;\n}}\n"
    ));
    assert!(
        msg.contains("error: parameter 'a' is declared twice"),
        "{msg}"
    );
}

#[test]
fn a_block_shape_no_gpu_has_is_an_error() {
    for (directive, dims) in [
        (".reqntid", "0"),
        (".reqntid", "4096"),
        (".maxntid", "64, 64"),
        (".reqntid", "1, 1, 128"),
    ] {
        let msg = compile_err(&format!(
            "{HEAD}.visible .entry k()\n{directive} {dims}\n{{\nret;\n}}\n"
        ));
        assert!(msg.contains(&format!("error: {directive} [")), "{msg}");
        assert!(msg.contains("a block has 1 to 1024 threads"), "{msg}");
    }
}

#[test]
fn a_launch_larger_than_maxntid_is_refused() {
    let text = format!("{HEAD}.visible .entry k()\n.maxntid 32, 1, 1\n{{\nret;\n}}\n");
    let m = Module::from_ptx_named("k.ptx", &text, &CompileOptions::default()).unwrap();
    let k = m.kernel("k").unwrap();
    k.launch(1, 32, &[]).unwrap();
    let msg = k.launch(1, 1024, &[]).unwrap_err().to_string();
    assert!(
        msg.contains("kernel 'k': allows at most 32 threads a block (.maxntid [32, 1, 1])"),
        "{msg}"
    );
}

#[test]
fn an_element_index_past_any_address_is_an_error_not_a_wraparound() {
    // 2^61 + 1 elements of 8 bytes wrap to element 1.
    let msg = compile_err(&format!(
        "{HEAD}.global .u64 g[2];\n.visible .entry k()\n{{\n.reg .b64 %rd1;\n\
         ld.global.u64 %rd1, g[2305843009213693953];\nret;\n}}\n"
    ));
    assert!(
        msg.contains("error: element 2305843009213693953 of 'g' is beyond any address"),
        "{msg}"
    );
}

#[test]
fn a_parameter_larger_than_cudas_limit_is_an_error_not_a_wraparound() {
    // 2^29 × 8 bytes is 2^32: it wrapped to a 0-byte parameter.
    let msg = compile_err(&format!(
        "{HEAD}.visible .entry k(.param .b64 a[536870912])\n{{\nret;\n}}\n"
    ));
    assert!(
        msg.contains("error: parameter 'a' of 4294967296 bytes is larger than 32764"),
        "{msg}"
    );
}

#[test]
fn static_shared_memory_past_a_blocks_limit_is_an_error_at_the_variable() {
    // 127 arrays of 16 MiB took 4 GB and 1.5 s a block to zero.
    let mut decls = String::new();
    for i in 0..127 {
        decls += &format!(".shared .align 4 .b8 s{i}[16777216];\n");
    }
    let msg = compile_err(&format!("{HEAD}{decls}.visible .entry k()\n{{\nret;\n}}\n"));
    assert!(
        msg.starts_with(
            "k.ptx:4:1: error: shared variable 's0' (16777216 bytes at offset 0) passes the \
             232448 bytes of shared memory a block has"
        ),
        "{msg}"
    );
}

#[test]
fn static_and_dynamic_shared_memory_together_are_limited_at_launch() {
    let text = format!(
        "{HEAD}.shared .align 16 .b8 tile[131072];\n.extern .shared .align 16 .b8 dyn[];\n\
         .visible .entry k()\n{{\nret;\n}}\n"
    );
    let m = Module::from_ptx_named("k.ptx", &text, &CompileOptions::default()).unwrap();
    let k = m.kernel("k").unwrap();
    let launch = |dynamic: u32| {
        k.launch_with(
            &ptxjit::LaunchConfig {
                grid: 1.into(),
                block: 32.into(),
                dynamic_shared_bytes: dynamic,
                cluster: None,
                cooperative: false,
            },
            &[],
        )
    };
    launch(232_448 - 131_072).unwrap();
    let msg = launch(232_448 - 131_072 + 16).unwrap_err().to_string();
    assert!(
        msg.contains(
            "131072 bytes of static and 101392 of dynamic shared memory exceed the limit of 232448"
        ),
        "{msg}"
    );
}
