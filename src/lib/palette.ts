import type ColorClass from 'colorjs.io' with { 'resolution-mode': 'import' };

// colorjs.io is an ES module package that also ships a CommonJS build; this project compiles to CommonJS.
const colorjs: { default: typeof ColorClass } = require('colorjs.io');
const Color = colorjs.default;

/**
 * The colours of the hosted pages and mails, declared once (CONTRACT §15): the CSS of src/views/layout.tsx is built
 * from these values, and test/unit/palette.test.ts checks every text/background pair of both schemes against WCAG 2.1
 * AA (4.5:1 for text, 3:1 for borders of controls, WCAG 1.4.11). Ratios are computed by colorjs.io (WCAG 2.1 method).
 */
export const SCHEMES = {
  light: { bg: '#ffffff', text: '#1f2328', muted: '#57606a', border: '#6e7781', danger: '#b42318', ok: '#067647' },
  dark: { bg: '#0d1117', text: '#e6edf3', muted: '#9da7b3', border: '#848d97', danger: '#ff8f87', ok: '#56d364' },
} as const;

export type SchemeName = keyof typeof SCHEMES;
const SCHEME_NAMES = Object.keys(SCHEMES).filter((name): name is SchemeName => Object.hasOwn(SCHEMES, name));

/** The accent when BRAND_COLOR is unset. */
export const DEFAULT_BRAND_COLOR = '#2563eb';
/** Text on a filled (accent) button in both schemes. */
export const ON_ACCENT = '#ffffff';

export const AA_TEXT = 4.5;
export const AA_NON_TEXT = 3;

export function contrast(a: string, b: string): number {
  return new Color(a).contrast(new Color(b), 'WCAG21');
}

/**
 * The accent for links and focus rings in the dark scheme: the brand colour itself when it reads on the dark
 * background, else the brand colour mixed towards white in 5 % steps until it does (white always does).
 */
export function darkLinkColor(brand: string): string {
  const base = new Color(brand);
  for (let white = 0; white <= 1.0001; white += 0.05) {
    const mixed = Color.mix(base, new Color('#ffffff'), white, { space: 'srgb' }).to('srgb');
    const hex = mixed.toString({ format: 'hex', collapse: false });
    if (contrast(hex, SCHEMES.dark.bg) >= AA_TEXT) return hex;
  }
  return '#ffffff';
}

export interface ColourPair {
  scheme: SchemeName;
  what: string;
  fg: string;
  bg: string;
  min: number;
}

/** Every foreground/background pair the pages draw, for a given brand colour. */
export function colourPairs(brand: string): ColourPair[] {
  const pairs: ColourPair[] = [];
  for (const scheme of SCHEME_NAMES) {
    const s = SCHEMES[scheme];
    const link = scheme === 'dark' ? darkLinkColor(brand) : brand;
    pairs.push(
      { scheme, what: 'text', fg: s.text, bg: s.bg, min: AA_TEXT },
      { scheme, what: 'muted text', fg: s.muted, bg: s.bg, min: AA_TEXT },
      { scheme, what: 'error text', fg: s.danger, bg: s.bg, min: AA_TEXT },
      { scheme, what: 'success border', fg: s.ok, bg: s.bg, min: AA_NON_TEXT },
      { scheme, what: 'control border', fg: s.border, bg: s.bg, min: AA_NON_TEXT },
      { scheme, what: 'link and focus ring (brand colour)', fg: link, bg: s.bg, min: AA_TEXT },
      { scheme, what: 'button text on the brand colour', fg: ON_ACCENT, bg: brand, min: AA_TEXT },
      { scheme, what: 'filled button (brand colour) against the background', fg: brand, bg: s.bg, min: AA_NON_TEXT },
    );
  }
  return pairs;
}

/**
 * Why a BRAND_COLOR cannot be used, or undefined when it can: white button text on it and the colour as a link on
 * the light background need 4.5:1, the filled button against the dark background 3:1 (the dark scheme's links use
 * a lighter tint, darkLinkColor).
 */
export function brandColorProblem(brand: string): string | undefined {
  for (const pair of colourPairs(brand)) {
    const ratio = contrast(pair.fg, pair.bg);
    if (ratio < pair.min) {
      return `${brand} fails WCAG AA contrast: ${pair.what} in the ${pair.scheme} scheme is ${ratio.toFixed(2)}:1 (needs ${pair.min}:1)`;
    }
  }
  return undefined;
}

/** The branding of pages and mails (settings brand_name, brand_logo_url, brand_color). */
export interface Brand {
  name: string;
  logoUrl?: string;
  /** A 6-digit lowercase hex colour that passed brandColorProblem (lib/palette.ts). */
  color: string;
}
