"""A pure-Python stand-in for the native catalog, so API tests run without
building the Rust extension. It mirrors the binding's methods, not its rules."""

import pytest
from fastapi.testclient import TestClient

from library_api import create_app


class FakeCatalog:
    def __init__(self):
        self.books = {}
        self.on_loan = {}
        self.refusal = None

    def add_book(self, id, title, author, copies):
        self.books[id] = {"id": id, "title": title, "author": author, "copies": copies}

    def book(self, id):
        return self.books.get(id)

    def search(self, query):
        return [b for b in self.books.values() if query in b["title"]]

    def is_available(self, id):
        book = self.books.get(id)
        return book is not None and self.on_loan.get(id, 0) < book["copies"]

    def borrow(self, member, book, today):
        if self.refusal:
            raise ValueError(self.refusal)
        self.on_loan[book] = self.on_loan.get(book, 0) + 1
        return today + 14

    def return_book(self, member, book, today):
        self.on_loan[book] -= 1


@pytest.fixture
def catalog():
    fake = FakeCatalog()
    fake.add_book(1, "The Hobbit", "J. R. R. Tolkien", 2)
    fake.add_book(2, "Emma", "Jane Austen", 1)
    return fake


@pytest.fixture
def client(catalog):
    return TestClient(create_app(catalog))
