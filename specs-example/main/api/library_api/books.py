"""Book search and book details."""

from fastapi import APIRouter, HTTPException, Request

from library_api import compat

router = APIRouter(prefix="/books", tags=["books"])


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
    return {**book, "available": compat.is_available(catalog, book_id)}
