//! Recursive-descent parser from tokens to [`ast::Module`]. It knows the shape of PTX
//! statements, not what instructions mean: that is the checker's job.

use super::ast::*;
use super::isa;
use super::lexer::{Tok, Token, lex};
use crate::error::{Diagnostic, Source, Span};
use crate::types::PtxType;
use std::sync::Arc;

type PResult<T> = Result<T, Diagnostic>;

pub fn parse(source: &Arc<Source>) -> PResult<Module> {
    let tokens = lex(source)?;
    let mut p = Parser {
        source,
        tokens,
        pos: 0,
        depth: 0,
    };
    p.module()
}

/// Levels of nesting the parser accepts: `{ }` scopes, initializer braces, vector and list
/// operands, `!`. Every stage after the parser recurses over these (and dropping the tree
/// does), so this bound keeps any input from exhausting a caller's stack; real PTX nests a few
/// levels.
pub const MAX_NESTING: u32 = 64;

/// Bytes one parameter may have: CUDA's limit for all of a kernel's parameters together.
pub const MAX_PARAM_BYTES: u64 = 32_764;

struct Parser<'a> {
    source: &'a Arc<Source>,
    tokens: Vec<Token>,
    pos: usize,
    /// Current nesting (see [`MAX_NESTING`]).
    depth: u32,
}

/// Parses a numeric literal word (`42`, `0x3C00`, `0f3F800000`, `1.5`, `7U`).
pub fn parse_number(word: &str) -> Option<Immediate> {
    let w = word.trim_end_matches(['U', 'u']);
    let lower = w.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0f")
        && hex.len() == 8
    {
        return u32::from_str_radix(hex, 16).ok().map(Immediate::F32);
    }
    if let Some(hex) = lower.strip_prefix("0d")
        && hex.len() == 16
    {
        return u64::from_str_radix(hex, 16).ok().map(Immediate::F64);
    }
    if let Some(hex) = lower.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(Immediate::Int);
    }
    if let Some(bin) = lower.strip_prefix("0b") {
        return u64::from_str_radix(bin, 2).ok().map(Immediate::Int);
    }
    if !lower.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if lower.contains(['.', 'e']) {
        return lower
            .parse::<f64>()
            .ok()
            .map(|f| Immediate::F64(f.to_bits()));
    }
    if lower.len() > 1 && lower.starts_with('0') {
        return u64::from_str_radix(&lower[1..], 8).ok().map(Immediate::Int);
    }
    lower.parse::<u64>().ok().map(Immediate::Int)
}

fn negate(imm: Immediate) -> Immediate {
    match imm {
        Immediate::Int(v) => Immediate::Int(v.wrapping_neg()),
        Immediate::F32(b) => Immediate::F32(b ^ 0x8000_0000),
        Immediate::F64(b) => Immediate::F64(b ^ (1 << 63)),
    }
}

impl<'a> Parser<'a> {
    // ---- token plumbing -------------------------------------------------------------------

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + k).map(|t| &t.tok)
    }

    fn span(&self) -> Span {
        match self.tokens.get(self.pos) {
            Some(t) => t.span,
            None => {
                let end = self.source.text.len();
                Span::new(end, end)
            }
        }
    }

    fn prev_span(&self) -> Span {
        self.tokens
            .get(self.pos.wrapping_sub(1))
            .map_or_else(|| self.span(), |t| t.span)
    }

    fn err<T>(&self, span: Span, msg: impl Into<String>) -> PResult<T> {
        Err(Diagnostic::new(self.source, span, msg))
    }

    /// Parses one level deeper with `f`; an error past [`MAX_NESTING`], located at `at`.
    fn nested<T>(&mut self, at: Span, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            return self.err(at, format!("nested more than {MAX_NESTING} levels deep"));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn describe(&self) -> String {
        match self.peek() {
            Some(Tok::Word(w)) => format!("'{w}'"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Punct(c)) => format!("'{c}'"),
            None => "end of file".into(),
        }
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> PResult<Span> {
        if self.eat_punct(c) {
            Ok(self.prev_span())
        } else {
            self.err(
                self.span(),
                format!("expected '{c}', found {}", self.describe()),
            )
        }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok((w, self.prev_span()))
            }
            _ => self.err(
                self.span(),
                format!("expected {what}, found {}", self.describe()),
            ),
        }
    }

    fn uint(&mut self, what: &str) -> PResult<u32> {
        let (w, span) = self.word(what)?;
        match parse_number(&w) {
            Some(Immediate::Int(v)) if v <= u32::MAX as u64 => Ok(v as u32),
            _ => self.err(span, format!("expected {what}, found '{w}'")),
        }
    }

    /// A `.type` word.
    fn ty(&mut self) -> PResult<PtxType> {
        let (w, span) = self.word("a type")?;
        w.strip_prefix('.')
            .and_then(PtxType::from_name)
            .map_or_else(
                || self.err(span, format!("expected a type such as .b32, found '{w}'")),
                Ok,
            )
    }

    /// Skips the rest of the current line (for `.loc`, `.file`).
    fn skip_line(&mut self) {
        let line = self.tokens[self.pos - 1].line;
        while self.tokens.get(self.pos).is_some_and(|t| t.line == line) {
            self.pos += 1;
        }
    }

    /// Skips tokens up to and including the next `;`.
    fn skip_statement(&mut self) {
        while let Some(t) = self.peek() {
            let end = *t == Tok::Punct(';');
            self.pos += 1;
            if end {
                break;
            }
        }
    }

    /// Skips a balanced `{ ... }` group (debug sections).
    fn skip_braces(&mut self) -> PResult<()> {
        let open = self.expect_punct('{')?;
        let mut depth = 1;
        while depth > 0 {
            match self.peek() {
                Some(Tok::Punct('{')) => depth += 1,
                Some(Tok::Punct('}')) => depth -= 1,
                None => return self.err(open, "unclosed '{'"),
                _ => {}
            }
            self.pos += 1;
        }
        Ok(())
    }

    // ---- module level ---------------------------------------------------------------------

    fn module(&mut self) -> PResult<Module> {
        let mut m = Module::default();
        while let Some(tok) = self.peek().cloned() {
            let span = self.span();
            let Tok::Word(w) = tok else {
                if self.eat_punct(';') {
                    continue;
                }
                return self.err(
                    span,
                    format!("expected a directive, found {}", self.describe()),
                );
            };
            match w.as_str() {
                ".version" => {
                    self.pos += 1;
                    m.version = Some(self.word("a version number")?.0);
                }
                ".target" => {
                    self.pos += 1;
                    loop {
                        m.target.push(self.word("a target name")?.0);
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                }
                ".address_size" => {
                    self.pos += 1;
                    let size = self.uint("an address size")?;
                    if size != 64 {
                        return self.err(self.prev_span(), "only .address_size 64 is supported");
                    }
                    m.address_size = Some(size);
                }
                ".file" | ".loc" => {
                    self.pos += 1;
                    self.skip_line();
                }
                ".pragma" => self.skip_statement(),
                ".section" => {
                    self.pos += 1;
                    self.word("a section name")?;
                    self.skip_braces()?;
                }
                _ => self.module_item(&mut m)?,
            }
        }
        Ok(m)
    }

    /// A function or a module-scope variable, after any linkage directives.
    fn module_item(&mut self, m: &mut Module) -> PResult<()> {
        let start = self.span();
        let (mut is_extern, mut weak, mut visible) = (false, false, false);
        loop {
            if self.eat_word(".extern") {
                is_extern = true;
            } else if self.eat_word(".weak") || self.eat_word(".common") {
                (weak, visible) = (true, true);
            } else if self.eat_word(".visible") {
                visible = true;
            } else {
                break;
            }
        }
        let span = self.span();
        let (w, _) = self.word("a directive")?;
        let (name, defines) = match w.as_str() {
            ".entry" | ".func" => {
                let kind = match w.as_str() {
                    ".entry" => FunctionKind::Entry,
                    _ => FunctionKind::Func,
                };
                let f = self.function(kind)?;
                let item = (f.name.clone(), f.body.is_some());
                m.functions.push(f);
                item
            }
            ".global" | ".const" | ".shared" => {
                let space = StateSpace::from_name(&w[1..]).expect("listed above");
                let var = self.var_decl(space, is_extern, span)?;
                let item = (var.name.clone(), !is_extern);
                m.globals.push(var);
                item
            }
            _ => return self.err(span, format!("unsupported directive '{w}'")),
        };
        m.items.push(Item {
            name,
            defines,
            visible: visible || w == ".entry",
            weak,
            text: start.to(self.prev_span()),
        });
        Ok(())
    }

    fn function(&mut self, kind: FunctionKind) -> PResult<Function> {
        let returns = if kind == FunctionKind::Func && self.is_punct('(') {
            self.param_list()?
        } else {
            vec![]
        };
        let (name, span) = self.word("a function name")?;
        let params = if self.is_punct('(') {
            self.param_list()?
        } else {
            vec![]
        };
        let mut f = Function {
            kind,
            name,
            span,
            returns,
            params,
            body: None,
            reqntid: None,
            maxntid: None,
            maxnreg: None,
            cluster: ClusterDirectives::default(),
        };
        // Performance directives between the signature and the body.
        loop {
            let dspan = self.span();
            if self.eat_word(".maxntid") {
                f.maxntid = Some(self.dims()?);
            } else if self.eat_word(".reqntid") {
                f.reqntid = Some(self.dims()?);
            } else if self.eat_word(".reqnctapercluster") {
                f.cluster.required = Some(self.dims()?);
            } else if self.eat_word(".explicitcluster") {
                f.cluster.explicit = true;
            } else if self.eat_word(".maxclusterrank") {
                f.cluster.max_rank = Some(self.uint("a block count")?);
            } else if self.eat_word(".maxnreg") {
                let n = self.uint("a register count")?;
                f.maxnreg = Some(f.maxnreg.map_or(n, |m| m.min(n)));
            } else if self.eat_word(".minnctapersm") || self.eat_word(".maxnctapersm") {
                self.uint("a number")?;
            } else if self.eat_word(".noreturn") {
            } else if self.eat_word(".pragma") {
                self.skip_statement();
            } else if let Some(Tok::Word(w)) = self.peek()
                && w.starts_with('.')
                && !self.is_punct('{')
            {
                let w = w.clone();
                return self.err(dspan, format!("unsupported function directive '{w}'"));
            } else {
                break;
            }
        }
        if self.eat_punct(';') {
            return Ok(f);
        }
        self.expect_punct('{')?;
        f.body = Some(self.block_body()?);
        Ok(f)
    }

    fn dims(&mut self) -> PResult<[u32; 3]> {
        let mut d = [1u32; 3];
        d[0] = self.uint("a thread count")?;
        for slot in d.iter_mut().skip(1) {
            if !self.eat_punct(',') {
                break;
            }
            *slot = self.uint("a thread count")?;
        }
        Ok(d)
    }

    fn param_list(&mut self) -> PResult<Vec<ParamDecl>> {
        self.expect_punct('(')?;
        let mut out = Vec::new();
        if self.eat_punct(')') {
            return Ok(out);
        }
        loop {
            out.push(self.param()?);
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    fn param(&mut self) -> PResult<ParamDecl> {
        let is_reg = if self.eat_word(".param") {
            false
        } else if self.eat_word(".reg") {
            true
        } else {
            return self.err(
                self.span(),
                format!("expected .param, found {}", self.describe()),
            );
        };
        let (align, vector) = self.align_and_vector()?;
        let ty = self.ty()?;
        // `.ptr .global .align N` annotations on pointer parameters.
        if self.eat_word(".ptr") {
            for space in [".global", ".shared", ".const", ".local"] {
                self.eat_word(space);
            }
            if self.eat_word(".align") {
                self.uint("an alignment")?;
            }
        }
        let (name, span) = self.word("a parameter name")?;
        let mut array = None;
        if self.eat_punct('[') {
            let count = self.uint("an array size")?;
            let close = self.expect_punct(']')?;
            let bytes = ty.size() as u64 * vector as u64 * count as u64;
            if bytes > MAX_PARAM_BYTES {
                return self.err(
                    span.to(close),
                    format!(
                        "parameter '{name}' of {bytes} bytes is larger than {MAX_PARAM_BYTES} \
                         (CUDA's limit for a kernel's parameters)"
                    ),
                );
            }
            array = Some(count);
        }
        Ok(ParamDecl {
            name,
            span,
            ty,
            vector,
            align,
            array,
            is_reg,
        })
    }

    /// `[.align N] [.vN] .type name[dims] [= init] ;` after the state space word.
    fn var_decl(&mut self, space: StateSpace, is_extern: bool, start: Span) -> PResult<VarDecl> {
        let (align, vector) = self.align_and_vector()?;
        let ty = self.ty()?;
        let (name, span) = self.word("a variable name")?;
        let mut array: Option<u32> = None;
        while self.eat_punct('[') {
            let n = if self.is_punct(']') {
                0
            } else {
                self.uint("an array size")?
            };
            array = Some(array.unwrap_or(1).saturating_mul(n));
            self.expect_punct(']')?;
        }
        let (mut init, mut init_addresses) = (Vec::new(), Vec::new());
        if self.eat_punct('=') {
            self.initializer(&mut init, &mut init_addresses)?;
        }
        self.expect_punct(';')?;
        Ok(VarDecl {
            space,
            name,
            span: start.to(span),
            ty,
            align,
            vector,
            array,
            is_extern,
            init,
            init_addresses,
        })
    }

    /// A number, `{...}` of initializers, or a variable's address: `name`, `name+offset`,
    /// `generic(name)`, `generic(name)+offset`.
    fn initializer(
        &mut self,
        out: &mut Vec<Immediate>,
        addresses: &mut Vec<InitAddress>,
    ) -> PResult<()> {
        let open = self.span();
        if self.eat_punct('{') {
            if self.eat_punct('}') {
                return Ok(());
            }
            loop {
                self.nested(open, |p| p.initializer(out, addresses))?;
                if self.eat_punct('}') {
                    return Ok(());
                }
                self.expect_punct(',')?;
            }
        }
        let neg = self.eat_punct('-');
        let (w, span) = self.word("an initializer value")?;
        if let Some(v) = parse_number(&w) {
            out.push(if neg { negate(v) } else { v });
            return Ok(());
        }
        if neg || w.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return self.err(
                span,
                format!("expected a number or a variable, found '{w}'"),
            );
        }
        let name = if w == "generic" && self.eat_punct('(') {
            let (name, _) = self.word("a variable name")?;
            self.expect_punct(')')?;
            name
        } else {
            w
        };
        let offset = if self.eat_punct('+') {
            self.offset()?
        } else {
            0
        };
        addresses.push(InitAddress {
            element: out.len(),
            name,
            offset,
            span: span.to(self.prev_span()),
        });
        out.push(Immediate::Int(0));
        Ok(())
    }

    // ---- function bodies ------------------------------------------------------------------

    /// Statements up to the closing `}` (consumed).
    fn block_body(&mut self) -> PResult<Vec<Stmt>> {
        let open = self.prev_span();
        let mut out = Vec::new();
        loop {
            let span = self.span();
            match self.peek() {
                None => return self.err(open, "unclosed '{': missing '}'"),
                Some(Tok::Punct('}')) => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(Tok::Punct('{')) => {
                    self.pos += 1;
                    out.push(Stmt::Block(self.nested(span, Self::block_body)?));
                }
                Some(_) => {
                    if let Some(stmt) = self.statement(span)? {
                        out.push(stmt);
                    }
                }
            }
        }
    }

    /// One statement that is not a `{ }` block, or nothing (`;`, `.loc`, `.pragma`). Apart
    /// from `block_body`, whose frame is on the stack once per nesting level, so it stays small.
    fn statement(&mut self, span: Span) -> PResult<Option<Stmt>> {
        let tok = self.peek().cloned().expect("the caller peeked a token");
        Ok(Some(match tok {
            Tok::Punct(';') => {
                self.pos += 1;
                return Ok(None);
            }
            Tok::Punct('@') => Stmt::Inst(self.instruction()?),
            Tok::Word(w) if w.starts_with('.') => {
                self.pos += 1;
                match w.as_str() {
                    ".reg" => Stmt::Reg(self.reg_decl()?),
                    ".loc" | ".file" => {
                        self.skip_line();
                        return Ok(None);
                    }
                    ".pragma" => {
                        self.skip_statement();
                        return Ok(None);
                    }
                    ".local" | ".shared" | ".param" | ".const" | ".global" => {
                        let space = StateSpace::from_name(&w[1..]).expect("listed above");
                        Stmt::Var(self.var_decl(space, false, span)?)
                    }
                    ".extern" if self.is_word(".shared") => {
                        self.pos += 1;
                        Stmt::Var(self.var_decl(StateSpace::Shared, true, span)?)
                    }
                    _ => {
                        return self.err(
                            span,
                            format!("unsupported directive '{w}' in a function body"),
                        );
                    }
                }
            }
            Tok::Word(w) if self.peek_at(1) == Some(&Tok::Punct(':')) => {
                self.pos += 2;
                match self.callees()? {
                    Some(callees) => Stmt::Callees {
                        name: w,
                        span,
                        callees,
                    },
                    None => Stmt::Label { name: w, span },
                }
            }
            Tok::Word(_) => Stmt::Inst(self.instruction()?),
            _ => {
                return self.err(
                    span,
                    format!("expected an instruction, found {}", self.describe()),
                );
            }
        }))
    }

    /// After `name:`, `.callprototype ({rets}) _ (params);` or `.calltargets f, g;` (ISA
    /// "Control Flow Directives"), or nothing: `name` is a label.
    fn callees(&mut self) -> PResult<Option<Callees>> {
        if self.eat_word(".callprototype") {
            let returns = if self.peek() == Some(&Tok::Punct('(')) {
                self.param_list()?
            } else {
                Vec::new()
            };
            if !self.eat_word("_") {
                return self.err(
                    self.span(),
                    format!("expected '_' in .callprototype, found {}", self.describe()),
                );
            }
            let params = if self.peek() == Some(&Tok::Punct('(')) {
                self.param_list()?
            } else {
                Vec::new()
            };
            self.expect_punct(';')?;
            return Ok(Some(Callees::Prototype { returns, params }));
        }
        if self.eat_word(".calltargets") {
            let mut targets = Vec::new();
            loop {
                targets.push(self.word("a function name")?);
                if self.eat_punct(';') {
                    return Ok(Some(Callees::Targets(targets)));
                }
                self.expect_punct(',')?;
            }
        }
        Ok(None)
    }

    /// `.align N` and `.v2`/`.v4`, in either order, before a declaration's type.
    fn align_and_vector(&mut self) -> PResult<(Option<u32>, u32)> {
        let (mut align, mut vector) = (None, 1);
        loop {
            if self.eat_word(".align") {
                align = Some(self.uint("an alignment")?);
            } else if let Some(n) = self.vector_width() {
                vector = n;
            } else {
                return Ok((align, vector));
            }
        }
    }

    /// `.v2` or `.v4` in a declaration (vector variables, registers and parameters).
    fn vector_width(&mut self) -> Option<u32> {
        [(".v2", 2), (".v4", 4)]
            .into_iter()
            .find_map(|(w, n)| self.eat_word(w).then_some(n))
    }

    fn reg_decl(&mut self) -> PResult<RegDecl> {
        let vector = self.vector_width().unwrap_or(1);
        let ty = self.ty()?;
        let mut names = Vec::new();
        loop {
            let (name, span) = self.word("a register name")?;
            if self.eat_punct('<') {
                let count = self.uint("a register count")?;
                let close = self.expect_punct('>')?;
                names.push(RegName {
                    name,
                    range: Some(count),
                    span: span.to(close),
                });
            } else {
                names.push(RegName {
                    name,
                    range: None,
                    span,
                });
            }
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')?;
        Ok(RegDecl { ty, vector, names })
    }

    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.span();
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let (reg, span) = self.word("a predicate register")?;
            Some(Guard {
                reg,
                negated,
                span: start.to(span),
            })
        } else {
            None
        };
        let (opcode, opcode_span) = self.word("an instruction")?;
        let mut operands = Vec::new();
        if !isa::knows_base(&opcode) {
            // An instruction ptxjit does not know may have operand syntax it does not know
            // either (`tex`'s `[tex, {x, y}]`): skip to its end; the checker names it.
            return self.skip_unknown_instruction(guard, opcode, opcode_span, start);
        }
        if !self.is_punct(';') {
            loop {
                operands.push(self.operand()?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        if !self.is_punct(';') {
            return self.err(
                self.span(),
                format!(
                    "expected ',' or ';' after an operand, found {}",
                    self.describe()
                ),
            );
        }
        let end = self.expect_punct(';')?;
        Ok(Instruction {
            guard,
            opcode,
            opcode_span,
            operands,
            span: start.to(end),
        })
    }

    fn skip_unknown_instruction(
        &mut self,
        guard: Option<Guard>,
        opcode: String,
        opcode_span: Span,
        start: Span,
    ) -> PResult<Instruction> {
        while !self.is_punct(';') {
            if self.peek().is_none()
                || self.is_punct('}') && !self.unknown_operand_brace_open(start)
            {
                return self.err(self.span(), format!("expected ';' to end '{opcode}'"));
            }
            self.pos += 1;
        }
        let end = self.expect_punct(';')?;
        Ok(Instruction {
            guard,
            opcode,
            opcode_span,
            operands: Vec::new(),
            span: start.to(end),
        })
    }

    /// Whether a `{` opened inside the instruction starting at `start` is still open.
    fn unknown_operand_brace_open(&self, start: Span) -> bool {
        let mut depth = 0i32;
        for t in self.tokens[..self.pos].iter().rev() {
            if t.span.start < start.start {
                break;
            }
            match t.tok {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        depth > 0
    }

    fn operand(&mut self) -> PResult<Operand> {
        let start = self.span();
        let kind = match self.peek().cloned() {
            Some(Tok::Punct('{')) => {
                self.pos += 1;
                OperandKind::Vector(self.nested(start, |p| p.operand_list('}'))?)
            }
            Some(Tok::Punct('(')) => {
                self.pos += 1;
                OperandKind::List(self.nested(start, |p| p.operand_list(')'))?)
            }
            Some(Tok::Punct('[')) => {
                self.pos += 1;
                self.address()?
            }
            Some(Tok::Punct('!')) => {
                self.pos += 1;
                OperandKind::Not(Box::new(self.nested(start, Self::operand)?))
            }
            Some(Tok::Punct('-')) => {
                self.pos += 1;
                let (w, span) = self.word("a number or a register")?;
                match parse_number(&w) {
                    Some(v) => OperandKind::Imm(negate(v)),
                    None if w.starts_with(|c: char| c.is_ascii_digit()) => {
                        return self.err(span, format!("malformed number '{w}'"));
                    }
                    None => OperandKind::Neg(Box::new(Operand {
                        kind: OperandKind::Name(w, 0),
                        span,
                    })),
                }
            }
            Some(Tok::Word(w)) => {
                self.pos += 1;
                if w == "_" && !self.is_punct('|') {
                    OperandKind::Sink
                } else if let Some(v) = parse_number(&w) {
                    OperandKind::Imm(v)
                } else if w.starts_with(|c: char| c.is_ascii_digit()) {
                    return self.err(start, format!("malformed number '{w}'"));
                } else if self.is_punct('|') {
                    self.pos += 1;
                    let second = self.nested(start, Self::operand)?;
                    // `_|p`: a sink for the value, only the predicate wanted.
                    let kind = match w.as_str() {
                        "_" => OperandKind::Sink,
                        _ => OperandKind::Name(w, 0),
                    };
                    let first = Operand { kind, span: start };
                    OperandKind::Pair(Box::new(first), Box::new(second))
                } else if self.is_punct('+') {
                    self.pos += 1;
                    OperandKind::Name(w, self.offset()?)
                } else if self.is_punct('[') && !w.starts_with('%') {
                    self.pos += 1;
                    let index = self.offset()?;
                    if !self.eat_punct(']') {
                        let at = self.span();
                        return self.err(at, format!("expected ']' after the index of '{w}'"));
                    }
                    OperandKind::Element(w, index)
                } else {
                    OperandKind::Name(w, 0)
                }
            }
            _ => {
                return self.err(
                    start,
                    format!("expected an operand, found {}", self.describe()),
                );
            }
        };
        Ok(Operand {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    fn operand_list(&mut self, close: char) -> PResult<Vec<Operand>> {
        let mut out = Vec::new();
        if self.eat_punct(close) {
            return Ok(out);
        }
        loop {
            out.push(self.operand()?);
            if self.eat_punct(close) {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    /// An integer offset after `+` (which may itself be negative: `[%rd1+-8]`).
    fn offset(&mut self) -> PResult<i64> {
        let neg = self.eat_punct('-');
        let (w, span) = self.word("an offset")?;
        match parse_number(&w) {
            Some(Immediate::Int(v)) => Ok(if neg {
                (v as i64).wrapping_neg()
            } else {
                v as i64
            }),
            _ => self.err(span, format!("expected an integer offset, found '{w}'")),
        }
    }

    /// The inside of `[ ... ]`, after the `[`.
    fn address(&mut self) -> PResult<OperandKind> {
        let (w, span) = self.word("an address")?;
        let (base, mut offset) = match parse_number(&w) {
            Some(Immediate::Int(v)) => (None, v as i64),
            Some(_) => return self.err(span, "an address cannot be a floating-point number"),
            None => (Some(w), 0),
        };
        if self.eat_punct('+') {
            offset = offset.wrapping_add(self.offset()?);
        } else if self.eat_punct('-') {
            let (w, span) = self.word("an offset")?;
            match parse_number(&w) {
                Some(Immediate::Int(v)) => offset = offset.wrapping_sub(v as i64),
                _ => return self.err(span, format!("expected an integer offset, found '{w}'")),
            }
        }
        if self.eat_punct(',') {
            let start = self.span();
            self.expect_punct('{')?;
            let coords = self.nested(start, |p| p.operand_list('}'))?;
            self.expect_punct(']')?;
            return Ok(OperandKind::TensorAddress {
                base,
                offset,
                coords,
            });
        }
        self.expect_punct(']')?;
        Ok(OperandKind::Address { base, offset })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> PResult<Module> {
        parse(&Source::new("t.ptx", text))
    }

    #[test]
    fn number_forms() {
        assert_eq!(parse_number("42"), Some(Immediate::Int(42)));
        assert_eq!(parse_number("0x3C00"), Some(Immediate::Int(0x3C00)));
        assert_eq!(
            parse_number("0f3F800000"),
            Some(Immediate::F32(0x3F80_0000))
        );
        assert_eq!(
            parse_number("0d3FF0000000000000"),
            Some(Immediate::F64(0x3FF0_0000_0000_0000))
        );
        assert_eq!(parse_number("1.5"), Some(Immediate::F64(1.5f64.to_bits())));
        assert_eq!(parse_number("010"), Some(Immediate::Int(8)));
        assert_eq!(parse_number("7U"), Some(Immediate::Int(7)));
        assert_eq!(parse_number("%r1"), None);
    }

    #[test]
    fn entry_with_by_value_b8_array_param_and_nested_scope() {
        let m = parse_str(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 .ptr .global .align 8 k_p0, .param .align 2 .b8 k_p1[2])\n\
             .maxntid 128, 1, 1\n{\n .reg .b16 %rs<3>;\n { .reg .f16 low,high; mov.b32 {low,high}, %r1; }\n\
             @!%p1 bra $L__BB0_2;\n$L__BB0_2:\n ret;\n}\n",
        )
        .unwrap();
        let f = &m.functions[0];
        assert_eq!(f.params[1].size(), 2);
        assert_eq!(f.params[1].alignment(), 2);
        assert_eq!(f.maxntid, Some([128, 1, 1]));
        let body = f.body.as_ref().unwrap();
        assert!(matches!(&body[0], Stmt::Reg(r) if r.names.len() == 1
            && r.names[0].name == "%rs" && r.names[0].range == Some(3)));
        assert!(matches!(&body[1], Stmt::Block(b) if b.len() == 2));
        assert!(matches!(&body[2], Stmt::Inst(i) if i.guard.as_ref().unwrap().negated));
        assert!(matches!(&body[3], Stmt::Label { name, .. } if name == "$L__BB0_2"));
    }

    #[test]
    fn debug_sections_and_loc_lines_are_skipped() {
        let m = parse_str(
            ".version 8.0\n.file 1 \"k.py\"\n.visible .entry k()\n{\n.loc 1 7 0\nret;\n}\n\
             .section .debug_abbrev\n{\n.b8 1\n.b8 17\n}\n",
        )
        .unwrap();
        assert_eq!(m.functions.len(), 1);
    }

    #[test]
    fn address_operands() {
        let m = parse_str(".entry k(){ ld.global.u32 %r1, [%rd1+-8]; st.shared.u32 [smem+4], %r1; ld.param.u32 %r2, [k_p0]; }").unwrap();
        let body = m.functions[0].body.as_ref().unwrap();
        let Stmt::Inst(i) = &body[0] else { panic!() };
        assert!(
            matches!(&i.operands[1].kind, OperandKind::Address { base: Some(b), offset: -8 } if b == "%rd1")
        );
        let Stmt::Inst(i) = &body[1] else { panic!() };
        assert!(matches!(
            &i.operands[0].kind,
            OperandKind::Address { offset: 4, .. }
        ));
    }

    #[test]
    fn missing_semicolon_is_located() {
        let err = parse_str(".entry k()\n{\n  add.s32 %r1, %r2, %r3\n  ret;\n}").unwrap_err();
        assert_eq!(err.location(), "t.ptx:4:3");
        assert!(
            err.message.contains("expected ',' or ';'"),
            "{}",
            err.message
        );
    }

    #[test]
    fn global_with_initializer() {
        let m = parse_str(".global .align 4 .b32 tab[3] = {1, -2, 0x10};").unwrap();
        assert_eq!(
            m.globals[0].init,
            vec![
                Immediate::Int(1),
                Immediate::Int((-2i64) as u64),
                Immediate::Int(16)
            ]
        );
    }
}
