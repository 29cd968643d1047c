"""`bench.main_content`: word recall and leak of chunks against a reference extraction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from bs4 import BeautifulSoup

from bench.main_content import (
    DEFAULT_PAGES,
    LEAK_PAGE_LIMIT,
    PageFigures,
    covered_text,
    groups,
    measure,
    report,
    report_groups,
    words,
)
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

PAGE = """<!DOCTYPE html><html><head><title>News</title></head><body>
<nav><a href="/">Home</a> <a href="/world">World</a></nav>
<article><h1>Storm hits the coast</h1><p>A strong storm reached the coast on Monday.</p>
<p>Schools stayed closed.</p></article>
<aside><h2>Most read</h2><ol><li>Cats adore boxes</li><li>Prices rise again</li></ol></aside>
</body></html>"""
REFERENCE = """<div><h1>Storm hits the coast</h1><p>A strong storm reached the coast on Monday.</p>
<p>Schools stayed closed.</p><p>Power came back at noon.</p></div>"""
"""The reference has one sentence the page lacks, and lacks the sentence below."""
PAGE = PAGE.replace("</article>", "<p>Sign up for our newsletter.</p></article>")


def test_words_are_casefolded_runs_and_single_cjk_characters() -> None:
    assert words("Hello, hello WORLD_2 這是") == {"hello": 2, "world": 1, "2": 1, "這": 1, "是": 1}


def test_overlapping_chunks_cover_each_character_once() -> None:
    assert covered_text("abcdefgh", [(0, 4), (2, 6), (7, 8)]) == "abcdef h"


def test_recall_and_leak_count_words_missing_on_either_side(tmp_path: Path) -> None:
    (tmp_path / "news.html").write_text(PAGE)
    (tmp_path / "news.expected.html").write_text(REFERENCE)
    (figures,) = measure(tmp_path)
    reference = sum(words(BeautifulSoup(REFERENCE, "lxml").get_text(" ")).values())
    assert figures.reference_words == reference
    assert figures.recall == pytest.approx(1 - 5 / reference)  # "Power came back at noon"
    # "Sign up for our newsletter" is in the chunks only (nav and aside are left out).
    assert figures.leak == pytest.approx(5 / figures.chunk_words)
    lines, met = report([figures])
    assert not met
    assert "news" in "\n".join(lines)


@pytest.mark.skipif(not DEFAULT_PAGES.is_dir(), reason=f"no real pages at {DEFAULT_PAGES}")
def test_real_pages_keep_the_article_and_leave_the_furniture_out() -> None:
    """Issue 14, item 8, on the 25 Readability pages: leak 0.187 -> 0.077 on average and
    8 -> 2 pages over 0.20 (nytimes-5, a section front of teaser cards, 0.75; bbc-1 0.21),
    recall 0.995 -> 0.990. The recall lost is firefox-nightly-blog's comment thread (0.888:
    Readability keeps it, the issue counts comments as furniture) and nytimes-5's
    `<span>Credit</span>Kevin`, one word in the rendering and two in the reference.

    Issue 28, item 9 (teaser lists, wiki navigation boxes, comments named after the
    article, alt texts that are file names): leak 0.077 -> 0.072, bbc-1 0.207 -> 0.144
    (its "more from this section" cards), pixnet 0.109 -> 0.047 (`12-IMG_3886.jpg`
    alts); recall 0.990 -> 0.9898, all of it wikipedia-2's eight `navbox` blocks
    (0.997 -> 0.989), which Readability's reference keeps and the issue counts as page
    furniture."""
    figures = measure(DEFAULT_PAGES)
    assert len(figures) >= 25
    assert sum(f.recall for f in figures) / len(figures) >= 0.989
    assert sum(f.leak for f in figures) / len(figures) <= 0.08
    assert sum(f.leak > 0.20 for f in figures) <= 2


HELD_OUT = ROOT / "bench" / "pages"
NEWS_AND_BLOGS = ("herald-sun-1", "tmz-1", "tumblr")


def test_held_out_pages_keep_the_article_and_leave_the_furniture_out() -> None:
    """Issue 28, item 9, on pages the rules were not written on (bench/pages/SOURCES.md).

    herald-sun-1 (a column, then an "Other Opinion Columns" list of five headline cards
    named as nothing) leaked 0.243 before teaser lists were recognised, 0.047 after: the
    byline list is left.  tmz-1 leaked 0.226 before, 0.153 after alt texts that are file
    names stopped counting as words; left are the date line and an "opt-in" newsletter
    box (no furniture word in its names).  tumblr, collected after the rules were
    written and not used to change them, leaks 0.011 before and after."""
    figures = {f.name: f for f in measure(HELD_OUT) if f.name in NEWS_AND_BLOGS}
    assert sorted(figures) == sorted(NEWS_AND_BLOGS)
    assert figures["tumblr"].leak <= 0.02
    assert min(f.recall for f in figures.values()) >= 0.99
    assert figures["herald-sun-1"].leak <= 0.05
    assert figures["tmz-1"].leak <= 0.16


def test_documentation_pages_of_six_other_generators_leak_little() -> None:
    """Fourteen held-out documentation pages (mdBook, rustdoc, Node.js, npm, DocBook,
    gtk-doc; bench/pages/SOURCES.md), measured before any rule change: mean leak 0.023,
    the highest rust-reference-match's 0.143 (its grammar boxes, which the reference
    drops and the chunks keep). Recall below 0.99 is the reference's: Readability keeps
    mdBook's keyboard-help pop-up and Valgrind's FAQ question list twice."""
    (documentation,) = [g for g in groups(HELD_OUT) if g.name == "documentation"]
    figures = measure(HELD_OUT, set(documentation.pages))
    assert len(figures) == 14
    assert sum(f.leak for f in figures) / len(figures) <= 0.03
    assert max(f.leak for f in figures) <= 0.15
    assert min(f.recall for f in figures) >= 0.90


def test_groups_are_reported_apart_each_against_its_own_goal(tmp_path: Path) -> None:
    """Issue 37: pages the rules were tuned on and pages nobody tuned on are reported
    apart; a page in no group still shows, under "other"."""
    for name in ("news", "blog", "loose"):
        (tmp_path / f"{name}.html").write_text(PAGE)
        (tmp_path / f"{name}.expected.html").write_text(REFERENCE)
    (tmp_path / "groups.json").write_text(
        '{"tuned": {"about": "written on", "pages": ["news"]},'
        ' "unseen": {"about": "never read", "goal": {"leak": 0.5, "recall": 0.5, "over": 0},'
        ' "pages": ["blog"]}}'
    )
    chosen = groups(tmp_path)
    assert [(g.name, g.goal.leak) for g in chosen] == [("tuned", 0.08), ("unseen", 0.5)]
    lines, met = report_groups(measure(tmp_path), chosen)
    text = "\n".join(lines)
    assert [line for line in lines if line.startswith("## ")] == [
        "## tuned: written on",
        "## unseen: never read",
        "## other: pages in no group",
    ]
    assert text.count("| news |") == text.count("| blog |") == text.count("| loose |") == 1
    assert not met  # the tuned group's leak is over 0.08
    assert measure(tmp_path, {"blog"})[0].name == "blog"
    assert len(measure(tmp_path, {"blog"})) == 1


def test_issue_37_pages_nobody_tuned_on_leak_less_than_before() -> None:
    """Issue 37, item 3 (bench/pages/groups.json; SOURCES.md says where the pages come
    from). Before the issue-37 rules: unseen-tune (6 pages, the rules were written on
    them) recall 0.947, leak 0.087; unseen-check (7 pages, measured only) recall 0.991,
    leak 0.103. After: 0.941 / 0.066 and 0.991 / 0.090; after the dateline rule
    and the wiki vocabulary (branch `furniture2`): 0.936 / 0.050 (love-hina-news loses
    the comment form its reference keeps) and 0.985 / 0.080. The goal (leak <= 0.05, no page
    over 0.20) is not met: what is left is mostly each short page's title and dateline,
    which Readability's reference leaves out (die-partei-luebeck, 48 reference words,
    0.360), and comments and menus that reference keeps (love-hina-news)."""
    assert_group_figures("unseen-tune", most_leak=0.055, least_recall=0.93, pages=6)
    assert_group_figures("unseen-check", most_leak=0.085, least_recall=0.98, pages=7)


def test_issue_37_second_round_pages_nobody_tuned_on() -> None:
    """Issue 37, item 3, second round (branch `furniture2`; bench/pages/SOURCES.md):
    unseen2-tune (a Wikipedia article and a blog post, on which the round's rules were
    written) recall 0.927, leak 0.098 before the round, 0.926 / 0.086 after;
    unseen2-check (a terms-of-service page, a Japanese advisory, a French blog post with
    comments, a German company page; measured only) 1.000 / 0.052 before, 0.999 / 0.052
    after. No page of either leaks over 0.20. What is left on wikipedia-tsne (0.150) is
    mostly the TeX of its formulas, which the chunks keep and Readability's reference
    holds as images (their alt text is no word of it)."""
    for name, most_leak, least_recall, pages in (
        ("unseen2-tune", 0.09, 0.92, 2),
        ("unseen2-check", 0.055, 0.99, 4),
    ):
        figures = assert_group_figures(
            name, most_leak=most_leak, least_recall=least_recall, pages=pages
        )
        assert [f.name for f in figures if f.leak > LEAK_PAGE_LIMIT] == [], name


def assert_group_figures(
    name: str, *, most_leak: float, least_recall: float, pages: int
) -> list[PageFigures]:
    """The mean leak and recall of a group of bench/pages, all `pages` of it measured."""
    (group,) = [group for group in groups(HELD_OUT) if group.name == name]
    figures = measure(HELD_OUT, set(group.pages))
    assert len(figures) == len(group.pages) == pages, name
    assert sum(f.leak for f in figures) / len(figures) <= most_leak, name
    assert sum(f.recall for f in figures) / len(figures) >= least_recall, name
    return figures


def test_issue_37_third_round_a_thread_page() -> None:
    """Issue 37, item 3, third round (branch `html3`; bench/pages/SOURCES.md): a GitHub
    issue, whose opening post is named as a comment (`timeline-comment`), kept 16 of its
    words (recall 0.034, leak 0.438) while comment names were furniture on every page;
    1.000 / 0.019 since a page with nearly all its running text in such elements keeps
    them. The rule was written on this page (no page of the type was held out)."""
    (figures,) = measure(HELD_OUT, {"github-issue"})
    assert figures.leak <= 0.03
    assert figures.recall >= 0.99


def test_the_title_counted_variant_adds_readabilitys_title_to_the_reference(
    tmp_path: Path,
) -> None:
    """Issue 37, item 3: Readability reports the title apart and leaves the matching
    headline out of its content, so the chunks' headline counts as leak. The variant
    counts the title's words as reference words, beside (not instead of) the leak."""
    (tmp_path / "news.html").write_text(PAGE)
    (tmp_path / "news.expected.html").write_text(
        REFERENCE.replace("<h1>Storm hits the coast</h1>", "")
    )
    (plain,) = measure(tmp_path)
    (tmp_path / "titles.json").write_text('{"news": "Storm hits the coast"}')
    (titled,) = measure(tmp_path)
    assert (titled.leak, titled.recall) == (plain.leak, plain.recall)
    assert titled.leak_title_counted == pytest.approx(plain.leak - 4 / plain.chunk_words)
    lines, _ = report([titled])
    assert f"{titled.leak_title_counted:.3f}" in lines[2]
    assert "title counted as content" in lines[-1]


def test_issue_37_fourth_round_pages_nobody_tuned_on() -> None:
    """Issue 37, item 3, fourth round (branch `html4`; bench/pages/SOURCES.md;
    docs/results/2026-12-07-page-furniture-3.md): before the round's rules unseen3-tune
    (a GitHub issue, a Hacker News thread, a blog post with comments, an essay, a
    tutorial) measured 0.977 / 0.046 and unseen3-check (a news feature, four blog posts;
    measured, not read) 1.000 / 0.093. The round's rules (a thread's one-line posts,
    reply links, author boxes, backlinks, Disqus's credit) were written on unseen3-tune.
    The goal is not met on unseen3-check: kulumedia-blog, whose theme appends two more
    articles under the article, leaks 0.27 before and after; this pins that no rule makes
    the held-out group worse."""
    assert_group_figures("unseen3-tune", most_leak=0.03, least_recall=0.99, pages=5)
    assert_group_figures("unseen3-check", most_leak=0.095, least_recall=0.99, pages=5)


def test_issue_37_fifth_round_pages_nobody_tuned_on() -> None:
    """Issue 37, item 3, fifth round (branch `html5`; bench/pages/SOURCES.md;
    docs/results/2026-12-07-page-furniture-4.md): before the round's rules unseen4-tune
    (a party working group's and an association's WordPress posts) measured
    0.998 / 0.132 and unseen4-check (a MediaWiki article, a party group's press release,
    an association's post, a magazine's news article; measured, not read)
    0.994 / 0.243. The round's rules (tag and category lists, an article's own footer,
    datelines in the headline's header and just before it) were written on unseen4-tune:
    0.995 / 0.042 on its first two pages; two blog posts added after the first three rules
    measure 1.000 / 0.020 (six "next story" cards, which Readability's reference keeps)
    and 1.000 / 0.105 (a header box of social links in paragraphs, left as it is).
    The goal is not met on unseen4-check (0.237: a teaser slider above a press release,
    related-article cards around a news article); this pins that no rule makes it worse.
    The group is unseen4-read since round 7, which read it to write rules and took it to
    0.994 / 0.115 (docs/results/2026-12-07-page-furniture-5.md, "Round 7"); unseen5-read,
    read in the same round, 0.999 / 0.221 -> 0.999 / 0.086."""
    figures = assert_group_figures("unseen4-tune", most_leak=0.055, least_recall=0.99, pages=4)
    assert [f.name for f in figures if f.leak > LEAK_PAGE_LIMIT] == []
    assert_group_figures("unseen4-read", most_leak=0.12, least_recall=0.99, pages=4)
    assert_group_figures("unseen5-read", most_leak=0.09, least_recall=0.99, pages=10)
