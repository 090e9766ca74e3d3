"""The operators that make a child from a parent: `tune` (built-in, no LLM), `mutate` (LLM: make it
faster), `fix` (LLM: repair a candidate that failed) and `resolve` (LLM: the crossover of two parents whose
changes git could not merge; clean merges need no operator, the engine commits git's merge).

Each returns a `Proposal`: the child's kernel files and its provenance, or a failure status
(`patch_failed`, `llm_error`) with the reason, so that every attempt that cost tokens is recorded.
Called by the engine; the store is never touched here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evolver.records.candidates import Candidate, git_tree_hash, is_text
from evolver.records.config import LLMConfig, ModelSpec
from evolver.search import focus, tunables
from evolver.search.edits import EditError, apply_reply
from evolver.search.llm import LLMClient, LLMError, Usage
from evolver.search.prompts import build_fix_messages, build_merge_messages, retry_message


@dataclass
class Proposal:
    op: str
    parent: Candidate
    files: dict[str, str] | None  # None: the attempt failed before producing code
    summary: str
    rationale: str = ""
    status: str | None = None  # patch_failed / llm_error for failed attempts
    error: str = ""
    model: str | None = None
    usage: Usage = field(default_factory=Usage)
    trailers: dict[str, str] = field(default_factory=dict)
    second_parent: Candidate | None = None  # a crossover's other parent: the child is a merge commit
    island: int = 0  # where the child lives (set by the breeder)
    merged: dict[str, bytes] | None = None  # a clean merge's kernel files, byte for byte as git merged them
    replies: list[dict[str, Any]] = field(default_factory=list)  # each attempt's reply (trimmed) and its fate
    parent_files: dict[str, bytes] | None = None  # the parent's kernel files as read to make it (read once)


def decode(files: dict[str, bytes]) -> dict[str, str]:
    """The text files of a kernel directory (binary ones are not shown to, or edited by, an operator; the
    engine carries them over unchanged)."""
    return {p: data.decode("utf-8") for p, data in files.items() if is_text(data)}


def encode(files: dict[str, str]) -> dict[str, bytes]:
    return {p: text.encode() for p, text in files.items()}


def tree_of(files: dict[str, str]) -> str:
    return git_tree_hash(encode(files))


def tune(parent: Candidate, files: dict[str, str], seen: set[str], rng: random.Random) -> Proposal | None:
    """Change one tunable parameter to a value this run has not tried from here; None if none is left."""
    options = [(t, v, w) for t, v, w in tunables.moves(files) if tree_of(tunables.set_value(files, t, v)) not in seen]
    if options:
        t, value, _ = rng.choices(options, weights=[w for _, _, w in options])[0]
        child = tunables.set_value(files, t, value)
        change = f"{t.name}={value} (was {t.value})"
        return Proposal("tune", parent, child, f"tune {change}", trailers={"Tune": change})
    for _ in range(20):  # single steps are exhausted: jump to an untried combination
        child, changes = tunables.random_combination(files, rng)
        if changes and tree_of(child) not in seen:
            change = ", ".join(changes)
            return Proposal("tune", parent, child, f"tune {change}", trailers={"Tune": change})
    return None


def _rationale(reply: str) -> str:
    head = []
    for line in reply.splitlines():
        if line.strip().startswith(("<<<<<<<", "```")):
            break
        head.append(line)
    return "\n".join(head).strip()[:1500]


async def mutate(client: LLMClient, llm: LLMConfig, parent: Candidate, files: dict[str, str],
                 messages: Callable[[], list[dict[str, str]]], kernel_dir: str,
                 model: ModelSpec | None = None) -> Proposal:
    """Ask the LLM for an edit that makes `parent` faster (with `model`, or one drawn by weight); `messages`
    builds the prompt (breed.mutation_messages, which `evolve prompt` prints)."""
    proposal = Proposal("mutate", parent, None, "mutate")
    return await _edit_loop(client, llm, proposal, messages(), files, kernel_dir, model)


async def fix(client: LLMClient, llm: LLMConfig, failed: Candidate, files: dict[str, str], parent_diff: str,
              kernel_dir: str, guidance: str | None, model: ModelSpec | None = None) -> Proposal:
    """Ask the LLM to repair a candidate that failed (compile error, wrong answer, timeout, crash)."""
    proposal = Proposal("fix", failed, None, f"fix {failed.id}")
    messages = build_fix_messages(kernel_dir=kernel_dir, files=files, failed=failed, parent_diff=parent_diff,
                                  guidance=guidance, budget_tokens=llm.context_tokens - llm.max_tokens)
    return await _edit_loop(client, llm, proposal, messages, files, kernel_dir, model)


async def resolve(client: LLMClient, llm: LLMConfig, a: Candidate, b: Candidate, files: dict[str, str],
                  diff_a: str, diff_b: str, kernel_dir: str, guidance: str | None) -> Proposal:
    """Ask the LLM for the crossover of `a` and `b` that git could not merge: edits of `a` that bring in
    `b`'s change. The child has both as parents."""
    proposal = Proposal("cross", a, None, f"cross {a.id} x {b.id}", second_parent=b,
                        trailers={"Merge": "resolved"})
    messages = build_merge_messages(kernel_dir=kernel_dir, files=files, a=a, b=b, diff_a=diff_a, diff_b=diff_b,
                                    guidance=guidance, budget_tokens=llm.context_tokens - llm.max_tokens)
    result = await _edit_loop(client, llm, proposal, messages, files, kernel_dir)
    if result.files is None:
        result.trailers["Merge"] = "unresolved"
    else:
        result.summary = f"cross {a.id} x {b.id}: " + result.summary.split(": ", 1)[-1]
    return result


REPLY_KEPT = 32 << 10  # characters of a reply kept in git: its head and its tail


def trimmed(text: str) -> str:
    if len(text) <= REPLY_KEPT:
        return text
    half = REPLY_KEPT // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters left out ...]\n{text[-half:]}"


async def _edit_loop(client: LLMClient, llm: LLMConfig, proposal: Proposal, messages: list[dict[str, str]],
                     files: dict[str, str], kernel_dir: str, model: ModelSpec | None = None) -> Proposal:
    """Ask, apply strictly, and feed apply errors back for `llm.edit_retries` more tries."""
    model = model or client.pick_model()
    proposal.model = model.name
    asked = False  # a reply may ask to see lines of a file shown as an outline, once (evolver/search/focus.py)
    attempt = 0
    while attempt <= llm.edit_retries:
        try:
            reply = await client.chat(messages, model)
        except LLMError as exc:
            proposal.usage.add(exc.usage)
            proposal.status, proposal.error = "llm_error", str(exc)
            return proposal
        proposal.usage.add(reply.usage)
        kept = {"attempt": len(proposal.replies) + 1, "model": model.name, "reply": trimmed(reply.text),
                "truncated": reply.truncated}
        proposal.replies.append(kept)
        parts = [] if asked else focus.requested(reply.text, files, kernel_dir)
        if parts:
            asked = True
            room = max(2000, int(3.5 * (llm.context_tokens - llm.max_tokens)) - sum(len(m["content"]) for m in messages))
            kept["shown"] = [f"{path}:{first}-{last}" for path, first, last in parts]
            messages = messages + [{"role": "assistant", "content": reply.text},
                                   {"role": "user", "content": focus.shown(parts, files, kernel_dir, room)}]
            continue  # a second turn, not an edit attempt
        attempt += 1
        try:
            result = apply_reply(reply.text, files, kernel_dir, truncated=reply.truncated,
                                 allow_rewrite=llm.full_rewrite)
        except EditError as exc:
            kept["error"] = str(exc)[:2000]
            proposal.status, proposal.error = "patch_failed", str(exc)
            proposal.rationale = f"attempt {attempt}: {exc}"[:1500]
            retry = retry_message(str(exc), f"{kernel_dir}/{min(files)}")  # (the form again, with a real path)
            messages = messages + [{"role": "assistant", "content": reply.text}, retry]
            continue
        proposal.status, proposal.error = None, ""
        proposal.files = result.files
        proposal.rationale = _rationale(reply.text)
        first = proposal.rationale.splitlines()[0] if proposal.rationale else ""
        proposal.summary = f"{proposal.op}: {first[:80]}" if first else f"{proposal.op} {', '.join(result.changed)}"
        proposal.trailers.update({"Edit": result.mode, "Attempts": str(len(proposal.replies))})
        return proposal
    proposal.trailers["Attempts"] = str(len(proposal.replies))
    return proposal
