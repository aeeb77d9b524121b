//! The layout of a vocabulary table, shared by the build script that writes
//! the tables (`build.rs` includes this file) and the code that reads them,
//! so both hash and place a token the same way. Nothing here may use the
//! crate: the build script compiles this file on its own.

/// Bits of a slot holding `rank + 1` (0 marks an empty slot). The largest
/// vocabulary, o200k_base, has 199,998 ranks, well below 2^18.
pub const RANK_BITS: u32 = 18;
/// The other bits of a slot hold this many bits of the token's hash, so a
/// probe rejects almost every other token without comparing bytes.
pub const TAG_BITS: u32 = 32 - RANK_BITS;

/// A 64-bit hash of a token's bytes. Its high bits choose the slot and the
/// tag (a multiply spreads every input bit into them).
pub fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mix = |h: u64, word: u64| (h.rotate_left(23) ^ word).wrapping_mul(K);
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = mix(h, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = mix(h, u64::from_le_bytes(word));
    }
    // Short tokens leave the high bytes of their one word empty: fold the
    // low half back in so the high bits depend on every byte.
    (h ^ (h >> 32)).wrapping_mul(K)
}

/// The first slot to probe for `hash` in a table of `2^bits` slots, and the
/// tag stored beside the rank.
pub fn place(hash: u64, bits: u32) -> (usize, u32) {
    let slot = (hash >> (64 - bits)) as usize;
    let tag = ((hash >> (64 - bits - TAG_BITS)) as u32) & ((1 << TAG_BITS) - 1);
    (slot, tag)
}
