<?php
// One SP: signs its AuthnRequests and LogoutRequests (HTTP-Redirect, RSA-SHA256), asks for the email NameID.
// SSP_ENCRYPTED=1 makes it demand encrypted assertions (it decrypts them with its own key).
$config = [
    'default-sp' => [
        'saml:SP',
        'entityID' => getenv('SSP_BASE') . 'sp',
        'idp' => getenv('SSP_IDP'),
        'privatekey' => 'sp.key',
        'certificate' => 'sp.crt',
        'sign.authnrequest' => true,
        'sign.logout' => true,
        'redirect.sign' => true,
        'signature.algorithm' => 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
        'NameIDPolicy' => ['Format' => 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', 'AllowCreate' => true],
        'assertion.encryption' => getenv('SSP_ENCRYPTED') === '1',
    ],
];
