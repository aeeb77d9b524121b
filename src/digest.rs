//! Content hashes as speed records them: `sha256:<hex>`. The diff, the
//! spec sections sent, the prompt and the spec files a verdict rests on are
//! all named this way, so one function writes the form everywhere.

use sha2::{Digest, Sha256};

/// `sha256:<hex>` of some bytes.
pub fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// `sha256:<hex>` of a text.
pub fn sha256_text(text: &str) -> String {
    sha256(text.as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_form_is_the_algorithm_and_lower_hex() {
        assert_eq!(
            super::sha256_text("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
