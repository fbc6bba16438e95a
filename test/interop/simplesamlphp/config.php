<?php
// SimpleSAMLphp (Debian's package, unchanged) as a SAML service provider for test/e2e/saml-simplesamlphp.test.ts.
// Everything that differs per run comes from the environment: SSP_BASE (http://127.0.0.1:<port>/), SSP_DIR (a
// throwaway directory with cert/, log/, data/, tmp/ and idp.xml, our /saml/metadata).
$dir = getenv('SSP_DIR');
$config = [
    'baseurlpath' => getenv('SSP_BASE'),
    'certdir' => $dir . '/cert/',
    'loggingdir' => $dir . '/log/',
    'datadir' => $dir . '/data/',
    'tempdir' => $dir . '/tmp',
    'technicalcontact_name' => 'Test',
    'technicalcontact_email' => 'test@example.test',
    'secretsalt' => getenv('SSP_SALT'),
    'auth.adminpassword' => getenv('SSP_SALT'),
    'admin.protectindexpage' => true,
    'admin.protectmetadata' => false,
    'timezone' => 'UTC',
    'showerrors' => true,
    'errorreporting' => false,
    'debug' => ['saml' => false, 'backtraces' => true, 'validatexml' => false],
    'logging.level' => SimpleSAML\Logger::DEBUG,
    'logging.handler' => 'file',
    'logging.logfile' => 'simplesamlphp.log',
    'enable.saml20-idp' => false,
    'store.type' => 'phpsession',
    'session.cookie.secure' => false,
    'module.enable' => ['core' => true, 'saml' => true, 'admin' => true],
    // The identity provider is read from our own metadata document, as an operator would configure it.
    'metadata.sources' => [['type' => 'xml', 'file' => $dir . '/idp.xml']],
];
