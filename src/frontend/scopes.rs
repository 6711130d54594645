//! A function's nested `{ }` scopes and the names declared in them: registers, `.local` /
//! `.shared` variables, and `.global` / `.const` variables declared in the body (module
//! variables whose name only the scope sees).
//!
//! A register gets its id (its index in the function's register table) when it is first
//! used, not when it is declared, and a range `%r<N>` is never expanded: declared but unused
//! registers cost nothing, so a 300-byte file declaring millions of them is cheap, and every
//! later stage (lowering, frames, lane groups) sees only the registers the code uses.
//!
//! A vector register (`.reg .v4 .u32 v`) is its elements, consecutive scalar registers named
//! `v.x`, `v.y`, ...: `v.x` (or `v.r`) names one, `v` all of them (`Name::Vector`), so every
//! instruction that takes `{a, b, c, d}` takes `v` too.

use std::cell::RefCell;
use std::collections::HashMap;

use super::ast::RegName;
use super::checked::{Reg, RegId};
use crate::types::PtxType;

/// Registers a function may use. Every register may become a parameter of one Cranelift block
/// (a loop header, say), and Cranelift numbers a block's parameters with 16 bits; the rest of
/// the 65,535 is left for the lowering's own variables.
pub const MAX_REGISTERS: usize = 60_000;

#[derive(Clone, Copy)]
pub enum Name {
    Reg(RegId),
    /// A vector register: `n` registers from the first.
    Vector(RegId, u32),
    Var(usize),
    /// A module variable (its index), declared in the body.
    Global(usize),
}

enum Declared {
    /// A register (of `vector` elements) and, once used, its (first element's) id.
    Reg {
        ty: PtxType,
        vector: u32,
        id: Option<RegId>,
    },
    Var(usize),
    Global(usize),
}

struct Range {
    ty: PtxType,
    vector: u32,
    count: u32,
    /// Ids of the registers of the range used so far, by index.
    ids: HashMap<u32, RegId>,
}

#[derive(Default)]
struct Scope {
    names: HashMap<String, Declared>,
    /// Ranges by the name before the index (`%r` for `%r<8>`).
    ranges: HashMap<String, Range>,
}

impl Scope {
    /// Whether `name` is declared here, by name or as a member of a range.
    fn declares(&self, name: &str) -> bool {
        self.names.contains_key(name)
            || split_index(name)
                .is_some_and(|(prefix, i)| self.ranges.get(prefix).is_some_and(|r| i < r.count))
    }
}

/// `%r12` → (`%r`, 12). Range members are written without leading zeros.
fn split_index(name: &str) -> Option<(&str, u32)> {
    let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &name[prefix.len()..];
    if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
        return None;
    }
    Some((prefix, digits.parse().ok()?))
}

pub struct Scopes {
    // Interior mutability: a lookup may give a register its id.
    stack: RefCell<Vec<Scope>>,
    regs: RefCell<Vec<Reg>>,
}

impl Default for Scopes {
    /// The function's outermost scope, empty.
    fn default() -> Scopes {
        Scopes {
            stack: RefCell::new(vec![Scope::default()]),
            regs: RefCell::new(Vec::new()),
        }
    }
}

impl Scopes {
    pub fn push(&mut self) {
        self.stack.get_mut().push(Scope::default());
    }

    pub fn pop(&mut self) {
        self.stack.get_mut().pop();
    }

    /// Declares a register name or range (of vectors of `vector` elements when it is not 1)
    /// in the innermost scope; `Err` says why it cannot be.
    pub fn declare_reg(&mut self, decl: &RegName, ty: PtxType, vector: u32) -> Result<(), String> {
        let scope = self.stack.get_mut().last_mut().expect("a scope");
        match decl.range {
            None => {
                if scope.declares(&decl.name) {
                    return Err(format!("'{}' is already declared in this scope", decl.name));
                }
                let reg = Declared::Reg {
                    ty,
                    vector,
                    id: None,
                };
                scope.names.insert(decl.name.clone(), reg);
            }
            Some(count) => {
                let clash = scope.ranges.contains_key(&decl.name)
                    || scope
                        .names
                        .keys()
                        .any(|n| split_index(n).is_some_and(|(p, i)| p == decl.name && i < count));
                if clash {
                    return Err(format!(
                        "'{}<{count}>' declares a register already declared in this scope",
                        decl.name
                    ));
                }
                let range = Range {
                    ty,
                    vector,
                    count,
                    ids: HashMap::new(),
                };
                scope.ranges.insert(decl.name.clone(), range);
            }
        }
        Ok(())
    }

    /// Declares a variable in the innermost scope.
    pub fn declare_var(&mut self, name: &str, id: usize) -> Result<(), String> {
        self.declare(name, Declared::Var(id))
    }

    /// Declares module variable `index` under `name` in the innermost scope.
    pub fn declare_global(&mut self, name: &str, index: usize) -> Result<(), String> {
        self.declare(name, Declared::Global(index))
    }

    fn declare(&mut self, name: &str, what: Declared) -> Result<(), String> {
        let scope = self.stack.get_mut().last_mut().expect("a scope");
        if scope.declares(name) {
            return Err(format!("'{name}' is already declared in this scope"));
        }
        scope.names.insert(name.to_string(), what);
        Ok(())
    }

    /// What `name` means here (the innermost declaration wins); a register used for the first
    /// time gets its id. `v.x`, `v.y`, `v.z`, `v.w` (or `.r .g .b .a`) are the elements of a
    /// vector register `v`.
    pub fn lookup(&self, name: &str) -> Option<Name> {
        if let Some(found) = self.lookup_declared(name) {
            return Some(found);
        }
        let (vector, element) = name.rsplit_once('.')?;
        let k = ["x", "y", "z", "w"]
            .iter()
            .position(|&c| c == element)
            .or_else(|| ["r", "g", "b", "a"].iter().position(|&c| c == element))?;
        match self.lookup_declared(vector)? {
            Name::Vector(first, n) if (k as u32) < n => Some(Name::Reg(first + k as RegId)),
            _ => None,
        }
    }

    fn lookup_declared(&self, name: &str) -> Option<Name> {
        let mut stack = self.stack.borrow_mut();
        for scope in stack.iter_mut().rev() {
            match scope.names.get_mut(name) {
                Some(Declared::Var(v)) => return Some(Name::Var(*v)),
                Some(Declared::Global(g)) => return Some(Name::Global(*g)),
                Some(Declared::Reg { ty, vector, id }) => {
                    let id = *id.get_or_insert_with(|| self.new_regs(name, *ty, *vector));
                    return Some(name_of(id, *vector));
                }
                None => {}
            }
            if let Some((prefix, i)) = split_index(name)
                && let Some(range) = scope.ranges.get_mut(prefix)
                && i < range.count
            {
                let (ty, vector) = (range.ty, range.vector);
                let id = *range
                    .ids
                    .entry(i)
                    .or_insert_with(|| self.new_regs(name, ty, vector));
                return Some(name_of(id, vector));
            }
        }
        None
    }

    /// A register no PTX name refers to (the carry flag), in the function's table.
    pub fn hidden_reg(&self, name: &str, ty: PtxType) -> RegId {
        self.new_reg(name, ty)
    }

    fn new_reg(&self, name: &str, ty: PtxType) -> RegId {
        self.new_regs(name, ty, 1)
    }

    /// `vector` consecutive registers (`name.x`, `name.y`, ... for a vector); the first's id.
    fn new_regs(&self, name: &str, ty: PtxType, vector: u32) -> RegId {
        let mut regs = self.regs.borrow_mut();
        let first = regs.len() as RegId;
        for k in 0..vector as usize {
            regs.push(Reg {
                name: match vector {
                    1 => name.to_string(),
                    _ => format!("{name}.{}", ["x", "y", "z", "w"][k]),
                },
                ty,
            });
        }
        first
    }

    pub fn reg_type(&self, id: RegId) -> PtxType {
        self.regs.borrow()[id as usize].ty
    }

    /// Registers used so far.
    pub fn reg_count(&self) -> usize {
        self.regs.borrow().len()
    }

    /// The function's register table: the registers used, in order of first use.
    pub fn into_regs(self) -> Vec<Reg> {
        self.regs.into_inner()
    }
}

fn name_of(first: RegId, vector: u32) -> Name {
    match vector {
        1 => Name::Reg(first),
        n => Name::Vector(first, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Span;

    fn decl(name: &str, range: Option<u32>) -> RegName {
        RegName {
            name: name.into(),
            range,
            span: Span::default(),
        }
    }

    fn reg_id(s: &Scopes, name: &str) -> Option<RegId> {
        match s.lookup(name) {
            Some(Name::Reg(id)) => Some(id),
            _ => None,
        }
    }

    #[test]
    fn registers_get_ids_in_order_of_first_use_not_declaration() {
        let mut s = Scopes::default();
        s.declare_reg(&decl("%r", Some(1 << 20)), PtxType::U32, 1)
            .unwrap();
        s.declare_reg(&decl("%p", None), PtxType::Pred, 1).unwrap();
        assert_eq!(s.reg_count(), 0);
        assert_eq!(reg_id(&s, "%r999999"), Some(0));
        assert_eq!(reg_id(&s, "%p"), Some(1));
        assert_eq!(reg_id(&s, "%r999999"), Some(0));
        assert_eq!(s.reg_count(), 2);
        assert_eq!(s.reg_type(1), PtxType::Pred);
    }

    #[test]
    fn a_range_holds_exactly_its_members() {
        let mut s = Scopes::default();
        s.declare_reg(&decl("%r", Some(4)), PtxType::U32, 1)
            .unwrap();
        assert!(reg_id(&s, "%r3").is_some());
        for outside in ["%r4", "%r", "%r03", "%r00", "%rx1"] {
            assert!(reg_id(&s, outside).is_none(), "{outside}");
        }
    }

    #[test]
    fn an_inner_scope_shadows_an_outer_one() {
        let mut s = Scopes::default();
        s.declare_reg(&decl("%r", Some(4)), PtxType::U32, 1)
            .unwrap();
        let (outer, outer2) = (reg_id(&s, "%r1"), reg_id(&s, "%r2"));
        s.push();
        s.declare_reg(&decl("%r1", None), PtxType::U64, 1).unwrap();
        let inner = reg_id(&s, "%r1");
        assert_ne!(inner, outer);
        assert_eq!(s.reg_type(inner.unwrap()), PtxType::U64);
        // The rest of the outer range stays visible.
        assert_eq!(reg_id(&s, "%r2"), outer2);
        s.pop();
        assert_eq!(reg_id(&s, "%r1"), outer);
    }

    #[test]
    fn a_name_declared_twice_in_one_scope_is_an_error() {
        let mut s = Scopes::default();
        s.declare_reg(&decl("%r", Some(4)), PtxType::U32, 1)
            .unwrap();
        assert!(s.declare_reg(&decl("%r2", None), PtxType::U32, 1).is_err());
        assert!(
            s.declare_reg(&decl("%r", Some(2)), PtxType::U32, 1)
                .is_err()
        );
        assert!(s.declare_var("%r0", 0).is_err());
        s.declare_reg(&decl("%r4", None), PtxType::U32, 1).unwrap();
        s.declare_reg(&decl("%f", None), PtxType::F32, 1).unwrap();
        assert!(s.declare_reg(&decl("%f", None), PtxType::F32, 1).is_err());
        assert!(
            s.declare_reg(&decl("%r", Some(8)), PtxType::U32, 1)
                .is_err()
        );
    }

    #[test]
    fn a_vector_register_is_its_elements_named_by_component() {
        let mut s = Scopes::default();
        s.declare_reg(&decl("v", None), PtxType::U32, 4).unwrap();
        s.declare_reg(&decl("h", Some(2)), PtxType::B16, 2).unwrap();
        let Some(Name::Vector(first, 4)) = s.lookup("v") else {
            panic!("v is a vector of 4")
        };
        assert_eq!(reg_id(&s, "v.x"), Some(first));
        assert_eq!(reg_id(&s, "v.w"), Some(first + 3));
        assert_eq!(reg_id(&s, "v.g"), Some(first + 1));
        assert!(matches!(s.lookup("h1"), Some(Name::Vector(_, 2))));
        assert!(reg_id(&s, "h1.y").is_some());
        for outside in ["h1.z", "v.q", "h2.x", "v.x.x"] {
            assert!(s.lookup(outside).is_none(), "{outside}");
        }
    }
}
