"""Who voted, without knowing who anyone is: the voter id and the consent check.

The one place voter identity is decided; the arena's vote rules and abuse limits (arena/rules.py, arena/limits/)
call it. Every id is a salted SHA-256, never the raw value, so a published record names nobody:

- signed in (Hugging Face OAuth)  → ``hf-`` + hash of the username: one pseudonym per account,
  on every browser;
- else a browser key (a random token the page keeps in local storage) → ``anon-`` + hash of the
  key: the same pseudonym across reloads and visits on that browser;
- else the Gradio session hash → ``anon-`` + hash of it, as before the browser key existed:
  stable within one visit only.

The client address is not an identity (many people share one, one person can have several) but it
is what a client rotating sessions or keys cannot rotate as cheaply: :func:`address_key` hashes it
(``addr-``, its own tag) for the abuse limits, which count it alongside the voter id. It is never
stored, logged or part of a vote record. :func:`client_address` picks it from the proxy chain:
with ``hops`` trusted proxies in front (a Space: 1), the address the outermost one saw, i.e. the
``hops``-th entry of X-Forwarded-For from the right — not the first, which the client can write.

Each input is hashed with its own tag, so a username and a key with the same text never share an
id. The salt (``SCIARENA_ID_SALT``) must be secret where ids are published: HF usernames are
public, and an unsalted hash of one is undone by hashing the list of usernames
(:func:`check_salt`). An IP address is never an input to a voter id.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from sciarena.core.errors import ConsentMissing

ANON_PREFIX = "anon-"
ADDRESS_PREFIX = "addr-"
SIGNED_IN_PREFIX = "hf-"
CONSENT_LABEL = "I agree to the terms of use (see “Read the terms” beside this box)"
_DIGEST_HEX = 16  # 64 bits: no collisions among any plausible number of voters
# A browser key is what the page generated (crypto.randomUUID or similar); anything else is ignored
# rather than hashed, so a client cannot push arbitrary text through this path.
_BROWSER_KEY = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


@dataclass(frozen=True)
class Visitor:
    """Who is asking or voting, as the UI knows them: all optional, none stored raw."""

    username: str | None = None  # Hugging Face OAuth username when signed in
    browser_key: str | None = None  # a random token the browser keeps in local storage across visits
    session_hash: str | None = None  # Gradio's per-visit session id (never an IP address)
    address: str | None = None  # the client address (client_address): only hashed, for the limits; never stored


def _digest(salt: str, tag: str, value: str) -> str:
    return hashlib.sha256(f"{salt}:{tag}{value}".encode()).hexdigest()[:_DIGEST_HEX]


def valid_browser_key(key: str | None) -> bool:
    return bool(key) and bool(_BROWSER_KEY.match(key or ""))


def voter_id(visitor: Visitor | None, salt: str) -> str:
    """The visitor's pseudonym (rules in the module docstring); "" when nothing identifies them."""
    if visitor is None:
        return ""
    username = (visitor.username or "").strip()
    if username:
        return SIGNED_IN_PREFIX + _digest(salt, "hf:", username)
    key = (visitor.browser_key or "").strip()
    if valid_browser_key(key):
        return ANON_PREFIX + _digest(salt, "key:", key)
    if visitor.session_hash:
        # untagged: the ids of session-only votes are unchanged from earlier versions
        return ANON_PREFIX + _digest(salt, "", visitor.session_hash)
    return ""


def client_address(forwarded_for: str | None, peer: str | None, hops: int) -> str | None:
    """The client's address behind ``hops`` trusted proxies (module docstring); None when unknown."""
    chain = [part.strip() for part in (forwarded_for or "").split(",") if part.strip()]
    if peer:
        chain.append(peer.strip())
    if not chain:
        return None
    return chain[max(0, len(chain) - 1 - max(0, hops))]


def address_key(visitor: Visitor | None, salt: str) -> str | None:
    """The salted hash of the visitor's address, counted by the abuse limits; None when unknown."""
    address = ((visitor.address if visitor else None) or "").strip()
    return ADDRESS_PREFIX + _digest(salt, "ip:", address) if address else None


def limit_keys(visitor: Visitor | None, salt: str) -> tuple[str, ...]:
    """Every key a visitor's battles and votes count against: the voter id and the address."""
    keys = (voter_id(visitor, salt), address_key(visitor, salt))
    return tuple(k for k in keys if k)


def check_salt(salt: str, public: bool) -> None:
    """Refuse to run publicly (a Space: votes are published) without a secret salt.

    Refusing, not warning: a warning in a Space's log is easily missed, and the harm — signed-in
    voters named in a public dataset — cannot be undone once the votes are pushed."""
    if public and not salt.strip():
        raise ValueError("SCIARENA_ID_SALT is not set: on a public Space voter ids could be traced back to "
                         "usernames. Add a long random secret SCIARENA_ID_SALT in the Space settings (keep it "
                         "fixed: changing it gives every voter a new pseudonym).")


def require_consent(consent: bool | None) -> None:
    """Refuse a vote unless the voter ticked the consent box (a record's ``consent`` must be true)."""
    if consent is not True:
        raise ConsentMissing(f"Please tick “{CONSENT_LABEL}” before voting.")
