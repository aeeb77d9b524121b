//! Borrowing and returning books.

use std::fmt;

use crate::availability::copies_on_shelf;
use crate::{BookId, Catalog, Day, MemberId};

/// How long a loan lasts, in days from the day the book is borrowed.
pub const LOAN_PERIOD_DAYS: i32 = 14;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loan {
    pub book: BookId,
    pub member: MemberId,
    pub borrowed_on: Day,
    pub due: Day,
    pub renewals: u8,
    pub returned_on: Option<Day>,
}

impl Loan {
    pub fn is_overdue(&self, today: Day) -> bool {
        self.returned_on.is_none() && today > self.due
    }
}

/// Why a loan was refused; `Display` is the text the kiosk shows the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoanError {
    UnknownBook(BookId),
    NoCopyOnShelf(BookId),
    NotOnLoan { book: BookId, member: MemberId },
}

impl fmt::Display for LoanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoanError::UnknownBook(id) => write!(f, "no book with id {id}"),
            LoanError::NoCopyOnShelf(_) => write!(f, "no copy on the shelf"),
            LoanError::NotOnLoan { .. } => write!(f, "this book is not on loan to you"),
        }
    }
}

impl std::error::Error for LoanError {}

impl Catalog {
    /// Lends one copy of `book` to `member`, due `LOAN_PERIOD_DAYS` from today.
    pub fn borrow(
        &mut self,
        member: MemberId,
        book: BookId,
        today: Day,
    ) -> Result<Loan, LoanError> {
        if self.book(book).is_none() {
            return Err(LoanError::UnknownBook(book));
        }
        if copies_on_shelf(self, book) == 0 {
            return Err(LoanError::NoCopyOnShelf(book));
        }
        let loan = Loan {
            book,
            member,
            borrowed_on: today,
            due: today.plus_days(LOAN_PERIOD_DAYS),
            renewals: 0,
            returned_on: None,
        };
        self.loans.push(loan.clone());
        Ok(loan)
    }

    /// Ends the member's active loan of `book` today.
    pub fn return_book(
        &mut self,
        member: MemberId,
        book: BookId,
        today: Day,
    ) -> Result<(), LoanError> {
        let loan = self
            .loans
            .iter_mut()
            .find(|l| l.book == book && l.member == member && l.returned_on.is_none())
            .ok_or(LoanError::NotOnLoan { book, member })?;
        loan.returned_on = Some(today);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Book;

    fn catalog_with(copies: u32) -> Catalog {
        let mut catalog = Catalog::new();
        catalog.add_book(Book {
            id: 1,
            title: "Middlemarch".into(),
            author: "George Eliot".into(),
            copies,
        });
        catalog
    }

    #[test]
    fn a_loan_is_due_fourteen_days_after_borrowing() {
        let mut catalog = catalog_with(1);
        let loan = catalog.borrow(10, 1, Day(100)).unwrap();
        assert_eq!(loan.due, Day(114));
    }

    #[test]
    fn the_last_copy_cannot_be_lent_twice() {
        let mut catalog = catalog_with(1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        assert_eq!(
            catalog.borrow(11, 1, Day(100)),
            Err(LoanError::NoCopyOnShelf(1))
        );
    }

    #[test]
    fn returning_puts_the_copy_back_on_the_shelf() {
        let mut catalog = catalog_with(1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        catalog.return_book(10, 1, Day(103)).unwrap();
        assert!(catalog.borrow(11, 1, Day(103)).is_ok());
    }

    #[test]
    fn returning_a_book_not_on_loan_is_refused() {
        let mut catalog = catalog_with(1);
        assert_eq!(
            catalog.return_book(10, 1, Day(100)),
            Err(LoanError::NotOnLoan {
                book: 1,
                member: 10
            })
        );
    }
}
