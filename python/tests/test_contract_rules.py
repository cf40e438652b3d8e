"""a4w4check.contract's rules of the shape (contracts §4.2 "The file form"): the contract a
rule file gives one shape, and the per-M rules python -m a4w4check.invariance
--discover-breaks writes from the contracts discover found on both sides of a break."""
import pytest

from a4w4check import contract, invariance


def test_padded_m_is_getpaddedm_gl0():
    # contracts §5.1: to 16 up to 256, to 32 up to 1024, to 64 up to 4096, then to 128
    got = [contract.padded_m(m) for m in (1, 16, 17, 256, 257, 1024, 1025, 4096, 4097)]
    assert got == [16, 16, 32, 256, 288, 1024, 1088, 4096, 4224]


def test_the_first_rule_that_holds_gives_the_contract():
    lines = contract.rules("# c\nwhen Mpad<=32, K%256==0: ordered(2)\n"
                           "when N==64,M>3: ordered(4)\nordered(1)\n")
    assert contract.rule_at(lines, 32, 8, 512) == "ordered(2)"
    assert contract.rule_at(lines, 33, 8, 512) == "ordered(1)"
    assert contract.rule_at(lines, 32, 64, 288) == "ordered(4)"
    assert contract.rule_at(lines, 3, 64, 288) == "ordered(1)"
    assert contract.rule_at(lines[:2], 3, 64, 288) is None


@pytest.mark.parametrize("bad", ["when M>>3: exact", "when Q==1: exact", "when M==1 exact"])
def test_a_malformed_rule_is_refused(bad):
    with pytest.raises(ValueError):
        contract.rule_at([bad], 1, 1, 1)


def _m(M, verdict, N=64, K=512):
    return {"M": M, "N": N, "K": K, "verdict": verdict}


def test_breaks_are_the_neighbours_that_change_verdict():
    got = invariance._breaks([_m(1, "invariant"), _m(4, "variant"), _m(3, "invariant"),
                              _m(33, "invariant"), _m(32, "variant"),
                              _m(1, "invariant", N=8), _m(65, "invariant", N=8)])
    assert got == {(64, 512): [3, 4, 32, 33], (8, 512): [1]}


def test_per_m_rules_give_each_probed_m_its_contract():
    found = {3: "ordered(1)", 4: "ordered(2)", 32: "ordered(2)", 33: "ordered(1)"}
    lines = invariance._rules((64, 512), found)
    for m, c in found.items():
        assert contract.rule_at(lines, m, 64, 512) == c
    assert contract.rule_at(lines, 1, 64, 512) == "ordered(1)"
    assert contract.rule_at(lines, 20, 64, 512) == "ordered(2)"  # between 4 and 32
    assert contract.rule_at(lines, 40, 64, 512) == "ordered(1)"
    assert contract.rule_at(lines, 40, 64, 256) is None  # another pair: its own rules


@pytest.mark.parametrize("pred", ["Mpad==17", "Mpad<=0", "Mpad==272", "Mpad<16", "K%32==5",
                                  "K==33", "K<32", "M<=0", "N==0", "Mpad % 32 == 8"])
def test_a_predicate_no_shape_reaches_is_refused_naming_file_line_and_why(tmp_path, pred):
    f = tmp_path / "r.contract"
    f.write_text(f"# discovered by hand\nwhen K>=64: ordered(2)\nwhen {pred}: exact\nordered(1)\n")
    with pytest.raises(ValueError) as e:
        contract.resolve(str(f))
    assert f"contract file {f}: line 3: predicate {pred!r} holds for no shape: " in str(e.value)


def test_reachable_predicates_are_exactly_those_some_shape_satisfies():
    # held to a search over shapes (M, N from 1, K a multiple of 32 from 32; Mpad getPaddedM's
    # value of every M up to 13,184, past which the buckets repeat every 128) through the rule
    # evaluator, never through unreachable()
    domain = {"M": range(1, 401), "N": range(1, 401), "K": range(32, 32 * 141, 32),
              "Mpad": sorted({contract.padded_m(m) for m in range(1, 4224 + 128 * 70)})}
    preds = [f"Mpad=={v}" for v in range(0, 1200)]
    preds += [f"{d}{op}{v}" for d in ("M", "N", "K", "Mpad") for op in ("<", "<=", "==", ">", "!=")
              for v in range(0, 300, 7)]
    preds += [f"{d}%{m}=={r}" for d in ("K", "Mpad", "N") for m in range(1, 70) for r in range(m)]
    for p in preds:
        dim = "Mpad" if p.startswith("Mpad") else p[0]
        reached = any(contract._holds(p, {dim: x}) for x in domain[dim])
        assert (contract.unreachable(p) is None) == reached, p


def test_every_predicate_of_a_discovered_file_is_accepted(tmp_path):
    f = tmp_path / "d.contract"
    f.write_text("# discovered by a4w4check discover\nwhen Mpad<=32: ordered(2)\n"
                 "when Mpad>=48,Mpad<=544: ordered(1)\nwhen K<=2080: ordered(1)\n"
                 "when K>1056: tree(split=0/1056)\nwhen M==8,N==64,K==128: exact\nordered(1)\n")
    assert contract.resolve(str(f)).startswith("when Mpad<=32")
