//! Search through the public API only, on a catalog big enough to page.

use std::time::Instant;

use catalog::{search, Book, Catalog};

fn catalog_of(n: u32) -> Catalog {
    let mut catalog = Catalog::new();
    for id in 0..n {
        catalog.add_book(Book {
            id,
            title: format!("Volume {id} of the Riverside Chronicles"),
            author: if id % 2 == 0 {
                "Ada Byron".into()
            } else {
                "Mary Shelley".into()
            },
            copies: 1,
        });
    }
    catalog
}

#[test]
fn author_search_is_capped_at_twenty_and_ordered_by_title() {
    let catalog = catalog_of(100);
    let found = search(catalog.books(), "shelley");
    assert_eq!(found.len(), 20);
    let titles: Vec<&str> = found.iter().map(|b| b.title.as_str()).collect();
    let mut sorted = titles.clone();
    sorted.sort_by_key(|t| t.to_lowercase());
    assert_eq!(titles, sorted);
}

#[test]
fn searching_a_hundred_thousand_books_takes_under_200_ms() {
    let catalog = catalog_of(100_000);
    let start = Instant::now();
    let found = search(catalog.books(), "chronicles");
    assert_eq!(found.len(), 20);
    assert!(
        start.elapsed().as_millis() < 200,
        "took {:?}",
        start.elapsed()
    );
}
