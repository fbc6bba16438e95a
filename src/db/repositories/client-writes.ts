let localWrites = 0;

/**
 * How many writes to `oauth_clients` or `api_resources` this process has made (services/oauth/client-cache.ts): the
 * instance's client cache forgets what it holds when this moves, without waiting for its own `sso_clients`
 * notification. Every instance, this one included, also hears the notification the tables' triggers send at commit.
 */
export function clientWritesOfThisProcess(): number {
  return localWrites;
}

/** Counts a write to the tables a cached client is read from (clientWritesOfThisProcess). */
export function noteClientWrite(): void {
  localWrites++;
}
