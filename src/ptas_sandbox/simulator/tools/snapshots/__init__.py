"""World snapshots: export a world as one versioned JSON document, import it as a new world."""
