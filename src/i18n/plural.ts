/**
 * Plural forms chosen by the CLDR rules Node ships (Intl.PluralRules), never by a hand-written `n === 1`. A message
 * gives the forms its language needs; `other` is always required and is the fallback.
 */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

export function pluralize(locale: string): (n: number, forms: PluralForms) => string {
  const rules = new Intl.PluralRules(locale);
  return (n, forms) => forms[rules.select(n)] ?? forms.other;
}

/**
 * A table of messages looked up by a name known only at run time (a settings group, a setting's label): its type is
 * keyed by any string, so the lookup may miss and the caller says what then.
 */
export function keyed<V>(entries: Record<string, V>): Record<string, V> {
  return entries;
}
