from library_api import dates


def test_search_returns_matching_books(client):
    response = client.get("/books/search", params={"q": "Hobbit"})
    assert response.status_code == 200
    assert [b["id"] for b in response.json()["results"]] == [1]


def test_book_details_include_availability(client, catalog):
    catalog.on_loan[2] = 1
    assert client.get("/books/1").json()["available"] is True
    assert client.get("/books/2").json()["available"] is False


def test_unknown_book_is_404(client):
    response = client.get("/books/99")
    assert response.status_code == 404
    assert response.json()["detail"] == "no book with id 99"


def test_availability_counts_copies(client, catalog):
    catalog.on_loan[1] = 1
    body = client.get("/books/1/availability").json()
    assert body == {
        "book_id": 1,
        "copies_owned": 2,
        "copies_on_shelf": 1,
        "available": True,
        "next_due": None,
    }


def test_unavailable_book_reports_next_due_as_a_date(client, catalog):
    catalog.on_loan[2] = 1
    catalog.next_due[2] = dates.to_day(dates.date(2024, 3, 15))
    body = client.get("/books/2/availability").json()
    assert body["available"] is False
    assert body["next_due"] == "2024-03-15"


def test_a_reservation_claims_the_shelf_copy(client, catalog):
    catalog.on_loan[1] = 1
    catalog.reservations[1] = 1
    catalog.next_due[1] = dates.to_day(dates.date(2024, 3, 1))
    body = client.get("/books/1/availability").json()
    assert (body["copies_on_shelf"], body["available"]) == (1, False)
    assert body["next_due"] == "2024-03-01"


def test_availability_of_unknown_book_is_404(client):
    assert client.get("/books/99/availability").status_code == 404
