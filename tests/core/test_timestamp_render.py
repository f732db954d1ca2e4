"""Spec §2 date-time shape at the edges of the calendar (found by the fuzzer: a world clock set to year 607)."""

from ptas_sandbox.simulator.timestamps import parse, render


def test_a_year_before_1000_keeps_four_digits():
    assert render(parse("0607-08-30T14:20:52.7000310Z")) == "0607-08-30T14:20:52.7000310Z"
