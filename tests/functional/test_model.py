"""The model-based test, shards 0 and 1 of ``model.SHARDS`` (``tests/model.py``: the
machine, what it writes and what it compares; ``test_model_more.py``: the others)."""

import pytest
from model import run_shard

# Minutes on a slow machine: handed to a worker first (tests/conftest.py).
pytestmark = pytest.mark.long


@pytest.mark.parametrize("shard", [0, 1])
def test_after_any_writes_the_sitemaps_equal_a_rebuild_and_the_reference(
    wsgi_app, clean_database, _migrated_rows, app_settings, shard
):
    run_shard(wsgi_app, clean_database, _migrated_rows, app_settings, shard)
