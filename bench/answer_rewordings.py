"""The rewordings of ``bench/rewordings/`` beside the originals (``bench.eval_answers
--rewordings``): each rewording of an example question (``example.yaml``,
``example-2.yaml`` to ``example-4.yaml``) is scored with its original's facts, each new
question of the files of :data:`NEW` (``example-new.yaml`` to ``example-new-25.yaml``)
with its own, each chat of ``conversations.yaml`` is asked turn by turn through the read
agent's ``/v1/chat/completions`` (each turn sees the turns before it), and the report
gives originals and rewordings apart, on each half (``bench.halves``)."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx2
import yaml

from bench.common import free_port, stop_process, wait_ready
from bench.halves import TUNING, VALIDATION, half, halves

REWORDINGS = Path(__file__).with_name("rewordings")
BIN = Path(sys.executable).parent


# The sets of rewordings of the example's questions, in the order they were written, each
# with how many rewordings of every question it holds; a question's rewordings are
# numbered on through the sets (the first set's are 1-3, the second's 4-5, ...).
SETS = {"example.yaml": 3, "example-2.yaml": 2, "example-3.yaml": 2, "example-4.yaml": 2}
SET_NAMES = ("first set", "second set", "third set", "fourth set")
# New questions of the same kinds, each with its own facts: file -> how it is halved
# ("hash": bench.halves.half("new-N"); "tuning": every question is of the tuning half).
NEW = {
    "example-new.yaml": "hash",
    "example-tune-3.yaml": TUNING,
    "example-new-4.yaml": "hash",
    "example-tune-5.yaml": TUNING,
    "example-new-6.yaml": "hash",
    "example-tune-7.yaml": TUNING,
    "example-new-8.yaml": "hash",
    "example-new-9.yaml": "hash",
    "example-new-10.yaml": "hash",
    "example-new-11.yaml": "hash",
    "example-new-12.yaml": "hash",
    "example-new-13.yaml": "hash",
    "example-new-14.yaml": "hash",
    "example-new-15.yaml": "hash",
    "example-new-16.yaml": "hash",
    "example-new-17.yaml": "hash",
    "example-new-18.yaml": "hash",
    "example-new-19.yaml": "hash",
    "example-new-20.yaml": "hash",
    "example-new-21.yaml": "hash",
    "example-new-22.yaml": "hash",
    "example-new-23.yaml": "hash",
    "example-tune-24.yaml": TUNING,
    "example-new-25.yaml": "hash",
}


def reworded(questions: Sequence[Any]) -> list[Any]:
    """A Question per rewording of each set of ``SETS``, with its original's facts and
    number (``variant`` 1, 2, ... numbered on through the sets)."""
    by_number = {q.number: q for q in questions}
    out: list[Any] = []
    taken: dict[int, int] = {}
    for name in SETS:
        spec = yaml.safe_load((REWORDINGS / name).read_text(encoding="utf-8"))
        for n, texts in spec.items():
            if int(n) not in by_number:
                continue
            if not all(isinstance(text, str) for text in texts):
                raise SystemExit(f"{name}: a rewording of {n} is not text (quote it): {texts}")
            if len(texts) != SETS[name]:
                raise SystemExit(f"{name} holds {len(texts)} rewordings of {n}, not {SETS[name]}")
            for text in texts:
                taken[int(n)] = taken.get(int(n), 0) + 1
                out.append(replace(by_number[int(n)], text=text, variant=taken[int(n)]))
    return out


def new_questions(make_question: Any, make_fact: Any, now: str) -> list[Any]:
    """The questions of each file of :data:`NEW`, each with its own facts (``new``: the
    file). They are asked with the originals' ``now``, which each file states too: a file
    that says another day is refused."""
    out = []
    for name in NEW:
        spec = yaml.safe_load((REWORDINGS / name).read_text(encoding="utf-8"))
        if str(spec["now"]) != now:
            raise SystemExit(f"{name} is written for now={spec['now']}, the originals for {now}")
        out += [
            make_question(
                int(n),
                str(q["ask"]),
                "",
                tuple(make_fact(f) for f in q["facts"]),
                tuple(make_fact(f) for f in q.get("forbid") or ()),
                new=name,
            )
            for n, q in spec["questions"].items()
        ]
    return out


def set_of(variant: int) -> int:
    """Which set a variant is of: 0 the originals, 1 ``example.yaml``, 2 the second, ..."""
    last = 0
    for number, size in enumerate(SETS.values(), start=1):
        last += size
        if variant <= last:
            return number if variant > 0 else 0
    raise ValueError(f"variant {variant} is past the {last} rewordings of {list(SETS)}")


@dataclass
class Turn:
    ask: str
    facts: tuple[Any, ...]
    forbid: tuple[Any, ...]
    answer: str = ""
    missed: list[Any] = field(default_factory=list)
    forbidden: list[Any] = field(default_factory=list)

    @property
    def right(self) -> bool:
        return not self.missed and not self.forbidden


@dataclass
class Conversation:
    name: str
    turns: list[Turn]

    @property
    def right(self) -> bool:
        return all(t.right for t in self.turns)


def conversations(make_fact: Any) -> tuple[str, list[Conversation]]:
    spec = yaml.safe_load((REWORDINGS / "conversations.yaml").read_text(encoding="utf-8"))
    out = []
    for chat in spec["conversations"]:
        turns = [
            Turn(
                str(t["ask"]),
                tuple(make_fact({"level": "must", **f}) for f in t.get("facts") or ()),
                tuple(make_fact({"level": "must", **f}) for f in t.get("forbid") or ()),
            )
            for t in chat["turns"]
        ]
        out.append(Conversation(str(chat["name"]), turns))
    return str(spec["now"]), out


@contextlib.contextmanager
def read_agent(url: str, token: str, env: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """``read-agent --no-llm serve`` on a free port: (its base URL, its API key)."""
    key = secrets.token_urlsafe(24)
    port = free_port()
    process = subprocess.Popen(
        [str(BIN / "read-agent"), "--no-llm", "serve", "--addr", f"127.0.0.1:{port}"],
        env={**env, "MEMORY_URL": url, "MEMORY_TOKEN": token, "READ_AGENT_API_KEY": key},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", timeout=120)
        yield f"http://127.0.0.1:{port}", key
    finally:
        stop_process(process)


def ask_chats(chats: Sequence[Conversation], now: str, base: str, key: str, flatten: Any) -> None:
    """Each chat turn by turn, its answers scored in place."""
    headers = {"Authorization": f"Bearer {key}"}
    with httpx2.Client(timeout=600) as http:
        for chat in chats:
            messages: list[dict[str, str]] = []
            for turn in chat.turns:
                messages.append({"role": "user", "content": turn.ask})
                body = {"model": "memory", "messages": messages, "now": now}
                reply = http.post(f"{base}/v1/chat/completions", json=body, headers=headers)
                if reply.status_code != 200:
                    turn.answer = f"(HTTP {reply.status_code}: {reply.text[:300]})"
                else:
                    turn.answer = str(reply.json()["choices"][0]["message"]["content"])
                messages.append({"role": "assistant", "content": turn.answer})
                flat = flatten(turn.answer)
                turn.missed = [f for f in turn.facts if not f.found(flat)]
                turn.forbidden = [f for f in turn.forbid if f.found(flat)]


def report(scores: Sequence[Any], chats: Sequence[Conversation], show: bool) -> str:
    """Originals and rewordings apart, each on the tuning and the validation half; then the
    chats, and the gap in percentage points."""
    half = half_of(scores)
    new = [s for s in scores if s.question.new]
    scores = [s for s in scores if not s.question.new]
    lines = []

    def share(rows: Sequence[Any]) -> str:
        right = sum(1 for s in rows if s.verdict == "correct")
        return f"{right}/{len(rows)}" + (f" ({100 * right / len(rows):.0f}%)" if rows else "")

    for name, rows in (
        ("originals", [s for s in scores if s.question.variant == 0]),
        ("rewordings", [s for s in scores if s.question.variant > 0]),
        *(
            (f"  {name}", [s for s in scores if set_of(s.question.variant) == number])
            for number, name in enumerate(SET_NAMES, start=1)
        ),
    ):
        tune = [s for s in rows if half(s) == TUNING]
        validate = [s for s in rows if half(s) == VALIDATION]
        lines.append(
            f"{name}: {share(rows)} correct; tuning half {share(tune)}, "
            f"validation half {share(validate)}"
        )
    for name in NEW:
        rows = [s for s in new if s.question.new == name]
        tune = [s for s in rows if half(s) == TUNING]
        validate = [s for s in rows if half(s) == VALIDATION]
        if rows:
            lines.append(
                f"new questions ({name}): {share(rows)} correct; tuning half {share(tune)}, "
                f"validation half {share(validate)}"
            )
    originals = [s for s in scores if s.question.variant == 0]

    def right(rows: Sequence[Any]) -> float:
        return sum(s.verdict == "correct" for s in rows) / len(rows)

    gaps = [("all", [s for s in scores if s.question.variant > 0])] + [
        (name, [s for s in scores if set_of(s.question.variant) == number])
        for number, name in enumerate(SET_NAMES, start=1)
    ]
    shown = [f"{name} {100 * (right(originals) - right(rows)):.1f}" for name, rows in gaps if rows]
    if originals and shown:
        lines.append(f"gap, originals minus rewordings, in points: {'; '.join(shown)}")
    for chat in chats:
        lines.append(f"chat {'right' if chat.right else 'WRONG'}: {chat.name}")
        for turn in chat.turns:
            missed = [f.text for f in turn.missed] + [f"forbidden {f.text}" for f in turn.forbidden]
            lines.append(f"    {turn.ask}" + (f"  (missed: {'; '.join(missed)})" if missed else ""))
            if show or missed:
                lines.extend(f"     | {line}" for line in turn.answer.splitlines()[:6])
    if chats:
        lines.append(f"chats right: {sum(c.right for c in chats)}/{len(chats)}")
    return "\n".join(lines)


def half_of(scores: Sequence[Any]) -> Callable[[Any], str]:
    """Each score's half, as :func:`report` counts it: the example's questions (and their
    rewordings) by ``halves`` of their numbers, balanced; a new question by its file's
    rule (:data:`NEW`). List misses by this, never by ``half()`` of a bare number."""
    originals = halves(s.question.number for s in scores if not s.question.new)

    def of(score: Any) -> str:
        if not score.question.new:
            return originals[str(score.question.number)]
        how = NEW[score.question.new]
        return half(f"new-{score.question.number}") if how == "hash" else how

    return of


def environment(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "MEMORY_"))}
    env["MEMORY_CONFIG"] = str(config)
    return env
