//! What one `tessera run` call may hold and do: a result budget (bytes) and
//! a work budget (steps), both charged before the memory is taken or the work begins.
//!
//! **Bytes: the result budget.** A call holds every result in memory until
//! all are computed, so that it can write them all or none, and beside them
//! its working copies (a padded load, an operand brought into C order or
//! packed or unpacked, a kernel's typed copy of its terms or ids). Every
//! such allocation, whose size an input decides, goes through [`zeroed`],
//! [`with_capacity`] or [`copy_of`] (or is charged first with
//! [`charge_bytes`] where the library makes it on the tool's behalf): the
//! bytes are charged to the budget, then reserved fallibly, so a call whose
//! needs exceed the budget, or the memory, is refused with a one-line error
//! and never aborted. An operand file's own data is read as it is, bounded
//! by the file's size (`crate::npy::read`), and not charged. The budget is
//! `TESSERA_MAX_RESULT_BYTES` (a decimal byte count) where set, else half
//! of the machine's physical memory, else 4 GiB. Charges are never given
//! back within a call: the budget bounds the sum of what a call allocates,
//! so also the most it holds at once.
//!
//! **Work.** A few bytes can name far more work than memory: a reduction of a
//! program over a virtual `shape`, a windowed padded load whose windows
//! overlap, a contraction's depth, a rolling mean's windows, a polynomial's
//! coefficients. Each command charges the elementary steps it asks of the
//! library ([`charge_work`]: elements visited, products formed, terms
//! evaluated) before it starts, and a call that needs more than
//! `TESSERA_MAX_WORK` steps (default 2^40, about a GEMM of 10,000³ or ten
//! minutes of any reduction on one core) is refused before any work.
//!
//! Both budgets are per call and per thread: [`start_call`] sets them from the
//! environment at the start of `tessera run`; outside a call (the library's
//! own tests, `tessera selftest`) nothing is limited.

use crate::failure::{Failure, Outcome};
use std::cell::Cell;

/// The environment variable that sets the result budget of a call (bytes).
pub const BYTES_ENV: &str = "TESSERA_MAX_RESULT_BYTES";

/// The environment variable that sets the work budget of a call.
pub const WORK_ENV: &str = "TESSERA_MAX_WORK";

/// The result budget when neither the environment nor the machine says: 4 GiB.
const FALLBACK_BYTES: usize = 4 << 30;

/// The work budget when the environment does not say: 2^40 steps.
pub const DEFAULT_WORK: u64 = 1 << 40;

thread_local! {
    /// What the current call may still allocate.
    static BYTES_LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
    /// What the current call may still do.
    static WORK_LEFT: Cell<u64> = const { Cell::new(u64::MAX) };
}

fn env_count<T: std::str::FromStr>(name: &str, what: &str) -> Outcome<Option<T>> {
    match std::env::var(name) {
        Ok(v) => v.trim().parse::<T>().map(Some).map_err(|_| {
            Failure::usage(format!(
                "{name}={}: expected {what}",
                crate::commands::truncate(&v, 40)
            ))
        }),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(Failure::usage(format!(
            "{name}: expected {what}, not a value that is not UTF-8"
        ))),
    }
}

/// The result budget of one call: [`BYTES_ENV`] where it is set, else half of
/// the machine's physical memory (`MemTotal` of /proc/meminfo), else 4 GiB.
pub fn byte_budget() -> Outcome<usize> {
    Ok(match env_count::<usize>(BYTES_ENV, "a byte count")? {
        Some(b) => b,
        None => physical_memory().map_or(FALLBACK_BYTES, |m| m / 2),
    })
}

/// The work budget of one call: [`WORK_ENV`] where it is set, else
/// [`DEFAULT_WORK`].
pub fn work_budget() -> Outcome<u64> {
    Ok(env_count::<u64>(WORK_ENV, "a count of steps")?.unwrap_or(DEFAULT_WORK))
}

/// `MemTotal` of /proc/meminfo in bytes, where it can be read.
fn physical_memory() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Start a call's accounting from the environment ([`byte_budget`],
/// [`work_budget`]).
pub fn start_call() -> Outcome<()> {
    set(byte_budget()?, work_budget()?);
    Ok(())
}

/// Start a call's accounting: it may allocate `bytes` and do `work` steps.
pub fn set(bytes: usize, work: u64) {
    BYTES_LEFT.with(|b| b.set(bytes));
    WORK_LEFT.with(|w| w.set(work));
}

/// Charge `bytes` for `what` (a result, a copy) to the call's result budget,
/// refusing (before anything is allocated) where too little is left.
pub fn charge_bytes(bytes: usize, what: &str) -> Outcome<()> {
    let left = BYTES_LEFT.with(Cell::get);
    if bytes > left {
        return Err(Failure::run(format!(
            "{what} needs {bytes} bytes, more than is left of the call's result budget ({left} bytes; \
             a call holds its results and working copies in memory until all are computed; \
             {BYTES_ENV} sets the budget)"
        )));
    }
    BYTES_LEFT.with(|b| b.set(left - bytes));
    Ok(())
}

/// Charge `steps` of work for `what` to the call's work budget, refusing
/// (before the work starts) where too little is left. `steps` is a product
/// of counts, kept exact in 128 bits.
pub fn charge_work(steps: u128, what: &str) -> Outcome<()> {
    let left = WORK_LEFT.with(Cell::get);
    if steps > u128::from(left) {
        return Err(Failure::run(format!(
            "{what} needs {steps} steps of work, more than is left of the call's work budget \
             ({left} steps; {WORK_ENV} sets the budget)"
        )));
    }
    WORK_LEFT.with(|w| w.set(left - steps as u64));
    Ok(())
}

/// The product of `counts` in 128 bits, saturating (a work charge).
pub fn steps(counts: &[usize]) -> u128 {
    counts
        .iter()
        .try_fold(1u128, |p, &c| p.checked_mul(c as u128))
        .unwrap_or(u128::MAX)
}

/// An empty vector with room for `len` values of `T`, charged to the result
/// budget for `what` and reserved fallibly.
pub fn with_capacity<T>(len: usize, what: &str) -> Outcome<Vec<T>> {
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            Failure::run(format!(
                "{what}: {len} values do not fit in this machine's memory"
            ))
        })?;
    charge_bytes(bytes, what)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Failure::run(format!("{what}: cannot allocate {bytes} bytes")))?;
    Ok(v)
}

/// `len` copies of `T::default()` (zero bytes for a result buffer), charged
/// and reserved as [`with_capacity`].
pub fn zeroed<T: Clone + Default>(len: usize, what: &str) -> Outcome<Vec<T>> {
    let mut v = with_capacity(len, what)?;
    v.resize(len, T::default());
    Ok(v)
}

/// A copy of `data`, charged and reserved as [`with_capacity`].
pub fn copy_of<T: Copy>(data: &[T], what: &str) -> Outcome<Vec<T>> {
    let mut v = with_capacity(data.len(), what)?;
    v.extend_from_slice(data);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_and_refuses() {
        set(100, 1000);
        let v: Vec<u32> = zeroed(20, "a test buffer").unwrap();
        assert_eq!(v.len(), 20);
        // 80 bytes taken: 20 left, so 6 u32 (24 bytes) are refused.
        let e = with_capacity::<u32>(6, "another").unwrap_err();
        assert!(e.to_string().contains("24 bytes"), "{e}");
        assert!(with_capacity::<u8>(20, "the rest").is_ok());
        assert!(charge_bytes(1, "one more").is_err());
        charge_work(999, "most").unwrap();
        assert!(charge_work(2, "too much").is_err());
        charge_work(1, "the last").unwrap();
        // A size that overflows is refused, not wrapped.
        set(usize::MAX, u64::MAX);
        assert!(with_capacity::<u64>(usize::MAX / 4, "huge").is_err());
        assert_eq!(steps(&[1 << 40, 1 << 40, 1 << 40, 1 << 40]), u128::MAX);
        assert_eq!(steps(&[3, 5, 7]), 105);
        assert!(charge_work(u128::MAX, "endless").is_err());
        set(usize::MAX, u64::MAX);
    }
}
