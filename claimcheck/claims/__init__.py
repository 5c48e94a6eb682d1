"""Claim files in: YAML read safely, validated field by field, built into typed claims, grids expanded.

The typed claim itself (:mod:`claimcheck.claim`) sits at the package's top level, since every stage reads it.
"""
