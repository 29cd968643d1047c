"""The Azure AI Search custom Web API skill around the chunking core.

This package owns the wire format (`values`, `recordId`, `data`, `errors`,
`warnings`) and the HTTP surface; `chunking/` knows nothing about Azure.
"""

from __future__ import annotations

__version__ = "0.1.0"
"""The skill's version, reported by `GET /api/health`; kept equal to pyproject.toml's."""
