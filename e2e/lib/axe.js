// axe-core (from npm) run in the page: every critical or serious violation
// fails, with the rule, the impact, the help text and the offending nodes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

// axeViolations runs axe-core on the page as it is now and returns the
// critical and serious violations (options.all: every violation, minor and
// moderate too). The source is evaluated through the DevTools protocol,
// which the page's CSP does not govern (no script tag).
export async function axeViolations(page, { all = false } = {}) {
  await page.evaluate(`${source}\n;0`);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return all ? result.violations : result.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious');
}

// describe formats violations for a failure message.
export function describe(vs) {
  return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n    ${v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')} — ${n.failureSummary.replace(/\n/g, ' ')}`).join('\n    ')}`).join('\n  ');
}

// expectNoSeriousViolations fails when axe-core reports a critical or serious violation.
export async function expectNoSeriousViolations(page, state) {
  const vs = await axeViolations(page);
  if (vs.length) throw new Error(`axe-core on ${state} (${page.url()}): ${vs.length} critical/serious violations:\n  ${describe(vs)}`);
}
