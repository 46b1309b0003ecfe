//! The `.npy` file format (numpy's `NEP 1`), versions 1.0, 2.0 and 3.0.
//!
//! A file is the magic `\x93NUMPY`, a version, a header length (two bytes in
//! version 1.0, four in 2.0 and 3.0), a header that is a Python dict literal with
//! the keys `descr`, `fortran_order` and `shape`, and then the data.
//!
//! Only numpy's own plain types are read: `b1`, `i1`…`i8`, `u1`…`u8`, `f2`, `f4`,
//! `f8`, `c8` and `c16`. Big-endian files (`>`) are byte-swapped into native
//! order on reading; files are always written little-endian, version 1.0 (2.0
//! when the header needs it), C order. Structured and object dtypes are refused.
//!
//! Every malformed input is refused with an [`NpyError`]; no input panics, and no
//! buffer is sized from the header before the size is checked against the bytes
//! actually present and against [`MAX_BYTES`].

use std::fmt;
use std::path::Path;

/// The largest array, in bytes, this module reads or allocates (2^40).
pub const MAX_BYTES: u64 = 1 << 40;

/// The largest header accepted, in bytes.
pub const MAX_HEADER: usize = 1 << 20;

/// The magic string every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Why a `.npy` file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyError(pub String);

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NpyError {}

fn err<T>(msg: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError(msg.into()))
}

/// A numpy element type this module reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NpyType {
    /// `b1`: one byte, 0 or 1.
    Bool,
    /// `i1`.
    I8,
    /// `i2`.
    I16,
    /// `i4`.
    I32,
    /// `i8`.
    I64,
    /// `u1`.
    U8,
    /// `u2`.
    U16,
    /// `u4`.
    U32,
    /// `u8`.
    U64,
    /// `f2`.
    F16,
    /// `f4`.
    F32,
    /// `f8`.
    F64,
    /// `c8`: two f4.
    C64,
    /// `c16`: two f8.
    C128,
}

impl NpyType {
    /// Every type.
    pub const ALL: [NpyType; 14] = [
        NpyType::Bool,
        NpyType::I8,
        NpyType::I16,
        NpyType::I32,
        NpyType::I64,
        NpyType::U8,
        NpyType::U16,
        NpyType::U32,
        NpyType::U64,
        NpyType::F16,
        NpyType::F32,
        NpyType::F64,
        NpyType::C64,
        NpyType::C128,
    ];

    /// The type code and size, as in a descriptor without its byte order (`f4`).
    pub fn code(self) -> &'static str {
        match self {
            NpyType::Bool => "b1",
            NpyType::I8 => "i1",
            NpyType::I16 => "i2",
            NpyType::I32 => "i4",
            NpyType::I64 => "i8",
            NpyType::U8 => "u1",
            NpyType::U16 => "u2",
            NpyType::U32 => "u4",
            NpyType::U64 => "u8",
            NpyType::F16 => "f2",
            NpyType::F32 => "f4",
            NpyType::F64 => "f8",
            NpyType::C64 => "c8",
            NpyType::C128 => "c16",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            NpyType::Bool | NpyType::I8 | NpyType::U8 => 1,
            NpyType::I16 | NpyType::U16 | NpyType::F16 => 2,
            NpyType::I32 | NpyType::U32 | NpyType::F32 => 4,
            NpyType::I64 | NpyType::U64 | NpyType::F64 | NpyType::C64 => 8,
            NpyType::C128 => 16,
        }
    }

    /// Bytes per byte-swapped unit (a complex number swaps each component).
    fn swap_unit(self) -> usize {
        match self {
            NpyType::C64 => 4,
            NpyType::C128 => 8,
            t => t.size(),
        }
    }

    /// The little-endian descriptor numpy writes for this type (`<f4`, `|u1`).
    pub fn descr(self) -> String {
        let order = if self.size() == 1 { '|' } else { '<' };
        format!("{order}{}", self.code())
    }

    /// Parse a descriptor (`<f4`, `|b1`, `>i8`, `=u2`). Returns the type and
    /// whether its data is in the opposite byte order from this machine's.
    pub fn from_descr(descr: &str) -> Result<(NpyType, bool), NpyError> {
        let mut chars = descr.chars();
        let order = chars.next();
        let code = chars.as_str();
        let Some(t) = NpyType::ALL.into_iter().find(|t| t.code() == code) else {
            return err(format!(
                "unsupported descr '{descr}': expected one of numpy's plain types \
                 (|b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, <f4, <f8, <c8, <c16)"
            ));
        };
        let little = cfg!(target_endian = "little");
        let swap = match order {
            Some('<') => !little && t.size() > 1,
            Some('>') => little && t.size() > 1,
            Some('=') => false,
            Some('|') if t.size() == 1 => false,
            Some('|') => {
                return err(format!(
                    "descr '{descr}': a {}-byte type needs a byte order (< or >), not |",
                    t.size()
                ))
            }
            _ => {
                return err(format!(
                    "descr '{descr}' does not start with a byte order (<, >, = or |)"
                ))
            }
        };
        Ok((t, swap))
    }
}

impl fmt::Display for NpyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.descr())
    }
}

/// A parsed `.npy` file: its element type, order, shape and data (in this
/// machine's byte order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Npy {
    /// The element type.
    pub dtype: NpyType,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<usize>,
    /// The data: exactly `shape.product() * dtype.size()` bytes.
    pub data: Vec<u8>,
}

impl Npy {
    /// Number of elements.
    pub fn len(&self) -> usize {
        element_count(&self.shape)
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element strides of the layout the data holds: C order, or the
    /// reversed (transposed) strides of Fortran order.
    pub fn strides(&self) -> Vec<isize> {
        if self.fortran_order {
            fortran_strides(&self.shape)
        } else {
            c_strides(&self.shape)
        }
    }
}

/// The number of elements of a shape: 0 when an extent is 0 (whatever the
/// others are), else their product, saturating instead of overflowing.
pub fn element_count(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().fold(1usize, |n, &d| n.saturating_mul(d))
}

/// C-order (row-major) element strides of a shape (the library's rule).
pub use tessera::array::c_strides;

/// Fortran-order (column-major) element strides of a shape.
pub fn fortran_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for i in 0..shape.len() {
        strides[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1) as isize);
    }
    strides
}

/// The byte size of an array of `shape` with `item` bytes per element, refused
/// when the arithmetic overflows or the size exceeds [`MAX_BYTES`].
pub fn byte_size(shape: &[usize], item: usize) -> Result<usize, NpyError> {
    let mut n: u128 = item as u128;
    for &d in shape {
        n = n.saturating_mul(d as u128);
    }
    // A zero extent makes the array empty whatever the other extents are; still
    // refuse extents that could not be addressed at all.
    for &d in shape {
        if d as u128 > MAX_BYTES as u128 {
            return err(format!(
                "shape {shape:?} has an extent over 2^40, larger than this tool handles"
            ));
        }
    }
    if n > MAX_BYTES as u128 {
        return err(format!(
            "shape {shape:?} of {item}-byte elements needs {n} bytes, over the 2^40-byte limit"
        ));
    }
    Ok(n as usize)
}

/// What a `.npy` file's magic string, version and header say: where its data
/// starts and how much of it there is.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Prelude {
    dtype: NpyType,
    swap: bool,
    fortran_order: bool,
    shape: Vec<usize>,
    /// The offset of the data.
    data_start: usize,
    /// The data's size in bytes, as the header implies it.
    size: usize,
}

/// The bytes of a file's beginning that [`prelude`] looks at: the magic
/// string, the version and the header length, then the header itself.
/// Returns how many bytes of the file's start it needs, knowing `head`
/// (`None` while fewer than the fixed fields are known, or when they are
/// malformed and [`prelude`] will refuse them anyway).
fn prelude_len(head: &[u8]) -> Option<usize> {
    if head.len() < 8 || &head[..6] != MAGIC {
        return None;
    }
    let (start, header_len) = match (head[6], head[7]) {
        (1, 0) if head.len() >= 10 => (10, u16::from_le_bytes([head[8], head[9]]) as usize),
        (2, 0) | (3, 0) if head.len() >= 12 => (
            12,
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize,
        ),
        _ => return None,
    };
    (header_len <= MAX_HEADER).then_some(start + header_len)
}

/// Check a file's magic string, version and header, given the file's first
/// bytes `head` (at least as many as [`prelude_len`] asks for, where the file
/// has them) and the file's length `file_len`.
fn prelude(head: &[u8], file_len: u64) -> Result<Prelude, NpyError> {
    if head.len() < 8 || &head[..6] != MAGIC {
        if head.len() >= 6 || !MAGIC.starts_with(head) {
            return err("not a .npy file (wrong magic string)");
        }
        return err("truncated .npy file: shorter than its magic string and version");
    }
    let (major, minor) = (head[6], head[7]);
    let (len_bytes, utf8) = match (major, minor) {
        (1, 0) => (2, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        _ => return err(format!("unsupported .npy format version {major}.{minor}")),
    };
    let start = 8 + len_bytes;
    if head.len() < start {
        return err("truncated .npy file: the header length is cut off");
    }
    let header_len = if len_bytes == 2 {
        u16::from_le_bytes([head[8], head[9]]) as usize
    } else {
        u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize
    };
    if header_len > MAX_HEADER {
        return err(format!(
            "header of {header_len} bytes is larger than the {MAX_HEADER}-byte limit"
        ));
    }
    let data_start = start + header_len;
    let Some(header_bytes) = head.get(start..data_start) else {
        return err(format!(
            "truncated .npy file: the header says {header_len} bytes but {} follow",
            file_len.saturating_sub(start as u64).min(header_len as u64)
        ));
    };
    let header = if utf8 {
        match std::str::from_utf8(header_bytes) {
            Ok(s) => s.to_string(),
            Err(_) => return err("the version 3.0 header is not valid UTF-8"),
        }
    } else {
        // Latin-1: every byte is one character.
        header_bytes.iter().map(|&b| b as char).collect()
    };
    let header = parse_header(&header)?;
    let (dtype, swap) = NpyType::from_descr(&header.descr)?;
    let size = byte_size(&header.shape, dtype.size())?;
    let have = file_len.saturating_sub(data_start as u64);
    if have < size as u64 {
        return err(format!(
            "truncated data: shape {:?} of {} needs {size} bytes but the file holds {have}",
            header.shape, header.descr
        ));
    }
    if have > size as u64 {
        return err(format!(
            "size mismatch: shape {:?} of {} needs {size} bytes but the file holds {have}",
            header.shape, header.descr
        ));
    }
    Ok(Prelude {
        dtype,
        swap,
        fortran_order: header.fortran_order,
        shape: header.shape,
        data_start,
        size,
    })
}

impl Prelude {
    /// The array of this prelude over its `data` (exactly `size` bytes, in the
    /// file's byte order).
    fn into_npy(self, mut data: Vec<u8>) -> Npy {
        if self.swap {
            for unit in data.chunks_exact_mut(self.dtype.swap_unit()) {
                unit.reverse();
            }
        }
        Npy {
            dtype: self.dtype,
            fortran_order: self.fortran_order,
            shape: self.shape,
            data,
        }
    }
}

/// Parse the bytes of a `.npy` file.
pub fn parse(mut bytes: Vec<u8>) -> Result<Npy, NpyError> {
    let p = prelude(&bytes, bytes.len() as u64)?;
    bytes.drain(..p.data_start);
    Ok(p.into_npy(bytes))
}

/// Read and parse a `.npy` file through a bounded reader: only a regular file
/// is opened (a FIFO, a device such as `/dev/zero` or a directory is refused
/// by its metadata); its fixed fields and header are read and checked first
/// (at most [`MAX_HEADER`] bytes of header); a file whose size is not the
/// header's plus the data size the header implies is refused before any data
/// is read; then exactly that data is read, and a file that shrank or grew
/// meanwhile is refused.
pub fn read(path: &Path) -> Result<Npy, NpyError> {
    let (mut file, len) = crate::files::open_regular(path).map_err(NpyError)?;
    let mut head = crate::files::read_at_most(&mut file, 12, 12).map_err(NpyError)?;
    if let Some(need) = prelude_len(&head) {
        let more = (need.saturating_sub(head.len())) as u64;
        let rest = crate::files::read_at_most(&mut file, more, more).map_err(NpyError)?;
        head.extend_from_slice(&rest);
    }
    // Fewer than 12 bytes: the whole file (it ended there).
    let file_len = if head.len() < 12 {
        head.len() as u64
    } else {
        len
    };
    let p = prelude(&head, file_len)?;
    // The head may hold the first bytes of the data (a header shorter than
    // the 12 bytes read first is malformed, but the arithmetic stays right).
    let mut data = head.split_off(p.data_start.min(head.len()));
    let want = p.size as u64;
    let more = want.saturating_sub(data.len() as u64);
    let rest = crate::files::read_at_most(&mut file, more, more).map_err(NpyError)?;
    data.extend_from_slice(&rest);
    if (data.len() as u64) < want {
        return err(format!(
            "truncated data: the file shrank while it was read ({} of {want} bytes)",
            data.len()
        ));
    }
    if (data.len() as u64) > want || !crate::files::at_end(&mut file).map_err(NpyError)? {
        return err("size mismatch: the file grew while it was read");
    }
    Ok(p.into_npy(data))
}

/// The bytes of a `.npy` file that come before `data_len` bytes of data of
/// `dtype` and `shape` (C order, little-endian): the magic string, the
/// version, the header length and the header, padded so that the data starts
/// on a 64-byte boundary, as numpy writes it.
pub fn header_bytes(dtype: NpyType, shape: &[usize], data_len: usize) -> Result<Vec<u8>, NpyError> {
    let size = byte_size(shape, dtype.size())?;
    if size != data_len {
        return err(format!(
            "{data_len} bytes of data for shape {shape:?} of {}, which needs {size}",
            dtype.descr()
        ));
    }
    if cfg!(target_endian = "big") && dtype.size() > 1 {
        return err("writing .npy files on a big-endian machine is not supported");
    }
    let shape_text = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        dtype.descr()
    );
    // Pad with spaces and end with a newline so the data starts on a 64-byte
    // boundary, as numpy does.
    let (version, len_bytes) = if 10 + header.len() < 65536 {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let unpadded = 6 + 2 + len_bytes + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(6 + 2 + len_bytes + header.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if len_bytes == 2 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    Ok(out)
}

/// The bytes of a `.npy` file holding `data` (C order, this machine's byte
/// order, which must be little-endian to match the descriptor written).
pub fn encode(dtype: NpyType, shape: &[usize], data: &[u8]) -> Result<Vec<u8>, NpyError> {
    let header = header_bytes(dtype, shape, data.len())?;
    let mut out = Vec::new();
    out.try_reserve_exact(header.len() + data.len())
        .map_err(|_| NpyError(format!("cannot allocate {} bytes", data.len())))?;
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    Ok(out)
}

/// The three entries of a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The `descr` string.
    pub descr: String,
    /// The `fortran_order` flag.
    pub fortran_order: bool,
    /// The `shape` tuple.
    pub shape: Vec<usize>,
}

/// A value of the header dict.
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
    Other(&'static str),
}

/// A cursor over the header text.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<(), NpyError> {
        match self.peek() {
            Some(x) if x == c => {
                self.i += 1;
                Ok(())
            }
            Some(x) => err(format!(
                "bad header: expected {what} at byte {}, found '{}'",
                self.i,
                x.escape_ascii()
            )),
            None => err(format!("bad header: expected {what}, found the end")),
        }
    }

    fn string(&mut self) -> Result<String, NpyError> {
        let Some(q) = self.peek() else {
            return err("bad header: expected a string, found the end");
        };
        if q != b'\'' && q != b'"' {
            return err(format!(
                "bad header: expected a quoted string at byte {}",
                self.i
            ));
        }
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != q {
            if self.s[self.i] == b'\\' {
                return err("bad header: escapes in strings are not supported");
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return err("bad header: unterminated string");
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(text)
    }

    fn word(&mut self) -> &[u8] {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    fn integer(&mut self) -> Result<usize, NpyError> {
        let at = self.i;
        let word = self.word().to_vec();
        // Python 2 wrote longs with an `L` suffix.
        let digits = word.strip_suffix(b"L").unwrap_or(&word);
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return err(format!(
                "bad header: shape entries must be non-negative integers (at byte {at})"
            ));
        }
        let mut n: usize = 0;
        for &d in digits {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add((d - b'0') as usize))
                .ok_or_else(|| NpyError("bad header: a shape entry overflows".into()))?;
        }
        Ok(n)
    }

    fn tuple(&mut self) -> Result<Vec<usize>, NpyError> {
        self.expect(b'(', "'('")?;
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Some(b')') => {
                    self.i += 1;
                    break;
                }
                None => return err("bad header: unterminated shape tuple"),
                _ => {}
            }
            if items.len() >= 64 {
                return err("bad header: a shape of more than 64 axes");
            }
            items.push(self.integer()?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b')') => {
                    // `(3)` is the integer 3, not a tuple: numpy never writes it.
                    if items.len() == 1 {
                        return err("bad header: the shape must be a tuple, e.g. (3,)");
                    }
                }
                _ => {
                    return err(format!(
                        "bad header: expected ',' or ')' in the shape at byte {}",
                        self.i
                    ))
                }
            }
        }
        Ok(items)
    }

    fn value(&mut self) -> Result<Value, NpyError> {
        match self.peek() {
            Some(b'\'') | Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'(') => Ok(Value::Tuple(self.tuple()?)),
            Some(b'[') => Ok(Value::Other("a list")),
            Some(b'{') => Ok(Value::Other("a dict")),
            Some(_) => match self.word() {
                b"True" => Ok(Value::Bool(true)),
                b"False" => Ok(Value::Bool(false)),
                _ => err(format!("bad header: unexpected value at byte {}", self.i)),
            },
            None => err("bad header: expected a value, found the end"),
        }
    }
}

/// Parse a header dict: `{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }`.
pub fn parse_header(text: &str) -> Result<Header, NpyError> {
    let mut c = Cursor {
        s: text.as_bytes(),
        i: 0,
    };
    c.expect(b'{', "the header dict's '{'")?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    loop {
        if c.peek() == Some(b'}') {
            c.i += 1;
            break;
        }
        let key = c.string()?;
        if !matches!(key.as_str(), "descr" | "fortran_order" | "shape") {
            return err(format!("bad header: unexpected key '{key}'"));
        }
        c.expect(b':', "':'")?;
        let value = c.value()?;
        let (slot_taken, ok) = match key.as_str() {
            "descr" => match value {
                Value::Str(s) => (descr.replace(s).is_some(), true),
                Value::Other("a list") => {
                    return err("structured dtypes (a list descr) are not supported")
                }
                _ => (false, false),
            },
            "fortran_order" => match value {
                Value::Bool(b) => (fortran.replace(b).is_some(), true),
                _ => (false, false),
            },
            "shape" => match value {
                Value::Tuple(t) => (shape.replace(t).is_some(), true),
                _ => (false, false),
            },
            other => return err(format!("bad header: unexpected key '{other}'")),
        };
        if !ok {
            return err(format!(
                "bad header: the value of '{key}' has the wrong type"
            ));
        }
        if slot_taken {
            return err(format!("bad header: key '{key}' appears twice"));
        }
        match c.peek() {
            Some(b',') => c.i += 1,
            Some(b'}') => {}
            _ => return err(format!("bad header: expected ',' or '}}' at byte {}", c.i)),
        }
    }
    c.skip_ws();
    if c.i != c.s.len() {
        return err("bad header: text after the closing '}'");
    }
    match (descr, fortran, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(Header {
            descr,
            fortran_order,
            shape,
        }),
        _ => err("bad header: it must hold 'descr', 'fortran_order' and 'shape'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let bytes = encode(NpyType::F32, &[2, 3], &[0u8; 24]).unwrap();
        assert_eq!((bytes.len() - 24) % 64, 0);
        let npy = parse(bytes).unwrap();
        assert_eq!(npy.shape, vec![2, 3]);
        assert_eq!(npy.dtype, NpyType::F32);
        assert!(!npy.fortran_order);
    }

    #[test]
    fn headers() {
        let h = parse_header("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }").unwrap();
        assert_eq!(h.shape, vec![3]);
        assert!(h.fortran_order);
        let h = parse_header("{\"shape\": (), \"descr\": \"|b1\", \"fortran_order\": False}\n")
            .unwrap();
        assert!(h.shape.is_empty());
        let h = parse_header("{'descr':'<i8','fortran_order':False,'shape':(2L, 3L)}").unwrap();
        assert_eq!(h.shape, vec![2, 3]);
        for bad in [
            "",
            "{",
            "{'descr': '<f4'}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
            "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
        ] {
            assert!(parse_header(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn descrs() {
        assert_eq!(NpyType::from_descr("<f4").unwrap(), (NpyType::F32, false));
        assert_eq!(NpyType::from_descr(">f4").unwrap(), (NpyType::F32, true));
        assert_eq!(NpyType::from_descr("|u1").unwrap(), (NpyType::U8, false));
        assert_eq!(NpyType::from_descr(">u1").unwrap(), (NpyType::U8, false));
        assert!(NpyType::from_descr("|f4").is_err());
        assert!(NpyType::from_descr("<f16").is_err());
        assert!(NpyType::from_descr("f4").is_err());
        assert!(NpyType::from_descr("").is_err());
    }

    #[test]
    fn big_endian_is_swapped() {
        let mut bytes = encode(NpyType::U32, &[1], &[1, 2, 3, 4]).unwrap();
        let pos = bytes.windows(3).position(|w| w == b"<u4").unwrap();
        bytes[pos] = b'>';
        let npy = parse(bytes).unwrap();
        assert_eq!(npy.data, vec![4, 3, 2, 1]);
    }

    /// `read` (bounded, from a file) refuses what `parse` (from bytes)
    /// refuses, with the same words, and reads what it reads.
    #[test]
    fn read_agrees_with_parse() {
        let good = encode(NpyType::F32, &[2, 3], &[7u8; 24]).unwrap();
        let mut v3 = good.clone();
        v3[6] = 3;
        let mut cases: Vec<Vec<u8>> = vec![
            good.clone(),
            v3,
            Vec::new(),
            b"\x93NUM".to_vec(),
            b"\x93NUMPY\x01\x00\x10".to_vec(),
            b"\x93NUMPY\x02\x00\xff\xff\xff\x7f".to_vec(),
            good[..40].to_vec(),
            good[..good.len() - 1].to_vec(),
            [good.clone(), vec![0]].concat(),
            [good.clone(), vec![0; 100]].concat(),
        ];
        for cut in [8, 10, 11, 12, 13] {
            cases.push(good[..cut].to_vec());
        }
        let path =
            std::env::temp_dir().join(format!("tessera-cli-npy-read-{}.npy", std::process::id()));
        for bytes in cases {
            std::fs::write(&path, &bytes).unwrap();
            let from_file = read(&path);
            let from_bytes = parse(bytes.clone());
            assert_eq!(from_file, from_bytes, "{:?}", &bytes[..bytes.len().min(16)]);
        }
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn sizes() {
        assert!(byte_size(&[1 << 30, 1 << 30], 4).is_err());
        assert!(byte_size(&[usize::MAX, 0], 4).is_err());
        assert_eq!(byte_size(&[0, 5], 8).unwrap(), 0);
        assert_eq!(byte_size(&[], 8).unwrap(), 8);
    }
}
