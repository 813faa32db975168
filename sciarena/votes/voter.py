"""Who voted, without knowing who anyone is: the voter id and the consent check.

The one place voter identity is decided; the arena's vote rules (arena.py) call it.

A logged-in voter (Hugging Face OAuth, ``gr.OAuthProfile``) is recorded by username —
they chose to be known. Anyone else gets ``anon-`` + a salted SHA-256 of the Gradio
session hash: stable within one visit so a reader can group a visitor's votes, useless
for finding the person (the session hash is random and the salt is secret). An IP
address is never an input.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sciarena.errors import ConsentMissing

ANON_PREFIX = "anon-"
CONSENT_LABEL = "I agree to the terms in the About tab"


@dataclass(frozen=True)
class Visitor:
    """Who is asking or voting, as the UI knows them: all optional, none stored raw."""

    username: str | None = None  # Hugging Face OAuth username when signed in
    browser_key: str | None = None  # a random token the browser keeps in local storage across visits
    session_hash: str | None = None  # Gradio's per-visit session id (never an IP address)


def voter_id(profile_username: str | None, session_hash: str | None, salt: str) -> str:
    """The HF username when logged in, else ``anon-<16 hex>`` from the session hash; "" when neither is known."""
    username = (profile_username or "").strip()
    if username:
        return username
    if not session_hash:
        return ""
    digest = hashlib.sha256(f"{salt}:{session_hash}".encode()).hexdigest()
    return ANON_PREFIX + digest[:16]


def require_consent(consent: bool | None) -> None:
    """Refuse a vote unless the voter ticked the consent box (a record's ``consent`` must be true)."""
    if consent is not True:
        raise ConsentMissing(f"Please tick “{CONSENT_LABEL}” before voting.")
