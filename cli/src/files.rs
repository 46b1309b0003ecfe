//! Reading input files without trusting them: only regular files are opened,
//! and never more is read than the file's own description allows.
//!
//! A FIFO, a socket or a device (`/dev/zero`, `/dev/stdin`) can block on
//! opening or never end, and a directory is no input at all: each is refused by
//! its metadata before it is opened. The file that is then opened must be the
//! one that was inspected (same device and inode) and still a regular file.
//! What a caller reads from it is bounded by a limit of its own (the call
//! file's [`MAX_CALL_BYTES`], a `.npy` file's header and the data size the
//! header implies), never by where the file happens to end.
//!
//! (A FIFO put in place between the inspection and the opening, by someone
//! racing the tool, would still block the opening: the standard library opens
//! without `O_NONBLOCK`.)

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The largest call file read, in bytes (16 MiB): a call file names files
/// and attributes; its arrays live in `.npy` files.
pub const MAX_CALL_BYTES: u64 = 16 << 20;

/// A path for a message: a long one cut in the middle (the file name, at
/// the end, tells most).
pub fn shown(path: &Path) -> String {
    crate::commands::cut_middle(&path.display().to_string(), 160)
}

/// What kind of file `m` describes, for a refusal ("a directory", "a FIFO").
pub fn kind_of(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Open `path` for reading if it is a regular file (symbolic links followed),
/// refusing anything else by its metadata before opening it. Returns the
/// file and its length in bytes.
pub fn open_regular(path: &Path) -> Result<(File, u64), String> {
    let before = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !before.is_file() {
        return Err(format!(
            "is {}, not a regular file; only regular files are read",
            kind_of(&before)
        ));
    }
    let file = File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let after = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !after.is_file() || after.dev() != before.dev() || after.ino() != before.ino() {
        return Err("was replaced while it was being opened".to_string());
    }
    Ok((file, after.len()))
}

/// Read up to `limit` bytes from `file` into a new vector, refusing (not
/// aborting) when the memory cannot be had. `expect` is the size the caller
/// expects, reserved up front.
pub fn read_at_most(file: &mut File, expect: u64, limit: u64) -> Result<Vec<u8>, String> {
    let reserve = usize::try_from(expect.min(limit))
        .map_err(|_| format!("{expect} bytes do not fit in this machine's memory"))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(reserve)
        .map_err(|_| format!("cannot allocate {reserve} bytes"))?;
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(bytes)
}

/// Whether `file` has no byte left to read.
pub fn at_end(file: &mut File) -> Result<bool, String> {
    let mut one = [0u8; 1];
    loop {
        match file.read(&mut one) {
            Ok(n) => return Ok(n == 0),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read: {e}")),
        }
    }
}

/// Read a call file: a regular file of at most [`MAX_CALL_BYTES`] bytes of
/// UTF-8 text.
pub fn read_call_file(path: &Path) -> Result<String, String> {
    let (mut file, len) = open_regular(path)?;
    let limit = MAX_CALL_BYTES;
    let too_big = |n: u64| {
        format!(
            "is {n} bytes, over the {} MiB limit of a call file",
            limit >> 20
        )
    };
    if len > limit {
        return Err(too_big(len));
    }
    // One byte more than the limit tells a file that grew past it.
    let bytes = read_at_most(&mut file, len, limit + 1)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}
