import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** axe-core in Chromium, shared by every browser test that checks a page's accessibility. */

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** The WCAG 2.1 A and AA rules: what every axe-core check of the browser tests runs. */
const WCAG21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * axe-core's WCAG 2.1 A/AA violations on the current page as it is now (its colour scheme, its width), injecting axe-core
 * first when the page has none. Every rule runs on every node; `resultTypes: ['violations']` only spares axe-core the
 * report of what passed (a selector for each node that passed, most of a run's time on a form page): the violations
 * come back whole.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // The CSP allows same-origin scripts only: the test context bypasses it to inject axe-core, once per page (the colour
  // scheme and the width change without a reload; a page loaded since has no axe and gets it again).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return (await page.evaluate(async (values) => {
    const axe = (window as unknown as { axe: { run(ctx: Document, options: object): Promise<{ violations: unknown[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values }, resultTypes: ['violations'] });
    return result.violations;
  }, WCAG21_AA)) as AxeViolation[];
}

/**
 * axe-core WCAG 2.1 A/AA on the current page in the light and dark colour schemes at 1280 and 320 px; nothing may
 * scroll sideways at 320 px. With `shots`, a full-page screenshot of each combination is written there.
 */
export async function checkAccessible(page: Page, name: string, shots?: string): Promise<void> {
  const problems: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const width of [1280, 320]) {
      await page.setViewportSize({ width, height: 900 });
      for (const v of await axeViolations(page))
        problems.push(`${name} ${colorScheme} ${width}px: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      if (width === 320) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        if (overflow > 1) problems.push(`${name} ${colorScheme} 320px: the page scrolls sideways by ${overflow}px`);
      }
      if (shots) await page.screenshot({ path: path.join(shots, `${name}-${colorScheme}-${width}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
  expect(problems).toEqual([]);
}
