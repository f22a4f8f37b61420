"""The thin ``pfssim`` command line over the library."""
