"""Builds of bots in other languages: the toolchains, the sandboxed build, the packer."""
