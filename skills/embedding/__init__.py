"""Embedding providers and pair scorers: the vectors and scores the skill and the scored
strategies use, with their app settings; no wire format here.

Above `chunking`, below `skills.skill` (tests/project/test_dependencies.py holds the rule).
"""
