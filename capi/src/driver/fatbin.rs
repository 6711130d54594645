//! The PTX inside NVIDIA's containers, for `cuLink*` inputs that are not PTX text: a fatbin
//! (`CU_JIT_INPUT_FATBINARY`), a host object whose `.nv_fatbin` or `__nv_relfatbin` section
//! holds fatbins (`CU_JIT_INPUT_OBJECT`), and an archive of such objects
//! (`CU_JIT_INPUT_LIBRARY`, e.g. CUDA's `libcudadevrt.a`); and for a fatbin image given to
//! `cuModuleLoadData`. Only PTX can run here: a
//! container with machine code alone is refused by the caller, with what it holds.
//!
//! Layouts (little-endian), as `cuobjdump` reads them: a fatbin is a 16-byte header (magic
//! `0xBA55ED50`, version u16, header size u16, size of the entries u64) and entries, each a
//! header (kind u16 at 0: 1 = PTX, 2 = ELF; its size u32 at 4; payload size u64 at 8;
//! compressed size u32 at 16; PTX ISA version minor u16 at 24, major u16 at 26; `sm_` arch
//! u32 at 28; flags u64 at 40, `0x8000` = Zstandard-compressed, `0x2000` = LZ4; decompressed
//! size u64 at 56) and its payload. PTX text is NUL-padded.

/// One PTX text found in a container, with the `sm_` number it was compiled for.
pub struct Ptx {
    pub arch: u32,
    pub text: String,
}

/// What a container holds: its PTX texts, and the `sm_` numbers of its machine code.
#[derive(Default)]
pub struct Contents {
    pub ptx: Vec<Ptx>,
    pub machine_code: Vec<u32>,
}

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const KIND_PTX: u16 = 1;
const ZSTD: u64 = 0x8000;
const LZ4: u64 = 0x2000;
/// Decompressed PTX larger than this is refused (a corrupt size, not a kernel).
const MAX_PTX_BYTES: u64 = 1 << 30;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Whether `bytes` begin as a fatbin does.
pub fn is_fatbin(bytes: &[u8]) -> bool {
    u32_at(bytes, 0) == Some(FATBIN_MAGIC)
}

/// The entries of the fatbins at the start of `bytes` (one after another, 8-byte aligned,
/// as a section holds them).
pub fn read_fatbins(bytes: &[u8], into: &mut Contents) -> Result<(), String> {
    let mut at = 0;
    while at + 16 <= bytes.len() && u32_at(bytes, at) == Some(FATBIN_MAGIC) {
        let header = u16_at(bytes, at + 6).ok_or("truncated fatbin header")? as usize;
        let size = u64_at(bytes, at + 8).ok_or("truncated fatbin header")? as usize;
        let end = (at + header)
            .checked_add(size)
            .filter(|&e| e <= bytes.len())
            .ok_or("a fatbin's entries run past its end")?;
        read_entries(&bytes[at + header..end], into)?;
        at = end.next_multiple_of(8);
    }
    Ok(())
}

fn read_entries(mut b: &[u8], into: &mut Contents) -> Result<(), String> {
    while b.len() >= 64 {
        let truncated = || "truncated fatbin entry".to_string();
        let kind = u16_at(b, 0).ok_or_else(truncated)?;
        let header = u32_at(b, 4).ok_or_else(truncated)? as usize;
        let payload_size = u64_at(b, 8).ok_or_else(truncated)? as usize;
        let compressed = u32_at(b, 16).ok_or_else(truncated)? as usize;
        let arch = u32_at(b, 28).ok_or_else(truncated)?;
        let flags = u64_at(b, 40).ok_or_else(truncated)?;
        let decompressed = u64_at(b, 56).ok_or_else(truncated)?;
        let end = header
            .checked_add(payload_size)
            .filter(|&e| e <= b.len() && header >= 64)
            .ok_or("a fatbin entry runs past its fatbin")?;
        let payload = &b[header..end];
        if kind == KIND_PTX {
            let raw = if flags & ZSTD != 0 {
                zstd(payload.get(..compressed).unwrap_or(payload), decompressed)?
            } else if flags & LZ4 != 0 {
                return Err(format!(
                    "the PTX for sm_{arch} is LZ4-compressed, which ptxjit does not read \
                     (Zstandard is read; or link the PTX text)"
                ));
            } else {
                payload.to_vec()
            };
            let text = String::from_utf8_lossy(&raw);
            let text = text.trim_end_matches('\0').to_string();
            into.ptx.push(Ptx { arch, text });
        } else {
            into.machine_code.push(arch);
        }
        b = &b[end..];
    }
    Ok(())
}

fn zstd(bytes: &[u8], size: u64) -> Result<Vec<u8>, String> {
    if size > MAX_PTX_BYTES {
        return Err(format!("a compressed PTX entry claims {size} bytes"));
    }
    let mut out = vec![0; size as usize];
    let n = ruzstd::decoding::FrameDecoder::new()
        .decode_all(bytes, &mut out)
        .map_err(|e| format!("the compressed PTX does not decompress: {e}"))?;
    out.truncate(n);
    Ok(out)
}

/// The fatbins in the sections of an ELF host object that hold them.
pub fn read_object(bytes: &[u8], into: &mut Contents) -> Result<(), String> {
    let bad = || "not an ELF64 little-endian object".to_string();
    if bytes.get(..4) != Some(b"\x7fELF") || bytes.get(4..6) != Some(&[2, 1]) {
        return Err(bad());
    }
    let shoff = u64_at(bytes, 0x28).ok_or_else(bad)? as usize;
    let shentsize = u16_at(bytes, 0x3A).ok_or_else(bad)? as usize;
    let shnum = u16_at(bytes, 0x3C).ok_or_else(bad)? as usize;
    let shstrndx = u16_at(bytes, 0x3E).ok_or_else(bad)? as usize;
    let section = |i: usize| -> Option<(u32, &[u8])> {
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let name = u32_at(bytes, h)?;
        let kind = u32_at(bytes, h + 4)?;
        let offset = u64_at(bytes, h + 24)? as usize;
        let size = u64_at(bytes, h + 32)? as usize;
        // SHT_NOBITS (8) has no bytes in the file.
        let data = if kind == 8 {
            &[][..]
        } else {
            bytes.get(offset..offset.checked_add(size)?)?
        };
        Some((name, data))
    };
    let (_, names) = section(shstrndx).ok_or_else(bad)?;
    for i in 0..shnum {
        let (name, data) = section(i).ok_or_else(bad)?;
        let name = names
            .get(name as usize..)
            .and_then(|n| n.split(|&c| c == 0).next())
            .unwrap_or_default();
        if name == b".nv_fatbin" || name == b"__nv_relfatbin" {
            read_fatbins(data, into)?;
        }
    }
    Ok(())
}

/// The members of an `ar` archive, in order.
pub fn archive_members(bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut b = bytes
        .strip_prefix(b"!<arch>\n")
        .ok_or("not an ar archive")?;
    let mut members = Vec::new();
    while b.len() >= 60 {
        let size: usize = std::str::from_utf8(&b[48..58])
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or("an archive member's header has no size")?;
        let name = &b[..16];
        let data = b
            .get(60..60 + size)
            .ok_or("an archive member runs past the archive's end")?;
        // The symbol table ("/", "/SYM64/") and the long-name table ("//") are no members.
        if !name.starts_with(b"/ ") && !name.starts_with(b"// ") && !name.starts_with(b"/SYM64/") {
            members.push(data);
        }
        b = b.get(60 + size.next_multiple_of(2)..).unwrap_or_default();
    }
    Ok(members)
}

/// The `sm_` number of the device (`context::COMPUTE_CAPABILITY`).
pub fn device_sm() -> u32 {
    let (major, minor) = super::context::COMPUTE_CAPABILITY;
    (major * 10 + minor) as u32
}

/// The PTX of a fatbin image (`cuModuleLoadData`), or why there is none.
pub fn ptx_of_fatbin(bytes: &[u8]) -> Result<String, String> {
    let mut contents = Contents::default();
    read_fatbins(bytes, &mut contents)?;
    ptx_for_device(contents)
}

/// The PTX this device runs from `contents` ([`pick`]), or why there is none.
pub fn ptx_for_device(contents: Contents) -> Result<String, String> {
    let machine_code = contents.machine_code.clone();
    pick(contents, device_sm())
        .map(|p| p.text)
        .ok_or_else(|| no_ptx(&machine_code))
}

/// Why a container with machine code for these `sm_` numbers (or nothing) cannot run here.
pub fn no_ptx(machine_code: &[u32]) -> String {
    if machine_code.is_empty() {
        return "holds no PTX".into();
    }
    let archs: Vec<String> = machine_code.iter().map(|a| format!("sm_{a}")).collect();
    format!(
        "holds GPU machine code only ({}), which cannot run here: link PTX",
        archs.join(", ")
    )
}

/// The PTX to link from `contents`: the newest one compiled for `sm_` `device` or older,
/// else the oldest.
pub fn pick(contents: Contents, device: u32) -> Option<Ptx> {
    let (fits, newer): (Vec<Ptx>, Vec<Ptx>) =
        contents.ptx.into_iter().partition(|p| p.arch <= device);
    fits.into_iter()
        .max_by_key(|p| p.arch)
        .or_else(|| newer.into_iter().min_by_key(|p| p.arch))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fatbin of one uncompressed PTX entry and one ELF entry.
    fn fatbin(ptx: &str) -> Vec<u8> {
        let entry = |kind: u16, arch: u32, payload: &[u8]| {
            let mut e = vec![0u8; 64];
            e[0..2].copy_from_slice(&kind.to_le_bytes());
            e[4..8].copy_from_slice(&64u32.to_le_bytes());
            e[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
            e[28..32].copy_from_slice(&arch.to_le_bytes());
            e.extend_from_slice(payload);
            e
        };
        let mut text = ptx.as_bytes().to_vec();
        text.extend_from_slice(&[0; 5]);
        let mut entries = entry(2, 90, &[1, 2, 3, 4]);
        entries.extend(entry(1, 80, &text));
        let mut f = FATBIN_MAGIC.to_le_bytes().to_vec();
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&16u16.to_le_bytes());
        f.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        f.extend(entries);
        f
    }

    #[test]
    fn a_fatbin_gives_its_ptx_without_padding_and_the_arch_of_its_machine_code() {
        let mut c = Contents::default();
        read_fatbins(&fatbin(".version 8.0\n"), &mut c).unwrap();
        assert_eq!(c.machine_code, [90]);
        assert_eq!(c.ptx.len(), 1);
        assert_eq!(
            (c.ptx[0].arch, c.ptx[0].text.as_str()),
            (80, ".version 8.0\n")
        );
    }

    #[test]
    fn a_fatbin_whose_entry_runs_past_its_end_is_an_error_not_a_panic() {
        let mut f = fatbin(".version 8.0\n");
        f.truncate(f.len() - 8);
        let mut c = Contents::default();
        assert!(read_fatbins(&f, &mut c).is_err());
    }

    /// An ELF64 object whose only sections are the names and `section` holding `data`.
    fn object(section: &str, data: &[u8]) -> Vec<u8> {
        let names = format!("\0.shstrtab\0{section}\0").into_bytes();
        let mut o = vec![0u8; 64];
        o[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let names_at = o.len();
        o.extend_from_slice(&names);
        let data_at = o.len();
        o.extend_from_slice(data);
        let shoff = o.len().next_multiple_of(8);
        o.resize(shoff, 0);
        o[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        o[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        o[0x3C..0x3E].copy_from_slice(&3u16.to_le_bytes());
        o[0x3E..0x40].copy_from_slice(&1u16.to_le_bytes());
        let header = |name: u32, kind: u32, offset: usize, size: usize| {
            let mut h = vec![0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[24..32].copy_from_slice(&(offset as u64).to_le_bytes());
            h[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            h
        };
        o.extend(header(0, 0, 0, 0));
        o.extend(header(1, 3, names_at, names.len()));
        o.extend(header(11, 1, data_at, data.len()));
        o
    }

    #[test]
    fn an_object_gives_the_fatbins_of_its_fatbin_sections_only() {
        let f = fatbin(".version 8.0\n");
        for (section, found) in [(".nv_fatbin", 1), ("__nv_relfatbin", 1), (".rodata", 0)] {
            let mut c = Contents::default();
            read_object(&object(section, &f), &mut c).unwrap();
            assert_eq!(c.ptx.len(), found, "{section}");
        }
        let mut c = Contents::default();
        assert!(read_object(b"\x7fELF\x01\x01", &mut c).is_err());
    }

    #[test]
    fn an_archive_lists_its_members_but_not_its_symbol_table() {
        let member = |name: &str, data: &[u8]| {
            let mut h = format!(
                "{name:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                0,
                0,
                0,
                644,
                data.len()
            )
            .into_bytes();
            h.extend_from_slice(data);
            if data.len() % 2 == 1 {
                h.push(b'\n');
            }
            h
        };
        let mut a = b"!<arch>\n".to_vec();
        a.extend(member("/", b"symbols"));
        a.extend(member("x.o/", b"abc"));
        a.extend(member("y.o/", b"defg"));
        let members = archive_members(&a).unwrap();
        assert_eq!(members, [&b"abc"[..], &b"defg"[..]]);
    }

    #[test]
    fn the_newest_ptx_the_device_runs_is_picked_else_the_oldest() {
        let contents = |archs: &[u32]| Contents {
            ptx: archs
                .iter()
                .map(|&arch| Ptx {
                    arch,
                    text: String::new(),
                })
                .collect(),
            machine_code: Vec::new(),
        };
        assert_eq!(pick(contents(&[52, 80, 100]), 90).unwrap().arch, 80);
        assert_eq!(pick(contents(&[121, 100]), 90).unwrap().arch, 100);
        assert!(pick(contents(&[]), 90).is_none());
    }
}
