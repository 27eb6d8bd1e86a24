"""The FileSystem offload: the per-run workspace sandbox (``workspace``) and the plugin
whose tools page through offloaded results (``plugin``)."""
