//! Dtypes as the command line sees them: names, the `.npy` type each is stored
//! as, the width of a code, packing of sub-byte codes, and the value of a
//! float code (for display and for telling NaNs apart).

use crate::failure::Outcome;
use crate::npy::NpyType;
use tessera::{Class, DType, NanStyle};

/// Parse a dtype name or alias (`f32`, `bfloat16`, `float8_e4m3fn`, …).
pub fn parse_dtype(name: &str) -> Result<DType, String> {
    DType::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        format!(
            "unknown dtype `{}` (known: {})",
            crate::commands::truncate(name, 40),
            known.join(", ")
        )
    })
}

/// Values per byte of a dtype (1 unless it is a packed sub-byte dtype).
pub fn values_per_byte(dtype: DType) -> usize {
    dtype.info().values_per_byte.max(1) as usize
}

/// The `.npy` type a file holding `dtype` must have: numpy's own type where
/// numpy has one, else raw codes as `|u1` (one byte per code, or packed bytes)
/// or `<u2` (two-byte codes such as bf16) or `<u4` (f16c and bf16c: two 16-bit
/// codes, the real part's in the low half); a pair dtype as the complex type of
/// its component (`<c8` for df32, `<c16` for dd64: hi real, lo imaginary).
pub fn npy_type(dtype: DType) -> NpyType {
    let info = dtype.info();
    if let Some((t, _)) = info.numpy.and_then(|d| NpyType::from_descr(d).ok()) {
        return t;
    }
    // A pair (df32, dd64) travels as numpy's complex of its component:
    // the real part holds hi, the imaginary part lo (the same bytes).
    if info.class == tessera::Class::Pair {
        return if info.item_bytes == 8 {
            NpyType::C64
        } else {
            NpyType::C128
        };
    }
    match info.item_bytes {
        2 => NpyType::U16,
        4 => NpyType::U32,
        8 => NpyType::U64,
        _ => NpyType::U8,
    }
}

/// The dtype a `.npy` type stands for when the call file names none.
pub fn dtype_of_npy(t: NpyType) -> DType {
    match t {
        NpyType::Bool => DType::Bool,
        NpyType::I8 => DType::I8,
        NpyType::I16 => DType::I16,
        NpyType::I32 => DType::I32,
        NpyType::I64 => DType::I64,
        NpyType::U8 => DType::U8,
        NpyType::U16 => DType::U16,
        NpyType::U32 => DType::U32,
        NpyType::U64 => DType::U64,
        NpyType::F16 => DType::F16,
        NpyType::F32 => DType::F32,
        NpyType::F64 => DType::F64,
        NpyType::C64 => DType::C64,
        NpyType::C128 => DType::C128,
    }
}

/// Bits a stored code of `dtype` may use: the value bits of a float (sign,
/// exponent and mantissa), the width of an integer; codes with higher bits set
/// are not codes of the dtype.
pub fn code_bits(dtype: DType) -> u32 {
    let info = dtype.info();
    match info.float {
        Some(f) if info.class == Class::Float => {
            f.signed as u32 + f.exponent_bits + f.mantissa_bits
        }
        _ => info.bits,
    }
}

/// Whether codes of `dtype` stored one per `item_bytes` can hold bits outside
/// the dtype (so that a file's codes must be checked).
pub fn needs_code_check(dtype: DType) -> bool {
    let info = dtype.info();
    info.class != Class::Bool
        && info.class != Class::Complex
        && (code_bits(dtype) as usize) < 8 * info.item_bytes
}

/// Check that every code (little-endian, `item_bytes` each) fits `dtype`'s width.
pub fn check_codes(dtype: DType, data: &[u8]) -> Result<(), String> {
    if !needs_code_check(dtype) {
        return Ok(());
    }
    let bits = code_bits(dtype);
    let item = dtype.info().item_bytes.max(1);
    for (i, chunk) in data.chunks_exact(item).enumerate() {
        let code = read_code(chunk);
        if code >> bits != 0 {
            return Err(format!(
                "code {code:#x} at element {i} does not fit {dtype} ({bits} bits)"
            ));
        }
    }
    Ok(())
}

/// A little-endian code of up to 8 bytes.
pub fn read_code(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

/// Write the low `out.len()` bytes of `code`, little-endian.
pub fn write_code(code: u64, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = if i < 8 { (code >> (8 * i)) as u8 } else { 0 };
    }
}

/// Pack C-order codes (one per byte, low bits) of a sub-byte dtype along the
/// last axis of `shape`, element 0 in the most significant bits. The last
/// extent must be a multiple of the values per byte. The packed bytes are
/// charged to the call's result budget ([`crate::budget`]).
pub fn pack(dtype: DType, codes: &[u8]) -> Outcome<Vec<u8>> {
    let vpb = values_per_byte(dtype);
    let mut out = crate::budget::with_capacity(codes.len().div_ceil(vpb), "packed codes")?;
    out.extend(codes.chunks(vpb).map(|group| pack_byte(dtype, group)));
    Ok(out)
}

/// One byte of packed codes of `dtype`: `group` holds up to the values per
/// byte, the first in the most significant bits (a short group leaves the
/// low slots zero).
pub fn pack_byte(dtype: DType, group: &[u8]) -> u8 {
    let vpb = values_per_byte(dtype);
    if vpb <= 1 {
        return group.first().copied().unwrap_or(0);
    }
    let bits = dtype.info().bits;
    let mask = ((1u16 << bits) - 1) as u8;
    group.iter().enumerate().fold(0u8, |byte, (slot, &c)| {
        byte | ((c & mask) << ((vpb - 1 - slot) as u32 * bits))
    })
}

/// Unpack bytes of a sub-byte dtype into one code per byte (low bits),
/// charged to the call's result budget ([`crate::budget`]).
pub fn unpack(dtype: DType, bytes: &[u8]) -> Outcome<Vec<u8>> {
    let vpb = values_per_byte(dtype);
    let len = bytes.len().checked_mul(vpb).ok_or_else(|| {
        crate::failure::Failure::run(format!("{} packed bytes of {dtype} overflow", bytes.len()))
    })?;
    let mut out = crate::budget::with_capacity(len, "unpacked codes")?;
    for &b in bytes {
        unpack_byte(dtype, b, &mut out);
    }
    Ok(out)
}

/// Append the codes one packed byte of `dtype` holds (one per byte, low
/// bits, the most significant slot first) to `out`.
pub fn unpack_byte(dtype: DType, byte: u8, out: &mut impl Extend<u8>) {
    let vpb = values_per_byte(dtype);
    if vpb <= 1 {
        out.extend([byte]);
        return;
    }
    let bits = dtype.info().bits;
    let mask = ((1u16 << bits) - 1) as u8;
    out.extend((0..vpb).map(|slot| (byte >> ((vpb - 1 - slot) as u32 * bits)) & mask));
}

/// What a float code is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatValue {
    /// A NaN code.
    Nan,
    /// A number (infinities included).
    Number(f64),
}

/// The value of a code of a float dtype (None for other classes).
pub fn float_value(dtype: DType, code: u64) -> Option<FloatValue> {
    let info = dtype.info();
    let f = info.float?;
    if info.class != Class::Float {
        return None;
    }
    if dtype == DType::F32 {
        let x = f32::from_bits(code as u32);
        return Some(if x.is_nan() {
            FloatValue::Nan
        } else {
            FloatValue::Number(x as f64)
        });
    }
    if dtype == DType::F64 {
        let x = f64::from_bits(code);
        return Some(if x.is_nan() {
            FloatValue::Nan
        } else {
            FloatValue::Number(x)
        });
    }
    let (eb, mb) = (f.exponent_bits, f.mantissa_bits);
    if eb + mb > 30 {
        return None;
    }
    let vb = eb + mb;
    let mag = code & ((1u64 << vb) - 1);
    let negative = f.signed && (code >> vb) & 1 == 1;
    let e = mag >> mb;
    let m = mag & ((1u64 << mb) - 1);
    let emax = (1u64 << eb) - 1;
    let nan = match f.nan {
        NanStyle::Ieee => e == emax && m != 0,
        NanStyle::AllOnes => mag == (1u64 << vb) - 1,
        NanStyle::SignOnly => negative && mag == 0,
        NanStyle::None => false,
    };
    if nan {
        return Some(FloatValue::Nan);
    }
    let magnitude = if f.infinities && e == emax && m == 0 {
        f64::INFINITY
    } else if e == 0 {
        let scale = 2f64.powi(1 - f.bias - mb as i32);
        if f.subnormals {
            m as f64 * scale
        } else {
            ((1u64 << mb) | m) as f64 * 2f64.powi(-f.bias - mb as i32)
        }
    } else {
        ((1u64 << mb) | m) as f64 * 2f64.powi(e as i32 - f.bias - mb as i32)
    };
    Some(FloatValue::Number(if negative {
        -magnitude
    } else {
        magnitude
    }))
}

/// Whether `bytes` (one element of `dtype`, little-endian) hold a NaN; for a
/// complex dtype, whether either component does.
pub fn is_nan(dtype: DType, bytes: &[u8]) -> bool {
    match dtype.component() {
        Some(part) => bytes
            .chunks_exact(bytes.len() / 2)
            .any(|c| float_value(part, read_code(c)) == Some(FloatValue::Nan)),
        None => float_value(dtype, read_code(bytes)) == Some(FloatValue::Nan),
    }
}

/// Whether two elements of `dtype` are the same result: the same bytes, or,
/// where the dtype is a float or complex, NaN in the same components (a NaN's
/// sign and payload are free, as the numerical contract says).
pub fn same_result(dtype: DType, a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    let (component, comp_dtype) = match dtype.component() {
        Some(part) => (a.len() / 2, part),
        None => (a.len().max(1), dtype),
    };
    if comp_dtype.info().class != Class::Float || a.len() != b.len() {
        return false;
    }
    a.chunks(component)
        .zip(b.chunks(component))
        .all(|(x, y)| x == y || (is_nan(comp_dtype, x) && is_nan(comp_dtype, y)))
}

/// A human-readable rendering of one element of `dtype` (its bytes, little-endian,
/// one code per byte for sub-byte dtypes).
pub fn display(dtype: DType, bytes: &[u8]) -> String {
    let info = dtype.info();
    let code = read_code(bytes);
    match info.class {
        Class::Bool => (code != 0).to_string(),
        Class::Int => {
            let bits = info.bits.min(64);
            let shift = 64 - bits;
            (((code << shift) as i64) >> shift).to_string()
        }
        Class::Uint => code.to_string(),
        Class::Float => match float_value(dtype, code) {
            Some(FloatValue::Nan) => "nan".to_string(),
            Some(FloatValue::Number(x)) => format_float(x),
            None => format!("{code:#x}"),
        },
        Class::Complex => {
            let half = bytes.len() / 2;
            let comp = dtype.component().expect("a complex dtype");
            format!(
                "({}{}{}j)",
                display(comp, &bytes[..half]),
                if bytes[half..].last().is_some_and(|b| b & 0x80 != 0) {
                    ""
                } else {
                    "+"
                },
                display(comp, &bytes[half..])
            )
        }
        Class::Pair => {
            let half = bytes.len() / 2;
            let comp = if half == 4 { DType::F32 } else { DType::F64 };
            format!(
                "({} + {})",
                display(comp, &bytes[..half]),
                display(comp, &bytes[half..])
            )
        }
    }
}

fn format_float(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if x == 0.0 && x.is_sign_negative() {
        "-0".to_string()
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trip() {
        let codes = [0x7u8, 0x8, 0xf, 0x0];
        let packed = pack(DType::I4, &codes).unwrap();
        assert_eq!(packed, vec![0x78, 0xf0]);
        assert_eq!(unpack(DType::I4, &packed).unwrap(), codes);
        let bits = [1u8, 0, 1, 1, 0, 0, 0, 1];
        assert_eq!(pack(DType::U1, &bits).unwrap(), vec![0b1011_0001]);
        assert_eq!(unpack(DType::U1, &[0b1011_0001]).unwrap(), bits);
    }

    #[test]
    fn two_part_values_display_by_their_parts() {
        // f16c 1.5 - 2i: codes 0x3e00, 0xc000 (real first, little-endian).
        assert_eq!(display(DType::F16c, &[0x00, 0x3e, 0x00, 0xc0]), "(1.5-2j)");
        // bf16c 1 + 0.5i: 0x3f80, 0x3f00.
        assert_eq!(display(DType::Bf16c, &[0x80, 0x3f, 0x00, 0x3f]), "(1+0.5j)");
        // df32 1.5 + 2^-30: two f32, hi first.
        let mut b = 1.5f32.to_le_bytes().to_vec();
        b.extend(2f32.powi(-30).to_le_bytes());
        assert!(
            display(DType::Df32, &b).starts_with("(1.5 + "),
            "{}",
            display(DType::Df32, &b)
        );
        // NaN in either part of a complex number.
        assert!(is_nan(DType::F16c, &[0x00, 0x3c, 0x01, 0x7c]));
        assert!(!is_nan(DType::Bf16c, &[0x80, 0x7f, 0x00, 0x00]));
    }

    #[test]
    fn float_values() {
        use FloatValue::*;
        assert_eq!(float_value(DType::E4m3fn, 0x38), Some(Number(1.0)));
        assert_eq!(float_value(DType::E4m3fn, 0x7e), Some(Number(448.0)));
        assert_eq!(float_value(DType::E4m3fn, 0x7f), Some(Nan));
        assert_eq!(
            float_value(DType::E4m3fn, 0x01),
            Some(Number(2f64.powi(-9)))
        );
        assert_eq!(float_value(DType::E5m2, 0x7c), Some(Number(f64::INFINITY)));
        assert_eq!(float_value(DType::Bf16, 0x3f80), Some(Number(1.0)));
        assert_eq!(float_value(DType::F16, 0x3c00), Some(Number(1.0)));
        assert_eq!(float_value(DType::E2m1fn, 0x7), Some(Number(6.0)));
        assert_eq!(float_value(DType::E8m0fnu, 127), Some(Number(1.0)));
        assert_eq!(float_value(DType::I8, 1), None);
    }

    #[test]
    fn code_widths() {
        assert_eq!(code_bits(DType::I4), 4);
        assert_eq!(code_bits(DType::E2m3fn), 6);
        assert_eq!(code_bits(DType::Ue4m3), 7);
        assert!(needs_code_check(DType::E3m2fn));
        assert!(!needs_code_check(DType::E4m3fn));
        assert!(check_codes(DType::E2m3fn, &[0x3f, 0]).is_ok());
        assert!(check_codes(DType::E2m3fn, &[0x40]).is_err());
    }
}
