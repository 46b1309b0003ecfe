//! References for the transcendental kinds on f32 carriers: the f64 functions
//! of the platform's maths library (`std`, and the `libm` crate for erf and
//! erfc), each within a few f64 ulps — some 2^-29 of an f32 ulp — so an f32
//! result's distance from them is its distance from the exact value to that
//! precision. They are not the code under test (the runtime's functions are in
//! codegen/runtime/math and call no library).

/// The f64 reference of kind `name` at `v`, with the kind's bound in ulps
/// (1 for the default kinds, 3.5 for `fast_*`), or None for a kind that is
/// not a transcendental.
pub fn reference(name: &str, v: &[f64]) -> Option<(f64, f64)> {
    let (base, ulps) = match name.strip_prefix("fast_") {
        Some(b) => (b, 3.5),
        None => (name, 1.0),
    };
    let x = v[0];
    let y = match base {
        "exp" => x.exp(),
        "exp2" => x.exp2(),
        "expm1" => x.exp_m1(),
        "log" => x.ln(),
        "log2" => x.log2(),
        "log10" => x.log10(),
        "log1p" => x.ln_1p(),
        "sin" => x.sin(),
        "cos" => x.cos(),
        "tan" => x.tan(),
        "asin" => x.asin(),
        "acos" => x.acos(),
        "atan" => x.atan(),
        "atan2" => x.atan2(v[1]),
        "sinh" => x.sinh(),
        "cosh" => x.cosh(),
        "tanh" => x.tanh(),
        "asinh" => libm::asinh(x),
        "acosh" if x < 1.0 => f64::NAN,
        "acosh" => libm::acosh(x),
        "atanh" if x.abs() > 1.0 => f64::NAN,
        "atanh" => libm::atanh(x),
        "erf" => libm::erf(x),
        "erfc" => libm::erfc(x),
        "pow" => x.powf(v[1]),
        "hypot" => x.hypot(v[1]),
        "cbrt" => x.cbrt(),
        "sigmoid" => {
            if x < -700.0 {
                x.exp()
            } else {
                1.0 / (1.0 + (-x).exp())
            }
        }
        "rsqrt" => {
            if x == 0.0 {
                1.0 / x
            } else {
                1.0 / x.sqrt()
            }
        }
        _ => return None,
    };
    Some((y, ulps))
}
