//! Instruction decoding as the PTX ISA writes it.
//!
//! Every form ptxjit runs is one row of [`forms::FORMS`]: the ISA's syntax line
//! (`add{.sat}.s32 d, a, b`), the sets it names (`.type = { .u16, .u32 }`), the ISA section
//! that defines it, and the function that builds the checked [`Op`]. Decoding, operand
//! counts, which operands are addresses, and the "unsupported" diagnostic naming the closest
//! form all derive from the rows, so the table can be read against the ISA line by line and
//! a new instruction is a row plus its lowering.
//!
//! Matching follows ptxas rather than the letter of the lines in one respect: the qualifiers
//! of a line may come in any order (nvcc 13 writes `atom.global.cta.add.u32`, which the ISA
//! orders `atom.cta.global`), except that elements which could take the same word keep the
//! line's order: `cvt.f32.f16` is `.dtype = .f32, .atype = .f16`, `.row.col` is
//! `.alayout.blayout`.

mod forms;
mod syntax;

use super::checked::Op;
use crate::types::PtxType;
use std::collections::HashMap;
use std::sync::OnceLock;
use syntax::{Line, Words};

pub use forms::FORMS;

/// One row of the table: an ISA syntax line and how to build its `Op`.
pub struct Form {
    /// `opcode-pattern operands`, as the ISA writes it: `shfl.sync.mode.b32 d{|p}, a, b, c,
    /// membermask`. `{...}` is optional; `.name` is a set when `sets` (or [`SHARED_SETS`])
    /// defines it, a literal qualifier otherwise.
    pub syntax: &'static str,
    /// The line's sets: `.mode = { .up, .down }; .type = { .b32, .b64 }`. A member written
    /// `.shared{::cta}` stands for `.shared` and `.shared::cta`.
    pub sets: &'static str,
    /// The ISA section that defines the line (its title, stable across ISA versions).
    pub section: &'static str,
    pub build: fn(&Match) -> Op,
}

/// Sets several instructions name the same way (a line's own `sets` take precedence).
pub const SHARED_SETS: &str = ".scope = { .cta, .cluster, .gpu, .sys };
    .level::cache_hint = { .L2::cache_hint };
    .level::prefetch_size = { .L2::64B, .L2::128B, .L2::256B };
    .level1::eviction_priority = { .L1::evict_normal, .L1::evict_unchanged, .L1::evict_first,
        .L1::evict_last, .L1::no_allocate };
    .level2::eviction_priority = { .L2::evict_normal, .L2::evict_first, .L2::evict_last };
    .cop = { .ca, .cg, .cs, .lu, .cv }";

/// The words of an opcode that matched a line, by the element that took them.
pub struct Match<'o> {
    words: Vec<(&'static str, &'o str)>,
}

impl<'o> Match<'o> {
    /// The word the element `name` (`.mode`, or a literal such as `.sat`) took, if present.
    pub fn word(&self, name: &str) -> Option<&'o str> {
        self.words.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
    }

    pub fn has(&self, name: &str) -> bool {
        self.word(name).is_some()
    }

    /// The type the element `name` took (the row's sets hold only type names there).
    pub fn ty(&self, name: &str) -> PtxType {
        self.word(name)
            .and_then(PtxType::from_name)
            .unwrap_or_else(|| panic!("{name} is a set of types in this row"))
    }
}

/// A decoded instruction: its family, and where the line it matched writes addresses.
pub struct Decoded {
    pub op: Op,
    addresses: &'static [usize],
}

impl Decoded {
    /// Whether operand `k` is written `[a]` in the line.
    pub fn is_address(&self, k: usize) -> bool {
        self.addresses.contains(&k)
    }
}

pub enum DecodeError {
    /// No row's opcode pattern matches (the message names the closest form).
    Unsupported(String),
    /// Rows match the opcode but none takes this many operands.
    Operands(String),
}

/// The table compiled, and its lines by base name.
struct Table {
    lines: Vec<Line>,
    by_base: HashMap<String, Vec<usize>>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let shared = syntax::parse_sets(SHARED_SETS);
        let lines: Vec<Line> = FORMS
            .iter()
            .enumerate()
            .map(|(i, f)| Line::new(i, f, &shared))
            .collect();
        let mut by_base: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, l) in lines.iter().enumerate() {
            for base in &l.bases {
                by_base.entry(base.clone()).or_default().push(i);
            }
        }
        Table { lines, by_base }
    })
}

fn rows_for(base: &str) -> impl Iterator<Item = &'static Line> {
    let t = table();
    let rows = t.by_base.get(base).into_iter().flatten();
    rows.map(move |&i| &t.lines[i])
}

/// Decodes `opcode` written with `operands` operands.
pub fn decode_instruction(opcode: &str, operands: usize) -> Result<Decoded, DecodeError> {
    let words = Words::split(opcode);
    let mut counts = Vec::new();
    for line in rows_for(words.base) {
        let Some(m) = line.matches(&words) else {
            continue;
        };
        if line.operands.counts.contains(&operands) {
            return Ok(Decoded {
                op: (line.form.build)(&m),
                addresses: &line.operands.addresses,
            });
        }
        counts.extend(line.operands.counts.iter().copied());
    }
    if counts.is_empty() {
        return Err(DecodeError::Unsupported(unsupported(opcode, &words)));
    }
    counts.sort_unstable();
    counts.dedup();
    let expected = counts
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" or ");
    Err(DecodeError::Operands(format!(
        "'{opcode}' takes {expected} operands, found {operands}"
    )))
}

/// Whether some line has the opcode's base name (`ld` of `ld.global.v3.f32`): the parser
/// reads the operands of such an instruction, and skips those of one no line knows
/// (`tex`'s `[tex, {x, y}]`), leaving the checker to name it.
pub fn knows_base(opcode: &str) -> bool {
    let base = opcode.split('.').next().unwrap_or("");
    table().by_base.contains_key(base)
}

/// Decodes an opcode alone (the first line it matches, whatever its operands).
pub fn decode(opcode: &str) -> Result<Op, String> {
    let words = Words::split(opcode);
    rows_for(words.base)
        .find_map(|line| line.matches(&words).map(|m| (line.form.build)(&m)))
        .ok_or_else(|| unsupported(opcode, &words))
}

/// `unsupported instruction 'X'`, with the closest line ptxjit runs when one shares the
/// opcode's base name: the one whose elements take the most of its words, then the one that
/// lacks the fewest required words, then the first.
fn unsupported(opcode: &str, words: &Words) -> String {
    let closest = rows_for(words.base).max_by_key(|line| {
        let taken = words.rest.iter().filter(|w| line.takes(w)).count();
        let lacking = line.required_missing(&words.rest);
        // max_by_key keeps the last of equals: count the index down.
        (
            taken,
            std::cmp::Reverse(lacking),
            std::cmp::Reverse(line.index),
        )
    });
    match closest {
        Some(line) => format!(
            "unsupported instruction '{opcode}' (the closest form ptxjit runs is '{}', {})",
            line.form.syntax.split_whitespace().next().unwrap_or(""),
            line.form.section
        ),
        None => format!("unsupported instruction '{opcode}'"),
    }
}

#[cfg(test)]
mod tests;
