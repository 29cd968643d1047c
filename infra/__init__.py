"""Deployment of the chunking skill to Azure and its wiring into Azure AI Search.

`search_definitions` builds the data source, index, skillset and indexer with the
azure-search-documents models; `checks` cross-checks them; `deploy` applies them;
`replay` plays an indexer against a local endpoint. Bicep templates live beside them.
"""
