"""Partner clients written blind for issue 36, from the spec and docs/chaos.md alone, by someone who had not read
the report's rules: a careful threaded client, a careful asyncio client (httpx.AsyncClient) and a naive client
with 19 mistakes (MANIFEST.md says what each does and which requests show each mistake). Kept as they were
written but for their imports; the report is proven on them in tests/integration/test_blind_clients.py."""
