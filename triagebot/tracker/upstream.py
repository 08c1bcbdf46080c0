"""Known upstream issues: the upstream repository's issues searched for each failure group, once
per night and signature, through GitHub's search API. Nothing is ever written there.

A group's words (`analysis.triage.search_words`: the error's name, its message's leading words,
the compiler frame) make a ladder of queries, from all of them to the first alone; the first
query GitHub answers with any issue is kept. Each issue found says which of the words its title
or body holds, and the best few (most words, then GitHub's order) are the group's "possibly
known" issues; the bot's own issues and pull requests are never among them.

GitHub's search API has a limit of its own, 30 requests a minute for a token: every answer says
how many are left and when the minute ends, and the next search waits for that end when none
are left (`Pace`); a limit that asks to wait longer than `MAX_WAIT` ends tonight's searches, the
rest keep their earlier search. A query over 256 characters is refused (422): none is sent, and
one GitHub refuses anyway gives way to the next, shorter one. Searches are kept in the store
(`store.upstream`), each as soon as it is made, so that a publish job stopped midway keeps
what it searched: a signature searched for tonight's nightly is not searched again. A night
makes at most `tracker.upstream_searches_per_night` searches (they run inside the publish
lease), those never searched first, then the longest ago; the rest wait for the next night.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from triagebot.analysis.triage import failure_groups, search_words
from triagebot.results import Night, UpstreamIssue, UpstreamSearch
from triagebot.tracker.github import GitHub, GitHubError

SEARCH_URL = "/search/issues"
MAX_QUERY = 256  # characters GitHub accepts in a search query
PER_PAGE = 20  # issues read per query: the best matches are among GitHub's first
MAX_WAIT = 120.0  # seconds the search limit may ask to wait before the rest waits for the next night
KEPT = 5  # issues kept per search, best first (an issue shows `triage.MAX_KNOWN` of them)
SEARCHES_PER_NIGHT = 60  # the default of `tracker.upstream_searches_per_night`


@dataclass
class Pace:
    """The search limit as GitHub's last answer stated it (`X-RateLimit-*` of the search resource)."""

    remaining: int | None = None
    reset: float | None = None  # epoch seconds when the minute ends
    requests: int = 0
    waited: float = 0.0

    def note(self, headers: dict[str, Any]) -> None:
        lower = {key.lower(): value for key, value in headers.items()}
        if lower.get("x-ratelimit-resource", "search") != "search":
            return
        if "x-ratelimit-remaining" in lower:
            self.remaining = int(lower["x-ratelimit-remaining"])
        if "x-ratelimit-reset" in lower:
            self.reset = float(lower["x-ratelimit-reset"])

    def wait_before_next(self, gh: GitHub) -> float:
        """Seconds to wait before the next search (0 while any are left this minute)."""
        if self.remaining is None or self.remaining > 0 or self.reset is None:
            return 0.0
        return max(self.reset - gh.clock(), 0.0) + 1.0  # the reset is rounded down to the second


class SearchLimited(GitHubError):
    """The search limit asks to wait longer than tonight's searches may."""


def queries(repo: str, words: Sequence[str]) -> list[str]:
    """The queries for `words`, all of them first, then one word fewer each time; none longer
    than GitHub accepts."""
    found = []
    for count in range(len(words), 0, -1):
        terms = " ".join('"' + word.replace('"', "") + '"' for word in words[:count])
        text = f"repo:{repo} is:issue {terms}"
        if len(text) <= MAX_QUERY:
            found.append(text)
    return found


def best_matches(
    items: Sequence[dict[str, Any]], words: Sequence[str], exclude: Callable
) -> list[UpstreamIssue]:
    """The issues of a search answer, those holding the most `words` first (GitHub's order
    otherwise), without pull requests and what `exclude(item)` rules out."""
    found = []
    for item in items:
        if item.get("pull_request") or exclude(item):
            continue
        text = f"{item.get('title') or ''}\n{item.get('body') or ''}".lower()
        matched = [word for word in words if word.lower() in text]
        found.append(
            UpstreamIssue(
                number=int(item["number"]),
                title=str(item.get("title") or ""),
                state="closed" if item.get("state") == "closed" else "open",
                url=str(item.get("html_url") or ""),
                matched=matched,
            )
        )
    ranked = sorted(enumerate(found), key=lambda pair: (-len(pair[1].matched), pair[0]))
    return [issue for _, issue in ranked][:KEPT]


@dataclass
class Searcher:
    """Searches of one repository's issues on one night, paced by the search limit."""

    gh: GitHub
    repo: str
    key: str  # tonight's nightly
    own: Collection[int] = ()  # issue numbers of the bot's own tracking issues
    pace: Pace = field(default_factory=Pace)

    def exclude(self, item: dict[str, Any]) -> bool:
        author = str((item.get("user") or {}).get("login") or "")
        return int(item["number"]) in self.own or author.lower() == self.gh.login.lower()

    def request(self, query: str) -> dict[str, Any]:
        wait = self.pace.wait_before_next(self.gh)
        if wait > MAX_WAIT:
            raise SearchLimited(f"the search limit asks to wait {wait:.0f} s, over {MAX_WAIT:.0f} s")
        if wait:
            self.gh.sleep(wait)
            self.pace.waited += wait
        self.pace.requests += 1
        parameters = {"q": query, "per_page": PER_PAGE}
        headers, data = self.gh.read_json(
            SEARCH_URL, parameters=parameters, what=f"search the issues of {self.repo}"
        )
        self.pace.note(headers)
        return data if isinstance(data, dict) else {}

    def search(self, signature: str, words: Sequence[str]) -> UpstreamSearch:
        """Tonight's search for `signature`: the first query of the ladder that finds an issue."""
        result = UpstreamSearch(repo=self.repo, signature=signature, key=self.key, words=list(words))
        tried = queries(self.repo, words)
        if not tried:
            result.error = f"every query for it is longer than the {MAX_QUERY} characters GitHub accepts"
        for query in tried:
            result.query = query
            result.requests += 1
            try:
                data = self.request(query)
            except GitHubError as error:
                if error.status != 422:
                    raise
                result.error = str(error).partition(": ")[2] or str(error)
                continue  # refused (too long, too many operators): a shorter query may pass
            result.error = ""
            result.total = int(data.get("total_count") or 0)
            result.matches = best_matches(data.get("items") or [], words, self.exclude)
            if result.matches:
                break
        return result


def wanted(night: Night) -> dict[str, list[str]]:
    """signature -> its search words, for every failure group of the night not pinned upstream
    and with telling words (a signature once, whichever flag it is under)."""
    found: dict[str, list[str]] = {}
    for flag in night.flags.values():
        for group in failure_groups(flag.stats):
            triage = flag.triage_of(group)
            if triage is not None and triage.tracked_in is not None:
                continue
            words = search_words(group)
            if words and group.signature not in found:
                found[group.signature] = words
    wrong = night.compiler_wrong
    for group in wrong.groups:  # wrong results at the default config, reduced to an op
        triage = wrong.triage_of(group)
        words = search_words(group)
        if words and (triage is None or triage.tracked_in is None) and group.signature not in found:
            found[group.signature] = words
    return found


def searched_tonight(search: UpstreamSearch | None, key: str, words: Sequence[str]) -> bool:
    """Whether `search` is tonight's for these words (a search is made once per night)."""
    return search is not None and search.key == key and search.words == list(words)


def search_night(
    gh: GitHub,
    repo: str,
    night: Night,
    stored: dict[str, UpstreamSearch],
    *,
    own: Collection[int] = (),
    cap: int = SEARCHES_PER_NIGHT,
    keep: Callable[[UpstreamSearch], None] = lambda search: None,
    say: Callable[[str], None] = print,
) -> tuple[list[UpstreamSearch], Pace]:
    """The searches tonight owes: each wanted signature not yet searched for `night.key`, at most
    `cap` of them (never searched first, then the longest ago), each handed to `keep` as soon as
    it is made. Stops (saying why) when the search limit would hold the night too long, or
    GitHub fails; what was searched until then is returned, with the pace it kept."""
    searcher = Searcher(gh, repo, night.key, own)
    owed = [
        (signature, words)
        for signature, words in wanted(night).items()
        if not (
            signature in stored and stored[signature].key == night.key and stored[signature].words == words
        )
    ]

    def longest_ago(item: tuple[str, list[str]]) -> tuple[bool, datetime]:
        earlier = stored.get(item[0])
        return (earlier is not None, earlier.at if earlier is not None else datetime.min.replace(tzinfo=UTC))

    owed.sort(key=longest_ago)
    if len(owed) > cap:
        say(f"upstream search of {repo}: {cap} of {len(owed)} signature(s) tonight, the rest the next nights")
    made = []
    for signature, words in owed[:cap]:
        try:
            made.append(searcher.search(signature, words))
        except GitHubError as error:
            left = len(owed) - len(made)
            say(f"upstream search of {repo} stopped, {left} signature(s) left for the next night: {error}")
            break
        keep(made[-1])
    return made, searcher.pace
