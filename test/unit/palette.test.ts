import {
  AA_NON_TEXT,
  AA_TEXT,
  brandColorProblem,
  colourPairs,
  contrast,
  darkLinkColor,
  DEFAULT_BRAND_COLOR,
  SCHEMES,
} from '../../src/lib/palette';
import { paletteCss } from '../../src/views/layout';

describe('palette (WCAG 2.1 AA, light and dark)', () => {
  test.each(colourPairs(DEFAULT_BRAND_COLOR).map((p) => [p.scheme, p.what, p] as const))('%s: %s passes', (_s, _w, pair) => {
    expect(contrast(pair.fg, pair.bg)).toBeGreaterThanOrEqual(pair.min);
  });

  test('the ratios are WCAG 2.1 ratios (black on white 21:1, a known pair 4.54:1)', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
  });

  test('the issue 24 failures are gone: dark error text and grey text pass 4.5:1', () => {
    expect(contrast(SCHEMES.dark.danger, SCHEMES.dark.bg)).toBeGreaterThanOrEqual(AA_TEXT);
    expect(contrast(SCHEMES.dark.muted, SCHEMES.dark.bg)).toBeGreaterThanOrEqual(AA_TEXT);
    expect(contrast(SCHEMES.light.border, SCHEMES.light.bg)).toBeGreaterThanOrEqual(AA_NON_TEXT);
  });

  test('the CSS the pages use is made from the declared palette, in both schemes', () => {
    const css = paletteCss('#7c3aed');
    for (const value of Object.values(SCHEMES.light)) expect(css).toContain(value);
    for (const value of Object.values(SCHEMES.dark)) expect(css).toContain(value);
    expect(css).toContain('prefers-color-scheme: dark');
    expect(css).toContain(`--link: ${darkLinkColor('#7c3aed')}`);
  });

  test.each([
    ['#2563eb', undefined],
    ['#7c3aed', undefined],
    ['#047857', undefined],
    ['#ffcc00', /link and focus ring .* light scheme is 1\.\d+:1 \(needs 4\.5:1\)/],
    ['#60a5fa', /fails WCAG AA contrast/],
    ['#000000', /filled button .* dark scheme is 1\.\d+:1 \(needs 3:1\)/],
  ])('brand colour %s', (colour, problem) => {
    const result = brandColorProblem(colour);
    if (problem) expect(result).toMatch(problem);
    else expect(result).toBeUndefined();
  });

  test('every accepted brand colour gets a dark-scheme link tint that reads on the dark background', () => {
    for (const colour of ['#2563eb', '#7c3aed', '#047857', '#c2410c']) {
      expect(brandColorProblem(colour)).toBeUndefined();
      expect(contrast(darkLinkColor(colour), SCHEMES.dark.bg)).toBeGreaterThanOrEqual(AA_TEXT);
    }
  });
});
