/**
 * openid-client 6 is published as an ES module only. The server is CommonJS: Node 20.19+ loads an ES module through
 * require, and this goes through Node's own loader (Module._load) so that jest's CommonJS registry, which cannot run
 * an ES module, is bypassed as well. Loaded on first use: a server without upstream providers never parses it.
 */
export type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });

let loaded: OpenIdClient | undefined;

export function openIdClient(): OpenIdClient {
  if (!loaded) {
    const nodeModule = require('node:module') as { _load(request: string, parent: unknown, isMain: boolean): unknown };
    loaded = nodeModule._load(require.resolve('openid-client'), null, false) as OpenIdClient;
  }
  return loaded;
}
