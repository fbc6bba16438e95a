"""Machine-to-machine with Authlib (Debian's python3-authlib), unchanged: client_credentials against a running server.

Driven by test/interop/apps-libraries.test.ts. Authlib's OAuth2Session authenticates with client_secret_basic and
asks for a token for one API (RFC 8707 resource); prints the token response as JSON.
"""
import json
import os

import requests
from authlib.integrations.requests_client import OAuth2Session

BASE_URL = os.environ["BASE_URL"]
metadata = requests.get(BASE_URL + "/.well-known/openid-configuration", timeout=10).json()
session = OAuth2Session(
    os.environ["CLIENT_ID"],
    os.environ["CLIENT_SECRET"],
    token_endpoint_auth_method="client_secret_basic",
    scope=os.environ["SCOPE"],
)
token = session.fetch_token(metadata["token_endpoint"], grant_type="client_credentials", resource=os.environ["RESOURCE"])
print(json.dumps(dict(token)))
