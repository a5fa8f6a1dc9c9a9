"""Query-time retrieval: BM25, dense cosine, fusion, and the engine facade that runs them."""
