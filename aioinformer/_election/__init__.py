"""Leader election on a coordination.k8s.io/v1 Lease: the Lease's pure rules (and the names it
needs), one candidate's requests, leadership terms and the campaign loop."""
