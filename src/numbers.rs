//! How speed writes numbers for people: digits grouped by thousands
//! (`3,033`) and a count with its noun (`1 file`, `127 files`). It sits at
//! the bottom so the prompt, the records and every renderer say a number
//! the same way without importing a part above them.

/// 12345 → "12,345".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "1 file", "3,033 changed lines".
pub fn count(n: usize, word: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} {word}{plural}", thousands(n as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(60000), "60,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }

    #[test]
    fn a_count_says_its_noun_in_the_plural_unless_one() {
        assert_eq!(super::count(1, "file"), "1 file");
        assert_eq!(super::count(0, "file"), "0 files");
        assert_eq!(super::count(3033, "changed line"), "3,033 changed lines");
    }
}
