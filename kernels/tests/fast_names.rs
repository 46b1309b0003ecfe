//! The `fast_*` names that alias a 1-ulp kind (`alias` in spec/kinds.toml):
//! each promises 3.5 ulp and runs its target's kernels, so on every float
//! dtype, tier and layout it must give the target's bits, through the
//! elementwise call and inside a map program. (Their 3.5-ulp bound against
//! f64 references is checked with every other inexact kind in
//! `tests/math.rs`.)

mod common;

use common::*;
use tessera::{
    elementwise, map, result_dtype, Accuracy, ArrayView, ArrayViewMut, Class, DType, Exec, Kind,
    Program,
};
use tessera_testkit::rng::Rng;

/// The Fast names the seed catalogue lists beside the 1-ulp kinds, each with
/// the kind it should run where no faster kernel exists (written here from
/// the catalogue, not read from the spec).
const ALIASES: [(&str, &str); 18] = [
    ("fast_exp2", "exp2"),
    ("fast_expm1", "expm1"),
    ("fast_log2", "log2"),
    ("fast_log10", "log10"),
    ("fast_log1p", "log1p"),
    ("fast_cbrt", "cbrt"),
    ("fast_tan", "tan"),
    ("fast_asin", "asin"),
    ("fast_acos", "acos"),
    ("fast_atan", "atan"),
    ("fast_sinh", "sinh"),
    ("fast_cosh", "cosh"),
    ("fast_asinh", "asinh"),
    ("fast_acosh", "acosh"),
    ("fast_atanh", "atanh"),
    ("fast_erf", "erf"),
    ("fast_atan2", "atan2"),
    ("fast_hypot", "hypot"),
];

fn kind(name: &str) -> Kind {
    Kind::from_name(name).unwrap_or_else(|| panic!("no kind `{name}`"))
}

#[test]
fn every_fast_name_is_a_kind_with_its_targets_shape_and_a_looser_bound() {
    for (fast, target) in ALIASES {
        let (f, t) = (kind(fast), kind(target));
        assert_eq!(f.implementation(), t, "{fast}");
        assert_eq!(t.implementation(), t, "{target}");
        let (fi, ti) = (f.info(), t.info());
        assert_eq!(fi.arity, ti.arity, "{fast}: arity");
        assert_eq!(fi.accepts, ti.accepts, "{fast}: classes");
        assert_eq!(fi.accuracy, Accuracy::Ulp35, "{fast}: the Fast bound");
        assert_eq!(ti.accuracy, Accuracy::Ulp1, "{target}");
        assert_eq!(fi.specials, ti.specials, "{fast}: specials");
        // An operation of the runtime still names its own kind.
        assert_eq!(Kind::from_operation(f.operation()), t, "{fast}");
    }
    // fast_erfc is left out on purpose (erfc has no faster form).
    assert!(Kind::from_name("fast_erfc").is_none());
}

/// The float dtypes a kind runs on (narrow floats, f16, bf16, f32, f64).
fn float_dtypes() -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| d.info().class == Class::Float)
        .collect()
}

/// Run `k` on `codes` (one vector per input, `n` elements each) placed in
/// layout `lay`, into a contiguous destination; its codes.
fn run(
    exec: &Exec,
    k: Kind,
    d: DType,
    codes: &[Vec<u8>],
    n: usize,
    lay: Lay,
    junk: &mut Rng,
) -> Vec<u8> {
    let dt = Dt::of(d);
    let geo = place(lay, &[n], dt.vpb);
    let bufs: Vec<Vec<u8>> = codes.iter().map(|c| store(dt, &geo, c, junk)).collect();
    let views: Vec<ArrayView<'_>> = bufs
        .iter()
        .map(|b| ArrayView::new(d, &geo.shape, &geo.strides, geo.offset, b).expect("a layout"))
        .collect();
    let rd = result_dtype(k, d).expect("a result dtype");
    let rt = Dt::of(rd);
    let out_geo = place(Lay::Contig, &[n], rt.vpb);
    let mut buf = vec![0u8; rt.buffer_bytes(n)];
    {
        let mut out = ArrayViewMut::new(
            rd,
            &out_geo.shape,
            &out_geo.strides,
            out_geo.offset,
            &mut buf,
        )
        .expect("a destination");
        elementwise(k, &views, &mut out, exec).unwrap_or_else(|e| panic!("{k} on {d}: {e}"));
    }
    load(rt, &out_geo, &buf)
}

#[test]
fn every_fast_name_gives_its_targets_bits_on_every_dtype_tier_and_layout() {
    let mut rng = Rng::new(0xfa57_0001);
    let n = 302;
    let mut checked = 0usize;
    for tier in tiers() {
        let exec = Exec::on(tier).threads(1);
        for (fast, target) in ALIASES {
            let (f, t) = (kind(fast), kind(target));
            for d in float_dtypes() {
                let dt = Dt::of(d);
                let codes: Vec<Vec<u8>> = (0..f.info().arity)
                    .map(|_| random_codes(dt, n, &mut rng, true))
                    .collect();
                for lay in [Lay::Contig, Lay::EveryOther, Lay::Reversed] {
                    let want = run(&exec, t, d, &codes, n, lay, &mut rng);
                    let got = run(&exec, f, d, &codes, n, lay, &mut rng);
                    assert!(
                        got == want,
                        "{fast} on {d} ({lay:?}, tier {tier:?}) differs from {target}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 18 * 3, "only {checked} cases ran");
}

#[test]
fn a_fast_name_in_a_map_program_gives_its_targets_bits() {
    let mut rng = Rng::new(0xfa57_0002);
    let n = 5000;
    let xs: Vec<f32> = (0..n)
        .map(|_| f32::from_bits(rng.next_u64() as u32 & 0xbfff_ffff))
        .collect();
    let ys: Vec<f32> = (0..n).map(|i| 0.25 + (i % 17) as f32 * 0.375).collect();
    for tier in tiers() {
        let exec = Exec::on(tier);
        let run = |text: &str| -> Vec<u8> {
            let p = Program::parse(text, &[DType::F32, DType::F32]).expect("a program");
            let mut out = vec![0f32; n];
            let x = ArrayView::from_slice(&xs, &[n]).expect("a view");
            let y = ArrayView::from_slice(&ys, &[n]).expect("a view");
            let mut o = ArrayViewMut::from_slice(&mut out, &[n]).expect("a view");
            map(&p, &[x, y], std::slice::from_mut(&mut o), &exec).expect("runs");
            bits_of(&out)
        };
        for (fast, target) in ALIASES {
            let call = |name: &str| {
                if kind(name).info().arity == 2 {
                    format!("y0 = {name}(x0, x1) * x1")
                } else {
                    format!("y0 = {name}(x0 * x1) + x1")
                }
            };
            assert!(
                run(&call(fast)) == run(&call(target)),
                "{fast} in a program differs from {target} (tier {tier:?})"
            );
        }
    }
}
