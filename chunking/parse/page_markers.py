"""The page marker comments of Layout output, shared by the markdown and the HTML reader.

Azure's Document Layout skill (Document Intelligence markdown) and the Content
Understanding skill write a PDF's page furniture as HTML comments: `<!-- PageBreak -->`
between pages, `<!-- PageHeader="..." -->`, `<!-- PageFooter="..." -->` and
`<!-- PageNumber="..." -->` on each page. The patterns here match what lies between
`<!--` and `-->`, so each reader wraps them the way its input needs.
"""

from __future__ import annotations

from typing import Final

PAGE_MARKER_BODY: Final = r"[ \t]*(?:PageBreak|Page(?:Header|Footer|Number)=\"[^\"\r\n]*\")[ \t]*"
"""A page marker comment's text: a break, or a header, footer or page number with its
text in double quotes (metadata: never content)."""
PAGE_BREAK_BODY: Final = r"[ \t]*PageBreak[ \t]*"
"""A page break comment's text: the next page begins after it."""
