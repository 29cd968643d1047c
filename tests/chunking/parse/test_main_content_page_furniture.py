"""Issue 37, item 3: classes of page furniture on news, blog and club pages, each shown
on a real page (bench/pages and ../shared/realworld; where they come from in their
SOURCES.md), the article's text and headings kept."""

from __future__ import annotations

import pytest

from chunking.parse.html.render import parse_html
from tests.paths import ROOT, SHARED

PAGES = ROOT / "bench" / "pages"
SHARED_PAGES = SHARED / "realworld" / "html"
needs_shared = pytest.mark.skipif(
    not SHARED_PAGES.is_dir(), reason=f"no real pages at {SHARED_PAGES}"
)


def rendered(path: str) -> str:
    folder = SHARED_PAGES if path.startswith("shared/") else PAGES
    name = path.removeprefix("shared/")
    return parse_html((folder / f"{name}.html").read_text(encoding="utf-8")).source


def assert_keeps(page: str, kept: list[str], left_out: list[str]) -> None:
    assert [text for text in kept if text not in page] == []
    assert [text for text in left_out if text in page] == []


def test_a_byline_is_left_out() -> None:
    # Herald Sun's `<li class="byline first">by: Laurie Oakes</li>`; the column's
    # author heading beside it is outside the article's `story-body` and goes too, as
    # in Readability's reference (see test_main_content_article_body.py).
    assert_keeps(
        rendered("herald-sun-1"),
        ["# Angry media won’t buckle over new surveillance laws"],
        ["by: Laurie Oakes", "## Laurie Oakes"],
    )


@needs_shared
def test_a_byline_box_goes_but_the_title_beside_it_stays() -> None:
    # ACLU's byline pane sits in one box with the `<h1>` and a named tag list: the box
    # is not a link list for all that the furniture in it is links.
    assert_keeps(
        rendered("shared/aclu"),
        ["# Facebook Is Tracking Me Even Though I’m Not on Facebook", "I don't use Facebook."],
        ["Daniel Kahn Gillmor, Senior Staff Technologist", "April 5, 2018 | 6:00 PM"],
    )


def test_links_to_the_previous_and_next_post_are_left_out() -> None:
    # ebb.org's `<div id="prevlink">` after the post.
    assert_keeps(
        rendered("ebb-org"),
        ["The last 33 days have been unprecedentedly difficult", "other deplorable actions."],
        ["Chasing Quick Fixes To Sustainability"],
    )


@needs_shared
def test_a_menu_stays_a_menu_when_its_previous_and_next_links_are_named() -> None:
    """PIXNET's post footer: category links and `nav`-named previous/next links. Named
    furniture inside a box still counts as links, so the box is still a link list. (The
    post's last paragraph stays; its forward box, "產生短網址E-mail轉寄" beside a form,
    goes: `test_the_box_around_a_sign_up_form_goes_with_it`.)"""
    assert_keeps(
        rendered("shared/pixnet"),
        ["內文有不定期的更新旅遊、露營圖文訊息"],
        ["全站分類：國內旅遊", "此分類上一篇："],
    )


def test_a_bar_of_icon_links_is_a_link_bar() -> None:
    # love-hina.ch's `<div id="buttons">`: three image links whose alt texts the
    # renderer writes ("Teste dein Wissen", ...), named nothing.
    assert_keeps(
        rendered("love-hina-news"),
        ["Kapitel 121 ist nun auch online."],
        ["Teste dein Wissen", "Umfrage anzeigen", "Drucker Optimierte Version anzeigen"],
    )


def test_the_heading_of_a_left_out_comment_thread_goes_with_it() -> None:
    # jovelblog's `<h3 id="comments">3 Kommentare</h3>` stands beside the
    # `<ol class="commentlist">` it titles.
    assert_keeps(
        rendered("jovelblog-post"),
        ["Gut investierte 20 Cent, wenn auch das Bilt kein Meisterwerk war!"],
        ["3 Kommentare", "Pingback von"],
    )


@needs_shared
def test_a_list_of_other_stories_between_an_articles_paragraphs_is_left_out() -> None:
    """CNET en Español's "Artículos Relacionados" box (three headline links set between
    two paragraphs) with its class names replaced by a CSS-in-JS hash, as such sites
    publish them: no vocabulary names it, its place in the article does."""
    page = (SHARED_PAGES / "cnet-svg-classes.html").read_text(encoding="utf-8")
    named = 'class="shortcode related-links float_left" section="shortcodeRelatedLinks"'
    assert named in page
    text = parse_html(page.replace(named, 'class="css-1q2w3e"')).source
    assert_keeps(
        text,
        ["Twitter Lite es la versión ligera", "Entre sus novedades, Twitter Lite permite"],
        ["Artículos Relacionados", "Este es el hombre que eliminó la cuenta de Twitter"],
    )


def test_a_see_also_list_at_the_end_of_an_article_is_kept() -> None:
    """The same kind of list after the last paragraph is the document's own."""
    sentences = "".join(
        f"<p>Paragraph {n} of the report says what the council decided and why.</p>"
        for n in range(6)
    )
    links = "".join(
        f"<li><a href='/news/story-{n}'>The council decided something else on day {n}</a></li>"
        for n in range(4)
    )
    page = parse_html(
        f"<html><body><div class='c'><h1>Report</h1>{sentences}"
        f"<h2>See also</h2><ul>{links}</ul></div></body></html>"
    ).source
    assert "something else on day 3" in page
    assert "## See also" in page


def test_an_unnamed_dateline_under_the_headline_is_left_out() -> None:
    # jovelblog's `<small>11.09.2011, 16:20 von jovelstefan</small>` between the `<h1>`
    # and the post; Gregory Szorc's `<small>` with the date, categories and a comments
    # link; TMZ's `<h5>` dateline.
    assert_keeps(
        rendered("jovelblog-post"),
        ["# Gefällt mir", "Manchmal überrascht einen der Alltag"],
        ["11.09.2011", "von jovelstefan"],
    )
    assert_keeps(
        rendered("gregoryszorc-blog"),
        ["Mercurial's Journey to and Reflections on Python 3", "Mercurial 5.2 was released"],
        ["08:45 AM", "View Comments"],
    )
    assert_keeps(rendered("tmz-1"), ["Oscar dress"], ["7:11 AM PST"])


def test_an_unnamed_dateline_after_the_article_is_left_out() -> None:
    # futurezone's `<p class="article-meta">(Agenturen) | Stand: 05/08/2019, 5:30</p>`.
    assert_keeps(
        rendered("futurezone-at"),
        ["Analysten hatten mit einem höheren Minus"],
        ["Stand: 05/08/2019"],
    )


def test_dates_that_are_the_documents_own_stay() -> None:
    # A date in a sentence, under a photo, in a list of releases after the text and
    # in a table: content, whatever their length.
    intro = "The project keeps a long history of releases and of the people who made them. "
    page = parse_html(
        "<html><body><h1>Release history</h1>"
        "<p>On 13 January 2020 we released 2.0.</p>"
        f"<p>{intro * 2}</p>"
        "<figure><img src='a.jpg'><figcaption>Kathmandu, 30 April 2015</figcaption></figure>"
        f"<p>{intro * 2}</p>"
        "<table><tr><td>2.0</td><td>2020-01-13</td></tr></table>"
        "<ul><li>1.1 (2019-12-01)</li><li>1.0 (2019-06-01)</li></ul>"
        "</body></html>"
    ).source
    assert [
        text
        for text in (
            "On 13 January 2020 we released 2.0.",
            "Kathmandu, 30 April 2015",
            "2020-01-13",
            "1.1 (2019-12-01)",
        )
        if text not in page
    ] == []


def test_what_a_wiki_marks_as_not_for_print_and_its_jump_links_are_left_out() -> None:
    # MediaWiki's `<div id="siteSub" class="noprint">` and `<a class="mw-jump-link">`;
    # its hatnote ("TSNE" redirects here) stays, as "Main article: Firefox" does.
    assert_keeps(
        rendered("wikipedia-tsne"),
        ["# t-distributed stochastic neighbor embedding", "redirects here", "t-SNE has been used"],
        ["From Wikipedia, the free encyclopedia", "Jump to navigation"],
    )


def test_the_box_around_a_sign_up_form_goes_with_it() -> None:
    # TMZ's e-mail opt-in: "Get TMZ Breaking News alerts to your inbox" beside a form
    # dropped for its little text; jovelblog's header: a logo and a feed icon beside the
    # search form.
    assert_keeps(rendered("tmz-1"), ["Oscar dress"], ["alerts to your inbox"])
    assert_keeps(rendered("jovelblog-post"), ["Manchmal überrascht einen"], ["XML, RSS"])


def test_a_form_in_a_box_that_says_more_keeps_the_box() -> None:
    prose = "The settings below change how the build runs and where it writes its files. "
    page = parse_html(
        "<html><body><h1>Settings</h1>"
        f"<p>{prose * 2}</p>"
        "<div><h2>Try it</h2><p>Type a name:</p><form><input name='n'></form></div>"
        f"<div><p>{prose * 2}</p><form><input name='m'></form></div>"
        "</body></html>"
    ).source
    assert "## Try it" in page
    assert "Type a name:" in page
    assert page.count(prose.strip()) == 4


def test_a_thread_page_keeps_its_posts() -> None:
    """An issue tracker's thread names its posts as comments (`timeline-comment`): with no
    article beside them, they are what the page says, not a comment thread under one.
    Before the rule the chunks held 16 of the page's words (recall 0.034)."""
    assert_keeps(
        rendered("github-issue"),
        [
            "# Defuddle on Cloudflare Workers",
            "I was looking forward to ditching my tenuous",
            "Defuddle Error processing document: TypeError",
            "feel free to close the issue",
        ],
        ["Skip to content", "Navigation Menu"],
    )


def test_comments_under_an_article_stay_out() -> None:
    """The thread rule does not take an article's comment thread for the page's text: the
    pingbacks under a blog post (`ol.commentlist`) stay out, the post stays in."""
    assert_keeps(
        rendered("jovelblog-post"),
        ["Unlängst spazierte ich ahnungslos durch Eimsbüttel"],
        ["Pingback von", "Too much information - Papierkorb"],
    )


def test_a_threads_one_line_posts_stay_with_the_others() -> None:
    """A forum thread's posts share their markup; a post of one line, with no paragraph
    of its own (Hacker News' `<div class="comment"><span class="commtext">...`), is kept
    as its neighbours with paragraphs are. Before the rule two of the six answers were
    left out (hn-thread recall 0.896 -> 1.000)."""
    assert_keeps(
        rendered("hn-thread"),
        [
            "I'm trying to get an understanding on what quality means",
            'Claude Shannon\'s "A Mathematical Theory of Communication"',
            "it is a first principles analysis",
            "Lisanne Bainbridge, Ironies of Automation.",
        ],
        [],
    )


def test_a_posts_reply_links_are_left_out() -> None:
    """`reply` names a comment's reply link (Hacker News' `div.reply`, WordPress's
    `comment-reply-link`): furniture, as `replies` already was."""
    page = rendered("hn-thread")
    assert "Shannon does an amazing job" in page
    assert "reply" not in page.split()


def test_an_author_box_after_the_article_is_left_out() -> None:
    """A WordPress author card (`div.author-info`: "Published by", the name, a bio and
    "View all posts by") is named "author" and a box word; the post stays. lemire-blog
    leaked 0.098 before the rule, 0.030 after (ars-1, held out, 0.088 -> 0.049)."""
    assert_keeps(
        rendered("lemire-blog"),
        ["# JSON parsing: simdjson vs. JSON for Modern C++", "Link: simdjson."],
        ["Published by", "A computer science professor", "View all posts by"],
    )


@pytest.mark.parametrize(
    ("token", "furniture"),
    [
        ("author-info", True),
        ("authorBio", True),
        ("author-box", True),
        ("author", False),
        ("author-name", False),
        ("authors", False),
        ("post-author", False),
        ("authors-list", False),
    ],
)
def test_only_author_and_box_words_name_an_author_box(token: str, furniture: bool) -> None:
    # A byline's `author` or `author-name` is not a box: bylines have their own rule.
    assert box_is_left_out(token) is furniture


def box_is_left_out(classes: str) -> bool:
    """Whether a box of these classes after a post's running text is left out."""
    page = parse_html(
        f"<article><h1>Title</h1><p>{'Running text of the post. ' * 8}</p>"
        f'<div class="{classes}"><p>Jane Doe writes about parsers.</p></div></article>'
    ).source
    return "Jane Doe writes" not in page


def test_a_list_of_backlinks_is_left_out() -> None:
    """A digital garden's "Linked mentions" (`div.backlinks`: cards of the pages that
    link to this one) is a related list by another name (stephango-essay 0.028 -> 0.003)."""
    assert_keeps(
        rendered("stephango-essay"),
        ["# Buy wisely", "the learning and experience per dollar."],
        ["Quality software is like quality food", "Choose optimism"],
    )


def test_disqus_credit_line_is_left_out() -> None:
    """Disqus's "blog comments powered by Disqus" link (`a.dsq-brlink`) is named with the
    vendor's class prefix, as `disqus` names its thread (gregoryszorc-blog 0.021 -> 0.014)."""
    assert_keeps(
        rendered("gregoryszorc-blog"),
        ["I hope the Python community takes the opportunity to reflect"],
        ["powered by"],
    )


def test_furniture_named_by_its_id_alone_is_no_posts_template() -> None:
    """The posts a thread keeps by their markup are matched by tag and class; an element
    named by its id alone (`<div id="share">`) is no template, so a thread whose posts
    are named by id (`id="comment-1"`) does not keep every id-named box with them."""
    post = "<p>" + "A reply that says something about the question at length. " * 4 + "</p>"
    page = parse_html(
        "<body><h1>Question</h1>"
        + "".join(f'<div id="comment-{n}">{post}</div>' for n in range(3))
        + '<div id="share"><a href="https://x.example/s">Share this thread</a></div>'
        + "</body>"
    ).source
    assert page.count("A reply that says something") == 12
    assert "Share this thread" not in page


def test_a_posts_tag_and_category_lists_are_left_out() -> None:
    """A post's category and tag lines (`p.post-category`, `p.post-tags`; WordPress's
    `cat-links`, `tags-links`) are link lists in a paragraph, where links count as text;
    their names say what they are (gruen-digital 0.027 -> 0.000)."""
    assert_keeps(
        rendered("gruen-digital"),
        ["# Digitalpolitische Jahrestagung 2015", "Aus der Einladung:"],
        ["Aus den Ländern, Blog, sonstiges, Termine", "Anmeldung, BaWü, Beteiligung"],
    )


@pytest.mark.parametrize(
    ("classes", "furniture"),
    [
        ("post-tags", True),
        ("entry-categories", True),
        ("tags-links", True),
        ("cat-links", True),
        ("widget_tag_cloud", True),
        ("tagcloud", True),
        # WordPress names the post after its categories and tags: the post stays
        ("post hentry category-news tag-berlin", False),
        ("the-categories-field", False),
        ("tagline", False),
    ],
)
def test_only_a_taxonomy_head_names_a_tag_list(classes: str, furniture: bool) -> None:
    assert box_is_left_out(classes) is furniture


def test_an_articles_footer_is_left_out() -> None:
    """WordPress's `<footer class="entry-meta">` inside the `<article>` ("Dieser Eintrag
    wurde veröffentlicht in ... von ... Permanentlink."): HTML's footer of an article says
    who wrote it, when and where it is filed (denkanstoos-blog 0.238 -> 0.154)."""
    assert_keeps(
        rendered("denkanstoos-blog"),
        ["# DenkanStoos April 2012", "## Agenda", "Presentations (15 mins)"],
        ["Dieser Eintrag wurde", "Permanentlink"],
    )


@pytest.mark.parametrize(
    ("footer", "kept"),
    [
        ('<footer class="entry-footer">Posted in News by Jane.</footer>', False),
        ('<footer class="footnotes"><p>1. Jane Doe, Parsers, 2020.</p></footer>', True),
        ("<footer><h2>Sources</h2><p>Jane Doe, Parsers, 2020.</p></footer>", True),
        (f"<footer><p>{'Jane Doe wrote a long closing note here. ' * 4}</p></footer>", True),
    ],
)
def test_only_a_short_article_footer_without_notes_is_left_out(footer: str, kept: bool) -> None:
    page = parse_html(
        f"<article><h1>Title</h1><p>{'Running text of the post. ' * 8}</p>{footer}</article>"
    ).source
    assert ("Jane" in page) is kept


def test_a_dateline_in_the_headlines_header_goes_when_no_paragraph_follows() -> None:
    """A post that is an agenda (a list, no paragraph of running text) gives the dateline
    rule no text to look between; the `<header>` holding its headline still marks its
    byline and date (denkanstoos-blog 0.154 -> 0.083)."""
    assert_keeps(
        rendered("denkanstoos-blog"),
        ["# DenkanStoos April 2012", "Moderator: Hass Chapman"],
        ["11/04/2012", "Veröffentlicht am"],
    )


def test_a_date_in_a_headerless_list_post_stays() -> None:
    # No `<header>` around the headline: nothing marks the date as the post's.
    page = parse_html(
        "<article><h1>Agenda</h1><div>Meeting on 11/04/2012 at the office</div>"
        "<ol><li>Talks</li><li>Discussion</li></ol></article>"
    ).source
    assert "11/04/2012" in page


def test_a_byline_bar_just_before_the_headline_is_left_out() -> None:
    """Boing Boing's `div.navbyline` ("Cory Doctorow / 10:08 am Fri Jul 19, 2013") sits
    above the headline's box, after an emptied ad slot: a dateline before the headline
    (boingboing-blog 0.036 -> 0.020)."""
    assert_keeps(
        rendered("boingboing-blog"),
        ["# Hating Millennials", "Cartoonist Matt Bors got a spot on CNN"],
        ["Jul 19, 2013", "10:08 am Fri"],
    )


def test_a_dated_paragraph_before_the_headline_is_not_its_dateline() -> None:
    # Only an element that is no sentence: a dated paragraph of text stays.
    page = parse_html(
        "<article><p>On Jul 19, 2013 the council met and voted on the budget.</p>"
        f"<div><h1>Budget</h1></div><p>{'Running text of the post. ' * 8}</p></article>"
    ).source
    assert "Jul 19, 2013" in page


def test_a_long_comment_thread_under_a_post_is_left_out() -> None:
    """A WordPress post with 35 comments in `<ol id="commentlist">`: the comments say
    eight times what the post does, which made the page look like a thread (an issue, a
    forum topic) whose named posts are its text. The post has paragraphs of its own, so
    its comments are furniture (internet-law-blog 0.894 -> 0.061)."""
    assert_keeps(
        rendered("internet-law-blog"),
        ["Google+ hat nunmehr mehrfach die Profile solcher Nutzer gesperrt"],
        ["Comment by Mirko Lange", "Das Kriterium der Zumutbarkeit wurde aber nicht"],
    )


def test_cards_whose_captions_are_one_link_are_a_link_list() -> None:
    """The Latvian broadcaster's related and "Populārākie" cards: an `<article>` each,
    a picture link and a `<figcaption>` that is the headline's link and nothing else.
    Such a caption is a link on a line of its own, not a caption's text with a link in
    it (lsm-news 0.659 -> 0.141)."""
    assert_keeps(
        rendered("lsm-news"),
        ["# Norvēģijā pēc zemes nogruvuma pieci bojāgājušie", "Nogruvuma rezultātā"],
        [
            "Pēc ieceļošanas Norvēģijā būs obligāti jāveic Covid-19 tests",
            "Tests: Noskaidro, vai esi gudrs vai vēl gudrāks?",
        ],
    )


def test_a_caption_with_a_link_in_its_text_stays() -> None:
    page = parse_html(
        f"<article><p>{'Running text of the story. ' * 10}</p><figure><img src=a.jpg>"
        "<figcaption>The bridge in 1920, <a href='/archive'>from the archive</a></figcaption>"
        "</figure><p>More text.</p></article>"
    ).source
    assert "from the archive" in page


def test_a_slider_of_excerpt_tiles_is_left_out() -> None:
    """A party group's press release under a slider of tiles of other releases: each
    tile a picture link, a date, a `<span>` headline, an excerpt cut with "..." and a
    "weiter lesen" link, so neither a link list nor a list of headline links
    (cdu-fraktion-erfurt 0.472 -> 0.000)."""
    assert_keeps(
        rendered("cdu-fraktion-erfurt"),
        ["Ein positives Signal gab es diese Woche für die Waldorfschule in Bischleben."],
        ["Kein Elefantengedächtnis in der Verwaltung", "weiter lesen"],
    )


def test_paragraphs_that_end_in_an_ellipsis_are_no_tiles() -> None:
    # Without a link away in each, boxes of one class ending in "..." stay.
    boxes = "".join(f"<div class='quote'>Then she said {n}...</div>" for n in range(3))
    page = parse_html(f"<article><p>{'Running text. ' * 10}</p>{boxes}</article>").source
    assert "Then she said 2..." in page
