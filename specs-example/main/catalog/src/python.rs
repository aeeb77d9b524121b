//! Python bindings, built with maturin as `library_api._catalog`. Thin on
//! purpose: conversions only, every rule stays in the Rust functions.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{Book, BookId, Catalog, Day, MemberId};

#[pyclass(name = "Catalog")]
pub struct PyCatalog {
    inner: Catalog,
}

#[pymethods]
impl PyCatalog {
    #[new]
    fn new() -> PyCatalog {
        PyCatalog {
            inner: Catalog::new(),
        }
    }

    fn add_book(&mut self, id: BookId, title: String, author: String, copies: u32) {
        self.inner.add_book(Book {
            id,
            title,
            author,
            copies,
        });
    }

    fn book<'py>(&self, py: Python<'py>, id: BookId) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner.book(id).map(|b| book_dict(py, b)).transpose()
    }

    fn search<'py>(&self, py: Python<'py>, query: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
        crate::search(self.inner.books(), query)
            .into_iter()
            .map(|b| book_dict(py, b))
            .collect()
    }

    fn is_available(&self, id: BookId) -> bool {
        crate::is_available(&self.inner, id)
    }

    fn borrow(&mut self, member: MemberId, book: BookId, today: i32) -> PyResult<i32> {
        self.inner
            .borrow(member, book, Day(today))
            .map(|loan| loan.due.0)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn return_book(&mut self, member: MemberId, book: BookId, today: i32) -> PyResult<()> {
        self.inner
            .return_book(member, book, Day(today))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

fn book_dict<'py>(py: Python<'py>, book: &Book) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new_bound(py);
    dict.set_item("id", book.id)?;
    dict.set_item("title", &book.title)?;
    dict.set_item("author", &book.author)?;
    dict.set_item("copies", book.copies)?;
    Ok(dict)
}

#[pymodule]
fn _catalog(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyCatalog>()
}
