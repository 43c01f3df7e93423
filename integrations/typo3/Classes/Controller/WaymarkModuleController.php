<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Controller;

use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use TYPO3\CMS\Backend\Attribute\AsController;
use TYPO3\CMS\Backend\Template\ModuleTemplateFactory;
use TYPO3\CMS\Backend\Utility\BackendUtility;
use TYPO3\CMS\Core\Authentication\BackendUserAuthentication;
use TYPO3\CMS\Core\Page\PageRenderer;
use TYPO3\CMS\Core\Type\Bitmask\Permission;
use Waymark\Typo3Waymark\Bridge\BridgeConfiguration;
use Waymark\Typo3Waymark\Bridge\SessionChecker;
use Waymark\Typo3Waymark\Bridge\Signer;

/**
 * Backend module "Waymark": builds a sign-in ticket for the current backend user (docs/typo3-bridge.md,
 * "Signing in through TYPO3") and sends her to <waymarkUrl>/typo3/enter?ticket=… (the whole browser window,
 * with a link as fallback). Without waymarkUrl or secret it explains what is missing.
 */
#[AsController]
final class WaymarkModuleController
{
    public const TICKET_LIFETIME = 60;

    public function __construct(
        private readonly ModuleTemplateFactory $moduleTemplateFactory,
        private readonly BridgeConfiguration $configuration,
        private readonly SessionChecker $sessionChecker,
        private readonly PageRenderer $pageRenderer,
    ) {}

    public function handleRequest(ServerRequestInterface $request): ResponseInterface
    {
        $backendUser = $GLOBALS['BE_USER'];
        $view = $this->moduleTemplateFactory->create($request);
        $view->setTitle('Waymark');

        $query = $request->getQueryParams();
        $pageId = max(0, (int)($query['id'] ?? 0));
        if ($pageId > 0 && !is_array(BackendUtility::readPageAccess($pageId, $backendUser->getPagePermsClause(Permission::PAGE_SHOW)))) {
            $pageId = 0;
        }
        // the page module's language: ?language=… (our button) or SET[language]
        $language = (int)($query['language'] ?? $query['SET']['language'] ?? 0);
        if ($language < 0) {
            $language = 0;
        }

        $waymarkUrl = $this->configuration->getWaymarkUrl();
        $secret = $this->configuration->getSecret();
        $missing = [];
        if ($waymarkUrl === null) {
            $missing[] = 'waymarkUrl';
        }
        if ($secret === null) {
            $missing[] = 'secret';
        }
        if ($missing !== []) {
            $view->assignMultiple([
                'missing' => $missing,
                'isAdmin' => $backendUser->isAdmin(),
                'minSecretLength' => BridgeConfiguration::MIN_SECRET_LENGTH,
            ]);
            return $view->renderResponse('Module/NotConfigured');
        }

        $session = $this->sessionChecker->storedIdentifier($backendUser);
        if ($session === null) {
            $view->assign('problem', 'no_session');
            return $view->renderResponse('Module/NotConfigured');
        }
        $payload = $this->payload($backendUser, $session, $pageId, $language, time());
        $url = $waymarkUrl . '/typo3/enter?ticket=' . rawurlencode(Signer::ticket($secret, $payload));

        $this->pageRenderer->loadJavaScriptModule('@waymark/typo3-waymark/enter.js');
        $view->assignMultiple([
            'url' => $url,
            'waymarkUrl' => $waymarkUrl,
            'pageId' => $pageId,
            'language' => $language,
            'lifetime' => self::TICKET_LIFETIME,
            'autoRedirect' => !isset($query['noredirect']),
        ]);
        return $view->renderResponse('Module/Index');
    }

    public function payload(BackendUserAuthentication $backendUser, string $session, int $pageId, int $language, int $now): array
    {
        return [
            'v' => 1,
            'user' => (int)$backendUser->user['uid'],
            'username' => (string)$backendUser->user['username'],
            'session' => $session,
            'page' => $pageId,
            'language' => $language,
            'iat' => $now,
            'exp' => $now + self::TICKET_LIFETIME,
            'nonce' => Signer::nonce(),
        ];
    }
}
