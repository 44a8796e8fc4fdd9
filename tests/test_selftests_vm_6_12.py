"""The 6.12 backport's run (its top stack, 6.12-2) of
lab/selftests/selftests.py (test_selftests_vm.py says what it checks), in
a file of its own: make test's --dist loadfile gives a file to one
worker, and this one starts on the other worker beside the 7.3 stacks'
run (tests/conftest.py FIRST)."""
import pytest
from conftest import VM_STACKS
from test_selftests_vm import run_selftests


@pytest.mark.parametrize("stack", [s for s in VM_STACKS if s == "6.12-2"])
def test_selftests_vm(stack, request):
    """The 6.12 backport's kselftests give the expected results."""
    run_selftests(stack, request)
