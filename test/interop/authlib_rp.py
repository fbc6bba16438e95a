"""A Python relying party on Authlib (Debian's python3-authlib), unchanged, against a running server, configured from
the spec's RFC 8414 discovery document (DISCOVERY_PATH) with scope `openid profile email`.

Driven by test/e2e/oidc-authlib.test.ts. It plays both the relying party (Authlib's OAuth2Session with PKCE S256,
id_token validation with Authlib's CodeIDToken: signature from jwks_uri, iss, aud, exp, iat, nonce, at_hash) and the
person in the browser (a requests.Session that fills in the hosted login and consent forms). Prints one JSON object.
"""
import html
import json
import os
import re
import sys
from urllib.parse import parse_qs, urlsplit

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session, OAuthError
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

BASE_URL = os.environ["BASE_URL"]
CLIENT_ID = os.environ["CLIENT_ID"]
CLIENT_SECRET = os.environ["CLIENT_SECRET"]
REDIRECT_URI = os.environ["REDIRECT_URI"]
POST_LOGOUT_REDIRECT_URI = os.environ["POST_LOGOUT_REDIRECT_URI"]
EMAIL = os.environ["USER_EMAIL"]
PASSWORD = os.environ["USER_PASSWORD"]
DISCOVERY_PATH = os.environ.get("DISCOVERY_PATH", "/api/oauth/.well-known/oauth-authorization-server")


def csrf_of(page):
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def follow_browser(browser, url):
    """The person: sign in on the hosted page, approve on the consent page; returns the callback URL."""
    res = browser.get(url, allow_redirects=False)
    location = res.headers["Location"]
    if "/login?" in location:
        page = browser.get(location)
        return_to = html.unescape(re.search(r'name="return_to" value="([^"]+)"', page.text).group(1))
        signed_in = browser.post(
            BASE_URL + "/login",
            data={"email": EMAIL, "password": PASSWORD, "return_to": return_to, "csrf": csrf_of(page.text)},
            allow_redirects=False,
        )
        res = browser.get(signed_in.headers["Location"], allow_redirects=False)
        location = res.headers["Location"]
    if location.startswith(BASE_URL + "/consent"):
        page = browser.get(location)
        request_id = re.search(r'name="request_id" value="([^"]+)"', page.text).group(1)
        approved = browser.post(
            BASE_URL + "/consent",
            data={"request_id": request_id, "decision": "approve", "csrf": csrf_of(page.text)},
            allow_redirects=False,
        )
        location = approved.headers["Location"]
    return location


def validate_id_token(id_token, jwks, issuer, access_token, nonce=None):
    params = {"client_id": CLIENT_ID, "access_token": access_token}
    if nonce is not None:
        params["nonce"] = nonce
    claims = jwt.decode(
        id_token,
        JsonWebKey.import_key_set(jwks),
        claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": issuer}},
        claims_params=params,
    )
    claims.validate()
    return dict(claims)


def main():
    # The spec's RFC 8414 discovery document (default configuration): its issuer is what the id_token must carry.
    metadata = requests.get(BASE_URL + DISCOVERY_PATH).json()
    jwks = requests.get(metadata["jwks_uri"]).json()
    rp = OAuth2Session(
        CLIENT_ID,
        CLIENT_SECRET,
        scope="openid profile email",
        redirect_uri=REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic",
    )
    code_verifier = generate_token(48)
    nonce = generate_token(20)
    authorization_url, state = rp.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=code_verifier, nonce=nonce
    )

    browser = requests.Session()
    callback = follow_browser(browser, authorization_url)
    # RFC 9207 (announced by authorization_response_iss_parameter_supported): the response names its issuer.
    callback_iss = parse_qs(urlsplit(callback).query).get("iss", [None])[0]
    if metadata.get("authorization_response_iss_parameter_supported") and callback_iss != metadata["issuer"]:
        raise SystemExit("authorization response iss %r is not the issuer %r" % (callback_iss, metadata["issuer"]))
    token = rp.fetch_token(
        metadata["token_endpoint"], authorization_response=callback, state=state, code_verifier=code_verifier
    )
    claims = validate_id_token(token["id_token"], jwks, metadata["issuer"], token["access_token"], nonce)
    userinfo = rp.get(metadata["userinfo_endpoint"]).json()

    refreshed = rp.refresh_token(metadata["token_endpoint"], refresh_token=token["refresh_token"])
    refreshed_claims = validate_id_token(refreshed["id_token"], jwks, metadata["issuer"], refreshed["access_token"])

    logout = browser.get(
        metadata["end_session_endpoint"],
        params={
            "id_token_hint": refreshed["id_token"],
            "post_logout_redirect_uri": POST_LOGOUT_REDIRECT_URI,
            "state": "authlib-bye",
        },
        allow_redirects=False,
    )
    try:
        rp.refresh_token(metadata["token_endpoint"], refresh_token=refreshed["refresh_token"])
        refresh_after_logout = "accepted"
    except OAuthError as err:
        refresh_after_logout = err.error

    json.dump(
        {
            "issuer": metadata["issuer"],
            "callback_iss": callback_iss,
            "claims": claims,
            "userinfo": userinfo,
            "refreshed_claims": refreshed_claims,
            "logout_status": logout.status_code,
            "logout_location": logout.headers.get("Location"),
            "refresh_after_logout": refresh_after_logout,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
