//! Scripts written without spaces between words (Chinese, Japanese, Thai,
//! …): where text is measured, compared or split into terms, their letters
//! count one by one, since a run of them is a sentence rather than a word.

/// A letter of a script written without spaces between words: Han
/// ideographs, Hiragana, Katakana (half-width too), Thai, Lao, Khmer,
/// Myanmar, Tibetan. Hangul is written with spaces and is not one.
pub fn spaceless(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x309F      // Hiragana
        | 0x30A0..=0x30FF    // Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x3134F  // CJK extensions B–G
        | 0x0E00..=0x0E7F    // Thai
        | 0x0E80..=0x0EFF    // Lao
        | 0x1780..=0x17FF    // Khmer
        | 0x1000..=0x109F    // Myanmar
        | 0x0F00..=0x0FFF    // Tibetan
    ) && c.is_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::spaceless;

    #[test]
    fn cjk_and_thai_letters_are_spaceless_latin_and_hangul_are_not() {
        for c in ['検', 'け', 'ケ', 'ｹ', 'ー', 'ก'] {
            assert!(spaceless(c), "{c}");
        }
        for c in ['a', 'ß', 'é', '한', '1', '。', '、', ' '] {
            assert!(!spaceless(c), "{c}");
        }
    }
}
