"""The one retrieval core both faces share: lexical (BM25), vector and graph legs,
reciprocal rank fusion, rerankers, the filter language and ranked-list cursors."""
