"""The Hearts engine of Bidel: rules, deterministic seeded deals, game state and records.

Pure Python, standard library only; it never imports Django. It is the referee of every
match on the platform and the simulator bots use inside their own code.
"""

__version__ = "0.1.0"
