//! Fuzz target: the register path of `map`. Random programs of the path's
//! kinds (`+`, `-`, `*`, `/`, `sqrt`, `fma`, negation, `abs`, `min`,
//! `max` over f32 or f64, inputs, typed
//! and untyped literals with special values, intermediates, one or two
//! outputs: [`register_text`]) are bound to operands of lengths around the
//! vector, block and tile sizes, in random layouts (padded, negative and
//! zero strides, broadcasts, offsets) holding random bit patterns (NaNs,
//! infinities, subnormals among them), and run through `tessera::map` on
//! every tier this CPU runs, with 1 and 2 threads. Each run's outputs must
//! equal a node-by-node evaluation through single elementwise calls on the
//! scalar tier ([`evaluate`]: never the map engine), bit for bit (a NaN as
//! any NaN), and a refused run must leave its destinations untouched.

use tessera::map::{map, Program};
use tessera::Exec;
use tessera_fuzz::program::{evaluate, register_text, Text};
use tessera_fuzz::views::{broadcast_shape, check_untouched, check_written, describe, Buf};
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

struct Case {
    text: Text,
    rng: Rng,
}

/// Lengths around the vector (4–16 lanes), the register block (8 vectors)
/// and the tile.
const LENGTHS: &[usize] = &[
    1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 129, 255, 257, 511, 1023, 1024, 1025,
    2047, 4096, 4099,
];

fn check(case: &Case) -> Result<Verdict, String> {
    let Text { text, inputs } = &case.text;
    let p = Program::parse(text, inputs)
        .map_err(|e| format!("a register-path program did not parse: {e}"))?;
    let mut rng = case.rng.clone();
    let n = *rng.pick(LENGTHS);
    let shape = if rng.chance(1, 4) {
        vec![1 + rng.below_usize(3), n]
    } else {
        vec![n]
    };
    let ins: Vec<Buf> = inputs
        .iter()
        .map(|&d| {
            // Mostly whole operands: a program whose every operand is
            // broadcast is uniform and computed once, off the path.
            let sh = if rng.chance(1, 3) {
                broadcast_shape(&mut rng, &shape)
            } else {
                shape.clone()
            };
            Buf::random(&mut rng, d, &sh, true, false)
        })
        .collect();
    let outs: Vec<Buf> = p
        .output_dtypes()
        .iter()
        .map(|&d| Buf::random(&mut rng, d, &shape, false, false))
        .collect();
    let contiguous: Vec<Buf> = ins.iter().map(|b| b.to_contiguous()).collect();
    let want = evaluate(&p, &contiguous, &shape).map_err(|e| format!("the model refused: {e}"))?;
    let describe_all = |outs: &[Buf]| {
        let i: Vec<String> = ins.iter().map(describe).collect();
        let o: Vec<String> = outs.iter().map(describe).collect();
        format!("shape {shape:?}, inputs {i:?}, outputs {o:?}")
    };
    let views: Vec<_> = ins
        .iter()
        .map(|b| b.view())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("an input view was refused: {e}"))?;
    let mut runs = 0;
    for tier in tessera_fuzz::tiers() {
        for threads in [1, 2] {
            let mut mine = outs.clone();
            let before: Vec<Vec<u8>> = mine.iter().map(|o| o.bytes.clone()).collect();
            let result = {
                let mut dsts: Vec<_> = mine
                    .iter_mut()
                    .map(|o| o.view_mut())
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("an output view was refused: {e}"))?;
                map(&p, &views, &mut dsts, &Exec::on(tier).threads(threads))
            };
            let at = format!("{tier:?}, {threads} thread(s), {}", describe_all(&mine));
            match result {
                Err(e) => {
                    for (k, (b, o)) in before.iter().zip(&mine).enumerate() {
                        check_untouched(&format!("output {k}"), b, &o.bytes)?;
                    }
                    return Err(format!("a register-path program was refused: {e} ({at})"));
                }
                Ok(()) => {
                    for (k, ((b, o), w)) in before.iter().zip(&mine).zip(&want).enumerate() {
                        check_written(&format!("output {k}"), b, o, w)
                            .map_err(|e| format!("{e} ({at})"))?;
                    }
                }
            }
            runs += 1;
        }
    }
    Ok(Verdict::Succeeded {
        models: runs * want.len() as u64,
    })
}

fn target(plan: Plan, verbose: bool) -> Stats {
    run(
        "map_registers",
        plan,
        verbose,
        |rng: &mut Rng, _| Case {
            text: register_text(rng),
            rng: Rng::new(rng.next_u64()),
        },
        |c: &Case| format!("{:?} with inputs {:?}", c.text.text, c.text.inputs),
        check,
    )
}

#[test]
fn map_registers_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(s.successes == s.cases && s.model_checks > 0, "{s:?}");
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn map_registers_long_run() {
    target(Plan::long_run(), true);
}
