//! Bad input gets a diagnostic, never a panic: every bundled PTX file (examples, corpus,
//! compiler kernels, the instruction-form fixtures) mutated at random — lines cut, dropped
//! or swapped, tokens swapped, types and registers changed, undefined registers, huge
//! immediates — must compile (in the lane-group form, which contains the one-thread code
//! too) or fail with an error.

/// Mutates each file `rounds` times from `seed`; returns (compiles tried, panics).
fn campaign(rounds: usize, seed: u64) -> (usize, usize) {
    let mut files = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for top in [
        "tests/corpus",
        "tests/compilers",
        "tests/fixtures/forms",
        "examples",
    ] {
        for e in std::fs::read_dir(root.join(top)).unwrap() {
            let p = e.unwrap().path();
            for f in std::fs::read_dir(&p).into_iter().flatten() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|x| x == "ptx") {
                    files.push(f);
                }
            }
        }
    }
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut panics = 0;
    let mut total = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..rounds {
            let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            for _ in 0..(1 + next() % 3) {
                let i = (next() as usize) % l.len();
                match next() % 14 {
                    0 => {
                        l.remove(i);
                    }
                    1 => {
                        let j = (next() as usize) % l.len();
                        l.swap(i, j);
                    }
                    2 => l[i] = l[i].replace("%r", "%q"),
                    3 => l[i] = l[i].replace(".f16", ".f32"),
                    4 => l[i] = l[i].replace(", ", ", 99999999999999999999, "),
                    5 => {
                        let cut = (next() as usize) % (l[i].len() + 1);
                        l[i] = l[i].chars().take(cut).collect();
                    }
                    6 => l[i] = l[i].replace(".b32", ".pred").replace(".u32", ".b16"),
                    7 => l[i] = l[i].replace(".u64", ".b128").replace(".f32", ".pred"),
                    8 => l[i] = l[i].replace(".s32", ".f16x2").replace(".b16", ".f64"),
                    9 => l[i] = l[i].replace("[", "").replace("]", ""),
                    10 => l[i] = l[i].replace("%rd", "%r"),
                    11 => {
                        let mut t: Vec<&str> = l[i].split_whitespace().collect();
                        if t.len() > 1 {
                            let (a, b) = (next() as usize % t.len(), next() as usize % t.len());
                            t.swap(a, b);
                        }
                        l[i] = t.join(" ");
                    }
                    12 => l[i] = l[i].replacen("%r", "%undeclared", 1),
                    _ => l[i] = l[i].replace("{", "").replace("}", ""),
                }
            }
            let mutated = l.join("\n");
            total += 1;
            let opts = ptxjit::CompileOptions {
                lane_groups: ptxjit::LaneGroups::Always,
                ..Default::default()
            };
            let r = std::panic::catch_unwind(|| {
                match ptxjit::Module::from_ptx_named("mutated.ptx", &mutated, &opts) {
                    Ok(m) => {
                        let _ = m.kernel_names();
                    }
                    Err(e) => {
                        let _ = e.to_string();
                    }
                }
            });
            if r.is_err() {
                panics += 1;
                let out =
                    std::env::temp_dir().join(format!("ptxjit-mutation-panic-{seed}-{panics}.ptx"));
                std::fs::write(&out, &mutated).unwrap();
                eprintln!(
                    "panic compiling a mutated {}: saved as {}",
                    f.display(),
                    out.display()
                );
            }
        }
    }
    (total, panics)
}

#[test]
fn mutated_ptx_never_panics_the_compiler() {
    let (total, panics) = campaign(6, 0x9E37_79B9_7F4A_7C15);
    assert!(total > 200);
    assert_eq!(panics, 0);
}

#[test]
#[ignore = "long campaign: cargo test --release --test mutation -- --ignored"]
fn mutated_ptx_never_panics_the_compiler_long_campaign() {
    for seed in 1..=4 {
        let (total, panics) = campaign(300, seed);
        println!("seed {seed}: {total} mutated files, {panics} panics");
        assert_eq!(panics, 0);
    }
}
