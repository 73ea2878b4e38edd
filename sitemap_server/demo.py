"""``sitemap-server seed-demo``: a small, realistic site, made through the service layer.

Deterministic (seeded random), so two runs give the same site. Besides ordinary content it
holds the cases a sitemap must handle: drafts, private and password-protected posts, a
noindexed post, one with a foreign canonical URL, one excluded by flag, a scheduled post,
a multi-part post, nested pages, a static front page and posts page, translations
(pages, posts and a category in English, German or French), images in content
(relative, absolute, srcset, a CDN and a foreign host), embedded videos (YouTube, Vimeo,
``<video>``), a custom post type and taxonomy. Installed plugins add their own demo content
(``sitemap_seed_demo``). Seeding makes no network request: the demo runs offline.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .models import Post, site_of
from .services import authors, site, terms, types
from .services import posts as post_service
from .services.posts import Lookups
from .sitemaps.changes import held_back

WORDS = (  # noqa: SIM905 - a sentence reads better than a column of words
    "garden river city light morning winter coffee station market harbor music library "
    "mountain bicycle kitchen letter bridge forest window story travel summer paper ocean "
    "island theatre recipe journey school festival village engine harvest"
).split()
AUTHORS = [
    ("ada", "Ada Lovelace"),
    ("grace", "Grace Hopper"),
    ("alan", "Alan Turing"),
    ("katherine", "Katherine Johnson"),
    ("linus", "Linus Pauling"),
    ("guest", "Guest Writer"),
]
CATEGORIES = ["News", "Travel", "Food", "Technology", "Culture", "Science"]
SUBCATEGORIES = {"Travel": ["Europe", "Asia"], "Food": ["Recipes"]}
CDN = "cdn.demo-images.example"
# Posts that have a German version (S-405).
TRANSLATED_POSTS = (1, 2, 3)
# Post number -> what makes it a case sitemaps must handle.
SPECIAL_CASES: dict[int, dict[str, object]] = {
    11: {"status": "draft"},
    22: {"status": "private"},
    33: {"password": "secret"},
    44: {"robots": "noindex"},
    55: {"canonical": "https://other.example.com/original-story/"},
    66: {"exclude_from_sitemap": True},
    77: {"status": "pending"},
    88: {"parts": 3},
    99: {"status": "trash"},
}


def _title(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).capitalize()


def _content(rng: random.Random, n: int) -> str:
    paragraphs = [f"<p>{_title(rng)} and {_title(rng).lower()}.</p>" for _ in range(3)]
    if n % 3 == 0:
        paragraphs.append(
            f'<p><img src="/uploads/{2024 + n % 2}/photo-{n}.jpg" alt="Photo {n}"></p>'
        )
    if n % 5 == 0:
        paragraphs.append(
            f'<img src="https://{CDN}/small-{n}.jpg" '
            f'srcset="https://{CDN}/small-{n}.jpg 480w, https://{CDN}/large-{n}.jpg 1200w">'
        )
    if n % 17 == 0:
        paragraphs.append(f'<img src="https://elsewhere.example.org/hotlinked-{n}.png">')
    # Embedded videos, for a plugin that lists videos to find.
    if n % 11 == 0:
        video_id = f"demo{n:07d}"[-11:]
        paragraphs.append(
            f'<iframe width="560" height="315" src="https://www.youtube.com/embed/{video_id}" '
            "allowfullscreen></iframe>"
        )
    if n % 23 == 0:
        paragraphs.append(f'<iframe src="https://player.vimeo.com/video/{76979000 + n}"></iframe>')
    if n % 29 == 0:
        paragraphs.append(
            f'<video controls poster="/uploads/video-{n}.jpg"><source src="/uploads/video-{n}.mp4" '
            'type="video/mp4"></video>'
        )
    return "\n".join(paragraphs)


def seed_demo(session: Session, posts: int = 300, if_empty: bool = False) -> str:
    """Create the demo site with ``posts`` blog posts; ``if_empty``: only on an empty site."""
    if if_empty and session.scalar(select(func.count()).select_from(Post)):
        return "the site already has content; nothing seeded"
    rng = random.Random(42)
    now = datetime.now(UTC).replace(microsecond=0)
    lookups = Lookups(session)
    # One sitemap refresh at the end rather than one per post (as the bulk import does),
    # the plugins' demo content included.
    with held_back(session):
        _seed(session, posts, rng, now, lookups)
        site = site_of(session)
        site.plugins.hook.sitemap_seed_demo(session=session, site=site)
    total = session.scalar(select(func.count()).select_from(Post))
    return f"demo site seeded: {total} posts and pages, {len(AUTHORS)} authors"


def _seed(
    session: Session, posts: int, rng: random.Random, now: datetime, lookups: Lookups
) -> None:
    site.update_settings(
        session,
        {
            "title": "Demo Site",
            "language": "en",
            "allowed_image_hosts": [CDN],
            # Some pages, posts and a category are translated (S-405).
            "languages": ["en", "de", "fr"],
            "x_default_language": "en",
        },
    )
    author_ids = []
    for slug, name in AUTHORS:
        author_ids.append(
            authors.create_author(
                session, {"slug": slug, "name": name, "noindex": slug == "guest"}
            ).id
        )

    category_ids = []
    for name in CATEGORIES:
        translated = {"language": "en", "translation_group": "news"} if name == "News" else {}
        parent = terms.create_term(session, {"taxonomy": "category", "name": name, **translated})
        category_ids.append(parent.id)
        for child in SUBCATEGORIES.get(name, []):
            category_ids.append(
                terms.create_term(
                    session, {"taxonomy": "category", "name": child, "parent": parent.id}
                ).id
            )
    terms.create_term(session, {"taxonomy": "category", "name": "Archive", "noindex": True})
    tag_ids = [
        terms.create_term(session, {"taxonomy": "post_tag", "name": word}).id for word in WORDS[:30]
    ]

    types.create_post_type(
        session,
        {
            "name": "product",
            "label": "Products",
            "archive_path": "/shop/",
            "permalink_pattern": "/shop/{slug}/",
        },
    )
    types.create_taxonomy(session, {"name": "brand", "label": "Brands", "archive_base": "brand"})
    brand_ids = [
        terms.create_term(session, {"taxonomy": "brand", "name": name}).id
        for name in ("Acme", "Globex", "Initech")
    ]

    def page(title: str, **extra: object) -> int:
        data = {
            "type": "page",
            "title": title,
            "status": "publish",
            "published_at": (now - timedelta(days=700)).isoformat(),
            "content": f"<p>{title}.</p>",
            **extra,
        }
        return post_service.create_post(session, data, lookups).id

    home = page("Home", slug="home")
    blog = page("Blog", slug="blog")
    about = page(
        "About us",
        slug="about",
        featured_image="/uploads/team.jpg",
        language="en",
        translation_group="about",
    )
    page("Über uns", slug="ueber-uns", language="de", translation_group="about")
    page("À propos", slug="a-propos", language="fr", translation_group="about")
    page("Our team", slug="team", parent=about)
    page("History", slug="history", parent=about)
    services = page("Services", slug="services")
    for name in ("Consulting", "Training", "Support"):
        page(name, parent=services)
    page("Contact", slug="contact", language="en", translation_group="contact")
    page("Kontakt", slug="kontakt", language="de", translation_group="contact")
    page("Privacy policy", slug="privacy", robots="noindex")
    page("Draft page", slug="draft-page", status="draft")
    site.update_settings(
        session, {"front_page": "page", "front_page_id": home, "posts_page_id": blog}
    )

    for n in range(1, posts + 1):
        published = now - timedelta(days=730 * (posts - n) / posts, hours=rng.randint(0, 23))
        if n > posts - 6:  # the latest news: the last 40 hours (the news plugin lists them)
            published = now - timedelta(hours=(posts - n) * 7 + 1)
        data: dict[str, object] = {
            "type": "post",
            "title": _title(rng),
            "status": "publish",
            "author": rng.choice(author_ids[:-1]) if n % 40 else author_ids[-1],
            "content": _content(rng, n),
            "published_at": published.isoformat(),
            "modified_at": (published + timedelta(days=rng.randint(0, 30))).isoformat()
            if n % 4 == 0
            else published.isoformat(),
            "terms": [rng.choice(category_ids), *rng.sample(tag_ids, 3)],
        }
        if n % 7 == 0:
            data["featured_image"] = f"/uploads/featured-{n}.jpg"
        if n % 2 == 0:
            data["images"] = [f"https://{CDN}/gallery-{n}.jpg"]
        if n in TRANSLATED_POSTS:
            data.update(language="en", translation_group=f"story-{n}")
        data.update(SPECIAL_CASES.get(n, {}))
        if data["modified_at"] > now.isoformat():  # type: ignore[operator]
            data["modified_at"] = now.isoformat()
        post_service.create_post(session, data, lookups)

    neuigkeiten = terms.create_term(
        session,
        {
            "taxonomy": "category",
            "name": "Neuigkeiten",
            "language": "de",
            "translation_group": "news",
        },
    )
    for n in TRANSLATED_POSTS:  # their German versions
        post_service.create_post(
            session,
            {
                "type": "post",
                "title": f"Geschichte {n}",
                "slug": f"geschichte-{n}",
                "status": "publish",
                "author": author_ids[0],
                "published_at": (now - timedelta(days=700 - n)).isoformat(),
                "content": f"<p>Die Geschichte {n}, auf Deutsch.</p>",
                "terms": [neuigkeiten.id],
                "language": "de",
                "translation_group": f"story-{n}",
            },
            lookups,
        )
    post_service.create_post(  # scheduled: listed when its time comes
        session,
        {
            "type": "post",
            "title": "Scheduled for tomorrow",
            "status": "publish",
            "published_at": (now + timedelta(days=1)).isoformat(),
            "author": author_ids[0],
        },
        lookups,
    )
    post_service.create_post(
        session,
        {
            "type": "post",
            "title": "Coming soon",
            "status": "future",
            "published_at": (now + timedelta(days=3)).isoformat(),
            "author": author_ids[0],
        },
        lookups,
    )
    for n in range(1, 21):
        post_service.create_post(
            session,
            {
                "type": "product",
                "title": f"{rng.choice(WORDS).capitalize()} {n}",
                "status": "publish",
                "published_at": (now - timedelta(days=n * 9)).isoformat(),
                "featured_image": f"https://{CDN}/products/{n}.jpg",
                "terms": [rng.choice(brand_ids)],
            },
            lookups,
        )
