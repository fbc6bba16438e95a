import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** axe-core in Chromium, shared by every browser test that checks a page's accessibility. */

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core WCAG 2.1 A/AA on the current page in the light and dark colour schemes at 1280 and 320 px; nothing may
 * scroll sideways at 320 px. With `shots`, a full-page screenshot of each combination is written there.
 */
export async function checkAccessible(page: Page, name: string, shots?: string): Promise<void> {
  const problems: string[] = [];
  // The CSP allows same-origin scripts only: the test context bypasses it to inject axe-core, once per page (the colour
  // scheme and the width change without a reload; a page loaded since has no axe and gets it again).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const width of [1280, 320]) {
      await page.setViewportSize({ width, height: 900 });
      const violations = (await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run(ctx: Document, options: object): Promise<{ violations: unknown[] }> } }).axe;
        const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
        return result.violations;
      })) as AxeViolation[];
      for (const v of violations)
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
