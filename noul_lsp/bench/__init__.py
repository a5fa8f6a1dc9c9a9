"""`noul bench`: retrieval quality and speed on external labels, with baselines."""
