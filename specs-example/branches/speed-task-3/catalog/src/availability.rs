//! What a member can learn about a book before walking to the shelf: copies
//! owned and on the shelf, whether it can be borrowed, and when a copy is due
//! back. Computed from the loans on every call, never cached, so the kiosk and
//! the website never show a stale "available".

use crate::{BookId, Catalog, Day};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Availability {
    pub copies_owned: u32,
    pub copies_on_shelf: u32,
    /// Members holding a reservation; each of them has a claim on a shelf copy.
    pub reservations: u32,
    /// More copies on the shelf than members waiting for one.
    pub available: bool,
    /// The earliest due date among the copies on loan, when none can be borrowed.
    pub next_due: Option<Day>,
}

/// Copies of `book` that are not on loan.
pub(crate) fn copies_on_shelf(catalog: &Catalog, book: BookId) -> u32 {
    let owned = catalog.book(book).map_or(0, |b| b.copies);
    let lent = catalog.active_loans().filter(|l| l.book == book).count() as u32;
    owned.saturating_sub(lent)
}

/// The availability of `book`, or None when the catalog has no such book.
pub fn availability(catalog: &Catalog, book: BookId) -> Option<Availability> {
    let copies_owned = catalog.book(book)?.copies;
    let copies_on_shelf = copies_on_shelf(catalog, book);
    let reservations = catalog.reservations_for(book).count() as u32;
    let available = copies_on_shelf > reservations;
    let next_due = if available {
        None
    } else {
        catalog
            .active_loans()
            .filter(|l| l.book == book)
            .map(|l| l.due)
            .min()
    };
    Some(Availability {
        copies_owned,
        copies_on_shelf,
        reservations,
        available,
        next_due,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Book;

    fn catalog_with(copies: u32) -> Catalog {
        let mut catalog = Catalog::new();
        catalog.add_book(Book {
            id: 1,
            title: "Beloved".into(),
            author: "Toni Morrison".into(),
            copies,
        });
        catalog
    }

    #[test]
    fn a_book_with_a_copy_on_the_shelf_is_available() {
        let catalog = catalog_with(2);
        let found = availability(&catalog, 1).unwrap();
        assert_eq!(
            (found.copies_owned, found.copies_on_shelf, found.available),
            (2, 2, true)
        );
        assert_eq!(found.next_due, None);
    }

    #[test]
    fn with_every_copy_on_loan_the_earliest_due_date_is_reported() {
        let mut catalog = catalog_with(2);
        catalog.borrow(10, 1, Day(100)).unwrap();
        catalog.borrow(11, 1, Day(95)).unwrap();
        let found = availability(&catalog, 1).unwrap();
        assert!(!found.available);
        assert_eq!(found.copies_on_shelf, 0);
        assert_eq!(found.next_due, Some(Day(109)));
    }

    #[test]
    fn a_shelf_copy_claimed_by_a_reservation_is_not_available() {
        let mut catalog = catalog_with(2);
        catalog.borrow(10, 1, Day(100)).unwrap();
        catalog.reserve(11, 1);
        let found = availability(&catalog, 1).unwrap();
        assert_eq!((found.copies_on_shelf, found.reservations), (1, 1));
        assert!(!found.available);
        assert_eq!(found.next_due, Some(Day(114)));
    }

    #[test]
    fn returns_are_seen_immediately() {
        let mut catalog = catalog_with(1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        assert!(!availability(&catalog, 1).unwrap().available);
        catalog.return_book(10, 1, Day(101)).unwrap();
        assert!(availability(&catalog, 1).unwrap().available);
    }

    #[test]
    fn an_unknown_book_has_no_availability() {
        assert_eq!(availability(&Catalog::new(), 99), None);
    }
}
