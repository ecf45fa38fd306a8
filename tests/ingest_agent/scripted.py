"""The scripted test model for example_kb: extraction answers from data/extractions.yaml.

``ScriptedModel(llm_server)`` answers every chat request of the agent by its task:
``extract`` with the fixture answer for the source named in the prompt (``{"pages": []}``
for a source without one), ``merge`` with the current sections overwritten by the new
ones (what a model applying "the newer source wins" writes), ``repair`` with the page
unchanged (or as ``fix(page)`` makes it). ``overrides[path]`` replaces the answer for one source (a callable gets the
request body). ``tasks`` counts the requests per task.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.fixtures.llm_server import LLMServer

DATA = Path(__file__).parent / "data" / "extractions.yaml"
_SOURCE = re.compile(r"^Source: (.+)$", re.MULTILINE)
_CURRENT = re.compile(r"Current sections:\n(.*)\n\nNew sections from the source:\n(.*)\Z", re.S)


def load_extractions() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    return data


class ScriptedModel:
    def __init__(self, server: LLMServer) -> None:
        self.server = server
        self.answers = load_extractions()
        self.overrides: dict[str, Any] = {}
        self.tasks: Counter[str] = Counter()
        self.sources: list[str] = []
        self.fix: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # for repair
        server.default = self.answer

    def answer(self, body: dict[str, Any]) -> Any:
        messages = body["messages"]
        system = messages[0]["content"]
        user = messages[-1]["content"] if len(messages) == 2 else messages[1]["content"]
        task = system.split("\n", 1)[0].removeprefix("Task: ").strip()
        self.tasks[task] += 1
        if task == "extract":
            match = _SOURCE.search(user)
            path = match.group(1).strip() if match else ""
            self.sources.append(path)
            if path in self.overrides:
                scripted = self.overrides[path]
                return scripted(body) if callable(scripted) else scripted
            return json.dumps(self.answers.get(path, {"pages": []}), ensure_ascii=False)
        if task == "merge":
            match = _CURRENT.search(user)
            assert match is not None, user
            current, new = json.loads(match.group(1)), json.loads(match.group(2))
            return json.dumps({"sections": {**current, **new}}, ensure_ascii=False)
        if task == "repair":
            page = json.loads(user.split("Page:\n", 1)[1])
            return json.dumps(self.fix(page) if self.fix else page, ensure_ascii=False)
        raise AssertionError(f"unexpected task {task!r}")
