//! Fuzz target: `.npy` bytes. Structured files (versions, descrs, byte
//! orders, orders, shapes with zero, huge and overflowing extents, padding,
//! exact, short and long data) and byte mutations of valid ones go through
//! the reader (in memory, and a share through the bounded file reader). The
//! reader returns a typed error or an array whose element count matches its
//! shape and its bytes; a structured file comes with what the reader must
//! make of it (the exact array, or a refusal). (A message may quote a
//! header's text as it is; the command folds it into one line.)

use tessera_cli::npy::{self, Npy, NpyType};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::npy_gen::{structured, Expect, NpyCase, WORDS};
use tessera_fuzz::{run, show_bytes, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

fn seeds() -> Vec<Vec<u8>> {
    let f32s: Vec<u8> = (0..6u32)
        .flat_map(|i| (i as f32 * 1.5).to_le_bytes())
        .collect();
    vec![
        npy::encode(NpyType::F32, &[2, 3], &f32s).unwrap(),
        npy::encode(NpyType::U8, &[3, 2], &[1, 2, 3, 4, 5, 6]).unwrap(),
        npy::encode(NpyType::C128, &[1], &[0u8; 16]).unwrap(),
        npy::encode(NpyType::I64, &[], &[7u8; 8]).unwrap(),
        npy::encode(NpyType::Bool, &[0, 4], &[]).unwrap(),
    ]
}

fn consistent(a: &Npy) -> Result<(), String> {
    let n = a
        .shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .unwrap_or(usize::MAX);
    let n = if a.shape.contains(&0) { 0 } else { n };
    if a.len() != n || a.data.len() != n * a.dtype.size() {
        return Err(format!(
            "accepted {} {:?} with {} data bytes",
            a.dtype,
            a.shape,
            a.data.len()
        ));
    }
    if a.strides().len() != a.shape.len() {
        return Err("strides of another rank".into());
    }
    Ok(())
}

fn target(plan: Plan, verbose: bool) -> Stats {
    let seeds = seeds();
    let dir = std::env::temp_dir().join(format!("tessera-fuzz-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.npy");
    let stats = run(
        "npy",
        plan,
        verbose,
        |rng: &mut Rng, _| {
            let from_file = rng.chance(1, 16);
            let case = if rng.chance(2, 3) {
                structured(rng)
            } else {
                let base = rng.pick(&seeds).clone();
                NpyCase {
                    bytes: mutate(rng, &base, WORDS),
                    expect: Expect::Either,
                }
            };
            (case, from_file)
        },
        |(c, from_file): &(NpyCase, bool)| {
            format!(
                "{} (through a file: {from_file}; expected {:?})",
                show_bytes(&c.bytes),
                c.expect
            )
        },
        |(c, from_file)| {
            let got = if *from_file {
                std::fs::write(&file, &c.bytes).map_err(|e| e.to_string())?;
                npy::read(&file)
            } else {
                npy::parse(c.bytes.clone())
            };
            match (&c.expect, got) {
                (Expect::Refusal(why), Ok(a)) => Err(format!(
                    "accepted a file with {why}: {} {:?}",
                    a.dtype, a.shape
                )),
                (_, Err(e)) => match &c.expect {
                    Expect::Array(..) => Err(format!("refused a valid file: {e}")),
                    _ if e.0.trim().is_empty() => {
                        Err(format!("a refusal that says nothing: {e:?}"))
                    }
                    _ => Ok(Verdict::Refused),
                },
                (Expect::Array(t, f, shape, data), Ok(a)) => {
                    consistent(&a)?;
                    if a.dtype != *t
                        || a.fortran_order != *f
                        || &a.shape != shape
                        || &a.data != data
                    {
                        return Err(format!(
                            "read {} {} {:?}, the file holds {} {} {:?} (data equal: {})",
                            a.dtype,
                            a.fortran_order,
                            a.shape,
                            t,
                            f,
                            shape,
                            &a.data == data
                        ));
                    }
                    Ok(Verdict::Succeeded { models: 1 })
                }
                (Expect::Either, Ok(a)) => {
                    consistent(&a)?;
                    Ok(Verdict::Succeeded { models: 0 })
                }
            }
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    stats
}

#[test]
fn npy_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(
        s.refusals > 0 && s.successes > 0 && s.model_checks > 0,
        "{s:?}"
    );
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn npy_long_run() {
    target(Plan::long_run(), true);
}
