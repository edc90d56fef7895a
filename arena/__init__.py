"""The arena: bots and their versions, matches, ladders, tournaments, their API and tasks.

Workflows live in services, reads in selectors; views and Celery tasks are thin shells.
Game logic comes from ``engine`` and running bots from ``bots_sdk``; the arena adds the
people, the storage and the schedule.
"""

from bots_sdk import moved

#: Modules that moved (into :mod:`arena.services`, :mod:`arena.domain`), by their old names:
#: the same modules.
MOVED = {
    "arena.jobs": "arena.services.dispatch",
    "arena.tournaments": "arena.services.tournaments",
    "arena.comparisons": "arena.services.comparisons",
    "arena.people": "arena.services.people",
    "arena.live": "arena.spectators",
    "arena.ratings": "arena.domain.ratings",
    "arena.scheduling": "arena.domain.scheduling",
    "arena.formats": "arena.domain.formats",
    "arena.cron": "arena.domain.cron",
    "arena.pairing": "arena.domain.pairing",
}
moved.install(MOVED)
