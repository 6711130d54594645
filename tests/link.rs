//! Linking PTX modules (`ptxjit::link`, the driver's `cuLink*`): an `.extern` that another
//! input defines resolves to it, `.weak` gives way to a strong definition, module-local names
//! never clash, and two strong definitions of one visible name are an error naming both. A
//! library input gives only what the others use.

use ptxjit::{Arg, DeviceBuffer, LinkInput, Module, limit_registers, link};

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// A kernel that stores `twice(21) + bias` through its parameter.
fn caller() -> String {
    format!(
        "{HEADER}.extern .func (.param .b32 r) twice(.param .b32 x);\n\
         .extern .global .align 4 .u32 bias;\n\
         .func (.param .b32 r) helper()\n{{\n.reg .b32 %h;\nmov.u32 %h, 0;\nst.param.b32 [r], %h;\nret;\n}}\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<5>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, 21;\n\
         {{ .param .b32 p; st.param.b32 [p], %r1; .param .b32 q; call.uni (q), twice, (p); ld.param.b32 %r2, [q]; }}\n\
         {{ .param .b32 q; call.uni (q), helper, (); ld.param.b32 %r4, [q]; }}\n\
         ld.global.u32 %r3, [bias];\nadd.u32 %r2, %r2, %r3;\nadd.u32 %r2, %r2, %r4;\n\
         st.global.u32 [%rd1], %r2;\nret;\n}}\n"
    )
}

/// Defines `twice` (`linkage` before it) and `bias`, and a local `helper` of its own that
/// returns 1000 (the caller's returns 0).
fn library(linkage: &str, factor: u32, bias: u32) -> String {
    format!(
        "{HEADER}.func (.param .b32 r) helper()\n{{\n.reg .b32 %h;\nmov.u32 %h, 1000;\nst.param.b32 [r], %h;\nret;\n}}\n\
         {linkage} .func (.param .b32 r) twice(.param .b32 x)\n{{\n.reg .b32 %a<4>;\n\
         {{ .param .b32 q; call.uni (q), helper, (); ld.param.b32 %a3, [q]; }}\n\
         ld.param.b32 %a1, [x];\nmul.lo.u32 %a2, %a1, {factor};\nsub.u32 %a2, %a2, %a3;\nadd.u32 %a2, %a2, 1000;\n\
         st.param.b32 [r], %a2;\nret;\n}}\n\
         .visible .global .align 4 .u32 bias = {bias};\n"
    )
}

fn run(text: &str) -> u32 {
    let module = Module::from_ptx(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let out = DeviceBuffer::zeroed(4).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(1, 1, &[Arg::buffer(&out)])
        .unwrap();
    out.to_vec::<u32>()[0]
}

/// `ptxjit::link` of the named texts, in order.
fn link_named(named: &[(&str, &str)]) -> ptxjit::Result<String> {
    link_with_libraries(named, &[])
}

/// `ptxjit::link` of the named texts, then the named library texts.
fn link_with_libraries(
    named: &[(&str, &str)],
    libraries: &[(&str, &str)],
) -> ptxjit::Result<String> {
    let inputs: Vec<LinkInput> = named
        .iter()
        .map(|&(name, text)| LinkInput {
            name,
            text,
            library: false,
        })
        .chain(libraries.iter().map(|&(name, text)| LinkInput {
            name,
            text,
            library: true,
        }))
        .collect();
    link(&inputs)
}

#[test]
fn an_extern_resolves_to_the_definition_in_another_input() {
    let (a, b) = (caller(), library(".visible", 2, 100));
    let text = link_named(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap();
    // 2 × 21 + 100, each module's `helper` its own.
    assert_eq!(run(&text), 142);
}

#[test]
fn the_order_of_the_inputs_does_not_matter() {
    let (a, b) = (caller(), library(".visible", 2, 100));
    let text = link_named(&[("b.ptx", &b), ("a.ptx", &a)]).unwrap();
    assert_eq!(run(&text), 142);
}

#[test]
fn a_weak_definition_gives_way_to_a_strong_one() {
    let (a, strong) = (caller(), library(".visible", 2, 100));
    // The weak library's `twice` triples; it defines no `bias` (that one is strong in both).
    let weak = library(".weak", 3, 7).replace(".visible .global .align 4 .u32 bias = 7;\n", "");
    let text = link_named(&[("a.ptx", &a), ("weak.ptx", &weak), ("strong.ptx", &strong)]);
    assert_eq!(run(&text.unwrap()), 142);
}

#[test]
fn two_strong_definitions_of_a_visible_name_are_an_error_naming_both() {
    let (a, b, c) = (
        caller(),
        library(".visible", 2, 100),
        library(".visible", 3, 100),
    );
    let e = link_named(&[("a.ptx", &a), ("b.ptx", &b), ("c.ptx", &c)])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("c.ptx") && e.contains("b.ptx") && e.contains("'twice'"),
        "{e}"
    );
}

#[test]
fn an_extern_nothing_defines_is_reported_when_the_result_loads() {
    let a = caller();
    let text = link_named(&[("a.ptx", &a)]).unwrap();
    let e = Module::from_ptx(&text)
        .err()
        .expect("an undefined extern")
        .to_string();
    assert!(e.contains("bias"), "{e}");
}

/// A library of `twice` (with its local `helper`), `bias`, and `unused`, which calls a
/// function nothing defines and is written for a newer target.
fn archive_member() -> String {
    let lib = library(".visible", 2, 100).replace(".target sm_80", ".target sm_121");
    format!(
        "{lib}.extern .func (.param .b32 r) nowhere();\n\
         .visible .func (.param .b32 r) unused()\n{{\n.reg .b32 %u;\n\
         {{ .param .b32 q; call.uni (q), nowhere, (); ld.param.b32 %u, [q]; }}\n\
         st.param.b32 [r], %u;\nret;\n}}\n"
    )
}

#[test]
fn a_library_gives_what_the_other_inputs_use_with_what_that_uses() {
    let (a, lib) = (caller(), archive_member());
    let text = link_with_libraries(&[("a.ptx", &a)], &[("lib.a(0)", &lib)]).unwrap();
    assert_eq!(run(&text), 142);
    // `unused` and the `nowhere` it would need stay out.
    assert!(
        !text.contains("unused") && !text.contains("nowhere"),
        "{text}"
    );
}

#[test]
fn a_library_nothing_uses_adds_nothing_not_even_its_target() {
    let (a, b, lib) = (caller(), library(".visible", 3, 0), archive_member());
    let text = link_with_libraries(&[("a.ptx", &a), ("b.ptx", &b)], &[("lib.a(0)", &lib)]).unwrap();
    assert_eq!(run(&text), 63);
    assert!(
        text.contains(".target sm_80") && !text.contains("sm_121"),
        "{text}"
    );
}

#[test]
fn a_declaration_with_other_return_values_reaches_the_definition_by_name() {
    // numba declares a C function returning `void` as returning an int, and the reverse.
    let caller = format!(
        "{HEADER}.extern .func (.param .b32 r) store(.param .b64 p, .param .b32 v);\n\
         .extern .func twice_into(.param .b64 p);\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [out];\n\
         {{ .param .b64 p; st.param.b64 [p], %rd1; .param .b32 v; st.param.b32 [v], 21;\n\
         .param .b32 q; call.uni (q), store, (p, v); ld.param.b32 %r1, [q]; }}\n\
         {{ .param .b64 p; st.param.b64 [p], %rd1; call.uni twice_into, (p); }}\nret;\n}}\n"
    );
    let callee = format!(
        "{HEADER}.visible .func store(.param .b64 p, .param .b32 v)\n{{\n.reg .b32 %a;\n\
         .reg .b64 %b;\nld.param.b64 %b, [p];\nld.param.b32 %a, [v];\nst.u32 [%b], %a;\nret;\n}}\n\
         .visible .func (.param .b32 r) twice_into(.param .b64 p)\n{{\n.reg .b32 %a;\n\
         .reg .b64 %b;\nld.param.b64 %b, [p];\nld.u32 %a, [%b];\nadd.u32 %a, %a, %a;\n\
         st.u32 [%b], %a;\nst.param.b32 [r], %a;\nret;\n}}\n"
    );
    let text = link_named(&[("a.ptx", &caller), ("b.ptx", &callee)]).unwrap();
    assert_eq!(run(&text), 42);
    // Parameters that differ are still an error where the call is checked.
    let wrong = callee.replace(
        "store(.param .b64 p, .param .b32 v)",
        "store(.param .b64 p)",
    );
    let wrong = wrong.replace("ld.param.b32 %a, [v];\n", "");
    let text = link_named(&[("a.ptx", &caller), ("b.ptx", &wrong)]).unwrap();
    assert!(Module::from_ptx(&text).is_err());
}

#[test]
fn a_register_limit_caps_every_kernels_count_and_keeps_a_smaller_own_one() {
    // 40 virtual registers in `k`, 40 in `own` (which asks for at most 16 itself).
    let uses: String = (1..40)
        .map(|i| format!("add.u32 %r{i}, %r{}, {i};\n", i - 1))
        .collect();
    let kernel = |name: &str, directive: &str| {
        format!(
            ".visible .entry {name}(.param .u64 out){directive}\n{{\n.reg .b32 %r<40>;\n\
             mov.u32 %r0, 0;\n{uses}ret;\n}}\n"
        )
    };
    let text = format!(
        "{HEADER}{}{}",
        kernel("k", ""),
        kernel("own", " .maxnreg 16")
    );
    let registers = |text: &str, name: &str| {
        let module = Module::from_ptx(text).unwrap();
        module.kernel(name).unwrap().attributes().registers
    };
    assert_eq!(registers(&text, "k"), 40);
    let limited = limit_registers("t.ptx", &text, 32).unwrap();
    assert_eq!(registers(&limited, "k"), 32);
    assert_eq!(registers(&limited, "own"), 16);
}
