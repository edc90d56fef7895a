"""The arena's pure code: what the platform decides, apart from where it is stored.

- :mod:`.ratings`: the rating model (Plackett–Luce on the Elo scale) and live Elo;
- :mod:`.scheduling`: round robins, Swiss rounds, the SPRT, head-to-head counts, standings order;
- :mod:`.formats`: the tournament formats' registry (what differs between formats);
- :mod:`.cron`: repeat schedules;
- :mod:`.pairing`: the ladder's pairing, its random source passed in;
- :mod:`.rows`: the frozen rows the reads hand out (rankings, standings).

None of it imports a model or the database at run time (``tests/test_layout.py`` holds it):
the services read and write rows, then hand plain values here.
"""
