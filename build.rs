//! Prepares the tokenizer vocabularies at build time, so a run never parses
//! them: each `src/prompt/bpe/data/NAME.tiktoken` (the published files, one
//! `base64-token rank` pair a line) becomes three little-endian tables in
//! `OUT_DIR` that the binary includes as they are:
//!
//! - `NAME.tokens`: every token's bytes, in rank order;
//! - `NAME.offsets`: `u32` offsets into `NAME.tokens`, one per rank and one
//!   past the last (a rank the file skips has an empty token);
//! - `NAME.slots`: an open-addressing hash table from token bytes to rank,
//!   laid out by `src/prompt/bpe/table.rs`, which is compiled here too.

use std::path::Path;

#[path = "src/prompt/bpe/table.rs"]
mod table;

const ENCODINGS: [&str; 4] = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"];

fn main() {
    println!("cargo::rerun-if-changed=src/prompt/bpe/table.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let out = Path::new(&out);
    for name in ENCODINGS {
        let source = format!("src/prompt/bpe/data/{name}.tiktoken");
        println!("cargo::rerun-if-changed={source}");
        let text = std::fs::read_to_string(&source)
            .unwrap_or_else(|e| panic!("cannot read the {name} vocabulary {source}: {e}"));
        let ranked = parse(&source, &text);
        let (tokens, offsets, slots) = tables(&source, &ranked);
        for (ext, bytes) in [("tokens", tokens), ("offsets", offsets), ("slots", slots)] {
            let path = out.join(format!("{name}.{ext}"));
            std::fs::write(&path, bytes)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
    }
}

/// `(token bytes, rank)` for every line of a `.tiktoken` file.
fn parse(source: &str, text: &str) -> Vec<(Vec<u8>, u32)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let bad = |what: &str| panic!("{source}:{}: {what}: {line:?}", i + 1);
            let Some((token, rank)) = line.split_once(' ') else {
                bad("expected `base64-token rank`")
            };
            let token = decode_base64(token).unwrap_or_else(|| bad("bad base64"));
            let rank: u32 = rank.parse().unwrap_or_else(|_| bad("bad rank"));
            if token.is_empty() || rank >= (1 << table::RANK_BITS) - 1 {
                bad("empty token or rank out of range");
            }
            (token, rank)
        })
        .collect()
}

/// The three tables of one vocabulary, as bytes.
fn tables(source: &str, ranked: &[(Vec<u8>, u32)]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let ranks = ranked
        .iter()
        .map(|(_, r)| *r as usize)
        .max()
        .map_or(0, |r| r + 1);
    let mut by_rank: Vec<Option<&[u8]>> = vec![None; ranks];
    for (token, rank) in ranked {
        if by_rank[*rank as usize].replace(token).is_some() {
            panic!("{source}: rank {rank} appears twice");
        }
    }
    let mut tokens = Vec::new();
    let mut offsets = Vec::with_capacity((ranks + 1) * 4);
    for token in &by_rank {
        offsets.extend_from_slice(&(tokens.len() as u32).to_le_bytes());
        tokens.extend_from_slice(token.unwrap_or_default());
    }
    offsets.extend_from_slice(&(tokens.len() as u32).to_le_bytes());

    // A power of two at least twice the token count: probes stay short and
    // always reach an empty slot.
    let bits = (ranked.len() * 2).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    let mut slots = vec![0u32; 1 << bits];
    for (token, rank) in ranked {
        let (mut slot, tag) = table::place(table::hash(token), bits);
        while slots[slot] != 0 {
            let other = (slots[slot] & ((1 << table::RANK_BITS) - 1)) - 1;
            if by_rank[other as usize] == Some(token.as_slice()) {
                panic!("{source}: token {token:?} has two ranks, {other} and {rank}");
            }
            slot = (slot + 1) & mask;
        }
        slots[slot] = (tag << table::RANK_BITS) | (rank + 1);
    }
    let slots = slots.iter().flat_map(|s| s.to_le_bytes()).collect();
    (tokens, offsets, slots)
}

/// Standard base64 with `=` padding; `None` for anything else.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let text = text.as_bytes();
    if text.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for (i, quad) in text.chunks(4).enumerate() {
        let last = i + 1 == text.len() / 4;
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut bits = 0u32;
        for &c in &quad[..4 - padding] {
            bits = (bits << 6) | u32::from(value(c)?);
        }
        bits <<= 6 * padding as u32;
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - padding]);
    }
    Some(out)
}
