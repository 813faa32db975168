"""The voter id (voter.py): a salted pseudonym for every kind of visitor, never the raw value."""

from __future__ import annotations

import pytest

from sciarena.votes.voter import Visitor, check_salt, voter_id

KEY = "3f9c2b7e-41d0-4c55-9a8e-0d6f1e2a7b11"


def test_a_signed_in_voter_is_one_salted_pseudonym_on_every_browser():
    ada = voter_id(Visitor(username="ada", browser_key=KEY, session_hash="s1"), "salt")
    assert ada.startswith("hf-") and len(ada) == 19 and "ada" not in ada
    assert voter_id(Visitor(username=" ada ", session_hash="s2"), "salt") == ada
    assert voter_id(Visitor(username="ada"), "other-salt") != ada
    assert voter_id(Visitor(username="bob"), "salt") != ada


def test_an_anonymous_voter_keeps_the_browser_key_pseudonym_across_visits():
    first = voter_id(Visitor(browser_key=KEY, session_hash="visit-1"), "salt")
    again = voter_id(Visitor(browser_key=KEY, session_hash="visit-2"), "salt")
    assert first == again and first.startswith("anon-") and KEY not in first
    assert voter_id(Visitor(browser_key=KEY), "other-salt") != first
    # a username and a key with the same text are different people
    assert voter_id(Visitor(username=KEY), "salt") != first


def test_without_a_key_the_session_hash_gives_the_id_of_earlier_versions():
    anon = voter_id(Visitor(session_hash="sess-1"), "salt")
    assert anon == "anon-" + __import__("hashlib").sha256(b"salt:sess-1").hexdigest()[:16]
    assert voter_id(Visitor(session_hash="sess-2"), "salt") != anon


@pytest.mark.parametrize("key", ["", "short", "x" * 129, "has space in it.....", "<script>alert(1)</script>"])
def test_a_malformed_browser_key_is_ignored_not_hashed(key):
    assert voter_id(Visitor(browser_key=key, session_hash="s"), "salt") == voter_id(Visitor(session_hash="s"),
                                                                                     "salt")


def test_nobody_known_is_the_empty_id():
    assert voter_id(None, "salt") == voter_id(Visitor(), "salt") == ""


def test_a_public_space_needs_a_secret_salt():
    check_salt("", public=False)
    check_salt("long-random-secret", public=True)
    for salt in ("", "   "):
        with pytest.raises(ValueError, match="SCIARENA_ID_SALT"):
            check_salt(salt, public=True)
