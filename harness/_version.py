"""The package version, in a module of its own so that submodules can read it while the package
itself is still importing."""

__version__ = "0.1.0"
