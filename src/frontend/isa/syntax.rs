//! The notation of the ISA's syntax lines, compiled once: opcode patterns into elements,
//! operand lists into counts and address positions; and the matcher of an opcode's words.

use super::{Form, Match};

/// An opcode split at its dots: `atom.global.add.u32` → `atom`, [`global`, `add`, `u32`].
pub struct Words<'o> {
    pub base: &'o str,
    pub rest: Vec<&'o str>,
}

impl<'o> Words<'o> {
    pub fn split(opcode: &'o str) -> Words<'o> {
        let mut parts = opcode.split('.');
        Words {
            base: parts.next().unwrap_or(""),
            rest: parts.collect(),
        }
    }
}

/// One qualifier position of a line: a literal (`.sat`) or a set (`.type`).
#[derive(Debug)]
pub struct Element {
    /// As written in the line, with its dot: `.sat`, `.type`.
    pub name: &'static str,
    /// The words it takes, without dots.
    pub members: Vec<String>,
    /// The optional group (`{...}`) it belongs to; `None` when required.
    pub group: Option<usize>,
}

/// What a line's operand list allows.
#[derive(Debug)]
pub struct Operands {
    /// The operand counts the line takes (each optional `{, x}` group present or not).
    pub counts: Vec<usize>,
    /// Positions of the operands written `[a]`.
    pub addresses: Vec<usize>,
}

/// Words the ISA gives meaning by position: `mma`'s `.row.col` is A's layout then B's, so
/// `.col.row` is another form, not a reordering.
const POSITIONAL: &[&[&str]] = &[&["row", "col"]];

fn positional(v: &str, w: &str) -> bool {
    POSITIONAL
        .iter()
        .any(|kind| kind.contains(&v) && kind.contains(&w))
}

/// A compiled row of the table.
pub struct Line {
    pub form: &'static Form,
    pub index: usize,
    /// The opcode's base name as the line writes it: `add`, or a set such as `vop`.
    pub base: &'static str,
    /// The base names the line takes: `add`, or the members of the set `vop`.
    pub bases: Vec<String>,
    pub elements: Vec<Element>,
    /// `overlaps[i][j]`: elements `i` and `j` could take the same word (so keep their order).
    overlaps: Vec<Vec<bool>>,
    pub operands: Operands,
}

impl Line {
    /// Compiles `form`; `shared` is [`super::SHARED_SETS`] parsed (once, by the caller).
    pub fn new(index: usize, form: &'static Form, shared: &[(&'static str, Vec<String>)]) -> Line {
        let (pattern, operands) = form
            .syntax
            .split_once(char::is_whitespace)
            .unwrap_or((form.syntax, ""));
        let sets = parse_sets(form.sets);
        let set = |name: &str| {
            sets.iter()
                .chain(shared)
                .find(|(n, _)| *n == name)
                .map(|(_, m)| m.clone())
        };
        let (base, elements) = parse_pattern(pattern, set);
        let bases = set(base).unwrap_or_else(|| vec![base.to_string()]);
        let overlaps = elements
            .iter()
            .map(|a| {
                elements
                    .iter()
                    .map(|b| {
                        a.members
                            .iter()
                            .any(|w| b.members.iter().any(|v| v == w || positional(v, w)))
                    })
                    .collect()
            })
            .collect();
        Line {
            form,
            index,
            base,
            bases,
            elements,
            overlaps,
            operands: parse_operands(operands.trim()),
        }
    }

    /// Whether one of the line's elements could take `word`.
    pub fn takes(&self, word: &str) -> bool {
        self.elements
            .iter()
            .any(|e| e.members.iter().any(|m| m == word))
    }

    /// How many required elements no word of `words` could take.
    pub fn required_missing(&self, words: &[&str]) -> usize {
        let required = self.elements.iter().filter(|e| e.group.is_none());
        required
            .filter(|e| !words.iter().any(|w| e.members.iter().any(|m| m == w)))
            .count()
    }

    /// The words of `opcode` by element, when they fit the line.
    pub fn matches<'o>(&self, words: &Words<'o>) -> Option<Match<'o>> {
        if !self.bases.iter().any(|b| b == words.base) || words.rest.len() > self.elements.len() {
            return None;
        }
        let mut taken = vec![None; self.elements.len()];
        if !self.assign(&words.rest, 0, &mut taken) {
            return None;
        }
        let by_element = taken
            .iter()
            .enumerate()
            .filter_map(|(e, w)| w.map(|w: usize| (self.elements[e].name, words.rest[w])))
            .chain([(self.base, words.base)])
            .collect();
        Some(Match { words: by_element })
    }

    /// Gives word `i` and those after it each an element of their own (backtracking).
    fn assign(&self, words: &[&str], i: usize, taken: &mut [Option<usize>]) -> bool {
        let Some(word) = words.get(i) else {
            return self.complete(taken);
        };
        for (e, element) in self.elements.iter().enumerate() {
            let free = taken[e].is_none() && element.members.iter().any(|m| m == word);
            // An element that could take the same word as a later one, already taken,
            // would break the line's order.
            let in_order =
                || (e + 1..taken.len()).all(|f| taken[f].is_none() || !self.overlaps[e][f]);
            if free && in_order() {
                taken[e] = Some(i);
                if self.assign(words, i + 1, taken) {
                    return true;
                }
                taken[e] = None;
            }
        }
        false
    }

    /// Every required element has its word, and each optional group all or none.
    fn complete(&self, taken: &[Option<usize>]) -> bool {
        // Bit g: group g has an element present / absent (a line has far fewer than 64).
        let (mut present, mut absent) = (0u64, 0u64);
        for (e, element) in self.elements.iter().enumerate() {
            match (element.group, taken[e].is_some()) {
                (None, false) => return false,
                (None, true) => {}
                (Some(g), true) => present |= 1 << g,
                (Some(g), false) => absent |= 1 << g,
            }
        }
        present & absent == 0
    }
}

/// `.name = { .a, .b{::c} }; ...` → (`.name`, [`a`, `b`, `b::c`]).
pub fn parse_sets(text: &'static str) -> Vec<(&'static str, Vec<String>)> {
    text.split(';')
        .filter(|d| !d.trim().is_empty())
        .map(|d| {
            let (name, members) = d.split_once('=').expect("a set is `.name = { ... }`");
            let members = members.trim().trim_start_matches('{').trim_end_matches('}');
            let members = members
                .split(',')
                .flat_map(|m| {
                    let m = m.trim().trim_start_matches('.');
                    match m.split_once("{::") {
                        // `.shared{::cta}`: with and without the sub-qualifier.
                        Some((word, sub)) => {
                            vec![
                                word.to_string(),
                                format!("{word}::{}", sub.trim_end_matches('}')),
                            ]
                        }
                        None => vec![m.to_string()],
                    }
                })
                .collect();
            (name.trim(), members)
        })
        .collect()
}

/// `add{.sat}.s32` → `add`, [`.sat` (optional group 0), `.s32`].
fn parse_pattern(
    pattern: &'static str,
    set: impl Fn(&str) -> Option<Vec<String>>,
) -> (&'static str, Vec<Element>) {
    let base_end = pattern.find(['.', '{']).unwrap_or(pattern.len());
    let mut elements = Vec::new();
    let mut group = None;
    let mut groups = 0;
    let mut rest = &pattern[base_end..];
    while let Some(c) = rest.chars().next() {
        match c {
            '{' => {
                group = Some(groups);
                groups += 1;
                rest = &rest[1..];
            }
            '}' => {
                group = None;
                rest = &rest[1..];
            }
            '.' => {
                let end = rest[1..]
                    .find(['.', '{', '}'])
                    .map_or(rest.len(), |i| i + 1);
                let name = &rest[..end];
                let members = set(name).unwrap_or_else(|| vec![name[1..].to_string()]);
                elements.push(Element {
                    name,
                    members,
                    group,
                });
                rest = &rest[end..];
            }
            _ => panic!("unexpected '{c}' in the pattern '{pattern}'"),
        }
    }
    assert!(
        groups <= 64,
        "'{pattern}' has more optional groups than `complete` counts"
    );
    (&pattern[..base_end], elements)
}

/// `d, [a]{, cache-policy}` → counts [2, 3], addresses [1]. A `{...}` holding a comma is an
/// optional operand group; other braces (`{!}c`, `d{|p}`) belong to their operand.
fn parse_operands(text: &str) -> Operands {
    let mut required = 0;
    let mut optional: Vec<usize> = Vec::new();
    let mut addresses = Vec::new();
    let mut rest = text;
    let mut at_operand_start = true;
    while !rest.is_empty() {
        if let Some(group) = rest.strip_prefix("{,") {
            let end = group
                .find('}')
                .expect("an optional operand group ends with '}'");
            optional.push(group[..end].split(',').count());
            rest = &group[end + 1..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        if at_operand_start && !c.is_whitespace() && c != ',' {
            if rest.trim_start_matches("{!}").starts_with('[') && optional.is_empty() {
                addresses.push(required);
            }
            required += 1;
            at_operand_start = false;
        }
        if c == ',' {
            at_operand_start = true;
        }
        // Skip a brace group that belongs to the operand (`{|p}`, `{.unified}`), and an
        // address's brackets (`[tensorMap, tensorCoords]` is one operand).
        rest = match c {
            '{' => &rest[rest.find('}').map_or(rest.len(), |i| i + 1)..],
            '[' => &rest[rest.find(']').map_or(rest.len(), |i| i + 1)..],
            _ => &rest[c.len_utf8()..],
        };
    }
    // Each optional group present or not.
    let mut counts = vec![required];
    for size in optional {
        let more: Vec<usize> = counts.iter().map(|c| c + size).collect();
        counts.extend(more);
    }
    counts.sort_unstable();
    counts.dedup();
    Operands { counts, addresses }
}
