"""The Azure AI Search side: index and skillset definitions, their cross-checks, the
indexer emulation, and the ingestion paths (push, Spark) and retrieval.

Above `skills.skill`, below `infra`'s command lines
(tests/project/test_dependencies.py holds the rule).
"""
