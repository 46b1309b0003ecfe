//! Every kernel on every tier this CPU runs, in every loop variant, against the
//! scalar tier, bit for bit; every variant of the scalar tier against its
//! contiguous kernel on the same logical operands (results never depend on
//! layout); in-place runs against out-of-place ones. Sizes 0, 1, 7, 33, 257
//! and 1000, strides 2, -1, 0 and 3 for the strided kernels, misaligned
//! buffers, guard bytes around every destination.
//!
//! NaN results are compared as NaN, not bit for bit. Both tiers compile the
//! same source, but the compiler may commute the operands of an IEEE addition
//! or multiplication, and x86 returns the first operand's NaN when both are
//! NaN (or the default NaN, with the sign bit set, for an invalid operation):
//! `NaN(+) + NaN(-)` gives a different sign in the scalar tier's contiguous
//! and broadcast loops, and between tiers. The design (§5.1) leaves the sign
//! and payload of a NaN result out of the contract; everything else, the sign
//! of every zero and infinity included, is compared bit for bit. How many
//! elements differed only in their NaN bits is printed.
//!
//! Records `KIND DTYPE TIER VARIANT` for every non-scalar kernel checked, in
//! `differential.txt` of the coverage directory.

mod oracle;

use oracle::harness::{par_map, Coverage, Failures};
use std::collections::BTreeSet;
use tessera::tier::kernel_table;
use tessera_generated::{
    kernel_index, variants_for, DType, Kind, Tier, Variant, KERNELS, KERNEL_COUNT,
};
use tessera_testkit::differential::{check, Case, Checked, Diff, Layout, Subject};
use tessera_testkit::rng::{seed, Rng};
use tessera_testkit::values::{decode, push_operand, replicate};

const SIZES: [usize; 6] = [0, 1, 7, 33, 257, 1000];

/// The distinct (kind, dtype) pairs of the kernel table, in table order.
fn groups() -> Vec<(Kind, DType)> {
    let mut seen = BTreeSet::new();
    KERNELS
        .iter()
        .filter(|k| seen.insert((k.kind, k.dtype)))
        .map(|k| (k.kind, k.dtype))
        .collect()
}

/// NaN results that differed only in sign or payload.
static NAN_BIT_DIFFERENCES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The first element of an output that is not the result wanted, described,
/// or None where every element is (NaN results that differ only in their
/// bits are counted).
fn first_difference(d: DType, got: &[u8], want: &[u8], diff: Diff) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} bytes, want {}", got.len(), want.len()));
    }
    let Some(i) = diff.first else {
        NAN_BIT_DIFFERENCES.fetch_add(diff.nan_only, std::sync::atomic::Ordering::Relaxed);
        return None;
    };
    let w = d.info().item_bytes;
    let (g, x) = (&got[i * w..(i + 1) * w], &want[i * w..(i + 1) * w]);
    Some(format!(
        "element {i}: {g:02x?} = {:?}, want {x:02x?} = {:?}",
        decode(d, g),
        decode(d, x)
    ))
}

#[test]
fn kernel_table_matches_the_spec() {
    assert_eq!(KERNELS.len(), KERNEL_COUNT);
    for (i, k) in KERNELS.iter().enumerate() {
        assert_eq!(kernel_index(k.kind, k.dtype, k.variant), Some(i), "{k:?}");
    }
    let mut expected = 0;
    for kind in Kind::ALL {
        let info = kind.info();
        for d in DType::ALL {
            // A kind that makes a pair exists for its two components alone
            // (f32 and f64), one that makes a complex number for the float
            // dtypes of a complex dtype's parts (f32, f64, f16, bf16).
            let accepted = info.accepts.contains(&d.info().class)
                && match info.result {
                    tessera_generated::ResultRule::Pair => matches!(d, DType::F32 | DType::F64),
                    tessera_generated::ResultRule::Complex => {
                        matches!(d, DType::F32 | DType::F64 | DType::F16 | DType::Bf16)
                    }
                    _ => true,
                };
            for v in Variant::ALL {
                let declared = accepted && variants_for(info.arity).contains(&v);
                expected += declared as usize;
                assert_eq!(
                    kernel_index(kind, d, v).is_some(),
                    declared,
                    "{} {} {}",
                    kind.name(),
                    d.name(),
                    v.name()
                );
            }
        }
    }
    assert_eq!(expected, KERNEL_COUNT);
    // Broadcast variants exist for each input of kinds of two or more inputs.
    assert_eq!(variants_for(1), &[Variant::Contig, Variant::Strided]);
    assert_eq!(
        variants_for(2),
        &[
            Variant::Contig,
            Variant::Bcast0,
            Variant::Bcast1,
            Variant::Strided
        ]
    );
    assert_eq!(variants_for(3).len(), 5);
    for tier in Tier::ALL {
        if let Some(t) = kernel_table(tier) {
            assert!(tier.available());
            assert_eq!(t.len(), KERNEL_COUNT, "{}", tier.name());
        }
    }
    assert!(Tier::Scalar.available() && kernel_table(Tier::Scalar).is_some());
}

/// Every kind but an alias computes through an operation of the runtime of
/// its own, which maps back to it: the catalogue's two matches are inverse,
/// and no two such kinds share an operation. An alias computes through its
/// target's operation, and only an alias has a target other than itself.
#[test]
fn kinds_and_operations_map_one_to_one() {
    let mut seen = BTreeSet::new();
    let mut own = 0;
    for k in Kind::ALL {
        let op = k.operation();
        let target = k.implementation();
        assert_eq!(
            Kind::from_operation(op),
            target,
            "{k} computes through {op:?}"
        );
        assert_eq!(target.implementation(), target, "{k}: an alias of an alias");
        if target == k {
            own += 1;
            assert!(seen.insert(op), "{op:?} computes two kinds");
        } else {
            assert_eq!(k.info().arity, target.info().arity, "{k}");
        }
    }
    assert_eq!(seen.len(), own);
}

struct GroupResult {
    coverage: Coverage,
    failures: Failures,
    runs: usize,
}

fn check_group(kind: Kind, d: DType, tiers: &[Tier]) -> GroupResult {
    let mut res = GroupResult {
        coverage: Coverage::default(),
        failures: Failures::default(),
        runs: 0,
    };
    let name = format!("{} {}", kind.name(), d.name());
    let mut rng = Rng::for_label(&format!("differential {name}"), seed());
    for (si, &n) in SIZES.iter().enumerate() {
        for &v in variants_for(kind.info().arity) {
            let subject = Subject::kernel(kind, d, v, tiers)
                .expect("the scalar tier has every kernel and its contiguous variant");
            let in_w = subject.in_widths();
            let layouts = match v {
                Variant::Strided => Layout::strided().to_vec(),
                _ => vec![Layout::unit(v, si % 2)],
            };
            for layout in layouts {
                let ins: Vec<Vec<u8>> = subject
                    .inputs
                    .iter()
                    .enumerate()
                    .map(|(k, &dk)| {
                        let mut b = Vec::new();
                        push_operand(dk, &mut rng, n.max(1), &mut b);
                        if layout.src[k] == 0 {
                            replicate(&b, in_w[k], n)
                        } else {
                            b.truncate(n * in_w[k]);
                            b
                        }
                    })
                    .collect();
                let refs: Vec<&[u8]> = ins.iter().map(|x| x.as_slice()).collect();
                let at = format!("{name} n={n} {} {layout:?}", v.name());
                let case = Case {
                    n,
                    inputs: &refs,
                    layout,
                    in_place: true,
                };
                let outcome = check(&subject, &case);
                let want = match &outcome.reference {
                    Ok(w) => w,
                    Err(e) => {
                        res.failures.push_at(
                            &format!("{name} scalar contig"),
                            format!("{name} scalar contig n={n}: {e}"),
                        );
                        continue;
                    }
                };
                let base = match &outcome.scalar.output {
                    Ok(b) => b,
                    Err(e) => {
                        res.failures.push_at(
                            &format!("{name} scalar {}", v.name()),
                            format!("{at} scalar: {e}"),
                        );
                        continue;
                    }
                };
                res.runs += outcome.runs();
                let out_d = subject.out;
                if let Some(diff) = outcome
                    .scalar
                    .diff
                    .and_then(|x| first_difference(out_d, base, want, x))
                {
                    res.failures.push_at(
                        &format!("{name} scalar {}", v.name()),
                        format!(
                            "{at}: scalar {} differs from scalar contig: {diff}",
                            v.name()
                        ),
                    );
                }
                for t in &outcome.tiers {
                    let key = format!("{name} {} {}", t.tier.name(), v.name());
                    match &t.output {
                        Ok(got) => {
                            if let Some(diff) =
                                t.diff.and_then(|x| first_difference(out_d, got, base, x))
                            {
                                res.failures.push_at(
                                    &key,
                                    format!("{at}: {} differs from scalar: {diff}", t.tier.name()),
                                );
                            }
                        }
                        Err(e) => res
                            .failures
                            .push_at(&key, format!("{at} {}: {e}", t.tier.name())),
                    }
                    res.coverage.add(kind, d, t.tier, v);
                }
                // In place: the destination is input 0, same pointer and stride.
                for t in &outcome.in_place {
                    if let Some(diff) = in_place_difference(out_d, t, want) {
                        res.failures.push_at(
                            &format!("{name} {} {} in place", t.tier.name(), v.name()),
                            format!("{at} {} in place: {diff}", t.tier.name()),
                        );
                    }
                }
            }
        }
    }
    res
}

/// What an in-place run got wrong, if anything.
fn in_place_difference(d: DType, t: &Checked, want: &[u8]) -> Option<String> {
    match &t.output {
        Ok(got) => t.diff.and_then(|x| first_difference(d, got, want, x)),
        Err(e) => Some(e.clone()),
    }
}

#[test]
fn every_kernel_on_every_tier_matches_scalar() {
    // (Where no tier besides scalar runs, layouts and in-place runs are
    // still checked.)
    let tiers = tessera_testkit::differential::compared_tiers(|_| true);
    let start = std::time::Instant::now();
    let results = par_map(&groups(), |&(kind, d)| check_group(kind, d, &tiers));
    let mut coverage = Coverage::default();
    let mut failures = Failures::default();
    let mut runs = 0;
    for r in results {
        coverage.merge(r.coverage);
        failures.merge(r.failures);
        runs += r.runs;
    }
    coverage.write("differential.txt");
    eprintln!(
        "differential: {runs} kernel runs, {} kernels recorded on {:?}, {} NaN results differing only in sign or payload, {:.1} s",
        coverage.len(),
        tiers.iter().map(|t| t.name()).collect::<Vec<_>>(),
        NAN_BIT_DIFFERENCES.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
    for &tier in &tiers {
        for k in KERNELS.iter() {
            assert!(
                coverage.contains(k.kind, k.dtype, tier, k.variant),
                "{k:?} on {} not checked",
                tier.name()
            );
        }
    }
    failures.finish("differential");
}
