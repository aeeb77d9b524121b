//! Relevance of spec sections to a text: BM25 over every section of every
//! document (its heading path giving the body context), with terms split
//! from prose and code alike. Ranking a task's sections, picking among
//! sections that share a title, and tracing a PRD's requirements to a spec
//! all ask it. Pure: it scores, the caller decides.

use std::collections::{HashMap, HashSet};

use super::Document;

/// The relevance index sections are ranked by, built once and asked
/// many questions: tracing each requirement of a PRD to the sections of a
/// spec asks one per requirement.
pub struct Index(Scorer);

impl Index {
    pub fn new(docs: &[Document]) -> Index {
        Index(Scorer::new(docs))
    }

    /// Per document, per section: the section's relevance to `text` (BM25,
    /// as `rank` scores it; 0 when nothing matches) and a reason naming
    /// the terms that contributed most.
    pub fn scores(&self, text: &str) -> Vec<Vec<(f64, String)>> {
        self.0.score(text, &[])
    }

    /// `scores` of a task's text and the identifiers its diff changes.
    pub fn score(&self, text: &str, identifiers: &[String]) -> Vec<Vec<(f64, String)>> {
        self.0.score(text, identifiers)
    }
}

/// BM25 over all sections of all documents, each section a document of its
/// own terms plus its heading path's terms (a heading gives the body context).
struct Scorer {
    /// Per document, per section.
    sections: Vec<Vec<Terms>>,
    /// How many sections contain each term.
    document_frequency: HashMap<String, usize>,
    total: usize,
    average_length: f64,
}

/// One section's terms.
struct Terms {
    counts: HashMap<String, usize>,
    /// Number of terms, repeats included.
    length: usize,
    heading_only: bool,
}

/// A section with no body is cheap to include but says nothing by itself.
const HEADING_ONLY_FACTOR: f64 = 0.25;
const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Scorer {
    fn new(docs: &[Document]) -> Self {
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        let mut total = 0;
        let mut length_sum = 0;
        let sections = docs
            .iter()
            .map(|doc| {
                doc.sections
                    .iter()
                    .map(|section| {
                        let mut counts: HashMap<String, usize> = HashMap::new();
                        let mut length = 0;
                        let ancestors = section
                            .titles
                            .iter()
                            .take(section.titles.len().saturating_sub(1));
                        for text in ancestors.map(String::as_str).chain([section.text.as_str()]) {
                            for term in terms(text) {
                                *counts.entry(term).or_default() += 1;
                                length += 1;
                            }
                        }
                        for term in counts.keys() {
                            *document_frequency.entry(term.clone()).or_default() += 1;
                        }
                        total += 1;
                        length_sum += length;
                        let heading_only = section.body().trim().is_empty();
                        Terms {
                            counts,
                            length,
                            heading_only,
                        }
                    })
                    .collect()
            })
            .collect();
        let average_length = if total == 0 {
            1.0
        } else {
            (length_sum as f64 / total as f64).max(1.0)
        };
        Scorer {
            sections,
            document_frequency,
            total,
            average_length,
        }
    }

    /// Per document, per section: the score and a reason naming the terms
    /// that contributed most.
    fn score(&self, task_text: &str, identifiers: &[String]) -> Vec<Vec<(f64, String)>> {
        let mut query: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for term in terms(task_text).chain(identifiers.iter().flat_map(|i| terms(i))) {
            if seen.insert(term.clone()) {
                query.push(term);
            }
        }
        self.sections
            .iter()
            .map(|doc| {
                doc.iter()
                    .map(|section| {
                        let Terms {
                            counts,
                            length,
                            heading_only,
                        } = section;
                        let mut contributions: Vec<(f64, &str)> = query
                            .iter()
                            .filter_map(|term| {
                                let tf = *counts.get(term)? as f64;
                                let n =
                                    self.document_frequency.get(term).copied().unwrap_or(0) as f64;
                                let idf = (1.0 + (self.total as f64 - n + 0.5) / (n + 0.5)).ln();
                                let norm =
                                    K1 * (1.0 - B + B * *length as f64 / self.average_length);
                                Some((idf * tf * (K1 + 1.0) / (tf + norm), term.as_str()))
                            })
                            .collect();
                        let mut score: f64 = contributions.iter().map(|(c, _)| c).sum();
                        if *heading_only {
                            score *= HEADING_ONLY_FACTOR;
                        }
                        contributions.sort_by(|a, b| b.0.total_cmp(&a.0));
                        let reason = if contributions.is_empty() {
                            "no terms in common with the task".to_string()
                        } else {
                            let top: Vec<&str> =
                                contributions.iter().take(5).map(|(_, t)| *t).collect();
                            let heading = if *heading_only { " (heading only)" } else { "" };
                            format!("matches {}{heading}", top.join(", "))
                        };
                        (score, reason)
                    })
                    .collect()
            })
            .collect()
    }
}

/// Lower-case terms of prose or code: words split at non-alphanumerics and at
/// snake_case and CamelCase boundaries, stop-words and single letters removed,
/// plurals folded so "books" meets `Book`. Text in a script without spaces
/// (Chinese, Japanese) has no words to split at: its runs give overlapping
/// pairs of characters, as search engines index it, so "返金処理" meets
/// "返金は5営業日以内に処理" through "返金" and "処理".
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(spaceless_pairs)
        .flat_map(camel_parts)
        .map(|word| fold_plural(&word.to_lowercase()))
        .filter(|term| term.chars().count() > 1 && !STOP_WORDS.contains(&term.as_str()))
}

/// A word as it is, or, where it holds letters of a script without spaces,
/// its other runs as they are and each pair of adjacent spaceless letters.
fn spaceless_pairs(word: &str) -> Vec<&str> {
    if !word.chars().any(super::script::spaceless) {
        return vec![word];
    }
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let end = |i: usize| chars.get(i).map_or(word.len(), |(at, _)| *at);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let spaceless = super::script::spaceless(chars[i].1);
        let mut j = i;
        while j < chars.len() && super::script::spaceless(chars[j].1) == spaceless {
            j += 1;
        }
        if spaceless && j - i > 1 {
            parts.extend((i..j - 1).map(|k| &word[chars[k].0..end(k + 2)]));
        } else {
            parts.push(&word[chars[i].0..end(j)]);
        }
        i = j;
    }
    parts
}

/// "BookQuery" → Book, Query; "HTTPServer" → HTTP, Server; "utf8" stays whole.
fn camel_parts(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower));
        if boundary {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    if start < word.len() {
        parts.push(&word[start..]);
    }
    parts
}

fn fold_plural(term: &str) -> String {
    if term.len() > 4 && term.ends_with("ies") {
        format!("{}y", &term[..term.len() - 3])
    } else if term.len() > 3
        && term.ends_with('s')
        && !term.ends_with("ss")
        && !term.ends_with("us")
        && !term.ends_with("is")
    {
        term[..term.len() - 1].to_string()
    } else {
        term.to_string()
    }
}

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "could", "do", "does", "each", "for", "from", "has", "have",
    "how", "if", "in", "into", "is", "it", "its", "may", "more", "must", "no", "not", "of", "on",
    "only", "or", "other", "our", "should", "so", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "up", "was", "we", "were",
    "what", "when", "which", "while", "who", "will", "with", "would", "you", "your", "fn", "let",
    "mut", "pub", "self", "def", "return", "new", "get", "set", "add",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn text_without_spaces_gives_pairs_of_characters() {
        let got: Vec<String> = terms("返金処理はP0です。refund_policy").collect();
        assert_eq!(
            got,
            strings(&[
                "返金", "金処", "処理", "理は", "p0", "です", "refund", "policy"
            ])
        );
    }

    #[test]
    fn identifiers_split_into_terms() {
        let got: Vec<String> =
            terms("BookQuery HTTPServer availability_check parse_v2 the books queries").collect();
        assert_eq!(
            got,
            strings(&[
                "book",
                "query",
                "http",
                "server",
                "availability",
                "check",
                "parse",
                "v2",
                "book",
                "query"
            ])
        );
    }
}
