//! The operand syntax of the video instructions: selectors written on operands (`a.b1`,
//! `b.h0`, the merge destination `d.h1`; for SIMD forms `a.h01`, `b.b0123` and the mask
//! `d.h10`/`d.b31`) and `vmad`'s negations (`-a`, `-b`, `-c`). They are part of the
//! instruction, so they move from the operands into its [`Video`], leaving plain registers.

use super::ast::{Operand, OperandKind};
use crate::error::Span;
use crate::semantics::video::{Part, Second, Shape, Video, VideoOp};

type SResult<T> = Result<T, (Span, String)>;

/// `v` with the selectors and negations of `operands`, and the operands without them.
/// `is_name(n)`: whether `n` is a register or other name in scope (so `v.x` is not split).
pub fn video_operands(
    mut v: Video,
    operands: &[Operand],
    is_name: impl Fn(&str) -> bool,
) -> SResult<(Video, Vec<Operand>)> {
    let mut plain = Vec::new();
    for (k, o) in operands.iter().enumerate() {
        let (o, negated) = match &o.kind {
            OperandKind::Neg(inner) => (inner.as_ref(), true),
            _ => (o, false),
        };
        if negated {
            negate(&mut v, k, o.span)?;
        }
        let OperandKind::Name(name, 0) = &o.kind else {
            plain.push(o.clone());
            continue;
        };
        let split = name
            .rsplit_once('.')
            .filter(|(reg, _)| !is_name(name) && is_name(reg));
        let Some((reg, sel)) = split else {
            plain.push(o.clone());
            continue;
        };
        select(&mut v, k, sel).map_err(|msg| (o.span, msg))?;
        plain.push(Operand {
            kind: OperandKind::Name(reg.to_string(), 0),
            span: o.span,
        });
    }
    // The merge form's `c` is its own operand; a merge without a part is the whole word
    // (ptxas takes `vadd.u32.u32.u32 d, a, b, c` so), which `Second::Merge(Part::Word)` is.
    Ok((v, plain))
}

fn negate(v: &mut Video, k: usize, span: Span) -> SResult<()> {
    match &mut v.op {
        VideoOp::Mad {
            neg_product,
            neg_c,
            po: false,
            ..
        } if (1..=3).contains(&k) => {
            match k {
                3 => *neg_c = true,
                _ => *neg_product ^= true,
            }
            Ok(())
        }
        VideoOp::Mad { po: true, .. } => {
            Err((span, "vmad.po takes no negated operands".to_string()))
        }
        _ => Err((span, "'-' negates only vmad's a, b and c".to_string())),
    }
}

/// Applies the selector `sel` written on operand `k`.
fn select(v: &mut Video, k: usize, sel: &str) -> Result<(), String> {
    let bad = |what: &str| format!("'.{sel}' is not {what}");
    match &mut v.shape {
        Shape::Scalar { asel, bsel, second } => {
            let part = Part::parse(sel).ok_or_else(|| bad("a part: .b0 .b1 .b2 .b3 .h0 .h1"))?;
            match (k, second) {
                (0, Second::Merge(p)) if !matches!(v.op, VideoOp::Mad { .. }) => *p = part,
                (0, _) => {
                    return Err(
                        "this video instruction's destination takes no selector (only the merge \
                         form `d.dsel, a, b, c` has one)"
                            .to_string(),
                    );
                }
                (1, _) => *asel = part,
                (2, _) => *bsel = part,
                _ => return Err(format!("operand c takes no selector ('.{sel}')")),
            }
        }
        Shape::Simd {
            lanes,
            asel,
            bsel,
            mask,
            ..
        } => {
            let (letter, elements) = if *lanes == 2 { ('h', 4) } else { ('b', 8) };
            let digits: Option<Vec<u8>> = sel
                .strip_prefix(letter)
                .map(|d| d.bytes().map(|c| c.wrapping_sub(b'0')).collect());
            let Some(digits) = digits else {
                return Err(bad(&format!("a .{letter} selector")));
            };
            match k {
                0 => {
                    // A mask names the lanes written, highest first, each once.
                    let descending = digits.windows(2).all(|w| w[0] > w[1]);
                    if digits.is_empty() || !descending || digits[0] >= *lanes {
                        return Err(bad(&format!("a mask of {lanes} lanes")));
                    }
                    *mask = digits.iter().fold(0, |m, d| m | 1 << d);
                }
                1 | 2 => {
                    if digits.len() != *lanes as usize || digits.iter().any(|&d| d >= elements) {
                        return Err(bad(&format!(
                            "{lanes} elements of b:a ({letter}0 to {letter}{})",
                            elements - 1
                        )));
                    }
                    let sel = if k == 1 { asel } else { bsel };
                    // Written highest lane first: `.h01` puts element 0 in lane 1.
                    for (lane, &d) in digits.iter().rev().enumerate() {
                        sel[lane] = d;
                    }
                }
                _ => return Err(format!("operand c takes no selector ('.{sel}')")),
            }
        }
    }
    Ok(())
}
