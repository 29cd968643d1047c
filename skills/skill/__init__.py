"""The custom Web API skill: the app, its wire format (records in, chunk records out),
its settings, workers and service.

Above `skills.embedding`, below `skills.search` (tests/project/test_dependencies.py holds the rule).
"""
