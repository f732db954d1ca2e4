"""The API reference page (/docs) and the home page (/): what a newcomer opens first."""
