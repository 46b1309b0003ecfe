//! Temporary files removed when the process is stopped by a signal.
//!
//! A call writes its results to temporary files beside their destinations
//! (`.NAME.tessera-PID-N.tmp`, [`crate::results`]) and renames them into
//! place only when all are written; a failure removes them. Three ways to
//! stop the process would skip that clean-up, and are handled here by
//! [`install`], which the `tessera` binary calls first:
//!
//! - **a file-size limit** (`ulimit -f`): SIGXFSZ is ignored, so the write
//!   that passes the limit fails with `EFBIG` and the call's normal clean-up
//!   runs (the call is refused as "cannot write", no file left);
//! - **SIGINT, SIGTERM and SIGHUP**: a handler removes every registered
//!   temporary file, then lets the signal end the process as it would have
//!   (default action, so the exit status still says which signal);
//! - **SIGKILL** (and a power loss) can be neither caught nor cleaned up
//!   after: the temporary files written so far stay, named as above (the
//!   `tessera-PID` part says which process left them); no destination is
//!   changed unless the renames had begun.
//!
//! A signal that arrives while the results are being renamed into place
//! leaves the renames done so far (each rename is atomic; the set is not).
//!
//! The registry is a fixed table of slots, written only with atomic state
//! changes, so that the handler (which may only call async-signal-safe
//! functions: here `unlink` and `raise`) never reads a path being written or
//! freed: a slot is claimed by the handler before it reads it, and a slot
//! the handler claimed is never written again.

use std::cell::UnsafeCell;
use std::ffi::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

/// Slots for paths registered at once; a path registered while every slot is
/// taken (or longer than [`PATH_BYTES`]) is not removed on a signal.
const SLOTS: usize = 256;

/// The longest path (in bytes, with its terminating NUL) a slot holds.
const PATH_BYTES: usize = 4096;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;
const CLAIMED: u8 = 3;

struct Slot {
    state: AtomicU8,
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: `path` is written only by the thread that moved `state` from FREE
// to WRITING (exclusive until it stores READY), and read only by the signal
// handler after it moved `state` from READY to CLAIMED, after which no thread
// writes it again; the atomic state changes order the accesses.
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    path: UnsafeCell::new([0; PATH_BYTES]),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// A registered path: removed by the handler of [`install`] if a signal
/// stops the process while this lives; dropping it unregisters the path
/// (the file itself is the caller's to remove).
#[derive(Debug)]
pub struct Registration {
    slot: Option<usize>,
}

/// Register `path` for removal on SIGINT, SIGTERM or SIGHUP (see the module
/// documentation) until the returned value is dropped.
pub fn register(path: &Path) -> Registration {
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= PATH_BYTES || bytes.contains(&0) {
        return Registration { slot: None };
    }
    for (i, slot) in TABLE.iter().enumerate() {
        if slot
            .state
            .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: this thread moved the slot from FREE to WRITING, so it
            // alone accesses `path` until it stores READY (see `Slot`).
            let buf = unsafe { &mut *slot.path.get() };
            buf[..bytes.len()].copy_from_slice(bytes);
            buf[bytes.len()] = 0;
            slot.state.store(READY, Ordering::Release);
            return Registration { slot: Some(i) };
        }
    }
    Registration { slot: None }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // A slot the handler claimed stays claimed: the process is
            // ending.
            let _ =
                TABLE[i]
                    .state
                    .compare_exchange(READY, FREE, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

/// Remove every registered path, then end the process by `signal` as its
/// default action would.
extern "C" fn on_signal(signal: libc::c_int) {
    for slot in &TABLE {
        if slot
            .state
            .compare_exchange(READY, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: the handler claimed the slot, whose `path` holds a
            // NUL-terminated path written before READY was stored and never
            // written again; `unlink` is async-signal-safe.
            unsafe {
                libc::unlink(slot.path.get() as *const c_char);
            }
        }
    }
    // SAFETY: `signal` and `raise` are async-signal-safe; with the default
    // action restored, the raised signal (blocked until this handler
    // returns) ends the process as the original one would have.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Ignore SIGXFSZ (a write past a file-size limit then fails with `EFBIG`)
/// and remove the registered temporary files on SIGINT, SIGTERM and SIGHUP.
/// Called once by the `tessera` binary before anything else; a signal
/// already ignored (a process started with `nohup`) stays ignored.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: `signal` changes this process's dispositions only; the handler
    // calls only async-signal-safe functions (see `on_signal`).
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let previous = libc::signal(s, handler);
            if previous == libc::SIG_IGN {
                libc::signal(s, libc::SIG_IGN);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_long_paths_refused() {
        // (Other tests of this process register paths at the same time, so
        // a slot's state after the drop is not this test's to check.)
        let a = register(Path::new("/tmp/a-registered-path"));
        let i = a.slot.expect("a free slot");
        assert_eq!(TABLE[i].state.load(Ordering::Relaxed), READY);
        drop(a);
        let long = "x".repeat(PATH_BYTES);
        assert!(register(Path::new(&long)).slot.is_none());
    }
}
