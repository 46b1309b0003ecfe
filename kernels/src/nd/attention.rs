//! [`attention`](crate::attention::attention) on ndarray views (the
//! view-based call's results, bit for bit): operands of any layout (views
//! that do not fill their span are read through dense copies), `o` and
//! `lse` written where they lie or through dense copies assigned back only
//! when the call succeeds.

use super::{with_out, In};
use crate::array::{ArrayView, Element};
use crate::attention::Kv;
use crate::error::Result;
use crate::map::Program;
use crate::tier::Exec;
use ndarray::{ArrayView as NdView, ArrayViewMut as NdViewMut, Dimension};

/// [`crate::attention::attention`] of `q` over `k` and `v` (q, k, v and `o`
/// of one rank, `lse` and `lengths` of the ranks the call takes).
#[allow(clippy::too_many_arguments)]
pub fn attention<T: Element, O: Element, A: Element, D: Dimension, E: Dimension, L: Dimension>(
    program: &Program,
    scale: f64,
    q: NdView<'_, T, D>,
    k: NdView<'_, T, D>,
    v: NdView<'_, T, D>,
    loads: &[ArrayView<'_>],
    lengths: Option<NdView<'_, i64, L>>,
    mut o: NdViewMut<'_, O, D>,
    mut lse: NdViewMut<'_, A, E>,
    exec: &Exec,
) -> Result<()> {
    let (iq, ik, iv) = (In::of(&q)?, In::of(&k)?, In::of(&v)?);
    let qv = iq.tessera()?;
    let kv = Kv {
        k: ik.tessera()?,
        v: iv.tessera()?,
    };
    let il = match &lengths {
        Some(l) => Some(In::of(l)?),
        None => None,
    };
    let lv = match &il {
        Some(l) => Some(l.tessera()?),
        None => None,
    };
    with_out(&mut o, |ov| {
        with_out(&mut lse, |lsv| {
            crate::attention::attention(program, scale, &qv, &kv, loads, lv.as_ref(), ov, lsv, exec)
        })
    })
}
