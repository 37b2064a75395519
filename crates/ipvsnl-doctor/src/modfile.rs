//! Reading a kernel module file: its compression, and the `.modinfo` section
//! of its ELF image, where `vermagic=` names the kernel it was built for.
//!
//! The functions here work on bytes; [`read_vermagic`] is the one that opens
//! a file. A module whose vermagic names another kernel release is refused by
//! the kernel with `ENOEXEC` ("Exec format error", busybox: "invalid module
//! format").

use std::io::{Read, Write};
use std::path::Path;

use thiserror::Error;

/// Largest decompressed module image the doctor accepts (a guard against a
/// corrupt or hostile file; real modules are a few MiB at most).
pub const MAX_MODULE_SIZE: usize = 128 * 1024 * 1024;

/// How a module file is compressed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// A plain `.ko`.
    #[serde(rename = "plain")]
    None,
    /// `.ko.xz`.
    Xz,
    /// `.ko.zst`.
    Zstd,
    /// `.ko.gz` (recognised, not decoded).
    Gzip,
}

impl Compression {
    /// The compression a module file name implies (`None` for a plain `.ko`),
    /// or `None` when the name is not a module file name at all.
    pub fn from_file_name(name: &str) -> Option<Compression> {
        if name.ends_with(".ko") {
            Some(Compression::None)
        } else if name.ends_with(".ko.xz") {
            Some(Compression::Xz)
        } else if name.ends_with(".ko.zst") {
            Some(Compression::Zstd)
        } else if name.ends_with(".ko.gz") {
            Some(Compression::Gzip)
        } else {
            None
        }
    }

    /// The compression the first bytes of a file show, `None` for anything
    /// that is not a known compressed format (an ELF image, say).
    pub fn sniff(bytes: &[u8]) -> Option<Compression> {
        if bytes.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0]) {
            Some(Compression::Xz)
        } else if bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
            Some(Compression::Zstd)
        } else if bytes.starts_with(&[0x1F, 0x8B]) {
            Some(Compression::Gzip)
        } else {
            None
        }
    }

    /// A short lowercase name: `plain`, `xz`, `zstd`, `gzip`.
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
            Compression::Gzip => "gzip",
        }
    }
}

/// Why a module file's vermagic could not be read.
#[non_exhaustive]
#[derive(Debug, Error)]
pub enum ModfileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The (decompressed) bytes are not an ELF image.
    #[error("not an ELF image")]
    NotElf,
    /// The ELF image ends before a structure it describes.
    #[error("truncated ELF image: {0}")]
    Truncated(&'static str),
    /// The ELF image has no `.modinfo` section.
    #[error("no .modinfo section")]
    NoModinfo,
    /// The `.modinfo` section has no `vermagic=` entry.
    #[error("no vermagic in .modinfo")]
    NoVermagic,
    /// The compressed stream is corrupt.
    #[error("cannot decompress {format} data: {message}")]
    Decompress {
        /// `xz` or `zstd`.
        format: &'static str,
        /// What the decoder said.
        message: String,
    },
    /// The decompressed image is larger than [`MAX_MODULE_SIZE`].
    #[error("decompressed image larger than {limit} bytes")]
    TooLarge {
        /// The limit that was hit.
        limit: usize,
    },
    /// The compression is recognised but not decoded by this crate.
    #[error("{} compressed modules are not inspected", .0.as_str())]
    Unsupported(Compression),
}

/// A `Write` sink that refuses to grow past a limit.
struct Bounded {
    buf: Vec<u8>,
    limit: usize,
    overflowed: bool,
}

impl Write for Bounded {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len().saturating_add(data.len()) > self.limit {
            self.overflowed = true;
            return Err(std::io::Error::other("size limit"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Decompresses a module file's bytes if they are xz or zstd compressed, and
/// returns them unchanged otherwise. `limit` caps the output size.
pub fn decompress(bytes: &[u8], limit: usize) -> Result<Vec<u8>, ModfileError> {
    match Compression::sniff(bytes) {
        None | Some(Compression::None) => Ok(bytes.to_vec()),
        Some(Compression::Xz) => {
            let mut out = Bounded {
                buf: Vec::new(),
                limit,
                overflowed: false,
            };
            let mut input = bytes;
            match lzma_rs::xz_decompress(&mut input, &mut out) {
                Ok(()) => Ok(out.buf),
                Err(_) if out.overflowed => Err(ModfileError::TooLarge { limit }),
                Err(err) => Err(ModfileError::Decompress {
                    format: "xz",
                    message: err.to_string(),
                }),
            }
        }
        Some(Compression::Zstd) => {
            let mut out = Vec::new();
            let mut input = bytes;
            // A zstd file may hold several frames back to back.
            while !input.is_empty() {
                let decoder = ruzstd::StreamingDecoder::new(&mut input).map_err(|err| {
                    ModfileError::Decompress {
                        format: "zstd",
                        message: err.to_string(),
                    }
                })?;
                let room = limit.saturating_sub(out.len()) as u64;
                decoder
                    .take(room.saturating_add(1))
                    .read_to_end(&mut out)
                    .map_err(|err| ModfileError::Decompress {
                        format: "zstd",
                        message: err.to_string(),
                    })?;
                if out.len() > limit {
                    return Err(ModfileError::TooLarge { limit });
                }
            }
            Ok(out)
        }
        Some(other) => Err(ModfileError::Unsupported(other)),
    }
}

/// Byte order and word size of an ELF image.
#[derive(Clone, Copy)]
struct ElfShape {
    is64: bool,
    little: bool,
}

impl ElfShape {
    fn read(&self, bytes: &[u8], at: u64, width: usize) -> Result<u64, ModfileError> {
        let start = usize::try_from(at).map_err(|_| ModfileError::Truncated("offset"))?;
        let end = start
            .checked_add(width)
            .ok_or(ModfileError::Truncated("offset"))?;
        let field = bytes
            .get(start..end)
            .ok_or(ModfileError::Truncated("field"))?;
        let mut value = 0u64;
        if self.little {
            for byte in field.iter().rev() {
                value = (value << 8) | u64::from(*byte);
            }
        } else {
            for byte in field {
                value = (value << 8) | u64::from(*byte);
            }
        }
        Ok(value)
    }

    fn word(&self) -> usize {
        if self.is64 {
            8
        } else {
            4
        }
    }
}

/// One section header, the fields the doctor needs.
struct Section {
    name: u64,
    offset: u64,
    size: u64,
    link: u64,
}

fn section(
    shape: ElfShape,
    bytes: &[u8],
    shoff: u64,
    entsize: u64,
    index: u64,
) -> Result<Section, ModfileError> {
    let base = index
        .checked_mul(entsize)
        .and_then(|rel| rel.checked_add(shoff))
        .ok_or(ModfileError::Truncated("section header"))?;
    let w = shape.word() as u64;
    // sh_name u32, sh_type u32, sh_flags word, sh_addr word, sh_offset word,
    // sh_size word, sh_link u32.
    let name = shape.read(bytes, base, 4)?;
    let offset = shape.read(bytes, base + 8 + w * 2, shape.word())?;
    let size = shape.read(bytes, base + 8 + w * 3, shape.word())?;
    let link = shape.read(bytes, base + 8 + w * 4, 4)?;
    Ok(Section {
        name,
        offset,
        size,
        link,
    })
}

fn slice(bytes: &[u8], offset: u64, size: u64) -> Result<&[u8], ModfileError> {
    let start = usize::try_from(offset).map_err(|_| ModfileError::Truncated("section"))?;
    let len = usize::try_from(size).map_err(|_| ModfileError::Truncated("section"))?;
    let end = start
        .checked_add(len)
        .ok_or(ModfileError::Truncated("section"))?;
    bytes
        .get(start..end)
        .ok_or(ModfileError::Truncated("section contents"))
}

/// Returns the raw contents of the `.modinfo` section of an (uncompressed)
/// ELF image, 32 or 64 bit, either byte order.
pub fn modinfo_section(elf: &[u8]) -> Result<&[u8], ModfileError> {
    if elf.len() < 16 || &elf[..4] != b"\x7fELF" {
        return Err(ModfileError::NotElf);
    }
    let is64 = match elf[4] {
        1 => false,
        2 => true,
        _ => return Err(ModfileError::NotElf),
    };
    let little = match elf[5] {
        1 => true,
        2 => false,
        _ => return Err(ModfileError::NotElf),
    };
    let shape = ElfShape { is64, little };
    let (shoff, entsize, shnum, shstrndx) = if is64 {
        (
            shape.read(elf, 0x28, 8)?,
            shape.read(elf, 0x3A, 2)?,
            shape.read(elf, 0x3C, 2)?,
            shape.read(elf, 0x3E, 2)?,
        )
    } else {
        (
            shape.read(elf, 0x20, 4)?,
            shape.read(elf, 0x2E, 2)?,
            shape.read(elf, 0x30, 2)?,
            shape.read(elf, 0x32, 2)?,
        )
    };
    let min_entsize = if is64 { 64 } else { 40 };
    if shoff == 0 || entsize < min_entsize {
        return Err(ModfileError::NoModinfo);
    }
    // Extended numbering: the real counts live in section 0.
    let first = section(shape, elf, shoff, entsize, 0)?;
    let shnum = if shnum == 0 { first.size } else { shnum };
    let shstrndx = if shstrndx == 0xFFFF {
        first.link
    } else {
        shstrndx
    };
    // Every header must fit in the file, which also bounds the loop.
    let table_end = shnum
        .checked_mul(entsize)
        .and_then(|len| len.checked_add(shoff))
        .ok_or(ModfileError::Truncated("section table"))?;
    if table_end > elf.len() as u64 {
        return Err(ModfileError::Truncated("section table"));
    }
    if shstrndx >= shnum {
        return Err(ModfileError::Truncated("section name table index"));
    }
    let names = section(shape, elf, shoff, entsize, shstrndx)?;
    let names = slice(elf, names.offset, names.size)?;
    for index in 0..shnum {
        let sec = section(shape, elf, shoff, entsize, index)?;
        let Ok(start) = usize::try_from(sec.name) else {
            continue;
        };
        let Some(name) = names.get(start..) else {
            continue;
        };
        let name = name.split(|b| *b == 0).next().unwrap_or_default();
        if name == b".modinfo" {
            return slice(elf, sec.offset, sec.size);
        }
    }
    Err(ModfileError::NoModinfo)
}

/// Splits a `.modinfo` section into its `key=value` entries.
pub fn modinfo_entries(section: &[u8]) -> Vec<(String, String)> {
    section
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (key, value) = entry.split_once('=')?;
            Some((key.to_string(), value.to_string()))
        })
        .collect()
}

/// The vermagic string of a module file's bytes (compressed or not).
pub fn vermagic_from_bytes(bytes: &[u8]) -> Result<String, ModfileError> {
    let image = decompress(bytes, MAX_MODULE_SIZE)?;
    let section = modinfo_section(&image)?;
    modinfo_entries(section)
        .into_iter()
        .find(|(key, _)| key == "vermagic")
        .map(|(_, value)| value)
        .ok_or(ModfileError::NoVermagic)
}

/// Reads a module file and returns its vermagic string.
pub fn read_vermagic(path: &Path) -> Result<String, ModfileError> {
    let file = std::fs::File::open(path).map_err(|source| ModfileError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_MODULE_SIZE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ModfileError::Io {
            path: path.display().to_string(),
            source,
        })?;
    if bytes.len() > MAX_MODULE_SIZE {
        return Err(ModfileError::TooLarge {
            limit: MAX_MODULE_SIZE,
        });
    }
    vermagic_from_bytes(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for input in [
            &b""[..],
            b"\x7fELF",
            b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0",
            b"\x7fELF\x01\x02\x01\0\0\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            b"\xFD7zXZ\0garbage",
            b"\x28\xB5\x2F\xFDgarbage",
            b"\x1f\x8b\x08",
        ] {
            assert!(vermagic_from_bytes(input).is_err());
        }
    }
}
