//! numpy arrays as tessera views: the geometry read off the array object
//! (data pointer, byte strides, dtype by name and item size), checked, and
//! turned into [`ArrayView`]s or [`ArrayViewMut`]s while the GIL is released.
//!
//! An operand is either a numpy array of a dtype whose values take whole
//! bytes (read in place, any strides, negative ones included, any
//! alignment), or a tuple `(buffer, dtype_name, shape)` where `buffer` is a
//! C-contiguous uint8 array of tessera's packed layout: the Python layer
//! packs the sub-byte dtypes (int4, uint4, uint1, float4_e2m1fn), which
//! ml_dtypes stores one value per byte, into that form.

use crate::errors::{dtype_error, value_error};
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::borrow::Cow;
use tessera::{ArrayView, ArrayViewMut, DType};

/// The geometry of one operand, its bytes named by address so that it can
/// cross into a closure that runs without the GIL.
#[derive(Clone, Debug)]
pub struct Operand {
    /// The operand's name in error messages.
    pub name: Cow<'static, str>,
    /// Element type.
    pub dtype: DType,
    /// Extents.
    pub shape: Vec<usize>,
    /// Strides in elements.
    pub strides: Vec<isize>,
    /// Position of element (0, …, 0) in elements from `start`.
    pub offset: usize,
    /// Address of the lowest byte the operand reaches (0 for an empty one).
    pub start: usize,
    /// Bytes from `start` to the end of the highest element reached.
    pub len: usize,
    /// Whether numpy lets the array be written.
    pub writable: bool,
}

/// The tessera dtype of a numpy dtype, by its name (numpy's and ml_dtypes'
/// names are tessera's aliases) and checked against its item size.
pub fn dtype_of(descr: &Bound<'_, numpy::PyArrayDescr>, name: &str) -> PyResult<DType> {
    let np_name: String = descr.getattr("name")?.extract()?;
    let dtype = DType::from_name(&np_name).ok_or_else(|| {
        dtype_error(format!(
            "{name}: numpy dtype {np_name} has no tessera counterpart"
        ))
    })?;
    let info = dtype.info();
    if info.values_per_byte > 1 {
        return Err(dtype_error(format!(
            "{name}: {np_name} holds one value per byte in numpy; tessera packs \
             {} per byte (pass it through the tessera package, which converts it)",
            info.values_per_byte
        )));
    }
    if descr.itemsize() != info.item_bytes {
        return Err(dtype_error(format!(
            "{name}: numpy dtype {np_name} has {} bytes per item, tessera's {} has {}",
            descr.itemsize(),
            dtype.name(),
            info.item_bytes
        )));
    }
    if descr.is_native_byteorder() == Some(false) {
        return Err(dtype_error(format!(
            "{name}: {np_name} is not in this machine's byte order"
        )));
    }
    Ok(dtype)
}

/// The operand `obj` (a numpy array or a packed tuple) named `name`.
pub fn operand(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Operand> {
    if let Ok(t) = obj.downcast::<PyTuple>() {
        return packed(t, name);
    }
    let arr = obj.downcast::<PyUntypedArray>().map_err(|_| {
        dtype_error(format!(
            "{name}: expected a numpy array, got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let descr = arr.dtype();
    let dtype = match crate::fast::known_dtype(&descr) {
        Some(d) => d,
        None => dtype_of(&descr, name)?,
    };
    array_operand(arr, dtype, Cow::Owned(name.to_string()))
}

/// The operand of a numpy array whose dtype is already known to be
/// `dtype` (a whole-byte dtype in native byte order).
pub fn array_operand(
    arr: &Bound<'_, PyUntypedArray>,
    dtype: DType,
    name: Cow<'static, str>,
) -> PyResult<Operand> {
    let item = dtype.info().item_bytes;
    let shape = arr.shape().to_vec();
    let byte_strides = arr.strides();
    // SAFETY: `as_array_ptr` points at the live array object that `arr`
    // holds a reference to; its `data` and `flags` fields are plain reads.
    let (data, flags) = unsafe {
        let p = arr.as_array_ptr();
        ((*p).data as usize, (*p).flags)
    };
    let writable = flags & NPY_ARRAY_WRITEABLE != 0;
    geometry(name, dtype, item, shape, byte_strides, data, writable)
}

/// The element geometry of an array from its byte geometry: `strides`
/// (one per axis) receives the element strides; returns the offset of
/// element (0, …, 0) in elements from the lowest byte reached, that byte's
/// address and the bytes spanned; refuses strides that are not whole
/// items. An empty array reaches no byte: (0, 0, 0).
pub fn element_geometry(
    shape: &[usize],
    byte_strides: &[isize],
    item: usize,
    data: usize,
    strides: &mut [isize],
) -> Result<(usize, usize, usize), String> {
    if shape.contains(&0) {
        strides.iter_mut().for_each(|s| *s = 0);
        return Ok((0, 0, 0));
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for ((&n, &s), e) in shape.iter().zip(byte_strides).zip(strides.iter_mut()) {
        if n > 1 && s % item as isize != 0 {
            return Err(format!(
                "byte stride {s} is not a whole number of {item}-byte items"
            ));
        }
        let span = (n as i128 - 1) * s as i128;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
        *e = if n > 1 { s / item as isize } else { 0 };
    }
    let start = data as i128 + lo;
    let len = hi - lo + item as i128;
    if start < 0 || len > isize::MAX as i128 {
        return Err("the array's extent overflows".into());
    }
    Ok((
        ((-lo) as u64 / item as u64) as usize,
        start as usize,
        len as usize,
    ))
}

/// An operand from its byte geometry.
fn geometry(
    name: Cow<'static, str>,
    dtype: DType,
    item: usize,
    shape: Vec<usize>,
    byte_strides: &[isize],
    data: usize,
    writable: bool,
) -> PyResult<Operand> {
    let mut strides = vec![0isize; shape.len()];
    let (offset, start, len) = element_geometry(&shape, byte_strides, item, data, &mut strides)
        .map_err(|e| value_error(format!("{name}: {e}")))?;
    Ok(Operand {
        name,
        dtype,
        shape,
        strides,
        offset,
        start,
        len,
        writable,
    })
}

/// A packed operand `(buffer, dtype_name, shape)`.
fn packed(t: &Bound<'_, PyTuple>, name: &str) -> PyResult<Operand> {
    if t.len() != 3 {
        return Err(value_error(format!(
            "{name}: a packed operand is (buffer, dtype, shape)"
        )));
    }
    let buf = t.get_item(0)?;
    let arr = buf.downcast::<PyUntypedArray>().map_err(|_| {
        value_error(format!(
            "{name}: a packed operand's buffer is a numpy array"
        ))
    })?;
    let dname: String = t.get_item(1)?.extract()?;
    let shape: Vec<usize> = t.get_item(2)?.extract()?;
    let dtype = DType::from_name(&dname)
        .ok_or_else(|| dtype_error(format!("{name}: unknown dtype {dname}")))?;
    let descr = arr.dtype();
    if descr.itemsize() != 1 || !arr.is_c_contiguous() {
        return Err(value_error(format!(
            "{name}: a packed operand's buffer is a C-contiguous array of bytes"
        )));
    }
    // SAFETY: as in `operand`: plain reads of the live array object's fields.
    let (data, flags) = unsafe {
        let p = arr.as_array_ptr();
        ((*p).data as usize, (*p).flags)
    };
    let len = arr.len();
    // Rows of the packed last axis are padded to whole bytes (a single value
    // sits in the most significant bits of its byte).
    let per_byte = dtype.info().values_per_byte.max(1) as usize;
    let mut padded = shape.clone();
    if let Some(last) = padded.last_mut() {
        *last = last
            .div_ceil(per_byte)
            .checked_mul(per_byte)
            .ok_or_else(|| value_error(format!("{name}: the packed shape overflows")))?;
    }
    Ok(Operand {
        name: Cow::Owned(name.to_string()),
        dtype,
        strides: tessera::array::c_strides(&padded),
        shape,
        offset: 0,
        start: if len == 0 { 0 } else { data },
        len,
        writable: flags & NPY_ARRAY_WRITEABLE != 0,
    })
}

/// Whether the bytes of two operands share an address.
fn overlaps(a: &Operand, b: &Operand) -> bool {
    a.len > 0 && b.len > 0 && a.start < b.start + b.len && b.start < a.start + a.len
}

/// The operands of one call, made safe to view at once: every destination
/// writable and apart from every other destination; an input that shares
/// bytes with a destination copied first (so `out=x` reads `x` as it was).
pub struct Call {
    inputs: Vec<Operand>,
    copies: Vec<Option<Vec<u8>>>,
    outputs: Vec<Operand>,
}

impl Call {
    /// Check and prepare `inputs` and `outputs`. Call with the GIL held: the
    /// copies read the arrays.
    pub fn new(inputs: Vec<Operand>, outputs: Vec<Operand>) -> PyResult<Call> {
        for (i, o) in outputs.iter().enumerate() {
            if !o.writable {
                return Err(value_error(format!("{}: the array is read-only", o.name)));
            }
            for p in &outputs[..i] {
                if overlaps(o, p) {
                    return Err(value_error(format!(
                        "{} and {} share memory: destinations must be apart",
                        p.name, o.name
                    )));
                }
            }
        }
        let copies = inputs
            .iter()
            .map(|x| {
                outputs.iter().any(|o| overlaps(x, o)).then(|| {
                    // SAFETY: `x` spans `len` readable bytes from `start`
                    // (the array object is alive for the call; its extent
                    // was computed from its own shape and strides).
                    unsafe { std::slice::from_raw_parts(x.start as *const u8, x.len) }.to_vec()
                })
            })
            .collect();
        Ok(Call {
            inputs,
            copies,
            outputs,
        })
    }

    /// The bytes of input `i`: its copy, or the array's own.
    fn input_bytes(&self, i: usize) -> &[u8] {
        let x = &self.inputs[i];
        match &self.copies[i] {
            Some(c) => c,
            None if x.len == 0 => &[],
            // SAFETY: `x` spans `len` readable bytes from `start`, alive
            // while the caller holds the array; no destination reaches them
            // (those that would were copied in `new`).
            None => unsafe { std::slice::from_raw_parts(x.start as *const u8, x.len) },
        }
    }

    /// The bytes of destination `i`. Called once per destination by
    /// [`Call::parts`] alone, so no two live slices alias.
    #[allow(clippy::mut_from_ref)]
    fn output_bytes(&self, i: usize) -> &mut [u8] {
        let o = &self.outputs[i];
        if o.len == 0 {
            return &mut [];
        }
        // SAFETY: `o` spans `len` writable bytes from `start` (numpy's
        // WRITEABLE flag was checked), apart from every other destination
        // and from every input's bytes (checked or copied in `new`); `parts`
        // hands out each destination once per call.
        unsafe { std::slice::from_raw_parts_mut(o.start as *mut u8, o.len) }
    }

    /// Whether operand `x` is its bytes in order: whole-byte items in C
    /// order from the first byte.
    fn plain(x: &Operand) -> bool {
        x.offset == 0
            && x.dtype.info().values_per_byte == 1
            && tessera::array::c_strides(&x.shape)
                .iter()
                .zip(&x.strides)
                .zip(&x.shape)
                .all(|((c, s), &n)| n <= 1 || c == s)
    }

    /// The input views and the destination views, built from the operands'
    /// geometry (refusals are tessera's own: a view that does not fit its
    /// bytes is [`tessera::Error::Layout`] or `OutOfBounds`).
    pub fn views(&self) -> tessera::Result<(Vec<ArrayView<'_>>, Vec<ArrayViewMut<'_>>)> {
        let (ins, _, outs, _) = self.parts(&[], &[])?;
        Ok((ins, outs))
    }

    /// As [`Call::views`], but the inputs listed in `raw_in` and the
    /// destinations in `raw_out` as the byte slices of C-contiguous arrays,
    /// in the order listed.
    #[allow(clippy::type_complexity)]
    pub fn parts(
        &self,
        raw_in: &[usize],
        raw_out: &[usize],
    ) -> tessera::Result<(
        Vec<ArrayView<'_>>,
        Vec<&[u8]>,
        Vec<ArrayViewMut<'_>>,
        Vec<&mut [u8]>,
    )> {
        let not_plain = |x: &Operand| tessera::Error::Layout {
            operand: x.name.to_string(),
            reason: "expected a C-contiguous array".into(),
        };
        let mut ins = Vec::new();
        for (i, x) in self.inputs.iter().enumerate() {
            if !raw_in.contains(&i) {
                ins.push(ArrayView::new(
                    x.dtype,
                    &x.shape,
                    &x.strides,
                    x.offset,
                    self.input_bytes(i),
                )?);
            }
        }
        let mut ins_raw = Vec::new();
        for &i in raw_in {
            let x = &self.inputs[i];
            if !Self::plain(x) {
                return Err(not_plain(x));
            }
            ins_raw.push(self.input_bytes(i));
        }
        for &i in raw_out {
            if !Self::plain(&self.outputs[i]) {
                return Err(not_plain(&self.outputs[i]));
            }
        }
        let mut outs = Vec::new();
        for (i, o) in self.outputs.iter().enumerate() {
            if !raw_out.contains(&i) {
                outs.push(ArrayViewMut::new(
                    o.dtype,
                    &o.shape,
                    &o.strides,
                    o.offset,
                    self.output_bytes(i),
                )?);
            }
        }
        let mut outs_raw = Vec::new();
        let mut seen = Vec::new();
        for &i in raw_out {
            if !seen.contains(&i) {
                seen.push(i);
                outs_raw.push(self.output_bytes(i));
            }
        }
        Ok((ins, ins_raw, outs, outs_raw))
    }
}

/// Run `f` over the views of `call`'s operands without the GIL and with
/// panics caught ([`crate::errors::detached`]): the body of every call that
/// takes arrays.
pub fn run_views<T: Send>(
    py: Python<'_>,
    call: Call,
    exec: tessera::Exec,
    f: impl FnOnce(&[ArrayView<'_>], &mut [ArrayViewMut<'_>], &tessera::Exec) -> tessera::Result<T>
        + Send,
) -> PyResult<T> {
    crate::errors::detached(py, move || {
        let (ins, mut outs) = call.views()?;
        f(&ins, &mut outs, &exec)
    })
}
