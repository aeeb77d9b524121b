"""A pure-Python stand-in for the native catalog, so API tests run without
building the Rust extension. It mirrors the binding's methods, not its rules."""

import pytest
from fastapi.testclient import TestClient

from library_api import create_app


class FakeCatalog:
    def __init__(self):
        self.books = {}
        self.on_loan = {}
        self.reservations = {}
        self.next_due = {}
        self.refusal = None

    def add_book(self, id, title, author, copies):
        self.books[id] = {"id": id, "title": title, "author": author, "copies": copies}

    def book(self, id):
        return self.books.get(id)

    def search(self, query):
        return [b for b in self.books.values() if query in b["title"]]

    def availability(self, id):
        book = self.books.get(id)
        if book is None:
            return None
        on_shelf = book["copies"] - self.on_loan.get(id, 0)
        waiting = self.reservations.get(id, 0)
        available = on_shelf > waiting
        return {
            "copies_owned": book["copies"],
            "copies_on_shelf": on_shelf,
            "reservations": waiting,
            "available": available,
            "next_due": None if available else self.next_due.get(id),
        }

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
