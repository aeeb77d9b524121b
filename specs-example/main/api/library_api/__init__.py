"""HTTP API of the Riverside Public Library catalog.

The API translates HTTP requests into calls on the Rust catalog core
(``library_api._catalog``) and the core's errors into HTTP responses. It never
decides on its own whether a member may borrow: that is the core's job.
"""

from fastapi import FastAPI

from library_api import books, loans


def create_app(catalog=None) -> FastAPI:
    """Build the app around a catalog; tests pass a fake one."""
    if catalog is None:
        from library_api._catalog import Catalog

        catalog = Catalog()
    app = FastAPI(title="Riverside Library Catalog")
    app.state.catalog = catalog
    app.include_router(books.router)
    app.include_router(loans.router)
    return app
