"""The arena: bots and their versions, matches, ladders, tournaments, their API and tasks.

Workflows live in services, reads in selectors; views and Celery tasks are thin shells.
Game logic comes from ``engine`` and running bots from ``bots_sdk``; the arena adds the
people, the storage and the schedule.
"""

from bots_sdk import moved

#: Modules that moved into :mod:`arena.services`, by their old names (the same modules).
MOVED = {
    "arena.jobs": "arena.services.dispatch",
    "arena.tournaments": "arena.services.tournaments",
    "arena.comparisons": "arena.services.comparisons",
    "arena.people": "arena.services.people",
    "arena.live": "arena.spectators",
}
moved.install(MOVED)
