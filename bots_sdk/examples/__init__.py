"""Example bots (plain files, as authors write them): ``ducker.py`` and ``dumper.py``."""
