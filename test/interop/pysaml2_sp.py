"""A SAML 2.0 service provider on Debian's python3-pysaml2 (with xmlsec1), unchanged, driven one step at a time by
test/e2e/saml-pysaml2.test.ts. Every check of what our IdP sends (signatures against the IdP metadata, InResponseTo,
Destination, Recipient, Audience, conditions) is pysaml2's own code.

Usage: pysaml2_sp.py <workdir> <operation> '<json>'  -> prints one JSON object.
The workdir holds the SP key and certificate (sp.key, sp.crt) and the IdP metadata (idp.xml).
"""

import json
import re
import sys
from urllib.parse import parse_qs, urlparse

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS, NameID
from saml2.sigver import RSACrypto, verify_redirect_signature
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256


def client(workdir, args):
    base = args["base"]
    config = {
        "entityid": base + "/metadata",
        "key_file": workdir + "/sp.key",
        "cert_file": workdir + "/sp.crt",
        "xmlsec_binary": "/usr/bin/xmlsec1",
        "metadata": {"local": [workdir + "/idp.xml"]},
        "allow_unknown_attributes": True,
        "service": {
            "sp": {
                "endpoints": {
                    "assertion_consumer_service": [(base + "/acs", BINDING_HTTP_POST)],
                    "single_logout_service": [
                        (base + "/slo", BINDING_HTTP_REDIRECT if args.get("slo_binding", "redirect") == "redirect" else BINDING_HTTP_POST)
                    ],
                },
                "authn_requests_signed": bool(args.get("sign")),
                "logout_requests_signed": bool(args.get("sign")),
                "want_response_signed": True,
                "want_assertions_signed": True,
                "allow_unsolicited": True,
                "name_id_format": NAMEID_FORMAT_EMAILADDRESS,
                "signing_algorithm": SIG_RSA_SHA256,
                "digest_algorithm": DIGEST_SHA256,
            }
        },
    }
    if args.get("encrypted"):
        # The SP publishes an encryption key in its metadata and decrypts EncryptedAssertions with it (xmlsec1).
        config["encryption_keypairs"] = [{"key_file": workdir + "/sp.key", "cert_file": workdir + "/sp.crt"}]
    conf = SPConfig()
    conf.load(config)
    return Saml2Client(config=conf)


def idp_entity(c):
    return next(iter(c.metadata.identity_providers()))


def form_value(html, name):
    m = re.search(r'name="%s" value="([^"]*)"' % name, html)
    return m.group(1) if m else None


def out(info, binding):
    if binding == BINDING_HTTP_REDIRECT:
        return {"url": dict(info["headers"])["Location"]}
    html = info["data"]
    action = re.search(r'action="([^"]*)"', html).group(1)
    return {"url": action, "SAMLRequest": form_value(html, "SAMLRequest"), "RelayState": form_value(html, "RelayState")}


def main():
    workdir, op, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    c = client(workdir, args)
    binding = BINDING_HTTP_REDIRECT if args.get("binding") == "redirect" else BINDING_HTTP_POST
    sign = bool(args.get("sign"))
    if op == "metadata":
        from saml2.metadata import create_metadata_string

        print(json.dumps({"xml": create_metadata_string(None, c.config, 4, None, None, None, None, None).decode()}))
    elif op == "authn":
        kwargs = {}
        if args.get("force_authn"):
            kwargs["force_authn"] = "true"
        if args.get("is_passive"):
            kwargs["is_passive"] = "true"
        reqid, info = c.prepare_for_authenticate(
            entityid=idp_entity(c), relay_state=args.get("relay_state", ""), binding=binding, sign=sign, **kwargs
        )
        print(json.dumps({"id": reqid, **out(info, binding)}))
    elif op == "response":
        outstanding = {args["request_id"]: "/"} if args.get("request_id") else {}
        resp = c.parse_authn_request_response(args["SAMLResponse"], BINDING_HTTP_POST, outstanding)
        if resp is None:
            raise SystemExit("pysaml2 returned no response")
        assertion = resp.assertion
        print(
            json.dumps(
                {
                    "name_id": resp.name_id.text,
                    "name_id_format": resp.name_id.format,
                    "attributes": resp.get_identity(),
                    "session_index": assertion.authn_statement[0].session_index,
                    "issuer": resp.issuer(),
                    "in_response_to": resp.in_response_to,
                    "audience": [a.audience[0].text for a in assertion.conditions.audience_restriction],
                }
            )
        )
    elif op == "logout":
        name_id = NameID(format=NAMEID_FORMAT_EMAILADDRESS, text=args["name_id"])
        kwargs = {"sign_alg": SIG_RSA_SHA256, "digest_alg": DIGEST_SHA256} if sign else {}
        destination = c.metadata.single_logout_service(idp_entity(c), binding, "idpsso")[0]["location"]
        reqid, request = c.create_logout_request(
            destination, idp_entity(c), name_id=name_id, session_indexes=[args["session_index"]], sign=sign and binding == BINDING_HTTP_POST, **kwargs
        )
        info = c.apply_binding(binding, str(request), destination, relay_state=args.get("relay_state", ""), sign=sign, **kwargs)
        print(json.dumps({"id": reqid, **out(info, binding)}))
    elif op == "logout_response":
        if args["binding"] == "redirect":
            query = {k: v[0] for k, v in parse_qs(urlparse(args["url"]).query).items()}
            # The query signature, checked by pysaml2 against the IdP's certificate from its metadata.
            certs = c.metadata.certs(idp_entity(c), "idpsso", use="signing")
            if not any(verify_redirect_signature(query, RSACrypto(None), cert=cert) for cert in certs):
                raise SystemExit("the LogoutResponse query signature does not verify")
            response = c.parse_logout_request_response(query["SAMLResponse"], BINDING_HTTP_REDIRECT)
        else:
            response = c.parse_logout_request_response(args["SAMLResponse"], BINDING_HTTP_POST)
        print(json.dumps({"status": response.response.status.status_code.value, "in_response_to": response.in_response_to}))
    else:
        raise SystemExit("unknown operation " + op)


main()
