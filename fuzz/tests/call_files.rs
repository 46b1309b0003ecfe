//! Fuzz target: call files of `tessera run`, in-process through the
//! command's library entry. Structured calls of every routed kernel (valid
//! and invalid attributes, operand and result names, paths, dtypes, shapes,
//! tiers, threads), byte mutations of them, and valid calls with a slow
//! model. Each case checks: no panic; an error is one line with exit code 1
//! or 2; on refusal no entry of the directory was created, removed or
//! changed (same inode, length and modification time: nothing written in
//! place or renamed over) and every pre-existing destination holds its
//! bytes; on success of a call with a model, `y.npy` equals the model.

use tessera_fuzz::calls::{check_model, structured, Bank, CallCase, WORDS};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

fn target(plan: Plan, verbose: bool) -> Stats {
    let bank = Bank::new(&format!("calls-{:x}", plan.seed), &mut Rng::new(plan.seed));
    let base = bank.snapshot();
    let mut base_ids = bank.stat();
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
            bank.write_call(&c.text);
            let before = bank.stat();
            let outcome = bank.run_written();
            let verdict = match outcome {
                Err(e) => {
                    let line = e.one_line();
                    if line.contains('\n') || !(e.exit_code() == 1 || e.exit_code() == 2) {
                        return Err(format!(
                            "a refusal of exit {} in several lines: {line}",
                            e.exit_code()
                        ));
                    }
                    if c.model.is_some() {
                        return Err(format!("a valid call was refused: {line}"));
                    }
                    let after = bank.stat();
                    let pre_changed: Vec<&String> = c
                        .pre
                        .iter()
                        .filter(|(p, b)| std::fs::read(bank.dir.join(p)).ok().as_ref() != Some(b))
                        .map(|(p, _)| p)
                        .collect();
                    if after != before || !pre_changed.is_empty() {
                        let changed: Vec<&String> = after
                            .keys()
                            .chain(before.keys())
                            .filter(|k| after.get(*k) != before.get(*k))
                            .chain(pre_changed)
                            .collect();
                        return Err(format!(
                            "a refused call ({line}) created or changed {changed:?}"
                        ));
                    }
                    Verdict::Refused
                }
                Ok(_) => match &c.model {
                    Some(m) => Verdict::Succeeded {
                        models: check_model(&bank, m)?,
                    },
                    None => Verdict::Succeeded { models: 0 },
                },
            };
            bank.restore(&base, &base_ids);
            // Rewritten entries (the call file above all) have new identities.
            base_ids = bank.stat();
            Ok(verdict)
        },
    )
}

#[test]
fn call_files_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(
        s.refusals > 0 && s.successes > 0 && s.model_checks > 0,
        "{s:?}"
    );
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn call_files_long_run() {
    target(Plan::long_run(), true);
}
