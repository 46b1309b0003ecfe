//! Operands as arrays: reading an operand's `.npy` file (through the bounded
//! reader of [`npy::read`]) into the bytes the library takes, and checking it
//! against the dtype the call file names. Results are written by
//! [`crate::results::Results`].
//!
//! Files of dtypes numpy has are used as they are: a Fortran-order file becomes
//! a view with reversed strides, without a copy. Sub-byte dtypes (`i4`, `u4`,
//! `u1`, `e2m1fn`) are held as one code per byte in C order until the kernel
//! packs them along the last axis for the library.

use crate::call::{resolve, Operand};
use crate::codes::{self, npy_type, values_per_byte};
use crate::failure::{Failure, Outcome};
use crate::npy::{self, NpyType};
use std::path::Path;
use tessera::assembly::{AxisPad, Pad, PaddedLoad, Window};
use tessera::DType;

/// An operand read from its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The operand's name in the call file.
    pub name: String,
    /// Its dtype.
    pub dtype: DType,
    /// Its shape (in values, also for sub-byte dtypes).
    pub shape: Vec<usize>,
    /// Its element strides (C order for sub-byte dtypes, whose `data` holds one
    /// code per byte).
    pub strides: Vec<isize>,
    /// Its bytes: the file's data, or one code per byte for sub-byte dtypes.
    pub data: Vec<u8>,
}

impl Loaded {
    /// Whether the data holds one code per byte of a packed (sub-byte) dtype.
    pub fn is_codes(&self) -> bool {
        values_per_byte(self.dtype) > 1
    }
}

fn run_err(name: &str, path: &Path, msg: impl std::fmt::Display) -> Failure {
    Failure::run(format!(
        "operand {name} ({}): {msg}",
        crate::files::shown(path)
    ))
}

/// Parse an optional dtype name of the call file (a usage error if unknown).
pub fn dtype_name(what: &str, name: Option<&str>) -> Outcome<Option<DType>> {
    name.map(|n| codes::parse_dtype(n).map_err(|e| Failure::usage(format!("{what}: {e}"))))
        .transpose()
}

/// Read operand `name` of the call file at `call_path`.
pub fn load(call_path: &Path, name: &str, spec: &Operand) -> Outcome<Loaded> {
    let plain = load_plain(call_path, name, spec)?;
    match &spec.pad {
        None => {
            if spec.fill.is_some() {
                return Err(Failure::usage(format!(
                    "operand {name}: \"fill\" applies only to a padded operand (with \"pad\")"
                )));
            }
            Ok(plain)
        }
        Some(entries) => padded(name, plain, entries, spec.fill.as_ref()),
    }
}

/// A pad from the call file's `pad` entries of an operand or attribute
/// (`name`): `[before, after]` or `[before, after, size, stride, dilation]`
/// per axis.
pub fn pad_of(name: &str, entries: &[Vec<u64>]) -> Outcome<Pad> {
    let n = |v: u64| usize::try_from(v).ok();
    let axes = entries
        .iter()
        .enumerate()
        .map(|(axis, e)| {
            let bad = || {
                Failure::usage(format!(
                    "{name}: pad entry {axis} must be [before, after] or [before, after, size, stride, dilation] of counts, not {e:?}"
                ))
            };
            let v: Option<Vec<usize>> = e.iter().map(|&x| n(x)).collect();
            let v = v.ok_or_else(bad)?;
            match v[..] {
                [before, after] => Ok(AxisPad {
                    before,
                    after,
                    window: None,
                }),
                [before, after, size, stride, dilation] => Ok(AxisPad {
                    before,
                    after,
                    window: Some(Window {
                        size,
                        stride,
                        dilation,
                    }),
                }),
                _ => Err(bad()),
            }
        })
        .collect::<Outcome<Vec<AxisPad>>>()?;
    Ok(Pad { axes })
}

/// The padded load of `x` by the call file's `pad` entries.
fn padded(
    name: &str,
    x: Loaded,
    entries: &[Vec<u64>],
    fill: Option<&serde_json::Number>,
) -> Outcome<Loaded> {
    let fail = |e: tessera::Error| Failure::run(format!("operand {name}: {e}"));
    if x.is_codes() {
        return Err(Failure::run(format!(
            "operand {name}: a padded load of a sub-byte dtype ({}) is not addressable; give the operand a byte-sized dtype",
            x.dtype
        )));
    }
    let pad = pad_of(&format!("operand {name}"), entries)?;
    let fill_bytes = match fill {
        None => None,
        Some(num) => Some(element_of(name, x.dtype, num)?),
    };
    let view = tessera::ArrayView::new(x.dtype, &x.shape, &x.strides, 0, &x.data).map_err(fail)?;
    // The copy the load makes and the elements its windows name (which
    // overlapping windows make far more than the copy holds) are charged
    // before the copy is made.
    let copy = PaddedLoad::copy_size(&pad, &view).map_err(fail)?;
    crate::budget::charge_bytes(copy, &format!("operand {name}: the padded load's copy"))?;
    let load_shape = pad.load_shape(&x.shape).map_err(fail)?;
    crate::budget::charge_work(
        crate::budget::steps(&load_shape),
        &format!("operand {name}: the padded load's {load_shape:?} elements"),
    )?;
    let fill_view = match &fill_bytes {
        Some(b) => Some(tessera::ArrayView::contiguous(x.dtype, &[], b).map_err(fail)?),
        None => None,
    };
    let load = PaddedLoad::new(&pad, &view, fill_view.as_ref()).map_err(fail)?;
    let (layout, data) = load.into_parts();
    Ok(Loaded {
        name: name.to_string(),
        dtype: x.dtype,
        shape: layout.shape,
        strides: layout.strides,
        data,
    })
}

/// The bytes of one element of `dtype` holding the call file's number
/// `num`, converted as a cast does (an integer exactly where it fits an i64
/// or u64, else through f64).
pub fn element_of(name: &str, dtype: DType, num: &serde_json::Number) -> Outcome<Vec<u8>> {
    let fail = |e: tessera::Error| Failure::run(format!("{name}: fill: {e}"));
    let item = dtype.info().item_bytes.max(1);
    let mut out = vec![0u8; item];
    let mut y = tessera::ArrayViewMut::contiguous(dtype, &[], &mut out).map_err(fail)?;
    let exec = tessera::Exec::default();
    if let Some(i) = num.as_i64() {
        let x = [i];
        let v = tessera::ArrayView::from_slice(&x, &[]).map_err(fail)?;
        tessera::cast(tessera::CastMode::Default, &v, &mut y, &exec).map_err(fail)?;
    } else if let Some(u) = num.as_u64() {
        let x = [u];
        let v = tessera::ArrayView::from_slice(&x, &[]).map_err(fail)?;
        tessera::cast(tessera::CastMode::Default, &v, &mut y, &exec).map_err(fail)?;
    } else {
        let x = [num.as_f64().unwrap_or(f64::NAN)];
        let v = tessera::ArrayView::from_slice(&x, &[]).map_err(fail)?;
        tessera::cast(tessera::CastMode::Default, &v, &mut y, &exec).map_err(fail)?;
    }
    Ok(out)
}

/// [`load`] without the pad.
fn load_plain(call_path: &Path, name: &str, spec: &Operand) -> Outcome<Loaded> {
    let path = resolve(call_path, &spec.npy);
    let named = dtype_name(&format!("operand {name}"), spec.dtype.as_deref())?;
    if let Some(d) = named {
        if spec.packed && values_per_byte(d) == 1 {
            return Err(Failure::usage(format!(
                "operand {name}: \"packed\" applies only to sub-byte dtypes (i4, u4, u1, e2m1fn), not {d}"
            )));
        }
    }
    let file = npy::read(&path).map_err(|e| run_err(name, &path, e))?;
    let dtype = match named {
        Some(d) => d,
        None if spec.packed => {
            return Err(Failure::usage(format!(
                "operand {name}: a packed operand must name its dtype"
            )))
        }
        None => codes::dtype_of_npy(file.dtype),
    };
    check_npy_type(dtype, file.dtype).map_err(|e| run_err(name, &path, e))?;
    let vpb = values_per_byte(dtype);
    let strides = file.strides();
    if vpb == 1 {
        codes::check_codes(dtype, &file.data).map_err(|e| run_err(name, &path, e))?;
        return Ok(Loaded {
            name: name.to_string(),
            dtype,
            shape: file.shape,
            strides,
            data: file.data,
        });
    }
    let bytes = to_c_order(&file.data, &file.shape, &strides, 1)?;
    let (shape, codes) = if spec.packed {
        let Some((&last, outer)) = file.shape.split_last() else {
            return Err(run_err(
                name,
                &path,
                "a packed file needs at least one axis (its last axis holds the bytes)",
            ));
        };
        let values = last
            .checked_mul(vpb)
            .ok_or_else(|| run_err(name, &path, "the value count overflows"))?;
        let mut shape = outer.to_vec();
        shape.push(values);
        (shape, codes::unpack(dtype, &bytes)?)
    } else {
        codes::check_codes(dtype, &bytes).map_err(|e| run_err(name, &path, e))?;
        (file.shape, bytes)
    };
    Ok(Loaded {
        name: name.to_string(),
        dtype,
        strides: npy::c_strides(&shape),
        shape,
        data: codes,
    })
}

/// Check that a file's numpy type is the one `dtype` is stored as.
pub fn check_npy_type(dtype: DType, found: NpyType) -> Result<(), String> {
    let want = npy_type(dtype);
    if found == want {
        Ok(())
    } else {
        Err(format!(
            "the file holds {} but dtype {dtype} is stored as {}",
            found.descr(),
            want.descr()
        ))
    }
}

/// Copy elements of `item` bytes addressed by non-negative `strides` into C
/// order (a copy charged to the call's result budget).
pub fn to_c_order(
    data: &[u8],
    shape: &[usize],
    strides: &[isize],
    item: usize,
) -> Outcome<Vec<u8>> {
    if strides == npy::c_strides(shape).as_slice() {
        return crate::budget::copy_of(data, "an operand's copy in C order");
    }
    let count = npy::element_count(shape);
    let bytes = count.checked_mul(item).ok_or_else(|| {
        Failure::run(format!(
            "an operand's copy in C order: {count} elements of {item} bytes overflow"
        ))
    })?;
    let mut out = crate::budget::with_capacity(bytes, "an operand's copy in C order")?;
    let mut index = vec![0usize; shape.len()];
    for _ in 0..count {
        let pos: isize = index
            .iter()
            .zip(strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        let at = pos as usize * item;
        out.extend_from_slice(&data[at..at + item]);
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    Ok(out)
}

/// A zero-filled vector of `len` bytes for a result, charged to the call's
/// result budget ([`crate::budget`]); refused (not aborted) when the budget
/// or the memory is short.
pub fn zeroed(len: usize) -> Outcome<Vec<u8>> {
    crate::budget::zeroed(len, "a result")
}
