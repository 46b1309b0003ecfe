//! `tessera run CALL.json`: execute one kernel call described by a call file.
//!
//! The call file names a kernel; this module reads the file, picks the tier and
//! thread count, and hands the call to the module of the kernel's family
//! (elementwise kinds, `cast`, `contract`, `contract_scaled`,
//! `contract_grouped`, `reduce`, `scan`, `map`, `series`,
//! the Fourier transforms `c2c`, `r2c` and `c2r`, `fold`, `assemble`, `tile`, `sparse_dot`, `convolve`, `correlate`,
//! the block-scaled formats' `encode`, `decode` and `transcode`, and the
//! library's other calls: `random`, `quantize`, `dequantize`, `polyval`,
//! `qmatmul_i8`, `requantize_i8`, `sum_lanes`). A kernel the library adds
//! joins as an arm of [`Kernel`].
//!
//! The call file and the operands are read through a bounded reader
//! ([`crate::files`]): regular files only, a call file of at most 16 MiB, a
//! `.npy` file's data only as large as its header says. The results are
//! written all or nothing ([`crate::results`]): every one is resolved first
//! (two results naming one file are refused), computed and written to a
//! temporary file beside its destination, and moved into place only once all
//! of them are; a call that fails creates or changes no file. Because the
//! results are held in memory until then, they and the tool's working copies
//! are bounded by a result budget, and the work a call asks for by a work
//! budget ([`crate::budget`]: `TESSERA_MAX_RESULT_BYTES`, else half the
//! machine's memory; `TESSERA_MAX_WORK`, else 2^40 steps); a call that needs
//! more is refused before it computes.

use super::formats::FormatKernel;
use super::library::LibraryKernel;
use super::{cast, contract, contract_variants, elementwise, formats, map, parse_args, reduce};
use crate::call::Call;
use crate::failure::{Failure, Outcome};
use crate::outln;
use crate::results::Results;
use std::io::Write;
use std::path::Path;
use tessera::{Exec, Kind};

/// The most threads a call file may ask for.
pub const MAX_THREADS: usize = tessera::tier::MAX_THREADS;

/// The kernel a call file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// An elementwise kind of the catalogue, by its name (`add`, `fma`, …).
    Elementwise(Kind),
    /// `cast`: any dtype to any dtype.
    Cast,
    /// `contract`: a contraction of `a` with `b` (plus `init`).
    Contract,
    /// `contract_scaled`: a contraction with block-scaled operands.
    ContractScaled,
    /// `contract_grouped`: a grouped (segmented) contraction.
    ContractGrouped,
    /// `encode`, `decode` or `transcode` of a block-scaled format.
    Format(FormatKernel),
    /// `reduce`: reductions in lane order over any axes.
    Reduce,
    /// `scan`: inclusive scans along one axis.
    Scan,
    /// `map`: a fused elementwise program.
    Map,
    /// `series`: the one-dimensional series kernels.
    Series,
    /// `c2c`, `r2c` or `c2r`: a Fourier transform.
    Fft(super::fft::FftKernel),
    /// `fold`: the adjoint of a padded load.
    Fold,
    /// `assemble`: pieces into regions of a result.
    Assemble,
    /// `tile`: a pattern repeated across a result.
    Tile,
    /// `sparse_dot`: one CSR row times a vector.
    SparseDot,
    /// `convolve` (true) or `correlate` (false).
    Signal(bool),
    /// `gather`, `gather_ranges`, `scatter` or `unique`.
    Movement(super::movement::MovementKernel),
    /// `sort`, `argsort`, `median`, `quantile`, `lower_bound`, `intersect`,
    /// `difference`, `compress`, `partition`.
    Order(super::order::OrderKernel),
    /// `cholesky`, `lu`, `qr`, `solve_triangular`, `eigh`, `svd`, `eig`.
    Linalg(super::linalg::LinalgKernel),
    /// `attention`: flash attention with a mask-and-score program.
    Attention,
    /// `random`, `quantize`, `dequantize`, `polyval`, `qmatmul_i8`,
    /// `requantize_i8`, `sum_lanes`.
    Library(LibraryKernel),
    /// The byte and text kernels of `tessera::bytes`.
    Bytes(super::bytes::BytesKernel),
}

impl Kernel {
    /// The kernel named `name`, or a usage error.
    pub fn from_name(name: &str) -> Outcome<Kernel> {
        if name == cast::NAME {
            return Ok(Kernel::Cast);
        }
        if name == reduce::REDUCE {
            return Ok(Kernel::Reduce);
        }
        if name == reduce::SCAN {
            return Ok(Kernel::Scan);
        }
        if name == contract::NAME {
            return Ok(Kernel::Contract);
        }
        if name == contract_variants::SCALED {
            return Ok(Kernel::ContractScaled);
        }
        if name == contract_variants::GROUPED {
            return Ok(Kernel::ContractGrouped);
        }
        if name == map::NAME {
            return Ok(Kernel::Map);
        }
        if name == super::attention::NAME {
            return Ok(Kernel::Attention);
        }
        if name == super::series::NAME {
            return Ok(Kernel::Series);
        }
        if name == super::assembly::FOLD {
            return Ok(Kernel::Fold);
        }
        if name == super::assembly::ASSEMBLE {
            return Ok(Kernel::Assemble);
        }
        if name == super::assembly::TILE {
            return Ok(Kernel::Tile);
        }
        if name == super::assembly::SPARSE_DOT {
            return Ok(Kernel::SparseDot);
        }
        if name == super::signal::CONVOLVE || name == super::signal::CORRELATE {
            return Ok(Kernel::Signal(name == super::signal::CONVOLVE));
        }
        if let Some(k) = super::fft::FftKernel::from_name(name) {
            return Ok(Kernel::Fft(k));
        }
        if let Some(k) = super::movement::MovementKernel::from_name(name) {
            return Ok(Kernel::Movement(k));
        }
        if let Some(k) = super::order::OrderKernel::from_name(name) {
            return Ok(Kernel::Order(k));
        }
        if let Some(k) = super::linalg::LinalgKernel::from_name(name) {
            return Ok(Kernel::Linalg(k));
        }
        if let Some(k) = FormatKernel::from_name(name) {
            return Ok(Kernel::Format(k));
        }
        if let Some(k) = LibraryKernel::from_name(name) {
            return Ok(Kernel::Library(k));
        }
        if let Some(k) = super::bytes::BytesKernel::from_name(name) {
            return Ok(Kernel::Bytes(k));
        }
        if let Some(kind) = Kind::from_name(name) {
            return Ok(Kernel::Elementwise(kind));
        }
        Err(Failure::usage(format!(
            "unknown kernel `{}` (see `tessera kernels`)",
            super::truncate(name, 40)
        )))
    }
}

/// The tier and thread count a call asks for.
pub fn exec_of(call: &Call) -> Outcome<Exec> {
    let mut exec = Exec::default();
    if let Some(name) = &call.tier {
        let tier = tessera::tier::parse_tier(name).map_err(|e| match e {
            tessera::Error::UnknownTier(_) => Failure::usage(format!("bad call file: {e}")),
            e => Failure::run(e.to_string()),
        })?;
        exec = Exec::on(tier);
    }
    if let Some(threads) = call.threads {
        if threads > MAX_THREADS {
            return Err(Failure::usage(format!(
                "bad call file: threads {threads} is more than {MAX_THREADS}"
            )));
        }
        // 0 (as when absent) is rayon's pool; 1 the calling thread.
        exec = if threads == 0 {
            exec.par(tessera::tier::Par::Pool)
        } else {
            exec.threads(threads)
        };
    }
    Ok(exec)
}

/// Run `tessera run` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let args = parse_args("run", args, &[], &[])?;
    let [path] = args.positional[..] else {
        return Err(Failure::usage(
            "run: expected one call file: tessera run CALL.json".to_string(),
        ));
    };
    let path = Path::new(path);
    let call = Call::read(path).map_err(Failure::usage)?;
    let kernel = Kernel::from_name(&call.kernel)?;
    let exec = exec_of(&call)?;
    // Every result's file is resolved before anything is read or computed;
    // the module writes each result to a temporary file, and only a call
    // that returns with all of them written moves them into place. On any
    // failure `results` is dropped, its temporary files removed, and no file
    // is created or changed.
    crate::budget::start_call()?;
    let mut results = Results::plan(path, &call.results)?;
    let r = &mut results;
    let report = match kernel {
        Kernel::Elementwise(kind) => elementwise::call(path, &call, kind, &exec, r)?,
        Kernel::Cast => cast::call(path, &call, &exec, r)?,
        Kernel::Contract => contract::call(path, &call, &exec, r)?,
        Kernel::ContractScaled => contract_variants::scaled_call(path, &call, &exec, r)?,
        Kernel::ContractGrouped => contract_variants::grouped_call(path, &call, &exec, r)?,
        Kernel::Format(k) => formats::call(path, &call, k, &exec, r)?,
        Kernel::Reduce => reduce::reduce_call(path, &call, &exec, r)?,
        Kernel::Scan => reduce::scan_call(path, &call, &exec, r)?,
        Kernel::Map => map::call(path, &call, &exec, r)?,
        Kernel::Series => super::series::call(path, &call, &exec, r)?,
        Kernel::Library(k) => super::library::call(path, &call, k, &exec, r)?,
        Kernel::Bytes(k) => super::bytes::call(path, &call, k, &exec, r)?,
        Kernel::Fft(k) => super::fft::call(path, &call, k, &exec, r)?,
        Kernel::Fold => super::assembly::fold_call(path, &call, &exec, r)?,
        Kernel::Assemble => super::assembly::assemble_call(path, &call, &exec, r)?,
        Kernel::Tile => super::assembly::tile_call(path, &call, &exec, r)?,
        Kernel::SparseDot => super::assembly::sparse_dot_call(path, &call, &exec, r)?,
        Kernel::Signal(conv) => super::signal::call(path, &call, conv, &exec, r)?,
        Kernel::Movement(k) => super::movement::call(path, &call, k, &exec, r)?,
        Kernel::Order(k) => super::order::call(path, &call, k, &exec, r)?,
        Kernel::Linalg(k) => super::linalg::call(path, &call, k, &exec, r)?,
        Kernel::Attention => super::attention::call(path, &call, &exec, r)?,
    };
    results.commit()?;
    if let Some(note) = tessera::tier::tier_env_note() {
        outln!(out, "note: {note}")?;
    }
    for line in report {
        outln!(out, "{line}")?;
    }
    Ok(0)
}
