/**
 * Plural forms chosen by the CLDR rules Node ships (Intl.PluralRules), never by a hand-written `n === 1`. A message
 * gives the forms its language needs; `other` is always required and is the fallback.
 */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

export function pluralize(locale: string): (n: number, forms: PluralForms) => string {
  const rules = new Intl.PluralRules(locale);
  return (n, forms) => forms[rules.select(n)] ?? forms.other;
}
