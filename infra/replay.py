"""`python -m infra.replay`: replay an Azure AI Search indexer's calls against the skill.

The indexer emulation itself is `skills.search.indexer`.
"""

from __future__ import annotations

import sys

from skills.search.indexer import main

if __name__ == "__main__":
    sys.exit(main())
