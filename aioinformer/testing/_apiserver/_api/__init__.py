"""The fake server's vocabulary: the object type, the resources it serves, the one failure
exception and the ``Status`` bodies it answers with."""
