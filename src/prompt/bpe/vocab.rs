//! A vocabulary read in place from the tables `build.rs` prepared: token
//! bytes to rank and back, with nothing to build at run time.

use super::table;

/// One encoding's tables, as included in the binary.
pub(super) struct Vocab {
    /// Every token's bytes, in rank order.
    tokens: &'static [u8],
    /// Little-endian `u32` offsets into `tokens`, one per rank and one more.
    offsets: &'static [u8],
    /// Little-endian `u32` slots: `tag << RANK_BITS | rank + 1`, or 0.
    slots: &'static [u8],
    bits: u32,
}

/// The tables of the named encoding (a name `build.rs` prepared).
macro_rules! included {
    ($name:literal) => {
        Vocab::new(
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".tokens")),
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".offsets")),
            include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".slots")),
        )
    };
}

pub(super) static O200K_BASE: Vocab = included!("o200k_base");
pub(super) static CL100K_BASE: Vocab = included!("cl100k_base");
pub(super) static P50K_BASE: Vocab = included!("p50k_base");
pub(super) static R50K_BASE: Vocab = included!("r50k_base");

impl Vocab {
    const fn new(tokens: &'static [u8], offsets: &'static [u8], slots: &'static [u8]) -> Vocab {
        // `build.rs` writes a power of two of 4-byte slots.
        let bits = (slots.len() / 4).trailing_zeros();
        Vocab {
            tokens,
            offsets,
            slots,
            bits,
        }
    }

    /// The rank of the token made of exactly `bytes`, if there is one.
    pub(super) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let (mut slot, tag) = table::place(table::hash(bytes), self.bits);
        let mask = (1 << self.bits) - 1;
        // The table is at most half full, so a probe always ends at an empty slot.
        loop {
            let entry = word(self.slots, slot);
            if entry == 0 {
                return None;
            }
            if entry >> table::RANK_BITS == tag {
                let rank = (entry & ((1 << table::RANK_BITS) - 1)) - 1;
                if self.token(rank) == bytes {
                    return Some(rank);
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Read a byte of every page of the tables, so that the lookups after
    /// it find them mapped. The tables are 4 MB of the binary, paged in by
    /// the lookups that first touch them; a first count of a 6 kB prompt
    /// spent half its time on those page faults.
    pub(super) fn page_in(&self) {
        const PAGE: usize = 4096;
        for table in [self.tokens, self.offsets, self.slots] {
            for at in (0..table.len()).step_by(PAGE) {
                std::hint::black_box(table[at]);
            }
        }
    }

    /// The bytes of the token of this rank (empty for a rank the encoding skips).
    pub(super) fn token(&self, rank: u32) -> &'static [u8] {
        let rank = rank as usize;
        let start = word(self.offsets, rank) as usize;
        let end = word(self.offsets, rank + 1) as usize;
        &self.tokens[start..end]
    }

    /// How many ranks the encoding has (skipped ones included).
    #[cfg(test)]
    pub(super) fn ranks(&self) -> u32 {
        (self.offsets.len() / 4 - 1) as u32
    }
}

/// The `i`th little-endian `u32` of a table. Four plain indexings rather
/// than a sub-slice: unoptimized test builds call this most of all.
fn word(table: &[u8], i: usize) -> u32 {
    let at = i * 4;
    u32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]])
}
