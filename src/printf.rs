//! Device `printf`: CUDA's `vprintf(format, args)`, which nvcc and NVVM call with the
//! generic address of a format string and of a buffer that holds the arguments, each at an
//! offset aligned to its size, promoted as C's variadic arguments are (float → double,
//! char and short → int). The GPU prints each call's text whole; so does this, on the
//! process's standard output, as the call happens.
//!
//! Memory stays confined: the format and `%s` strings are read only inside live device
//! allocations, the arguments only inside the window the compiled code passes (the rest of
//! the `.local` or device memory the buffer lies in). Each conversion is formatted by the C
//! library's `snprintf`, so the digits are C's.

use std::ffi::{CString, c_char, c_int};
use std::io::Write;

unsafe extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, format: *const c_char, ...) -> c_int;
}

/// The bytes of one argument a conversion consumes: `(size, kind)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgKind {
    Int(u32),
    Float,
    Str,
    Ptr,
}

/// Reads device memory for the formatter: a byte of a string, a word of the arguments.
pub trait DeviceMemory {
    /// The byte at `addr`, if it lies in device memory.
    fn byte(&self, addr: u64) -> Option<u8>;
}

/// Device memory: the live allocations of `ptxjit_runtime::arena`.
struct Arena;

impl DeviceMemory for Arena {
    fn byte(&self, addr: u64) -> Option<u8> {
        // SAFETY: the arena says the byte belongs to a live allocation.
        ptxjit_runtime::arena()
            .contains(addr, 1)
            .then(|| unsafe { *(addr as *const u8) })
    }
}

/// A `printf` that could not be formatted: the address it could not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadAddress(pub u64);

/// The text `vprintf` prints for `format` at `format_addr` with the argument bytes `args`
/// (the buffer at `args_addr`), and the number of arguments it consumed.
pub fn format(
    mem: &dyn DeviceMemory,
    format_addr: u64,
    args: &[u8],
    args_addr: u64,
) -> Result<(Vec<u8>, i32), BadAddress> {
    let fmt = c_string(mem, format_addr, usize::MAX)?;
    let mut out = Vec::new();
    let mut offset = 0usize;
    let mut consumed = 0;
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let Some(spec) = Spec::parse(&fmt[i..]) else {
            // An incomplete or unknown conversion, and the rest after it, print as written.
            out.extend_from_slice(&fmt[i..]);
            break;
        };
        i += spec.len;
        let Some(kind) = spec.arg else {
            out.push(b'%');
            continue;
        };
        let size = match kind {
            ArgKind::Int(s) => s as usize,
            _ => 8,
        };
        offset = offset.next_multiple_of(size);
        let Some(bytes) = args.get(offset..offset + size) else {
            return Err(BadAddress(args_addr.wrapping_add(offset as u64)));
        };
        offset += size;
        consumed += 1;
        let mut word = [0u8; 8];
        word[..size].copy_from_slice(bytes);
        let bits = u64::from_le_bytes(word);
        match kind {
            ArgKind::Str => {
                let text = if bits == 0 {
                    b"(null)".to_vec()
                } else {
                    c_string(mem, bits, spec.precision.unwrap_or(usize::MAX))?
                };
                let text = CString::new(text).expect("no NUL inside");
                // SAFETY: a NUL-terminated copy on this side.
                out.extend(c_format(&spec.text, |b, n, f| unsafe {
                    snprintf(b, n, f, text.as_ptr())
                }));
            }
            // SAFETY (each): `spec.text` is one conversion taking exactly this argument type.
            ArgKind::Float => out.extend(c_format(&spec.text, |b, n, f| unsafe {
                snprintf(b, n, f, f64::from_bits(bits))
            })),
            ArgKind::Ptr => out.extend(c_format(&spec.text, |b, n, f| unsafe {
                snprintf(b, n, f, bits as usize as *const u8)
            })),
            ArgKind::Int(4) => out.extend(c_format(&spec.text, |b, n, f| unsafe {
                snprintf(b, n, f, bits as u32 as c_int)
            })),
            ArgKind::Int(_) => out.extend(c_format(&spec.text, |b, n, f| unsafe {
                snprintf(b, n, f, bits as i64)
            })),
        }
    }
    Ok((out, consumed))
}

/// The NUL-terminated string at `addr` (at most `max` bytes), read from device memory.
fn c_string(mem: &dyn DeviceMemory, addr: u64, max: usize) -> Result<Vec<u8>, BadAddress> {
    let mut s = Vec::new();
    while s.len() < max {
        let at = addr.wrapping_add(s.len() as u64);
        match mem.byte(at).ok_or(BadAddress(at))? {
            0 => break,
            b => s.push(b),
        }
    }
    Ok(s)
}

/// Formats one conversion with C's `snprintf`.
fn c_format(spec: &[u8], call: impl Fn(*mut c_char, usize, *const c_char) -> c_int) -> Vec<u8> {
    let spec = CString::new(spec).expect("a conversion has no NUL");
    let n = call(std::ptr::null_mut(), 0, spec.as_ptr());
    let Ok(n) = usize::try_from(n) else {
        return Vec::new();
    };
    let mut buf = vec![0u8; n + 1];
    call(buf.as_mut_ptr() as *mut c_char, n + 1, spec.as_ptr());
    buf.truncate(n);
    buf
}

/// One conversion: `%[flags][width][.precision][length]conversion`, as C's `printf` reads it
/// (no `*` width or precision, and no `%n`, as in CUDA's).
struct Spec {
    /// The conversion as C's `snprintf` gets it (length modifiers normalized to the argument
    /// type passed).
    text: Vec<u8>,
    len: usize,
    precision: Option<usize>,
    /// `None` for `%%`.
    arg: Option<ArgKind>,
}

impl Spec {
    fn parse(s: &[u8]) -> Option<Spec> {
        let mut i = 1;
        while i < s.len() && b"-+ #0".contains(&s[i]) {
            i += 1;
        }
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        let mut precision = None;
        if s.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            precision = Some(std::str::from_utf8(&s[start..i]).ok()?.parse().unwrap_or(0));
        }
        let head = i;
        while i < s.len() && b"hljztL".contains(&s[i]) {
            i += 1;
        }
        let length = &s[head..i];
        let conv = *s.get(i)?;
        let wide = matches!(length, b"l" | b"ll" | b"j" | b"z" | b"t");
        let (arg, c_length): (_, &[u8]) = match conv {
            b'%' => (None, b""),
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' if wide => (Some(ArgKind::Int(8)), b"ll"),
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' => (Some(ArgKind::Int(4)), length),
            b'c' => (Some(ArgKind::Int(4)), b""),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => (Some(ArgKind::Float), b""),
            b's' => (Some(ArgKind::Str), b""),
            b'p' => (Some(ArgKind::Ptr), b""),
            _ => return None,
        };
        let mut text = s[..head].to_vec();
        text.extend_from_slice(c_length);
        text.push(conv);
        Some(Spec {
            text,
            len: i + 1,
            precision,
            arg,
        })
    }
}

/// `vprintf` for compiled code: prints and returns the number of arguments, or -1 after
/// storing the address it could not read at `fault`.
///
/// # Safety
/// `[args, args + args_len)` must be readable (the compiled code passes the rest of the
/// window the buffer lies in) and `fault` writable.
pub unsafe fn vprintf(format_addr: u64, args: u64, args_len: u64, fault: *mut u64) -> i32 {
    let bytes = if args_len == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { std::slice::from_raw_parts(args as *const u8, args_len as usize) }
    };
    match format(&Arena, format_addr, bytes, args) {
        Ok((text, consumed)) => {
            let mut out = std::io::stdout().lock();
            // A closed standard output loses the text, as a GPU's printf buffer overflowing.
            let _ = out.write_all(&text).and_then(|()| out.flush());
            consumed
        }
        Err(BadAddress(a)) => {
            // SAFETY: the caller's guarantee.
            unsafe { *fault = a };
            -1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings at their addresses.
    struct Strings(Vec<(u64, &'static [u8])>);

    impl DeviceMemory for Strings {
        fn byte(&self, addr: u64) -> Option<u8> {
            self.0.iter().find_map(|(at, s)| {
                let i = addr.checked_sub(*at)? as usize;
                (i < s.len()).then(|| s[i])
            })
        }
    }

    fn print(fmt: &'static [u8], args: &[u8]) -> Result<(String, i32), BadAddress> {
        let mem = Strings(vec![(0x1000, fmt), (0x2000, b"hello\0")]);
        format(&mem, 0x1000, args, 0x9000).map(|(t, n)| (String::from_utf8(t).unwrap(), n))
    }

    fn buffer(words: &[(usize, u64)]) -> Vec<u8> {
        let mut b = vec![0u8; 32];
        for &(off, v) in words {
            b[off..off + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    #[test]
    fn arguments_sit_at_offsets_aligned_to_their_size() {
        // int at 0, double at 8 (aligned up from 4), long long at 16, int at 24.
        let args = buffer(&[(0, 7), (8, 2.5f64.to_bits()), (16, (-3i64) as u64), (24, 9)]);
        let got = print(b"%d %.2f %lld %x\n\0", &args).unwrap();
        assert_eq!(got, ("7 2.50 -3 9\n".into(), 4));
    }

    #[test]
    fn conversions_format_as_c_does() {
        let args = buffer(&[(0, 255), (8, 1e-7f64.to_bits()), (16, 65)]);
        let got = print(b"[%-5d|%08.3e|%c|%%]\0", &args).unwrap().0;
        assert_eq!(got, "[255  |1.000e-07|A|%]");
    }

    #[test]
    fn strings_are_read_from_device_memory_and_a_null_one_prints_null() {
        let args = buffer(&[(0, 0x2000), (8, 0x2000), (16, 0)]);
        assert_eq!(print(b"%s %.3s %s\0", &args).unwrap().0, "hello hel (null)");
    }

    #[test]
    fn a_string_outside_device_memory_is_an_illegal_address() {
        let args = buffer(&[(0, 0x5000)]);
        assert_eq!(print(b"%s\0", &args), Err(BadAddress(0x5000)));
    }

    #[test]
    fn an_argument_past_the_buffer_is_an_illegal_address() {
        let got = print(b"%d %d\0", &[1, 0, 0, 0]);
        assert_eq!(got, Err(BadAddress(0x9004)));
    }

    #[test]
    fn an_unterminated_format_is_an_illegal_address() {
        let mem = Strings(vec![(0x1000, b"abc")]);
        assert_eq!(format(&mem, 0x1000, &[], 0), Err(BadAddress(0x1003)));
    }
}
