//! Finding books by title.

use crate::Book;

/// Books whose title contains `query`.
pub fn search<'a>(books: &'a [Book], query: &str) -> Vec<&'a Book> {
    books.iter().filter(|b| b.title.contains(query)).collect()
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

    #[test]
    fn finds_books_by_title_fragment() {
        let books = vec![
            book(1, "The Hobbit", "J. R. R. Tolkien"),
            book(2, "Emma", "Jane Austen"),
        ];
        let found: Vec<u32> = search(&books, "Hobbit").iter().map(|b| b.id).collect();
        assert_eq!(found, vec![1]);
    }
}
