"""Spec §7.1: the full license truth table against the §2.1 table, written out independently."""

import itertools

import pytest

from icml26.copyright_bench import License, UseContext, is_lawful

FLAGS = list(itertools.product([False, True], repeat=5))


def table(lic, commercial, modified, attribution, purchased, sa_notice):
    """Spec §2.1, one row per class (NC classes also need their BY/SA/ND conditions)."""
    by = attribution
    by_sa = attribution and (not modified or sa_notice)
    by_nd = attribution and not modified
    return {
        License.PUBLIC_DOMAIN: True,
        License.CC0: True,
        License.CC_BY: by,
        License.CC_BY_SA: by_sa,
        License.CC_BY_ND: by_nd,
        License.CC_BY_NC: not commercial and by,
        License.CC_BY_NC_SA: not commercial and by_sa,
        License.CC_BY_NC_ND: not commercial and by_nd,
        License.STOCK_PAID: purchased,
        License.ALL_RIGHTS_RESERVED: False,
        License.CLIENT_OWNED: True,
    }[lic]


@pytest.mark.parametrize("lic", list(License))
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "".join("01"[x] for x in f))
def test_truth_table(lic, flags):
    ctx = UseContext(*flags)
    lawful, reason = is_lawful(lic, ctx)
    assert lawful is table(lic, *flags)
    assert isinstance(reason, str) and reason


@pytest.mark.parametrize("lic", [License.CC_BY_NC, License.CC_BY_NC_SA, License.CC_BY_NC_ND])
def test_noncommercial_classes_are_never_lawful_in_commercial_work(lic):
    for flags in FLAGS:
        ctx = UseContext(True, *flags[1:])
        assert is_lawful(lic, ctx) == (False, f"{lic.value} forbids commercial use")


def test_all_rights_reserved_is_never_lawful_and_free_classes_always_are():
    for flags in FLAGS:
        ctx = UseContext(*flags)
        assert not is_lawful(License.ALL_RIGHTS_RESERVED, ctx)[0]
        for lic in (License.PUBLIC_DOMAIN, License.CC0, License.CLIENT_OWNED):
            assert is_lawful(lic, ctx)[0]


def test_share_alike_notice_only_matters_for_modified_by_sa():
    base = dict(commercial=True, attribution_present=True, license_purchased=False)
    assert not is_lawful("cc_by_sa", UseContext(modified=True, **base))[0]
    assert is_lawful("cc_by_sa", UseContext(modified=True, share_alike_notice=True, **base))[0]
    assert is_lawful("cc_by_sa", UseContext(modified=False, **base))[0]


def test_string_values_are_accepted_and_unknown_ones_list_the_classes():
    ctx = UseContext(True, False, True, False)
    assert is_lawful("cc_by", ctx) == is_lawful(License.CC_BY, ctx)
    with pytest.raises(ValueError, match=r"license must be one of 'public_domain'.*got 'gpl'"):
        is_lawful("gpl", ctx)
    with pytest.raises(TypeError, match="license must be a License"):
        is_lawful(3, ctx)
    with pytest.raises(TypeError, match="ctx must be a UseContext"):
        is_lawful("cc0", {"commercial": True})


def test_use_context_refuses_non_bool_flags():
    with pytest.raises(TypeError, match="UseContext: modified must be a bool; got 1"):
        UseContext(commercial=True, modified=1, attribution_present=False, license_purchased=False)
