//! PTX text to a checked module: lexer, parser (with spans), checker.

pub mod ast;
pub mod calls;
pub mod check;
pub mod checked;
pub mod isa;
pub mod lexer;
pub mod parser;
pub mod scopes;
mod selectors;
