"""Small helpers shared by the unit tests."""

import asyncio


def run(coro):
    """Run one of a component's ``async def`` methods to completion."""
    return asyncio.run(coro)
