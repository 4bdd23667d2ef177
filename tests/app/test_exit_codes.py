"""``callsim``'s exit codes: one per reason, each explained where ``--help`` prints them."""

from voice.app import exit_codes as ec

CODES = {name: value for name, value in vars(ec).items() if name.startswith("EXIT_") and name != "EXIT_CODES"}


def test_every_reason_has_a_code_of_its_own():
    assert len(set(CODES.values())) == len(CODES)


def test_the_help_texts_explain_each_code_they_can_end_with():
    explained = {int(line.split()[0]) for line in ec.EXIT_CODES.splitlines()[1:] if line.split()[0].isdigit()}
    assert explained == {ec.EXIT_OK, ec.EXIT_ERROR, ec.EXIT_FAILED_CALLS, ec.EXIT_GATE, ec.EXIT_STORAGE,
                         ec.EXIT_SIMULATOR, ec.EXIT_INTERRUPTED}  # fmt: skip
    lines = ec.COMPARE_EXIT_CODES.splitlines()[1:]
    compare = {int(line.split()[0]) for line in lines if line.split()[0].isdigit()}
    assert compare == {ec.EXIT_OK, ec.EXIT_ERROR, ec.EXIT_GATE, ec.EXIT_MISMATCH, ec.EXIT_STORAGE}
