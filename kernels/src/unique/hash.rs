//! The keyed hash and the linear-probing tables of `unique`.

use crate::error::Result;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

static PROCESS: OnceLock<[u64; 4]> = OnceLock::new();
static FIXED: AtomicBool = AtomicBool::new(false);
static FIXED_SEED: AtomicU64 = AtomicU64::new(0);

/// splitmix64's finaliser: a seed's secrets.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn from_seed(seed: u64) -> [u64; 4] {
    // Odd multipliers with both halves populated.
    let mut s = [0u64; 4];
    for (i, v) in s.iter_mut().enumerate() {
        *v = mix(seed ^ (i as u64).wrapping_mul(0xA076_1D64_78BD_642F)) | 1 | (1 << 63);
    }
    s
}

/// Fix the hash seed of every later `unique` call in this process (`Some`),
/// or return to the secret the process drew from the operating system
/// (`None`). The numbering never depends on the seed: this exists so that
/// tests can show it, and can replay a table's behaviour.
pub fn set_seed_for_tests(seed: Option<u64>) {
    match seed {
        Some(s) => {
            FIXED_SEED.store(s, Ordering::SeqCst);
            FIXED.store(true, Ordering::SeqCst);
        }
        None => FIXED.store(false, Ordering::SeqCst),
    }
}

/// The secrets of this call: the fixed seed's, else the process's, drawn
/// once from the operating system's randomness (through std's
/// `RandomState`).
pub(crate) fn secrets() -> [u64; 4] {
    if FIXED.load(Ordering::SeqCst) {
        return from_seed(FIXED_SEED.load(Ordering::SeqCst));
    }
    *PROCESS.get_or_init(|| {
        let rs = RandomState::new();
        from_seed(rs.hash_one(0x5EED_u64) ^ rs.hash_one(0xC0FFEE_u64).rotate_left(17))
    })
}

/// wyhash's multiply-fold: the high and low halves of a 128-bit product,
/// xored.
#[inline(always)]
pub(crate) fn mum(a: u64, b: u64) -> u64 {
    let r = a as u128 * b as u128;
    (r as u64) ^ ((r >> 64) as u64)
}

/// The hash of a one-word key.
#[inline(always)]
pub(crate) fn hash1(k: u64, s: &[u64; 4]) -> u64 {
    mum(k ^ s[0], s[1])
}

/// The hash of a key of several words, each folded in turn.
#[inline(always)]
pub(crate) fn hash_words(row: &[u64], s: &[u64; 4]) -> u64 {
    let mut h = s[2];
    for &w in row {
        h = mum(w ^ s[0], h ^ s[1]);
    }
    mum(h ^ s[3], s[1])
}

/// Slots below which a table is kept at most a quarter full (it fits a
/// core's L2 cache; fewer collisions there are fewer probes).
const SMALL_SLOTS: usize = 1 << 16;

/// The most slots a table of at most `keys` keys grows to: a quarter full
/// while small, half full past [`SMALL_SLOTS`].
pub(crate) fn slots_for(keys: usize) -> usize {
    let per = if keys <= SMALL_SLOTS / 4 { 4 } else { 2 };
    keys.saturating_mul(per).max(1024).next_power_of_two()
}

/// Whether a table of `slots` slots holding `len` keys grows.
#[inline(always)]
fn too_full(len: usize, slots: usize) -> bool {
    len * 2 > slots || (slots < SMALL_SLOTS && len * 4 > slots)
}

pub(crate) use crate::alloc::try_reserve as reserve;

/// A table of one-word keys: each slot the key and its number + 1 (0:
/// empty). Both buffers are reserved up front for `max_keys` keys, so that
/// growing never allocates.
pub(crate) struct Table1 {
    slots: Vec<[u64; 2]>,
    spare: Vec<[u64; 2]>,
    len: usize,
    s: [u64; 4],
}

/// Slots from which a table is past the caches: its searches ask for their
/// slot ahead ([`Table1::prefetch`]) and its growth for the target slots.
const PREFETCH_SLOTS: usize = 1 << 17;

impl Table1 {
    pub(crate) fn new(max_keys: usize, s: [u64; 4]) -> Result<Self> {
        let cap = slots_for(max_keys);
        let mut slots = Vec::new();
        let mut spare = Vec::new();
        reserve(&mut slots, cap, "unique table")?;
        reserve(&mut spare, cap, "unique table")?;
        slots.resize(1024, [0, 0]);
        Ok(Table1 {
            slots,
            spare,
            len: 0,
            s,
        })
    }

    /// Size an empty table for `keys` keys at once (at most the keys it was
    /// reserved for; within that reservation, so no allocation), instead of
    /// growing to them. Only the speed depends on it.
    pub(crate) fn start_for(&mut self, keys: usize) {
        let cap = slots_for(keys).min(self.slots.capacity());
        if self.len == 0 && cap > self.slots.len() {
            self.slots.resize(cap, [0, 0]);
        }
    }

    /// Ask for the slot where a search for `key` starts (a hint: the
    /// results are the same without it). Searches of keys a few rows ahead
    /// then overlap their misses in a table far larger than the caches.
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        let i = hash1(key, &self.s) as usize & (self.slots.len() - 1);
        crate::simd::prefetch_read(self.slots.as_ptr().wrapping_add(i) as *const u8);
    }

    /// Whether the table is past the caches, where [`Table1::prefetch`]
    /// pays (below, the hash it computes twice is the cost).
    #[inline(always)]
    pub(crate) fn large(&self) -> bool {
        self.slots.len() >= PREFETCH_SLOTS
    }

    /// The number of `key`, or `next` after inserting it (then `true`).
    #[inline(always)]
    pub(crate) fn find_or_insert(&mut self, key: u64, next: u64) -> (u64, bool) {
        let mask = self.slots.len() - 1;
        let mut i = hash1(key, &self.s) as usize & mask;
        loop {
            // SAFETY: i is masked below the table's power-of-two length.
            let slot = unsafe { self.slots.get_unchecked_mut(i) };
            if slot[1] == 0 {
                *slot = [key, next + 1];
                self.len += 1;
                if too_full(self.len, self.slots.len()) {
                    self.grow();
                }
                return (next, true);
            }
            if slot[0] == key {
                return (slot[1] - 1, false);
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        self.spare.clear();
        // Within the reserved capacity: no allocation.
        self.spare.resize(cap, [0, 0]);
        let mask = cap - 1;
        let large = cap >= PREFETCH_SLOTS;
        for (j, &slot) in self.slots.iter().enumerate() {
            if large {
                // The slot of a key a few slots on (a hint; as in `prefetch`).
                if let Some(a) = self.slots.get(j + 16) {
                    let i = hash1(a[0], &self.s) as usize & mask;
                    crate::simd::prefetch_read(self.spare.as_ptr().wrapping_add(i) as *const u8);
                }
            }
            if slot[1] != 0 {
                let mut i = hash1(slot[0], &self.s) as usize & mask;
                while self.spare[i][1] != 0 {
                    i = (i + 1) & mask;
                }
                self.spare[i] = slot;
            }
        }
        std::mem::swap(&mut self.slots, &mut self.spare);
    }
}

/// A table of keys of several words: each slot the number + 1 in its low
/// 40 bits and 24 bits of the hash above (0: empty); keys compare by their
/// first rows' words.
pub(crate) struct TableW {
    slots: Vec<u64>,
    spare: Vec<u64>,
    len: usize,
    s: [u64; 4],
}

const ID_BITS: u32 = 40;
const ID_MASK: u64 = (1 << ID_BITS) - 1;

impl TableW {
    pub(crate) fn new(max_keys: usize, s: [u64; 4]) -> Result<Self> {
        let cap = slots_for(max_keys);
        let mut slots = Vec::new();
        let mut spare = Vec::new();
        reserve(&mut slots, cap, "unique table")?;
        reserve(&mut spare, cap, "unique table")?;
        slots.resize(1024, 0);
        Ok(TableW {
            slots,
            spare,
            len: 0,
            s,
        })
    }

    /// The number of the key `row` (w words of `keys`), or `next` after
    /// inserting it; `firsts` holds each number's first row.
    #[inline(always)]
    pub(crate) fn find_or_insert(
        &mut self,
        keys: &[u64],
        w: usize,
        row: usize,
        firsts: &[u64],
        next: u64,
    ) -> (u64, bool) {
        let words = &keys[row * w..row * w + w];
        let h = hash_words(words, &self.s);
        let tag = h >> ID_BITS;
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                self.slots[i] = (next + 1) | (tag << ID_BITS);
                self.len += 1;
                if too_full(self.len, self.slots.len()) {
                    self.grow(keys, w, firsts, row);
                }
                return (next, true);
            }
            if slot >> ID_BITS == tag {
                let id = (slot & ID_MASK) - 1;
                let f = firsts[id as usize] as usize;
                if keys[f * w..f * w + w] == *words {
                    return (id, false);
                }
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self, keys: &[u64], w: usize, firsts: &[u64], row: usize) {
        let cap = self.slots.len() * 2;
        self.spare.clear();
        self.spare.resize(cap, 0);
        let mask = cap - 1;
        for &slot in &self.slots {
            if slot != 0 {
                // The key just inserted is not in `firsts` yet: its first
                // row is `row`, the one being numbered.
                let id = ((slot & ID_MASK) - 1) as usize;
                let f = firsts.get(id).map_or(row, |&f| f as usize);
                let h = hash_words(&keys[f * w..f * w + w], &self.s);
                let mut i = h as usize & mask;
                while self.spare[i] != 0 {
                    i = (i + 1) & mask;
                }
                self.spare[i] = slot;
            }
        }
        std::mem::swap(&mut self.slots, &mut self.spare);
    }
}
