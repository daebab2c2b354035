"""`--scheduler`'s checks and connection: errors name the option, a client lives for the block."""

import sys
import types

import pytest

from osustat._validation import UsageError
from osustat.dask_cluster import check_address, cluster_map, connected


@pytest.mark.parametrize(
    "address, jobs, message",
    [("tcp://h:1", 2, "not both"), ("  ", 1, "`--scheduler` is empty")],
)
def test_bad_addresses_are_refused(address, jobs, message):
    with pytest.raises(UsageError, match=message):
        check_address(address, jobs)


def test_no_address_is_fine_with_any_jobs():
    check_address(None, 4)
    check_address("tcp://h:1", 1)
    with connected(None) as client:
        assert client is None


def test_an_unreachable_scheduler_names_the_option(monkeypatch):
    def refuse(address, timeout):
        raise OSError(f"Timed out trying to connect to {address} after {timeout}")

    monkeypatch.setitem(sys.modules, "distributed", types.SimpleNamespace(Client=refuse))
    with pytest.raises(UsageError, match=r"`--scheduler` 'tcp://h:1 ': cannot connect .*h:1"):
        with connected("tcp://h:1 "):
            pass


def test_a_missing_extra_says_which_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    with pytest.raises(UsageError, match=r"osustat\[distributed\]"):
        with connected("tcp://h:1"):
            pass


class _Client:
    """Futures are the values themselves; `map` runs the tasks in reverse order, as a
    cluster may finish them, and returns them in submission order."""

    def __init__(self):
        self.scattered = []

    def scatter(self, items):
        self.scattered.append(list(items))
        return [("future", x) for x in items]

    def map(self, fn, futures, pure=True):
        assert pure is False and all(f[0] == "future" for f in futures)
        return [fn(f[1]) for f in reversed(futures)][::-1]

    def gather(self, futures):
        return futures


def test_cluster_map_scatters_the_items_and_keeps_their_order():
    client = _Client()
    mapper = cluster_map(client)
    assert mapper(lambda x: x * x, iter([3, 1, 2])) == [9, 1, 4]
    assert client.scattered == [[3, 1, 2]]
