"""The arena's tables (bots, versions, matches, ladders, tournaments) arrive with their issues."""
