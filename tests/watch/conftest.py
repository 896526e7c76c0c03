import pytest

from watchutil import WatcherSet


@pytest.fixture
def watchers():
    """Starts `sync --watch` processes; every one still running at the end is killed."""
    started = WatcherSet()
    yield started
    started.kill_all()
