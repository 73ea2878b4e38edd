"""Model-based: after any sequence of writes, the stored sitemaps equal a rebuild (issue 13).

A hypothesis state machine makes random writes through the admin API, as a site owner's
tools would: posts and pages of every status, with parents, terms, scheduled dates,
robots, exclusion and passwords, then edits, re-parenting and deletes; terms with
hierarchy, re-parenting and deletes; authors; the home page and posts page, privacy and
the page size; and time passing scheduled posts. After every step, ``check`` (a rebuild
of every sitemap from the content, compared entry by entry) must find nothing.

Seeded (``derandomize``), so a failure replays the same way; each failure it found is a
regular test in ``test_check.py``. A first step: its 900 steps (360 on PostgreSQL) found
two divergences (scheduled posts), but not yet every known one (with the fix for deleted terms of a
hierarchical taxonomy undone, it passes). Still to come (issue 13): more steps, the plain
reference written from the spec, post types and taxonomies, site URL and time zone, parts,
images, the plugins' fields.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    rule,
    run_state_machine_as_test,
)

from sitemap_server.models import get_session_factory
from sitemap_server.models.meta import Clock
from sitemap_server.services.tokens import create_token
from sitemap_server.sitemaps.check import check
from sitemap_server.testing import client, reset_database

STATUSES = ["publish", "publish", "publish", "publish", "draft", "private", "pending"]
# Past dates, and one far enough ahead to stay scheduled until the clock is moved.
DATES = [
    "2024-03-01T12:00:00+00:00",
    "2024-03-05T08:30:00+00:00",
    "2025-06-10T23:59:59+00:00",
    "2099-01-01T00:00:00+00:00",
]
TITLES = st.sampled_from(["News", "About", "Team", "Europe", "Paris", "Hello world", "News"])


def machine_for(app: Any, engine: Any, seed: dict[str, Any], app_session: Any) -> type:
    class Site(RuleBasedStateMachine):
        posts = Bundle("posts")
        pages = Bundle("pages")
        categories = Bundle("categories")
        tags = Bundle("tags")
        authors = Bundle("authors")

        def __init__(self) -> None:
            super().__init__()
            reset_database(engine, seed)
            Clock.offset = timedelta(0)
            factory = get_session_factory(engine)
            with factory() as session, session.begin():
                token = create_token(session, "model")
            self.api = client(app, token)
            self.made = 0

        def write(self, method: str, path: str, body: Any = None) -> Any:
            """The API's answer to a write: what it made or changed, or None for a refusal
            (a 4xx: a cycle of parents, a taken slug …). Never a server error."""
            if body is None:
                response = getattr(self.api, method)(path, expect_errors=True)
            else:
                response = getattr(self.api, f"{method}_json")(path, body, expect_errors=True)
            assert response.status_int < 500, response.text
            return response.json if response.status_int in (200, 201) else None

        def created(self, path: str, body: dict[str, Any]) -> int | None:
            made = self.write("post", path, body)
            return None if made is None else int(made["id"])

        # Content --------------------------------------------------------------------

        @rule(target=authors, name=TITLES, noindex=st.booleans())
        def create_author(self, name: str, noindex: bool) -> Any:
            self.made += 1
            slug = f"{name.lower().replace(' ', '-')}-{self.made}"
            return self.created("/api/authors", {"slug": slug, "name": name, "noindex": noindex})

        @rule(target=categories, name=TITLES, parent=st.none() | categories)
        def create_category(self, name: str, parent: int | None) -> Any:
            body = {"taxonomy": "category", "name": name, "parent": parent}
            return self.created("/api/terms", body)

        @rule(target=tags, name=TITLES)
        def create_tag(self, name: str) -> Any:
            body = {"taxonomy": "post_tag", "name": name}
            return self.created("/api/terms", body)

        @rule(
            target=posts,
            title=TITLES,
            status=st.sampled_from(STATUSES),
            published_at=st.sampled_from(DATES),
            author=st.none() | authors,
            terms=st.lists(categories, min_size=1, max_size=2, unique=True)
            | st.lists(tags, max_size=2, unique=True),
            robots=st.sampled_from(["default", "default", "noindex"]),
            excluded=st.sampled_from([False, False, False, True]),
        )
        def create_post(self, title, status, published_at, author, terms, robots, excluded):
            body = {
                "type": "post",
                "title": title,
                "status": status,
                "published_at": published_at,
                "author": author,
                "terms": [t for t in terms if t is not None],
                "robots": robots,
                "exclude_from_sitemap": excluded,
            }
            return self.created("/api/posts", body)

        @rule(
            target=pages,
            title=TITLES,
            status=st.sampled_from(STATUSES),
            parent=st.none() | pages,
            published_at=st.sampled_from(DATES),
            password=st.sampled_from([None, None, "secret"]),
        )
        def create_page(self, title, status, parent, published_at, password):
            body = {
                "type": "page",
                "title": title,
                "status": status,
                "parent": parent,
                "published_at": published_at,
                "password": password,
            }
            return self.created("/api/posts", body)

        @rule(
            post=posts | pages,
            change=st.sampled_from(
                [
                    {"status": "publish"},
                    {"status": "draft"},
                    {"title": "Renamed", "slug": "renamed"},
                    {"published_at": DATES[1]},
                    {"published_at": DATES[3]},
                    {"robots": "noindex"},
                    {"robots": "index"},
                    {"exclude_from_sitemap": True},
                    {"password": "secret"},
                    {"password": None},
                    {"modified_at": "2025-01-01T00:00:00+00:00"},
                ]
            ),
        )
        def update_post(self, post, change):
            if post is not None:
                self.write("patch", f"/api/posts/{post}", change)

        @rule(post=posts, terms=st.lists(categories | tags, max_size=3, unique=True))
        def retag_post(self, post, terms):
            if post is not None:
                body = {"terms": [t for t in terms if t is not None]}
                self.write("patch", f"/api/posts/{post}", body)

        @rule(page=pages, parent=st.none() | pages)
        def reparent_page(self, page, parent):
            if page is not None:
                self.write("patch", f"/api/posts/{page}", {"parent": parent})

        @rule(post=consumes(posts))
        def delete_post(self, post):
            if post is not None:
                self.write("delete", f"/api/posts/{post}")

        @rule(page=consumes(pages))
        def delete_page(self, page):
            if page is not None:
                self.write("delete", f"/api/posts/{page}")

        @rule(term=categories, parent=st.none() | categories)
        def reparent_category(self, term, parent):
            if term is not None:
                self.write("patch", f"/api/terms/{term}", {"parent": parent})

        @rule(
            term=categories | tags,
            change=st.sampled_from([{"noindex": True}, {"noindex": False}, {"slug": "moved"}]),
        )
        def update_term(self, term, change):
            if term is not None:
                self.write("patch", f"/api/terms/{term}", change)

        @rule(term=consumes(categories))
        def delete_category(self, term):
            if term is not None:
                self.write("delete", f"/api/terms/{term}")

        @rule(term=consumes(tags))
        def delete_tag(self, term):
            if term is not None:
                self.write("delete", f"/api/terms/{term}")

        @rule(author=consumes(authors))
        def delete_author(self, author):
            if author is not None:
                self.write("delete", f"/api/authors/{author}")

        # Settings and time ------------------------------------------------------------

        @rule(
            front=st.none() | pages,
            blog=st.none() | pages,
            other=st.sampled_from(
                [
                    {},
                    {"private": True},
                    {"private": False},
                    {"entries_per_page": 2},
                    {"entries_per_page": 3},
                    {"entries_per_page": 1000},
                ]
            ),
        )
        def settings(self, front, blog, other):
            """The home page and posts page, and now and then privacy or the page size."""
            pages = {"front_page": "page", "front_page_id": front, "posts_page_id": blog}
            if front is None:
                pages = {"front_page": "posts", "front_page_id": None, "posts_page_id": None}
            self.write("patch", "/api/settings", {**pages, **other})

        @rule(years=st.integers(1, 80))
        def time_passes(self, years):
            Clock.offset += timedelta(days=365 * years)

        # After every step -------------------------------------------------------------

        @invariant()
        def stored_sitemaps_equal_a_rebuild(self) -> None:
            with app_session.begin():
                report = check(app_session)
            assert report.differences == []

        def teardown(self) -> None:
            Clock.offset = timedelta(0)

    return Site


def test_after_any_writes_the_stored_sitemaps_equal_a_rebuild(
    wsgi_app, clean_database, _migrated_rows, app_session
):
    machine = machine_for(wsgi_app, clean_database, _migrated_rows, app_session)
    # A step (a write and a rebuild of every sitemap) costs several times more on
    # PostgreSQL: fewer sequences there keep the test command under its time budget.
    on_postgresql = clean_database.dialect.name == "postgresql"
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=12 if on_postgresql else 30,
            stateful_step_count=30,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
