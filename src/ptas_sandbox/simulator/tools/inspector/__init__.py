"""The inspector: a small server-rendered web app showing one world, reached with its token."""
