import type { ServiceContext } from './context';

/** Expired-row pruning - issue 5 (not built yet). Returns a function that stops the timer. */
export function startPruneTimer(_ctx: ServiceContext): () => void {
  return () => {};
}
