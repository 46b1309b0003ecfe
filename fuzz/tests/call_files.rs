//! Fuzz target: call files of `tessera run`, in-process through the
//! command's library entry. Structured calls of every routed kernel (valid
//! and invalid attributes, operand and result names, paths, dtypes, shapes,
//! tiers, threads), byte mutations of them, and valid calls with a slow
//! model. Each case checks: no panic; an error is one line with exit code 1
//! or 2; on refusal every file of the directory (the operands and the
//! pre-existing destinations) is byte for byte as it was and no file was
//! created; on success of a call with a model, `y.npy` equals the model.

use tessera_fuzz::calls::{check_model, structured, Bank, CallCase, WORDS};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

fn target(plan: Plan, verbose: bool) -> Stats {
    let bank = Bank::new(&format!("calls-{:x}", plan.seed), &mut Rng::new(plan.seed));
    let base = bank.snapshot();
    run(
        "call_files",
        plan,
        verbose,
        |rng: &mut Rng, _| {
            let case = structured(rng, &bank);
            if case.model.is_none() && rng.chance(1, 3) {
                let bytes = mutate(rng, case.text.as_bytes(), WORDS);
                CallCase {
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                    ..case
                }
            } else {
                case
            }
        },
        |c: &CallCase| {
            let pre: Vec<&String> = c.pre.iter().map(|(p, _)| p).collect();
            format!("{} (pre-existing: {pre:?}; model: {:?})", c.text, c.model)
        },
        |c| {
            for (p, bytes) in &c.pre {
                std::fs::write(bank.dir.join(p), bytes).map_err(|e| e.to_string())?;
            }
            let before = bank.snapshot();
            let outcome = bank.run(&c.text);
            let verdict = match outcome {
                Err(e) => {
                    let line = e.one_line();
                    if line.contains('\n') || !(e.exit_code() == 1 || e.exit_code() == 2) {
                        return Err(format!("a refusal of exit {} in several lines: {line}", e.exit_code()));
                    }
                    if c.model.is_some() {
                        return Err(format!("a valid call was refused: {line}"));
                    }
                    let mut after = bank.snapshot();
                    // The call file is the harness's own.
                    after.insert("call.json".into(), before["call.json"].clone());
                    if after != before {
                        let changed: Vec<&String> = after
                            .keys()
                            .chain(before.keys())
                            .filter(|k| after.get(*k) != before.get(*k))
                            .collect();
                        return Err(format!("a refused call ({line}) created or changed {changed:?}"));
                    }
                    Verdict::Refused
                }
                Ok(_) => match &c.model {
                    Some(m) => Verdict::Succeeded { models: check_model(&bank, m)? },
                    None => Verdict::Succeeded { models: 0 },
                },
            };
            bank.restore(&base);
            Ok(verdict)
        },
    )
}

#[test]
fn call_files_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(s.refusals > 0 && s.successes > 0 && s.model_checks > 0, "{s:?}");
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn call_files_long_run() {
    target(Plan::long_run(), true);
}
