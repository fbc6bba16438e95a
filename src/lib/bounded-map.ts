/**
 * Sets `key` as the newest entry of a Map used as a bounded cache (a Map keeps insertion order), then drops the oldest
 * entries beyond `maxEntries`.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, maxEntries: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= maxEntries) break;
    map.delete(oldest);
  }
}
