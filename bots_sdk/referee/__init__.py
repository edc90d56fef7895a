"""The referee: matches, players and their seats, the runner jobs, statistics and replay frames."""
