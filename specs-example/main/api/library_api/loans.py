"""Borrowing and returning books.

The member id comes from the kiosk session, never from the request body, so
that one member cannot act on another member's loans.
"""

from fastapi import APIRouter, Header, HTTPException, Request
from pydantic import BaseModel

from library_api import dates

router = APIRouter(prefix="/loans", tags=["loans"])


class LoanRequest(BaseModel):
    book_id: int


@router.post("")
def borrow(request: Request, body: LoanRequest, x_member_id: int = Header()):
    catalog = request.app.state.catalog
    try:
        due = catalog.borrow(x_member_id, body.book_id, dates.today())
    except ValueError as refusal:
        # The core's message is written for members; pass it through as is.
        raise HTTPException(status_code=409, detail=str(refusal)) from refusal
    return {"book_id": body.book_id, "due": dates.from_day(due).isoformat()}


@router.post("/return")
def return_book(request: Request, body: LoanRequest, x_member_id: int = Header()):
    catalog = request.app.state.catalog
    try:
        catalog.return_book(x_member_id, body.book_id, dates.today())
    except ValueError as refusal:
        raise HTTPException(status_code=409, detail=str(refusal)) from refusal
    return {"book_id": body.book_id, "returned": True}
