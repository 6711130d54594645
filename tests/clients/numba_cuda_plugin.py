"""The one pytest fixture numba-cuda's test suite takes from the conftest.py of its source
tree, which its wheel does not ship: with it, `pytest --pyargs numba.cuda.tests...` runs the
installed suite as upstream runs it (FileCheck reproducers are not dumped)."""

import pytest


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    request.cls._dump_failed_filechecks = False
