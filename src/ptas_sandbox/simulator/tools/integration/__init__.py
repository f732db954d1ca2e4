"""The integration report: a world's recorded traffic judged against the spec and good practice."""
