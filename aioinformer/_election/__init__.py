"""Leader election on a coordination.k8s.io/v1 Lease: the Lease's pure rules, one
candidate's requests, leadership terms and the campaign loop."""
