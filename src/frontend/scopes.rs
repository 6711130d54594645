//! A function's nested `{ }` scopes and the names declared in them: registers and `.local` /
//! `.shared` variables.
//!
//! A register gets its id (its index in the function's register table) when it is first
//! used, not when it is declared, and a range `%r<N>` is never expanded: declared but unused
//! registers cost nothing, so a 300-byte file declaring millions of them is cheap, and every
//! later stage (lowering, frames, lane groups) sees only the registers the code uses.

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
    Var(usize),
}

enum Declared {
    /// A register and, once used, its id.
    Reg {
        ty: PtxType,
        id: Option<RegId>,
    },
    Var(usize),
}

struct Range {
    ty: PtxType,
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

    /// Declares a register name or range in the innermost scope; `Err` says why it cannot be.
    pub fn declare_reg(&mut self, decl: &RegName, ty: PtxType) -> Result<(), String> {
        let scope = self.stack.get_mut().last_mut().expect("a scope");
        match decl.range {
            None => {
                if scope.declares(&decl.name) {
                    return Err(format!("'{}' is already declared in this scope", decl.name));
                }
                let reg = Declared::Reg { ty, id: None };
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
        let scope = self.stack.get_mut().last_mut().expect("a scope");
        if scope.declares(name) {
            return Err(format!("'{name}' is already declared in this scope"));
        }
        scope.names.insert(name.to_string(), Declared::Var(id));
        Ok(())
    }

    /// What `name` means here (the innermost declaration wins); a register used for the first
    /// time gets its id.
    pub fn lookup(&self, name: &str) -> Option<Name> {
        let mut stack = self.stack.borrow_mut();
        for scope in stack.iter_mut().rev() {
            match scope.names.get_mut(name) {
                Some(Declared::Var(v)) => return Some(Name::Var(*v)),
                Some(Declared::Reg { ty, id }) => {
                    let id = *id.get_or_insert_with(|| self.new_reg(name, *ty));
                    return Some(Name::Reg(id));
                }
                None => {}
            }
            if let Some((prefix, i)) = split_index(name)
                && let Some(range) = scope.ranges.get_mut(prefix)
                && i < range.count
            {
                let ty = range.ty;
                let id = *range.ids.entry(i).or_insert_with(|| self.new_reg(name, ty));
                return Some(Name::Reg(id));
            }
        }
        None
    }

    /// A register no PTX name refers to (the carry flag), in the function's table.
    pub fn hidden_reg(&self, name: &str, ty: PtxType) -> RegId {
        self.new_reg(name, ty)
    }

    fn new_reg(&self, name: &str, ty: PtxType) -> RegId {
        let mut regs = self.regs.borrow_mut();
        regs.push(Reg {
            name: name.to_string(),
            ty,
        });
        (regs.len() - 1) as RegId
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
        s.declare_reg(&decl("%r", Some(1 << 20)), PtxType::U32)
            .unwrap();
        s.declare_reg(&decl("%p", None), PtxType::Pred).unwrap();
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
        s.declare_reg(&decl("%r", Some(4)), PtxType::U32).unwrap();
        assert!(reg_id(&s, "%r3").is_some());
        for outside in ["%r4", "%r", "%r03", "%r00", "%rx1"] {
            assert!(reg_id(&s, outside).is_none(), "{outside}");
        }
    }

    #[test]
    fn an_inner_scope_shadows_an_outer_one() {
        let mut s = Scopes::default();
        s.declare_reg(&decl("%r", Some(4)), PtxType::U32).unwrap();
        let (outer, outer2) = (reg_id(&s, "%r1"), reg_id(&s, "%r2"));
        s.push();
        s.declare_reg(&decl("%r1", None), PtxType::U64).unwrap();
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
        s.declare_reg(&decl("%r", Some(4)), PtxType::U32).unwrap();
        assert!(s.declare_reg(&decl("%r2", None), PtxType::U32).is_err());
        assert!(s.declare_reg(&decl("%r", Some(2)), PtxType::U32).is_err());
        assert!(s.declare_var("%r0", 0).is_err());
        s.declare_reg(&decl("%r4", None), PtxType::U32).unwrap();
        s.declare_reg(&decl("%f", None), PtxType::F32).unwrap();
        assert!(s.declare_reg(&decl("%f", None), PtxType::F32).is_err());
        assert!(s.declare_reg(&decl("%r", Some(8)), PtxType::U32).is_err());
    }
}
