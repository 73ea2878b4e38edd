"""Finding a WordPress site's permalink structure and time zone from its exported links
and dates (``wordpress.permalinks``): properties over structures and zones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_server.wordpress.permalinks import Sample, infer, infer_zone, path_of

ZONES = ["UTC", "America/Denver", "Australia/Adelaide", "Asia/Kathmandu", "Pacific/Chatham"]
# WordPress's custom structures: text of the site's own, then tags, ending in the post,
# a tag a segment (one of text and tags, ``/%postname%-%post_id%/``, is not read).
PREFIXES = ["", "/blog", "/archives", "/news/daily"]
DATES = ["", "/{year}", "/{year}/{month}", "/{year}/{month}/{day}", "/{year}/{month}/{day}/{hour}"]
ENDINGS = ["/{slug}/", "/{id}/", "/{slug}", "/{id}/{slug}/", "/{minute}/{second}/{slug}/"]
instants = st.datetimes(
    min_value=datetime(2000, 1, 1),  # noqa: DTZ001 (hypothesis bounds are naive)
    max_value=datetime(2030, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
slugs = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    zone=st.sampled_from(ZONES),
    pattern=st.builds(
        lambda p, d, e: p + d + e,
        st.sampled_from(PREFIXES),
        st.sampled_from(DATES),
        st.sampled_from(ENDINGS),
    ),
    posts=st.lists(st.tuples(instants, slugs), min_size=3, max_size=12, unique_by=lambda p: p[1]),
)
def test_the_structure_found_makes_every_link_it_was_found_from(zone, pattern, posts):
    tz = ZoneInfo(zone)
    samples = []
    for n, (instant, slug) in enumerate(posts, start=1):
        sample = Sample(n * 7, slug, instant, [], "")
        sample.path = path_of(pattern, "post", sample, tz)
        samples.append(sample)
    found = infer("post", samples, zone=tz)
    assert found.reproduced == len(samples), (pattern, found)
    # No date is ever read as text of the site's own.
    assert not any(part.isdigit() for part in (found.pattern or "").split("/"))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(zone=st.sampled_from(ZONES), moments=st.lists(instants, min_size=1, max_size=30))
def test_the_zone_found_gives_every_date_its_offset(zone, moments):
    tz = ZoneInfo(zone)
    clocks = {}
    for instant in moments:
        offset = instant.astimezone(tz).utcoffset() // timedelta(minutes=1)
        key = (offset, instant.year, instant.month)
        clocks[key] = (clocks.get(key, (instant, 0))[0], clocks.get(key, (instant, 0))[1] + 1)
    found, given_ = infer_zone(clocks)
    assert given_ == len(moments)
    assert all(
        m.astimezone(ZoneInfo(found)).utcoffset() == m.astimezone(tz).utcoffset() for m in moments
    )


def test_the_sites_zone_wins_a_tie_and_a_mixed_export_takes_the_most_common():
    january = datetime(2024, 1, 10, 12, tzinfo=UTC)
    july = datetime(2024, 7, 10, 12, tzinfo=UTC)
    assert infer_zone({(-420, 2024, 1): (january, 3)}, "America/Phoenix") == ("America/Phoenix", 3)
    # Three dates of Denver's clock, one of Paris's: Denver's summer and winter time wins.
    mixed = {(-420, 2024, 1): (january, 2), (-360, 2024, 7): (july, 1), (120, 2024, 7): (july, 1)}
    found, given_ = infer_zone(mixed)
    assert given_ == 3
    assert july.astimezone(ZoneInfo(found)).utcoffset() == timedelta(hours=-6)
