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
