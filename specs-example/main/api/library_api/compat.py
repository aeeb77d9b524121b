"""Shims for kiosks still running catalog core 0.2.

Core 0.2 had no ``is_available``; those kiosks treat every known book as
available and let the front desk sort it out.
"""


def is_available(catalog, book_id: int) -> bool:
    check = getattr(catalog, "is_available", None)
    if check is None:
        return catalog.book(book_id) is not None
    return check(book_id)
