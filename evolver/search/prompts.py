"""Prompt assembly for the LLM operators, kept within the configured context budget.

Parts, in order of priority: the instructions and edit format, the parent's result and where its time goes
(never cut), its source (whole, or focused: evolver/search/focus.py), the guidance file, the history of the lineage
and other islands' ideas. Lower-priority parts are shortened first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evolver.records.candidates import Candidate, Result
from evolver.search.edits import EXAMPLE_PATH, EXAMPLE_REPLACE, EXAMPLE_SEARCH
from evolver.search.focus import heat, source_view
from evolver.search.llm import estimate_tokens

SYSTEM = """You improve the speed of {what} while keeping it correct. Reply with a one-paragraph
rationale, then your edits as SEARCH/REPLACE blocks, each headed by the file's path:

{example_path}
<<<<<<< SEARCH
{example_search}
=======
{example_replace}
>>>>>>> REPLACE

Each SEARCH must match exactly one place in the file. Use several small blocks rather than one large one.
Only files of the kernel directory may change. Do not call library routines that solve the problem for you."""


def _fence(path: str, text: str) -> str:
    return f"{path}\n```\n{text.rstrip()}\n```"


def summarise_result(result: Result | None, limit: int = 1500) -> str:
    """The parent's result as the model should read it: status, score, per-shape timings, residuals,
    the compiler's resource report, and the error if any."""
    if result is None:
        return "not evaluated yet"
    head = f"status {result.status}"
    if result.score is not None:
        head += f", score {result.score:.6g} (lower is better)"
    lines = [head]
    if result.error:
        lines.append(f"error: {result.error[:limit]}")
    details: dict[str, Any] = dict(result.details)
    shapes = details.pop("shapes", None) or []
    if shapes:
        lines.append("per shape (mean time per call):")
        lines += [f"  {s.get('shape', '?')}: {s.get('mean_us', 0):.1f} us" for s in shapes]
    compile_info = details.pop("compile", None)
    if compile_info:
        lines.append("compiler resources: " + json.dumps(compile_info, sort_keys=True)[:600])
    worst = details.pop("worst", None)
    if worst:
        lines.append("worst scaled residuals (gates: factor 20, orth 100): " +
                     ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))
    for key in ("gpu", "timings", "tests", "flags", "seed", "mode", "harness_version", "baseline", "unit"):
        details.pop(key, None)
    if details:
        text = json.dumps(details, sort_keys=True)
        lines.append("details: " + (text if len(text) <= limit else text[:limit] + " ..."))
    return "\n".join(lines)


def history(chain: list[Candidate], limit: int) -> list[str]:
    """One line per step of the lineage, newest first."""
    lines = []
    for c in chain[:limit]:
        r = c.result
        score = f"{c.score:.6g}" if c.score is not None else "-"
        what = c.trailers.get("Tune") or c.subject.split(": ", 1)[-1]
        error = f" ({r.error.splitlines()[0][:80]})" if r and r.error else ""
        lines.append(f"- {c.id} {c.op}: {c.status} score {score}: {what[:120]}{error}")
    return lines


@dataclass(frozen=True)
class Inspiration:
    """A strong candidate from another island, shown as the change that made it."""

    candidate: Candidate
    diff: str


def system_message(guidance: str | None) -> dict[str, str]:
    """The instructions, naming the problem as its guidance file's first heading does ("# Guidance for the
    model: batched FP32 Householder QR"), or the code of the kernel directory when there is none."""
    heading = next((line.lstrip("#").strip() for line in (guidance or "").splitlines() if line.startswith("#")), "")
    problem = heading.split(":", 1)[-1].strip() if heading else ""
    what = f"the code for this problem: {problem}," if problem else "the code in the kernel directory"
    return {"role": "system", "content": SYSTEM.format(what=what, example_path=EXAMPLE_PATH,
                                                       example_search=EXAMPLE_SEARCH, example_replace=EXAMPLE_REPLACE)}


def build_messages(*, kernel_dir: str, files: dict[str, str], parent: Candidate, chain: list[Candidate],
                   guidance: str | None, budget_tokens: int, inspirations: list[Inspiration] | None = None,
                   profile: str = "", hotness: dict[str, float] | None = None) -> list[dict[str, str]]:
    """System and user messages whose estimated size fits `budget_tokens`. When they do not fit, shed in this
    order: inspirations, lineage history, guidance, then the source's coldest files become outlines
    (evolver/search/focus.py: the files the `profile` names as hot, and the entry file, stay whole longest); the
    parent's result and profile are never cut, and the prompt is never refused."""
    whole = "\n\n".join(_fence(f"{kernel_dir}/{p}", files[p]) for p in sorted(files))
    result = f"Result of this version ({parent.id}):\n{summarise_result(parent.result)}"
    system = system_message(guidance)
    optional_guidance = guidance or ""
    steps = history(chain, 50)
    ideas = list(inspirations or [])

    def render(source: str, g: str, h: list[str], i: list[Inspiration]) -> str:
        parts = [f"The kernel directory `{kernel_dir}/` holds:\n\n{source}", result]
        if profile:
            parts.append(profile)
        if g:
            parts.insert(0, f"Guidance for this problem:\n{g}")
        if h:
            parts.append("What was tried along this lineage (newest first):\n" + "\n".join(h))
        if i:
            parts.append("Ideas from other islands (changes that made strong candidates there):\n" + "\n\n".join(
                f"{x.candidate.id} (island {x.candidate.island}, score {x.candidate.score:.6g}):\n"
                f"```diff\n{x.diff.strip()[:3000]}\n```" for x in i))
        parts.append("Propose one change that should make it faster. Reply with the rationale and the "
                     "SEARCH/REPLACE blocks.")
        return "\n\n".join(parts)

    def fits(user: str) -> bool:
        return estimate_tokens(system["content"]) + estimate_tokens(user) <= budget_tokens

    while not fits(user := render(whole, optional_guidance, steps, ideas)):
        if ideas:
            ideas.pop()
        elif steps:
            steps = steps[: len(steps) // 2] if len(steps) > 1 else []
        elif len(optional_guidance) > 400:
            optional_guidance = optional_guidance[:len(optional_guidance) // 2] + "\n[guidance shortened]"
        else:  # the source itself: the parts that matter whole, the rest outlined
            source, _ = source_view(kernel_dir, files, hotness or {},
                                    lambda text: fits(render(text, optional_guidance, [], [])))
            user = render(source, optional_guidance, [], [])
            break
    return [system, {"role": "user", "content": user}]


def build_fix_messages(*, kernel_dir: str, files: dict[str, str], failed: Candidate, parent_diff: str,
                       guidance: str | None, budget_tokens: int) -> list[dict[str, str]]:
    """Ask for a repair of `failed`, showing its source, how it failed, and what changed from its parent."""
    r = failed.result
    failure = f"status {failed.status}: {(r.error if r else '')[:3000]}"
    log = str(r.line.get("log", "") if r else "").strip()[-3000:]
    how = f"How it failed:\n{failure}" + (f"\n\nLog:\n{log}" if log else "")
    optional = [f"It differs from its parent, which passed, by:\n```diff\n{parent_diff.strip()[:4000]}\n```"]
    if guidance:
        optional.append(f"Guidance for this problem:\n{guidance}")
    closing = ("Fix this version so that it is correct again, keeping the change that was meant to make it faster. "
               "Reply with the rationale and the SEARCH/REPLACE blocks.")
    return _shed_to_fit(lambda source, kept: [
        f"The kernel directory `{kernel_dir}/` holds this version ({failed.id}), which FAILED:\n\n{source}", how,
        *kept, closing], optional, budget_tokens, system_message(guidance), kernel_dir, files)


def build_merge_messages(*, kernel_dir: str, files: dict[str, str], a: Candidate, b: Candidate, diff_a: str,
                         diff_b: str, guidance: str | None, budget_tokens: int) -> list[dict[str, str]]:
    """Ask for the crossover of `a` and `b` whose changes git could not merge: `a`'s source to edit, what
    each side changed from their common ancestor, and how each performed (per shape, where reported)."""
    sides = [f"What {a.id} (island {a.island}) changed from the common ancestor:\n```diff\n{diff_a.strip()[:6000]}\n```"
             f"\n\nIts result:\n{summarise_result(a.result)}",
             f"What {b.id} (island {b.island}) changed from the common ancestor:\n```diff\n{diff_b.strip()[:6000]}\n```"
             f"\n\nIts result:\n{summarise_result(b.result)}"]
    optional = [f"Guidance for this problem:\n{guidance}"] if guidance else []
    closing = (f"Edit {a.id} so that it also has what made {b.id} good, combining the strengths of both (where "
               "the two changes really exclude each other, choose per the results above, and say why). Reply "
               f"with the rationale and SEARCH/REPLACE blocks against the files of {a.id} shown above.")
    return _shed_to_fit(lambda source, kept: [
        f"Two candidates from different islands both changed their common ancestor, and git could not merge the "
        f"changes (they touch the same lines). The kernel directory `{kernel_dir}/` of the first, {a.id}, holds:"
        f"\n\n{source}", *kept, *sides, closing], optional, budget_tokens, system_message(guidance), kernel_dir,
        files)


def _shed_to_fit(assemble: Callable[[str, list[str]], list[str]], optional: list[str], budget_tokens: int,
                 system: dict[str, str], kernel_dir: str, files: dict[str, str]) -> list[dict[str, str]]:
    """The messages with as many of the `optional` parts (dropped from the end) as fit the budget, and the
    source whole, or focused once no optional part is left (evolver/search/focus.py); never refused."""
    kept = list(optional)
    whole = "\n\n".join(_fence(f"{kernel_dir}/{p}", files[p]) for p in sorted(files))

    def fits(user: str) -> bool:
        return estimate_tokens(system["content"]) + estimate_tokens(user) <= budget_tokens
    while not fits(user := "\n\n".join(assemble(whole, kept))):
        if kept:
            kept.pop()
            continue
        source, _ = source_view(kernel_dir, files, heat(files, None), lambda text: fits("\n\n".join(assemble(text, []))))
        user = "\n\n".join(assemble(source, []))
        break
    return [system, {"role": "user", "content": user}]


def retry_message(error: str, path: str) -> dict[str, str]:
    """The reason an edit was not applied, and the form once more with a real path in it (`path`: a file of the
    kernel as the prompt names it): a model that answered in another form mostly repeats it when told only why."""
    return {"role": "user", "content": f"Your edits could not be applied: {error}\n\nSend corrected "
            "SEARCH/REPLACE blocks against the current file (unchanged by your previous reply), each in this form, "
            f"the markers on lines of their own:\n\n{path}\n<<<<<<< SEARCH\n{EXAMPLE_SEARCH}\n"
            f"=======\n{EXAMPLE_REPLACE}\n>>>>>>> REPLACE"}

