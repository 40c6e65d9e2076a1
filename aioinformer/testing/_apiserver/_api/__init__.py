"""The fake server's vocabulary: the resources it serves, the one failure exception and
the ``Status`` bodies it answers with."""
