"""Openings, not postings: the postings of one job across the sites clustered into one opening.

farm.openings.names (company names: legal forms, places, brand ↔ legal-name pairs), .titles (titles without
their decorations, compared by character bigrams), .details and .evidence (place, pay, degree and
experience weighed for or against a join), .cluster (incremental, deterministic clustering that says why
each posting joined), .stored (the openings kept, read by their blocking keys). See docs/openings.md.
"""
