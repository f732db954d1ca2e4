"""The integration report (issue 14): a world's recorded traffic judged against the spec and good practice."""
