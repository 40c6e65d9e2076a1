"""Replicas of a controller group sharing its work: membership over Leases, the consistent-hash
ring of shard ranges, their hand-over, and the sharded controller."""
