//! The byte and text kernels (`tessera::bytes`) as `tessera run` kernels.
//!
//! Operands are one-dimensional arrays: bytes as `u8` (`x`; a second byte
//! string `y`, a needle `needle`), integers as their dtype. Results are `y`
//! (bytes or values, one-dimensional) or, for a search or a count, `r`: a
//! 0-d `i64` holding the position or count (−1 for "absent"), or a 0-d
//! `bool` for a test; the bitwise maps of two byte strings `x` and `y`
//! write `z`. Attributes: `byte` and `to` (integers 0–255), `set`
//! (a list of such), `alphabet` (`"standard"` or `"url"`), `pad` (bool,
//! default true), `sep` (the separator byte of integer fields, default
//! `,`), `bits` (bit packing), `count` (the values to unpack).
//!
//! ```json
//! {"kernel": "index_byte", "attrs": {"byte": 10},
//!  "operands": {"x": {"npy": "text.npy"}}, "results": {"r": {"npy": "at.npy"}}}
//! {"kernel": "base64_decode", "attrs": {"alphabet": "url", "pad": false},
//!  "operands": {"x": {"npy": "b64.npy"}}, "results": {"y": {"npy": "raw.npy"}}}
//! ```
//!
//! Each call's contract, refusals included, is the library's; a refused
//! call writes no file.

use super::{count_attr, expect_io, string_attr, truncate};
use crate::call::{Call, UniqueMap};
use crate::failure::{Failure, Outcome};
use crate::operand::{self, Loaded};
use crate::results::Results;
use std::path::Path;
use tessera::bytes::{self, Base64};
use tessera::{DType, Exec};

macro_rules! kernels {
    ($($v:ident => $name:literal, [$($o:literal),*], [$($r:literal),*], [$($a:literal),*], $doc:literal;)*) => {
        /// The kernels of this module.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum BytesKernel {
            $(
                #[doc = $doc]
                $v,
            )*
        }

        impl BytesKernel {
            /// Every kernel of this module.
            pub const ALL: &'static [BytesKernel] = &[$(BytesKernel::$v),*];
            /// Its name in call files.
            pub fn name(self) -> &'static str {
                match self { $(BytesKernel::$v => $name,)* }
            }
            /// Its operands, results and attributes.
            pub fn io(self) -> (&'static [&'static str], &'static [&'static str], &'static [&'static str]) {
                match self { $(BytesKernel::$v => (&[$($o),*], &[$($r),*], &[$($a),*]),)* }
            }
            /// What `tessera kernels` says of it.
            pub fn doc(self) -> &'static str {
                match self { $(BytesKernel::$v => $doc,)* }
            }
        }
    };
}

kernels! {
    IndexByte => "index_byte", ["x"], ["r"], ["byte"], "first position of byte in x (-1 absent)";
    LastIndexByte => "last_index_byte", ["x"], ["r"], ["byte"], "last position of byte in x (-1 absent)";
    CountByte => "count_byte", ["x"], ["r"], ["byte"], "how many bytes of x are byte";
    IndexAll => "index_all", ["x"], ["y"], ["byte"], "every position of byte in x, ascending (i64)";
    IndexAny => "index_any", ["x"], ["r"], ["set"], "first position of a byte of set (-1 absent)";
    LastIndexAny => "last_index_any", ["x"], ["r"], ["set"], "last position of a byte of set (-1 absent)";
    CountAny => "count_any", ["x"], ["r"], ["set"], "how many bytes of x are in set";
    IndexNotAny => "index_not_any", ["x"], ["r"], ["set"], "first position of a byte not in set (-1 absent)";
    LastIndexNotAny => "last_index_not_any", ["x"], ["r"], ["set"], "last position of a byte not in set (-1 absent)";
    Index => "index", ["x", "needle"], ["r"], [], "first occurrence of needle in x (-1 absent; linear time)";
    LastIndex => "last_index", ["x", "needle"], ["r"], [], "last occurrence of needle in x (-1 absent)";
    CountSeq => "count_seq", ["x", "needle"], ["r"], [], "non-overlapping occurrences of needle, from the front";
    Equal => "equal", ["x", "y"], ["r"], [], "whether x and y are the same bytes (bool)";
    Compare => "compare", ["x", "y"], ["r"], [], "-1, 0 or 1 as x sorts before, with or after y (bytewise)";
    CommonPrefix => "common_prefix", ["x", "y"], ["r"], [], "the length of the common prefix of x and y";
    Popcount => "popcount", ["x"], ["r"], [], "the set bits of x";
    Hamming => "hamming", ["x", "y"], ["r"], [], "the differing bits of x and y over the shorter";
    IsAscii => "is_ascii", ["x"], ["r"], [], "whether every byte is below 0x80 (bool)";
    IndexNonAscii => "index_non_ascii", ["x"], ["r"], [], "the first byte at or above 0x80 (x's length where none)";
    ToUpperAscii => "to_upper_ascii", ["x"], ["y"], [], "ASCII a-z to A-Z, other bytes unchanged";
    ToLowerAscii => "to_lower_ascii", ["x"], ["y"], [], "ASCII A-Z to a-z, other bytes unchanged";
    EqualFoldAscii => "equal_fold_ascii", ["x", "y"], ["r"], [], "equal up to ASCII case (bool)";
    ReplaceByte => "replace_byte", ["x"], ["y"], ["byte", "to"], "every byte replaced by to";
    Utf8ValidUpTo => "utf8_valid_up_to", ["x"], ["r"], [], "the length of x's longest valid UTF-8 prefix";
    HexEncode => "hex_encode", ["x"], ["y"], [], "lowercase hex digits of x";
    HexDecode => "hex_decode", ["x"], ["y"], [], "the bytes of hex digits (either case; refused with the offset of the first bad digit)";
    Base64Encode => "base64_encode", ["x"], ["y"], ["alphabet", "pad"], "RFC 4648 base64 of x (alphabet standard or url, pad default true)";
    Base64Decode => "base64_decode", ["x"], ["y"], ["alphabet", "pad"], "strict RFC 4648 decoding (refused with the offset of the first error)";
    ParseInts => "parse_ints", ["x"], ["y"], ["sep"], "decimal i64 fields between sep bytes (default ','), refused at the first bad byte";
    ParseUints => "parse_uints", ["x"], ["y"], ["sep"], "decimal u64 fields between sep bytes";
    FormatInts => "format_ints", ["x"], ["y"], ["sep"], "i64 values of x as decimal text joined by sep";
    RunStarts => "run_starts", ["x"], ["y"], [], "bool: whether each element of x starts a run of equal values (any integer dtype)";
    Grayscale => "grayscale", ["r", "g", "b"], ["y"], [], "BT.601 full-range luma of u8 planes (Q8 fixed point)";
    RgbToUv => "rgb_to_uv", ["r", "g", "b"], ["u", "v"], [], "BT.601 full-range chroma planes of u8 planes";
    BitPackU32 => "bit_pack_u32", ["x"], ["y"], ["bits"], "u32 values of bits bits each into a little-endian stream of u32 words";
    BitUnpackU32 => "bit_unpack_u32", ["x"], ["y"], ["bits", "count"], "count values of bits bits from u32 words";
    ZigzagEncode => "zigzag_encode", ["x"], ["y"], [], "signed integers (i8..i64) to their zigzag images (u8..u64)";
    ZigzagDecode => "zigzag_decode", ["x"], ["y"], [], "zigzag images (u8..u64) back to signed integers";
    VarintEncode => "varint_encode", ["x"], ["y"], [], "u32 or u64 values as LEB128 varints (u8)";
    VarintDecode => "varint_decode", ["x"], ["y"], [], "LEB128 varints (u8) into y's dtype, u64 unless it names u32";
    BytesAnd => "bytes_and", ["x", "y"], ["z"], [], "x & y byte by byte (equal lengths)";
    BytesOr => "bytes_or", ["x", "y"], ["z"], [], "x | y byte by byte (equal lengths)";
    BytesXor => "bytes_xor", ["x", "y"], ["z"], [], "x ^ y byte by byte (equal lengths)";
    BytesAndNot => "bytes_and_not", ["x", "y"], ["z"], [], "x & !y byte by byte (equal lengths)";
    BytesNot => "bytes_not", ["x"], ["y"], [], "!x byte by byte";
    BytesFill => "bytes_fill", [], ["y"], ["byte", "count"], "count bytes of value byte";
    WidenU8U16 => "widen_u8_u16", ["x"], ["y"], [], "each byte zero-extended to a u16 (ASCII to UTF-16)";
    WidenU8U32 => "widen_u8_u32", ["x"], ["y"], [], "each byte zero-extended to a u32 (ASCII to UTF-32)";
    NarrowU16U8 => "narrow_u16_u8", ["x"], ["y"], [], "each u16 truncated to its low byte (UTF-16 ASCII runs to bytes)";
    NarrowU32U8 => "narrow_u32_u8", ["x"], ["y"], [], "each u32 truncated to its low byte (UTF-32 ASCII runs to bytes)";
}

impl BytesKernel {
    /// The kernel named `name`.
    pub fn from_name(name: &str) -> Option<BytesKernel> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// Operand `name` as the values of a one-dimensional array of `T` (its
/// dtype must be `dtype`).
fn values<T: Copy>(k: &str, x: &Loaded, dtype: DType, from: fn(&[u8]) -> T) -> Outcome<Vec<T>> {
    if x.dtype != dtype {
        return Err(Failure::run(format!(
            "kernel `{k}`: operand {} must be {dtype}, not {}",
            x.name, x.dtype
        )));
    }
    one_dim(k, x)?;
    let w = dtype.info().item_bytes;
    let n = x.shape.first().copied().unwrap_or(0);
    let s = x.strides.first().copied().unwrap_or(1);
    // The loader's strides address the file's data (a reversed or
    // Fortran file keeps its layout).
    Ok((0..n)
        .map(|i| {
            let at = (i as isize * s) as usize * w;
            from(&x.data[at..at + w])
        })
        .collect())
}

fn one_dim(k: &str, x: &Loaded) -> Outcome<()> {
    if x.shape.len() != 1 {
        return Err(Failure::run(format!(
            "kernel `{k}`: operand {} must be one-dimensional, not of shape {:?}",
            x.name, x.shape
        )));
    }
    Ok(())
}

fn u8s(k: &str, x: &Loaded) -> Outcome<Vec<u8>> {
    values(k, x, DType::U8, |b| b[0])
}

fn byte_attr(k: &str, attrs: &UniqueMap<serde_json::Value>, key: &str) -> Outcome<u8> {
    let v = count_attr(k, attrs, key, "a byte value 0..255")?
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute {key}")))?;
    u8::try_from(v).map_err(|_| {
        Failure::usage(format!(
            "kernel `{k}`: attribute {key} must be a byte value 0..255, not {v}"
        ))
    })
}

fn set_attr(k: &str, attrs: &UniqueMap<serde_json::Value>) -> Outcome<Vec<u8>> {
    let bad = |v: &serde_json::Value| {
        Failure::usage(format!(
            "kernel `{k}`: attribute set must be a list of byte values 0..255, not {}",
            truncate(&v.to_string(), 40)
        ))
    };
    let v = attrs
        .0
        .get("set")
        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute set")))?;
    let a = v.as_array().ok_or_else(|| bad(v))?;
    if a.len() > 256 {
        return Err(bad(v));
    }
    a.iter()
        .map(|b| {
            b.as_u64()
                .and_then(|b| u8::try_from(b).ok())
                .ok_or_else(|| bad(v))
        })
        .collect()
}

fn base64_attrs(k: &str, attrs: &UniqueMap<serde_json::Value>) -> Outcome<Base64> {
    let url = match string_attr(k, attrs, "alphabet")? {
        None | Some("standard") => false,
        Some("url") => true,
        Some(s) => {
            return Err(Failure::usage(format!(
                "kernel `{k}`: attribute alphabet must be \"standard\" or \"url\", not {}",
                truncate(s, 40)
            )))
        }
    };
    let pad = match attrs.0.get("pad") {
        None => true,
        Some(v) => v.as_bool().ok_or_else(|| {
            Failure::usage(format!(
                "kernel `{k}`: attribute pad must be true or false, not {}",
                truncate(&v.to_string(), 40)
            ))
        })?,
    };
    Ok(Base64 { url, pad })
}

fn le_bytes<T: Copy>(v: &[T], to: fn(T) -> Vec<u8>) -> Vec<u8> {
    v.iter().flat_map(|&x| to(x)).collect()
}

/// Run one of this module's kernels as `call` describes; returns the lines
/// to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    kernel: BytesKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    use BytesKernel as K;
    let k = kernel.name();
    expect_io(k, call, kernel.io())?;
    let load = |name: &str| operand::load(call_path, name, &call.operands.0[name]);
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let a = &call.attrs;
    // A 0-d i64 result: a position (-1 absent) or a count.
    let scalar = |v: i64, results: &mut Results| -> Outcome<String> {
        let p = results.add("r", DType::I64, &[], &v.to_le_bytes())?;
        Ok(format!("{k}: r = {v} -> {}", p.display()))
    };
    let pos = |p: Option<usize>| p.map_or(-1, |p| p as i64);
    let flag = |b: bool, results: &mut Results| -> Outcome<String> {
        let p = results.add("r", DType::Bool, &[], &[b as u8])?;
        Ok(format!("{k}: r = {b} -> {}", p.display()))
    };
    let vector = |name: &str, dtype: DType, n: usize, data: &[u8], results: &mut Results| {
        let p = results.add(name, dtype, &[n], data)?;
        Ok::<String, Failure>(format!("{k}: {name} = {dtype} [{n}] -> {}", p.display()))
    };
    let line = match kernel {
        K::IndexByte | K::LastIndexByte | K::CountByte | K::IndexAll => {
            let x = u8s(k, &load("x")?)?;
            let c = byte_attr(k, a, "byte")?;
            match kernel {
                K::IndexByte => {
                    scalar(pos(bytes::index_byte(&x, c, exec).map_err(fail)?), results)?
                }
                K::LastIndexByte => scalar(
                    pos(bytes::last_index_byte(&x, c, exec).map_err(fail)?),
                    results,
                )?,
                K::CountByte => scalar(
                    bytes::count_byte(&x, c, exec).map_err(fail)? as i64,
                    results,
                )?,
                _ => {
                    let n = bytes::count_byte(&x, c, exec).map_err(fail)?;
                    let mut at = vec![0usize; n];
                    bytes::index_all(&x, c, &mut at, exec).map_err(fail)?;
                    let v = le_bytes(&at, |p| (p as i64).to_le_bytes().to_vec());
                    vector("y", DType::I64, n, &v, results)?
                }
            }
        }
        K::IndexAny | K::LastIndexAny | K::CountAny | K::IndexNotAny | K::LastIndexNotAny => {
            let x = u8s(k, &load("x")?)?;
            let s = set_attr(k, a)?;
            let v = match kernel {
                K::IndexAny => pos(bytes::index_any(&x, &s, exec).map_err(fail)?),
                K::LastIndexAny => pos(bytes::last_index_any(&x, &s, exec).map_err(fail)?),
                K::CountAny => bytes::count_any(&x, &s, exec).map_err(fail)? as i64,
                K::IndexNotAny => pos(bytes::index_not_any(&x, &s, exec).map_err(fail)?),
                _ => pos(bytes::last_index_not_any(&x, &s, exec).map_err(fail)?),
            };
            scalar(v, results)?
        }
        K::Index | K::LastIndex | K::CountSeq => {
            let x = u8s(k, &load("x")?)?;
            let n = u8s(k, &load("needle")?)?;
            let v = match kernel {
                K::Index => pos(bytes::index(&x, &n, exec).map_err(fail)?),
                K::LastIndex => pos(bytes::last_index(&x, &n, exec).map_err(fail)?),
                _ => bytes::count_seq(&x, &n, exec).map_err(fail)? as i64,
            };
            scalar(v, results)?
        }
        K::Equal | K::Compare | K::CommonPrefix | K::Hamming | K::EqualFoldAscii => {
            let x = u8s(k, &load("x")?)?;
            let y = u8s(k, &load("y")?)?;
            match kernel {
                K::Equal => flag(bytes::equal(&x, &y, exec).map_err(fail)?, results)?,
                K::EqualFoldAscii => flag(
                    bytes::equal_fold_ascii(&x, &y, exec).map_err(fail)?,
                    results,
                )?,
                K::Compare => scalar(bytes::compare(&x, &y, exec).map_err(fail)? as i64, results)?,
                K::CommonPrefix => scalar(
                    bytes::common_prefix(&x, &y, exec).map_err(fail)? as i64,
                    results,
                )?,
                _ => scalar(bytes::hamming(&x, &y, exec).map_err(fail)? as i64, results)?,
            }
        }
        K::Popcount | K::IsAscii | K::IndexNonAscii | K::Utf8ValidUpTo => {
            let x = u8s(k, &load("x")?)?;
            match kernel {
                K::Popcount => scalar(bytes::popcount(&x, exec).map_err(fail)? as i64, results)?,
                K::IsAscii => flag(bytes::is_ascii(&x, exec).map_err(fail)?, results)?,
                K::IndexNonAscii => scalar(
                    bytes::index_non_ascii(&x, exec).map_err(fail)? as i64,
                    results,
                )?,
                _ => scalar(
                    bytes::utf8_valid_up_to(&x, exec).map_err(fail)? as i64,
                    results,
                )?,
            }
        }
        K::ToUpperAscii | K::ToLowerAscii | K::ReplaceByte => {
            let x = u8s(k, &load("x")?)?;
            let mut y = vec![0u8; x.len()];
            match kernel {
                K::ToUpperAscii => bytes::to_upper_ascii(&x, &mut y, exec),
                K::ToLowerAscii => bytes::to_lower_ascii(&x, &mut y, exec),
                _ => {
                    let (from, to) = (byte_attr(k, a, "byte")?, byte_attr(k, a, "to")?);
                    bytes::replace_byte(&x, &mut y, from, to, exec)
                }
            }
            .map_err(fail)?;
            vector("y", DType::U8, y.len(), &y, results)?
        }
        K::HexEncode | K::HexDecode | K::Base64Encode | K::Base64Decode => {
            let x = u8s(k, &load("x")?)?;
            let y = match kernel {
                K::HexEncode => {
                    let mut y = vec![0u8; x.len() * 2];
                    bytes::hex_encode(&x, &mut y, exec).map_err(fail)?;
                    y
                }
                K::HexDecode => {
                    let mut y = vec![0u8; bytes::hex_decoded_len(x.len()).map_err(fail)?];
                    bytes::hex_decode(&x, &mut y, exec).map_err(fail)?;
                    y
                }
                K::Base64Encode => {
                    let c = base64_attrs(k, a)?;
                    let mut y = vec![0u8; bytes::base64_encoded_len(x.len(), c).map_err(fail)?];
                    bytes::base64_encode(&x, &mut y, c, exec).map_err(fail)?;
                    y
                }
                _ => {
                    let c = base64_attrs(k, a)?;
                    let mut y = vec![0u8; bytes::base64_decoded_len(&x, c).map_err(fail)?];
                    let n = bytes::base64_decode(&x, &mut y, c, exec).map_err(fail)?;
                    y.truncate(n);
                    y
                }
            };
            vector("y", DType::U8, y.len(), &y, results)?
        }
        K::ParseInts | K::ParseUints | K::FormatInts => {
            let sep = match a.0.get("sep") {
                None => b',',
                Some(_) => byte_attr(k, a, "sep")?,
            };
            let x = load("x")?;
            if kernel == K::FormatInts {
                let v = values(k, &x, DType::I64, |b| {
                    i64::from_le_bytes(b.try_into().unwrap())
                })?;
                let mut y = vec![0u8; bytes::format_ints_len(&v)];
                let n = bytes::format_ints(&v, sep, &mut y, exec).map_err(fail)?;
                y.truncate(n);
                vector("y", DType::U8, y.len(), &y, results)?
            } else {
                let x = u8s(k, &x)?;
                let mut seps = vec![0usize; bytes::count_byte(&x, sep, exec).map_err(fail)?];
                bytes::index_all(&x, sep, &mut seps, exec).map_err(fail)?;
                let fields = seps.len() + 1;
                if kernel == K::ParseInts {
                    let mut y = vec![0i64; fields];
                    bytes::parse_ints(&x, &seps, &mut y, exec).map_err(fail)?;
                    let d = le_bytes(&y, |v| v.to_le_bytes().to_vec());
                    vector("y", DType::I64, fields, &d, results)?
                } else {
                    let mut y = vec![0u64; fields];
                    bytes::parse_uints(&x, &seps, &mut y, exec).map_err(fail)?;
                    let d = le_bytes(&y, |v| v.to_le_bytes().to_vec());
                    vector("y", DType::U64, fields, &d, results)?
                }
            }
        }
        K::RunStarts => {
            let x = load("x")?;
            one_dim(k, &x)?;
            let n = x.shape[0];
            let mut y = vec![false; n];
            macro_rules! runs {
                ($t:ty, $d:expr) => {{
                    let v = values(k, &x, $d, |b| <$t>::from_le_bytes(b.try_into().unwrap()))?;
                    bytes::run_starts(&v, &mut y, exec).map_err(fail)?
                }};
            }
            match x.dtype {
                DType::U8 => runs!(u8, DType::U8),
                DType::I8 => runs!(i8, DType::I8),
                DType::U16 => runs!(u16, DType::U16),
                DType::I16 => runs!(i16, DType::I16),
                DType::U32 => runs!(u32, DType::U32),
                DType::I32 => runs!(i32, DType::I32),
                DType::U64 => runs!(u64, DType::U64),
                DType::I64 => runs!(i64, DType::I64),
                d => {
                    return Err(Failure::run(format!(
                        "kernel `{k}` takes integers of 8 to 64 bits, not {d}"
                    )))
                }
            }
            let d: Vec<u8> = y.iter().map(|&b| b as u8).collect();
            vector("y", DType::Bool, n, &d, results)?
        }
        K::Grayscale | K::RgbToUv => {
            let (r, g, b) = (
                u8s(k, &load("r")?)?,
                u8s(k, &load("g")?)?,
                u8s(k, &load("b")?)?,
            );
            let n = r.len();
            if kernel == K::Grayscale {
                let mut y = vec![0u8; n];
                bytes::grayscale(&r, &g, &b, &mut y, exec).map_err(fail)?;
                vector("y", DType::U8, n, &y, results)?
            } else {
                let (mut u, mut v) = (vec![0u8; n], vec![0u8; n]);
                bytes::rgb_to_uv(&r, &g, &b, &mut u, &mut v, exec).map_err(fail)?;
                let l1 = vector("u", DType::U8, n, &u, results)?;
                let l2 = vector("v", DType::U8, n, &v, results)?;
                format!("{l1}\n{l2}")
            }
        }
        K::BytesAnd | K::BytesOr | K::BytesXor | K::BytesAndNot => {
            let x = u8s(k, &load("x")?)?;
            let y = u8s(k, &load("y")?)?;
            let mut z = vec![0u8; x.len()];
            match kernel {
                K::BytesAnd => bytes::and(&x, &y, &mut z, exec),
                K::BytesOr => bytes::or(&x, &y, &mut z, exec),
                K::BytesXor => bytes::xor(&x, &y, &mut z, exec),
                _ => bytes::and_not(&x, &y, &mut z, exec),
            }
            .map_err(fail)?;
            vector("z", DType::U8, z.len(), &z, results)?
        }
        K::BytesNot => {
            let x = u8s(k, &load("x")?)?;
            let mut y = vec![0u8; x.len()];
            bytes::not(&x, &mut y, exec).map_err(fail)?;
            vector("y", DType::U8, y.len(), &y, results)?
        }
        K::BytesFill => {
            let v = byte_attr(k, a, "byte")?;
            let count = count_attr(k, a, "count", "a count of bytes")?
                .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute count")))?;
            let mut y = crate::budget::with_capacity(count, "filled bytes")?;
            y.resize(count, 0u8);
            bytes::fill(&mut y, v, exec).map_err(fail)?;
            vector("y", DType::U8, y.len(), &y, results)?
        }
        K::WidenU8U16 | K::WidenU8U32 => {
            let x = u8s(k, &load("x")?)?;
            if kernel == K::WidenU8U16 {
                let mut y = vec![0u16; x.len()];
                bytes::widen_u8_u16(&x, &mut y, exec).map_err(fail)?;
                let d = le_bytes(&y, |v| v.to_le_bytes().to_vec());
                vector("y", DType::U16, y.len(), &d, results)?
            } else {
                let mut y = vec![0u32; x.len()];
                bytes::widen_u8_u32(&x, &mut y, exec).map_err(fail)?;
                let d = le_bytes(&y, |v| v.to_le_bytes().to_vec());
                vector("y", DType::U32, y.len(), &d, results)?
            }
        }
        K::NarrowU16U8 | K::NarrowU32U8 => {
            let x = load("x")?;
            let mut y;
            if kernel == K::NarrowU16U8 {
                let v = values(k, &x, DType::U16, |b| {
                    u16::from_le_bytes(b.try_into().unwrap())
                })?;
                y = vec![0u8; v.len()];
                bytes::narrow_u16_u8(&v, &mut y, exec).map_err(fail)?;
            } else {
                let v = values(k, &x, DType::U32, |b| {
                    u32::from_le_bytes(b.try_into().unwrap())
                })?;
                y = vec![0u8; v.len()];
                bytes::narrow_u32_u8(&v, &mut y, exec).map_err(fail)?;
            }
            vector("y", DType::U8, y.len(), &y, results)?
        }
        K::BitPackU32 | K::BitUnpackU32 => {
            let bits = count_attr(k, a, "bits", "a bit width 0..32")?
                .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute bits")))?;
            let bits = u32::try_from(bits).unwrap_or(u32::MAX);
            let x = values(k, &load("x")?, DType::U32, |b| {
                u32::from_le_bytes(b.try_into().unwrap())
            })?;
            let y = if kernel == K::BitPackU32 {
                let mut y = vec![0u32; bytes::bit_packed_words(x.len(), bits).map_err(fail)?];
                bytes::bit_pack_u32(&x, bits, &mut y, exec).map_err(fail)?;
                y
            } else {
                let count = count_attr(k, a, "count", "a count of values")?
                    .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute count")))?;
                // The words the count needs are checked before the values'
                // buffer is made.
                let words = bytes::bit_packed_words(count, bits).map_err(fail)?;
                if x.len() < words {
                    return Err(Failure::run(format!(
                        "kernel `{k}`: {count} values of {bits} bits need {words} words, x has {}",
                        x.len()
                    )));
                }
                let mut y = crate::budget::with_capacity(count, "unpacked values")?;
                y.resize(count, 0u32);
                bytes::bit_unpack_u32(&x, bits, &mut y, exec).map_err(fail)?;
                y
            };
            let d = le_bytes(&y, |v| v.to_le_bytes().to_vec());
            vector("y", DType::U32, y.len(), &d, results)?
        }
        K::ZigzagEncode | K::ZigzagDecode => {
            let x = load("x")?;
            macro_rules! zz {
                ($s:ty, $u:ty, $sd:expr, $ud:expr) => {{
                    if kernel == K::ZigzagEncode {
                        let v = values(k, &x, $sd, |b| <$s>::from_le_bytes(b.try_into().unwrap()))?;
                        let mut y = vec![0 as $u; v.len()];
                        bytes::zigzag_encode(&v, &mut y, exec).map_err(fail)?;
                        vector(
                            "y",
                            $ud,
                            y.len(),
                            &le_bytes(&y, |v| v.to_le_bytes().to_vec()),
                            results,
                        )?
                    } else {
                        let v = values(k, &x, $ud, |b| <$u>::from_le_bytes(b.try_into().unwrap()))?;
                        let mut y = vec![0 as $s; v.len()];
                        bytes::zigzag_decode(&v, &mut y, exec).map_err(fail)?;
                        vector(
                            "y",
                            $sd,
                            y.len(),
                            &le_bytes(&y, |v| v.to_le_bytes().to_vec()),
                            results,
                        )?
                    }
                }};
            }
            match x.dtype {
                DType::I8 | DType::U8 => zz!(i8, u8, DType::I8, DType::U8),
                DType::I16 | DType::U16 => zz!(i16, u16, DType::I16, DType::U16),
                DType::I32 | DType::U32 => zz!(i32, u32, DType::I32, DType::U32),
                DType::I64 | DType::U64 => zz!(i64, u64, DType::I64, DType::U64),
                d => {
                    return Err(Failure::run(format!(
                        "kernel `{k}` takes integers of 8 to 64 bits, not {d}"
                    )))
                }
            }
        }
        K::VarintEncode => {
            let x = load("x")?;
            let y = match x.dtype {
                DType::U32 => {
                    let v = values(k, &x, DType::U32, |b| {
                        u32::from_le_bytes(b.try_into().unwrap())
                    })?;
                    let mut y = vec![0u8; bytes::varint_size(&v, exec).map_err(fail)?];
                    bytes::varint_encode(&v, &mut y, exec).map_err(fail)?;
                    y
                }
                _ => {
                    let v = values(k, &x, DType::U64, |b| {
                        u64::from_le_bytes(b.try_into().unwrap())
                    })?;
                    let mut y = vec![0u8; bytes::varint_size(&v, exec).map_err(fail)?];
                    bytes::varint_encode(&v, &mut y, exec).map_err(fail)?;
                    y
                }
            };
            vector("y", DType::U8, y.len(), &y, results)?
        }
        K::VarintDecode => {
            let x = u8s(k, &load("x")?)?;
            let named = operand::dtype_name("result y", call.results.0["y"].dtype.as_deref())?;
            let n = bytes::varint_count(&x, exec).map_err(fail)?;
            match named.unwrap_or(DType::U64) {
                DType::U32 => {
                    let mut y = vec![0u32; n];
                    bytes::varint_decode(&x, &mut y, exec).map_err(fail)?;
                    vector(
                        "y",
                        DType::U32,
                        n,
                        &le_bytes(&y, |v| v.to_le_bytes().to_vec()),
                        results,
                    )?
                }
                DType::U64 => {
                    let mut y = vec![0u64; n];
                    bytes::varint_decode(&x, &mut y, exec).map_err(fail)?;
                    vector(
                        "y",
                        DType::U64,
                        n,
                        &le_bytes(&y, |v| v.to_le_bytes().to_vec()),
                        results,
                    )?
                }
                d => {
                    return Err(Failure::run(format!(
                        "kernel `{k}` decodes into u32 or u64, not {d}"
                    )))
                }
            }
        }
    };
    Ok(line.lines().map(str::to_string).collect())
}
