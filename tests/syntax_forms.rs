//! The declaration and operand syntax real PTX files contain beyond the instructions, one rule
//! per test, each run in both compiled forms: vector registers, `.func` parameters that are
//! registers, a register plus a constant as an operand, addresses in initializers.

use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs kernel `k(.param .u64 out)` of `ptx` on one thread in both compiled forms; the
/// first `words` u64 of the output buffer (the same in both).
fn run(ptx: &str, words: usize) -> Vec<u64> {
    let results: Vec<Vec<u64>> = [LaneGroups::Off, LaneGroups::Always]
        .into_iter()
        .map(|lane_groups| {
            let opts = CompileOptions {
                lane_groups,
                ..CompileOptions::default()
            };
            let module = Module::from_ptx_named("t.ptx", ptx, &opts)
                .unwrap_or_else(|e| panic!("{e}\n{ptx}"));
            let out = DeviceBuffer::zeroed(words * 8).unwrap();
            module
                .kernel("k")
                .unwrap()
                .launch(1, 1, &[Arg::buffer(&out)])
                .unwrap_or_else(|e| panic!("{e}"));
            out.to_vec()
        })
        .collect();
    assert_eq!(results[0], results[1], "the two compiled forms differ");
    results[0].clone()
}

/// A kernel `k` whose body starts with `%out` holding the output address.
fn kernel(before: &str, body: &str) -> String {
    format!(
        "{HEADER}{before}\n.visible .entry k(.param .u64 k_out)\n{{\n.reg .b64 %out;\n\
         ld.param.u64 %out, [k_out];\n{body}\nret;\n}}\n"
    )
}

fn check_error(ptx: &str) -> String {
    match Module::from_ptx_named("t.ptx", ptx, &CompileOptions::default()) {
        Ok(_) => panic!("accepted:\n{ptx}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_vector_register_element_is_named_by_xyzw_or_rgba() {
    let got = run(
        &kernel(
            "",
            ".reg .v4 .u32 v;\n.reg .u32 s;\n\
             mov.u32 v.x, 1;\nmov.u32 v.y, 2;\nmov.u32 v.b, 3;\nmov.u32 v.a, 4;\n\
             add.u32 s, v.r, v.w;\nst.global.u32 [%out], s;\nst.global.u32 [%out+4], v.z;\n\
             st.global.u32 [%out+8], v.g;",
        ),
        2,
    );
    assert_eq!(got, [3 << 32 | 5, 2]);
}

#[test]
fn a_vector_register_stands_for_its_elements_in_ld_st_and_mov() {
    // ld.v2 fills it, mov.b64 packs it (x low), st.v2 stores it, mov.b64 unpacks into it.
    let got = run(
        &kernel(
            "",
            ".reg .v2 .u32 v;\n.reg .b64 packed;\n\
             st.global.v2.u32 [%out+8], {7, 9};\nld.global.v2.u32 v, [%out+8];\n\
             mov.b64 packed, v;\nst.global.u64 [%out], packed;\n\
             mov.b64 v, 0x0000000500000006;\nst.global.v2.u32 [%out+16], v;",
        ),
        3,
    );
    assert_eq!(got, [9 << 32 | 7, 9 << 32 | 7, 5 << 32 | 6]);
}

#[test]
fn mov_vec_reads_every_element_before_writing_any() {
    // {a, b, c, d} <- {d, a, b, c} rotates: a sequential copy would repeat d.
    let got = run(
        &kernel(
            "",
            ".reg .u16 a, b, c, d;\n.reg .v4 .u16 v;\n\
             mov.u16 a, 1;\nmov.u16 b, 2;\nmov.u16 c, 3;\nmov.u16 d, 4;\n\
             mov.v4.u16 {a, b, c, d}, {d, a, b, c};\nmov.v4.u16 v, {a, b, c, d};\n\
             st.global.v4.u16 [%out], v;",
        ),
        1,
    );
    assert_eq!(got, [0x0003_0002_0001_0004]);
}

#[test]
fn a_range_of_vector_registers_declares_vectors_written_with_their_type() {
    // `.v2.b16` in one word, as some generators write it.
    let got = run(
        &kernel(
            "",
            ".reg .v2.b16 h<2>;\nmov.b32 h1, 0x00070008;\nmov.b16 h0.y, h1.x;\n\
             mov.b16 h0.x, h1.y;\nst.global.v2.b16 [%out], h0;",
        ),
        1,
    );
    assert_eq!(got, [0x0008_0007]);
}

#[test]
fn reg_parameters_and_returns_of_a_func_are_registers_of_its_body() {
    // Two returns (one a predicate), a parameter the body overwrites; the caller passes
    // registers.
    let ptx = kernel(
        ".func (.reg .u32 a, .reg .pred b) f(.reg .u32 x)\n{\n\
         add.u32 x, x, 1;\nmov.u32 a, x;\nsetp.eq.u32 b, x, 6;\nret;\n}",
        ".reg .u32 r, s;\n.reg .pred p;\nmov.u32 r, 5;\ncall (s, p), f, (r);\n\
         st.global.u32 [%out], s;\n@p st.global.u32 [%out+4], r;",
    );
    assert_eq!(run(&ptx, 1), [5 << 32 | 6]);
}

#[test]
fn a_returned_value_is_the_one_at_the_ret_that_ends_the_call() {
    // `@p ret` returns early with the value so far; falling off the end returns too.
    let ptx = kernel(
        ".func (.reg .u32 a) f(.reg .u32 x)\n{\n.reg .pred p;\n\
         mov.u32 a, 10;\nsetp.eq.u32 p, x, 0;\n@p ret;\nmov.u32 a, 20;\n}",
        ".reg .u32 r, s;\ncall (r), f, (0);\ncall (s), f, (1);\n\
         st.global.v2.u32 [%out], {r, s};",
    );
    assert_eq!(run(&ptx, 1), [20 << 32 | 10]);
}

#[test]
fn vector_reg_parameters_pass_every_element() {
    let ptx = kernel(
        ".func (.reg .v2 .u32 out) swap(.reg .v2 .u32 in)\n{\n\
         mov.v2.u32 out, {in.y, in.x};\nret;\n}",
        ".reg .v2 .u32 v;\nmov.b64 v, 0x0000000200000001;\ncall (v), swap, (v);\n\
         st.global.v2.u32 [%out], v;",
    );
    assert_eq!(run(&ptx, 1), [1 << 32 | 2]);
}

#[test]
fn a_vector_register_where_one_register_is_needed_is_an_error() {
    let e = check_error(&kernel(
        "",
        ".reg .v2 .u32 v;\n.reg .pred p;\n@v st.global.u32 [%out], 1;",
    ));
    assert!(
        e.contains("'v' is a vector register: name one element ('v.x')"),
        "{e}"
    );
    let e = check_error(&kernel("", ".reg .v2 .u32 v;\nmov.u32 v.z, 1;"));
    assert!(e.contains("undefined name 'v.z'"), "{e}");
}

#[test]
fn a_register_plus_a_constant_is_their_sum_as_a_source() {
    let got = run(
        &kernel(
            "",
            ".reg .b64 t;\n.reg .u32 r;\nmov.b64 t, 12;\nmov.u32 r, 7;\n\
             st.global.u64 [%out], t + 1;\nadd.u32 r, r, r+-2;\nst.global.u32 [%out+8], r;",
        ),
        2,
    );
    assert_eq!(got, [13, 12]);
    let e = check_error(&kernel("", ".reg .u32 r;\nmov.u32 r+1, 7;"));
    assert!(
        e.contains("a register cannot take an offset outside [ ]"),
        "{e}"
    );
    let e = check_error(&kernel("", ".reg .f32 f;\nadd.f32 f, f+1, f;"));
    assert!(
        e.contains("'f' is a .f32 register: only integers take '+'"),
        "{e}"
    );
}

#[test]
fn an_initializer_may_hold_the_addresses_of_earlier_variables() {
    // `x`, `y+8` and `generic(z)`: each the address a kernel gets with `mov.u64 r, name`.
    let got = run(
        &kernel(
            ".const .u64 x = 1;\n.global .u32 y[4] = {4, 5, 6};\n.global .b8 z[2];\n\
             .const .u64 table[3] = {x, y+8, generic(z)};",
            ".reg .b64 a, b;\n.reg .u32 r;\n\
             mov.u64 a, x;\nld.const.u64 b, [table];\nsub.u64 a, b, a;\nst.global.u64 [%out], a;\n\
             ld.const.u64 b, [table+8];\nld.global.u32 r, [b];\nst.global.u32 [%out+8], r;\n\
             mov.u64 a, z;\nld.const.u64 b, [table+16];\nsub.u64 a, b, a;\nst.global.u64 [%out+16], a;",
        ),
        3,
    );
    assert_eq!(got, [0, 6, 0]);
    let e = check_error(&format!("{HEADER}.global .u32 x;\n.global .u32 p = x;\n"));
    assert!(
        e.contains("the address of 'x' fills 64 bits, but 'p' holds .u32 elements"),
        "{e}"
    );
    let e = check_error(&format!(
        "{HEADER}.global .u64 p = later;\n.global .u32 later;\n"
    ));
    assert!(
        e.contains("'later' in the initializer of 'p' is not a .global or .const variable declared before it"),
        "{e}"
    );
}

#[test]
fn a_global_or_const_variable_in_a_body_is_a_module_variable_its_scope_names() {
    // Each function's `c` is its own; the inner scope's `c` shadows the outer one and is
    // gone after its `}`; initializers and atomics work as on any module variable.
    let ptx = kernel(
        ".global .u32 c = 1;\n.func (.reg .u32 r) f()\n{\n.const .u32 c = 20;\nld.const.u32 r, [c];\nret;\n}",
        ".global .u32 c = 300;\n.reg .u32 a, b, x;\n{\n.const .u32 c[2] = {4000, 50000};\n\
         ld.const.u32 a, [c+4];\n}\nld.global.u32 b, [c];\natom.global.add.u32 x, [c], 1;\n\
         ld.global.u32 x, [c];\ncall (x), f, ();\nadd.u32 a, a, b;\nadd.u32 a, a, x;\n\
         st.global.u32 [%out], a;\nld.global.u32 x, [c];\nst.global.u32 [%out+4], x;",
    );
    assert_eq!(run(&ptx, 1), [301 << 32 | 50_320]);
}

/// Two `.func`s of one signature and one of another, for the indirect-call rules.
const CALLEES: &str = ".func (.param .u32 r) inc(.param .u32 x)\n{\n.reg .u32 v;\n\
    ld.param.u32 v, [x];\nadd.u32 v, v, 1;\nst.param.u32 [r], v;\nret;\n}\n\
    .func (.param .u32 r) dbl(.param .u32 x)\n{\n.reg .u32 v;\n\
    ld.param.u32 v, [x];\nadd.u32 v, v, v;\nst.param.u32 [r], v;\nret;\n}\n\
    .func (.param .u64 r) wide(.param .u32 x)\n{\n.reg .u64 v;\n\
    mov.u64 v, 99;\nst.param.u64 [r], v;\nret;\n}\n";

/// `call (r), fptr, (10), callees` with `fptr` set by `mov`, in a block with `callees`.
fn indirect(callees: &str, target: &str) -> String {
    kernel(
        CALLEES,
        &format!(
            ".reg .b64 fp;\n.reg .u32 s;\nmov.u64 fp, {target};\n{{\n.param .u32 a;\n.param .u32 b;\n\
             st.param.u32 [a], 10;\n{callees}\ncall (b), fp, (a), which;\n\
             ld.param.u32 s, [b];\n}}\nst.global.u32 [%out], s;"
        ),
    )
}

#[test]
fn an_indirect_call_reaches_the_function_whose_address_the_pointer_holds() {
    let proto = "which: .callprototype (.param .u32 _) _ (.param .u32 _);";
    assert_eq!(run(&indirect(proto, "inc"), 1), [11]);
    assert_eq!(run(&indirect(proto, "dbl"), 1), [20]);
    let targets = "which: .calltargets dbl, inc;";
    assert_eq!(run(&indirect(targets, "dbl"), 1), [20]);
}

#[test]
fn a_function_address_in_an_initializer_is_the_one_mov_gives() {
    let got = run(
        &kernel(
            &format!("{CALLEES}.global .u64 table[2] = {{dbl, inc}};"),
            ".reg .b64 a, b;\nmov.u64 a, inc;\nld.global.u64 b, [table+8];\nsub.u64 a, a, b;\n\
             st.global.u64 [%out], a;\n{\n.param .u32 p;\n.param .u32 q;\n.reg .u32 s;\n\
             st.param.u32 [p], 4;\nproto: .callprototype (.param .u32 _) _ (.param .u32 _);\n\
             ld.global.u64 b, [table];\ncall (q), b, (p), proto;\nld.param.u32 s, [q];\n\
             st.global.u32 [%out+8], s;\n}",
        ),
        2,
    );
    assert_eq!(got, [0, 8]);
}

#[test]
fn a_pointer_to_no_function_the_prototype_admits_ends_the_launch_at_the_call() {
    // `wide` returns 64 bits: the prototype does not admit it; nor a .calltargets list
    // without it; nor a value that is no function's address.
    let proto = "which: .callprototype (.param .u32 _) _ (.param .u32 _);";
    for ptx in [
        indirect(proto, "wide"),
        indirect("which: .calltargets dbl;", "inc"),
        indirect(proto, "%out"),
    ] {
        let module = Module::from_ptx_named("t.ptx", &ptx, &CompileOptions::default()).unwrap();
        let out = DeviceBuffer::zeroed(8).unwrap();
        let e = module
            .kernel("k")
            .unwrap()
            .launch(1, 1, &[Arg::buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("indirect call through an address that is no function")
                && e.contains("call (b), fp, (a), which"),
            "{e}"
        );
    }
}

#[test]
fn a_prototype_admits_no_kernel_even_of_the_same_parameters() {
    // `k(.param .u64)` has the prototype's parameters; a kernel is never a callee (numba's
    // NRT module has such a pair).
    let ptx = kernel(
        ".func sink(.param .u64 x)\n{\nret;\n}\n",
        ".reg .b64 fp;\nmov.u64 fp, sink;\n{\n.param .u64 a;\nst.param.u64 [a], 1;\n\
         which: .callprototype _ (.param .u64 _);\ncall fp, (a), which;\n}\nst.global.u32 [%out], 7;",
    );
    assert_eq!(run(&ptx, 1), [7]);
}

#[test]
fn an_indirect_call_names_a_declared_prototype_or_target_list() {
    let e = check_error(&indirect("which: .calltargets dbl, nothing;", "dbl"));
    assert!(
        e.contains("'nothing' in .calltargets is not a function"),
        "{e}"
    );
    let e = check_error(&indirect("", "dbl"));
    assert!(e.contains("undefined name 'which'"), "{e}");
}

#[test]
fn a_label_is_local_to_its_block() {
    // Triton's inline assembly repeats `{ waitLoop: ... bra waitLoop; }`; a branch takes the
    // innermost label of its name.
    let body = ".reg .b64 %n;\nmov.u64 %n, 0;\n\
        { L: add.u64 %n, %n, 1; setp.lt.u64 %p1, %n, 3; @%p1 bra L; }\n\
        { L: add.u64 %n, %n, 10; setp.lt.u64 %p1, %n, 40; @%p1 bra L; }\n\
        bra L;\nadd.u64 %n, %n, 1000;\nL: st.global.u64 [%out], %n;";
    let ptx = kernel("", &format!(".reg .pred %p1;\n{body}"));
    assert_eq!(run(&ptx, 1), [43]);
    let twice = kernel("", "{ L: bra L; L: ret; }");
    let e = Module::from_ptx(&twice)
        .err()
        .expect("an error")
        .to_string();
    assert!(e.contains("label 'L' is defined twice"), "{e}");
}
