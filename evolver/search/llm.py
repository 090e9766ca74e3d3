"""The LLM client: any OpenAI-compatible endpoint through the async `openai` client.

Retries with exponential backoff on 429, 5xx, timeouts and dropped connections (honouring Retry-After);
counts tokens and dollars per call; bounds concurrent requests. The engine asks; this module answers with
a `Reply` or raises `LLMError` after the retries. The API key is read here and nowhere else.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evolver.records.config import LLMConfig, ModelSpec


class LLMError(Exception):
    """The endpoint failed for good (after retries, or with an error that retrying cannot fix)."""

    def __init__(self, message: str, usage: "Usage | None" = None) -> None:
        super().__init__(message)
        self.usage = usage or Usage()


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    def add(self, other: "Usage") -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.calls += other.calls


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str
    model: str
    usage: Usage

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


def api_key(config: LLMConfig) -> str | None:
    """The key, or None when one is needed and missing. Servers without keys use api_key_env = ""."""
    if not config.api_key_env:
        return "not-needed"
    return os.environ.get(config.api_key_env) or None


CONTEXT_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 3.5 characters a token for code), for budgeting prompts."""
    return int(len(text) / 3.5) + 1


DOWN_AFTER = 8  # requests in a row that got no usable reply, every retry spent: the LLM is down for this session


class LLMClient:
    def __init__(self, config: LLMConfig, rng: random.Random, say: Callable[[str], None] = print) -> None:
        import openai  # imported here so the rest of the core loads without it

        self._openai = openai
        self.config = config
        self.rng = rng
        self.say = say
        self.failed_in_a_row = 0
        self.down: str | None = None  # why the LLM operators stopped asking (breed.can_run), once DOWN_AFTER
        key = api_key(config)
        if key is None or not config.configured:
            raise LLMError("no LLM configured")
        try:
            self._client = openai.AsyncOpenAI(base_url=config.base_url, api_key=key, timeout=config.timeout_s,
                                              max_retries=0)
        except Exception as exc:  # an unusable base_url (say, an invalid port) is a configuration problem
            raise LLMError(f"[llm] base_url {config.base_url!r}: {_short(str(exc))}") from None
        self._slots = asyncio.Semaphore(config.max_concurrent)

    async def context_window(self) -> int | None:
        """The smallest context any configured model has, where the endpoint says (`GET /models`: vLLM's
        `max_model_len`, OpenRouter's `context_length`, and the like); None where it does not, or cannot be
        asked within a few seconds."""
        try:
            listed = await asyncio.wait_for(self._client.models.list(), 10.0)
        except Exception:  # noqa: BLE001  not every server lists models: the configured budget stands
            return None
        names = {m.name for m in self.config.models}
        sizes: list[int] = []
        for model in getattr(listed, "data", []) or []:
            fields = {**(getattr(model, "model_extra", None) or {}), **vars(model)}
            if fields.get("id") in names:
                size = next((int(fields[k]) for k in CONTEXT_FIELDS if isinstance(fields.get(k), int)), 0)
                if not size:
                    return None  # one model that does not say: the configured budget stands
                sizes.append(size)
        return min(sizes) if sizes else None

    def pick_model(self) -> ModelSpec:
        models = self.config.models
        return self.rng.choices(models, weights=[m.weight for m in models])[0]

    async def chat(self, messages: list[dict[str, str]], model: ModelSpec) -> Reply:
        """The model's reply; an LLMError when none came. After DOWN_AFTER of those in a row (a dead endpoint, a
        revoked key, a model the server does not have: a run's budget of failed children otherwise) the client
        is `down` for the rest of the session, and says so once."""
        try:
            reply = await self._ask(messages, model)
        except LLMError as exc:
            self.failed_in_a_row += 1
            if self.failed_in_a_row >= DOWN_AFTER and self.down is None:
                self.down = f"{self.failed_in_a_row} requests in a row got no reply (the last: {exc})"
                self.say(f"LLM operators off for this session: {self.down}; `evolve start` asks again")
            raise
        self.failed_in_a_row = 0
        return reply

    async def _ask(self, messages: list[dict[str, str]], model: ModelSpec) -> Reply:
        total = Usage()
        delay = 1.0
        last_error = ""
        for attempt in range(self.config.max_retries + 1):
            try:
                async with self._slots:
                    # the whole request under one deadline: a server that trickles bytes resets httpx's read
                    # timeout with every byte and would otherwise hold a proposer forever
                    response = await asyncio.wait_for(self._client.chat.completions.create(
                        model=model.name, messages=messages,  # type: ignore[arg-type]
                        temperature=self.config.temperature, max_tokens=self.config.max_tokens),
                        self.config.timeout_s)
                return self._reply(response, model, messages, total)
            except asyncio.TimeoutError:
                total.calls += 1
                last_error = f"no complete reply within {self.config.timeout_s:g} s"
            except self._openai.APIStatusError as exc:
                total.calls += 1
                last_error = f"HTTP {exc.status_code}: {_short(exc.message)}"
                if exc.status_code != 429 and exc.status_code < 500:
                    raise LLMError(f"{model.name}: {last_error}", total) from None
                delay = _retry_after(exc) or delay
            except (self._openai.APITimeoutError, self._openai.APIConnectionError) as exc:
                total.calls += 1
                last_error = "request timed out" if isinstance(exc, self._openai.APITimeoutError) else \
                    f"connection failed ({_short(str(exc))})"
            except Exception as exc:  # a 200 whose body is not a completion, a URL httpx refuses...: not retried
                total.calls += 1
                while isinstance(exc, ExceptionGroup) and exc.exceptions:  # say what failed, not the wrapper
                    exc = exc.exceptions[0]
                raise LLMError(f"{model.name}: unusable response ({type(exc).__name__}: {_short(str(exc))})",
                               total) from None
            if attempt < self.config.max_retries:
                await asyncio.sleep(min(30.0, delay) * (0.75 + 0.5 * self.rng.random()))
                delay *= 2
        raise LLMError(f"{model.name}: {last_error} (after {self.config.max_retries + 1} attempts)", total)

    def _reply(self, response: Any, model: ModelSpec, messages: list[dict[str, str]], total: Usage) -> Reply:
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice else ""
        if not isinstance(text, str):
            raise TypeError(f"the reply's content is a {type(text).__name__}, not text")
        usage = response.usage
        if usage is not None and usage.prompt_tokens is not None:
            prompt, completion = int(usage.prompt_tokens), int(usage.completion_tokens or 0)
        else:  # some servers omit usage; estimate rather than count nothing
            prompt = sum(estimate_tokens(m["content"]) for m in messages)
            completion = estimate_tokens(text)
        cost = (prompt * model.input_usd_per_mtok + completion * model.output_usd_per_mtok) / 1e6
        total.add(Usage(prompt, completion, cost, 1))
        return Reply(text=text, finish_reason=(choice.finish_reason if choice else None) or "stop",
                     model=model.name, usage=total)

    async def close(self) -> None:
        await self._client.close()


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value else None
    except (AttributeError, ValueError):
        return None
