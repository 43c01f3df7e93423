<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\EventListener;

use Psr\Http\Message\ServerRequestInterface;
use TYPO3\CMS\Backend\Context\PageContext;
use TYPO3\CMS\Backend\Module\ModuleData;
use TYPO3\CMS\Backend\Module\ModuleInterface;
use TYPO3\CMS\Backend\Routing\UriBuilder;
use TYPO3\CMS\Backend\Template\Components\ButtonBar;
use TYPO3\CMS\Backend\Template\Components\Buttons\LinkButton;
use TYPO3\CMS\Backend\Template\Components\ModifyButtonBarEvent;
use TYPO3\CMS\Core\Authentication\BackendUserAuthentication;
use TYPO3\CMS\Core\Imaging\IconFactory;
use TYPO3\CMS\Core\Imaging\IconSize;
use TYPO3\CMS\Core\Utility\GeneralUtility;

/**
 * A "Waymark" button in the page module's (web_layout) button bar: opens the Waymark module for the page and
 * the language shown.
 */
final class PageModuleButton
{
    public function __construct(
        private readonly UriBuilder $uriBuilder,
        private readonly IconFactory $iconFactory,
    ) {}

    public function __invoke(ModifyButtonBarEvent $event): void
    {
        // TYPO3 14 hands the docheader's request to the event (the one with the page module's PageContext);
        // 13.4 has only the global request
        $request = method_exists($event, 'getRequest') ? $event->getRequest() : ($GLOBALS['TYPO3_REQUEST'] ?? null);
        $backendUser = $GLOBALS['BE_USER'] ?? null;
        if (!$request instanceof ServerRequestInterface || !$backendUser instanceof BackendUserAuthentication) {
            return;
        }
        $module = $request->getAttribute('module');
        if (!$module instanceof ModuleInterface || $module->getIdentifier() !== 'web_layout') {
            return;
        }
        $pageId = (int)($request->getQueryParams()['id'] ?? $request->getParsedBody()['id'] ?? 0);
        if ($pageId <= 0 || !$backendUser->check('modules', 'web_waymark')) {
            return;
        }
        $language = $this->shownLanguage($request, $backendUser);

        // what ButtonBar::makeLinkButton() (13.4; deprecated in 14) and ComponentFactory::createLinkButton() (14) do
        $button = GeneralUtility::makeInstance(LinkButton::class)
            ->setHref((string)$this->uriBuilder->buildUriFromRoute('web_waymark', ['id' => $pageId, 'language' => $language]))
            ->setTitle('Waymark')
            ->setShowLabelText(true)
            ->setIcon($this->iconFactory->getIcon('waymark-module', IconSize::SMALL));
        $buttons = $event->getButtons();
        $buttons[ButtonBar::BUTTON_POSITION_LEFT][50][] = $button;
        $event->setButtons($buttons);
    }

    private function shownLanguage(ServerRequestInterface $request, BackendUserAuthentication $backendUser): int
    {
        // TYPO3 14: the page module shows the languages of its PageContext (?languages[]=…, else the user's choice
        // for the page); its primary language is the one translation shown alone, else the default language
        $pageContext = $request->getAttribute('pageContext');
        if ($pageContext instanceof PageContext) {
            return max(0, $pageContext->getPrimaryLanguageId());
        }
        // TYPO3 13.4: the page module keeps `language` (from ?language= or SET[language]) in its module data
        $moduleData = $request->getAttribute('moduleData');
        if ($moduleData instanceof ModuleData && $moduleData->getModuleIdentifier() === 'web_layout') {
            $language = (int)$moduleData->get('language', 0);
        } else {
            $query = $request->getQueryParams();
            $language = (int)($query['language'] ?? $query['SET']['language'] ?? ($backendUser->getModuleData('web_layout')['language'] ?? 0));
        }
        return max(0, $language);
    }
}
