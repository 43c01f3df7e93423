// Four eyes (screens 4 and 7): on the four-eyes configuration the editor's
// card cannot be applied by the editor; the second approver releases it from
// the inbox, where it arrived live, and the editor's page updates live.
import { e2e, expect, login, speed } from '../lib/e2e.js';
import { card, preview, conversation, conversationId, watchText, seenAt } from '../lib/chat.js';

e2e('a four-eyes card is released from the inbox by the second approver while the editor\'s page updates live', async ({ s, server }) => {
  const paula = await s.user('paula');
  await login(s, paula, 'paula', { lang: 'en' });
  await paula.goto(`${server.url}/inbox`);
  await expect(paula.getByText('Nothing is waiting for you.')).toBeVisible();

  const erika = await s.user('erika');
  await login(s, erika, 'erika');
  await erika.goto(`${server.url}/chat`);
  await erika.getByRole('radio', { name: 'About', exact: true }).check();
  await erika.getByLabel('Sprache', { exact: true }).selectOption({ label: 'English' });
  const assistant = erika.getByLabel('Assistent', { exact: true });
  await expect(assistant).toBeVisible();
  const fourEyes = (await assistant.getByRole('option').allTextContents()).find((o) => /four eyes|vier Augen/i.test(o));
  if (!fourEyes) throw new Error('the picker offers no four-eyes assistant');
  await assistant.selectOption({ label: fourEyes });
  await erika.getByRole('button', { name: 'Starten' }).click();
  await erika.waitForURL(/\/chat\/\d+$/);
  const id = conversationId(erika);
  s.onFailure(async () => {
    const v = await conversation(s, id);
    return `conversation ${id} as the API reports it: status ${v.status}, error ${v.error}, card ${v.card ? JSON.stringify(v.card.calls[0].preview[0]) : null}; messages ${JSON.stringify(v.messages).slice(0, 300)}`;
  });
  await erika.getByRole('combobox', { name: 'Nachricht' }).fill('Bitte verbessere Seite 2.');
  await erika.getByRole('button', { name: 'Senden' }).click();

  // The editor's card: a second person must release it.
  await expect(card(erika).getByText('Eine zweite Person muss diese Änderung freigeben.')).toBeVisible();
  await expect(card(erika).getByRole('button', { name: 'Freigabe durch zweite Person' })).toBeDisabled();
  await expect(card(erika).getByRole('button', { name: 'Übernehmen' })).toHaveCount(0);
  await expect(card(erika).getByText('Wartet auf die Freigabe einer zweiten Person')).toBeVisible();
  const c = await conversation(s, id);
  const description = c.card.calls[0].preview[0].proposed;
  await s.shot(erika, 'four-eyes-editor-card');

  // It arrived in paula's open inbox without a reload; she releases it.
  await expect(paula.getByRole('button', { name: 'Release' })).toBeVisible();
  await expect(paula.getByRole('article')).toContainText(description);
  await s.shot(paula, 'four-eyes-inbox');
  // The editor sees the release as the status line of the card (applied, or
  // released by someone else) — whichever the chat reports.
  const released = /Übernommen: Seite „About“ – Beschreibung|Von jemand anderem freigegeben/;
  await watchText(erika, 'released', released);
  await paula.getByRole('button', { name: 'Release' }).click();
  await expect(paula.getByText('Released.')).toBeVisible();

  // The editor's page shows the release and the applied text, live.
  await expect(erika.getByText(released).first()).toBeVisible();
  const seen = await seenAt(erika, 'released');
  const stored = Date.parse((await conversation(s, id)).updatedAt);
  speed('released card visible on the editor\'s page after its commit', seen - stored, 'ms', 100);
  await expect(preview(erika)).toContainText(description);
  await s.shot(erika, 'four-eyes-editor-after-release');
});
