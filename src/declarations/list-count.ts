/**
 * How many rows a console list holds, said without counting a large table (issue 23 "Scale"): an exact number when
 * it is small, "more than CAP" when a filtered count reaches the cap, and the planner's estimate ("about") for an
 * unfiltered table larger than the cap.
 */
export type ListCount = { kind: 'exact'; value: number } | { kind: 'more-than'; value: number } | { kind: 'about'; value: number };

/** Counting stops here: at most this many index entries are read for a count. */
export const COUNT_CAP = 10_000;

/** A capped count (the exact number, or cap + 1 for "more") as a ListCount. */
export function cappedCount(counted: number, cap = COUNT_CAP): ListCount {
  return counted > cap ? { kind: 'more-than', value: cap } : { kind: 'exact', value: counted };
}

/**
 * The count of an unfiltered list: the table's estimate when it is beyond the cap, else the capped count (exact
 * below the cap, where counting is cheap and an estimate would be visibly wrong).
 */
export async function unfilteredCount(
  estimate: () => Promise<number | null>,
  count: () => Promise<number>,
  cap = COUNT_CAP,
): Promise<ListCount> {
  const about = await estimate();
  if (about !== null && about > cap) return { kind: 'about', value: about };
  return cappedCount(await count(), cap);
}
