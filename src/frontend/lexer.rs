//! PTX tokens with spans. Words keep their dots (`ld.global.nc.u32`, `%tid.x`, `.reg`, `9.5`):
//! the parser splits them where the grammar needs to.

use crate::error::{Diagnostic, Source, Span};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifiers, opcodes, directives, registers, numbers: anything made of word characters.
    Word(String),
    Str(String),
    Punct(char),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// 1-based line, for directives that end at the end of their line (`.loc`, `.file`).
    pub line: u32,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

/// Directives that begin a declaration, and the vector widths in one: written together with
/// what follows (`.param.u64 a`, `.reg .v2.b16 x`, as some generators do), they are still
/// separate words.
const DECLARATION_DIRECTIVES: [&str; 10] = [
    ".reg", ".param", ".local", ".shared", ".global", ".const", ".tex", ".v2", ".v4", ".v8",
];

fn push_word(out: &mut Vec<Token>, text: &str, start: usize, end: usize, line: u32) {
    let word = &text[start..end];
    let mut push = |a: usize, b: usize| {
        out.push(Token {
            tok: Tok::Word(word[a..b].to_string()),
            span: Span::new(start + a, start + b),
            line,
        })
    };
    let first_end = word[1..].find('.').map_or(word.len(), |k| k + 1);
    if !DECLARATION_DIRECTIVES.contains(&&word[..first_end]) {
        return push(0, word.len());
    }
    let mut from = 0;
    for (k, _) in word.match_indices('.').skip(1) {
        push(from, k);
        from = k;
    }
    push(from, word.len());
}

pub fn lex(source: &Arc<Source>) -> Result<Vec<Token>, Diagnostic> {
    let text = source.text.as_str();
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    while i < bytes.len() {
        let c = bytes[i] as char;
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            '/' if bytes.get(i + 1) == Some(&b'/') => {
                // To the line's end, whichever convention ends it (`\n`, `\r\n`, `\r`).
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            '/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                loop {
                    if i + 1 >= bytes.len() {
                        return Err(Diagnostic::new(
                            source,
                            Span::new(start, start + 2),
                            "unterminated block comment",
                        ));
                    }
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            '"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += 1;
                }
                if i >= bytes.len() || bytes[i] != b'"' {
                    return Err(Diagnostic::new(
                        source,
                        Span::new(start, i),
                        "unterminated string",
                    ));
                }
                i += 1;
                out.push(Token {
                    tok: Tok::Str(text[start + 1..i - 1].to_string()),
                    span: Span::new(start, i),
                    line,
                });
            }
            c if is_word_char(c) => {
                let start = i;
                loop {
                    while i < bytes.len() && is_word_char(bytes[i] as char) {
                        i += 1;
                    }
                    // Cache-policy modifiers such as `.L1::no_allocate` stay inside the word.
                    if text[i..].starts_with("::")
                        && bytes.get(i + 2).is_some_and(|&b| is_word_char(b as char))
                    {
                        i += 2;
                    } else {
                        break;
                    }
                }
                // Decimal exponents (`1.5e-3`) keep their sign inside the word.
                if bytes[start].is_ascii_digit()
                    && !text[start..i].starts_with("0x")
                    && !text[start..i].starts_with("0X")
                    && (text[start..i].ends_with('e') || text[start..i].ends_with('E'))
                    && matches!(bytes.get(i), Some(b'+' | b'-'))
                {
                    i += 1;
                    while i < bytes.len() && is_word_char(bytes[i] as char) {
                        i += 1;
                    }
                }
                push_word(&mut out, text, start, i, line);
            }
            ',' | ';' | ':' | '{' | '}' | '[' | ']' | '(' | ')' | '<' | '>' | '+' | '-' | '='
            | '!' | '@' | '|' | '*' | '&' | '~' => {
                out.push(Token {
                    tok: Tok::Punct(c),
                    span: Span::new(i, i + 1),
                    line,
                });
                i += 1;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(Diagnostic::new(
                    source,
                    Span::new(i, i + ch.len_utf8()),
                    format!("unexpected character '{}'", ch.escape_default()),
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Tok> {
        lex(&Source::new("t.ptx", text))
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn opcodes_and_registers_keep_their_dots() {
        assert_eq!(
            words("ld.global.nc.u32 %r1, [%rd2+8]; // c"),
            vec![
                Tok::Word("ld.global.nc.u32".into()),
                Tok::Word("%r1".into()),
                Tok::Punct(','),
                Tok::Punct('['),
                Tok::Word("%rd2".into()),
                Tok::Punct('+'),
                Tok::Word("8".into()),
                Tok::Punct(']'),
                Tok::Punct(';'),
            ]
        );
    }

    #[test]
    fn declaration_directives_written_together_are_separate_words() {
        assert_eq!(
            words(".param.u64 a; .reg.b32 %r; ld.param.u64 %rd1, [a];"),
            words(".param .u64 a; .reg .b32 %r; ld.param.u64 %rd1, [a];")
        );
    }

    #[test]
    fn block_comments_are_skipped_and_count_lines() {
        let toks = lex(&Source::new("t", "/* a\n b */ ret;")).unwrap();
        assert_eq!(toks[0].tok, Tok::Word("ret".into()));
        assert_eq!(toks[0].line, 2);
    }

    #[test]
    fn stray_character_is_a_diagnostic() {
        let err = lex(&Source::new("t.ptx", "mov.u32 %r1, #3;")).unwrap_err();
        assert_eq!(err.location(), "t.ptx:1:14");
    }
}
