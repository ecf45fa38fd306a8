"""The sign-in windows on their own: a device cookie counts only for its own token."""

from __future__ import annotations

from memserver.console.throttle import SignInLimits, SignInThrottle


def test_a_device_cookie_holds_for_its_token_only_and_counts_apart() -> None:
    throttle = SignInThrottle(SignInLimits(per_address=2, per_prefix=2, per_device=2))
    cookie = throttle.device_cookie("ms_owner-secret")
    device = throttle.device(cookie, "ms_owner-secret")
    assert device is not None
    assert throttle.device(cookie, "ms_other-secret") is None  # no proof for another token
    assert throttle.device(cookie + "x", "ms_owner-secret") is None  # tampered
    assert throttle.device(None, "ms_owner-secret") is None
    assert SignInThrottle().device(cookie, "ms_owner-secret") is None  # another console's key

    for n in range(2):  # the address and the owner's prefix are both used up
        throttle.failed("127.0.0.1", f"ms_owner-wrong{n}")
    assert throttle.retry_after("127.0.0.1", "ms_owner-secret") is not None
    assert throttle.retry_after("127.0.0.1", "ms_owner-secret", device) is None
    # the device's own failures (a revoked token) hold back that device only
    throttle.failed("127.0.0.1", "ms_owner-secret", device)
    throttle.failed("127.0.0.1", "ms_owner-secret", device)
    assert throttle.retry_after("127.0.0.1", "ms_owner-secret", device) is not None
    assert throttle.by_address.retry_after("10.0.0.2") is None
