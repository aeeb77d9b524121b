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

/// A character of a script without spaces or of its punctuation (CJK
/// symbols and punctuation, full-width forms): between two of them, a line
/// break is no space.
pub fn wide(c: char) -> bool {
    spaceless(c) || matches!(c as u32, 0x3000..=0x303F | 0xFF00..=0xFF65 | 0xFFE0..=0xFFEE)
}

/// Letters of a script without spaces that make about one word.
const SPACELESS_PER_WORD: f64 = 2.0;

/// How many words `text` holds: its space-separated words with a letter or
/// digit, where letters of a script without spaces count two to a word (a
/// run of them is a phrase, not a word).
pub fn words(text: &str) -> f64 {
    text.split_whitespace()
        .map(|word| {
            let letters = word.chars().filter(|&c| spaceless(c)).count();
            let other = word.chars().any(|c| c.is_alphanumeric() && !spaceless(c));
            letters as f64 / SPACELESS_PER_WORD + f64::from(u8::from(other))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::spaceless;

    #[test]
    fn words_count_two_spaceless_letters_as_one() {
        assert_eq!(super::words("Users can search"), 3.0);
        assert_eq!(super::words("返金は管理者"), 3.0);
        assert_eq!(super::words("優先度：P0"), 2.5);
        assert_eq!(super::words(" ... — "), 0.0);
    }

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
