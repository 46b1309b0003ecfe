//! The elementwise kinds as native callables (`tessera.exp` is one): numpy
//! arrays of whole-byte dtypes go from the arguments to the kernel without
//! a line of Python, so a call on a small array costs about what a numpy
//! ufunc call does. Anything else (Python numbers, lists, the sub-byte
//! dtypes, a refusal to explain) goes to the Python implementation,
//! `tessera.apply`, which gives the same bits.

use crate::errors::{detached, held, to_py};
use crate::exec_of;
use crate::operand::{dtype_of, element_geometry};
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::npyffi::{npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use tessera::{ArrayView, ArrayViewMut};
use tessera::{DType, Kind, ReduceOp};

/// Calls of fewer elements than this keep the GIL: a kernel this short
/// ends sooner than another thread could take the GIL and give it back.
pub const KEEP_GIL_BELOW: usize = 1 << 14;

/// numpy's dtype object for each tessera dtype that has one (index: the
/// dtype's position in `DType::ALL`), registered once by the Python layer.
static DESCRS: OnceLock<Vec<Option<Py<PyArrayDescr>>>> = OnceLock::new();

/// Dtypes already recognised: each entry packs numpy's type number (32
/// bits), byte order (8) and item size (16) with the dtype's position in
/// `DType::ALL` plus one (8); 0 is an empty slot. Lock-free: a lookup is a
/// few relaxed loads.
static KNOWN: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

fn known_key(num: i32, order: u8, item: usize) -> u64 {
    ((num as u32 as u64) << 32) | ((order as u64) << 24) | (((item & 0xffff) as u64) << 8)
}

/// Register numpy's dtype object of each tessera dtype (name, dtype).
#[pyfunction]
pub fn register_dtypes(descrs: Vec<(String, Py<PyArrayDescr>)>) -> PyResult<()> {
    let mut table: Vec<Option<Py<PyArrayDescr>>> = DType::ALL.iter().map(|_| None).collect();
    for (name, d) in descrs {
        let dt = crate::dtype_named(&name)?;
        let i = DType::ALL.iter().position(|&x| x == dt).unwrap_or(0);
        table[i] = Some(d);
    }
    let _ = DESCRS.set(table);
    Ok(())
}

/// The tessera dtype of an array's numpy dtype where it is a whole-byte
/// dtype in native byte order (else None: the Python path handles it).
pub fn known_dtype(descr: &Bound<'_, PyArrayDescr>) -> Option<DType> {
    // SAFETY: `as_dtype_ptr` points at the live descriptor `descr` holds;
    // `type_num` and `byteorder` are plain fields of its fixed prefix.
    let (num, order) = unsafe {
        let p = descr.as_dtype_ptr();
        ((*p).type_num, (*p).byteorder as u8)
    };
    let key = known_key(num, order, descr.itemsize());
    for slot in &KNOWN {
        let v = slot.load(Ordering::Relaxed);
        if v == 0 {
            break;
        }
        if v & !0xff == key {
            return DType::ALL.get((v & 0xff) as usize - 1).copied();
        }
    }
    let d = dtype_of(descr, "x").ok()?;
    let i = DType::ALL.iter().position(|&x| x == d)? as u64 + 1;
    for slot in &KNOWN {
        match slot.compare_exchange(0, key | i, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break,
            Err(v) if v & !0xff == key => break,
            Err(_) => continue,
        }
    }
    Some(d)
}

/// A new C-order array of `dtype` and `shape`, or None where numpy has no
/// registered type for `dtype`.
fn empty<'py>(
    py: Python<'py>,
    dtype: DType,
    shape: &[usize],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let i = DType::ALL.iter().position(|&x| x == dtype).unwrap_or(0);
    let Some(Some(descr)) = DESCRS.get().map(|t| &t[i]) else {
        return Ok(None);
    };
    let mut dims: Vec<npy_intp> = shape.iter().map(|&d| d as npy_intp).collect();
    // SAFETY: the numpy C API, initialised by rust-numpy on first use, with
    // a descriptor whose reference `into_dtype_ptr` hands over (the call
    // steals it) and `dims.len()` extents; numpy allocates the data and
    // reports failure (a size overflow, no memory) as a null result with
    // the Python error set, which `from_owned_ptr_or_err` raises.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            PY_ARRAY_API.get_type_object(py, NpyTypes::PyArray_Type),
            descr.bind(py).clone().into_dtype_ptr(),
            dims.len() as std::os::raw::c_int,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr).map(Some)
    }
}

/// One elementwise kind, callable as `kind(*operands, out=None,
/// threads=None, tier=None)`; each instance's `__doc__` (in its dict) is
/// the kind's.
#[pyclass(module = "tessera._native", frozen, dict)]
pub struct Ufunc {
    kind: Kind,
    /// The Python implementation (`tessera.apply` bound to this kind).
    slow: Py<PyAny>,
    name: String,
}

/// The most axes the allocation-free path takes (more go the general way).
const MAX_RANK: usize = 8;

/// An array's element geometry on the stack.
#[derive(Clone, Copy)]
struct Geo {
    dtype: DType,
    rank: usize,
    shape: [usize; MAX_RANK],
    strides: [isize; MAX_RANK],
    offset: usize,
    start: usize,
    len: usize,
    writable: bool,
}

impl Geo {
    const EMPTY: Geo = Geo {
        dtype: DType::Bool,
        rank: 0,
        shape: [0; MAX_RANK],
        strides: [0; MAX_RANK],
        offset: 0,
        start: 0,
        len: 0,
        writable: false,
    };

    /// Read the geometry of `arr` as `dtype` into `self` (in place: no
    /// copy of the arrays), or false where it has more than [`MAX_RANK`]
    /// axes or strides that are not whole items (the general path takes or
    /// refuses those).
    #[inline]
    fn read(&mut self, arr: &Bound<'_, PyUntypedArray>, dtype: DType) -> bool {
        let rank = arr.ndim();
        if rank > MAX_RANK {
            return false;
        }
        self.dtype = dtype;
        self.rank = rank;
        self.shape[..rank].copy_from_slice(arr.shape());
        // SAFETY: plain reads of the live array object's `data` and `flags`.
        let (data, flags) = unsafe {
            let p = arr.as_array_ptr();
            ((*p).data as usize, (*p).flags)
        };
        self.writable = flags & NPY_ARRAY_WRITEABLE != 0;
        match element_geometry(
            &self.shape[..rank],
            arr.strides(),
            dtype.info().item_bytes,
            data,
            &mut self.strides[..rank],
        ) {
            Ok((offset, start, len)) => {
                (self.offset, self.start, self.len) = (offset, start, len);
                true
            }
            Err(_) => false,
        }
    }

    fn apart(&self, other: &Geo) -> bool {
        self.len == 0
            || other.len == 0
            || self.start + self.len <= other.start
            || other.start + other.len <= self.start
    }

    /// # Safety
    /// `start..start + len` must be readable for the life of the view.
    unsafe fn view<'a>(&self) -> tessera::Result<ArrayView<'a>> {
        let bytes: &[u8] = if self.len == 0 {
            &[]
        } else {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts(self.start as *const u8, self.len) }
        };
        ArrayView::new(
            self.dtype,
            &self.shape[..self.rank],
            &self.strides[..self.rank],
            self.offset,
            bytes,
        )
    }

    /// # Safety
    /// `start..start + len` must be writable for the life of the view and
    /// reached by no other live view.
    unsafe fn view_mut<'a>(&self) -> tessera::Result<ArrayViewMut<'a>> {
        let bytes: &mut [u8] = if self.len == 0 {
            &mut []
        } else {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts_mut(self.start as *mut u8, self.len) }
        };
        ArrayViewMut::new(
            self.dtype,
            &self.shape[..self.rank],
            &self.strides[..self.rank],
            self.offset,
            bytes,
        )
    }
}

impl Ufunc {
    /// The call without Python and without allocating (but the result and
    /// the library's own views), or None where the Python path must take
    /// it: an operand that is not a numpy array of a whole-byte dtype, more
    /// than [`MAX_RANK`] axes, a destination that shares memory with an
    /// input or is read-only, a refusal to explain.
    fn fast<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        out: Option<&Bound<'py, PyAny>>,
        threads: Option<usize>,
        tier: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let arity = self.kind.info().arity;
        if args.len() != arity {
            return Ok(None);
        }
        let mut geos = [Geo::EMPTY; 3];
        let mut dtypes = [DType::Bool; 3];
        let mut last: Option<(*mut numpy::npyffi::PyArray_Descr, DType)> = None;
        for (i, a) in args.iter().enumerate() {
            let Ok(arr) = a.downcast::<PyUntypedArray>() else {
                return Ok(None);
            };
            // SAFETY: a plain read of the live array object's descriptor
            // pointer (compared, never dereferenced here).
            let descr = unsafe { (*arr.as_array_ptr()).descr };
            let dt = match last {
                Some((p, d)) if p == descr => d,
                _ => match known_dtype(&arr.dtype()) {
                    Some(d) => d,
                    None => return Ok(None),
                },
            };
            last = Some((descr, dt));
            if !geos[i].read(arr, dt) {
                return Ok(None);
            }
            dtypes[i] = dt;
        }
        let geos = &geos[..arity];
        let Ok(call) = tessera::elementwise::call_dtype(self.kind, &dtypes[..arity]) else {
            return Ok(None);
        };
        let Ok(result) = tessera::result_dtype(self.kind, call) else {
            return Ok(None);
        };
        // The broadcast shape, on the stack.
        let rank = geos.iter().map(|g| g.rank).max().unwrap_or(0);
        let mut shape = [1usize; MAX_RANK];
        for g in geos.iter() {
            for k in 0..g.rank {
                let (n, t) = (g.shape[k], &mut shape[rank - g.rank + k]);
                if *t == 1 {
                    *t = n;
                } else if n != 1 && n != *t {
                    return Ok(None);
                }
            }
        }
        let exec = exec_of(threads, tier)?;
        let dst = match out {
            Some(o) => o.clone(),
            None => match empty(py, result, &shape[..rank])? {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        let Ok(dst_arr) = dst.downcast::<PyUntypedArray>() else {
            return Ok(None);
        };
        let mut d = Geo::EMPTY;
        match known_dtype(&dst_arr.dtype()) {
            Some(dt) if d.read(dst_arr, dt) => {}
            _ => return Ok(None),
        }
        if !d.writable || geos.iter().any(|g| !g.apart(&d)) {
            return Ok(None);
        }
        let kind = self.kind;
        let run = || -> tessera::Result<()> {
            // SAFETY: each geometry was read from a numpy array the caller
            // holds for the whole call; the destination is writable and
            // shares no byte with any input (checked above), so the one
            // mutable view aliases nothing.
            let mut o = unsafe { d.view_mut()? };
            match geos {
                // SAFETY: as above.
                [x] => tessera::elementwise(kind, &[unsafe { x.view()? }], &mut o, &exec),
                [x, y] => {
                    let v = unsafe { [x.view()?, y.view()?] };
                    tessera::elementwise(kind, &v, &mut o, &exec)
                }
                [x, y, z] => {
                    let v = unsafe { [x.view()?, y.view()?, z.view()?] };
                    tessera::elementwise(kind, &v, &mut o, &exec)
                }
                _ => unreachable!("arity is 1, 2 or 3"),
            }
        };
        if tessera::array::element_count(&shape[..rank]).unwrap_or(usize::MAX) < KEEP_GIL_BELOW {
            held(run)?;
        } else {
            detached(py, run)?;
        }
        Ok(Some(dst))
    }
}

#[pymethods]
impl Ufunc {
    #[new]
    fn new(kind: &str, slow: Py<PyAny>, name: String) -> PyResult<Self> {
        let kind = Kind::from_name(kind)
            .ok_or_else(|| to_py(tessera::Error::UnknownKind(kind.to_string())))?;
        Ok(Ufunc { kind, slow, name })
    }

    #[pyo3(signature = (*args, out=None, threads=None, tier=None))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
        tier: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Shapes that do not broadcast, a refused dtype or a non-array
        // operand take the Python path, which explains the refusal or
        // converts the operand.
        if let Some(r) = self.fast(py, args, out.as_ref(), threads, tier)? {
            return Ok(r);
        }
        self.slow.bind(py).call((args, out, threads, tier), None)
    }

    #[getter]
    fn __name__(&self) -> &str {
        &self.name
    }

    /// The kind's name in tessera's catalogue.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.name()
    }

    fn __repr__(&self) -> String {
        format!("<tessera kind {}>", self.name)
    }
}

/// One reduction (`tessera.sum` is one), callable as `op(x, axis=None,
/// keepdims=False, dtype=None, out=None, threads=None, tier=None)`; each
/// instance's `__doc__` (in its dict) is the reduction's. A numpy array of
/// a whole-byte dtype with neither `dtype=` nor `out=` goes to the library
/// without Python; anything else to the Python implementation
/// (`tessera.reduce`), which gives the same bits.
#[pyclass(module = "tessera._native", frozen, dict)]
pub struct Reducer {
    op: ReduceOp,
    /// The Python implementation, called with the same arguments.
    slow: Py<PyAny>,
    name: String,
}

/// The axes `axis` names (None: all) of an array of rank `rank`, each
/// once, or None where the Python path must explain the refusal.
fn axes_of(axis: Option<&Bound<'_, PyAny>>, rank: usize) -> Option<Vec<usize>> {
    let Some(a) = axis else {
        return Some((0..rank).collect());
    };
    let list: Vec<isize> = match a.extract::<isize>() {
        Ok(i) => vec![i],
        Err(_) => a.extract::<Vec<isize>>().ok()?,
    };
    let mut out = Vec::with_capacity(list.len());
    for i in list {
        let r = rank as isize;
        if i < -r || i >= r {
            return None;
        }
        let k = i.rem_euclid(r.max(1)) as usize;
        if out.contains(&k) {
            return None;
        }
        out.push(k);
    }
    Some(out)
}

impl Reducer {
    fn fast<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        axis: Option<&Bound<'py, PyAny>>,
        keepdims: bool,
        threads: Option<usize>,
        tier: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Ok(arr) = x.downcast::<PyUntypedArray>() else {
            return Ok(None);
        };
        let Some(dt) = known_dtype(&arr.dtype()) else {
            return Ok(None);
        };
        let mut g = Geo::EMPTY;
        if !g.read(arr, dt) {
            return Ok(None);
        }
        let Some(axes) = axes_of(axis, g.rank) else {
            return Ok(None);
        };
        let shape = &g.shape[..g.rank];
        let Ok(reduced) = tessera::reduce::reduce_query(self.op, &axes, shape, dt, None) else {
            return Ok(None);
        };
        let dims: Vec<usize> = if keepdims {
            (0..g.rank)
                .map(|k| if axes.contains(&k) { 1 } else { shape[k] })
                .collect()
        } else {
            reduced
        };
        let out_dt = if matches!(self.op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
            DType::I64
        } else {
            dt
        };
        let Some(dst) = empty(py, out_dt, &dims)? else {
            return Ok(None);
        };
        let Ok(dst_arr) = dst.downcast::<PyUntypedArray>() else {
            return Ok(None);
        };
        let mut d = Geo::EMPTY;
        if !d.read(dst_arr, out_dt) {
            return Ok(None);
        }
        let exec = exec_of(threads, tier)?;
        let op = self.op;
        let run = || -> tessera::Result<()> {
            // SAFETY: both geometries were read from numpy arrays held for
            // the call; the destination is new, so it shares no byte with `x`.
            let (xv, mut dv) = unsafe { (g.view()?, d.view_mut()?) };
            tessera::reduce(op, &axes, &xv, &mut dv, &exec)
        };
        if tessera::array::element_count(shape).unwrap_or(usize::MAX) < KEEP_GIL_BELOW {
            held(run)?;
        } else {
            detached(py, run)?;
        }
        if !dims.is_empty() {
            return Ok(Some(dst));
        }
        // A result of rank 0 as numpy's scalar, as numpy's reductions give it.
        // SAFETY: `PyArray_Return` takes the reference `into_ptr` hands over
        // and returns a new one (the scalar), or null with the error set.
        unsafe {
            let p = PY_ARRAY_API
                .PyArray_Return(py, dst.into_ptr() as *mut numpy::npyffi::PyArrayObject);
            Bound::from_owned_ptr_or_err(py, p).map(Some)
        }
    }
}

#[pymethods]
impl Reducer {
    #[new]
    fn new(op: &str, slow: Py<PyAny>, name: String) -> PyResult<Self> {
        let op = ReduceOp::from_name(op)
            .ok_or_else(|| crate::errors::argument_error(format!("unknown reduction `{op}`")))?;
        Ok(Reducer { op, slow, name })
    }

    #[pyo3(signature = (x, axis=None, keepdims=false, dtype=None, out=None, threads=None, tier=None))]
    #[allow(clippy::too_many_arguments)]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        x: Bound<'py, PyAny>,
        axis: Option<Bound<'py, PyAny>>,
        keepdims: bool,
        dtype: Option<Bound<'py, PyAny>>,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
        tier: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if dtype.is_none() && out.is_none() {
            if let Some(r) = self.fast(py, &x, axis.as_ref(), keepdims, threads, tier)? {
                return Ok(r);
            }
        }
        self.slow
            .bind(py)
            .call1((x, axis, keepdims, dtype, out, threads, tier))
    }

    #[getter]
    fn __name__(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("<tessera reduction {}>", self.name)
    }
}
