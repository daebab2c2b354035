"""Reading inputs into the long records schema (docs/inputs.md).

:mod:`.reading` reads CSV, JSON Lines and Parquet tables (typed records or raw rows with their
file lines); :mod:`.evidence` reads evidence annotations and scores one retrieval against them;
:mod:`.inputs` turns raw retrievals + evidence into records; :mod:`.trec` does the same for TREC
runs + qrels. The public entry points are exported from :mod:`osustat`.
"""
