"""The inspector (issue 13): a small server-rendered web app showing one world, reached with its token."""
