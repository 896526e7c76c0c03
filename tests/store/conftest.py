import pytest

from amtest import make_project


@pytest.fixture
def bare_project(tmp_path):
    return make_project(tmp_path, init=False)


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path)
