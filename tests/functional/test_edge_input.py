"""Date-times at the edges of their range (issue 29): refused where they enter, never a 500.

Every date-time the API, the import and the plugins take must lie in
[1000-01-01T00:00:00Z, 9999-01-01T00:00:00Z) once in UTC (``services.common``): outside it,
a 4xx that names the field and says the range, and nothing stored. Inside it, whatever
the offset, the maintainer applies the write and every sitemap still answers and validates,
in any time zone of the site.
"""

# The property draws wall-clock times (naive on purpose) and UTC offsets apart.
# ruff: noqa: DTZ001

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sitemap_server.services.common import CLOCK_SKEW
from sitemap_server.testing import (
    SITE_URL,
    apply_changes,
    assert_problem,
    fetch_sitemap,
    index_locs,
    installed_plugins_loaded,
)

NDJSON = "application/x-ndjson"
RANGE = "must be between 1000-01-01T00:00:00Z and 9999-01-01T00:00:00Z"
# The last instants Python can write with these offsets: year 1 east of UTC, year 9999
# west of it (astimezone overflowed on both: a 500).
CALENDAR_EDGES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


def post_body(**fields):
    return {"type": "post", "status": "publish", "title": "Edge", **fields}


def import_line(**fields):
    return (json.dumps({"post": post_body(**fields)}) + "\n").encode()


def assert_sitemaps_served(api):
    """The maintainer applies what waits, and every sitemap answers 200 and validates."""
    apply_changes(api)
    paths = {loc.removeprefix(SITE_URL) for loc in index_locs(api)} | {"/post-sitemap.xml"}
    if installed_plugins_loaded():
        paths.add("/news-sitemap.xml")
    for path in sorted(paths):
        fetch_sitemap(api, path)


# The reported cases --------------------------------------------------------------------------


def test_a_modification_in_year_9999_is_refused_and_the_sitemaps_go_on(api, db_snapshot):
    before = db_snapshot()
    response = api.post_json(
        "/api/posts", post_body(modified_at="9999-12-31T23:59:59Z"), expect_errors=True
    )
    problem = assert_problem(response, 422, "modified_at")
    assert problem["detail"] == f"modified_at: {RANGE}"
    assert db_snapshot() == before
    api.post_json("/api/posts", post_body(), status=201)
    assert_sitemaps_served(api)


@pytest.mark.parametrize("value", CALENDAR_EDGES)
@pytest.mark.parametrize("field", ["published_at", "modified_at"])
def test_a_calendar_edge_in_a_new_post_is_a_422_naming_the_field(api, db_snapshot, value, field):
    before = db_snapshot()
    response = api.post_json("/api/posts", post_body(**{field: value}), expect_errors=True)
    assert assert_problem(response, 422, field)["errors"][0]["message"] == RANGE
    assert db_snapshot() == before


@pytest.mark.parametrize("value", CALENDAR_EDGES)
@pytest.mark.parametrize("field", ["published_at", "modified_at"])
def test_a_calendar_edge_in_a_changed_post_is_a_422_naming_the_field(
    api, db_snapshot, value, field
):
    post = api.post_json("/api/posts", post_body(), status=201).json
    before = db_snapshot()
    response = api.patch_json(f"/api/posts/{post['id']}", {field: value}, expect_errors=True)
    assert assert_problem(response, 422, field)["errors"][0]["message"] == RANGE
    assert db_snapshot() == before


@pytest.mark.parametrize("value", [*CALENDAR_EDGES, "9999-12-31T23:59:59Z", "0999-12-31T23:59:59Z"])
def test_modified_since_out_of_range_is_a_422_naming_it(api, value):
    response = api.get("/api/posts", {"modified_since": value}, expect_errors=True)
    assert assert_problem(response, 422, "modified_since")["errors"][0]["message"] == RANGE


@pytest.mark.parametrize("value", CALENDAR_EDGES)
@pytest.mark.parametrize("field", ["published_at", "modified_at"])
def test_a_calendar_edge_in_an_import_line_is_a_422_naming_line_and_field(
    api, db_snapshot, value, field
):
    before = db_snapshot()
    body = import_line(title="Fine") + import_line(**{field: value})
    response = api.post("/api/import", body, content_type=NDJSON, expect_errors=True)
    problem = assert_problem(response, 422, f"post/{field}")
    assert problem["errors"] == [{"field": f"post/{field}", "line": 2, "message": RANGE}]
    assert db_snapshot() == before


# The bounds themselves ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("1000-01-01T00:00:00Z", "1000-01-01T00:00:00+00:00"),
        ("1000-01-01T13:59:00+14:00", "0999-12-31T23:59:00+00:00"),
        ("1000-01-01T14:00:00+14:00", "1000-01-01T00:00:00+00:00"),
        ("9998-12-31T23:59:59.999999Z", "9998-12-31T23:59:59.999999+00:00"),
        ("9998-12-31T10:00:00-14:00", "9999-01-01T00:00:00+00:00"),
        ("9998-12-31T09:59:59-14:00", "9998-12-31T23:59:59+00:00"),
        ("9999-01-01T00:00:00Z", "9999-01-01T00:00:00+00:00"),
        ("0999-12-31T23:59:59.999999Z", "0999-12-31T23:59:59.999999+00:00"),
    ],
)
def test_the_range_is_from_year_1000_up_to_9999_in_utc(api, value, stored):
    inside = "1000-01-01T00:00:00+00:00" <= stored < "9999-01-01T00:00:00+00:00"
    response = api.post_json("/api/posts", post_body(published_at=value), expect_errors=True)
    if inside:
        assert response.status_int == 201
        assert datetime.fromisoformat(response.json["published_at"]) == datetime.fromisoformat(
            stored
        )
        assert_sitemaps_served(api)
    else:
        assert assert_problem(response, 422, "published_at")["errors"][0]["message"] == RANGE


def test_a_date_before_standard_time_is_written_with_a_whole_minute_offset(api):
    """Kiritimati kept local mean time (-10:29:20) until 1901: W3C dates write no seconds
    of an offset, so the offset is rounded to the minute, the instant kept."""
    api.patch_json("/api/settings", {"timezone": "Pacific/Kiritimati"}, status=200)
    post = api.post_json(
        "/api/posts", post_body(published_at="1890-06-01T00:00:00Z"), status=201
    ).json
    root = fetch_sitemap(api, "/post-sitemap.xml")
    [lastmod] = [
        url.findtext("{*}lastmod") for url in root if url.findtext("{*}loc") == post["permalink"]
    ]
    assert lastmod == "1890-05-31T13:31:00-10:29"
    assert_sitemaps_served(api)


# Across the whole range (property) ----------------------------------------------------------

# The application's clock in the property (frozen): modifications after it are refused.
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
EARLIEST = datetime(1000, 1, 1)
LATEST = datetime(9999, 1, 1)
# Offsets RFC 3339 can write (Python takes less than a day), the extremes more often.
offsets = st.one_of(
    st.sampled_from([0, 14 * 60, -14 * 60, 23 * 60 + 59, -(23 * 60 + 59)]),
    st.integers(-(23 * 60 + 59), 23 * 60 + 59),
)
# Wall-clock times: anywhere in the calendar, and close to either bound and either end.
wall_times = st.one_of(
    st.datetimes(),
    st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9998, 12, 31)),
    st.datetimes(min_value=datetime(999, 12, 30), max_value=datetime(1000, 1, 2)),
    st.datetimes(min_value=datetime(9998, 12, 30), max_value=datetime(9999, 1, 2)),
    st.datetimes(min_value=datetime(9999, 12, 30)),
    st.datetimes(max_value=datetime(1, 1, 2)),
    st.sampled_from([EARLIEST, LATEST, LATEST - timedelta(microseconds=1)]),
)
# The site's time zone moves every date it shows by up to 14 hours either way.
time_zones = st.sampled_from(["UTC", "Pacific/Kiritimati", "Etc/GMT+12"])


def in_range(wall: datetime, offset_minutes: int) -> bool:
    """The rule, worked out apart from the code: the instant in UTC, by naive arithmetic."""
    try:
        utc = wall - timedelta(minutes=offset_minutes)
    except OverflowError:
        return False
    return EARLIEST <= utc < LATEST


def rfc3339(wall: datetime, offset_minutes: int) -> str:
    text = wall.replace(tzinfo=timezone(timedelta(minutes=offset_minutes))).isoformat()
    return text.removesuffix("+00:00") + "Z" if offset_minutes == 0 else text


@settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    wall=wall_times,
    offset=offsets,
    field=st.sampled_from(["published_at", "modified_at"]),
    zone=time_zones,
)
def test_any_date_time_is_stored_and_served_or_refused_naming_the_field(
    api, db_snapshot, clock, wall, offset, field, zone
):
    clock.freeze(NOW)
    api.patch_json("/api/settings", {"timezone": zone}, status=200)
    existing = api.post_json("/api/posts", post_body(title="Existing"), status=201).json
    value = rfc3339(wall, offset)
    before = db_snapshot()
    answers = {
        "POST": api.post_json("/api/posts", post_body(**{field: value}), expect_errors=True),
        "PATCH": api.patch_json(f"/api/posts/{existing['id']}", {field: value}, expect_errors=True),
        "import": api.post(
            "/api/import", import_line(**{field: value}), content_type=NDJSON, expect_errors=True
        ),
    }
    instant = wall.replace(tzinfo=timezone(timedelta(minutes=offset)))
    if not in_range(wall, offset):
        event("out of the range")
        refused = RANGE
    elif field == "modified_at" and instant > NOW + CLOCK_SKEW:
        event("a modification in the future")
        refused = "is in the future"
    else:
        event("in the range")
        refused = None
    if refused is None:
        assert {way: answer.status_int for way, answer in answers.items()} == {
            "POST": 201,
            "PATCH": 200,
            "import": 200,
        }, value
        # A modification a little ahead of our clock (a client's clock) is taken as now.
        expected = min(instant, NOW) if field == "modified_at" else instant
        for answer in (answers["POST"], answers["PATCH"]):
            assert datetime.fromisoformat(answer.json[field]) == expected
            assert datetime.fromisoformat(answer.json[field]).utcoffset() == timedelta(0)
        assert_sitemaps_served(api)
    else:
        for way, answer in answers.items():
            named = f"post/{field}" if way == "import" else field
            assert answer.status_int == 422, (way, value, answer.text)
            assert refused in assert_problem(answer, 422, named)["errors"][0]["message"]
        assert db_snapshot() == before


def test_a_modification_later_than_now_is_refused_naming_the_field(api, db_snapshot, clock):
    """No lastmod in the future (issue 30): a modified_at beyond the clock-skew allowance
    is a 422 on create, update and import; within it, it is taken as now."""
    clock.freeze(NOW)
    post = api.post_json("/api/posts", post_body(), status=201).json
    before = db_snapshot()
    late = (NOW + CLOCK_SKEW + timedelta(seconds=1)).isoformat()
    for response, named in (
        (api.post_json("/api/posts", post_body(modified_at=late), expect_errors=True), None),
        (
            api.patch_json(f"/api/posts/{post['id']}", {"modified_at": late}, expect_errors=True),
            None,
        ),
        (
            api.post(
                "/api/import",
                import_line(modified_at=late),
                content_type=NDJSON,
                expect_errors=True,
            ),
            "post/modified_at",
        ),
    ):
        problem = assert_problem(response, 422, named or "modified_at")
        assert "is in the future" in problem["errors"][0]["message"]
    assert db_snapshot() == before
    soon = (NOW + CLOCK_SKEW).isoformat()
    edited = api.patch_json(f"/api/posts/{post['id']}", {"modified_at": soon}, status=200).json
    assert datetime.fromisoformat(edited["modified_at"]) == NOW
    # A scheduled post keeps its future publication date.
    scheduled = api.post_json(
        "/api/posts", post_body(published_at="2031-01-01T00:00:00Z"), status=201
    ).json
    assert scheduled["published_at"].startswith("2031-01-01")


def test_the_rule_the_property_checks_against():
    """``in_range`` says what the range says, at its bounds and the calendar's ends."""
    assert in_range(EARLIEST, 0) and not in_range(EARLIEST, 1)
    assert not in_range(LATEST, 0) and in_range(LATEST, 1)
    assert not in_range(datetime(9999, 12, 31, 23, 59, 59), -14 * 60)
    assert not in_range(datetime(1, 1, 1), 14 * 60)
