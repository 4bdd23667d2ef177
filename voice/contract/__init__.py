"""The contract between the simulator and an assistant: what a policy is asked and answers (``policy``), the
turn-taking figures both sides tune (``tuning``), who may call a server (``access``).

Both sides import it, the caller's library and ``server/`` alike; it imports neither.
"""
