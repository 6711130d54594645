//! Errors are values: PTX diagnostics point at `file:line:col` and show the line; launch errors
//! name the kernel and the instruction.

use std::fmt;
use std::sync::Arc;

/// A byte range in a source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A PTX source text with the name diagnostics use for it.
#[derive(Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Source> {
        Arc::new(Source {
            name: name.into(),
            text: text.into(),
        })
    }

    /// Byte offsets where lines start: after each `\n`, `\r\n` or lone `\r`.
    fn line_starts(&self) -> impl Iterator<Item = usize> + '_ {
        let bytes = self.text.as_bytes();
        std::iter::once(0).chain(bytes.iter().enumerate().filter_map(|(i, &b)| {
            let ends_line = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            ends_line.then_some(i + 1)
        }))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = (offset as usize).min(self.text.len());
        let (line, start) = self
            .line_starts()
            .take_while(|&s| s <= offset)
            .enumerate()
            .last()
            .expect("line 1 starts at 0");
        let col = self.text[start..offset].chars().count() + 1;
        (line + 1, col)
    }

    /// The text of the 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(start) = self.line_starts().nth(line - 1) else {
            return "";
        };
        let rest = &self.text[start..];
        &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())]
    }

    /// `file:line:col` of a span's start.
    pub fn location(&self, span: Span) -> String {
        let (line, col) = self.line_col(span.start);
        format!("{}:{}:{}", self.name, line, col)
    }
}

/// A problem in PTX text, located by a span.
#[derive(Clone)]
pub struct Diagnostic {
    pub source: Arc<Source>,
    pub span: Span,
    pub message: String,
}

impl Diagnostic {
    pub fn new(source: &Arc<Source>, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            source: source.clone(),
            span,
            message: message.into(),
        }
    }

    pub fn location(&self) -> String {
        self.source.location(self.span)
    }

    /// `file:line:col: error: message: `line``: the diagnostic on one line, for logs that keep
    /// one line per message (a test runner's captured stderr).
    pub fn one_line(&self) -> String {
        let (line, _) = self.source.line_col(self.span.start);
        let text = self.source.line_text(line).trim();
        format!("{}: error: {}: `{text}`", self.location(), self.message)
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line:col: error: message`, then the line and a caret under the span.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, col) = self.source.line_col(self.span.start);
        let text = self.source.line_text(line);
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            self.source.name, line, col, self.message
        )?;
        let gutter = format!("{line}");
        writeln!(f, "{} |", " ".repeat(gutter.len()))?;
        writeln!(f, "{gutter} | {}", text.replace('\t', " "))?;
        let width = {
            let span_len = (self.span.end.saturating_sub(self.span.start)) as usize;
            let rest = text.chars().count().saturating_sub(col - 1);
            span_len.clamp(1, rest.max(1))
        };
        write!(
            f,
            "{} | {}{}",
            " ".repeat(gutter.len()),
            " ".repeat(col - 1),
            "^".repeat(width)
        )
    }
}

impl fmt::Debug for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Everything that can go wrong in ptxjit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The PTX text is malformed, ill-typed or uses something not supported.
    #[error("{0}")]
    Ptx(Box<Diagnostic>),
    /// Several diagnostics at once (`ptxjit check` reports them all).
    #[error("{}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
    PtxMany(Vec<Diagnostic>),
    #[error("no kernel named '{name}' in the module (entries: {available})")]
    NoSuchKernel { name: String, available: String },
    #[error("kernel '{kernel}': {message}")]
    Launch { kernel: String, message: String },
    #[error("kernel '{kernel}': {what} at {location}: `{instruction}`")]
    Runtime {
        kernel: String,
        /// Why the launch stopped (`None`: an error the reference interpreter found).
        kind: Option<ptxjit_runtime::StatusKind>,
        what: String,
        location: String,
        instruction: String,
    },
    #[error("code generation failed for '{function}': {message}")]
    Codegen { function: String, message: String },
    #[error(transparent)]
    Device(#[from] ptxjit_runtime::RuntimeError),
}

impl Error {
    /// The error on one line: diagnostics lose their caret drawing but keep the source line.
    pub fn one_line(&self) -> String {
        match self {
            Error::Ptx(d) => d.one_line(),
            Error::PtxMany(ds) => ds
                .iter()
                .map(Diagnostic::one_line)
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string().replace('\n', " "),
        }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Ptx(Box::new(d))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostic_names_file_line_col_and_shows_the_line_with_a_caret() {
        let src = Source::new("k.ptx", ".version 8.0\n\tfoo.bar %r1;\n");
        let d = Diagnostic::new(&src, Span::new(14, 21), "unsupported instruction 'foo.bar'");
        let text = d.to_string();
        assert!(
            text.starts_with("k.ptx:2:2: error: unsupported instruction 'foo.bar'\n"),
            "{text}"
        );
        assert!(text.contains("2 |  foo.bar %r1;"), "{text}");
        assert!(text.ends_with("  |  ^^^^^^^"), "{text}");
    }

    #[test]
    fn lines_end_at_lf_crlf_or_a_lone_cr() {
        for text in ["a\nbb\nccc x\n", "a\r\nbb\r\nccc x\r\n", "a\rbb\rccc x\r"] {
            let src = Source::new("k.ptx", text);
            let x = text.find('x').unwrap() as u32;
            assert_eq!(src.line_col(x), (3, 5), "{text:?}");
            assert_eq!(src.line_text(3), "ccc x", "{text:?}");
            assert_eq!(src.line_text(2), "bb", "{text:?}");
        }
    }

    #[test]
    fn one_line_form_keeps_location_message_and_source_line() {
        let src = Source::new("k.ptx", ".version 8.0\n\tfoo.bar %r1;\n");
        let d = Diagnostic::new(&src, Span::new(14, 21), "unsupported instruction 'foo.bar'");
        assert_eq!(
            Error::from(d).one_line(),
            "k.ptx:2:2: error: unsupported instruction 'foo.bar': `foo.bar %r1;`"
        );
    }
}
