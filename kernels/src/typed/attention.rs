//! [`attention`](crate::attention::attention) on typed slices in C order:
//! `q` `[batch, hq, tq, dk]`, `k` `[batch, hk, tk, dk]`, `v` `[batch, hk,
//! tk, dv]`, `o` `[batch, hq, tq, dv]`, `lse` `[batch, hq, tq]`, optional
//! `lengths` `[batch]` — the view-based call's results, bit for bit. Every
//! slice's length must be its shape's ([`Error::Length`](crate::Error::Length)); the rest of the
//! refusals are the view-based call's.
//!
//! ```
//! use tessera::attention::programs;
//! use tessera::typed::attention::{attention, Dims};
//! use tessera::{DType, Exec};
//!
//! let dims = Dims { batch: 1, hq: 2, hk: 1, tq: 2, tk: 3, dk: 2, dv: 1 };
//! let q = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0];
//! let k = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0];
//! let v = [1.0f32, 2.0, 3.0];
//! let (mut o, mut lse) = ([0.0f32; 4], [0.0f32; 4]);
//! let causal = programs::causal(DType::F32, 4, 0)?;
//! attention(&causal, 1.0, &q, &k, &v, &dims, &[], None, &mut o, &mut lse, &Exec::default())?;
//! assert_eq!(o[0], 1.0); // row 0 sees key 0 alone
//! # Ok::<(), tessera::Error>(())
//! ```

use crate::array::{ArrayView, ArrayViewMut, Element};
use crate::attention::Kv;
use crate::error::Result;
use crate::map::Program;
use crate::tier::Exec;

/// The extents of a typed attention (one lead axis, `batch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// The lead axis.
    pub batch: usize,
    /// Query heads.
    pub hq: usize,
    /// Key heads (dividing `hq`).
    pub hk: usize,
    /// Query rows.
    pub tq: usize,
    /// Keys.
    pub tk: usize,
    /// Depth of queries and keys.
    pub dk: usize,
    /// Depth of values.
    pub dv: usize,
}

fn sized<'a, T: Element>(what: &str, s: &'a [T], shape: &[usize]) -> Result<ArrayView<'a>> {
    check(what, s.len(), shape)?;
    ArrayView::from_slice(s, shape)
}

fn sized_mut<'a, T: Element>(
    what: &str,
    s: &'a mut [T],
    shape: &[usize],
) -> Result<ArrayViewMut<'a>> {
    check(what, s.len(), shape)?;
    ArrayViewMut::from_slice(s, shape)
}

fn check(what: &str, got: usize, shape: &[usize]) -> Result<()> {
    super::check_len(what, format!("{what} {shape:?}"), got, shape)
}

/// [`crate::attention::attention`] on slices of `dims`' shapes; `loads` are
/// views (of any dtype and layout) broadcasting to `[batch, hq, tq, tk]`.
#[allow(clippy::too_many_arguments)]
pub fn attention<T: Element, O: Element, A: Element>(
    program: &Program,
    scale: f64,
    q: &[T],
    k: &[T],
    v: &[T],
    dims: &Dims,
    loads: &[ArrayView<'_>],
    lengths: Option<&[i64]>,
    o: &mut [O],
    lse: &mut [A],
    exec: &Exec,
) -> Result<()> {
    let d = dims;
    let qv = sized("q", q, &[d.batch, d.hq, d.tq, d.dk])?;
    let kv = Kv {
        k: sized("k", k, &[d.batch, d.hk, d.tk, d.dk])?,
        v: sized("v", v, &[d.batch, d.hk, d.tk, d.dv])?,
    };
    let lv = match lengths {
        Some(l) => Some(sized("lengths", l, &[d.batch])?),
        None => None,
    };
    let mut ov = sized_mut("o", o, &[d.batch, d.hq, d.tq, d.dv])?;
    let mut lsv = sized_mut("lse", lse, &[d.batch, d.hq, d.tq])?;
    crate::attention::attention(
        program,
        scale,
        &qv,
        &kv,
        loads,
        lv.as_ref(),
        &mut ov,
        &mut lsv,
        exec,
    )
}
