"""Shared bits of both client variants (token bootstrap, account form), so the variants differ only in
pagination, 429 handling and error handling."""
PREFIX = "/partner/v2"
SCOPE = "partner:all user:all account:all transaction:all"


class ApiError(Exception):
    def __init__(self, response):
        try:
            problem = response.json()
        except ValueError:
            problem = {}
        detail = problem.get("detail", response.text[:200])
        super().__init__(f"{response.status_code} {problem.get('title', '')}: {detail}")
        self.response = response
