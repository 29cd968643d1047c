"""Shared test support: local HTTP stubs of the services the skill calls (OpenAI and Azure
OpenAI, chat, Azure AI Search, rerank). Tests and benchmarks import it; the product never
does, and the wheel leaves it out (pyproject.toml)."""
