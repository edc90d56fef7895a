"""The Bidel bot SDK: what a bot author installs to write, run and test a Hearts bot.

Built on ``engine``; it never imports Django, so bots and the match runner work anywhere.
"""

__version__ = "0.1.0"
