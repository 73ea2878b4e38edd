"""The model-based test, shards 2 and 3 of ``model.SHARDS`` (``tests/model.py``), in a
file of their own so that a second test worker runs them beside ``test_model.py``'s."""

import pytest
from model import SHARDS, run_shard

# Minutes on a slow machine: handed to a worker first (tests/conftest.py).
pytestmark = pytest.mark.long


@pytest.mark.parametrize("shard", range(2, SHARDS))
def test_after_any_writes_the_sitemaps_equal_a_rebuild_and_the_reference(
    wsgi_app, clean_database, _migrated_rows, app_settings, shard
):
    run_shard(wsgi_app, clean_database, _migrated_rows, app_settings, shard)
