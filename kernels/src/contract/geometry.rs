//! The geometry of a contraction: its operands' axes checked against the
//! spec and split into batch, row, column and depth extents and strides,
//! and the position tables the drivers read the operands through.

use super::{pack, ContractSpec, ACCUMULATORS};
use crate::array::count_of;
use crate::error::{Error, Result};
use crate::DType;

/// The validated geometry of a call.
pub(super) struct Geometry {
    /// The destination's batch extents.
    pub(super) batch: Vec<usize>,
    pub(super) a_batch_strides: Vec<isize>,
    pub(super) b_batch_strides: Vec<isize>,
    pub(super) rows: Vec<usize>,
    pub(super) a_row_strides: Vec<isize>,
    pub(super) cols: Vec<usize>,
    pub(super) b_col_strides: Vec<isize>,
    pub(super) depth: Vec<usize>,
    pub(super) a_k_strides: Vec<isize>,
    pub(super) b_k_strides: Vec<isize>,
    pub(super) out_shape: Vec<usize>,
}

/// Refuses an accumulator [`contract`] does not take.
pub(crate) fn check_accumulator(acc: DType) -> Result<()> {
    if ACCUMULATORS.contains(&acc) {
        Ok(())
    } else {
        Err(Error::DTypeUnsupported {
            operand: "contract: the accumulator".into(),
            dtype: acc,
            reason: "the accumulator is one of f32, f64, c64, c128, df32, dd64 or an integer of 4 \
                     to 64 bits (i4, u4, i8, u8, i16, u16, i32, u32, i64, u64)"
                .into(),
        })
    }
}

/// Check the axis pairs against the operands' shapes and return the geometry.
pub(super) fn geometry(
    a: &[usize],
    sa: &[isize],
    b: &[usize],
    sb: &[isize],
    spec: &ContractSpec,
) -> Result<Geometry> {
    let mut used_a = vec![false; a.len()];
    let mut used_b = vec![false; b.len()];
    let pairs = spec
        .batch
        .iter()
        .map(|p| ("batch", p))
        .chain(spec.contracting.iter().map(|p| ("contracting", p)));
    for (what, &(x, y)) in pairs {
        let axis = |name: &str, axis: usize, reason: String| Error::Axis {
            operand: format!("contract: {name}"),
            axis,
            reason,
        };
        if x >= a.len() {
            let reason = format!("({what}) is out of range: a has {} axes", a.len());
            return Err(axis("a", x, reason));
        }
        if y >= b.len() {
            let reason = format!("({what}) is out of range: b has {} axes", b.len());
            return Err(axis("b", y, reason));
        }
        if std::mem::replace(&mut used_a[x], true) {
            return Err(axis("a", x, "is named twice".into()));
        }
        if std::mem::replace(&mut used_b[y], true) {
            return Err(axis("b", y, "is named twice".into()));
        }
    }
    let mut g = Geometry {
        batch: vec![],
        a_batch_strides: vec![],
        b_batch_strides: vec![],
        rows: vec![],
        a_row_strides: vec![],
        cols: vec![],
        b_col_strides: vec![],
        depth: vec![],
        a_k_strides: vec![],
        b_k_strides: vec![],
        out_shape: vec![],
    };
    for &(x, y) in &spec.batch {
        let (n, m) = (a[x], b[y]);
        if n != m && n != 1 && m != 1 {
            return Err(Error::Axis {
                operand: "contract: a".into(),
                axis: x,
                reason: format!(
                    "(batch, extent {n}) and axis {y} of b (extent {m}) differ and neither is 1"
                ),
            });
        }
        let e = if n == 1 { m } else { n };
        g.batch.push(e);
        g.a_batch_strides.push(if n == 1 { 0 } else { sa[x] });
        g.b_batch_strides.push(if m == 1 { 0 } else { sb[y] });
    }
    for &(x, y) in &spec.contracting {
        if a[x] != b[y] {
            return Err(Error::Axis {
                operand: "contract: a".into(),
                axis: x,
                reason: format!(
                    "(contracted, extent {}) and axis {y} of b (extent {}) differ",
                    a[x], b[y]
                ),
            });
        }
        g.depth.push(a[x]);
        g.a_k_strides.push(sa[x]);
        g.b_k_strides.push(sb[y]);
    }
    for (i, &n) in a.iter().enumerate() {
        if !used_a[i] {
            g.rows.push(n);
            g.a_row_strides.push(sa[i]);
        }
    }
    for (i, &n) in b.iter().enumerate() {
        if !used_b[i] {
            g.cols.push(n);
            g.b_col_strides.push(sb[i]);
        }
    }
    g.out_shape = g
        .batch
        .iter()
        .chain(&g.rows)
        .chain(&g.cols)
        .copied()
        .collect();
    // Shapes given as such (the queries) are checked as views' are; the
    // destination's may overflow where the operands are empty.
    count_of(a, "contract: a")?;
    count_of(b, "contract: b")?;
    count_of(&g.out_shape, "contract: the destination's shape")?;
    Ok(g)
}

/// Positions of one operand's elements: per batch element, per row (or
/// column) and per depth index (each table reserved fallibly: the depth,
/// which the destination does not bound, may be a broadcast operand's, far
/// longer than what it stores).
pub(super) struct Tables {
    pub(super) a_batch: Vec<isize>,
    pub(super) a_rows: Vec<isize>,
    pub(super) a_ks: Vec<isize>,
    pub(super) b_batch: Vec<isize>,
    pub(super) b_ks: Vec<isize>,
    pub(super) b_cols: Vec<isize>,
    /// Lane order reads each output's row and column block by block
    /// instead of gathering whole rows and columns first.
    pub(super) streamed: bool,
}

impl Tables {
    /// The tables of `g`; `streamed` as the field.
    pub(super) fn of(
        g: &Geometry,
        a_offset: usize,
        b_offset: usize,
        streamed: bool,
    ) -> Result<Tables> {
        let mut t = Tables {
            a_batch: pack::offsets(&g.batch, &g.a_batch_strides)?,
            a_rows: pack::offsets(&g.rows, &g.a_row_strides)?,
            a_ks: pack::offsets(&g.depth, &g.a_k_strides)?,
            b_batch: pack::offsets(&g.batch, &g.b_batch_strides)?,
            b_ks: pack::offsets(&g.depth, &g.b_k_strides)?,
            b_cols: pack::offsets(&g.cols, &g.b_col_strides)?,
            streamed,
        };
        t.a_batch.iter_mut().for_each(|x| *x += a_offset as isize);
        t.b_batch.iter_mut().for_each(|x| *x += b_offset as isize);
        Ok(t)
    }
}
