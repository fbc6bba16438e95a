/** Whether `value` is one of the literals in `list`: `includes` that takes any string and narrows it. */
export function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return list.some((item) => item === value);
}
