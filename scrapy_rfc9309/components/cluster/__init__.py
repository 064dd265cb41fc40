"""The cluster: a site's requests spaced across every crawler process (Redis).

The pacer that asks the shared clock for each site's turn, what it keeps
when Redis stalls, and the downloader middleware that waits for the turn
when the scheduler queue is not ours.
"""
