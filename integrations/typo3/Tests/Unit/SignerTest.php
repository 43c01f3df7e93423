<?php
// The cryptography of the contract, without TYPO3: request signature and ticket against values computed by hand.
declare(strict_types=1);

require __DIR__ . '/../lib.php';
require __DIR__ . '/../../Classes/Bridge/Signer.php';

use Waymark\Typo3Waymark\Bridge\Signer;

$secret = 'an-example-secret-of-at-least-32-characters';
$body = '{"user":3}';
$string = "POST\n/sub/waymark-bridge/v1/target\n1700000000\n0123456789abcdef0123456789abcdef\n" . hash('sha256', $body);
check('unit: request signature = v1=hex(HMAC-SHA256(secret, METHOD\\nPATH\\nTIME\\nNONCE\\nsha256(body)))',
    Signer::requestSignature($secret, 'post', '/sub/waymark-bridge/v1/target', '1700000000', '0123456789abcdef0123456789abcdef', $body)
    === 'v1=' . hash_hmac('sha256', $string, $secret));
check('unit: base64url without padding', Signer::base64url("\xfb\xff\xfe") === '-__-' && Signer::base64url('ab') === 'YWI');
$payload = ['v' => 1, 'user' => 3, 'username' => 'editor', 'session' => str_repeat('a', 64), 'page' => 2, 'language' => 0,
    'iat' => 1700000000, 'exp' => 1700000060, 'nonce' => str_repeat('0', 32)];
$ticket = Signer::ticket($secret, $payload);
[$p, $mac] = explode('.', $ticket);
check('unit: ticket = base64url(payload) "." hex(HMAC-SHA256(secret, "waymark-ticket\\n" base64url(payload)))',
    json_decode(base64_decode(strtr($p, '-_', '+/')), true) === $payload && !str_contains($p, '=')
    && $mac === hash_hmac('sha256', "waymark-ticket\n" . $p, $secret));
check('unit: nonce is 32 lowercase hex', (bool)preg_match('/^[0-9a-f]{32}$/', Signer::nonce()) && Signer::nonce() !== Signer::nonce());
for ($f = glob(dirname(__DIR__, 2) . '/{Classes/*/*.php,Configuration/*.php,Configuration/*/*.php,ext_emconf.php}', GLOB_BRACE), $bad = [], $i = 0; $i < count($f); $i++) {
    exec('php -l ' . escapeshellarg($f[$i]) . ' 2>&1', $o, $rc);
    if ($rc !== 0) { $bad[] = $f[$i]; }
}
check('unit: php -l of all PHP files (' . count($f) . ')', $bad === [], $bad);
if (($GLOBALS['T_FAIL'] ?? 0) > 0) { exit(1); }
