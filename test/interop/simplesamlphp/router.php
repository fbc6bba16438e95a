<?php
// php -S router: /app.php is the protected application; everything else is SimpleSAMLphp's own www/.
if (parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH) === '/app.php') {
    require __DIR__ . '/app.php';
    return true;
}
return false;
