<?php
// The application behind SimpleSAMLphp: /app.php signs in (SP-initiated) and answers what the SP accepted as JSON;
// /app.php?logout=1 starts single logout; /app.php?state=1 only says whether a session exists.
require_once '/usr/share/simplesamlphp/lib/_autoload.php';
$as = new \SimpleSAML\Auth\Simple('default-sp');
if (isset($_GET['logout'])) {
    $as->logout(getenv('SSP_BASE') . 'app.php?state=1');
}
if (!isset($_GET['state'])) {
    $as->requireAuth();
}
header('Content-Type: application/json');
if (!$as->isAuthenticated()) {
    echo json_encode(['authenticated' => false]);
    exit;
}
$nameId = $as->getAuthData('saml:sp:NameID');
echo json_encode([
    'authenticated' => true,
    'idp' => $as->getAuthData('saml:sp:IdP'),
    'name_id' => $nameId ? $nameId->getValue() : null,
    'name_id_format' => $nameId ? $nameId->getFormat() : null,
    'session_index' => $as->getAuthData('saml:sp:SessionIndex'),
    'attributes' => $as->getAttributes(),
]);
