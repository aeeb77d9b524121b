from datetime import date, timedelta


def test_borrow_returns_the_due_date(client):
    response = client.post("/loans", json={"book_id": 1}, headers={"x-member-id": "10"})
    assert response.status_code == 200
    assert response.json()["due"] == (date.today() + timedelta(days=14)).isoformat()


def test_a_refusal_is_shown_to_the_member(client, catalog):
    catalog.refusal = "no copy on the shelf"
    response = client.post("/loans", json={"book_id": 2}, headers={"x-member-id": "10"})
    assert response.status_code == 409
    assert response.json()["detail"] == "no copy on the shelf"


def test_the_member_comes_from_the_session_header(client):
    response = client.post("/loans", json={"book_id": 1})
    assert response.status_code == 422
