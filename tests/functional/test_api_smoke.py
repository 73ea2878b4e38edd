"""A post through the API, end to end."""


def test_create_and_read_post(api, dbsession):
    author = api.post_json("/api/authors", {"slug": "jane", "name": "Jane"}).json
    created = api.post_json(
        "/api/posts",
        {
            "type": "post",
            "title": "Hello World",
            "status": "publish",
            "author": author["id"],
            "published_at": "2024-05-01T12:00:00+02:00",
        },
        status=201,
    )
    assert created.location.endswith(f"/api/posts/{created.json['id']}")
    post = api.get(created.location).json
    assert post["slug"] == "hello-world"
    assert post["published_at"] == "2024-05-01T10:00:00+00:00"
    assert post["permalink"] == "http://sitemaps.test/2024/05/hello-world/"
