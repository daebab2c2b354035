"""The datasets the real-data pipelines read: a registry, a local store and fetching.

``osustat.data.registry`` lists every dataset (upstream URL at a pinned commit or a build recipe,
SHA-256 and size per file, license); ``osustat.data.store`` finds, verifies and fetches copies
and turns ``--data`` values into paths (``resolve_data``); ``osustat.data.recipes`` builds the
prepared files from their upstream blobs. Nothing here downloads unless ``fetch`` is called.
"""
