//! Reading the configuration file safely: a regular file only, opened
//! without blocking (a FIFO put in its place would hold the reader until a
//! writer came), and no more than [`MAX_FILE_BYTES`] of it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest configuration file read: 64 MiB (100,000 services take
/// about 5 MB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The text of the file at `path`: an error when it is not a regular file
/// (a FIFO, a socket, a device, a directory), larger than
/// [`MAX_FILE_BYTES`], or not UTF-8.
pub(crate) fn read_text(path: &Path) -> io::Result<String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file but {}", kind_name(kind)),
        ));
    }
    read_at_most(file, MAX_FILE_BYTES)
}

/// All of `file` if it holds at most `max` bytes (it may grow while read).
fn read_at_most(file: File, max: u64) -> io::Result<String> {
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the limit of {} MiB", max >> 20),
        ));
    }
    Ok(text)
}

fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ipvs-agent-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_fifo_is_refused_at_once_not_waited_on() {
        let path = scratch("fifo");
        let _ = std::fs::remove_file(&path);
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path, alive for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&path).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file but a FIFO");
        let e = read_text(path.parent().unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file but a directory");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let path = scratch("big");
        std::fs::write(&path, "x".repeat(2048)).unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(read_at_most(file, 2048).unwrap().len(), 2048);
        let file = File::open(&path).unwrap();
        let e = read_at_most(file, 2047).unwrap_err();
        assert!(e.to_string().starts_with("larger than the limit"), "{e}");
        assert_eq!(read_text(&path).unwrap().len(), 2048);
    }
}
