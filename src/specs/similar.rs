//! How close a section's heading is to a reference that names none: the
//! headings a person most likely meant ("did you mean"), when a section was
//! renamed since the task was planned (`Instance Folders`, now `Instance
//! Directories`) or its name was misspelt. Closeness is a similarity of
//! words that tolerates a misspelling, a plural, an abbreviation and one
//! renamed word among several; titles in scripts without spaces (CJK) are
//! compared character by character. Pure: it never decides what is sent.

use super::{Document, markdown::normalise_name};

/// A heading at least this close to a reference may be sent in its place.
pub const STAND_IN: f64 = 0.5;
/// A heading less close than this is not worth suggesting.
pub const SUGGEST: f64 = 0.3;

/// The sections of `doc` closest to the reference `name`, best first, with
/// their similarity (0–1), at most `n`, those under `SUGGEST` left out.
/// Equal similarities keep document order.
pub fn closest(doc: &Document, name: &str, n: usize) -> Vec<(usize, f64)> {
    let wanted = normalise_name(name.trim_start().trim_start_matches('#'));
    let parts: Vec<&str> = wanted
        .split('>')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let Some((title, parents)) = parts.split_last() else {
        return Vec::new();
    };
    let parents = parents.join(" ");
    let mut scored: Vec<(usize, f64)> = doc
        .sections
        .iter()
        .enumerate()
        .filter(|(_, s)| s.level > 0)
        .map(|(i, s)| {
            let own = similarity(title, &normalise_name(s.title()));
            let score = if parents.is_empty() {
                own
            } else {
                let above = s.titles[..s.titles.len() - 1]
                    .iter()
                    .map(|t| normalise_name(t))
                    .collect::<Vec<_>>()
                    .join(" ");
                0.7 * own + 0.3 * similarity(&parents, &above)
            };
            (i, score)
        })
        .filter(|(_, score)| *score >= SUGGEST)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(n);
    scored
}

/// How alike two titles are, 0–1: a word-by-word match (Dice's
/// coefficient over words, each pair scored by `word_similarity`), so
/// "Instance Folders" is half of "Instance Directories" and "Confguration
/// Basics" nearly all of "Configuration Basics". The edit distance of the
/// whole counts where words do not: for titles in a script without spaces,
/// and for a near-copy ("Datafiles" of "Data Files"); between two titles
/// with different words it would reward letters they share by chance.
pub fn similarity(a: &str, b: &str) -> f64 {
    let a = a.to_lowercase();
    let b = b.to_lowercase();
    if a == b {
        return 1.0;
    }
    let words_a = words(&a);
    let words_b = words(&b);
    let by_words = if words_a.is_empty() || words_b.is_empty() {
        0.0
    } else {
        let mut used = vec![false; words_b.len()];
        let mut sum = 0.0;
        for wa in &words_a {
            let best = words_b
                .iter()
                .enumerate()
                .filter(|(j, _)| !used[*j])
                .map(|(j, wb)| (j, word_similarity(wa, wb)))
                .max_by(|x, y| x.1.total_cmp(&y.1));
            if let Some((j, score)) = best.filter(|(_, s)| *s > 0.0) {
                used[j] = true;
                sum += score;
            }
        }
        2.0 * sum / (words_a.len() + words_b.len()) as f64
    };
    let chars_a: Vec<char> = a.chars().filter(|c| !c.is_whitespace()).collect();
    let chars_b: Vec<char> = b.chars().filter(|c| !c.is_whitespace()).collect();
    let longest = chars_a.len().max(chars_b.len());
    let by_chars = if longest == 0 {
        0.0
    } else {
        1.0 - levenshtein(&chars_a, &chars_b) as f64 / longest as f64
    };
    let spaceless = a.chars().chain(b.chars()).any(super::script::spaceless);
    if spaceless || by_chars >= 0.8 {
        by_words.max(by_chars)
    } else {
        by_words
    }
}

/// Words of a title: runs of letters and digits.
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// 1 for the same word; 0.9 for its plural; 0.8 for a prefix of at least
/// four letters ("Config" of "Configuration"); else by edit distance, when
/// at most a quarter of the longer word differs; else 0.
fn word_similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let singular = |w: &str| w.strip_suffix('s').unwrap_or(w).to_string();
    if singular(a) == singular(b) {
        return 0.9;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.chars().count() >= 4 && long.starts_with(short) {
        return 0.8;
    }
    let ca: Vec<char> = a.chars().collect();
    let cb: Vec<char> = b.chars().collect();
    let longest = ca.len().max(cb.len());
    let distance = levenshtein(&ca, &cb);
    if distance * 4 <= longest {
        1.0 - distance as f64 / longest as f64
    } else {
        0.0
    }
}

fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    #[test]
    fn renamed_misspelt_and_abbreviated_titles_are_close() {
        assert!(similarity("instance folders", "instance directories") >= STAND_IN);
        assert!(similarity("confguration basics", "configuration basics") > 0.9);
        assert!(similarity("config basics", "configuration basics") > 0.85);
        assert!(similarity("sessions", "session handling") >= STAND_IN);
        assert!(similarity("debug mod", "debug mode") > 0.8);
        assert!(similarity("instance folders", "configuring from data files") < SUGGEST);
        assert!(similarity("checkout", "message flashing") < SUGGEST);
        assert_eq!(similarity("Debug Mode", "debug mode"), 1.0);
    }

    #[test]
    fn titles_without_spaces_compare_by_characters() {
        assert!(similarity("検索機能", "検索の機能") >= STAND_IN);
        assert!(similarity("ユーザー登録", "決済処理") < SUGGEST);
    }

    #[test]
    fn closest_are_ranked_best_first_and_weak_ones_left_out() {
        let doc = parse(
            "s.md",
            "# Configuration Handling\n## Configuration Basics\n## Instance Directories\n## Debug Mode\n# Quickstart\n## Instance Setup\n",
        );
        let names = |name: &str| -> Vec<String> {
            closest(&doc, name, 3)
                .into_iter()
                .map(|(i, _)| doc.sections[i].heading_path())
                .collect()
        };
        assert_eq!(
            names("Instance Folders"),
            [
                "Configuration Handling > Instance Directories",
                "Quickstart > Instance Setup"
            ]
        );
        assert_eq!(
            names("Confguration Basic")[0],
            "Configuration Handling > Configuration Basics"
        );
        assert!(names("Checkout").is_empty());
        // A parent in the reference weighs in.
        assert_eq!(
            names("Quickstart > Instance Folders")[0],
            "Quickstart > Instance Setup"
        );
    }
}
