"""The depth and alias limits cost no class per operation (a class is a reference cycle for the full GC)."""

from __future__ import annotations

import gc

from kandev.graphql.schema.limits import AliasLimit, DepthLimit


def test_every_operation_shares_the_same_depth_and_alias_rules():
    assert DepthLimit().validation_rules == DepthLimit().validation_rules
    assert AliasLimit().validation_rules == AliasLimit().validation_rules


def test_making_the_limit_extensions_for_an_operation_leaves_no_cyclic_garbage():
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            DepthLimit(), AliasLimit()
        assert gc.collect() == 0
    finally:
        gc.enable()
