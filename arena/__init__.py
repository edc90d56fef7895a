"""The arena: bots and their versions, matches, ladders, tournaments, their API and tasks.

Workflows live in services, reads in selectors; views and Celery tasks are thin shells.
Game logic comes from ``engine`` and running bots from ``bots_sdk``; the arena adds the
people, the storage and the schedule.
"""
