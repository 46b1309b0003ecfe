//! The ordering kernels as calls: `sort`, `argsort`, `median`, `quantile`,
//! `lower_bound`, `intersect`, `difference`, `compress` and `partition`.
//!
//! ```json
//! {"kernel": "sort", "attrs": {"axis": 1, "descending": false, "k": 10},
//!  "operands": {"x": {"npy": "x.npy"}},
//!  "results": {"values": {"npy": "v.npy"}, "positions": {"npy": "p.npy"}}}
//! ```
//!
//! `sort` writes `values` (x's dtype) and `positions` (i64); `argsort`
//! `positions` alone; `axis` defaults to the last, `descending` to false, `k`
//! (the elements kept along the axis: top-k) to all, `order` to
//! `"nan_last"` (the library's `sort`; `"total"`: IEEE totalOrder, the
//! library's `sort_with` and `FloatOrder::Total`). `median` and
//! `quantile` (attribute `q` in [0, 1]) reduce `axis` of x into `y` (f64).
//! `lower_bound` takes a 1-D sorted `a` and queries `q` into `y` (i64, q's
//! shape). `intersect` and `difference` take sorted sets `a`, `b` and
//! `compress` an `x` and a bool `mask`: their `y` holds the elements written
//! (its length is the count). `partition` takes `x` and a one-element
//! `pivot` into `y` (x's shape) and reports the count below. Order, bounds
//! and refusals are the library's (`tessera::order`); sub-byte dtypes are not
//! taken here.

use super::{count_attr, number_attr, whole_byte_view};
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::npy;
use crate::operand;
use crate::results::Results;
use std::path::Path;
use tessera::{DType, Exec};

/// Which ordering kernel a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderKernel {
    /// `sort`.
    Sort,
    /// `argsort`.
    Argsort,
    /// `median`.
    Median,
    /// `quantile`.
    Quantile,
    /// `lower_bound`.
    LowerBound,
    /// `intersect`.
    Intersect,
    /// `difference`.
    Difference,
    /// `compress`.
    Compress,
    /// `partition`.
    Partition,
}

impl OrderKernel {
    /// Every ordering kernel.
    pub const ALL: [OrderKernel; 9] = [
        OrderKernel::Sort,
        OrderKernel::Argsort,
        OrderKernel::Median,
        OrderKernel::Quantile,
        OrderKernel::LowerBound,
        OrderKernel::Intersect,
        OrderKernel::Difference,
        OrderKernel::Compress,
        OrderKernel::Partition,
    ];

    /// The kernel named `name`.
    pub fn from_name(name: &str) -> Option<OrderKernel> {
        OrderKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its name in call files.
    pub fn name(self) -> &'static str {
        match self {
            OrderKernel::Sort => "sort",
            OrderKernel::Argsort => "argsort",
            OrderKernel::Median => "median",
            OrderKernel::Quantile => "quantile",
            OrderKernel::LowerBound => "lower_bound",
            OrderKernel::Intersect => "intersect",
            OrderKernel::Difference => "difference",
            OrderKernel::Compress => "compress",
            OrderKernel::Partition => "partition",
        }
    }

    /// Its operands, results and attributes.
    pub fn io(
        self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    ) {
        match self {
            OrderKernel::Sort => (
                &["x"],
                &["values", "positions"],
                &["axis", "descending", "k", "order"],
            ),
            OrderKernel::Argsort => (
                &["x"],
                &["positions"],
                &["axis", "descending", "k", "order"],
            ),
            OrderKernel::Median => (&["x"], &["y"], &["axis"]),
            OrderKernel::Quantile => (&["x"], &["y"], &["axis", "q"]),
            OrderKernel::LowerBound => (&["a", "q"], &["y"], &[]),
            OrderKernel::Intersect | OrderKernel::Difference => (&["a", "b"], &["y"], &[]),
            OrderKernel::Compress => (&["x", "mask"], &["y"], &[]),
            OrderKernel::Partition => (&["x", "pivot"], &["y"], &[]),
        }
    }

    /// What `tessera kernels` says of it.
    pub fn doc(self) -> &'static str {
        match self {
            OrderKernel::Sort => "Stable sort along axis in the total order -inf < ... < -0 < +0 < ... < +inf < NaN (every NaN equal; complex by real, then imaginary part), values bits unchanged and i64 positions; descending keeps equal elements in increasing position; k keeps the first k (top-k); order \"total\" sorts floats in IEEE totalOrder instead (-NaN < -inf < ... < +inf < +NaN)",
            OrderKernel::Argsort => "The i64 positions of sort's order along axis (first k)",
            OrderKernel::Median => "Median along axis into f64 (mean of the two middle elements for even n); NaN where a slice holds a NaN",
            OrderKernel::Quantile => "Quantile q along axis into f64, linear interpolation as numpy's default; NaN where a slice holds a NaN",
            OrderKernel::LowerBound => "For each query, the count of elements of the sorted 1-D a strictly below it in sort's order (i64)",
            OrderKernel::Intersect => "Elements of sorted duplicate-free a also in b (u32, u64, i32, i64), in order",
            OrderKernel::Difference => "Elements of sorted duplicate-free a not in b (u32, u64, i32, i64), in order",
            OrderKernel::Compress => "Elements of 1-D x whose bool mask is set, in order",
            OrderKernel::Partition => "Elements of 1-D x strictly below pivot in sort's order, then the rest, each in order",
        }
    }
}

/// Run `which` as described by `call`; returns the lines to report.
pub fn call(
    call_path: &Path,
    call: &Call,
    which: OrderKernel,
    exec: &Exec,
    results: &mut Results,
) -> Outcome<Vec<String>> {
    let k = which.name();
    let (ops, _, _) = which.io();
    super::expect_io(k, call, which.io())?;
    let fail = |e: tessera::Error| Failure::run(format!("kernel `{k}`: {e}"));
    let loaded: Vec<operand::Loaded> = ops
        .iter()
        .map(|n| operand::load(call_path, n, &call.operands.0[*n]))
        .collect::<Outcome<_>>()?;
    let views: Vec<tessera::ArrayView<'_>> = loaded
        .iter()
        .map(|x| whole_byte_view(k, x))
        .collect::<Outcome<_>>()?;
    let x = &views[0];
    let rank = x.shape().len();
    let axis =
        count_attr(k, &call.attrs, "axis", "an axis number")?.unwrap_or(rank.saturating_sub(1));
    let descending = match call.attrs.0.get("descending") {
        None => false,
        Some(v) => v.as_bool().ok_or_else(|| {
            Failure::usage(format!(
                "kernel `{k}`: attribute descending must be true or false, not {}",
                super::truncate(&v.to_string(), 40)
            ))
        })?,
    };
    let float_order = match call.attrs.0.get("order") {
        None => tessera::FloatOrder::NanLast,
        Some(v) => match v.as_str() {
            Some("nan_last") => tessera::FloatOrder::NanLast,
            Some("total") => tessera::FloatOrder::Total,
            _ => {
                return Err(Failure::usage(format!(
                    "kernel `{k}`: attribute order must be \"nan_last\" or \"total\", not {}",
                    super::truncate(&v.to_string(), 40)
                )))
            }
        },
    };
    let new = |dtype: DType, shape: &[usize]| -> Outcome<Vec<u8>> {
        let bytes = npy::byte_size(shape, dtype.info().item_bytes)
            .map_err(|e| Failure::run(format!("result: {e}")))?;
        operand::zeroed(bytes)
    };
    let mut lines = Vec::new();
    match which {
        OrderKernel::Sort | OrderKernel::Argsort => {
            let mut shape = x.shape().to_vec();
            if axis < rank {
                let n = shape[axis];
                shape[axis] = count_attr(k, &call.attrs, "k", "a count")?.unwrap_or(n);
            }
            let mut pbuf = new(DType::I64, &shape)?;
            let mut vbuf = new(x.dtype(), &shape)?;
            {
                let mut p = super::result_view("positions", DType::I64, &shape, &mut pbuf)?;
                if which == OrderKernel::Sort {
                    let mut v = super::result_view("values", x.dtype(), &shape, &mut vbuf)?;
                    tessera::order::sort_with(
                        axis,
                        descending,
                        float_order,
                        x,
                        &mut v,
                        Some(&mut p),
                        exec,
                    )
                    .map_err(fail)?;
                } else {
                    tessera::order::argsort_with(axis, descending, float_order, x, &mut p, exec)
                        .map_err(fail)?;
                }
            }
            if which == OrderKernel::Sort {
                let path = results.add("values", x.dtype(), &shape, &vbuf)?;
                lines.push(format!(
                    "{k} along axis {axis}: values {} {shape:?} -> {}",
                    x.dtype(),
                    path.display()
                ));
            }
            let path = results.add("positions", DType::I64, &shape, &pbuf)?;
            lines.push(format!(
                "{k} along axis {axis}: positions i64 {shape:?} -> {}",
                path.display()
            ));
        }
        OrderKernel::Median | OrderKernel::Quantile => {
            let mut shape = x.shape().to_vec();
            if axis < rank {
                shape.remove(axis);
            }
            let mut buf = new(DType::F64, &shape)?;
            {
                let mut y = super::result_view("y", DType::F64, &shape, &mut buf)?;
                if which == OrderKernel::Median {
                    tessera::order::median(axis, x, &mut y, exec).map_err(fail)?;
                } else {
                    let q = number_attr(k, &call.attrs, "q")?
                        .ok_or_else(|| Failure::usage(format!("kernel `{k}` needs attribute q")))?;
                    tessera::order::quantile(q, axis, x, &mut y, exec).map_err(fail)?;
                }
            }
            let path = results.add("y", DType::F64, &shape, &buf)?;
            lines.push(format!(
                "{k} along axis {axis}: y = f64 {shape:?} -> {}",
                path.display()
            ));
        }
        OrderKernel::LowerBound => {
            let q = &views[1];
            let shape = q.shape().to_vec();
            let mut buf = new(DType::I64, &shape)?;
            {
                let mut y = super::result_view("y", DType::I64, &shape, &mut buf)?;
                tessera::order::lower_bound(x, q, &mut y, exec).map_err(fail)?;
            }
            let path = results.add("y", DType::I64, &shape, &buf)?;
            lines.push(format!("{k}: y = i64 {shape:?} -> {}", path.display()));
        }
        OrderKernel::Intersect | OrderKernel::Difference | OrderKernel::Compress => {
            let cap = x.shape().first().copied().unwrap_or(0);
            let cap = if which == OrderKernel::Intersect {
                cap.min(views[1].shape().first().copied().unwrap_or(0))
            } else {
                cap
            };
            let mut buf = new(x.dtype(), &[cap])?;
            let count = {
                let mut y = super::result_view("y", x.dtype(), &[cap], &mut buf)?;
                let b = &views[1];
                match which {
                    OrderKernel::Intersect => tessera::order::intersect(x, b, &mut y, exec),
                    OrderKernel::Difference => tessera::order::difference(x, b, &mut y, exec),
                    _ => tessera::order::compress(x, b, &mut y, exec),
                }
                .map_err(fail)?
            };
            buf.truncate(count * x.dtype().info().item_bytes);
            let path = results.add("y", x.dtype(), &[count], &buf)?;
            lines.push(format!(
                "{k}: {count} elements, y = {} [{count}] -> {}",
                x.dtype(),
                path.display()
            ));
        }
        OrderKernel::Partition => {
            let shape = x.shape().to_vec();
            let mut buf = new(x.dtype(), &shape)?;
            let below = {
                let mut y = super::result_view("y", x.dtype(), &shape, &mut buf)?;
                tessera::order::partition(x, &views[1], &mut y, exec).map_err(fail)?
            };
            let path = results.add("y", x.dtype(), &shape, &buf)?;
            lines.push(format!(
                "{k}: {below} below the pivot, y = {} {shape:?} -> {}",
                x.dtype(),
                path.display()
            ));
        }
    }
    Ok(lines)
}
