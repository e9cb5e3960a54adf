"""Openings, not postings: the postings of one job across the sites clustered into one opening.

farm.openings.names (company names: legal forms, places, brand ↔ legal-name pairs), .titles (titles without
their decorations, compared by character bigrams), .cluster (incremental, deterministic clustering that
says why each posting joined). See docs/openings.md.
"""
