//! Polynomial evaluation by Horner's rule, as a fused `map` program (one
//! pass, any layout, the same bits on every tier and at every thread count).

use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::map::{map, Program, ProgramBuilder};
use crate::quant::{refuse, to};
use crate::reduce::carrier;
use crate::tier::Exec;
use crate::{Class, DType, Kind};

/// The program of [`polyval`] for `coeffs` on data of `x`: Horner's rule in
/// the carrier.
pub fn polyval_program(coeffs: &[f64], x: DType, y: DType) -> Result<Program> {
    let Some((&first, rest)) = coeffs.split_first() else {
        return Err(refuse(
            "polyval",
            "a polynomial needs at least one coefficient".into(),
        ));
    };
    let c = carrier(x);
    let mut b = ProgramBuilder::with_inputs(&[x]);
    let x0 = b.load(0, x)?;
    let xc = to(&mut b, x0, c)?;
    let mut acc = b.constant(first, c)?;
    for &k in rest {
        let kc = b.constant(k, c)?;
        acc = b.apply(Kind::Fma, &[acc, xc, kc])?;
    }
    let out = to(&mut b, acc, y)?;
    b.output(out)?;
    b.build()
}

/// `y = c₀·xⁿ⁻¹ + c₁·xⁿ⁻² + … + cₙ₋₁` (numpy's `polyval` order, highest
/// degree first) by Horner's rule: `acc = c₀`, then `acc = fma(acc, x, cᵢ)`
/// for each following coefficient (one rounding each), in the carrier (f32
/// for f32 and narrower floats, f64 for f64; each coefficient rounded once
/// into it), then one rounding into `y`'s dtype. `x` and `y` are floats of
/// one shape. Refuses no coefficient, non-float operands, mismatched shapes.
pub fn polyval(
    coeffs: &[f64],
    x: &ArrayView<'_>,
    y: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    for (name, d) in [("x", x.dtype()), ("y", y.dtype())] {
        if d.info().class != Class::Float {
            return Err(refuse(
                "polyval",
                format!("{name} must be a float dtype, not {d}"),
            ));
        }
    }
    if y.shape() != x.shape() {
        return Err(Error::Shape {
            operand: "y".into(),
            shape: y.shape().to_vec(),
            target: x.shape().to_vec(),
        });
    }
    let program = polyval_program(coeffs, x.dtype(), y.dtype())?;
    map(
        &program,
        std::slice::from_ref(x),
        std::slice::from_mut(y),
        exec,
    )
}
