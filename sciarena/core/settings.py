"""Settings: the only place that reads the environment.

``Settings.from_env()`` is called once by app.py / the CLI; everything else
receives the resulting frozen object (or the part of it it needs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, TypeVar

PACKAGE_DIR = Path(__file__).resolve().parent.parent
DEMO_CORPUS_DIR = PACKAGE_DIR / "data" / "corpus"
DEFAULT_CATALOGUE = PACKAGE_DIR / "data" / "models.json"

# Environment variables that carry secrets. Kept in Settings.secrets so providers
# can look a key up by the name their catalogue entry gives, without reading os.environ.
_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_KEY")
_N = TypeVar("_N", int, float)
# Variables of earlier versions, when each helper had its own endpoint settings. A helper now
# names a catalogue model, whose endpoint and key the catalogue holds; a leftover is an error
# rather than silently ignored.
_REPLACED = {
    "SCIARENA_REWRITE_BASE_URL": "SCIARENA_REWRITE_MODEL",
    "SCIARENA_REWRITE_KEY_ENV": "SCIARENA_REWRITE_MODEL",
    "SCIARENA_POSTPROCESS_BASE_URL": "SCIARENA_POSTPROCESS_MODEL",
    "SCIARENA_POSTPROCESS_KEY_ENV": "SCIARENA_POSTPROCESS_MODEL",
    "SCIARENA_MODERATION_BASE_URL": "the catalogue's 'omni-moderation-latest' entry",
}


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    retriever: str = "local"  # "local" | "local:DIR" | "semantic_scholar"
    retriever_fallback: str = ""  # "local" | "local:DIR": answers when Semantic Scholar fails
    s2_base_url: str = "https://api.semanticscholar.org/graph/v1/"
    s2_timeout_s: float = 10.0
    s2_max_rps: float | None = None  # requests per second to Semantic Scholar; None = 1 with a key, else no limit
    rewrite_model: str = ""  # catalogue model that rewrites questions into search queries; "" = none
    reranker: str = "auto"  # "auto" | "bm25" | "dense" (dense needs the optional embedding extra)
    # "auto" (the catalogue's moderation model when its key is set, else local) | "openai" | "local" | "off"
    moderation: str = "auto"
    postprocess_model: str = ""  # catalogue model that moves citations to sentence ends; "" = rules only
    label_model: str = ""  # catalogue model that labels voted questions (type, discipline); "" = offline rules
    top_k: int = 30
    passages_per_paper: int | None = None  # at most this many of one paper's passages in the top_k; None = no cap
    min_citations: int = 0  # Semantic Scholar only: papers cited fewer times are not searched; 0 = no floor
    max_question_chars: int = 4000
    max_followups: int = 3  # follow-up questions a visitor may ask in one battle before voting; 0 = none
    generation_timeout_s: float = 120.0
    battle_ttl_s: float = 6 * 3600.0  # a battle older than this can no longer be voted on
    # Visitor sessions (each with its battle, voted or not) held in memory at once; the least recently used
    # is forgotten first, and its battle is then "expired". About 0.3 MB each (benchmarks/bench_unvoted_memory.py).
    max_sessions: int = 2000
    models_file: Path | None = None  # user additions/overrides to the model catalogue
    index_cache_dir: Path | None = None  # where the demo index is cached; None = build in memory
    votes_repo: str | None = None
    push_every_minutes: float = 5.0
    id_salt: str = ""  # secret salt of every hashed voter id (SCIARENA_ID_SALT); required when public
    public: bool = False  # running on a Hugging Face Space (it sets SPACE_ID): votes are published
    # Abuse limits (arena/limits/), per hashed voter id; 0 = no limit. Battle limits count paid battles only
    # (a contestant that is not offline) unless limit_offline; votes count whatever the battle.
    battles_per_hour: int = 30
    battles_per_day: int = 150
    votes_per_day: int = 150
    max_paid_battles: int = 8  # paid battles generating at once, over all visitors
    max_paid_per_visitor: int = 2  # of those, at most this many for one voter key (a fair share)
    limit_offline: bool = False
    # The client address also counts against the limits (hashed, never stored): how many proxies in front of
    # the app append to X-Forwarded-For (a Space: 1); 0 = the connection's own peer address.
    proxy_hops: int = 0
    count_anonymous: bool = True  # SCIARENA_COUNT_ANONYMOUS=0: only signed-in votes count on the default board
    redis_url: str = field(default="", repr=False)  # limit counts in this Redis (shared by replicas); "" = in process
    seed: int | None = None  # fixed seed for pair sampling (tests, demos)
    # Pair sampler (arena/sampling.py): "inverse_sqrt" (each side 1/sqrt(1+battles), the original),
    # "adaptive" (by the expected drop in rank uncertainty, above a uniform floor) or "uniform".
    sampler: str = "inverse_sqrt"
    # adaptive/order: share of draws spread uniformly over every pair; None: the sampler's own default
    sampler_floor: float | None = None
    outage: frozenset[str] = frozenset()  # model names kept out of battles for now (SCIARENA_OUTAGE, comma-separated)
    oauth_enabled: bool = False  # a Space with hf_oauth: true (it sets OAUTH_CLIENT_ID): offer "Sign in"
    # The Review tab (science/review.py): expert annotators, named by HF username, give stored battles a second,
    # blind vote and an audit label. No reviewers = no tab.
    reviewers: frozenset[str] = frozenset()  # SCIARENA_REVIEWERS, comma-separated HF usernames
    review_repeat_days: float = 14.0  # a reviewer sees a battle once more after this long (0 = never again)
    secrets: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        env = dict(os.environ if environ is None else environ)
        for old, new in _REPLACED.items():
            if env.get(old):
                raise ValueError(f"{old} is no longer read: put the endpoint in a SCIARENA_MODELS catalogue file "
                                 f"and name the model with {new} (see the README).")
        data_dir = Path(env.get("SCIARENA_DATA_DIR", "data"))
        models = env.get("SCIARENA_MODELS")
        seed = env.get("SCIARENA_SEED")
        cache = env.get("SCIARENA_INDEX_CACHE")
        return cls(
            data_dir=data_dir,
            retriever=env.get("SCIARENA_RETRIEVER", "local").strip() or "local",
            retriever_fallback=env.get("SCIARENA_RETRIEVER_FALLBACK", "").strip(),
            s2_base_url=env.get("S2_BASE_URL") or cls.s2_base_url,
            s2_timeout_s=_float(env, "S2_TIMEOUT", 10.0),
            s2_max_rps=_float(env, "S2_MAX_RPS", 0.0) if env.get("S2_MAX_RPS") else None,
            rewrite_model=env.get("SCIARENA_REWRITE_MODEL", "").strip(),
            reranker=env.get("SCIARENA_RERANKER", "auto").strip() or "auto",
            moderation=env.get("SCIARENA_MODERATION", "auto").strip() or "auto",
            postprocess_model=env.get("SCIARENA_POSTPROCESS_MODEL", "").strip(),
            label_model=env.get("SCIARENA_LABEL_MODEL", "").strip(),
            top_k=_int(env, "SCIARENA_TOP_K", 30),
            passages_per_paper=_limit(env, "SCIARENA_PASSAGES_PER_PAPER", 0) or None,
            min_citations=_limit(env, "SCIARENA_MIN_CITATIONS", 0),
            max_question_chars=_int(env, "SCIARENA_MAX_QUESTION_CHARS", 4000),
            max_followups=_count(env, "SCIARENA_MAX_FOLLOWUPS", 3),
            generation_timeout_s=_float(env, "SCIARENA_GENERATION_TIMEOUT", 120.0),
            max_sessions=_positive(env, "SCIARENA_MAX_SESSIONS", cls.max_sessions),
            models_file=Path(models) if models else None,
            index_cache_dir=Path(cache) if cache else None,
            votes_repo=env.get("SCIARENA_VOTES_REPO") or None,
            push_every_minutes=_float(env, "SCIARENA_PUSH_EVERY_MINUTES", 5.0),
            id_salt=env.get("SCIARENA_ID_SALT", ""),
            public=bool(env.get("SPACE_ID")),
            battles_per_hour=_limit(env, "SCIARENA_BATTLES_PER_HOUR", cls.battles_per_hour),
            battles_per_day=_limit(env, "SCIARENA_BATTLES_PER_DAY", cls.battles_per_day),
            votes_per_day=_limit(env, "SCIARENA_VOTES_PER_DAY", cls.votes_per_day),
            max_paid_battles=_limit(env, "SCIARENA_MAX_PAID_BATTLES", cls.max_paid_battles),
            max_paid_per_visitor=_limit(env, "SCIARENA_MAX_PAID_PER_VISITOR", cls.max_paid_per_visitor),
            limit_offline=_flag(env, "SCIARENA_LIMIT_OFFLINE", False),
            proxy_hops=_limit(env, "SCIARENA_PROXY_HOPS", 1 if env.get("SPACE_ID") else 0),
            count_anonymous=_flag(env, "SCIARENA_COUNT_ANONYMOUS", True),
            redis_url=env.get("SCIARENA_REDIS_URL", "").strip(),
            seed=int(seed) if seed else None,
            sampler=_choice(env, "SCIARENA_SAMPLER", cls.sampler, ("adaptive", "inverse_sqrt", "order", "uniform")),
            sampler_floor=_share(env, "SCIARENA_SAMPLER_FLOOR", 1.0) if env.get("SCIARENA_SAMPLER_FLOOR", "").strip()
            else None,
            outage=frozenset(n.strip() for n in env.get("SCIARENA_OUTAGE", "").split(",") if n.strip()),
            oauth_enabled=bool(env.get("OAUTH_CLIENT_ID")),
            reviewers=frozenset(n.strip() for n in env.get("SCIARENA_REVIEWERS", "").split(",") if n.strip()),
            review_repeat_days=_days(env, "SCIARENA_REVIEW_REPEAT_DAYS", cls.review_repeat_days),
            secrets={k: v for k, v in env.items() if k.endswith(_SECRET_SUFFIXES) and v},
        )

    def secret(self, name: str) -> str | None:
        return self.secrets.get(name)


def _limit(env: Mapping[str, str], name: str, default: int) -> int:
    value = _int(env, name, default)
    if value < 0:
        raise ValueError(f"{name} must be 0 (no limit) or a positive integer, got {value}")
    return value


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    """A count of at least 1 (a bound that 0 would make meaningless)."""
    value = _int(env, name, default)
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A non-negative count where 0 means none (not "no limit", as for ``_limit``)."""
    value = _int(env, name, default)
    if value < 0:
        raise ValueError(f"{name} must be 0 (none) or a positive integer, got {value}")
    return value


def _choice(env: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = env.get(name, "").strip().lower() or default
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _share(env: Mapping[str, str], name: str, default: float) -> float:
    value = _float(env, name, default)
    if not 0.0 < value <= 1.0:  # also refuses nan; 0 would let a pair starve
        raise ValueError(f"{name} must be a share above 0 and at most 1, got {value}")
    return value


def _days(env: Mapping[str, str], name: str, default: float) -> float:
    value = _float(env, name, default)
    if not value >= 0:  # also refuses nan
        raise ValueError(f"{name} must be 0 (never) or a positive number of days, got {value}")
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be 1 or 0 (true/false), got {raw!r}")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    return _number(env, name, default, int, "an integer")


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    return _number(env, name, default, float, "a number")


def _number(env: Mapping[str, str], name: str, default: _N, parse: Callable[[str], _N], kind: str) -> _N:
    """``env[name]`` parsed, ``default`` when unset; a bad value names the variable to fix."""
    raw = env.get(name)
    if not raw:
        return default
    try:
        return parse(raw)
    except ValueError as err:
        raise ValueError(f"{name} must be {kind}, got {raw!r}") from err
