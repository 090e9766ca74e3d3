"""`evolve show`'s words for a candidate (evolver/records/describe.py): the judge's warnings about a score are lines of
their own, not buried in the details' JSON."""

from __future__ import annotations

from evolver.records.candidates import Candidate
from evolver.records.describe import describe


def candidate(details: dict) -> Candidate:
    return Candidate(run="r1", id="00007", commit="a" * 40, parents=("b" * 40,), created=0, subject="tune NB=16",
                     trailers={"Op": "tune", "Parent": "00001"},
                     results=({"status": "ok", "score": 2856.2, "harness": "h", "gpu": "NVIDIA H100 / driver 580",
                               "details": details},))


def test_the_judges_flags_are_lines_of_their_own() -> None:
    mps = "timed under MPS, which the contest does not use: the seed's small batches took 3-4% longer there"
    lines = describe(candidate({"flags": [mps], "gpu": {"name": "NVIDIA H100", "mps": True}}))
    assert f"  flag: {mps}" in lines
    assert lines.index(f"  flag: {mps}") < next(i for i, line in enumerate(lines) if line.startswith("  details: "))
    assert not any(line.startswith("  flag:") for line in describe(candidate({"flags": [], "gpu": {"mps": False}})))
