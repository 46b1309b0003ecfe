//! Running a kernel over buffers laid out as a loop variant asks (contiguous,
//! one input broadcast, any strides, misaligned), reading back its logical
//! output and checking that nothing outside its elements was written; and the
//! coverage records that `tessera coverage` reads.

use std::collections::BTreeSet;
use std::path::PathBuf;
use tessera::tier::kernel_table;
use tessera_generated::{kernel_index, Args, DType, Kind, LoopFn, Tier, Variant};

/// Guard bytes before and after every buffer.
const GUARD: usize = 24;
/// The byte every destination buffer starts as.
pub const SENTINEL: u8 = 0xa5;
/// The byte input buffers are padded with.
const PAD: u8 = 0x5a;

/// The kernel of a tier, if the tier runs here and the kernel exists.
pub fn kernel(tier: Tier, kind: Kind, d: DType, v: Variant) -> Option<LoopFn> {
    let table = kernel_table(tier)?;
    Some(table[kernel_index(kind, d, v)?])
}

/// Where the operands of one run live.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Input strides in elements.
    pub src: [isize; 3],
    /// Destination stride in elements (not 0).
    pub dst: isize,
    /// Bytes added to every buffer's start (misalignment).
    pub misalign: usize,
}

impl Layout {
    /// Every operand contiguous.
    pub const CONTIG: Layout = Layout {
        src: [1, 1, 1],
        dst: 1,
        misalign: 0,
    };

    /// The layout of a contiguous or broadcast variant.
    pub fn unit(v: Variant, misalign: usize) -> Layout {
        let mut src = [1isize; 3];
        match v {
            Variant::Bcast0 => src[0] = 0,
            Variant::Bcast1 => src[1] = 0,
            Variant::Bcast2 => src[2] = 0,
            Variant::Contig => {}
            Variant::Strided => panic!("strided has no unit layout"),
        }
        Layout {
            src,
            dst: 1,
            misalign,
        }
    }

    /// The strided layouts exercised: each input sees strides 2, -1, 0 and 3
    /// across them, the destination 1, -1, 2, 3; odd ones are misaligned.
    pub fn strided() -> [Layout; 4] {
        [
            Layout {
                src: [2, -1, 0],
                dst: 1,
                misalign: 0,
            },
            Layout {
                src: [-1, 0, 3],
                dst: -1,
                misalign: 1,
            },
            Layout {
                src: [0, 3, 2],
                dst: 2,
                misalign: 0,
            },
            Layout {
                src: [3, 2, -1],
                dst: 3,
                misalign: 3,
            },
        ]
    }
}

/// A buffer holding n elements of w bytes at `stride`, and the offset of element 0.
fn place(
    logical: &[u8],
    w: usize,
    n: usize,
    stride: isize,
    misalign: usize,
    fill: u8,
) -> (Vec<u8>, usize) {
    let span = if n == 0 {
        0
    } else {
        (n - 1) * stride.unsigned_abs()
    };
    let mut buf = vec![fill; 2 * GUARD + misalign + (span + 1) * w];
    let base = GUARD + misalign + if stride < 0 { span * w } else { 0 };
    for i in 0..n {
        let off = offset(base, i, stride, w);
        buf[off..off + w].copy_from_slice(&logical[i * w..(i + 1) * w]);
    }
    (buf, base)
}

fn offset(base: usize, i: usize, stride: isize, w: usize) -> usize {
    (base as isize + i as isize * stride * w as isize) as usize
}

/// Run kernel `f` on `n` elements: input k holds `logical[k]` (n elements of
/// `in_w[k]` bytes; an input of stride 0 must hold n equal elements), laid out
/// by `layout`. Returns the n output elements, or a message if the kernel wrote
/// outside them.
pub fn run(
    f: LoopFn,
    in_w: &[usize],
    out_w: usize,
    logical: &[&[u8]],
    n: usize,
    layout: &Layout,
) -> Result<Vec<u8>, String> {
    assert_eq!(in_w.len(), logical.len());
    let mut bufs = Vec::new();
    for (k, (&w, &l)) in in_w.iter().zip(logical).enumerate() {
        assert_eq!(l.len(), n * w, "input {k}: wrong length");
        if layout.src[k] == 0 {
            for i in 1..n {
                assert_eq!(
                    &l[i * w..(i + 1) * w],
                    &l[..w],
                    "input {k} has stride 0 but differing elements"
                );
            }
        }
        bufs.push(place(l, w, n, layout.src[k], layout.misalign, PAD));
    }
    assert_ne!(layout.dst, 0);
    let (mut out, obase) = place(
        &vec![SENTINEL; n * out_w],
        out_w,
        n,
        layout.dst,
        layout.misalign,
        SENTINEL,
    );
    let mut args = Args {
        n,
        src: [std::ptr::null(); 3],
        src_stride: [0; 3],
        dst: std::ptr::null_mut(),
        dst_stride: layout.dst,
    };
    for (k, (buf, base)) in bufs.iter().enumerate() {
        // `base` lies inside `buf` (place() made it so).
        args.src[k] = buf[*base..].as_ptr();
        args.src_stride[k] = layout.src[k];
    }
    args.dst = out[obase..].as_mut_ptr();
    // SAFETY: every input buffer holds its n elements at its stride from
    // src[k] (place() sized it so, stride 0 included); the destination buffer
    // holds n elements at dst_stride from dst and overlaps no input.
    unsafe { f(&args) };
    let mut touched = vec![false; out.len()];
    let mut result = Vec::with_capacity(n * out_w);
    for i in 0..n {
        let off = offset(obase, i, layout.dst, out_w);
        result.extend_from_slice(&out[off..off + out_w]);
        touched[off..off + out_w].iter_mut().for_each(|t| *t = true);
    }
    if let Some(p) = (0..out.len()).find(|&p| !touched[p] && out[p] != SENTINEL) {
        return Err(format!(
            "wrote byte {p} of the destination buffer, outside its {n} elements (layout {layout:?})"
        ));
    }
    Ok(result)
}

/// Run kernel `f` in place: the destination is input 0 (same pointer and
/// stride), as the kernels' contract allows. Returns the n output elements.
pub fn run_in_place(
    f: LoopFn,
    in_w: &[usize],
    logical: &[&[u8]],
    n: usize,
    layout: &Layout,
) -> Vec<u8> {
    let w0 = in_w[0];
    let mut bufs = Vec::new();
    for (k, (&w, &l)) in in_w.iter().zip(logical).enumerate() {
        bufs.push(place(l, w, n, layout.src[k], layout.misalign, PAD));
    }
    let mut args = Args {
        n,
        src: [std::ptr::null(); 3],
        src_stride: [0; 3],
        dst: std::ptr::null_mut(),
        dst_stride: layout.src[0],
    };
    for (k, (buf, base)) in bufs.iter().enumerate().skip(1) {
        args.src[k] = buf[*base..].as_ptr();
        args.src_stride[k] = layout.src[k];
    }
    let (buf0, base0) = &mut bufs[0];
    let p0 = buf0[*base0..].as_mut_ptr();
    args.src[0] = p0 as *const u8;
    args.src_stride[0] = layout.src[0];
    args.dst = p0;
    // SAFETY: as in run(); the destination is exactly input 0 (same pointer,
    // same stride, same element size), which the LoopFn contract allows.
    unsafe { f(&args) };
    let (buf0, base0) = &bufs[0];
    (0..n)
        .flat_map(|i| {
            let off = offset(*base0, i, layout.src[0], w0);
            buf0[off..off + w0].to_vec()
        })
        .collect()
}

/// Lines `KIND DTYPE TIER VARIANT` of kernels a test has checked.
#[derive(Default)]
pub struct Coverage(BTreeSet<String>);

impl Coverage {
    /// Record a checked kernel.
    pub fn add(&mut self, kind: Kind, d: DType, tier: Tier, v: Variant) {
        self.0.insert(format!(
            "{} {} {} {}",
            kind.name(),
            d.name(),
            tier.name(),
            v.name()
        ));
    }

    /// Merge another record.
    pub fn merge(&mut self, o: Coverage) {
        self.0.extend(o.0);
    }

    /// How many kernels were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether one was recorded.
    pub fn contains(&self, kind: Kind, d: DType, tier: Tier, v: Variant) -> bool {
        self.0.contains(&format!(
            "{} {} {} {}",
            kind.name(),
            d.name(),
            tier.name(),
            v.name()
        ))
    }

    /// Rewrite `<dir>/<file>` with the records (see [`write_records`]).
    pub fn write(&self, file: &str) {
        write_records(file, &self.0);
    }
}

/// Collected failures of a test: a count per failing kernel (or other key),
/// and the first few messages of each in full.
#[derive(Default)]
pub struct Failures {
    /// Messages kept.
    pub msgs: Vec<String>,
    /// Failures counted.
    pub count: usize,
    /// Failures per key.
    pub by_key: std::collections::BTreeMap<String, usize>,
}

impl Failures {
    /// Record one, under the key "" (no per-kernel count).
    pub fn push(&mut self, m: String) {
        self.push_at("", m);
    }

    /// Record one under a key (a kernel's name); the first 3 of a key and at
    /// most 60 in all keep their message.
    pub fn push_at(&mut self, key: &str, m: String) {
        self.count += 1;
        let n = self.by_key.entry(key.to_string()).or_insert(0);
        *n += 1;
        if *n <= 3 && self.msgs.len() < 60 {
            self.msgs.push(m);
        }
    }

    /// Merge another.
    pub fn merge(&mut self, o: Failures) {
        self.count += o.count;
        for (k, n) in o.by_key {
            *self.by_key.entry(k).or_insert(0) += n;
        }
        for m in o.msgs {
            if self.msgs.len() < 60 {
                self.msgs.push(m);
            }
        }
    }

    /// Panic with the failing keys and the kept messages if any failure was recorded.
    pub fn finish(&self, what: &str) {
        if self.count > 0 {
            let keys: Vec<String> = self
                .by_key
                .iter()
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, n)| format!("{k} ({n})"))
                .collect();
            panic!(
                "{what}: {} failures (seed {:#x}) in {} kernels: {}\nfirst messages:\n{}",
                self.count,
                super::rng::seed(),
                keys.len(),
                keys.join(", "),
                self.msgs.join("\n")
            );
        }
    }
}

/// Run `work(item)` for every item on every core, in order of the items; the
/// results in item order.
pub fn par_map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = work(&items[i]);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// Rewrite `<dir>/<file>` with `lines`, one record a line, where dir is
/// `TESSERA_COVERAGE_DIR` or `<workspace root>/target/tessera-coverage`
/// (written to a temporary file, then renamed).
pub fn write_records(file: &str, lines: &BTreeSet<String>) {
    let dir = match std::env::var_os("TESSERA_COVERAGE_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join("tessera-coverage"),
    };
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let mut text = String::new();
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    let tmp = dir.join(format!(".{file}.{}", std::process::id()));
    let path = dir.join(file);
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", tmp.display()));
    std::fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
