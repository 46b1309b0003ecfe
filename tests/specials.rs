//! The `specials` of spec/kinds.toml: for every kind, every float dtype that
//! represents all the values of a special (its inputs and, for float results,
//! its expected value), on every tier this CPU runs and in every loop variant,
//! the kernel gives the expected value (a NaN: any NaN; zeros by sign).
//!
//! Records `KIND DTYPE TIER VARIANT` of every kernel checked in `specials.txt`
//! of the coverage directory.

mod oracle;

use oracle::harness::{Coverage, Failures};
use tessera_generated::{variants_for, Class, DType, Kind, ResultRule, Tier, Variant};
use tessera_testkit::differential::{kernel, run, Layout};
use tessera_testkit::mini::mini;
use tessera_testkit::values::{code_bytes, decode, in_dtypes, out_dtype, replicate, width, Val};

/// A special's value: "nan", "inf", "-inf", "-0", or a decimal.
fn parse(s: &str) -> f64 {
    s.parse::<f64>()
        .unwrap_or_else(|_| panic!("special value {s:?} is not a number"))
}

/// The storage of x in d, if d holds exactly x (NaN: some NaN; zeros by sign).
fn exactly(d: DType, x: f64) -> Option<Vec<u8>> {
    match d {
        DType::Bool => (x == 0.0 || x == 1.0).then(|| vec![x as u8]),
        DType::F32 => {
            let y = x as f32;
            (x.is_nan() || (y as f64).to_bits() == x.to_bits()).then(|| y.to_le_bytes().to_vec())
        }
        DType::F64 => Some(x.to_le_bytes().to_vec()),
        _ => {
            let m = mini(d)?;
            let code = m.encode(x, false);
            let back = m.decode(code);
            let same = if x.is_nan() {
                back.is_nan()
            } else {
                back.to_bits() == x.to_bits()
            };
            same.then(|| code_bytes(d, code))
        }
    }
}

#[test]
fn specials_of_every_kind_on_every_float_dtype() {
    let tiers: Vec<Tier> = Tier::ALL.into_iter().filter(|t| t.available()).collect();
    let mut coverage = Coverage::default();
    let mut failures = Failures::default();
    let mut applied = 0;
    for kind in Kind::ALL {
        let info = kind.info();
        if !info.accepts.contains(&Class::Float) {
            assert!(
                info.specials.is_empty(),
                "{}: specials are for float dtypes",
                info.name
            );
            continue;
        }
        for special in info.specials {
            assert_eq!(
                special.len(),
                info.arity + 1,
                "{}: {special:?} is not inputs then a result",
                info.name
            );
            let mut dtypes_applied = Vec::new();
            for d in DType::ALL
                .into_iter()
                .filter(|d| d.info().class == Class::Float)
            {
                let in_d = in_dtypes(kind, d);
                let out_d = out_dtype(kind, d);
                let ins: Option<Vec<Vec<u8>>> = in_d
                    .iter()
                    .zip(special.iter())
                    .map(|(&dk, s)| exactly(dk, parse(s)))
                    .collect();
                let want = parse(special[info.arity]);
                let want_bytes = match info.result {
                    ResultRule::Bool => exactly(DType::Bool, want),
                    _ => exactly(out_d, want),
                };
                let (Some(ins), Some(want_bytes)) = (ins, want_bytes) else {
                    continue;
                };
                dtypes_applied.push(d);
                applied += 1;
                let n = 5;
                let in_w: Vec<usize> = in_d.iter().map(|&x| width(x)).collect();
                let ops: Vec<Vec<u8>> = ins
                    .iter()
                    .zip(&in_w)
                    .map(|(b, &w)| replicate(b, w, n))
                    .collect();
                let refs: Vec<&[u8]> = ops.iter().map(|o| o.as_slice()).collect();
                let out_w = width(out_d);
                for &tier in &tiers {
                    for &v in variants_for(info.arity) {
                        let f = kernel(tier, kind, d, v).unwrap();
                        let layouts = match v {
                            Variant::Strided => Layout::strided().to_vec(),
                            _ => vec![Layout::unit(v, 1)],
                        };
                        for layout in layouts {
                            let at = format!(
                                "{} {} {} {} {special:?}",
                                info.name,
                                d.name(),
                                tier.name(),
                                v.name()
                            );
                            let got = match run(f, &in_w, out_w, &refs, n, &layout) {
                                Ok(g) => g,
                                Err(e) => {
                                    failures.push_at(
                                        &format!(
                                            "{} {} {} {}",
                                            info.name,
                                            d.name(),
                                            tier.name(),
                                            v.name()
                                        ),
                                        format!("{at}: {e}"),
                                    );
                                    continue;
                                }
                            };
                            for i in 0..n {
                                let g = &got[i * out_w..(i + 1) * out_w];
                                let ok = match (decode(out_d, g), decode(out_d, &want_bytes)) {
                                    (Val::F(a), Val::F(b)) if b.is_nan() => a.is_nan(),
                                    _ => g == want_bytes.as_slice(),
                                };
                                if !ok {
                                    failures.push_at(
                                        &format!(
                                            "{} {} {} {}",
                                            info.name,
                                            d.name(),
                                            tier.name(),
                                            v.name()
                                        ),
                                        format!(
                                            "{at}: element {i} is {g:02x?} = {:?}, want {}",
                                            decode(out_d, g),
                                            special[info.arity]
                                        ),
                                    );
                                    break;
                                }
                            }
                        }
                        coverage.add(kind, d, tier, v);
                    }
                }
            }
            // f32 and f64 hold every value a special can name: a special they
            // skip is one this test cannot read.
            for d in [DType::F32, DType::F64] {
                assert!(
                    dtypes_applied.contains(&d),
                    "{} special {special:?} does not apply to {}",
                    info.name,
                    d.name()
                );
            }
        }
    }
    coverage.write("specials.txt");
    eprintln!(
        "specials: {applied} (kind, special, dtype) cases, {} kernels on {} tiers",
        coverage.len(),
        tiers.len()
    );
    failures.finish("specials");
}
