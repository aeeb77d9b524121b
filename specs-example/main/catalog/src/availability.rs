//! Whether a book can be borrowed right now.

use crate::{BookId, Catalog};

/// Copies of `book` that are not on loan.
pub(crate) fn copies_on_shelf(catalog: &Catalog, book: BookId) -> u32 {
    let owned = catalog.book(book).map_or(0, |b| b.copies);
    let lent = catalog.active_loans().filter(|l| l.book == book).count() as u32;
    owned.saturating_sub(lent)
}

/// True when at least one copy of `book` is on the shelf.
pub fn is_available(catalog: &Catalog, book: BookId) -> bool {
    copies_on_shelf(catalog, book) > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Book, Day};

    #[test]
    fn a_book_with_every_copy_on_loan_is_not_available() {
        let mut catalog = Catalog::new();
        catalog.add_book(Book {
            id: 1,
            title: "Beloved".into(),
            author: "Toni Morrison".into(),
            copies: 1,
        });
        assert!(is_available(&catalog, 1));
        catalog.borrow(10, 1, Day(100)).unwrap();
        assert!(!is_available(&catalog, 1));
    }

    #[test]
    fn an_unknown_book_is_not_available() {
        assert!(!is_available(&Catalog::new(), 99));
    }
}
