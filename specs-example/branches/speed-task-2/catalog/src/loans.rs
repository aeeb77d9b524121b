//! Borrowing, renewing and returning books, and the limits on borrowing.

use std::fmt;

use crate::availability::copies_on_shelf;
use crate::{BookId, Catalog, Day, MemberId};

/// How long a loan lasts, in days from the day the book is borrowed.
pub const LOAN_PERIOD_DAYS: i32 = 14;

/// How many times one loan may be renewed.
pub const MAX_RENEWALS: u8 = 3;

/// How many books one member may have on loan at the same time.
pub const MAX_ACTIVE_LOANS: usize = 5;

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

/// Why a loan or a renewal was refused; `Display` is the text the kiosk shows
/// the member, so it stays short and plain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoanError {
    UnknownBook(BookId),
    NoCopyOnShelf(BookId),
    NotOnLoan { book: BookId, member: MemberId },
    LimitReached { member: MemberId },
    RenewalLimitReached { book: BookId },
    Reserved { book: BookId },
}

impl fmt::Display for LoanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoanError::UnknownBook(id) => write!(f, "no book with id {id}"),
            LoanError::NoCopyOnShelf(_) => write!(f, "no copy on the shelf"),
            LoanError::NotOnLoan { .. } => write!(f, "this book is not on loan to you"),
            LoanError::LimitReached { .. } => write!(f, "loan limit reached"),
            LoanError::RenewalLimitReached { .. } => write!(f, "this loan cannot be renewed again"),
            LoanError::Reserved { .. } => write!(f, "another member is waiting for this book"),
        }
    }
}

impl std::error::Error for LoanError {}

impl Catalog {
    /// Lends one copy of `book` to `member`, due `LOAN_PERIOD_DAYS` from today,
    /// unless the member already has `MAX_ACTIVE_LOANS` books.
    pub fn borrow(
        &mut self,
        member: MemberId,
        book: BookId,
        today: Day,
    ) -> Result<Loan, LoanError> {
        if self.book(book).is_none() {
            return Err(LoanError::UnknownBook(book));
        }
        if self.active_loans_of(member).count() >= MAX_ACTIVE_LOANS {
            return Err(LoanError::LimitReached { member });
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

    /// Moves the due date of the member's loan of `book` one loan period later,
    /// unless it was renewed `MAX_RENEWALS` times or someone else reserved it.
    pub fn renew(&mut self, member: MemberId, book: BookId) -> Result<Loan, LoanError> {
        let reserved_by_other = self.reservations_for(book).any(|r| r.member != member);
        let loan = self
            .loans
            .iter_mut()
            .find(|l| l.book == book && l.member == member && l.returned_on.is_none())
            .ok_or(LoanError::NotOnLoan { book, member })?;
        if loan.renewals >= MAX_RENEWALS {
            return Err(LoanError::RenewalLimitReached { book });
        }
        if reserved_by_other {
            return Err(LoanError::Reserved { book });
        }
        loan.due = loan.due.plus_days(LOAN_PERIOD_DAYS);
        loan.renewals += 1;
        Ok(loan.clone())
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

    /// Ten different single-copy books, ids 1 to 10.
    fn shelf_of_ten() -> Catalog {
        let mut catalog = Catalog::new();
        for id in 1..=10 {
            catalog.add_book(Book {
                id,
                title: format!("Book {id}"),
                author: "Anon".into(),
                copies: 1,
            });
        }
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

    #[test]
    fn renewal_counts_from_the_current_due_date() {
        let mut catalog = catalog_with(1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        let renewed = catalog.renew(10, 1).unwrap();
        assert_eq!(renewed.due, Day(100 + 2 * LOAN_PERIOD_DAYS));
        assert_eq!(renewed.renewals, 1);
    }

    #[test]
    fn renewing_past_max_renewals_is_refused() {
        let mut catalog = catalog_with(1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        for _ in 0..MAX_RENEWALS {
            catalog.renew(10, 1).unwrap();
        }
        assert_eq!(
            catalog.renew(10, 1),
            Err(LoanError::RenewalLimitReached { book: 1 })
        );
    }

    #[test]
    fn a_reservation_by_another_member_blocks_renewal() {
        let mut catalog = catalog_with(1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        catalog.reserve(11, 1);
        assert_eq!(catalog.renew(10, 1), Err(LoanError::Reserved { book: 1 }));
    }

    #[test]
    fn the_borrowers_own_reservation_does_not_block_renewal() {
        let mut catalog = catalog_with(1);
        catalog.reserve(10, 1);
        catalog.borrow(10, 1, Day(100)).unwrap();
        assert!(catalog.renew(10, 1).is_ok());
    }

    #[test]
    fn borrowing_past_the_loan_limit_is_refused() {
        let mut catalog = shelf_of_ten();
        for id in 1..=MAX_ACTIVE_LOANS as u32 {
            catalog.borrow(10, id, Day(100)).unwrap();
        }
        let refused = catalog.borrow(10, 6, Day(100)).unwrap_err();
        assert_eq!(refused, LoanError::LimitReached { member: 10 });
        assert_eq!(refused.to_string(), "loan limit reached");
    }

    #[test]
    fn a_returned_book_frees_a_place_under_the_limit() {
        let mut catalog = shelf_of_ten();
        for id in 1..=MAX_ACTIVE_LOANS as u32 {
            catalog.borrow(10, id, Day(100)).unwrap();
        }
        catalog.return_book(10, 1, Day(101)).unwrap();
        assert!(catalog.borrow(10, 6, Day(101)).is_ok());
    }
}
