//! A call's results, written all or nothing.
//!
//! [`Results::plan`] resolves every result's path before anything is read or
//! computed: a result must name a regular file or a new name in an existing
//! directory, and no two results may name one file (compared after resolving
//! them against the call file, canonicalising their directories and following
//! symbolic links, and, for files that exist, by device and inode, which also
//! catches hard links). Each command module hands every result to
//! [`Results::add`], which checks it against the call file's `dtype`, `shape`
//! and `packed` for it and writes it to a temporary file beside its
//! destination (same directory, so the final move is a rename). Only when the
//! kernel has returned and every result is written does `tessera run` call
//! [`Results::commit`], which renames each temporary file over its
//! destination. A failure anywhere before (a refusal, a result that cannot be
//! written: full disk, a file-size limit) removes the temporary files and
//! leaves every destination as it was, created or changed by nothing.
//!
//! Where a call has more than one result, `commit` first keeps every
//! destination that exists under a second name (a hard link) and, should a
//! rename fail after others succeeded, puts them all back, so the renames are
//! all or nothing too. A result named through a symbolic link replaces the
//! link's target, as writing through the link did. A destination keeps its
//! permissions.

use crate::call::{resolve, Output, UniqueMap};
use crate::codes::{self, npy_type, values_per_byte};
use crate::commands::truncate;
use crate::failure::{Failure, Outcome};
use crate::files::{kind_of, shown};
use crate::npy;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use tessera::DType;

/// One result of the call.
struct Dest {
    /// Its name in the call file.
    name: String,
    /// What the call file says of it.
    spec: Output,
    /// Its path resolved against the call file's directory, for messages.
    shown: PathBuf,
    /// The file it replaces: its directory canonicalised, symbolic links
    /// followed.
    target: PathBuf,
    /// The device and inode of the file it replaces, where that exists.
    existing: Option<(u64, u64)>,
    /// The permissions of the file it replaces, where that exists.
    permissions: Option<Permissions>,
    /// The temporary file holding the result, once written.
    temp: Option<PathBuf>,
}

/// Every result of a call: planned, written to temporary files, then moved
/// into place together (see the module's documentation).
pub struct Results {
    dests: Vec<Dest>,
    /// Temporary files (and kept destinations) to remove if the call does
    /// not commit, each registered for removal on a signal.
    litter: Vec<(PathBuf, crate::signals::Registration)>,
}

fn refuse(name: &str, path: &Path, msg: impl std::fmt::Display) -> Failure {
    Failure::run(format!("result {name} ({}): {msg}", shown(path)))
}

/// A fresh name beside `target`: `.NAME.tessera-PID-N.tag`, where NAME is
/// (the start of) the target's file name.
fn sibling(target: &Path, tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let base = target
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    // At most 64 bytes of it, so that the name stays within a file
    // system's 255.
    let mut base_len = 0;
    let base: String = base
        .chars()
        .take_while(|c| {
            base_len += c.len_utf8();
            base_len <= 64
        })
        .collect();
    let name = format!(".{base}.tessera-{}-{n}.{tag}", std::process::id());
    target.with_file_name(name)
}

/// How a result is held in memory when it is handed to [`Results`].
#[derive(Clone, Copy, Debug)]
pub enum Held<'a> {
    /// C order, one code per byte for sub-byte dtypes (as operands are
    /// loaded).
    Codes(&'a [u8]),
    /// As the library writes it: packed along the last axis for sub-byte
    /// dtypes, in rows of `row` values (at least the shape's last extent;
    /// the values beyond it are padding, not written).
    Library {
        /// The bytes.
        data: &'a [u8],
        /// Values per row in `data`.
        row: usize,
    },
}

/// What a result's file holds and where it comes from in memory: `rows`
/// rows of `last` values, each written packed or one code (or element) at
/// a time, read from rows of `src_row` bytes of the held data.
struct FileLayout<'a> {
    dtype: DType,
    /// The shape the file's header gives (the last extent in bytes where
    /// the file is packed).
    file_shape: Vec<usize>,
    /// The bytes of data the file holds.
    data_len: usize,
    rows: usize,
    last: usize,
    /// Whether the file holds packed bytes.
    packed_file: bool,
    /// Whether the held data is packed (the library's sub-byte form).
    packed_src: bool,
    /// Bytes between the starts of successive rows of the held data.
    src_row: usize,
    src: &'a [u8],
}

impl<'a> FileLayout<'a> {
    fn of(
        name: &str,
        dtype: DType,
        shape: &[usize],
        packed_file: bool,
        held: Held<'a>,
    ) -> Outcome<FileLayout<'a>> {
        let vpb = values_per_byte(dtype);
        let item = dtype.info().item_bytes;
        let count = npy::element_count(shape);
        let last = shape.last().copied().unwrap_or(1);
        let rows = if count == 0 { 0 } else { count / last };
        let mut file_shape = shape.to_vec();
        let data_len = if packed_file {
            let Some(l) = file_shape.last_mut() else {
                return Err(Failure::run(format!(
                    "result {name}: a packed result needs at least one axis"
                )));
            };
            if *l % vpb != 0 {
                return Err(Failure::run(format!(
                    "result {name}: cannot pack a last axis of {last} {dtype} values into whole bytes ({vpb} per byte)"
                )));
            }
            *l /= vpb;
            count / vpb
        } else {
            // One code per byte for sub-byte dtypes (their item is a byte).
            count.saturating_mul(item.max(1))
        };
        let (src, packed_src, src_row) = match held {
            Held::Codes(d) => (d, false, last * item.max(1)),
            Held::Library { data, row } if vpb > 1 => {
                if row < last || row % vpb != 0 {
                    return Err(Failure::run(format!(
                        "result {name}: rows of {row} packed values cannot hold {last}"
                    )));
                }
                (data, true, row / vpb)
            }
            Held::Library { data, row } => {
                if row < last {
                    return Err(Failure::run(format!(
                        "result {name}: rows of {row} values cannot hold {last}"
                    )));
                }
                (data, false, row * item)
            }
        };
        let need = rows.checked_mul(src_row);
        if rows > 0 && need.is_none_or(|n| n > src.len()) {
            return Err(Failure::run(format!(
                "result {name}: {} bytes held for {rows} rows of {src_row} bytes",
                src.len()
            )));
        }
        Ok(FileLayout {
            dtype,
            file_shape,
            data_len,
            rows,
            last,
            packed_file,
            packed_src,
            src_row,
            src,
        })
    }

    /// Write the file's data to `w`, packing or unpacking on the way through
    /// a buffer of bounded size.
    fn stream(&self, w: &mut impl Write) -> std::io::Result<()> {
        let vpb = values_per_byte(self.dtype);
        let item = self.dtype.info().item_bytes.max(1);
        let mut buf: Vec<u8> = Vec::with_capacity(2 * STREAM_CHUNK + 8);
        let flush = |buf: &mut Vec<u8>, w: &mut dyn Write, force: bool| {
            if buf.len() >= STREAM_CHUNK || (force && !buf.is_empty()) {
                w.write_all(buf)?;
                buf.clear();
            }
            std::io::Result::Ok(())
        };
        for r in 0..self.rows {
            let row = &self.src[r * self.src_row..(r + 1) * self.src_row];
            match (self.packed_src, self.packed_file) {
                // The bytes as they are (elements, codes, or packed bytes):
                // short rows gathered in the buffer, long ones written whole.
                (false, false) | (true, true) => {
                    let bytes = if self.packed_src {
                        &row[..self.last / vpb]
                    } else {
                        &row[..self.last * item]
                    };
                    if bytes.len() < STREAM_CHUNK {
                        buf.extend_from_slice(bytes);
                        flush(&mut buf, w, false)?;
                    } else {
                        flush(&mut buf, w, true)?;
                        w.write_all(bytes)?;
                    }
                }
                // Codes packed on the way.
                (false, true) => {
                    for group in row[..self.last].chunks(vpb) {
                        buf.push(codes::pack_byte(self.dtype, group));
                        flush(&mut buf, w, false)?;
                    }
                }
                // Packed bytes unpacked on the way, the row's padding left.
                (true, false) => {
                    let mut left = self.last;
                    for &b in row {
                        if left == 0 {
                            break;
                        }
                        let start = buf.len();
                        codes::unpack_byte(self.dtype, b, &mut buf);
                        let got = buf.len() - start;
                        if got > left {
                            buf.truncate(start + left);
                        }
                        left -= got.min(left);
                        flush(&mut buf, w, false)?;
                    }
                }
            }
        }
        flush(&mut buf, w, true)
    }
}

/// The bytes a result is packed or unpacked through on its way to its file.
const STREAM_CHUNK: usize = 1 << 16;

impl Dest {
    /// Resolve result `name` of the call file at `call_path`.
    fn resolve(call_path: &Path, name: &str, spec: &Output) -> Outcome<Dest> {
        let path = resolve(call_path, &spec.npy);
        if spec.npy.is_empty() {
            return Err(Failure::usage(format!(
                "result {name}: its path (npy) is empty"
            )));
        }
        let cannot = |msg: String| refuse(name, &path, format!("cannot write: {msg}"));
        // The file the result replaces: symbolic links followed.
        let followed = match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Some(fs::canonicalize(&path).map_err(|e| {
                cannot(format!(
                    "a symbolic link whose target cannot be resolved ({e})"
                ))
            })?),
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(cannot(e.to_string())),
        };
        let meta = match fs::metadata(followed.as_deref().unwrap_or(&path)) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(cannot(e.to_string())),
        };
        if let Some(m) = &meta {
            if !m.is_file() {
                return Err(cannot(format!(
                    "it is {}; a result replaces a regular file or is a new one",
                    kind_of(m)
                )));
            }
            // A file this user may not write is not replaced either (the
            // rename would need only the directory's permission). Opening
            // it for writing, without truncating, changes nothing.
            if let Err(e) = OpenOptions::new()
                .write(true)
                .open(followed.as_deref().unwrap_or(&path))
            {
                return Err(cannot(e.to_string()));
            }
        }
        let target = match followed {
            Some(t) => t,
            None => {
                let Some(file_name) = path.file_name() else {
                    return Err(cannot("the path does not end in a file name".to_string()));
                };
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                let canonical = fs::canonicalize(dir).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        cannot(format!("its directory {} does not exist", shown(dir)))
                    } else {
                        cannot(format!("its directory {}: {e}", shown(dir)))
                    }
                })?;
                if !canonical.is_dir() {
                    return Err(cannot(format!("{} is not a directory", shown(dir))));
                }
                canonical.join(file_name)
            }
        };
        Ok(Dest {
            name: name.to_string(),
            spec: spec.clone(),
            shown: path,
            target,
            existing: meta.as_ref().map(|m| (m.dev(), m.ino())),
            permissions: meta.map(|m| m.permissions()),
            temp: None,
        })
    }

    fn same_file(&self, other: &Dest) -> bool {
        self.target == other.target || (self.existing.is_some() && self.existing == other.existing)
    }
}

impl Results {
    /// Resolve every result of a call file (at `call_path`) before anything
    /// is computed: each must be writable as a new or replaced regular file,
    /// and no two may name one file.
    pub fn plan(call_path: &Path, results: &UniqueMap<Output>) -> Outcome<Results> {
        let mut dests: Vec<Dest> = Vec::with_capacity(results.0.len());
        for (name, spec) in &results.0 {
            let d = Dest::resolve(call_path, name, spec)?;
            if let Some(first) = dests.iter().find(|o| o.same_file(&d)) {
                return Err(Failure::usage(format!(
                    "results {} and {} name one file ({} and {}); each result needs a file of its own",
                    truncate(&first.name, 40),
                    truncate(&d.name, 40),
                    shown(&first.shown),
                    shown(&d.shown)
                )));
            }
            dests.push(d);
        }
        Ok(Results {
            dests,
            litter: Vec::new(),
        })
    }

    /// Write result `name`: `codes_or_bytes` holds it in C order, one code
    /// per byte for sub-byte dtypes (as operands are loaded), of `dtype` and
    /// `shape` (in values). See [`Results::add_held`].
    pub fn add(
        &mut self,
        name: &str,
        dtype: DType,
        shape: &[usize],
        codes_or_bytes: &[u8],
    ) -> Outcome<PathBuf> {
        self.add_held(name, dtype, shape, Held::Codes(codes_or_bytes))
    }

    /// Write result `name` as the library wrote it: packed along the last
    /// axis for sub-byte dtypes, in rows of `row` values of which the first
    /// (the shape's last extent, 1 for a 0-d result) are the result's. See
    /// [`Results::add_held`].
    pub fn add_library(
        &mut self,
        name: &str,
        dtype: DType,
        shape: &[usize],
        data: &[u8],
        row: usize,
    ) -> Outcome<PathBuf> {
        self.add_held(name, dtype, shape, Held::Library { data, row })
    }

    /// Write result `name` of `dtype` and `shape` (in values), held as
    /// `held` says. The call file's `dtype` and `shape` for it, where given,
    /// must be these; `packed` applies to sub-byte dtypes only. The result
    /// is streamed to a temporary file (packed or unpacked on the way, no
    /// copy held); returns the path the call file names, for the report.
    pub fn add_held(
        &mut self,
        name: &str,
        dtype: DType,
        shape: &[usize],
        held: Held<'_>,
    ) -> Outcome<PathBuf> {
        let Some(i) = self.dests.iter().position(|d| d.name == name) else {
            return Err(Failure::run(format!(
                "result {name}: the call file does not name it"
            )));
        };
        let d = &self.dests[i];
        if d.temp.is_some() {
            return Err(Failure::run(format!("result {name} is written twice")));
        }
        let spec = &d.spec;
        let vpb = values_per_byte(dtype);
        if spec.packed && vpb == 1 {
            return Err(Failure::usage(format!(
                "result {name}: \"packed\" applies only to sub-byte dtypes (i4, u4, u1, e2m1fn); the result is {dtype}"
            )));
        }
        if let Some(named) = spec.dtype.as_deref() {
            let named = codes::parse_dtype(named)
                .map_err(|e| Failure::usage(format!("result {name}: {}", truncate(&e, 200))))?;
            if named != dtype {
                return Err(Failure::run(format!(
                    "result {name}: dtype {named} given, but the call writes {dtype}"
                )));
            }
        }
        if let Some(s) = &spec.shape {
            if s.as_slice() != shape {
                return Err(Failure::run(format!(
                    "result {name}: shape {} given, but the call writes {}",
                    truncate(&format!("{s:?}"), 80),
                    truncate(&format!("{shape:?}"), 80)
                )));
            }
        }
        let layout = FileLayout::of(name, dtype, shape, spec.packed, held)?;
        let header = npy::header_bytes(npy_type(dtype), &layout.file_shape, layout.data_len)
            .map_err(|e| refuse(name, &d.shown, e))?;
        let temp = sibling(&d.target, "tmp");
        // Registered before it exists, so that a signal arriving from here on
        // removes it (crate::signals).
        let registration = crate::signals::register(&temp);
        let written = (|| -> std::io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)?;
            self.litter.push((temp.clone(), registration));
            if let Some(p) = &d.permissions {
                f.set_permissions(p.clone())?;
            }
            f.write_all(&header)?;
            layout.stream(&mut f)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            return Err(refuse(name, &d.shown, format!("cannot write: {e}")));
        }
        let path = d.shown.clone();
        self.dests[i].temp = Some(temp);
        Ok(path)
    }

    /// Move every result into place: called once the kernel has returned and
    /// every result is written. Either every destination now holds its
    /// result, or (on a refusal) every one is as it was.
    pub fn commit(mut self) -> Outcome<()> {
        let mut temps = Vec::with_capacity(self.dests.len());
        for d in &self.dests {
            let Some(t) = d.temp.clone() else {
                return Err(Failure::run(format!(
                    "result {} was not computed (nothing was written)",
                    d.name
                )));
            };
            temps.push(t);
        }
        // Keep every existing destination under a second name, so that a
        // failed rename can put back the ones before it.
        let mut kept: Vec<Option<PathBuf>> = Vec::with_capacity(self.dests.len());
        for d in &self.dests {
            let keep = if self.dests.len() > 1 && d.existing.is_some() {
                let k = sibling(&d.target, "old");
                let registration = crate::signals::register(&k);
                match fs::hard_link(&d.target, &k) {
                    Ok(()) => {
                        self.litter.push((k.clone(), registration));
                        Some(k)
                    }
                    // A file system without hard links: the rename below
                    // is still atomic for this file, only not undone.
                    Err(_) => None,
                }
            } else {
                None
            };
            kept.push(keep);
        }
        for (i, (d, temp)) in self.dests.iter().zip(&temps).enumerate() {
            if let Err(e) = fs::rename(temp, &d.target) {
                let mut undone = true;
                for (earlier, keep) in self.dests[..i].iter().zip(&kept) {
                    let back = match keep {
                        Some(k) => fs::rename(k, &earlier.target),
                        None if earlier.existing.is_none() => fs::remove_file(&earlier.target),
                        None => Err(std::io::Error::other("not kept")),
                    };
                    undone &= back.is_ok();
                }
                let state = if undone {
                    "no result was changed"
                } else {
                    "the results before it could not all be put back"
                };
                return Err(refuse(
                    &d.name,
                    &d.shown,
                    format!("cannot move the result into place: {e}; {state}"),
                ));
            }
        }
        // Every result is in place: the kept names go, and the renames are
        // made durable where the directory can be synced.
        for k in kept.into_iter().flatten() {
            let _ = fs::remove_file(k);
        }
        self.litter.clear();
        let mut dirs: Vec<&Path> = self
            .dests
            .iter()
            .filter_map(|d| d.target.parent())
            .collect();
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            if let Ok(f) = File::open(dir) {
                let _ = f.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for Results {
    /// Without a commit, nothing the call wrote stays.
    fn drop(&mut self) {
        for (p, registration) in self.litter.drain(..) {
            let _ = fs::remove_file(p);
            drop(registration);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::Call;

    fn listing(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
        let mut v: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, fs::read(&p).ok())
            })
            .collect();
        v.sort();
        v
    }

    /// A rename that fails after another succeeded (here: the second
    /// destination became a directory after the plan) puts the first back.
    #[test]
    fn a_failed_rename_puts_back_the_ones_before_it() {
        let dir = std::env::temp_dir().join(format!("tessera-cli-commit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.npy"), b"a before").unwrap();
        let call = Call::parse(
            r#"{"kernel": "map", "operands": {},
                "results": {"y0": {"npy": "a.npy"}, "y1": {"npy": "b.npy"}, "y2": {"npy": "c.npy"}}}"#,
        )
        .unwrap();
        let call_path = dir.join("call.json");
        let mut results = Results::plan(&call_path, &call.results).unwrap();
        for name in ["y0", "y1", "y2"] {
            results.add(name, DType::U8, &[2], &[1, 2]).unwrap();
        }
        fs::create_dir(dir.join("c.npy")).unwrap();
        fs::write(dir.join("c.npy").join("inside"), b"x").unwrap();
        let before: Vec<_> = listing(&dir)
            .into_iter()
            .filter(|(n, _)| !n.contains(".tessera-"))
            .collect();
        let e = results.commit().unwrap_err();
        assert!(e.to_string().contains("no result was changed"), "{e}");
        assert_eq!(listing(&dir), before);
        fs::remove_dir_all(&dir).unwrap();
    }
}
