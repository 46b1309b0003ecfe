//! Distributed speed at the process count this program is started with
//! (`mpiexec -n P cargo bench` or the built bench binary): the sum of
//! 1 GiB of f32 by `tessera_mpi::reduce` beside the usual way (each rank's
//! plain local sum, then `MPI_Allreduce` of those f64 values: fast, but
//! its bits change with P), and a 4096² f32 GEMM with A's rows split over
//! the ranks (`contract_rows`). One thread per rank; the best of a few
//! runs, each timed between barriers. Rank 0 prints one line per figure.
//!
//! `TESSERA_BENCH_MIB` (default 1024) and `TESSERA_BENCH_N` (default 4096)
//! scale the two problems.

use mpi::collective::SystemOperation;
use mpi::traits::*;
use std::time::Instant;
use tessera::{ArrayView, ArrayViewMut, ContractSpec, DType, Exec, ReduceOp};

fn best<C: Communicator>(world: &C, runs: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        world.barrier();
        let t = Instant::now();
        f();
        world.barrier();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let universe = mpi::initialize().expect("MPI initialises");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let exec = Exec::default().threads(1);
    let say = |s: String| {
        if rank == 0 {
            println!("{s}");
        }
    };
    say(format!(
        "tessera-mpi bench: {size} ranks, 1 thread each, tier {:?}",
        exec.resolve_tier().expect("a tier")
    ));

    // Sum of 1 GiB of f32, the ranks' blocks as even as can be.
    let total = env("TESSERA_BENCH_MIB", 1024) << 18;
    let (q, r) = (total / size, total % size);
    let n = q + usize::from(rank < r);
    let lo = rank * q + rank.min(r);
    let x: Vec<f32> = (lo..lo + n)
        .map(|i| ((i % 1000) as f32 - 499.5) * 1e-3)
        .collect();
    let xv = ArrayView::from_slice(&x, &[n]).expect("a view");
    let mut ours = [0f32];
    let t_ours = best(&world, 3, || {
        let mut d = ArrayViewMut::from_slice(&mut ours, &[]).expect("a view");
        tessera_mpi::reduce(&world, ReduceOp::Sum, &[0], &xv, &mut d, &exec).expect("the sum");
    });
    let mut plain = 0f64;
    let t_plain = best(&world, 3, || {
        let mut local = [0f32];
        let mut d = ArrayViewMut::from_slice(&mut local, &[]).expect("a view");
        tessera::reduce(ReduceOp::Sum, &[0], &xv, &mut d, &exec).expect("the local sum");
        let mine = local[0] as f64;
        world.all_reduce_into(&mine, &mut plain, SystemOperation::sum());
    });
    // The bytes of this rank's state (what the tree moves per message).
    let state = tessera::reduce::reduce_partial(
        ReduceOp::Sum,
        &[0],
        tessera::Terms::of(&xv),
        tessera::reduce::TermRange { start: lo, total },
        None,
        &exec,
    )
    .expect("a state")
    .to_bytes()
    .len() as u64;
    let mut largest = 0u64;
    world.all_reduce_into(&state, &mut largest, SystemOperation::max());
    let gib = (total * 4) as f64 / (1u64 << 30) as f64;
    say(format!(
        "sum of {gib} GiB f32: tessera-mpi {:.1} ms ({:.2} GB/s), local sums + MPI_Allreduce {:.1} ms ({:.2} GB/s): ratio {:.3}; result {} (allreduce {}); largest state {largest} bytes",
        t_ours * 1e3,
        (total * 4) as f64 / t_ours / 1e9,
        t_plain * 1e3,
        (total * 4) as f64 / t_plain / 1e9,
        t_plain / t_ours,
        ours[0],
        plain
    ));

    // A 4096² f32 GEMM, A's rows split over the ranks.
    let m = env("TESSERA_BENCH_N", 4096);
    let (q, r) = (m / size, m % size);
    let rows = q + usize::from(rank < r);
    let r0 = rank * q + rank.min(r);
    let a: Vec<f32> = (r0 * m..(r0 + rows) * m)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.1)
        .collect();
    let b: Vec<f32> = (0..m * m)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.1)
        .collect();
    let av = ArrayView::from_slice(&a, &[rows, m]).expect("a view");
    let bv = ArrayView::from_slice(&b, &[m, m]).expect("a view");
    let mut c = vec![0f32; rows * m];
    let spec = ContractSpec::matmul(2, DType::F32);
    let t_gemm = best(&world, 2, || {
        let mut d = ArrayViewMut::from_slice(&mut c, &[rows, m]).expect("a view");
        tessera_mpi::contract_rows(&world, &spec, &av, &bv, None, &mut d, &exec).expect("the GEMM");
    });
    let flops = 2.0 * (m as f64).powi(3);
    say(format!(
        "GEMM {m}x{m}x{m} f32, rows split: {:.1} ms ({:.1} GFLOP/s over {size} ranks)",
        t_gemm * 1e3,
        flops / t_gemm / 1e9
    ));
}
