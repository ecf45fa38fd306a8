"""Raw sources are cut into sentences for the index (memserver.kb.chunks.source_units), and
a conversation's sentences get their contexts (source_contexts)."""

from __future__ import annotations

import pytest

from memserver.kb.chunks import (
    is_conversation,
    source_context,
    source_contexts,
    source_units,
    turn_opening,
)

NOTE = """# Call with Helga Brandvold

2026-03-02.

We went through the weekly volumes for the Gdansk depot, about 400 pallets in and out.
Helga said Bluefin volumes were 12 percent above the plan! Did Rustam close OPS-4471 on
the reefer door alarm? Yes.

- Truck TR-7734 is back from the workshop after a brake check
- Two new warehouse staff start at Poznan on Monday
"""


def test_a_note_is_cut_at_sentence_ends_and_before_list_items() -> None:
    assert source_units(NOTE) == [
        "# Call with Helga Brandvold 2026-03-02.",
        "We went through the weekly volumes for the Gdansk depot, about 400 pallets in and out.",
        "Helga said Bluefin volumes were 12 percent above the plan!",
        "Did Rustam close OPS-4471 on the reefer door alarm?",
        "Yes. - Truck TR-7734 is back from the workshop after a brake check",  # "Yes." is short
        "- Two new warehouse staff start at Poznan on Monday",
    ]


def test_every_word_is_kept_in_order() -> None:
    units = source_units(NOTE)
    assert " ".join(units).split() == NOTE.split()


def test_short_pieces_join_the_next_and_a_short_tail_joins_the_last() -> None:
    assert source_units("Hi. Ok. The fleet report is due on Friday for the board. Thanks.") == [
        "Hi. Ok. The fleet report is due on Friday for the board. Thanks."
    ]
    assert source_units("Thanks.") == ["Thanks."]
    assert source_units("   \n\n ") == []


def test_a_long_run_without_a_sentence_end_is_cut_into_overlapping_windows() -> None:
    words = [f"w{i}" for i in range(150)]
    units = source_units(" ".join(words), max_words=60, overlap=10)
    assert [len(u.split()) for u in units] == [60, 60, 50]
    assert units[1].split()[0] == "w50"  # 10 words shared with the window before
    assert units[-1].split()[-1] == "w149"


def test_full_width_sentence_ends_split_too() -> None:
    text = "会议讨论了仓库 项目 的 进度 和 预算。下周 我们 再 讨论 运费 和 合同 细节。"
    assert len(source_units(text, min_words=3)) == 2


def test_bullets_of_other_shapes_start_a_unit_too() -> None:
    text = "What changes:\n• New contracts from October are usage-based.\n• Existing customers switch at renewal time.\n"
    assert source_units(text) == [
        "What changes: • New contracts from October are usage-based.",
        "• Existing customers switch at renewal time.",
    ]


def test_a_context_is_the_run_of_sentences_shared_by_each_of_them() -> None:
    units = ["One two three.", "Four five six.", "Seven eight nine.", "Ten eleven twelve."]
    run = "One two three. Four five six. Seven eight nine."
    assert [source_context(units, i) for i in range(3)] == [run, run, run]  # one vector
    assert source_context(units, 3) == "Ten eleven twelve."  # the last run, shorter
    assert source_context(units, 1, width=0) == "Four five six."
    assert source_context(["Alone here."], 0) == "Alone here."
    assert len({source_context(units, i, width=2) for i in range(4)}) == 1


CHAT = (
    "---\ndate: 2023-05-08\n---\n"
    "Caroline: I went to a support group yesterday and it was so powerful.\n"
    "Melanie: Wow, that's cool! What happened that was so awesome?\n"
    "Caroline: The stories were so inspiring and everyone was kind to me.\n"
)
SLACK = (
    "# #sales — 2026-10-20\n\n**Priya Shah** 16:02\nHanding over the Initech bits to Alex.\n\n"
    "**Alex Kim** 16:20\nThanks Priya. Anything open on support tickets?\n\n"
    "**Priya Shah** 16:24\nTwo low-priority ones, nothing that blocks the renewal.\n"
)
MEETING = (
    "---\ntitle: Globex intro call\ndate: 2026-06-18\n---\n# Globex intro call\n\n"
    "Attendees: Alice Chen, Bob Martinez\nDecision: send a quote after the demo.\n"
    "Next steps: Alice books the demo for July. We agreed: no discount before the pilot.\n"
)


@pytest.mark.parametrize(
    ("text", "conversation"),
    [
        (CHAT, True),
        (SLACK, True),
        ("Сараа: Өчигдөр уулзсан.\nБат: Юу ярьсан бэ?\nСараа: Гэрээний тухай ярьсан.\n", True),
        (MEETING, False),  # labelled lines, each label once
        # Chat exports and transcripts in the shapes their tools write.
        (
            "08/05/2023, 13:56 - Caroline: Hi!\n08/05/2023, 13:57 - Melanie: Hey, how are you?\n"
            "08/05/2023, 13:58 - Caroline: Good, I went to a support group.\n",
            True,
        ),  # WhatsApp
        (
            "[08/05/2023, 13:56:02] Caroline: Hi!\n[08/05/2023, 13:57:40] Melanie: Hey.\n"
            "[08/05/2023, 13:58:11] Caroline: I went to a support group.\n",
            True,
        ),
        ("[13:56] Caroline: Hi!\n[13:57] Melanie: Hey.\n[13:58] Caroline: Guess what.\n", True),
        (
            "2023-05-08 13:56 Caroline: Hi!\n2023-05-08 13:57 Melanie: Hey.\n"
            "2023-05-08 13:58 Caroline: Guess what.\n",
            True,
        ),
        (
            "Caroline (1:56 PM): Hi!\nMelanie (1:57 PM): Hey.\nCaroline (1:58 PM): Guess what.\n",
            True,
        ),  # a transcript with times
        ("**Caroline:** Hi!\n\n**Melanie:** Hey.\n\n**Caroline**: Guess what.\n", True),
        ("> Caroline: Hi!\n> Melanie: Hey.\n> Caroline: Guess what.\n", True),  # quoted
        # A meeting's action items name an owner per line: no conversation.
        (
            "## Action items\n- Priya Shah: ticket for the export bug.\n"
            "- Alex Kim: send the price list.\n- Priya Shah: schedule the Q3 check-in.\n",
            False,
        ),
        ("Caroline: Hi there, how are you?\nMelanie: Fine, thanks for asking me.\n", False),
        ("The reefer alarm went off. The cold store at Poznan was checked.\n", False),
    ],
)
def test_a_conversation_is_turns_by_two_speakers_one_speaking_twice(
    text: str, conversation: bool
) -> None:
    assert is_conversation(text) is conversation


def test_only_a_conversation_s_sentences_get_contexts() -> None:
    units = source_units(CHAT)
    assert source_contexts(CHAT, units) == [source_context(units, i) for i in range(len(units))]
    seven = "\n".join(
        f"{'Caroline' if i % 2 else 'Melanie'}: turn {i} of our long talk." for i in range(7)
    )
    contexts = source_contexts(seven, source_units(seven))
    assert len(contexts) == 7 and len(set(contexts)) == 3  # runs of 3, 3 and 1: 3 vectors
    assert source_contexts(MEETING, source_units(MEETING)) == [None] * len(source_units(MEETING))


def test_a_label_opening_a_line_is_no_speaker() -> None:
    assert turn_opening("Caroline: I went to the support group.") == (
        "Caroline",
        "I went to the support group.",
    )
    for line in (
        "Decision: Maya Patel noted the importance of lessons learned.",
        "Хөтөлсөн: Алекс Ким Улаанбаатарт ирж биечлэн оролцов.",
        "Attendees: Maria Lopez, Alex Kim",
    ):
        assert turn_opening(line) is None, line
