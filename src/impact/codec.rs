//! Encoding of cached extractions.

use super::symbols::FileSymbols;

pub fn encode(syms: &FileSymbols) -> Vec<u8> {
    // Serializing plain structs with string keys cannot fail; an empty entry
    // would only decode as corrupt and be rebuilt.
    serde_json::to_vec(syms).unwrap_or_default()
}

pub fn decode(bytes: &[u8]) -> Option<FileSymbols> {
    serde_json::from_slice(bytes).ok()
}
