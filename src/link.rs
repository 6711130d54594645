//! Several PTX modules linked into one, as the driver's `cuLink*` does for PTX inputs: each
//! `.extern` declaration that another input defines is dropped, a `.weak` definition gives way
//! to a strong one, and a module-local name that another input also defines is renamed in its
//! own input. The result is one module's PTX text, so a linked image loads like any other.
//!
//! Two strong definitions of one visible name are an error naming both inputs; an `.extern`
//! that nothing defines stays a declaration, and loading the result reports it as the single
//! module would.
//!
//! The driver links by name: a declaration whose return values differ from the definition's
//! (numba declares a C function returning `void` as returning a value) still reaches it,
//! through an adapter with the declaration's signature in the declaring input, whose return
//! values are left unwritten, as on the GPU.
//!
//! An input from a library (an archive such as CUDA's `libcudadevrt.a`) gives only what the
//! other inputs need: the visible definitions that resolve one of their names, with what
//! those use in turn, as a static linker takes archive members.

use std::collections::HashMap;

use crate::error::{Diagnostic, Error, Result, Source};
use crate::frontend::ast;
use crate::frontend::lexer::{Tok, lex};
use crate::frontend::parser;

/// One input: the name its diagnostics use, its PTX text, and whether it comes from a
/// library (and gives only what the others use).
pub struct LinkInput<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub library: bool,
}

struct Parsed {
    source: std::sync::Arc<Source>,
    module: ast::Module,
    /// Which of `module.items` the result takes (all, but for a library).
    taken: Vec<bool>,
}

/// The PTX text of `inputs` linked into one module.
pub fn link(inputs: &[LinkInput]) -> Result<String> {
    let mut parsed = inputs
        .iter()
        .map(|i| {
            let source = Source::new(i.name, i.text);
            let module = parser::parse(&source)?;
            let taken = vec![!i.library; module.items.len()];
            Ok(Parsed {
                source,
                module,
                taken,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    take_from_libraries(&mut parsed);
    parsed.retain(|p| p.taken.contains(&true));
    let winners = visible_definitions(&parsed)?;
    let mut out = header(&parsed);
    let mut declared = std::collections::HashSet::new();
    for (n, p) in parsed.iter().enumerate() {
        let mut renames = local_renames(n, &parsed, &winners);
        let adapters = return_adapters(n, &parsed, &winners);
        for name in adapters.keys() {
            renames.insert(name.clone(), adapter_name(name, n));
        }
        let defines_locally = |name: &str| {
            p.module
                .items
                .iter()
                .any(|i| i.name == name && i.defines && !i.visible)
        };
        for item in p
            .module
            .items
            .iter()
            .zip(&p.taken)
            .filter(|(_, t)| **t)
            .map(|(i, _)| i)
        {
            let name = renames.get(&item.name).unwrap_or(&item.name);
            if let Some(adapter) = adapters.get(&item.name).filter(|_| !item.defines) {
                if declared.insert(name.clone()) {
                    out.push_str(adapter);
                }
                continue;
            }
            let keep = match (item.defines, item.visible) {
                (true, false) => true,
                (true, true) => winners[&item.name] == n,
                // A declaration stands for its own module's local definition, or for a
                // visible one when there is none (once).
                (false, _) => {
                    (defines_locally(&item.name) || winners.get(&item.name).is_none_or(|&w| w == n))
                        && declared.insert(name.clone())
                }
            };
            if keep {
                let text = &p.source.text[item.text.start as usize..item.text.end as usize];
                out.push_str(&renamed(text, &renames));
                out.push('\n');
            }
        }
    }
    Ok(out)
}

/// Marks the library items the result needs: a visible definition of a name that a taken
/// item uses and no input outside the libraries defines, and, within a library input, every
/// item a taken one of its items uses (its module-local helpers, its declarations).
fn take_from_libraries(parsed: &mut [Parsed]) {
    let mut own: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    let mut visible: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    let mut outside = std::collections::HashSet::new();
    for (n, p) in parsed.iter().enumerate() {
        let library = !p.taken.iter().all(|t| *t);
        for (i, item) in p.module.items.iter().enumerate() {
            own.entry((n, item.name.as_str())).or_default().push(i);
            if item.defines && item.visible && library {
                visible.entry(item.name.as_str()).or_default().push((n, i));
            }
            if item.defines && !library {
                outside.insert(item.name.as_str());
            }
        }
    }
    let mut taken: Vec<Vec<bool>> = parsed.iter().map(|p| p.taken.clone()).collect();
    let mut work: Vec<(usize, usize)> = (0..parsed.len())
        .flat_map(|n| (0..taken[n].len()).map(move |i| (n, i)))
        .filter(|&(n, i)| taken[n][i])
        .collect();
    while let Some((n, i)) = work.pop() {
        let p = &parsed[n];
        let item = &p.module.items[i];
        for word in words(&p.source.text[item.text.start as usize..item.text.end as usize]) {
            let word = word.as_str();
            let library_definitions = match outside.contains(word) {
                true => None,
                false => visible.get(word),
            };
            let same_input = own.get(&(n, word)).into_iter().flatten().map(|&j| (n, j));
            for (m, j) in same_input.chain(library_definitions.into_iter().flatten().copied()) {
                if !taken[m][j] {
                    taken[m][j] = true;
                    work.push((m, j));
                }
            }
        }
    }
    for (p, t) in parsed.iter_mut().zip(taken) {
        p.taken = t;
    }
}

/// The words (names, opcodes, registers) of a PTX text.
fn words(text: &str) -> Vec<String> {
    let source = Source::new("", text);
    lex(&source)
        .map(|tokens| {
            tokens
                .into_iter()
                .filter_map(|t| match t.tok {
                    Tok::Word(w) => Some(w),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

fn adapter_name(name: &str, n: usize) -> String {
    format!("{name}_link{n}_returns")
}

/// For each function input `n` declares whose visible definition elsewhere has the same
/// parameters but other return values: the adapter's text.
fn return_adapters(
    n: usize,
    parsed: &[Parsed],
    winners: &HashMap<String, usize>,
) -> HashMap<String, String> {
    let sizes = |ps: &[ast::ParamDecl]| ps.iter().map(|p| p.size()).collect::<Vec<_>>();
    let mut adapters = HashMap::new();
    for decl in parsed[n]
        .module
        .functions
        .iter()
        .filter(|f| f.body.is_none())
    {
        let Some(&w) = winners.get(&decl.name).filter(|&&w| w != n) else {
            continue;
        };
        let Some(def) = parsed[w]
            .module
            .functions
            .iter()
            .find(|f| f.name == decl.name && f.body.is_some())
        else {
            continue;
        };
        if sizes(&decl.params) != sizes(&def.params) || sizes(&decl.returns) == sizes(&def.returns)
        {
            continue;
        }
        let param = |prefix: &str, k: usize, p: &ast::ParamDecl| {
            format!(
                ".param .align {} .b8 {prefix}{k}[{}]",
                p.alignment(),
                p.size()
            )
        };
        let list = |prefix: &str, ps: &[ast::ParamDecl]| {
            ps.iter()
                .enumerate()
                .map(|(k, p)| param(prefix, k, p))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let names = |prefix: &str, count: usize| {
            (0..count)
                .map(|k| format!("{prefix}{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let temps: String = def
            .returns
            .iter()
            .enumerate()
            .map(|(k, p)| format!("{};\n", param("t", k, p)))
            .collect();
        let returns = match def.returns.len() {
            0 => String::new(),
            k => format!("({}), ", names("t", k)),
        };
        let own_returns = match decl.returns.len() {
            0 => String::new(),
            _ => format!("({}) ", list("r", &decl.returns)),
        };
        let text = format!(
            ".func {own_returns}{}({})\n{{\n{temps}call.uni {returns}{}, ({});\nret;\n}}\n",
            adapter_name(&decl.name, n),
            list("a", &decl.params),
            decl.name,
            names("a", decl.params.len()),
        );
        adapters.insert(decl.name.clone(), text);
    }
    adapters
}

/// `text` with `.maxnreg max` on every kernel it defines: the driver's `CU_JIT_MAX_REGISTERS`
/// option, which a linked image keeps (a kernel's own smaller `.maxnreg` still holds).
pub fn limit_registers(name: &str, text: &str, max: u32) -> Result<String> {
    let source = Source::new(name, text);
    let module = parser::parse(&source)?;
    let kernels: std::collections::HashSet<&str> = module
        .functions
        .iter()
        .filter(|f| f.kind == ast::FunctionKind::Entry && f.body.is_some())
        .map(|f| f.name.as_str())
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for item in module
        .items
        .iter()
        .filter(|i| i.defines && kernels.contains(i.name.as_str()))
    {
        let (start, end) = (item.text.start as usize, item.text.end as usize);
        // The body's `{` is the item's first: a signature holds none.
        if let Some(brace) = text[start..end].find('{') {
            out.push_str(&text[at..start + brace]);
            out.push_str(&format!(".maxnreg {max}\n"));
            at = start + brace;
        }
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// For each name that some input defines visibly, the input whose definition stands: a
/// strong one over `.weak` ones, else the first.
fn visible_definitions(parsed: &[Parsed]) -> Result<HashMap<String, usize>> {
    let mut winners: HashMap<String, (usize, bool)> = HashMap::new();
    for (n, p) in parsed.iter().enumerate() {
        for item in p.module.items.iter().filter(|i| i.defines && i.visible) {
            match winners.get(&item.name) {
                None => {
                    winners.insert(item.name.clone(), (n, item.weak));
                }
                Some(_) if item.weak => {}
                Some(&(_, true)) => {
                    winners.insert(item.name.clone(), (n, false));
                }
                Some(&(w, false)) => {
                    let d = Diagnostic::new(
                        &p.source,
                        item.text,
                        format!(
                            "'{}' is defined here and in {}: a visible name may be defined once",
                            item.name, parsed[w].source.name
                        ),
                    );
                    return Err(Error::from(d));
                }
            }
        }
    }
    Ok(winners.into_iter().map(|(k, (n, _))| (k, n)).collect())
}

/// The module-local names input `n` defines that a visible definition elsewhere, or a local
/// one in an earlier input, also defines: each gets a name of its own.
fn local_renames(
    n: usize,
    parsed: &[Parsed],
    winners: &HashMap<String, usize>,
) -> HashMap<String, String> {
    let earlier_local = |name: &str| {
        parsed[..n].iter().any(|p| {
            p.module
                .items
                .iter()
                .any(|i| i.name == name && i.defines && !i.visible)
        })
    };
    parsed[n]
        .module
        .items
        .iter()
        .filter(|i| i.defines && !i.visible)
        .filter(|i| winners.get(&i.name).is_some_and(|&w| w != n) || earlier_local(&i.name))
        .map(|i| (i.name.clone(), format!("{}_link{n}", i.name)))
        .collect()
}

/// `text` with each word in `renames` replaced.
fn renamed(text: &str, renames: &HashMap<String, String>) -> String {
    if renames.is_empty() {
        return text.to_string();
    }
    let source = Source::new("", text);
    let Ok(tokens) = lex(&source) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for t in tokens {
        if let Tok::Word(w) = &t.tok
            && let Some(new) = renames.get(w)
        {
            out.push_str(&text[at..t.span.start as usize]);
            out.push_str(new);
            at = t.span.end as usize;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// `.version`, `.target` and `.address_size` for the linked module: the newest version and
/// the target of the input with the highest `sm_` number.
fn header(parsed: &[Parsed]) -> String {
    let version = parsed
        .iter()
        .filter_map(|p| p.module.version.as_deref())
        .max_by_key(|v| version_key(v))
        .unwrap_or("8.0");
    let sm = |p: &Parsed| {
        p.module
            .target
            .iter()
            .filter_map(|t| t.strip_prefix("sm_"))
            .map(|t| t.trim_end_matches(|c: char| c.is_ascii_alphabetic()))
            .filter_map(|t| t.parse::<u32>().ok())
            .max()
            .unwrap_or(0)
    };
    let target = parsed
        .iter()
        .filter(|p| !p.module.target.is_empty())
        .max_by_key(|p| sm(p))
        .map_or_else(|| "sm_52".to_string(), |p| p.module.target.join(", "));
    format!(".version {version}\n.target {target}\n.address_size 64\n\n")
}

fn version_key(v: &str) -> (u32, u32) {
    let (major, minor) = v.split_once('.').unwrap_or((v, "0"));
    (major.parse().unwrap_or(0), minor.parse().unwrap_or(0))
}
