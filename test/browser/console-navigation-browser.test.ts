import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The console's navigation in Chromium (docs/console.md): each default admin role lands on a page it may see, under
 * the sections it may open; every entry is visible whole at 375 px (no entry hidden off the side) and the German
 * navigation holds in one row at 1280 px. axe-core in both colour schemes at 1280 and 320 px; CONSOLE_SHOTS=<dir>.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.CONSOLE_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

/** The navigation's entries with their boxes. */
async function entries(page: Page) {
  return page.locator('nav.main a').evaluateAll((links) =>
    links.map((a) => {
      const r = a.getBoundingClientRect();
      return { text: a.textContent ?? '', top: Math.round(r.top), left: r.left, right: r.right, width: r.width, scroll: a.scrollWidth };
    }),
  );
}

test.each([
  ['super_admin', 'Overview', 12],
  ['admin', 'Overview', 11],
  ['manager', 'Users', 1],
])(
  'a %s lands on %s, its navigation whole at 375 px and, in German, in one row at 1280 px',
  async (role, heading, count) => {
    const user = await makeUser(t, { roles: [role] });
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    try {
      await signInAt(page, baseUrl, user.email, user.password);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      expect(await page.locator('nav.main a').count()).toBe(count);
      expect(await page.getByText('Not allowed').count()).toBe(0);
      await checkConsolePage(page, `nav-${role}`, SHOTS);

      await page.setViewportSize({ width: 375, height: 800 });
      for (const e of await entries(page)) {
        expect([e.text, e.left >= 0 && e.right <= 375, e.scroll <= Math.ceil(e.width)]).toEqual([e.text, true, true]);
      }
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/nav-${role}-375.png` });

      await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.reload();
      const rows = new Set((await entries(page)).map((e) => e.top));
      expect(rows.size).toBe(1);
      await checkConsolePage(page, `nav-${role}-de`, SHOTS);
    } finally {
      await context.close();
    }
  },
  120_000,
);
