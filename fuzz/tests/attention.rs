//! Fuzz target: attention. Random shapes (lead axes, head groupings that
//! divide or not, empty extents), dtypes (fitting or not), layouts (padded,
//! negative, zero and wild strides), lengths (in and out of range),
//! programs (ready-made ones with random offsets, masks over random integer
//! loads, programs of the wrong arity or types) and values with NaN and
//! infinities in random places. A refusal leaves `o` and `lse` as they
//! were; a success gives the bits of the same call on contiguous copies on
//! the scalar tier and one thread, and every row that sees no key (by the
//! program's own output 0, run through `map` over the whole pair space)
//! holds o = +0 and lse = −∞.

use tessera::attention::{attention, programs, Kv};
use tessera::map::{map, Program};
use tessera::{ArrayView, ArrayViewMut, DType, Exec, Tier};
use tessera_fuzz::views::{check_untouched, Buf};
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

#[derive(Debug)]
struct Case {
    lead: Vec<usize>,
    hq: usize,
    hk: usize,
    tq: usize,
    tk: usize,
    dk: usize,
    dv: usize,
    input: DType,
    acc: DType,
    out: DType,
    lse_dt: DType,
    program: String,
    /// The loads' dtypes and shapes.
    loads: Vec<(DType, Vec<usize>)>,
    lengths: Option<Vec<i64>>,
    scale: f64,
    seed: u64,
    wild: bool,
}

fn pick_dtype(rng: &mut Rng, usual: &[DType]) -> DType {
    if rng.chance(1, 25) {
        *rng.pick(&[
            DType::I32,
            DType::Bool,
            DType::C64,
            DType::E4m3fn,
            DType::U8,
        ])
    } else {
        *rng.pick(usual)
    }
}

fn generate(rng: &mut Rng) -> Case {
    let nl = rng.below_usize(3);
    let lead: Vec<usize> = (0..nl)
        .map(|_| rng.below_usize(3) + (rng.chance(5, 6) as usize))
        .collect();
    let hk = if rng.chance(1, 30) {
        0
    } else {
        1 + rng.below_usize(3)
    };
    let gmax = if rng.chance(1, 10) { 70 } else { 4 };
    let g = 1 + rng.below_usize(gmax);
    let hq = if rng.chance(1, 20) {
        hk * g + 1
    } else {
        hk * g
    };
    let tqmax = if rng.chance(1, 4) { 80 } else { 12 };
    let tq = rng.below_usize(tqmax);
    let tkmax = if rng.chance(1, 3) { 150 } else { 20 };
    let tk = rng.below_usize(tkmax);
    let dk = rng.below_usize(10);
    let dv = rng.below_usize(10);
    let input = pick_dtype(rng, &[DType::F16, DType::Bf16, DType::F32, DType::F64]);
    let acc = if input == DType::F64 || rng.chance(1, 3) {
        DType::F64
    } else {
        DType::F32
    };
    let acc = if rng.chance(1, 30) {
        pick_dtype(rng, &[DType::F32, DType::F64])
    } else {
        acc
    };
    let out = if rng.chance(1, 2) { acc } else { input };
    let out = if rng.chance(1, 30) {
        pick_dtype(rng, &[DType::F32, DType::F64, DType::F16])
    } else {
        out
    };
    let lse_dt = if rng.chance(1, 30) { DType::F16 } else { acc };
    let rank = nl + 3;
    let (r, k, h) = (rank - 2, rank - 1, rank - 3);
    let a = acc.to_string();
    let mut loads = Vec::new();
    let program = match rng.below(9) {
        0 => "y0 = true; y1 = x0".to_string(),
        1 => programs::causal(acc, rank, rng.range_i64(-20, 20))
            .map(|p| p.to_string())
            .unwrap_or_default(),
        2 => programs::sliding_window(acc, rank, rng.range_i64(-5, 30), rng.range_i64(0, 40))
            .map(|p| p.to_string())
            .unwrap_or_else(|_| "y0 = true; y1 = x0".into()),
        3 => {
            loads.push((acc, vec![hq, 1, 1]));
            programs::alibi(acc, rank, rng.range_i64(-3, 3), rng.chance(1, 2))
                .map(|p| p.to_string())
                .unwrap_or_default()
        }
        4 => programs::softcap(acc, rank, 0.5 + rng.below(50) as f64, 0, rng.chance(1, 2))
            .map(|p| p.to_string())
            .unwrap_or_default(),
        5 => {
            // A document mask over integer ids, and a head-dependent score.
            let mut qs = lead.clone();
            qs.extend([1, tq, 1]);
            let mut ks = lead.clone();
            ks.extend([1, 1, tk]);
            loads.push((DType::I32, qs));
            loads.push((DType::I32, ks));
            format!("y0 = logical_and(x1 == x2, coord({k}) <= coord({r}) + 3); y1 = x0 - cast<{a}>(coord({h}))")
        }
        6 => {
            // A mask the ranges cannot decide, over a bool load.
            let mut ks = vec![1, 1];
            ks.push(tk);
            loads.push((DType::Bool, ks));
            format!("y0 = logical_or(x1, (coord({k}) * 7 + coord({r})) % 5 == 0); y1 = x0")
        }
        7 => {
            // Wrong: output 0 reads the score, or the types do not fit.
            (*rng.pick(&[
                "y0 = x0 > 0f32; y1 = x0",
                "y0 = true; y1 = x0; y2 = x0",
                "y0 = coord(9) > 0; y1 = x0",
                "y0 = 1f32; y1 = x0",
            ]))
            .to_string()
        }
        _ => programs::causal(acc, rank, 0)
            .map(|p| p.to_string())
            .unwrap_or_default(),
    };
    let lengths = if rng.chance(1, 2) {
        let n: usize = lead.iter().product();
        Some(
            (0..n)
                .map(|_| {
                    if rng.chance(1, 40) {
                        *rng.pick(&[-1i64, tk as i64 + 1, i64::MAX, i64::MIN])
                    } else {
                        rng.below(tk as u64 + 1) as i64
                    }
                })
                .collect(),
        )
    } else {
        None
    };
    Case {
        lead,
        hq,
        hk,
        tq,
        tk,
        dk,
        dv,
        input,
        acc,
        out,
        lse_dt,
        program,
        loads,
        lengths,
        scale: *rng.pick(&[0.3, 1.0, 0.0, -2.0, 1e30]),
        seed: rng.next_u64(),
        wild: rng.chance(1, 20),
    }
}

/// A value for a float element: moderate, with NaN, ±∞ and large ones now
/// and then.
fn value(rng: &mut Rng) -> f64 {
    match rng.below(60) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => 1e4,
        _ => (rng.below(2001) as f64 - 1000.0) / 500.0,
    }
}

fn put(d: DType, v: f64, out: &mut [u8]) {
    match d {
        DType::F16 => out.copy_from_slice(&half::f16::from_f64(v).to_bits().to_ne_bytes()),
        DType::Bf16 => out.copy_from_slice(&half::bf16::from_f64(v).to_bits().to_ne_bytes()),
        DType::F32 => out.copy_from_slice(&(v as f32).to_ne_bytes()),
        DType::F64 => out.copy_from_slice(&v.to_ne_bytes()),
        DType::I32 => out.copy_from_slice(&((v.abs() as i32) % 4).to_ne_bytes()),
        DType::Bool => out[0] = (v > 0.0) as u8,
        _ => {}
    }
}

/// A random layout of `shape` with moderate values written at its elements.
fn buffer(rng: &mut Rng, d: DType, shape: &[usize], wild: bool) -> Buf {
    let mut b = Buf::random(rng, d, shape, false, wild);
    if b.view().is_ok() && d.info().values_per_byte == 1 {
        let w = d.info().item_bytes;
        for p in b.positions() {
            let v = value(rng);
            put(d, v, &mut b.bytes[p * w..(p + 1) * w]);
        }
    }
    b
}

fn ext(lead: &[usize], tail: [usize; 3]) -> Vec<usize> {
    lead.iter().copied().chain(tail).collect()
}

struct Operands {
    q: Buf,
    k: Buf,
    v: Buf,
    loads: Vec<Buf>,
    lengths: Option<Buf>,
    o: Buf,
    lse: Buf,
}

fn operands(c: &Case, rng: &mut Rng, wild: bool) -> Operands {
    let w = |r: &mut Rng| wild && r.chance(1, 6);
    let q = {
        let x = w(rng);
        buffer(rng, c.input, &ext(&c.lead, [c.hq, c.tq, c.dk]), x)
    };
    let k = {
        let x = w(rng);
        buffer(rng, c.input, &ext(&c.lead, [c.hk, c.tk, c.dk]), x)
    };
    let v = {
        let x = w(rng);
        buffer(rng, c.input, &ext(&c.lead, [c.hk, c.tk, c.dv]), x)
    };
    let loads = c
        .loads
        .iter()
        .map(|(d, s)| buffer(rng, *d, s, false))
        .collect();
    let lengths = c.lengths.as_ref().map(|l| {
        let mut b = Buf::random(rng, DType::I64, &c.lead, false, false);
        for (p, &x) in b.positions().into_iter().zip(l) {
            b.bytes[p * 8..p * 8 + 8].copy_from_slice(&x.to_ne_bytes());
        }
        b
    });
    let o = {
        let x = w(rng);
        let z = rng.chance(1, 15);
        Buf::random(rng, c.out, &ext(&c.lead, [c.hq, c.tq, c.dv]), z, x)
    };
    let mut ls = c.lead.clone();
    ls.extend([c.hq, c.tq]);
    let lse = Buf::random(rng, c.lse_dt, &ls, false, false);
    Operands {
        q,
        k,
        v,
        loads,
        lengths,
        o,
        lse,
    }
}

fn call(c: &Case, p: &Program, ops: &mut Operands, exec: &Exec) -> tessera::Result<()> {
    let q = ops.q.view()?;
    let kv = Kv {
        k: ops.k.view()?,
        v: ops.v.view()?,
    };
    let loads: Vec<ArrayView<'_>> = ops
        .loads
        .iter()
        .map(|b| b.view())
        .collect::<Result<_, _>>()?;
    let lengths = match &ops.lengths {
        Some(b) => Some(b.view()?),
        None => None,
    };
    let mut o = ops.o.view_mut()?;
    let mut lse = ops.lse.view_mut()?;
    attention(
        p,
        c.scale,
        &q,
        &kv,
        &loads,
        lengths.as_ref(),
        &mut o,
        &mut lse,
        exec,
    )
}

fn contiguous(ops: &Operands) -> Operands {
    Operands {
        q: ops.q.to_contiguous(),
        k: ops.k.to_contiguous(),
        v: ops.v.to_contiguous(),
        loads: ops.loads.iter().map(|b| b.to_contiguous()).collect(),
        lengths: ops.lengths.as_ref().map(|b| b.to_contiguous()),
        o: ops.o.to_contiguous(),
        lse: ops.lse.to_contiguous(),
    }
}

/// Whether each row sees a key: output 0 over the pair space, within the
/// lead index's length.
fn sees(c: &Case, p: &Program, ops: &Operands) -> Result<Vec<bool>, String> {
    let mask = Program::new(p.inputs(), p.nodes().to_vec(), vec![p.outputs()[0]])
        .map_err(|e| e.to_string())?;
    let pair = ext(&c.lead, [c.hq, c.tq, c.tk]);
    let n: usize = pair.iter().product();
    let mut vis = vec![false; n];
    let dummy = [0u8; 8];
    let mut inputs = vec![ArrayView::new(c.acc, &[], &[], 0, &dummy).map_err(|e| e.to_string())?];
    for b in &ops.loads {
        inputs.push(b.view().map_err(|e| e.to_string())?);
    }
    {
        let mut out = ArrayViewMut::from_slice(&mut vis, &pair).map_err(|e| e.to_string())?;
        map(
            &mask,
            &inputs,
            std::slice::from_mut(&mut out),
            &Exec::on(Tier::Scalar),
        )
        .map_err(|e| e.to_string())?;
    }
    let per_lead = c.hq * c.tq * c.tk;
    let rows: usize = n / c.tk.max(1);
    let mut out = vec![
        false;
        if c.tk == 0 {
            c.lead.iter().product::<usize>() * c.hq * c.tq
        } else {
            rows
        }
    ];
    if c.tk == 0 {
        return Ok(out);
    }
    for (r, o) in out.iter_mut().enumerate() {
        let lead = r * c.tk / per_lead.max(1);
        let t = c.lengths.as_ref().map_or(c.tk, |l| l[lead] as usize);
        *o = vis[r * c.tk..r * c.tk + t].iter().any(|&x| x);
    }
    Ok(out)
}

fn check(c: &Case) -> Result<Verdict, String> {
    let mut rng = Rng::new(c.seed);
    let mut ins = vec![c.acc];
    ins.extend(c.loads.iter().map(|l| l.0));
    let p = match Program::parse(&c.program, &ins) {
        Ok(p) => p,
        Err(_) => return Ok(Verdict::Refused),
    };
    let mut ops = operands(c, &mut rng, c.wild);
    let (o0, l0) = (ops.o.bytes.clone(), ops.lse.bytes.clone());
    match call(c, &p, &mut ops, &Exec::default().threads(3)) {
        Err(_) => {
            check_untouched("o", &o0, &ops.o.bytes)?;
            check_untouched("lse", &l0, &ops.lse.bytes)?;
            Ok(Verdict::Refused)
        }
        Ok(()) => {
            let mut plain = contiguous(&ops);
            call(c, &p, &mut plain, &Exec::on(Tier::Scalar).threads(1))
                .map_err(|e| format!("the contiguous scalar call was refused: {e}"))?;
            let (go, gl) = (ops.o.elements(), ops.lse.elements());
            let (wo, wl) = (plain.o.elements(), plain.lse.elements());
            if let Some(i) = go.iter().zip(&wo).position(|(a, b)| a != b) {
                return Err(format!(
                    "o element {i}: {:02x?}, scalar contiguous {:02x?}",
                    go[i], wo[i]
                ));
            }
            if let Some(i) = gl.iter().zip(&wl).position(|(a, b)| a != b) {
                return Err(format!(
                    "lse element {i}: {:02x?}, scalar contiguous {:02x?}",
                    gl[i], wl[i]
                ));
            }
            let seen = sees(c, &p, &plain)?;
            let lw = c.acc.info().item_bytes;
            for (r, &s) in seen.iter().enumerate() {
                if s {
                    continue;
                }
                let l = &wl[r];
                let neg_inf = if lw == 4 {
                    f32::from_ne_bytes(l[..4].try_into().unwrap()) == f32::NEG_INFINITY
                } else {
                    f64::from_ne_bytes(l[..8].try_into().unwrap()) == f64::NEG_INFINITY
                };
                if !neg_inf {
                    return Err(format!("row {r} sees no key but lse is {l:02x?}"));
                }
                for e in 0..c.dv {
                    if wo[r * c.dv + e].iter().any(|&b| b != 0) {
                        return Err(format!(
                            "row {r} sees no key but o[{e}] is {:02x?}",
                            wo[r * c.dv + e]
                        ));
                    }
                }
            }
            Ok(Verdict::Succeeded { models: 2 })
        }
    }
}

fn target(plan: Plan, verbose: bool) -> Stats {
    run(
        "attention",
        plan,
        verbose,
        |rng: &mut Rng, _| generate(rng),
        |c: &Case| format!("{c:?}"),
        check,
    )
}

#[test]
fn attention_default_run() {
    let plan = Plan {
        cases: 2_000,
        ..Plan::default_run()
    };
    let s = target(plan, true);
    assert!(s.refusals > 0 && s.successes > 0, "{s:?}");
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn attention_long_run() {
    target(Plan::long_run(), true);
}
