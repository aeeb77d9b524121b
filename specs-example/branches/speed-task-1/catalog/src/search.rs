//! Finding books by title or author, best matches first.

use std::cmp::Ordering;

use crate::Book;

/// Shorter queries would match most of the catalog and help nobody.
pub const MIN_QUERY_CHARS: usize = 2;

/// The most results one search returns.
pub const MAX_RESULTS: usize = 20;

/// How well a book matches; variants are declared best first so the derived
/// order sorts the best matches to the front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Relevance {
    ExactTitle,
    TitlePrefix,
    Other,
}

/// Books whose title or author contains `query`, ignoring case and the
/// whitespace around the query; exact titles first, then title prefixes,
/// then the rest, each group ordered by title. At most `MAX_RESULTS`.
pub fn search<'a>(books: &'a [Book], query: &str) -> Vec<&'a Book> {
    let query = query.trim().to_lowercase();
    if query.chars().count() < MIN_QUERY_CHARS {
        return Vec::new();
    }
    let mut found: Vec<(Relevance, String, &Book)> = books
        .iter()
        .filter_map(|book| {
            let title = book.title.to_lowercase();
            let relevance = if title == query {
                Relevance::ExactTitle
            } else if title.starts_with(&query) {
                Relevance::TitlePrefix
            } else if title.contains(&query) || book.author.to_lowercase().contains(&query) {
                Relevance::Other
            } else {
                return None;
            };
            Some((relevance, title, book))
        })
        .collect();
    found.sort_by(|a, b| match a.0.cmp(&b.0) {
        Ordering::Equal => a.1.cmp(&b.1),
        other => other,
    });
    found
        .into_iter()
        .take(MAX_RESULTS)
        .map(|(_, _, book)| book)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(id: u32, title: &str, author: &str) -> Book {
        Book {
            id,
            title: title.into(),
            author: author.into(),
            copies: 1,
        }
    }

    fn ids(found: Vec<&Book>) -> Vec<u32> {
        found.iter().map(|b| b.id).collect()
    }

    #[test]
    fn finds_books_by_title_fragment() {
        let books = vec![
            book(1, "The Hobbit", "J. R. R. Tolkien"),
            book(2, "Emma", "Jane Austen"),
        ];
        assert_eq!(ids(search(&books, "Hobbit")), vec![1]);
    }

    #[test]
    fn matches_author_ignoring_case_and_surrounding_whitespace() {
        let books = vec![
            book(1, "The Hobbit", "J. R. R. Tolkien"),
            book(2, "Emma", "Jane Austen"),
        ];
        assert_eq!(ids(search(&books, "  AUSTEN ")), vec![2]);
    }

    #[test]
    fn a_one_character_query_finds_nothing() {
        let books = vec![book(1, "A", "Anonymous")];
        assert!(search(&books, "a").is_empty());
        assert!(search(&books, "   ").is_empty());
    }

    #[test]
    fn exact_title_then_prefix_then_other_matches_each_by_title() {
        let books = vec![
            book(1, "The Emma Press Anthology", "Various"),
            book(2, "Emma and the Whale", "Julie Case"),
            book(3, "Emma", "Jane Austen"),
            book(4, "Dilemma", "Emma Donoghue"),
            book(5, "Emma (Annotated)", "Jane Austen"),
        ];
        assert_eq!(ids(search(&books, "emma")), vec![3, 5, 2, 4, 1]);
    }

    #[test]
    fn returns_at_most_twenty_results() {
        let books: Vec<Book> = (0..30)
            .map(|i| book(i, &format!("Atlas {i:02}"), "Cartographer"))
            .collect();
        assert_eq!(search(&books, "atlas").len(), MAX_RESULTS);
    }
}
