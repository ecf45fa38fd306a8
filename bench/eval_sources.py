"""The raw-source part of the search evaluation: long, similar, dated conversation notes.

Each of ``PEOPLE`` gets ``NOTES`` notes (one every week), 400-900 words each (several
200-word source chunks), built from one shared bank of topic sentences whose slots are
filled from the person's own projects, depots and customers, so a person's notes share
most of their vocabulary and keep coming back to the same subjects; every note carries
its own ticket ids, order numbers and money figures. Everything is seeded: the same
seed writes the same notes byte for byte.

A labelled fact goes into the note of its date, and is asked for in one of three ways:

* ``exact``: by a rare token only that note holds (a ticket id, an order number, a
  figure like "$18,400", a rare place or product name). The fact is an ordinary sentence
  of the bank, so other notes hold the same sentence with other tokens: the meaning does
  not tell the notes apart, the token does (e5 is weak here).
* ``paraphrase``: in other words than the note uses (no rare word shared), while two
  *lexical decoys* in other notes of the same person hold the question's words on the
  same subject without answering it (keyword search is weak here).
* ``both``: by a recurring name that several of the person's notes hold (a product or
  project) plus a paraphrase of the point; a *semantic decoy* in another note makes the
  same point about another name. Neither the name nor the meaning alone is enough.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memserver.kb.layout import slugify

NOTES = 27
START = dt.date(2026, 3, 2)
EVERY_DAYS = 7
KINDS = ("Call", "Check-in", "Catch-up", "Sync", "Weekly", "One-on-one")
MIN_WORDS, MAX_WORDS = 400, 900


@dataclass(frozen=True)
class Person:
    name: str
    projects: tuple[str, ...]
    depots: tuple[str, ...]
    customers: tuple[str, ...]


PEOPLE: tuple[Person, ...] = (
    Person("Helga Brandvold", ("Northstar rollout", "depot consolidation"), ("Gdansk", "Poznan"), ("Bluefin", "Skyline")),
    Person("Rustam Aliyev", ("cold-chain telemetry", "reefer refit"), ("Gdansk", "Gdynia"), ("Bluefin", "Nordfrost")),
    Person("Beatriz Quintero", ("Bluefin renewal", "Skyline pilot"), ("Gdansk", "Szczecin"), ("Bluefin", "Skyline")),
    Person("Oskar Lindqvist", ("Baltic lanes", "Northstar rollout"), ("Gdynia", "Szczecin"), ("Bluefin", "Nordfrost")),
    Person("Nadia Kowalczyk", ("month-end close", "billing cleanup"), ("Poznan", "Gdansk"), ("Skyline", "Nordfrost")),
)  # fmt: skip

COLLEAGUES = ("Helga", "Rustam", "Beatriz", "Oskar", "Nadia", "Solveig", "Petra", "Cormac")
ISSUES = (
    "reefer door alarm", "late pallet scans", "portal login errors", "duplicate invoices",
    "temperature log gaps", "dock booking clash", "driver app crash", "missing delivery notes",
)  # fmt: skip

# One bank of sentences per recurring subject. Slots: {first} the person's first name,
# {other} a colleague, {project} {depot} {customer} the person's own, {n} {pct} {money}
# {ticket} {order} {truck} {issue} {day} drawn per sentence.
BANK: Mapping[str, tuple[str, ...]] = {
    "volumes": (
        "We went through the weekly volumes for the {depot} depot, about {n} pallets in and out.",
        "{first} said {customer} volumes at {depot} were {pct} percent above the plan this week.",
        "Inbound at {depot} peaked on {day} and the yard was full by the afternoon.",
        "The {depot} team handled {n} pallets without overtime, which {first} called a good week.",
        "Outbound loads for {customer} left {depot} on schedule except for one on {day}.",
        "{other} will send the volume forecast for {depot} before the next call.",
    ),
    "tickets": (
        "Ticket {ticket} about the {issue} is still open and {other} owns it.",
        "{first} asked {other} to close ticket {ticket} on the {issue} before {day}.",
        "We reopened {ticket} because the {issue} came back at {depot}.",
        "Ticket {ticket} on the {issue} was closed after the fix went out on {day}.",
        "{other} logged {ticket} for the {issue} seen at {depot}.",
    ),
    "orders": (
        "Purchase order {order} for spare parts was approved at {money}.",
        "{first} signed order {order} for the {depot} depot, {money} in total.",
        "Order {order} from {customer} was split into two shipments.",
        "The supplier confirmed order {order} and quoted delivery for {day}.",
        "{other} is chasing order {order}, which is worth {money}.",
    ),
    "money": (
        "The {project} budget stands at {money} spent of the planned amount.",
        "{first} expects the {depot} repairs to cost around {money}.",
        "{customer} paid {money} against the open balance on {day}.",
        "Fuel for the month came to {money}, close to the forecast.",
        "{other} wants a second quote because {money} seems high for the {project}.",
    ),
    "project": (
        "The {project} is on track and the next milestone is due on {day}.",
        "{first} and {other} reviewed the {project} plan and moved one task to next week.",
        "{other} raised a risk on the {project}: the vendor is slow to answer.",
        "The {project} steering meeting was short; nothing needs a decision yet.",
        "{first} wants a one-page status of the {project} for the board pack.",
        "Testing for the {project} starts at {depot} once the data feed is stable.",
    ),
    "fleet": (
        "Truck {truck} is back from the workshop after a brake check.",
        "{first} said {n} trucks are due for their annual inspection at {depot}.",
        "The reefer units on truck {truck} were serviced on {day}.",
        "Tyre replacements for the {depot} fleet are booked for {day}.",
        "{other} reported that truck {truck} had a minor scrape in the yard.",
    ),
    "people": (
        "{other} is on leave next week, so {first} covers the dispatch questions.",
        "Two new warehouse staff start at {depot} on {day}.",
        "{first} thanked the {depot} night shift for covering the sick days.",
        "{other} asked for help with the rota for the holidays.",
        "Training for the new dispatchers is planned for {day}.",
    ),
    "customers": (
        "{customer} asked about the delivery schedule for the next quarter.",
        "{first} had lunch with the {customer} logistics lead; the mood was friendly.",
        "{customer} sent a short complaint about a late delivery on {day}, already answered.",
        "A {customer} site visit to {depot} is pencilled in for {day}.",
        "{other} will prepare the {customer} service report for the monthly review.",
    ),
    "cold": (
        "Temperature logs from the {depot} cold store looked normal this week.",
        "The cold store at {depot} had its defrost cycle adjusted on {day}.",
        "{first} checked the reefer readings for {customer} loads; all within range.",
        "{other} wants the cold store alarms reviewed at the next safety walk.",
    ),
    "admin": (
        "Invoices for last month went out on time.",
        "{first} reminded everyone that expense claims are due on {day}.",
        "The board pack is due on {day} and {other} is collecting the numbers.",
        "{other} will book the room for the quarterly review.",
        "We agreed to keep this call to thirty minutes from now on.",
    ),
}


@dataclass(frozen=True)
class Fact:
    person: str
    date: dt.date
    kind: str  # exact | paraphrase | both
    text: str  # the sentence in the right note
    question: str
    decoys: tuple[str, ...] = ()  # sentences for other notes of the same person
    spread: tuple[str, ...] = ()  # sentences mentioning a shared name, in other notes


def _d(iso: str) -> dt.date:
    return dt.date.fromisoformat(iso)


# ``exact``: a bank sentence with a rare token; the question names the token.
# ``paraphrase``: other words; decoys share the question's words, not its meaning.
# ``both``: a name in several notes (``spread``) + a point made with other words; a decoy
# makes the same point about another name.
FACTS: tuple[Fact, ...] = (
    # ------------------------------------------------------------ Helga Brandvold
    Fact("Helga Brandvold", _d("2026-03-09"), "exact",
         "Ticket OPS-4471 about the reefer door alarm is still open and Rustam owns it.",
         "What did Helga say about OPS-4471?"),
    Fact("Helga Brandvold", _d("2026-04-20"), "exact",
         "Helga expects the Poznan repairs to cost around $18,400.",
         "Helga conversation where the $18,400 repair estimate came up"),
    Fact("Helga Brandvold", _d("2026-06-01"), "exact",
         "Helga signed order PO-88213 for the Gdansk depot, $9,350 in total.",
         "Which note mentions PO-88213?"),
    Fact("Helga Brandvold", _d("2026-07-06"), "exact",
         "A Skyline site visit to the new cross-dock in Zgorzelec is pencilled in for Thursday.",
         "Helga note about the Zgorzelec visit"),
    Fact("Helga Brandvold", _d("2026-05-11"), "paraphrase",
         "Helga is unhappy that the underwriter raised the premium on the reefer fleet policy by a fifth after the spring claims.",
         "Helga annoyed that our truck insurance got more expensive",
         ("Insurance paperwork for the new truck drivers is expensive to process by hand, Helga said.",
          "Helga asked whether the truck wash is covered by the site insurance.")),
    Fact("Helga Brandvold", _d("2026-03-30"), "paraphrase",
         "Helga said the forklifts in the minus twenty-five room go flat within an hour, so shifts keep stopping.",
         "when did Helga worry about lift truck batteries dying in the freezer",
         ("New batteries for the handheld scanners arrived and Helga signed for them.",
          "The freezer doors at Poznan were painted; Helga liked the colour.")),
    Fact("Helga Brandvold", _d("2026-08-10"), "paraphrase",
         "Helga wants the quarterly pack for the directors to show punctuality split by geography rather than by account.",
         "Helga asking for on-time delivery by region in the board report",
         ("The board report template has a new cover page, Helga said.",
          "On-time delivery for Bluefin was discussed; Helga had no concerns.")),
    Fact("Helga Brandvold", _d("2026-06-22"), "both",
         "Helga said the Northstar handhelds freeze when staff wear thick gloves, so pickers take them off in the cold.",
         "Northstar scanners not working with winter gloves",
         ("Helga said the Jungheinrich terminals freeze when staff wear thick gloves in the cold store.",),
         ("The Northstar rollout reached the Poznan depot this week.",
          "Helga asked for Northstar training material in Polish.",
          "Northstar licences were renewed for another year.")),
    Fact("Helga Brandvold", _d("2026-04-06"), "both",
         "Helga noted the Northstar pick lists come out in the wrong aisle order, so pickers walk the building twice.",
         "Northstar routing pickers inefficiently through the warehouse",
         ("Helga noted the paper pick lists at Gdansk come out in the wrong aisle order.",),
         ("Northstar support answered within a day, which Helga appreciated.",)),
    # ------------------------------------------------------------ Rustam Aliyev
    Fact("Rustam Aliyev", _d("2026-03-16"), "exact",
         "Rustam logged OPS-5120 for the temperature log gaps seen at Gdynia.",
         "Rustam OPS-5120"),
    Fact("Rustam Aliyev", _d("2026-05-04"), "exact",
         "The reefer units on truck TR-7734 were serviced on Friday.",
         "When was the TR-7734 reefer unit serviced, according to Rustam?"),
    Fact("Rustam Aliyev", _d("2026-06-15"), "exact",
         "Rustam wants a second quote because $27,950 seems high for the reefer refit.",
         "Rustam second quote $27,950"),
    Fact("Rustam Aliyev", _d("2026-08-03"), "exact",
         "Tyre replacements for the Gdynia fleet are booked at the Kwidzyn workshop.",
         "which call with Rustam mentions Kwidzyn"),
    Fact("Rustam Aliyev", _d("2026-04-13"), "paraphrase",
         "Rustam found that three refrigerated lorries report readings from a faulty probe batch bought in 2024.",
         "Rustam note about broken temperature sensors on reefer trucks",
         ("Rustam said the temperature sensors on the office fridge were replaced.",
          "Reefer trucks were washed before the Bluefin audit; Rustam checked the sensors list.")),
    Fact("Rustam Aliyev", _d("2026-07-13"), "paraphrase",
         "Rustam wants to swap the diesel standby units on six trailers for electric ones before the frost.",
         "plan to replace fuel-burning backup cooling with battery units",
         ("Rustam said the backup generator at the office needs fuel before winter.",
          "Battery chargers for the forklifts were moved to a cooler room, Rustam said.")),
    Fact("Rustam Aliyev", _d("2026-05-25"), "paraphrase",
         "Rustam said two drivers did not pass the new cold-chain course and will sit it again.",
         "drivers who failed the refrigeration certificate",
         ("All drivers passed the forklift certificate on the first try, Rustam said.",
          "The refrigeration certificate for the Gdynia cold store was renewed.")),
    Fact("Rustam Aliyev", _d("2026-08-24"), "paraphrase",
         "Rustam proposed moving the overnight dispatch desk to Ulaanbaatar to cover the European morning.",
         "relocating night dispatch to Mongolia",
         ("Rustam said night dispatch handled a record number of loads.",
          "The night shift in dispatch asked Rustam for a second coffee machine.")),
    Fact("Rustam Aliyev", _d("2026-07-27"), "both",
         "Rustam said the Carrier Vector units lose cooling on long uphill stretches because the compressor is undersized.",
         "Carrier Vector reefers struggle to keep cold on hills",
         ("Rustam said the Thermo King units lose cooling on long uphill stretches.",),
         ("Rustam priced two more Carrier Vector units for the reefer refit.",
          "The Carrier Vector manuals are now on the shared drive, Rustam said.",
          "Carrier Vector warranty claims go through Petra from now on.")),
    # ------------------------------------------------------------ Beatriz Quintero
    Fact("Beatriz Quintero", _d("2026-03-23"), "exact",
         "Order PO-71305 from Bluefin was split into two shipments.",
         "Beatriz PO-71305 split shipment"),
    Fact("Beatriz Quintero", _d("2026-05-18"), "exact",
         "Bluefin paid $42,600 against the open balance on Monday.",
         "which note says Bluefin paid $42,600"),
    Fact("Beatriz Quintero", _d("2026-07-20"), "exact",
         "Beatriz reopened SUP-2093 because the portal login errors came back at Szczecin.",
         "what happened with SUP-2093"),
    Fact("Beatriz Quintero", _d("2026-08-17"), "exact",
         "A Bluefin site visit to the Świnoujście ferry terminal is pencilled in for Wednesday.",
         "Beatriz Świnoujście visit"),
    Fact("Beatriz Quintero", _d("2026-04-27"), "paraphrase",
         "Beatriz says Bluefin will only extend the contract if we guarantee collection within two hours at the Gdansk quay.",
         "condition Bluefin set about fast pickup at the harbour for renewing",
         ("Beatriz said the Bluefin renewal pack is with their legal team for fast review.",
          "Pickup times at the harbour gate were discussed with the dispatchers, Beatriz said.")),
    Fact("Beatriz Quintero", _d("2026-06-08"), "paraphrase",
         "Beatriz thinks Skyline will only sign once their finance chief sees one flat fee per month.",
         "Skyline wants a fixed monthly price before signing",
         ("Skyline asked for the monthly price list to be signed by Beatriz.",
          "Beatriz updated the fixed price sheet for signing customers.")),
    Fact("Beatriz Quintero", _d("2026-06-29"), "paraphrase",
         "Beatriz heard from Oskar that Bluefin is also negotiating with ColdLink about the Baltic lanes.",
         "Bluefin in talks with a rival carrier",
         ("A rival carrier's truck blocked the Bluefin dock for an hour, Beatriz said.",
          "Beatriz says talks with Bluefin about the Christmas schedule went well.")),
    Fact("Beatriz Quintero", _d("2026-08-31"), "paraphrase",
         "Beatriz asked for the customer portal in Polish for the staff at Bluefin's warehouse.",
         "translating the portal into Polish",
         ("Beatriz said translating the rate card took the team a week.",
          "The portal now shows Polish holidays in the calendar, Beatriz noted.")),
    Fact("Beatriz Quintero", _d("2026-04-06"), "both",
         "Beatriz said the Skyline pilot stalls because their IT team cannot give our API a fixed address through the firewall.",
         "Skyline pilot blocked by their network security",
         ("Beatriz said the Nordfrost integration stalls because their IT team will not open the firewall.",),
         ("The Skyline pilot dashboard was shown to their operations team.",
          "Beatriz wants weekly Skyline pilot numbers from now on.")),
    # ------------------------------------------------------------ Oskar Lindqvist
    Fact("Oskar Lindqvist", _d("2026-03-02"), "exact",
         "Oskar asked Helga to close ticket OPS-3318 on the dock booking clash before Tuesday.",
         "Oskar OPS-3318 dock booking"),
    Fact("Oskar Lindqvist", _d("2026-05-04"), "exact",
         "Nordfrost paid $7,215 against the open balance on Thursday.",
         "Oskar $7,215 payment"),
    Fact("Oskar Lindqvist", _d("2026-06-22"), "exact",
         "The supplier confirmed order PO-90442 and quoted delivery for Monday.",
         "delivery date for PO-90442"),
    Fact("Oskar Lindqvist", _d("2026-08-10"), "exact",
         "Outbound loads for Bluefin left the Kołobrzeg satellite yard on schedule except for one on Friday.",
         "Oskar Kołobrzeg outbound loads"),
    Fact("Oskar Lindqvist", _d("2026-04-20"), "paraphrase",
         "Oskar reported that a driver left a trailer door open overnight in Gdynia and the load warmed to plus four.",
         "reefer left unsealed during the night so the goods got warm",
         ("Oskar said the goods for the night train were sealed and warm clothing was handed out.",
          "A driver left early during the night shift, Oskar noted.")),
    Fact("Oskar Lindqvist", _d("2026-03-23"), "paraphrase",
         "Oskar complained that bills arrive without the pallet count, so his team cannot reconcile them.",
         "Oskar unable to match invoices because pallet numbers were missing",
         ("Oskar said the invoices were matched to the purchase orders without problems.",
          "Pallet numbers on the labels at Szczecin were missing ink, Oskar said.")),
    Fact("Oskar Lindqvist", _d("2026-07-13"), "paraphrase",
         "Oskar mentioned Bluefin is opening a second freezer warehouse in Szczecin next spring.",
         "Bluefin building another cold store",
         ("Oskar said another cold store supplier called about Bluefin racks.",
          "Bluefin building access cards for Oskar's team were reissued.")),
    Fact("Oskar Lindqvist", _d("2026-05-25"), "both",
         "Oskar said the Baltic lanes lose a day whenever the Ystad ferry is cancelled for wind.",
         "Baltic lanes delayed by storms at sea",
         ("Oskar said the Rostock lanes lose a day whenever the ferry is cancelled for wind.",),
         ("Oskar reviewed the Baltic lanes timetable with Bluefin.",
          "The Baltic lanes contract comes up for renewal in the autumn.",
          "Oskar wants a weekly Baltic lanes report.")),
    # ------------------------------------------------------------ Nadia Kowalczyk
    Fact("Nadia Kowalczyk", _d("2026-03-09"), "exact",
         "Nadia reminded everyone that expense claims over $2,480 need Cormac's approval.",
         "Nadia $2,480 expense approval"),
    Fact("Nadia Kowalczyk", _d("2026-04-27"), "exact",
         "Ticket FIN-6642 on the duplicate invoices was closed after the fix went out on Monday.",
         "Nadia FIN-6642"),
    Fact("Nadia Kowalczyk", _d("2026-06-15"), "exact",
         "Cormac is chasing order PO-66017, which is worth $5,720.",
         "who is chasing PO-66017"),
    Fact("Nadia Kowalczyk", _d("2026-08-03"), "exact",
         "Nadia moved the Skyline billing to the Wrocław shared service centre.",
         "Nadia note about Wrocław billing"),
    Fact("Nadia Kowalczyk", _d("2026-03-30"), "paraphrase",
         "Nadia found that Skyline has not settled three bills that are now past sixty days.",
         "overdue Skyline invoices nobody has paid",
         ("Nadia said the Skyline invoices template nobody liked was replaced.",
          "Overdue library books were found in the Poznan office, Nadia joked.")),
    Fact("Nadia Kowalczyk", _d("2026-05-18"), "paraphrase",
         "Nadia wants to close the books on the third working day instead of the fifth.",
         "finishing month-end accounts faster",
         ("Nadia said the month-end accounts file was moved to the new drive.",
          "Faster laptops for finance arrived, Nadia said.")),
    Fact("Nadia Kowalczyk", _d("2026-07-06"), "paraphrase",
         "Nadia warned that the zloty has weakened so our euro contracts now bring in less than planned.",
         "currency exchange hurting revenue",
         ("Nadia said the currency column in the revenue report was renamed.",
          "Revenue from Nordfrost matched the exchange of emails last week, Nadia said.")),
    Fact("Nadia Kowalczyk", _d("2026-08-24"), "both",
         "Nadia said the billing cleanup found Nordfrost was charged twice for the same cold storage days in spring.",
         "billing cleanup double charge to a customer",
         ("Nadia said Skyline was charged twice for the same pallets in spring, and a credit note went out.",),
         ("The billing cleanup has finished the first two customers.",
          "Nadia wants the billing cleanup done before the audit.",
          "Billing cleanup hours are tracked separately, Nadia said.")),
)  # fmt: skip

_SLOT = re.compile(r"\{(\w+)\}")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def _reserved() -> set[str]:
    """Tokens of the labelled facts: never drawn at random for other notes."""
    out: set[str] = set()
    for fact in FACTS:
        out.update(re.findall(r"[A-Z]{2,4}-\d+|\$[\d,]+", fact.text))
    return out


class _Filler:
    def __init__(self, rng: random.Random, person: Person, reserved: set[str]) -> None:
        self.rng = rng
        self.person = person
        self.reserved = reserved
        self.first = person.name.split()[0]

    def _draw(self, make: Callable[[], str]) -> str:
        while (value := make()) in self.reserved:
            pass
        return value

    def value(self, slot: str) -> str:
        rng, p = self.rng, self.person
        match slot:
            case "first":
                return self.first
            case "other":
                return rng.choice([c for c in COLLEAGUES if c != self.first])
            case "project":
                return rng.choice(p.projects)
            case "depot":
                return rng.choice(p.depots)
            case "customer":
                return rng.choice(p.customers)
            case "n":
                return str(rng.randrange(40, 900))
            case "pct":
                return str(rng.randrange(2, 30))
            case "money":
                return self._draw(
                    lambda: f"${rng.randrange(1, 60)},{rng.randrange(0, 1000, 5):03d}"
                )
            case "ticket":
                prefixes = ("OPS", "OPS", "SUP", "FIN")
                return self._draw(lambda: f"{rng.choice(prefixes)}-{rng.randrange(1000, 9999)}")
            case "order":
                return self._draw(lambda: f"PO-{rng.randrange(10000, 99999)}")
            case "truck":
                return self._draw(lambda: f"TR-{rng.randrange(1000, 9999)}")
            case "issue":
                return rng.choice(ISSUES)
            case "day":
                return rng.choice(_WEEKDAYS)
        raise KeyError(slot)

    def sentence(self, template: str) -> str:
        text = _SLOT.sub(lambda m: self.value(m.group(1)), template)
        return text[0].upper() + text[1:]

    def paragraph(self, topic: str) -> list[str]:
        bank = BANK[topic]
        picks = self.rng.sample(bank, min(len(bank), self.rng.randrange(3, 6)))
        return [self.sentence(t) for t in picks]


def _words(paragraphs: Sequence[Sequence[str]]) -> int:
    return sum(len(s.split()) for p in paragraphs for s in p)


def generate(seed: int = 11) -> dict[str, tuple[str, Fact | None]]:
    """source path -> (markdown, the fact asked about it or None), for every note."""
    rng = random.Random(seed)
    reserved = _reserved()
    out: dict[str, tuple[str, Fact | None]] = {}
    for person in PEOPLE:
        filler = _Filler(rng, person, reserved)
        facts = {f.date: f for f in FACTS if f.person == person.name}
        days = [START + dt.timedelta(days=EVERY_DAYS * i) for i in range(NOTES)]
        missing = sorted(set(facts) - set(days))
        if missing:
            raise ValueError(f"{person.name}: fact dates {missing} are not note dates")
        plain = [d for d in days if d not in facts]
        extra: dict[dt.date, list[str]] = {}
        for fact in facts.values():
            others = [d for d in days if d != fact.date]
            for sentence, day in zip(fact.decoys, rng.sample(plain, len(fact.decoys)), strict=True):
                extra.setdefault(day, []).append(sentence)
            for sentence, day in zip(
                fact.spread, rng.sample(others, len(fact.spread)), strict=True
            ):
                extra.setdefault(day, []).append(sentence)
        for i, day in enumerate(days):
            kind = KINDS[i % len(KINDS)]
            target = rng.randrange(MIN_WORDS, MAX_WORDS)
            topics = list(BANK)
            rng.shuffle(topics)
            paragraphs: list[list[str]] = []
            while _words(paragraphs) < target:
                paragraphs.append(filler.paragraph(topics[len(paragraphs) % len(topics)]))
            asked = facts.get(day)
            for sentence in [*extra.get(day, []), *([asked.text] if asked else [])]:
                para = rng.choice(paragraphs)
                para.insert(rng.randrange(len(para) + 1), sentence)
            body = "\n\n".join(" ".join(p) for p in paragraphs)
            rel = f"conversations/{slugify(person.name)}/{day.isoformat()}-{slugify(kind)}.md"
            text = f"# {kind} with {person.name}\n\n{day.isoformat()}.\n\n{body}\n"
            out[rel] = (text, asked)
    return out
