"""Book search, book details and availability."""

from fastapi import APIRouter, HTTPException, Request

from library_api import dates

router = APIRouter(prefix="/books", tags=["books"])


def _availability(catalog, book_id: int) -> dict:
    found = catalog.availability(book_id)
    if found is None:
        raise HTTPException(status_code=404, detail=f"no book with id {book_id}")
    return found


@router.get("/search")
def search_books(request: Request, q: str):
    catalog = request.app.state.catalog
    return {"query": q, "results": catalog.search(q)}


@router.get("/{book_id}")
def get_book(request: Request, book_id: int):
    catalog = request.app.state.catalog
    book = catalog.book(book_id)
    if book is None:
        raise HTTPException(status_code=404, detail=f"no book with id {book_id}")
    return {**book, "available": _availability(catalog, book_id)["available"]}


@router.get("/{book_id}/availability")
def get_availability(request: Request, book_id: int):
    """Asked on every visit to a book page, and answered from the current loans:
    a cached answer would send members to an empty shelf."""
    found = _availability(request.app.state.catalog, book_id)
    next_due = found["next_due"]
    return {
        "book_id": book_id,
        "copies_owned": found["copies_owned"],
        "copies_on_shelf": found["copies_on_shelf"],
        "available": found["available"],
        "next_due": None if next_due is None else dates.from_day(next_due).isoformat(),
    }
