//! Fuzz target: map program texts. Random trees of the grammar (kinds,
//! operators, casts, literals, inputs, coordinates, intermediates, several
//! outputs), hostile texts (nesting at and past the limit, long chains,
//! huge and malformed indices) and byte mutations of generated texts are
//! parsed; what parses prints to text that parses back to an equal program;
//! what binds to small random inputs (random layouts and broadcasts) runs
//! through `tessera::map` and equals a node-by-node evaluation through
//! single elementwise and cast calls on the scalar tier. A refused run
//! leaves its destinations' bytes as they were.

use tessera::map::{map, Program};
use tessera::{Error, Exec};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::program::{evaluate, hostile_text, random_text, Text, WORDS};
use tessera_fuzz::views::{
    broadcast_shape, check_untouched, check_written, describe, fix_packed_shape, Buf,
};
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

struct Case {
    text: Text,
    rng: Rng,
}

fn check(case: &Case) -> Result<Verdict, String> {
    let Text { text, inputs } = &case.text;
    let p = match Program::parse(text, inputs) {
        Ok(p) => p,
        Err(e) => {
            if !matches!(e, Error::Parse { .. } | Error::Program { .. }) {
                return Err(format!("a parse refused with {e:?}"));
            }
            if e.to_string().len() > 4096 {
                return Err(format!("a message of {} bytes", e.to_string().len()));
            }
            return Ok(Verdict::Refused);
        }
    };
    // The printed text parses back into an equal program.
    let printed = p.to_string();
    match Program::parse(&printed, inputs) {
        Ok(q) if q == p => {}
        Ok(_) => {
            return Err(format!(
                "the printed text {printed:?} parses into another program"
            ))
        }
        Err(e) => return Err(format!("the printed text {printed:?} does not parse: {e}")),
    }
    if p.nodes().len() > 4000 {
        return Ok(Verdict::Succeeded { models: 1 });
    }
    // Bind to small random operands and run.
    let mut rng = case.rng.clone();
    let rank = rng.below_usize(3);
    let mut shape: Vec<usize> = (0..rank)
        .map(|_| {
            let e = rng.below_usize(4);
            e + (!rng.chance(1, 12)) as usize
        })
        .collect();
    for d in p.output_dtypes().into_iter().chain(inputs.iter().copied()) {
        fix_packed_shape(&mut rng, d, &mut shape);
    }
    let ins: Vec<Buf> = inputs
        .iter()
        .map(|&d| {
            let mut sh = broadcast_shape(&mut rng, &shape);
            fix_packed_shape(&mut rng, d, &mut sh);
            {
                let w = rng.chance(1, 30);
                Buf::random(&mut rng, d, &sh, true, w)
            }
        })
        .collect();
    let mut outs: Vec<Buf> = p
        .output_dtypes()
        .iter()
        .map(|&d| {
            let z = rng.chance(1, 20);
            let w = rng.chance(1, 30);
            Buf::random(&mut rng, d, &shape, z, w)
        })
        .collect();
    let before: Vec<Vec<u8>> = outs.iter().map(|o| o.bytes.clone()).collect();
    let result = {
        let views: Result<Vec<_>, _> = ins.iter().map(|b| b.view()).collect();
        let mut dsts: Vec<_> = Vec::new();
        let mut bad = None;
        for o in outs.iter_mut() {
            match o.view_mut() {
                Ok(v) => dsts.push(v),
                Err(e) => bad = Some(e),
            }
        }
        match (views, bad) {
            (Err(e), _) | (_, Some(e)) => Err(e),
            (Ok(v), None) => map(&p, &v, &mut dsts, &Exec::default()),
        }
    };
    let describe_all = || {
        let i: Vec<String> = ins.iter().map(describe).collect();
        let o: Vec<String> = outs.iter().map(describe).collect();
        format!("shape {shape:?}, inputs {i:?}, outputs {o:?}")
    };
    match result {
        Err(_) => {
            for (k, (b, o)) in before.iter().zip(&outs).enumerate() {
                check_untouched(&format!("output {k}"), b, &o.bytes)?;
            }
            Ok(Verdict::Refused)
        }
        Ok(()) => {
            let contiguous: Vec<Buf> = ins.iter().map(|b| b.to_contiguous()).collect();
            let want = evaluate(&p, &contiguous, &shape).map_err(|e| {
                format!(
                    "the map ran but the model refused: {e} ({})",
                    describe_all()
                )
            })?;
            for (k, ((b, o), w)) in before.iter().zip(&outs).zip(&want).enumerate() {
                check_written(&format!("output {k}"), b, o, w)
                    .map_err(|e| format!("{e} ({})", describe_all()))?;
            }
            Ok(Verdict::Succeeded {
                models: 1 + want.len() as u64,
            })
        }
    }
}

fn target(plan: Plan, verbose: bool) -> Stats {
    run(
        "program_text",
        plan,
        verbose,
        |rng: &mut Rng, _| {
            let text = match rng.below(20) {
                0..=1 => hostile_text(rng),
                2..=8 => {
                    let t = random_text(rng);
                    let bytes = mutate(rng, t.text.as_bytes(), WORDS);
                    Text {
                        text: String::from_utf8_lossy(&bytes).into_owned(),
                        inputs: t.inputs,
                    }
                }
                _ => random_text(rng),
            };
            Case {
                text,
                rng: Rng::new(rng.next_u64()),
            }
        },
        |c: &Case| format!("{:?} with inputs {:?}", c.text.text, c.text.inputs),
        check,
    )
}

#[test]
fn program_text_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(
        s.refusals > 0 && s.successes > 0 && s.model_checks > 0,
        "{s:?}"
    );
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn program_text_long_run() {
    target(Plan::long_run(), true);
}
