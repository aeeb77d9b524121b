//! Catalog core of the Riverside Public Library: the books the library owns,
//! the loans and reservations on them, and the rules that govern borrowing.
//! The Python API (`api/library_api`) reaches this crate only through the
//! bindings in `python.rs`; every business rule lives here.

pub mod availability;
pub mod loans;
pub mod search;

#[cfg(feature = "python")]
mod python;

pub use availability::{availability, Availability};
pub use loans::{Loan, LoanError, LOAN_PERIOD_DAYS};
pub use search::search;

/// A calendar day in the library's local time zone, counted from 1970-01-01.
/// The catalog has no time of day, so a plain day number avoids every
/// time-zone question at the kiosks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub i32);

impl Day {
    pub fn plus_days(self, days: i32) -> Day {
        Day(self.0 + days)
    }
}

pub type BookId = u32;
pub type MemberId = u32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Book {
    pub id: BookId,
    pub title: String,
    pub author: String,
    /// How many physical copies the library owns.
    pub copies: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    pub book: BookId,
    pub member: MemberId,
}

/// Everything the catalog knows, held in memory and persisted by the API.
#[derive(Debug, Default)]
pub struct Catalog {
    books: Vec<Book>,
    pub(crate) loans: Vec<Loan>,
    pub(crate) reservations: Vec<Reservation>,
}

impl Catalog {
    pub fn new() -> Catalog {
        Catalog::default()
    }

    pub fn add_book(&mut self, book: Book) {
        self.books.push(book);
    }

    pub fn book(&self, id: BookId) -> Option<&Book> {
        self.books.iter().find(|b| b.id == id)
    }

    pub fn books(&self) -> &[Book] {
        &self.books
    }

    /// Loans that have not been returned yet.
    pub fn active_loans(&self) -> impl Iterator<Item = &Loan> {
        self.loans.iter().filter(|l| l.returned_on.is_none())
    }

    pub fn reserve(&mut self, member: MemberId, book: BookId) {
        self.reservations.push(Reservation { book, member });
    }

    pub fn reservations_for(&self, book: BookId) -> impl Iterator<Item = &Reservation> {
        self.reservations.iter().filter(move |r| r.book == book)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_arithmetic_crosses_month_ends_without_calendars() {
        assert_eq!(Day(19_750).plus_days(14), Day(19_764));
    }

    #[test]
    fn book_lookup_by_id() {
        let mut catalog = Catalog::new();
        catalog.add_book(Book {
            id: 7,
            title: "Dune".into(),
            author: "Frank Herbert".into(),
            copies: 2,
        });
        assert_eq!(catalog.book(7).map(|b| b.title.as_str()), Some("Dune"));
        assert!(catalog.book(8).is_none());
    }

    #[test]
    fn reservations_are_per_book() {
        let mut catalog = Catalog::new();
        catalog.reserve(1, 7);
        catalog.reserve(2, 8);
        assert_eq!(catalog.reservations_for(7).count(), 1);
    }
}
