//! `tessera code DTYPE ARG... [--all]`: what a dtype's codes are.
//!
//! Each ARG is a code (`0x7e`, `0b01111110`) or a number (`1.3`, `-inf`,
//! `nan`, `1e-3`, `-7`). A code is shown in hex, in binary split into its
//! fields (sign, exponent and mantissa for a float; the bits for an
//! integer) and as the exact value it holds. A number is shown with the
//! code the library's cast from f64 gives it in each mode (`default`, then
//! `saturating` where the two differ), then that code as above. `--all`
//! lists every code of a dtype of at most 8 bits. A value is the shortest
//! decimal that reads back as the same f64 (for the formats of 16 bits and
//! less, the exact value of the code).

use crate::codes::{self, parse_dtype, read_code, write_code};
use crate::failure::{write_out, Failure, Outcome};
use std::io::Write;
use tessera::{ArrayView, ArrayViewMut, CastMode, Class, DType, Exec};

/// Run the command.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let (all, rest): (Vec<&String>, Vec<&String>) = args.iter().partition(|a| *a == "--all");
    let Some((name, items)) = rest.split_first() else {
        return Err(Failure::usage(
            "code needs a dtype (and codes or numbers, or --all)".to_string(),
        ));
    };
    let dtype = parse_dtype(name).map_err(Failure::usage)?;
    if matches!(dtype.info().class, Class::Complex | Class::Pair) {
        return Err(Failure::usage(format!(
            "code shows real dtypes; {dtype} holds two components (show its component dtype)"
        )));
    }
    let bits = codes::code_bits(dtype);
    if !all.is_empty() {
        if bits > 8 {
            return Err(Failure::usage(format!(
                "--all lists dtypes of at most 8 bits; {dtype} has {bits}"
            )));
        }
        for c in 0..1u64 << bits {
            write_out(out, format_args!("{}\n", describe(dtype, c)))?;
        }
    }
    if items.is_empty() && all.is_empty() {
        return Err(Failure::usage(format!(
            "code {dtype}: give codes (0x…, 0b…) or numbers, or --all"
        )));
    }
    for item in items {
        match parse_code(item) {
            Some(c) => {
                if bits < 64 && c >> bits != 0 {
                    return Err(Failure::usage(format!(
                        "code {item} does not fit {dtype} ({bits} bits)"
                    )));
                }
                write_out(out, format_args!("{}\n", describe(dtype, c)))?;
            }
            None => {
                let x = parse_number(item).ok_or_else(|| {
                    Failure::usage(format!(
                        "`{}` is neither a code (0x…, 0b…) nor a number",
                        super::truncate(item, 40)
                    ))
                })?;
                let d = encode(dtype, x, CastMode::Default)?;
                let s = encode(dtype, x, CastMode::Saturating)?;
                write_out(out, format_args!("{item} -> {}\n", describe(dtype, d)))?;
                if s != d {
                    write_out(
                        out,
                        format_args!("{item} -> (saturating) {}\n", describe(dtype, s)),
                    )?;
                }
            }
        }
    }
    Ok(0)
}

/// `0x…` or `0b…` (underscores allowed) as a code.
fn parse_code(s: &str) -> Option<u64> {
    let t: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(b) = t.strip_prefix("0b").or(t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()
    } else {
        None
    }
}

fn parse_number(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "nan" | "+nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        _ => s.parse::<f64>().ok(),
    }
}

/// The code of `x` in `dtype` by the library's cast from f64.
fn encode(dtype: DType, x: f64, mode: CastMode) -> Outcome<u64> {
    let info = dtype.info();
    let vpb = codes::values_per_byte(dtype);
    // A packed dtype casts a whole byte's worth of values (the first is x).
    let n = vpb;
    let src = vec![x; n];
    let mut buf = vec![0u8; if vpb > 1 { 1 } else { info.item_bytes }];
    let fail = |e: tessera::Error| Failure::run(format!("cast of {x} into {dtype}: {e}"));
    tessera::cast(
        mode,
        &ArrayView::from_slice(&src, &[n]).map_err(fail)?,
        &mut ArrayViewMut::contiguous(dtype, &[n], &mut buf).map_err(fail)?,
        &Exec::SEQ,
    )
    .map_err(fail)?;
    Ok(if vpb > 1 {
        codes::unpack(dtype, &buf)?[0] as u64
    } else {
        read_code(&buf)
    })
}

/// `dtype 0x.. = 0b.. (fields) = value`.
fn describe(dtype: DType, code: u64) -> String {
    let info = dtype.info();
    let bits = codes::code_bits(dtype);
    let digits = (bits as usize).div_ceil(4).max(1);
    let bin: Vec<char> = (0..bits)
        .rev()
        .map(|i| if code >> i & 1 == 1 { '1' } else { '0' })
        .collect();
    let fields = match info.float {
        Some(f) if info.class == Class::Float => {
            let s = f.signed as usize;
            let e = f.exponent_bits as usize;
            let sign: String = bin[..s].iter().collect();
            let exp: String = bin[s..s + e].iter().collect();
            let man: String = bin[s + e..].iter().collect();
            let mut parts = Vec::new();
            if s == 1 {
                parts.push(format!("sign {sign}"));
            }
            parts.push(format!("exponent {exp}"));
            if !man.is_empty() {
                parts.push(format!("mantissa {man}"));
            }
            format!("0b{} ({})", [sign, exp, man].concat(), parts.join(", "))
        }
        _ => format!("0b{}", bin.iter().collect::<String>()),
    };
    let item = info.item_bytes.max(1);
    let mut bytes = vec![0u8; item.min(8)];
    write_code(code, &mut bytes);
    format!(
        "{dtype} 0x{code:0digits$x} = {fields} = {}",
        codes::display(dtype, &bytes)
    )
}
