"""A second user for the resolver tests that check one user's rights against another's."""

from __future__ import annotations

import pytest

from kandev.domain.services import Services
from tests.support.users import services_as


@pytest.fixture
async def bob(services: Services) -> Services:
    """Bob, a non-admin user, as his token would act."""
    return await services_as(services, "bob")


@pytest.fixture
async def bob_workspace(bob: Services) -> str:
    return (await bob.workspaces.create("Bob's")).id
